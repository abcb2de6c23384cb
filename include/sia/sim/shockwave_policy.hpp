#pragma once
/// @file sim/shockwave_policy.hpp
/// @brief The Shockwave baseline (NSDI 2023; Sia paper Table 4 "Shockwave+TJ" and Fig. 8) on open solvers: a
/// binary plan x[j][r] of which rigid jobs run in each of the next `window` rounds, chosen by a MILP through the
/// project's MILP layer (CBC or GLPK) within a node limit, re-planned every round.
///
/// The planning MILP (Shockwave's `dynamic_eisenberg_gale_scheduling`, as in its public repository
/// `uw-mad-dash/shockwave` and the Sia artifact's port `sia-simulator/shockwave.py`; both need Gurobi):
/// - x[j][r] ∈ {0,1}; per round Σ_j gpus_j·x[j][r] ≤ G (the cluster's GPUs, heterogeneity-unaware);
/// - planned steps p_j ≥ 0 with τ_j·p_j ≤ interval·Σ_r x[j][r] (τ_j: seconds per step);
/// - normalised progress u_j = (done_j + p_j) / total_j written as a convex combination Σ_k λ_jk·B_k of the
///   breakpoints B = {0, 0.2, 0.4, 0.6, 0.8, 1}, so L_j = Σ_k λ_jk·log B_k is the piecewise-linear log of u_j
///   (log 0 replaced by log 1e-6). Shockwave also keeps at most two adjacent λ non-zero (pairwise exclusions);
///   that is implied here (log is concave and w_j > 0: the best λ for any u are the two breakpoints around it),
///   so it costs no binaries;
/// - m_j ≥ max(0, remaining_j − τ_j·p_j), the runtime left after the window, and M ≥ m_j;
/// - maximise Σ_j w_j·L_j / (J·window) − k·M (w_j = 1);
/// - finish-time fairness: elapsed_j + window·interval + m_j / share ≤ ρ_max·F_j, share = min(1, G/J) and F_j
///   the momentum average of the job's fair-share finish times (below).
/// When the constraints make the MILP infeasible they are dropped: a second solve with weights
/// w_j = ρ_j^λ for jobs whose projected ratio ρ_j = (elapsed_j + remaining_j / share) / F_j exceeds ρ_max
/// (ρ_j^100 when the job could finish within a round), then a third, re-ranking solve keeps every job's number of
/// planned rounds and moves high-weight jobs earlier (minimise Σ_j w_j·mean planned round index of j). Beyond
/// `max_weight` a weight keeps growing, slowly (max_weight·(1 + ln(1 + ln(ρ_j^λ / max_weight)))), rather than
/// stopping: a flat cap made every job far behind tie, and with deterministic re-planning the same tied job
/// stayed behind; the slow growth keeps the weights' range near max_weight's (CBC crashed on a wider one).
/// How it is solved (issue 19): the objective and the fairness rows depend on the plan only through each job's
/// number of planned rounds n_j, so each solve is first the aggregated MILP (integer n_j ≤ window, one row
/// Σ_j gpus_j·n_j ≤ window·G: a relaxation without the rounds' symmetry, solved in milliseconds) and its counts
/// are packed into rounds (an exact depth-first search with a node budget). When they pack, the plan is an answer
/// of the per-round MILP within the same relative gap. When they do not, rounds are taken away greedily (least
/// loss of objective first) until they pack; that plan is kept if within the gap of the relaxation's bound, else
/// the per-round MILP is solved and the better of the two kept. Every MILP solve stops at a node limit
/// (deterministic: the same trace gives the same schedule on an idle or a loaded machine); the wall clock never
/// stops a node-limited solve, it only reports one slower than the safety net.
/// The first planned round runs; idle GPUs are filled with the unplanned jobs of longest remaining runtime
/// that fit (work conservation). Placement goes by GPU count, largest first (the Sia port's order): the jobs of
/// a count keep their previous nodes when free, then the others are placed on one GPU type, node by node, in
/// cluster order. A chosen job that fits on no type this round waits, and the GPUs it leaves go to the jobs
/// left out that fit (highest weight, then ρ, then longest remaining runtime first).
///
/// Fair-share finish time of job j at round i (Shockwave's `finish_time_uniform_share`): the time from its
/// submission to its end if it had run at the uniform share all along, F_j(i) = (τ_j·total_j) / min(1, G/J_i);
/// the momentum average weights the values by how many rounds each held, then 0.9·average + 0.1·latest.
///
/// Parameters and where they come from (ShockwaveOptions): round 360 s (Sia paper §4.3 for Shockwave); window 7
/// rounds, i.e. Shockwave's planning horizon of 20 rounds × 120 s = 2400 s expressed in 360-s rounds (the Sia
/// port planned 5 × 360 s; 20 rounds of 360 s make the MILP much harder without changing the first round much);
/// ρ_max = 1 and the breakpoints {0, .2, .4, .6, .8, 1} with log 0 := log 1e-6 (every Shockwave configuration and
/// the Sia port); λ = 12 and k = 1e-9 per second of runtime (the Sia port that produced the paper's Table 4;
/// Shockwave's own configurations use λ 5–15 and k 1e-3–1e5, and the Sia paper quotes "(10, 1e-1)"); relative
/// gap 1e-3 (Shockwave); a limit per solve (Shockwave: 15 s with 24 Gurobi threads; here 500 branch-and-bound
/// nodes of one CBC thread, deterministic — a solve stopped there keeps its best plan — and 60 s of wall clock as
/// a safety net that only reports a slow solve; until issue 19 a 3-s wall-clock limit, which made the schedules
/// depend on the load).

