#pragma once
/// @file sim/gavel_policy.hpp
/// @brief The Gavel baseline (OSDI 2020) as the Sia paper runs it (reference §6.5): max-sum-throughput LP over
/// jobs × GPU types, round-based time sharing with Gavel's priorities, rigid "TunedJobs", 360 s rounds.

#include <sia/sim/policy.hpp>
#include <sia/sim/time_sharing.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sia::sim {

/// @brief How the max-sum-throughput LP is solved.
enum class GavelLpMethod {
  interior,  ///< interior point (LpMethod::interior): the analytic-centre-like solution that reproduces the paper
  simplex,   ///< simplex: a vertex solution (reference §10: gives a very different schedule)
  greedy,    ///< no LP solver: fractional greedy by throughput per GPU (used when no backend has an LP method)
};

/// @brief Options of the Gavel policy.
struct GavelPolicyOptions {
  double interval_s = 360.0;
  GavelLpMethod lp = GavelLpMethod::interior;  ///< falls back to greedy without a backend for it
  std::string lp_backend;                      ///< MILP backend of the LP; empty = gavel_lp_backend()
};

/**
 * @brief Solves Gavel's max-sum-throughput LP: maximise Σ T[j][k]·x[j][k] s.t. x ≥ 0, Σ_k x[j][k] ≤ 1,
 * Σ_j scale[j]·x[j][k] ≤ capacity[k], through the MILP layer (backend `backend`, default
 * gavel_lp_backend()). An interior-point failure retries with simplex; no backend or no optimum gives
 * the fractional greedy. The result is rounded to 5 decimals and clipped to [0, 1] (reference).
 * @param throughput jobs × types, non-negative finite
 * @throws InvalidArgument on mismatched sizes or non-finite input; BackendUnavailable for an unknown backend.
 */
[[nodiscard]] std::vector<std::vector<double>> gavel_solve_lp(const std::vector<std::vector<double>>& throughput,
                                                              const std::vector<int>& scale,
                                                              const std::vector<int>& capacity,
                                                              GavelLpMethod method = GavelLpMethod::interior,
                                                              const std::string& backend = {});

/// @brief The first available MILP backend with an interior-point LP method ("cbc": Clp's barrier;
/// "glpk"), empty when none.
[[nodiscard]] std::string gavel_lp_backend();

/// @brief Whether `gavel_solve_lp` has an LP backend in this build.
[[nodiscard]] bool gavel_has_lp_solver() noexcept;

/**
 * @brief Gavel's throughput of a rigid job (iterations/s, reference `predict_throughput`): `gpus` packed into
 * full nodes of type `t`, fixed global batch `batch`; 0.1 when the type has fewer GPUs than the job needs.
 */
[[nodiscard]] double gavel_throughput(const Application& app, const SimCluster& cluster, int t, int gpus, double batch);

/**
 * @brief Gavel (max-sum-throughput) as a simulator policy.
 *
 * Every round: LP over the active jobs (each job needs its workload `num_replicas` GPUs, runs its workload
 * batch size — the policy makes every job it sees rigid, as the paper's "Gavel+TunedJobs"), then Gavel's
 * time-sharing mechanism (TimeSharingRounds: priorities x / received time fraction, greedy whole-GPU
 * scheduling, previous nodes kept when free).
 */
class GavelPolicy final : public Policy {
 public:
  explicit GavelPolicy(GavelPolicyOptions options = {});
  [[nodiscard]] std::string name() const override { return "gavel"; }
  [[nodiscard]] double default_interval_s() const override { return options_.interval_s; }
  [[nodiscard]] std::vector<SimAllocation> allocate(const PolicyContext& ctx) override;
  /// LP solution of the last round (jobs × types), for tests and logs.
  [[nodiscard]] const std::vector<std::vector<double>>& last_lp() const noexcept { return last_x_; }
  /// Priorities of the last round (jobs × types).
  [[nodiscard]] const std::vector<std::vector<double>>& last_priorities() const noexcept {
    return rounds_.last_priorities();
  }

 private:
  GavelPolicyOptions options_;
  TimeSharingRounds rounds_;
  std::vector<std::vector<double>> last_x_;
  // The last LP's inputs: a round whose active jobs did not change asks the same LP again (throughputs come from
  // the ground truth of each job's fixed GPU count and batch size), and the LP's answer is a function of its
  // inputs, so last_x_ is reused (no new solve; the same bits).
  std::vector<std::vector<double>> last_T_;
  std::vector<int> last_scale_, last_cap_;
  bool have_last_ = false;
};

}  // namespace sia::sim
