#pragma once
/// @file sim/plot.hpp
/// @brief gnuplot for the simulator's PNGs: scripts refer to files by name relative to their own directory, and
/// gnuplot runs there as a child process without a shell (any character in an output path is safe); the `.dat`
/// and `.gp` files are written whether or not gnuplot is installed, and a missing or failing gnuplot is reported.

#include <filesystem>
#include <string>
#include <string_view>

namespace sia::sim {

/// @brief Outcome of one gnuplot run.
struct PlotStatus {
  bool ok = false;      ///< gnuplot ran and exited with status 0
  std::string message;  ///< why not (gnuplot missing, exit status, signal), naming the script; empty when ok
};

/// @brief `s` as a gnuplot single-quoted string literal (`'` doubled, as gnuplot reads it).
[[nodiscard]] std::string gnuplot_quote(std::string_view s);

/// @brief Runs `gnuplot <file name>` in the script's directory (posix_spawnp, no shell; output discarded).
[[nodiscard]] PlotStatus run_gnuplot(const std::filesystem::path& script);

}  // namespace sia::sim
