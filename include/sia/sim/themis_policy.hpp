#pragma once
/// @file sim/themis_policy.hpp
/// @brief The Themis baseline (NSDI 2020) as Gavel formulates it and the Sia paper runs it (Table 4, "Themis+TJ"):
/// finish-time fairness over time fractions, solved exactly with the MILP layer's LP backends, turned into
/// whole-GPU rounds by Gavel's time-sharing mechanism; jobs run their TunedJobs GPU count and batch size.
///
/// The problem (Gavel's `FinishTimeFairnessPolicyWithPerf`, the Sia artifact's `policies/finish_time_fairness.py`):
/// time fractions x[j][w] ≥ 0 with Σ_w x[j][w] ≤ 1 and Σ_j gpus_j·x[j][w] ≤ GPUs of type w; minimise the largest
///   ρ_j(x) = (t_j + rem_j / Σ_w T[j][w]·x[j][w]) / D_j,
/// t_j the time since the job's submission, rem_j its remaining steps, T its steps per second on each type and
/// D_j its finish time in isolation (ThemisIsolatedTime). ρ_j(x) ≤ ρ ⇔ Σ_w T[j][w]·x[j][w] ≥ f_j(ρ) =
/// rem_j / (ρ·D_j − t_j), decreasing for ρ > τ_j = t_j / D_j. themis_solve() solves, at points ρ, the LP
/// "maximise a common factor z of the throughput needs: Σ_w T x ≥ z·f_j(ρ) for every job, x in the polytope"
/// (Gavel's own step). Its x is an allocation (max_j ρ_j(x) an upper bound; z common to all jobs spreads the slack
/// over every job instead of leaving capacity idle), and its duals y_j, π_w, σ_j give a lower bound valid for any
/// non-negative values (Lagrangian relaxation with a weak-duality bound on the polytope): the root of
/// Σ_j y_j f_j(ρ') / f_j(ρ) = Σ_w π_w C_w + Σ_j σ_j + Σ_jw (y_j T_jw / f_j(ρ) − π_w gpus_j − σ_j)⁺, tight at the
/// optimum. The next point is that bound (or a bisection step when it does not move); started from the last
/// round's optimum, one or two LPs a round. The LPs share their rows and columns, named after the jobs: with CBC
/// each starts Clp's dual simplex from the last one's basis (the policy keeps its backend, so across rounds too).
/// The allocation returned is the LP answer with the smallest max ρ_j, within the tolerance of the lower bound.
/// History (issue 19): a bisection on ρ with that z-LP (8–20 LPs a round through CBC's branch and bound), then
/// Newton's method with cutting planes (3.7 LPs a round from the slack basis) and one z-LP at the converged ρ,
/// now this: the optimum ρ is the same to the tolerance each time, but the LPs have many optimal x (ties), and
/// which one is returned changed with the method (Philly × 8 average JCT: docs/performance.md, "960-job workloads per policy").

#include <sia/sim/policy.hpp>
#include <sia/sim/time_sharing.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sia {
class MilpSolver;
}  // namespace sia

