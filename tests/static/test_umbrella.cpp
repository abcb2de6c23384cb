// The umbrella headers compile on their own and expose the whole public API.
#include <sia/sia.hpp>
#include <sia/sia.hpp>  // include guard / pragma once

#include <doctest/doctest.h>

#include <type_traits>

static_assert(std::is_same_v<decltype(sia::make_configuration_set(std::declval<const sia::ClusterSpec&>())),
                             sia::ConfigurationSet>);
static_assert(sia::GoodputModel<sia::GoodputTable, sia::GpuTypeSpec, sia::ConfigurationSpec>);

TEST_CASE("static.umbrella") { CHECK(sia::to_string(sia::RoundStatus::optimal) == "optimal"); }

// The library, its headers and the CMake package agree on the version (CMake's project version).
TEST_CASE("static.version") {
  CHECK(sia::version() == SIA_PROJECT_VERSION);
  CHECK(sia::header_version == sia::version());
}
