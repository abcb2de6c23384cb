#pragma once
// Private: the built-in experiments (one file each: experiment_<name>.cpp) and what they share.
#include <sia/sim/experiment.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace sia::sim::detail {

/// The built-in experiments in the order `sia_simulate experiment --list` shows them.
[[nodiscard]] std::vector<ExperimentInfo> builtin_experiments();

[[nodiscard]] ExperimentInfo experiment_table3();
[[nodiscard]] ExperimentInfo experiment_fig1();
[[nodiscard]] ExperimentInfo experiment_table4();
[[nodiscard]] ExperimentInfo experiment_fig6();
[[nodiscard]] ExperimentInfo experiment_fig7();
[[nodiscard]] ExperimentInfo experiment_fig8();
[[nodiscard]] ExperimentInfo experiment_fig9();
[[nodiscard]] ExperimentInfo experiment_round_time();
[[nodiscard]] ExperimentInfo experiment_fig10();
[[nodiscard]] ExperimentInfo experiment_fig11();
[[nodiscard]] ExperimentInfo experiment_profiling();
[[nodiscard]] ExperimentInfo experiment_hybrid();
[[nodiscard]] ExperimentInfo experiment_tenants();

/// One curve of a line chart.
struct LineSeries {
  std::string name;
  std::vector<double> x, y;
  bool points_only = false;
};

/// Writes `<stem>.dat`, `<stem>.gp` and (with gnuplot) `<stem>.png`: one line per series. Returns the files.
std::vector<std::filesystem::path> write_line_chart(const std::filesystem::path& dir, const std::string& stem,
                                                    const std::string& title, const std::string& xlabel,
                                                    const std::string& ylabel, const std::vector<LineSeries>& series,
                                                    bool logx = false, bool logy = false);

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

/// Runs gnuplot on `script` without a shell (plot.hpp); true when it succeeded, otherwise a warning naming why
/// (gnuplot missing or failing) goes to standard error. The .dat/.gp files stay either way.
bool run_gnuplot(const std::filesystem::path& script);

/// The experiment's policies: `options.policies` when given, else `defaults`.
[[nodiscard]] std::vector<std::string> experiment_policies(const ExperimentOptions& options,
                                                           std::vector<std::string> defaults);

/// The first `options.max_workloads` workloads (all when 0).
void limit_workloads(std::vector<Workload>& workloads, const ExperimentOptions& options);

}  // namespace sia::sim::detail
