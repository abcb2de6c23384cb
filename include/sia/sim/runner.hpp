#pragma once
/// @file sim/runner.hpp
/// @brief Many independent simulations (workloads × policies × seeds) on all cores: a oneTBB thread pool
/// runs them, results come back in the order of the specifications and are the same bits as a serial run.
///
/// Why this is deterministic: simulations share nothing mutable but the fit memo (each makes its own policy and
/// jobs; the ground truths and workloads are read-only, their interpolation caches locked; a fit is a pure function
/// of its observations, so the memo holds the same bits whoever computes an entry), and a simulation gives the same
/// bits for any thread count (SimOptions::threads).
///
/// Threads: the runner runs min(threads, simulations) simulations at once and gives each the rest of the cores
/// (SimOptions::threads = threads / simulations at once, at least 1): a single simulation uses every thread (its
/// jobs step in parallel, its policy's round may use them), a sweep of many runs one simulation per thread. The
/// total never exceeds `threads`.

#include <sia/sim/metrics.hpp>
#include <sia/sim/policy.hpp>
#include <sia/sim/report.hpp>
#include <sia/sim/simulator.hpp>

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sia::sim {

/// @brief One simulation to run: inputs (shared, read-only), the policy to make, options.
struct SimulationSpec {
  std::shared_ptr<const SimCluster> cluster;
  std::shared_ptr<const ApplicationSet> apps;
  std::shared_ptr<const Workload> workload;
  std::string policy;            ///< registered policy name (make_policy) ...
  PolicyOptions policy_options;  ///< ... and its options
  /// ... or a factory for a policy that is not registered (used instead of `policy` when set). Called once,
  /// on the thread that runs the simulation.
  std::function<std::unique_ptr<Policy>()> make_policy;
  SimOptions options;                ///< its on_progress is replaced by the runner's (RunnerOptions::on_progress)
  bool finish_time_fairness = true;  ///< compute JobRecord::ftf (compute_ftf) after the run
};

/// @brief Where a batch of simulations stands (RunnerOptions::on_progress).
struct RunnerProgress {
  std::size_t simulations = 0;       ///< in the batch
  std::size_t simulations_done = 0;  ///< finished
  std::size_t simulations_running = 0;
  std::size_t jobs_total = 0;  ///< over every simulation of the batch
  std::size_t jobs_finished = 0;
  std::size_t rounds = 0;      ///< rounds simulated so far, over every simulation
  double min_now_s = 0.0;      ///< simulated time of the least advanced running simulation
  double max_horizon_s = 0.0;  ///< latest end of the running simulations (their last submission)
  double wall_s = 0.0;         ///< since the batch started
  /// Estimated seconds to the end of the batch (negative: not known yet). From the jobs still to finish
  /// at the rate jobs have finished so far.
  double eta_s = -1.0;
  bool done = false;  ///< the last call
};

/// @brief Options of run_simulations().
struct RunnerOptions {
  /// Threads of the batch: 0 = the machine's cores (oneTBB's default concurrency), 1 = everything serially on
  /// the calling thread (more than the cores counts as the cores). min(threads, simulations) simulations run at
  /// once, each on its share of the threads.
  int threads = 0;
  /// Called at most every `progress_period_s` (and once at the end), from one thread at a time.
  std::function<void(const RunnerProgress&)> on_progress;
  double progress_period_s = 0.5;
  /// Polled by every simulation once per round; true stops the batch (SimulationCancelled).
  std::function<bool()> cancelled;
};

/**
 * @brief Prints RunnerProgress as one line on a stream (sia_simulate's progress on standard error):
 * `[2/16 runs] t 12.3 h | 5,123/100,000 jobs finished | 845 rounds/s | ETA 4 min 12 s`.
 * On a terminal the line is rewritten in place (carriage return) and erased at the end; elsewhere
 * (pipes, CI logs, notebooks) each call writes a new line. Use it as RunnerOptions::on_progress.
 */
class ProgressPrinter {
 public:
  ProgressPrinter(std::ostream& out, bool terminal) : out_(&out), terminal_(terminal) {}
  void operator()(const RunnerProgress& p);
  /// The line for `p`, with `rounds_per_s` the recent round rate.
  [[nodiscard]] static std::string line(const RunnerProgress& p, double rounds_per_s);

 private:
  std::ostream* out_;
  bool terminal_;
  std::size_t last_rounds_ = 0;
  double last_wall_ = 0.0;
  std::size_t width_ = 0;
};

/// @brief The thread count `threads` stands for (0 = all cores), at least 1.
[[nodiscard]] int effective_threads(int threads);

/**
 * @brief Runs every simulation and returns their results in the order of `specs` (with JobRecord::ftf when
 * asked). The results are identical whatever `options.threads` is.
 *
 * When a simulation throws, the simulations after it in `specs` are cancelled, those before it finish, and
 * the exception of the first failing simulation (lowest index) is rethrown, so the error reported is
 * the same whatever the thread count.
 * @throws InvalidArgument for a spec without cluster, ground truths or workload, or an unknown policy.
 */
[[nodiscard]] std::vector<SimResult> run_simulations(std::span<const SimulationSpec> specs,
                                                     const RunnerOptions& options = {});

/**
 * @brief Every policy on every workload, with finish-time fairness and metrics, as sia_simulate reports them:
 * one PolicyRuns per policy (in the order of `policies`), its runs in the order of `workloads`.
 * `policy_options(name)` gives each policy its options (none when empty).
 */
[[nodiscard]] std::vector<PolicyRuns> simulate_policies(
    const std::vector<std::string>& policies, std::shared_ptr<const SimCluster> cluster,
    std::shared_ptr<const ApplicationSet> apps, const std::vector<std::shared_ptr<const Workload>>& workloads,
    const SimOptions& sim, const RunnerOptions& options = {},
    const std::function<PolicyOptions(const std::string&)>& policy_options = {});

}  // namespace sia::sim
