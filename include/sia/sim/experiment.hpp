#pragma once
/// @file sim/experiment.hpp
/// @brief The paper's tables and figures as named experiments (`sia_simulate experiment NAME`): each one sets up
/// the paper's cluster, workloads and policies, runs the simulations, writes CSV files and PNG plots (gnuplot), and
/// prints its numbers beside the paper's. docs/experiments.md lists them and explains how to add one.

#include <sia/sim/policy.hpp>
#include <sia/sim/report.hpp>
#include <sia/sim/simulator.hpp>

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sia::sim {

/// @brief Options every experiment understands.
struct ExperimentOptions {
  std::filesystem::path out_dir;      ///< CSV/PNG output; empty = "experiments-out/<name>" in the working directory
  std::filesystem::path data_dir;     ///< the artifact data (`profiles/`, `workloads/`); empty = found automatically
  std::vector<std::string> policies;  ///< empty = the experiment's own list (the paper's)
  int max_workloads = 0;              ///< use only the first N workloads (0 = all): quick runs
  std::filesystem::path workload;     ///< a workload file or directory replacing the experiment's default
  int threads = 0;                    ///< simulations run at once (sim/runner.hpp); 0 = the machine's cores
  std::ostream* out = nullptr;        ///< tables and progress (nullptr = std::cout)
};

/// @brief What an experiment produced.
struct ExperimentResult {
  std::vector<std::filesystem::path> files;  ///< everything written
  bool targets_met = true;                   ///< the experiment's own check against the paper (printed)
};

/// @brief A registered experiment.
struct ExperimentInfo {
  std::string name;
  std::string description;  ///< one line: which table/figure, setting, rough run time
  std::function<ExperimentResult(const ExperimentOptions&)> run;
};

/// @brief Registers (or replaces) an experiment. @throws InvalidArgument for an empty name or no run function.
void register_experiment(ExperimentInfo info);
/// @brief Names of the registered experiments (built-in ones first).
[[nodiscard]] std::vector<std::string> experiment_names();
/// @brief The experiment `name`, if registered.
[[nodiscard]] std::optional<ExperimentInfo> find_experiment(std::string_view name);
/// @brief Runs the experiment `name`. @throws InvalidArgument for an unknown name (listing the known ones).
ExperimentResult run_experiment(std::string_view name, const ExperimentOptions& options);

// --- helpers for experiments -------------------------------------------------------------------

/// @brief The artifact data directory (`.../shared/data/sia-artifact`) searched upwards from the working
/// directory and from the running executable; nullopt when absent.
[[nodiscard]] std::optional<std::filesystem::path> find_artifact_data();

/// @brief `options.data_dir` or find_artifact_data(). @throws InvalidArgument naming what is missing.
[[nodiscard]] std::filesystem::path experiment_data_dir(const ExperimentOptions& options);

/**
 * @brief The Helios ("saturn") workload of the paper: the artifact ships its first trace only inside
 * `workloads/scale/scale_2x/workload-1.csv`, where every job appears twice in a row; keeping every other row gives
 * back the 160-job trace `saturn/workload-1.csv` of the artifact (same times, models, GPU counts and batch sizes).
 * @throws InvalidArgument when the file is missing or its rows are not pairs of identical jobs.
 */
[[nodiscard]] Workload helios_workload(const std::filesystem::path& data_dir);

/**
 * @brief Simulates every policy on every workload (on `options.threads` threads), with finish-time fairness and
 * metrics, in the order of `policies`. Progress goes to `options.out`.
 */
[[nodiscard]] std::vector<PolicyRuns> run_policies(const std::vector<std::string>& policies, const SimCluster& cluster,
                                                   const ApplicationSet& apps, const std::vector<Workload>& workloads,
                                                   const ExperimentOptions& options, const SimOptions& sim = {});

/// @brief One setting of an experiment: a policy with options on a cluster, its ground truths and workloads.
struct ExperimentVariant {
  std::string label;      ///< how the experiment names it (e.g. "p=-0.5"); the PolicyRuns' policy field
  std::string policy;     ///< registered policy
  PolicyOptions options;  ///< its options
  std::shared_ptr<const SimCluster> cluster;
  std::shared_ptr<const ApplicationSet> apps;
  std::vector<std::shared_ptr<const Workload>> workloads;
  SimOptions sim;
};

/**
 * @brief Runs every variant on each of its workloads as one batch on the thread pool of sim/runner.hpp
 * (`options.threads` at once; the same results for any count), with finish-time fairness and metrics: one
 * PolicyRuns per variant, in order, named by its label.
 */
[[nodiscard]] std::vector<PolicyRuns> run_variants(const std::vector<ExperimentVariant>& variants,
                                                   const ExperimentOptions& options);

/// @brief The workloads as shared, read-only inputs of ExperimentVariant.
[[nodiscard]] std::vector<std::shared_ptr<const Workload>> share_workloads(const std::vector<Workload>& workloads);

/// @brief A paper value beside ours: "ours (paper, ±x %)".
[[nodiscard]] std::string versus(double ours, double paper, int precision = 2);

}  // namespace sia::sim
