#pragma once
/// @file sim/simulator.hpp
/// @brief The discrete-time simulator (reference §6.1): every `interval` seconds, advance all jobs with
/// their allocations, then ask the policy for the next allocation of the active jobs.

#include <sia/error.hpp>
#include <sia/sim/application.hpp>
#include <sia/sim/cluster.hpp>
#include <sia/sim/job.hpp>
#include <sia/sim/policy.hpp>
#include <sia/sim/workload.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sia::sim {

/// @brief Ground truths by model name.
using ApplicationSet = std::map<std::string, std::shared_ptr<const Application>>;

/// @brief Where a running simulation stands (SimOptions::on_progress).
struct SimProgress {
  double now_s = 0.0;              ///< simulated time reached
  double last_submission_s = 0.0;  ///< submission time of the workload's last job
  double horizon_s = 0.0;          ///< the simulation stops here at the latest
  std::size_t jobs_total = 0;
  std::size_t jobs_submitted = 0;  ///< jobs whose submission time has passed
  std::size_t jobs_finished = 0;
  std::size_t active = 0;  ///< submitted, unfinished jobs in the last round
  std::size_t rounds = 0;  ///< rounds simulated so far
  double wall_s = 0.0;     ///< wall time since the simulation started
  bool done = false;       ///< the last call of this simulation
};

/// @brief Thrown by simulate() when SimOptions::cancelled returns true.
class SimulationCancelled : public Error {
 public:
  using Error::Error;
};

/// @brief Options of one simulation.
struct SimOptions {
  double interval_s = 0.0;          ///< round length; 0 = the policy's default
  double horizon_s = 90.0 * 86400;  ///< stop (jobs left unfinished) after this much simulated time
  /// The horizon cuts the workload short on purpose (round-time experiments): jobs submitted after it are left
  /// out. Otherwise such a job is an error before the run (it could never run; sim/limits.hpp).
  bool truncate = false;
  bool keep_round_log = false;  ///< keep per-round allocations (for --out)
  PerfFitter fitter;            ///< empty = default_perf_fitter(), memoised per simulation
  /// Called after every round (and once more with `done` at the end); keep it cheap (throttle output yourself).
  std::function<void(const SimProgress&)> on_progress;
  /// Polled every round: true stops the simulation with SimulationCancelled (e.g. a wall-time limit).
  std::function<bool()> cancelled;
  std::optional<JobKind> force_category;  ///< overrides every job's kind (`--force-category`, paper Fig. 1)
  /// Threads this simulation uses: its jobs' steps between two rounds (with their refits) run in parallel, and the
  /// policy may use them inside a round (PolicyContext::threads), in the rounds with enough work to pay for handing
  /// it to another thread (a round of the 936-job trace at 64 GPUs has too little: it runs on one). 0 = all cores (oneTBB's default concurrency; more
  /// counts as all), 1 = the calling thread only. The results are the same bits for every value. run_simulations()
  /// gives each simulation its share of the runner's threads (1 when it runs as many simulations at once as it has
  /// threads).
  int threads = 0;
  /// With several threads, hand work to the other ones in every round (the jobs' steps in parallel, the policy's
  /// own parallel work: PolicyContext::hand_off_every_round) instead of only in the rounds with enough of it to pay
  /// for the hand-off (on 2 cores none of the measured workloads had such rounds below thousands of active jobs).
  /// For tests of the parallel paths: the results are the same bits either way.
  bool hand_off_every_round = false;
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
  /// Every round, always: its time, active and queued jobs and policy time feed the contention metrics (mean and
  /// largest active jobs per round, RunMetrics) and `--out`'s per-round lines. Its `allocations` stay empty (no
  /// heap memory) unless SimOptions::keep_round_log: about 48 bytes a round, 0.5 MB for the 10^4 rounds of a
  /// week at 60 s.
  std::vector<RoundLog> rounds;
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
                                               const std::vector<Workload>& workloads,
                                               Interpolation interpolation = Interpolation::planar);

}  // namespace sia::sim
