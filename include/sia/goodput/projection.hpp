#pragma once
/// @file goodput/projection.hpp
/// @brief Projection: estimating a GPU type a job has not run multi-GPU on from a type it has
/// (paper §3.2, Eq. 1 — the paper calls it "bootstrapping"), and the reference simulator's variant.
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
/// The reference simulator's variant scales the known type's goodput
/// by the constant ratio of 1-GPU throughputs `max(local_bsz)/max(step_time)` (one_gpu_throughput()).
/// JobModel (job_model.hpp) applies either; this header holds the formulas they share with
/// `sia_fit_profiles` and the simulator.

#include <sia/goodput/throughput_model.hpp>

#include <algorithm>
#include <cmath>
#include <span>

namespace sia {

/**
 * @brief Eq. 1 step time of one configuration (`nodes`, `replicas`) as a function of the local batch
 * and the accumulation steps, with the configuration's constant terms computed once (the batch-size
 * search calls it for every candidate). Returns 0 when a step time is not positive.
 */
class ProjectedStepTime {
 public:
  ProjectedStepTime(const PerfParams& known, const PerfParams& seed_target, int nodes, int replicas) noexcept
      : x_(known), y_(seed_target) {
    nx1_ = network_time(known, 1, 1);
    nxn_ = network_time(known, nodes, replicas);
    tnx1_ = power(nx1_, known.gamma);
    tnxn_ = power(nxn_, known.gamma);
    tny1_ = power(network_time(seed_target, 1, 1), seed_target.gamma);
  }

  /// T_Y(N, R, b, s) = T_Y^seed(1, 1, b, s) * T_X(N, R, b, s) / T_X(1, 1, b, s).
  [[nodiscard]] double operator()(double local_bsz, int accum_steps) const noexcept {
    const double ax = accum_time(x_, local_bsz);
    const double ay = accum_time(y_, local_bsz);
    const double axg = power(ax, x_.gamma);
    const double tx1 = accum_steps * ax + root(axg + tnx1_, x_.gamma);
    const double txn = accum_steps * ax + root(axg + tnxn_, x_.gamma);
    const double ty1 = accum_steps * ay + root(power(ay, y_.gamma) + tny1_, y_.gamma);
    if (!(tx1 > 0.0) || !(txn > 0.0) || !(ty1 > 0.0)) return 0.0;
    return ty1 * txn / tx1;
  }

  /// A cheap lower bound of operator() (power means lie between the max and the sum of their terms).
  [[nodiscard]] double lower_bound(double local_bsz, int accum_steps) const noexcept {
    const double ax = accum_time(x_, local_bsz);
    const double ay = accum_time(y_, local_bsz);
    const double ty1 = (accum_steps + 1) * ay;
    const double txn = accum_steps * ax + std::max(ax, nxn_);
    const double tx1 = (accum_steps + 1) * ax + nx1_;
    return tx1 > 0.0 ? ty1 * txn / tx1 : 0.0;
  }

 private:
  // x^g and its inverse, exact for the common g = 1 (as optim_time()).
  static double power(double v, double g) noexcept { return g == 1.0 ? v : std::pow(v, g); }
  static double root(double v, double g) noexcept { return g == 1.0 ? v : std::pow(v, 1.0 / g); }

  PerfParams x_, y_;
  double nx1_ = 0.0, nxn_ = 0.0, tnx1_ = 0.0, tnxn_ = 0.0, tny1_ = 0.0;
};

/// @brief Eq. 1 step time on the unseen type: `seed_target` at 1 GPU, scaled by `known`'s
/// (N, R) / (1, 1) step-time ratio. 0 when any term is not positive.
[[nodiscard]] inline double projected_step_time(const PerfParams& known, const PerfParams& seed_target, int nodes,
                                                int replicas, double local_bsz, int accum_steps) noexcept {
  return ProjectedStepTime(known, seed_target, nodes, replicas)(local_bsz, accum_steps);
}

/// @brief Eq. 1 throughput on the unseen type (samples/s); 0 when not computable.
[[nodiscard]] inline double projected_throughput(const PerfParams& known, const PerfParams& seed_target, int nodes,
                                                 int replicas, double local_bsz, int accum_steps) noexcept {
  const double t = projected_step_time(known, seed_target, nodes, replicas, local_bsz, accum_steps);
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
[[nodiscard]] inline double one_gpu_throughput(std::span<const OneGpuSample> rows) noexcept {
  double mb = 0.0, mt = 0.0;
  for (const auto& r : rows) {
    mb = std::max(mb, r.local_bsz);
    mt = std::max(mt, r.step_time);
  }
  return mt > 0.0 ? mb / mt : 0.0;
}

}  // namespace sia