#include <sia/milp/solver.hpp>
#include <sia/sim/policy.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sia::sim {

/// @brief One job of a Shockwave plan.
struct ShockwaveJob {
  int gpus = 1;                ///< GPUs the job needs (its TunedJobs count)
  double step_time_s = 1.0;    ///< τ_j > 0: seconds per step
  double done_steps = 0.0;     ///< steps done
  double total_steps = 1.0;    ///< steps in all (> 0, ≥ done)
  double elapsed_s = 0.0;      ///< time since submission
  double fair_finish_s = 1.0;  ///< F_j > 0: momentum-averaged fair-share finish time (from submission)
  [[nodiscard]] double remaining_s() const noexcept { return (total_steps - done_steps) * step_time_s; }
};

/// @brief Planner parameters.
struct ShockwaveOptions {
  double interval_s = 360.0;  ///< round length
  int window = 7;             ///< planned rounds (7 × 360 s ≈ Shockwave's 20 × 120 s horizon)
  double k = 1e-9;            ///< weight of the largest remaining runtime (per second)
  double lambda = 12.0;       ///< exponent of the FTF-ratio weights when the constraints are dropped
  double rho_max = 1.0;       ///< finish-time-fairness bound
  std::vector<double> breakpoints = {0.0, 0.2, 0.4, 0.6, 0.8, 1.0};  ///< of the piecewise-linear log
  double log_origin = 1e-6;                                          ///< stands for 0 in log(0)
  /// Weights ρ^λ above this grow only doubly logarithmically (keeps the MILP numerically sane, never ties).
  double max_weight = 1e6;
  std::string backend = "auto";  ///< MILP backend; "auto" = cbc when built, else glpk, else native
  /// Per MILP solve, branch-and-bound nodes (CBC; 0: none): the deterministic limit that ends the solves.
  long long node_limit = 500;
  /// Per MILP solve, the wall-clock safety net. When the solves are node-limited (CBC and node_limit > 0) it
  /// never stops one: a solve that takes longer is only counted and reported (ShockwavePlan::slow_solves, a
  /// warning of the policy), so the plan never depends on the machine's load. With a backend that has no node
  /// limit (GLPK, native) or node_limit = 0 it stops the solve, and then the plan depends on the load.
  std::chrono::milliseconds time_limit{60000};
  double relative_gap = 1e-3;
  /// One line per MILP solve on standard error (the policy's round, model, status, nodes, wall time).
  bool log_solves = false;
};