namespace sia::sim {

/// @brief One job of a Themis problem.
struct ThemisJob {
  double elapsed_s = 0.0;        ///< t_j ≥ 0: time since submission
  double remaining_steps = 0.0;  ///< rem_j ≥ 0 (0: the job needs no throughput; ρ_j = t_j / D_j)
  double isolated_time_s = 1.0;  ///< D_j > 0
};

/// @brief How the solver runs its LPs.
struct ThemisSolveOptions {
  /// MILP backend for the LPs; "auto" = cbc when built, else glpk, else native (whose general fallback only
  /// takes small models — larger ones then use the isolated allocation, reported in the solution).
  std::string backend = "auto";
  double relative_tolerance = 1e-6;               ///< stop when (upper − lower) ≤ tolerance · upper
  int max_lp_solves = 200;                        ///< hard cap on LPs per solve
  std::chrono::milliseconds lp_time_limit{5000};  ///< per LP
  /// A guess of the optimum (e.g. the last round's): where the first LP linearises the problem. NaN (or a value
  /// at or below the jobs' elapsed shares): the isolated allocation's ρ. Changes the number of LPs, and which of
  /// several optimal allocations is returned, not the optimum.
  double start_rho = std::numeric_limits<double>::quiet_NaN();
};

/// @brief Result of themis_solve().
struct ThemisSolution {
  std::vector<std::vector<double>> x;  ///< jobs × types, in [0, 1], capacity and Σ_w x ≤ 1 respected
  double rho = 0.0;                    ///< max_j ρ_j(x) (jobs without any throughput excluded; 0 without jobs)
  /// Lower bound on the optimum, proven up to the LP backend's tolerances (rho − rho_lower ≤ tolerance · rho when
  /// solved).
  double rho_lower = 0.0;
  int lp_solves = 0;
  bool fallback = false;  ///< the backend failed before any LP succeeded: x is the isolated allocation
  std::string message;    ///< why, when fallback or stopped early
};

/**
 * @brief The isolated allocation of Gavel's `IsolatedPolicy`: every job gets 1/m of every type (m = jobs),
 * in units of its GPU count, rows scaled down to Σ_w x ≤ 1.
 */
[[nodiscard]] std::vector<std::vector<double>> themis_isolated_allocation(const std::vector<int>& gpus,
                                                                          const std::vector<int>& capacity);

/// @brief ρ_j(x) of every job (+inf when it gets no throughput but still has steps to run).
[[nodiscard]] std::vector<double> themis_rhos(const std::vector<std::vector<double>>& throughput,
                                              const std::vector<ThemisJob>& jobs,
                                              const std::vector<std::vector<double>>& x);

/**
 * @brief Minimises max_j ρ_j over the time-fraction polytope (see the file comment).
 * @param throughput jobs × types, steps per second, finite and ≥ 0 (a job needing more GPUs than a type has
 *        never runs there: its fractions on that type stay 0)
 * @param gpus GPUs each job needs (≥ 1); @param capacity GPUs per type (≥ 0)
 * @throws InvalidArgument on mismatched sizes or bad values (naming the job and field).
 * A failing backend never throws: the result then falls back to the best allocation known (the isolated one
 * at worst) with `fallback`/`message` set.
 */
[[nodiscard]] ThemisSolution themis_solve(const std::vector<std::vector<double>>& throughput,
                                          const std::vector<int>& gpus, const std::vector<int>& capacity,
                                          const std::vector<ThemisJob>& jobs, const ThemisSolveOptions& options = {});

/**
 * @brief themis_solve() with its LP backend kept from call to call: each call's first LP starts from the last
 * call's final basis (CBC's simplex; rows and columns named after the jobs' `ids`), so a sequence of similar
 * problems (a policy's rounds) takes a few pivots per LP. The same optimum ρ as themis_solve() to the tolerance;
 * which of several optimal allocations is returned may differ.
 */
class ThemisSolver {
 public:
  ThemisSolver();
  ~ThemisSolver();
  ThemisSolver(const ThemisSolver&) = delete;
  ThemisSolver& operator=(const ThemisSolver&) = delete;
  /// As themis_solve(); `ids` (one per job, unique) identify the jobs across calls. The backend is made on the
  /// first call from `options.backend` (and again when that name changes).
  /// @throws InvalidArgument as themis_solve(), and when `ids` has the wrong size or a duplicate.
  [[nodiscard]] ThemisSolution solve(const std::vector<std::vector<double>>& throughput, const std::vector<int>& gpus,
                                     const std::vector<int>& capacity, const std::vector<ThemisJob>& jobs,
                                     const std::vector<std::uint64_t>& ids, const ThemisSolveOptions& options = {});

 private:
  std::unique_ptr<MilpSolver> solver_;
  std::string requested_, name_, error_;
  bool made_ = false;
};

/// @brief The denominator D_j of ρ_j.
enum class ThemisIsolatedTime {
  /// The Sia artifact's (which produced Table 4): the wait for the first round plus the restore delay, plus all
  /// of the job's steps at its isolated throughput — a job's fair finish time from its submission.
  artifact,
  /// Gavel's upstream code: the time the job would have needed in isolation for the steps it has done so far
  /// (accumulated round by round), plus its remaining steps at its isolated throughput.
  gavel,
  /// t_j + rem_j / isolated throughput (ρ = 1 for the isolated allocation itself).
  elapsed,
};

/// @brief Options of the Themis policy.
struct ThemisPolicyOptions {
  double interval_s = 360.0;  ///< paper §4.3: 360 s for Gavel, Themis and Shockwave
  ThemisIsolatedTime isolated_time = ThemisIsolatedTime::artifact;
  ThemisSolveOptions solve;
};

/**
 * @brief Themis + TunedJobs as a simulator policy: every round the finish-time-fairness LP over the active jobs
 * (each needs its workload `num_replicas` GPUs at its workload batch size; steps per second from Gavel's
 * throughput oracle, remaining steps from the ground truth), then Gavel's time-sharing mechanism.
 */
class ThemisPolicy final : public Policy {
 public:
  explicit ThemisPolicy(ThemisPolicyOptions options = {});
  [[nodiscard]] std::string name() const override { return "themis"; }
  [[nodiscard]] double default_interval_s() const override { return options_.interval_s; }
  [[nodiscard]] std::vector<SimAllocation> allocate(const PolicyContext& ctx) override;
  /// The last round's solution (for tests and logs).
  [[nodiscard]] const ThemisSolution& last_solution() const noexcept { return last_; }

 private:
  ThemisPolicyOptions options_;
  TimeSharingRounds rounds_;
  ThemisSolution last_;
  struct JobState {
    double cumulative_isolated_s = 0.0;  ///< `gavel` denominator: isolated time of the steps done so far
    double prev_remaining = -1.0;
    double prev_isolated_throughput = 0.0;
    // Memos (exact: the same calls on the same arguments): throughputs per type and total steps at the job's
    // GPU count and batch size, remaining steps at its last (epoch, progress).
    int gpus = 0;
    double batch = 0.0;
    std::vector<double> throughput;
    double total_steps = 0.0;
    int rem_epoch = -1;
    double rem_progress = 0.0;
    double rem = 0.0;
  };
  std::map<std::uint64_t, JobState> state_;
  /// Kept across rounds: each round's LPs start from the last round's basis (jobs named by their uids).
  ThemisSolver solver_;
};

}  // namespace sia::sim
