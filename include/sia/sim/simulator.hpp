#pragma once
/// @file sim/simulator.hpp
/// @brief The discrete-time simulator (reference §6.1): every `interval` seconds, advance all jobs with
/// their allocations, then ask the policy for the next allocation of the active jobs.

#include <sia/sim/application.hpp>
#include <sia/sim/cluster.hpp>
#include <sia/sim/job.hpp>
#include <sia/sim/policy.hpp>
#include <sia/sim/workload.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sia::sim {

/// @brief Ground truths by model name.
using ApplicationSet = std::map<std::string, std::shared_ptr<const Application>>;

/// @brief Options of one simulation.
struct SimOptions {
  double interval_s = 0.0;                  ///< round length; 0 = the policy's default
  double horizon_s = 90.0 * 86400;          ///< stop (jobs left unfinished) after this much simulated time
  bool keep_round_log = false;              ///< keep per-round allocations (for --out)
  PerfFitter fitter;                        ///< empty = default_perf_fitter()
  std::function<void(double)> on_progress;  ///< called with the fraction of completed jobs
  std::optional<JobKind> force_category;    ///< overrides every job's kind (`--force-category`, paper Fig. 1)
};

/// @brief Per-job outcome.
struct JobRecord {
  std::string name, application;
  JobKind category = JobKind::adaptive;
  double submission_time = 0.0;
  std::optional<double> completion_time;
  int restarts = 0;
  double gpu_hours = 0.0;
  std::vector<double> gpu_hours_by_type;  ///< GPU-hours held per GPU type (paper Fig. 6)
  double contention_avg = 0.0;            ///< n_avg: mean number of active jobs over the rounds it was active
  double ftf = 0.0;                       ///< finish-time fairness ρ (0 when not computed / unfinished)
  int epochs = 0;
  [[nodiscard]] double jct() const noexcept { return completion_time ? *completion_time - submission_time : 0.0; }
};

/// @brief One job's allocation in a round log.
struct RoundAllocation {
  std::string job;
  int type = -1, nodes = 0, gpus = 0;
  long long batch = 0;
};

/// @brief One round.
struct RoundLog {
  double time = 0.0;
  int active = 0;  ///< submitted, unfinished jobs (running + queued)
  int queued = 0;
  double policy_ms = 0.0;
  std::vector<RoundAllocation> allocations;  ///< only with SimOptions::keep_round_log
};

/// @brief Outcome of one simulation.
struct SimResult {
  std::string policy, workload;
  double interval_s = 0.0;
  std::vector<JobRecord> jobs;
  std::vector<RoundLog> rounds;   ///< every round (allocations only when kept)
  std::vector<double> policy_ms;  ///< runtime of every policy call (rounds with active jobs)
  double wall_s = 0.0;
};

/**
 * @brief Checks, before anything runs, that every job's model has a ground truth and that the cluster has GPUs.
 * @throws InvalidArgument naming the workload file, line and column (the `application` column).
 */
void validate_inputs(const SimCluster& cluster, const ApplicationSet& apps, const Workload& workload);

/// @brief Simulates `workload` on `cluster` under `policy`.
[[nodiscard]] SimResult simulate(const SimCluster& cluster, const ApplicationSet& apps, const Workload& workload,
                                 Policy& policy, const SimOptions& options = {});

/**
 * @brief Loads the ground truth of every model named in `workloads` from the artifact's `profiles_dir`.
 * @throws InvalidArgument naming the workload file and line of a model without profiles, or a GPU type of
 * the cluster without profiles.
 */
[[nodiscard]] ApplicationSet load_applications(const std::filesystem::path& profiles_dir, const SimCluster& cluster,
                                               const std::vector<Workload>& workloads);

}  // namespace sia::sim
