#pragma once
// Test support: generated MILPs shaped like Shockwave's per-round planning model (src/sim/shockwave_policy.cpp)
// whose objective weights span many orders of magnitude — the class of model on which CBC 2.10.8 crashed
// (SIGSEGV in CbcNode::chooseDynamicBranch; see src/milp/cbc/cbc_solver.cpp). Built from a seed alone (no
// data files): std::mt19937_64 is specified exactly and the uniform draws are computed here, not by
// std::uniform_real_distribution (whose values differ between standard libraries).
#include <sia/milp/model.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace sia::test {

struct HugeRangeShape {
  int jobs = 13;       ///< jobs planned
  int window = 7;      ///< rounds planned (one binary per job and round)
  int gpus = 64;       ///< GPUs per round
  double range = 1e9;  ///< weights drawn log-uniformly from [1, range]
};

/// max Σ_j w_j·PL-log(progress_j) over per-round binaries x[j][r] (Σ_j gpus_j x[j][r] ≤ G), the progress p_j a
/// job makes in its planned rounds, a piecewise-linear log of its completed fraction (breakpoints 0, 0.2, …, 1,
/// log 0 taken as log 1e-6) and the largest remaining runtime (weight 0, as in the crashing model).
inline MilpModel huge_range_planning_milp(std::uint64_t seed, const HugeRangeShape& shape = {}) {
  std::mt19937_64 rng(seed);
  auto uniform = [&rng] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };  // [0, 1)
  const int sizes[] = {4, 6, 8, 10, 4, 6, 8, 38};
  const double interval = 360;
  const double breakpoints[] = {0, 0.2, 0.4, 0.6, 0.8, 1.0};
  MilpModel m;
  m.sense = MilpSense::maximize;
  const int longest = m.add_col(0.0, 0.0, MilpModel::inf, false);
  std::vector<int> capacity(static_cast<std::size_t>(shape.window));
  for (auto& row : capacity) row = m.add_row(-MilpModel::inf, shape.gpus);
  const double norm = static_cast<double>(shape.jobs) * shape.window;
  for (int j = 0; j < shape.jobs; ++j) {
    const int gpus = sizes[rng() % 8];
    const double step = 0.3 + 1.7 * uniform();
    const double remaining_s = std::exp(std::log(5.0) + (std::log(3e4) - std::log(5.0)) * uniform());
    const double done_fraction = uniform() < 0.3 ? 0.0 : uniform();
    const double left = remaining_s / step;
    const double total = left / (1 - done_fraction), done = total - left;
    const double weight = std::exp(std::log(shape.range) * uniform());
    const int plan = m.add_row(-MilpModel::inf, 0.0);  // step·p − interval·Σ_r x ≤ 0
    for (int r = 0; r < shape.window; ++r) {
      const int x = m.add_col(0.0, 0.0, 1.0, true);
      m.add_entry(capacity[static_cast<std::size_t>(r)], x, gpus);
      m.add_entry(plan, x, -interval);
    }
    const int p = m.add_col(0.0, 0.0, left, false);
    m.add_entry(plan, p, step);
    const int cursor = m.add_row(done / total, done / total);  // (done + p) / total = Σ_k λ_k b_k
    m.add_entry(cursor, p, -1.0 / total);
    const int convex = m.add_row(1.0, 1.0);
    for (double b : breakpoints) {
      const int lambda = m.add_col(weight * std::log(b > 0 ? b : 1e-6) / norm, 0.0, 1.0, false);
      m.add_entry(cursor, lambda, b);
      m.add_entry(convex, lambda, 1.0);
    }
    const int runtime = m.add_col(0.0, 0.0, MilpModel::inf, false);  // ≥ remaining − step·p
    const int rem = m.add_row(remaining_s, MilpModel::inf);
    m.add_entry(rem, runtime, 1.0);
    m.add_entry(rem, p, step);
    const int most = m.add_row(0.0, MilpModel::inf);
    m.add_entry(most, longest, 1.0);
    m.add_entry(most, runtime, -1.0);
  }
  return m;
}

/// The model an input of the fuzz target `fuzz_milp_ranges` stands for (tests/fuzz/fuzz_milp_ranges.cpp; the
/// regression inputs in tests/fuzz/regressions/milp_ranges-* are replayed by unit tests with it): bytes 0-7 the
/// seed (little-endian), 8 jobs − 1 (mod 13), 9 rounds − 1 (mod 7), 10 GPUs/8 − 1 (mod 8), 11 the weight range
/// 10^(b mod 13), then one byte per objective coefficient in column order, which multiplies it by
/// 10^((b mod 12) − 3). Inputs shorter than 12 bytes stand for no model.
inline std::optional<MilpModel> huge_range_model_from_bytes(const std::uint8_t* data, std::size_t size) {
  if (size < 12) return std::nullopt;
  std::uint64_t seed = 0;
  for (int i = 7; i >= 0; --i) seed = (seed << 8) | data[i];
  HugeRangeShape shape;
  shape.jobs = 1 + data[8] % 13;
  shape.window = 1 + data[9] % 7;
  shape.gpus = 8 * (1 + data[10] % 8);
  shape.range = std::pow(10.0, data[11] % 13);  // 1 .. 1e12
  MilpModel m = huge_range_planning_milp(seed, shape);
  for (std::size_t i = 12, j = 0; i < size && j < m.obj.size(); ++i, ++j)
    m.obj[j] *= std::pow(10.0, static_cast<int>(data[i] % 12) - 3);
  return m;
}

}  // namespace sia::test
