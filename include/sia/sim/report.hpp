#pragma once
/// @file sim/report.hpp
/// @brief Reports of simulations: the comparison table, the `--json` document, and the `--out` files
/// (per-job CSV, per-round JSON lines, gnuplot PNGs).

#include <sia/sim/metrics.hpp>

#include <filesystem>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace sia::sim {

/// @brief Runs of one policy over the workloads, with their metrics and pooled aggregate.
struct PolicyRuns {
  std::string policy;
  std::vector<SimResult> runs;
  std::vector<RunMetrics> metrics;  ///< one per run
  RunMetrics aggregate;
};

/// @brief `{"runs":[...],"aggregate":[...]}` (field names of the simulator issue).
[[nodiscard]] std::string report_json(const std::vector<PolicyRuns>& all);

/// @brief Human-readable table: one row per policy (and per workload when `per_workload`).
void print_table(std::ostream& out, const std::vector<PolicyRuns>& all, bool per_workload);

/**
 * @brief GPU-hours per job by model and GPU type (paper Fig. 6): one row per policy and model, one column per
 * GPU type plus the total, pooled over the policy's runs.
 */
void print_gpu_hours_by_model(std::ostream& out, const std::vector<PolicyRuns>& all, const SimCluster& cluster);

/// @brief Pooled GPU-hours per job: model -> per-type values (cluster order) followed by the total.
[[nodiscard]] std::map<std::string, std::vector<double>> gpu_hours_by_model(const PolicyRuns& runs,
                                                                            std::size_t num_types);

/**
 * @brief Writes `jobs-<policy>-<workload>.csv`, `rounds-<policy>-<workload>.jsonl`, `summary.json`, the plot data
 * and scripts `jct_cdf.{dat,gp}` (pooled JCT CDF per policy) and `timeline-<policy>-<workload>.{dat,gp}` (GPUs per
 * job over time, by type) into `dir`, and the PNGs when gnuplot runs (plot.hpp). Returns the written files; why a
 * PNG is missing (no gnuplot, gnuplot failed) goes to `warnings` when given.
 */
std::vector<std::filesystem::path> write_outputs(const std::filesystem::path& dir, const std::vector<PolicyRuns>& all,
                                                 const SimCluster& cluster,
                                                 std::vector<std::string>* warnings = nullptr);

}  // namespace sia::sim
