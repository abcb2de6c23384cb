#pragma once
/// @file sim/metrics.hpp
/// @brief Metrics of simulations (reference §6.7 conventions; paper §5 and Eq. 6 for finish-time fairness).

#include <sia/sim/simulator.hpp>

#include <string>
#include <vector>

namespace sia::sim {

/// @brief Metrics of one run or of several pooled runs.
struct RunMetrics {
  std::string policy, workload;
  int jobs = 0;
  int completed = 0;
  double avg_jct_h = 0, avg_jct_std_h = 0;          ///< mean JCT; std of per-workload means (0 for one run)
  double p99_jct_h = 0;                             ///< sorted JCTs, element int(0.99 N) (no interpolation)
  double makespan_h = 0, makespan_std_h = 0;        ///< max(completion) - min(submission); mean/std over workloads
  double gpu_hours_per_job = 0, gpu_hours_std = 0;  ///< GPU-hours held (incl. restore time) per job
  double restarts_per_job = 0;
  double contention_mean = 0;  ///< mean over rounds of active jobs (then mean over workloads)
  int contention_max = 0;
  double ftf_worst = 0, unfair_fraction = 0;  ///< max ρ and share of jobs with ρ > 1
  double policy_ms_median = 0, policy_ms_p95 = 0;
  int rounds = 0;  ///< policy calls
  double wall_s = 0;
};

/// @brief Which row a metrics record is: one run's, or runs pooled over workloads (an aggregate).
enum class MetricsRow { run, pooled };

/**
 * @brief Calls `f(name, value)`, in this order, for every field of a metrics row of `sia_simulate --json`;
 * the one list of those fields, so that the JSON report and the Python dicts (sia.simulate) cannot drift apart.
 * Run rows carry the workload; pooled rows have no workload of their own and add the standard deviations over
 * workloads. Values keep their C++ types (std::string, int, double). A field added here also needs its line in
 * python/sia/sim.py's Metrics dataclass (typed and documented there); tests/python/test_sim.py fails until it has it.
 */
template <class F>
void for_each_metric(const RunMetrics& m, MetricsRow row, F&& f) {
  const bool pooled = row == MetricsRow::pooled;
  f("policy", m.policy);
  if (!pooled) f("workload", m.workload);
  f("jobs", m.jobs);
  f("completed", m.completed);
  f("avg_jct_h", m.avg_jct_h);
  if (pooled) f("avg_jct_std_h", m.avg_jct_std_h);
  f("p99_jct_h", m.p99_jct_h);
  f("makespan_h", m.makespan_h);
  if (pooled) f("makespan_std_h", m.makespan_std_h);
  f("gpu_hours_per_job", m.gpu_hours_per_job);
  f("restarts_per_job", m.restarts_per_job);
  f("contention_mean", m.contention_mean);
  f("contention_max", m.contention_max);
  f("ftf_worst", m.ftf_worst);
  f("unfair_fraction", m.unfair_fraction);
  f("policy_ms_median", m.policy_ms_median);
  f("policy_ms_p95", m.policy_ms_p95);
  f("rounds", m.rounds);
  f("wall_s", m.wall_s);
}

/**
 * @brief Finish-time fairness ρ of every finished job (paper Eq. 6), stored in JobRecord::ftf.
 *
 * ρ = Σ_g (N_g / N) · JCT / T_g, where T_g is the job's completion time alone on an isolated cluster of
 * N_g / n_avg GPUs of type g (n_avg = the job's average contention). T_g is computed analytically from the
 * ground truth: the job starts at once (paying its restore delay once), runs every epoch at the best true
 * goodput over 24 geometric batch sizes up to its workload batch size on k GPUs, and a fractional share
 * between k and k+1 GPUs interpolates the rate linearly (a share below one GPU time-slices one GPU).
 * Deviation from the reference's (stale) `ftf_simulator.py`: no simulated scheduler in the isolated run.
 */
void compute_ftf(const SimCluster& cluster, const ApplicationSet& apps, const Workload& workload, SimResult& result);

/// @brief Metrics of one run.
[[nodiscard]] RunMetrics compute_metrics(const SimResult& result);

/// @brief Pools runs of one policy over several workloads as the reference's `print_run_stats.py` does.
[[nodiscard]] RunMetrics aggregate_metrics(const std::vector<const SimResult*>& runs);

/// @brief Index-based percentile of a sample (element int(q·N) of the sorted values; 0 when empty).
[[nodiscard]] double percentile_index(std::vector<double> values, double q);

}  // namespace sia::sim
