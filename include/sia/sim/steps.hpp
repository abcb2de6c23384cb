#pragma once
/// @file sim/steps.hpp
/// @brief Optimiser steps a job needs at a fixed global batch size, from the simulator's ground truth: the
/// progress of each epoch over the AdaScale gain at that batch (reference §6.2). Gavel-family policies (Themis,
/// Shockwave) reason in these steps and in Gavel's iterations per second (gavel_throughput()).

#include <sia/sim/job.hpp>

namespace sia::sim {

/// @brief Steps to train `app` from scratch at global batch `batch` (+inf when a gain is not positive).
[[nodiscard]] double total_steps(const Application& app, double batch) noexcept;

/// @brief Steps `job` still needs at global batch `batch` from its current epoch and progress (0 when done).
[[nodiscard]] double remaining_steps(const SimJob& job, double batch) noexcept;

}  // namespace sia::sim
