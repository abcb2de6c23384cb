#pragma once
/// @file goodput/fit.hpp
/// @brief Fitting PerfParams to observed step times, with the objective, bounds and priors of the
/// authors' reference code.
///
/// The objective is the reference's (`goodput.py:_obj_fn`):
/// @code
/// RMSE(log T_accum_pred, log(step - sync)) + RMSE(log T_optim_pred, log step)
///   + 1e-3 (gamma - 1)^2 + 1e-2 ((beta_n/alpha_n)^2 + (beta_r/alpha_r)^2)
/// @endcode
/// with bounds [1e-8, inf) for the six times and [1, 10] for gamma, the reference's pinning rules
/// (only one local batch seen -> alpha_c = mean accum time / 2; no multi-node observation ->
/// alpha_n = beta_n = 1e-8; no single-node multi-GPU observation -> alpha_r = beta_r = 1e-8; no
/// observation with more than 2 replicas -> beta_n = beta_r = 1e-8) and, after fitting, the prior
/// alpha_n >= 1.1 alpha_r, beta_n >= 1.1 beta_r when no multi-node observation exists.
///
/// Optimiser: NLopt's bounded L-BFGS (NLOPT_LD_LBFGS) with analytic gradients, run from the
/// reference's initial point and from a least-squares start (alpha_c, beta_c regressed on the
/// compute times); the lower objective wins. By default the six time parameters are optimised in
/// log space (same objective, same bounds, better conditioning: they span 1e-8..1 s).
/// Deterministic: same observations, same result.

#include <sia/goodput/throughput_model.hpp>

#include <map>
#include <span>
#include <tuple>
#include <vector>

namespace sia {

/// @brief One measured optimiser step without accumulation: nodes, replicas, local batch, times.
struct PerfObservation {
  int nodes = 1;           ///< nodes spanned (>= 1)
  int replicas = 1;        ///< data-parallel replicas (>= nodes)
  double local_bsz = 1.0;  ///< per-replica batch (> 0)
  double step_time = 0.0;  ///< seconds per step (> 0)
  double sync_time = 0.0;  ///< seconds of it spent synchronising gradients (>= 0, < step_time)
};

/// @brief Options of fit_perf_params.
struct FitOptions {
  int max_evaluations = 3000;  ///< per start point (>= 1)
  double ftol_rel = 1e-12;     ///< relative tolerance on the objective (>= 0)
  /// Absolute tolerance on the objective (>= 0; 0: none). The reference's `scipy.optimize.minimize(...,
  /// tol=t)` stops L-BFGS-B when the decrease is below t·max(|f|, 1): ftol_rel = ftol_abs = t is that test.
  double ftol_abs = 0.0;
  /// Correction pairs L-BFGS keeps (>= 1). 10 is scipy L-BFGS-B's default (the reference's optimiser);
  /// NLopt's own default keeps up to max_evaluations of them, and each iteration then costs time in
  /// proportion to the iterations before it (two thirds of a simulation's fitting time went there).
  int lbfgs_memory = 10;
  bool log_space = true;     ///< optimise log(time parameters) instead of the raw values
  bool multi_start = true;   ///< also start from a least-squares estimate of alpha_c, beta_c
  bool apply_priors = true;  ///< apply the reference's post-fit network prior
  double fixed_gamma = 0.0;  ///< >= 1: pin gamma to this value (e.g. 1 for additive models); 0: fit it
};

/// @brief Result of a fit.
struct FitResult {
  PerfParams params;       ///< fitted parameters (after priors)
  double objective = 0.0;  ///< reference objective at the fitted parameters (before priors)
  int evaluations = 0;     ///< objective evaluations over all starts
};

/// @brief Throws InvalidArgument naming `what[i]` unless the observation is usable
/// (finite, positive times, sync < step, 1 <= nodes <= replicas, local_bsz > 0).
void validate(std::span<const PerfObservation> obs, const std::string& what = "observations");

/// @brief The reference objective at `p`; fills `grad` (7 entries, d/d parameter) when non-null.
[[nodiscard]] double fit_objective(const PerfParams& p, std::span<const PerfObservation> obs, double* grad = nullptr);

/// @brief Fits the seven parameters to `obs` (validated; throws InvalidArgument when empty or invalid).
[[nodiscard]] FitResult fit_perf_params_detailed(std::span<const PerfObservation> obs, const FitOptions& opt = {});
/// @brief Shorthand for fit_perf_params_detailed(obs, opt).params.
[[nodiscard]] PerfParams fit_perf_params(std::span<const PerfObservation> obs, const FitOptions& opt = {});

/**
 * @brief Online refinement (the reference's `Job.update_params`): keeps the latest observation
 * per (nodes, replicas, local batch) and refits when a configuration not seen before arrives.
 */
class OnlinePerfFitter {
 public:
  explicit OnlinePerfFitter(FitOptions opt = {}) : opt_(opt) {}
  /// Records an observation; refits and returns true when its (nodes, replicas, local batch) is new.
  bool observe(const PerfObservation& o);
  /// Forces a refit over all recorded observations.
  void refit();
  [[nodiscard]] bool fitted() const noexcept { return fitted_; }
  [[nodiscard]] const PerfParams& params() const noexcept { return params_; }
  [[nodiscard]] std::vector<PerfObservation> observations() const;

 private:
  FitOptions opt_;
  std::map<std::tuple<int, int, double>, PerfObservation> obs_;
  PerfParams params_;
  bool fitted_ = false;
};

}  // namespace sia