/// @brief One MILP solve of a plan, for logs and tests.
struct ShockwaveSolve {
  std::string model;  ///< "aggregated", "per-round" or "re-ranking"
  bool ftf = false;   ///< with the finish-time-fairness rows
  MilpStatus status = MilpStatus::optimal;
  long long nodes = 0;                 ///< branch-and-bound nodes (CBC)
  bool node_limit_reached = false;     ///< stopped by the node limit (deterministic)
  bool slow = false;                   ///< took longer than ShockwaveOptions::time_limit of wall clock
  bool stopped_by_wall_clock = false;  ///< ... and was stopped there (backends without a node limit only)
  double wall_s = 0.0;                 ///< its wall-clock time (never used by the plan)
};

/// @brief A plan: who runs in which of the next rounds.
struct ShockwavePlan {
  std::vector<std::vector<char>> x;  ///< jobs × window
  bool ftf_dropped = false;          ///< the FTF constraints made the first MILP infeasible
  std::vector<double> weights;       ///< w_j of the objective actually solved
  int solves = 0;
  int per_round_solves = 0;  ///< solves of the per-round model (the aggregated model's counts did not pack)
  MilpStatus status = MilpStatus::optimal;  ///< of the last solve that produced `x`
  bool fallback = false;                    ///< every solve failed: `x` is the greedy plan
  std::string message;
  double objective = 0.0;           ///< of `x` in the solved objective (0 for the greedy plan)
  std::vector<ShockwaveSolve> log;  ///< every MILP solve, in order
  int slow_solves = 0;              ///< solves longer than the wall-clock safety net (`log[i].slow`)
  bool wall_clock_stopped = false;  ///< a solve was stopped by the wall clock: this plan depends on the load
};

/**
 * @brief Plans the next `options.window` rounds for `jobs` on `gpus` GPUs (see the file comment). The plan never
 * exceeds `gpus` in any round. A backend that fails or times out without a solution never throws: the plan is then
 * the greedy one (jobs by FTF ratio, then by remaining runtime, packed round by round) with `fallback` set.
 * @throws InvalidArgument on bad inputs (naming the job and field) or options.
 */
[[nodiscard]] ShockwavePlan shockwave_plan(const std::vector<ShockwaveJob>& jobs, int gpus,
                                           const ShockwaveOptions& options = {});

/// @brief Momentum average of a series of (round, value) up to round `now` (Shockwave's
/// `finish_time_momentumed_average`, momentum 0.9). @throws InvalidArgument for an empty series.
[[nodiscard]] double shockwave_momentum_average(const std::vector<std::pair<int, double>>& series, int now,
                                                double momentum = 0.9);

/**
 * @brief Shockwave + TunedJobs as a simulator policy (jobs run their workload GPU count and batch size; steps and
 * seconds per step from the ground truth and Gavel's throughput oracle averaged over the GPU types, as the Sia
 * port does).
 */
class ShockwavePolicy final : public Policy {
 public:
  explicit ShockwavePolicy(ShockwaveOptions options = {});
  [[nodiscard]] std::string name() const override { return "shockwave"; }
  [[nodiscard]] double default_interval_s() const override { return options_.interval_s; }
  [[nodiscard]] std::vector<SimAllocation> allocate(const PolicyContext& ctx) override;
  /// The last round's plan (for tests and logs).
  [[nodiscard]] const ShockwavePlan& last_plan() const noexcept { return last_; }
  /// Solves of all rounds so far that took longer than the wall-clock safety net (a warning on standard error
  /// reports the first); of those, the ones it stopped (only without a node limit: the schedule then depends on
  /// the machine's load).
  [[nodiscard]] long long slow_solves() const noexcept { return slow_solves_; }
  [[nodiscard]] long long wall_clock_stops() const noexcept { return wall_clock_stops_; }

 private:
  ShockwaveOptions options_;
  ShockwavePlan last_;
  int round_ = 0;
  long long slow_solves_ = 0, wall_clock_stops_ = 0;
  struct JobState {
    std::vector<std::pair<int, double>> fair_finish;  ///< (round, F_j) series
    int type = -1;
    std::vector<std::pair<int, int>> nodes;  ///< previous (node, GPUs) on `type`
  };
  std::map<std::uint64_t, JobState> state_;
  /// The last plan's solves: `log_solves` lines, the safety net's warnings, the counters.
  void report_solves(double now);
};

}  // namespace sia::sim
