#pragma once
/// @file version.hpp
/// @brief The version of sia: the one libsia was built as (run time) and the one of these headers.
///
/// Both come from the CMake project version (`project(sia VERSION ...)`), the version the CMake package
/// (`find_package(sia 0.1)`), the pkg-config module (`pkg-config --modversion sia`) and the programs'
/// `--version` report. A program built against one installation and run with another libsia (a shared
/// library found elsewhere) can compare the two.

#include <sia/build_config.hpp>

#include <string_view>

namespace sia {

/// The version libsia was built as, "major.minor.patch" (e.g. "0.1.0").
[[nodiscard]] std::string_view version() noexcept;

/// The version of the headers the caller was compiled with.
inline constexpr std::string_view header_version = SIA_VERSION_STRING;

}  // namespace sia
