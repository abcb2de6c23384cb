#pragma once
// Private: the built-in experiments (one file each: experiment_<name>.cpp) and what they share.
#include <sia/sim/experiment.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace sia::sim::detail {

/// The built-in experiments in the order `sia_simulate experiment --list` shows them.
[[nodiscard]] std::vector<ExperimentInfo> builtin_experiments();

[[nodiscard]] ExperimentInfo experiment_table4();
[[nodiscard]] ExperimentInfo experiment_fig8();
[[nodiscard]] ExperimentInfo experiment_round_time();

/// One panel of a comparison bar chart: our value and the paper's for every label.
struct BarPanel {
  std::string title, ylabel;
  std::vector<double> ours, paper;  ///< one per label; a NaN paper value is drawn as 0 (not published)
};

/**
 * Writes `<stem>.dat`, `<stem>.gp` and (with gnuplot) `<stem>.png` into `dir`: one clustered bar panel per
 * BarPanel, "this simulator" beside "paper" for each label. Returns the files written.
 */
std::vector<std::filesystem::path> write_comparison_chart(const std::filesystem::path& dir, const std::string& stem,
                                                          const std::string& title,
                                                          const std::vector<std::string>& labels,
                                                          const std::vector<BarPanel>& panels);

/// Writes a workload as CSV (`name,time,application,num_replicas,batch_size[,category]`).
void write_workload_csv(const std::filesystem::path& file, const Workload& workload);

/// Runs gnuplot on `script` (true when it succeeded; false when gnuplot is missing or failed).
bool run_gnuplot(const std::filesystem::path& script);

/// The experiment's policies: `options.policies` when given, else `defaults`.
[[nodiscard]] std::vector<std::string> experiment_policies(const ExperimentOptions& options,
                                                           std::vector<std::string> defaults);

/// The first `options.max_workloads` workloads (all when 0).
void limit_workloads(std::vector<Workload>& workloads, const ExperimentOptions& options);

}  // namespace sia::sim::detail
