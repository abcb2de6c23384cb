#pragma once
/// @file sim/cluster.hpp
/// @brief Simulated clusters: the paper's presets (§4.3), `--scale K`, and cluster JSON files.

#include <sia/cluster.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace sia::sim {

/// @brief One GPU type of a simulated cluster.
struct SimGpuType {
  std::string name;       ///< name used in logs and by the round (e.g. "aws", "rtx", "dgx-ext")
  std::string profile;    ///< profile suffix in the artifact (`placements-<profile>.csv`); usually = name
  int nodes = 0;          ///< node count
  int gpus_per_node = 0;  ///< GPUs per node
  /// Largest node count a job may span on this type: the reference caps its configuration set by
  /// the largest profiled node count (`cluster_max_physical_nnodes`, reference §3), because
  /// ground truth does not extend beyond it.
  int max_job_nodes = 0;
};

/// @brief A simulated cluster, GPU types in "cluster order" (ties and projections follow it).
struct SimCluster {
  std::string name;
  std::vector<SimGpuType> types;

  /// Summed in long long, so that it cannot wrap; load_cluster(), parse_cluster_json() and
  /// cluster_preset() refuse clusters of more than INT_MAX GPUs (the rounds count in int).
  [[nodiscard]] long long total_gpus() const noexcept;
  [[nodiscard]] int type_gpus(int t) const noexcept;
  [[nodiscard]] int type_index(std::string_view name) const noexcept;
  /// The cluster as the round sees it.
  [[nodiscard]] ClusterSpec spec() const;
};

/// @brief Largest profiled node count per profile suffix (reference `cluster_max_physical_nnodes`).
[[nodiscard]] int default_max_job_nodes(std::string_view profile) noexcept;

/// @brief Names of the built-in presets.
[[nodiscard]] std::vector<std::string> cluster_preset_names();

/**
 * @brief A built-in cluster: `paper-heterogeneous` (6×4 aws T4, 2×8 dgx-ext A100, 3×8 rtx; 64 GPUs,
 * in the reference's cluster order aws, dgx-ext, rtx), `paper-homogeneous` (16×4 aws),
 * `paper-physical` (3×8 rtx, 2×8 dgx-ext, 1×4 quad). `scale` multiplies every node count.
 * @throws InvalidArgument for an unknown name (listing the known ones) or scale < 1.
 */
[[nodiscard]] SimCluster cluster_preset(std::string_view name, int scale = 1);

/**
 * @brief Parses a cluster JSON document:
 * `{"name": "mine", "gpu_types": [{"name": "t4", "profile": "aws", "nodes": 6, "gpus_per_node": 4,
 *   "max_job_nodes": 16}, ...]}` (`profile` defaults to the name, `max_job_nodes` to the profiled maximum
 * of the profile, else the node count). `scale` multiplies node counts.
 * @throws InvalidArgument naming `source` and the field on malformed input or a cluster with no GPUs.
 */
[[nodiscard]] SimCluster parse_cluster_json(std::string_view text, std::string_view source, int scale = 1);

/// @brief `name_or_file` is a preset name or a path to a cluster JSON file.
[[nodiscard]] SimCluster load_cluster(const std::string& name_or_file, int scale = 1);

}  // namespace sia::sim
