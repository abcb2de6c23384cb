#pragma once
/// @file goodput/bootstrap.hpp
/// @brief Bootstrapping a GPU type the job has not run multi-GPU on (paper §3.2, Eq. 1).
///
/// Paper Eq. 1: `xput_B(N) = xput_B(1) / xput_A(1) * xput_A(N)`, A the type with a learned
/// multi-GPU model, B a type known only from its 1-GPU profile. At equal local batch b and
/// accumulation s this is, in step times,
/// @code
/// T_B(N, R, b, s) = T_B(1, 1, b, s) * T_A(N, R, b, s) / T_A(1, 1, b, s)
/// @endcode
/// i.e. B keeps A's compute:communication scaling and its own single-GPU speed. `T_B(1, 1, ...)`
/// comes from B's 1-GPU model (fitted on B's seed profile: all network terms pinned).
///
/// The reference simulator's variant (sia-reference-behaviour.md §2) is in reference_ratio():
/// a constant ratio `max(local_bsz)/max(step_time)` over 1-GPU rows, applied to the source
/// type's goodput on the destination's topology and batch limits (see JobModel).

#include <sia/goodput/throughput_model.hpp>

#include <algorithm>
#include <vector>

namespace sia {

/// @brief Eq. 1 step time on the unseen type: `seed_target` at 1 GPU, scaled by `known`'s
/// (N, R) / (1, 1) step-time ratio. 0 when any term is not positive.
[[nodiscard]] inline double bootstrap_step_time(const PerfParams& known, const PerfParams& seed_target, int nodes,
                                                int replicas, double local_bsz, int accum_steps) noexcept {
  const double t_known_1 = step_time(known, 1, 1, local_bsz, accum_steps);
  const double t_known_n = step_time(known, nodes, replicas, local_bsz, accum_steps);
  const double t_target_1 = step_time(seed_target, 1, 1, local_bsz, accum_steps);
  if (!(t_known_1 > 0.0) || !(t_known_n > 0.0) || !(t_target_1 > 0.0)) return 0.0;
  return t_target_1 * t_known_n / t_known_1;
}

/// @brief Eq. 1 throughput on the unseen type (samples/s); 0 when not computable.
[[nodiscard]] inline double bootstrap_throughput(const PerfParams& known, const PerfParams& seed_target, int nodes,
                                                 int replicas, double local_bsz, int accum_steps) noexcept {
  const double t = bootstrap_step_time(known, seed_target, nodes, replicas, local_bsz, accum_steps);
  if (!(t > 0.0)) return 0.0;
  return static_cast<double>(replicas) * local_bsz * (accum_steps + 1) / t;
}

/// @brief A 1-GPU measurement (local batch, step time) used for the reference's ratio.
struct OneGpuSample {
  double local_bsz = 0.0;
  double step_time = 0.0;
};

/// @brief The reference's 1-GPU throughput `max(local_bsz) / max(step_time)` (not necessarily
/// the same row; cluster.py:compute_throughput_ratios). 0 when empty or invalid.
[[nodiscard]] inline double reference_one_gpu_throughput(const std::vector<OneGpuSample>& rows) noexcept {
  double mb = 0.0, mt = 0.0;
  for (const auto& r : rows) {
    mb = std::max(mb, r.local_bsz);
    mt = std::max(mt, r.step_time);
  }
  return mt > 0.0 ? mb / mt : 0.0;
}

/// @brief The reference's multiplier ratio[src][dest] = xput1(src) / xput1(dest).
[[nodiscard]] inline double reference_ratio(const std::vector<OneGpuSample>& src,
                                            const std::vector<OneGpuSample>& dest) noexcept {
  const double d = reference_one_gpu_throughput(dest);
  return d > 0.0 ? reference_one_gpu_throughput(src) / d : 0.0;
}

}  // namespace sia
