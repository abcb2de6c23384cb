#pragma once
/// @file goodput/throughput_model.hpp
/// @brief Pollux's seven-parameter throughput model (PerfParams) and its formulas.
///
/// Reference: the authors' `goodput.py`, Pollux (OSDI 2021) §3.2.
/// With N nodes, R data-parallel replicas, local ("atomic") batch b per GPU and s extra
/// accumulation micro-steps:
/// @code
/// T_accum(b)      = alpha_c + beta_c * b
/// T_net(N, R)     = alpha_n + beta_n * max(R-2, 1e-8)   if N > 1   (inter-node all-reduce)
///                 = alpha_r + beta_r * max(R-2, 1e-8)   if N == 1 and R > 1   (intra-node)
///                 = 1e-8    + 1e-8   * max(R-2, 1e-8)   if R == 1
/// T_optim         = (T_accum^gamma + T_net^gamma)^(1/gamma)      (overlap of compute and sync)
/// T_iter          = s * T_accum(b) + T_optim
/// throughput      = R * b * (s + 1) / T_iter                      (samples per second)
/// @endcode
/// All functions are inline and allocation-free: the round evaluates them thousands of times.

#include <sia/error.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace sia {

/// @brief The seven Pollux throughput parameters of one job on one GPU type (seconds).
struct PerfParams {
  double alpha_c = 0.0;  ///< constant compute time of one micro-step
  double beta_c = 0.0;   ///< compute time per sample of the local batch
  double alpha_n = 0.0;  ///< constant inter-node synchronisation time
  double beta_n = 0.0;   ///< inter-node synchronisation time per replica beyond 2
  double alpha_r = 0.0;  ///< constant intra-node synchronisation time
  double beta_r = 0.0;   ///< intra-node synchronisation time per replica beyond 2
  double gamma = 1.0;    ///< overlap exponent (>= 1; 1 = no overlap, large = full overlap)

  friend bool operator==(const PerfParams&, const PerfParams&) = default;
};

/// @brief Throws InvalidArgument (message starts with `what`) unless every parameter is finite,
/// the six times are >= 0 and gamma >= 1.
inline void validate(const PerfParams& p, const std::string& what = "perf params") {
  const double v[7] = {p.alpha_c, p.beta_c, p.alpha_n, p.beta_n, p.alpha_r, p.beta_r, p.gamma};
  static const char* const names[7] = {"alpha_c", "beta_c", "alpha_n", "beta_n", "alpha_r", "beta_r", "gamma"};
  for (int i = 0; i < 7; ++i) {
    if (!std::isfinite(v[i])) throw InvalidArgument(what + "." + names[i] + ": not a finite number");
    if (i < 6 && v[i] < 0.0) throw InvalidArgument(what + "." + names[i] + ": negative time " + std::to_string(v[i]));
  }
  if (p.gamma < 1.0) throw InvalidArgument(what + ".gamma: must be >= 1, got " + std::to_string(p.gamma));
  if (p.alpha_c + p.beta_c <= 0.0)
    throw InvalidArgument(what + ": alpha_c + beta_c must be > 0 (a micro-step cannot take no time)");
}

/// @brief Compute time of one micro-step with `local_bsz` samples per GPU.
[[nodiscard]] inline double accum_time(const PerfParams& p, double local_bsz) noexcept {
  return p.alpha_c + p.beta_c * local_bsz;
}

/// @brief Gradient synchronisation time on `nodes` nodes with `replicas` replicas.
[[nodiscard]] inline double network_time(const PerfParams& p, int nodes, int replicas) noexcept {
  const double extra = std::max(static_cast<double>(replicas) - 2.0, 1e-8);
  if (nodes > 1) return p.alpha_n + p.beta_n * extra;
  if (replicas > 1) return p.alpha_r + p.beta_r * extra;
  return 1e-8 + 1e-8 * extra;  // a single replica does not synchronise (np.select default)
}

/// @brief Time of the last micro-step, which overlaps compute with synchronisation.
[[nodiscard]] inline double optim_time(const PerfParams& p, int nodes, int replicas, double local_bsz) noexcept {
  const double ta = accum_time(p, local_bsz);
  const double tn = network_time(p, nodes, replicas);
  if (p.gamma == 1.0) return ta + tn;
  return std::pow(std::pow(ta, p.gamma) + std::pow(tn, p.gamma), 1.0 / p.gamma);
}

/// @brief Time of one optimiser step: `accum_steps` micro-steps without sync plus the last one.
[[nodiscard]] inline double step_time(const PerfParams& p, int nodes, int replicas, double local_bsz,
                                      int accum_steps) noexcept {
  return accum_steps * accum_time(p, local_bsz) + optim_time(p, nodes, replicas, local_bsz);
}

/// @brief Samples processed per second: R * b * (s + 1) / T_iter. 0 when the step time is not positive.
[[nodiscard]] inline double throughput(const PerfParams& p, int nodes, int replicas, double local_bsz,
                                       int accum_steps) noexcept {
  const double t = step_time(p, nodes, replicas, local_bsz, accum_steps);
  if (!(t > 0.0) || !std::isfinite(t)) return 0.0;
  return static_cast<double>(replicas) * local_bsz * (accum_steps + 1) / t;
}

}  // namespace sia
