#pragma once
/// @file placement.hpp
/// @brief The Placer (paper §3.1, §3.3): concrete nodes and GPUs for a round's allocation.
///
/// Rules (README.md, "What a round does", step 6; paper §3.1):
///  - a single-node configuration (1, g) is placed on one node;
///  - a multi-node configuration (n, n·s), where s is the largest power of two <= the node size
///    (the largest virtual node), takes s GPUs on each of n distinct nodes; no two distributed
///    jobs ever share a node with whole shares (a node holds at most one virtual node of size s,
///    so this is also what the configuration set assumes; a rigid job's remainder, below, is a
///    single-node item);
///  - failed nodes (ClusterSpec::down) are never used; jobs currently on them are re-placed;
///  - a job whose configuration is unchanged keeps exactly its GPUs when its current placement is
///    known and follows the rules; a job whose size changes prefers the nodes (and GPUs) it had;
///  - if the kept jobs fragment the cluster so much that the new allocation does not fit, the
///    fewest possible kept jobs are evicted (moved) — exact search on small instances, a targeted
///    greedy with pruning on large ones; if even that cannot fit the allocation (it exceeds the
///    configuration set's capacity rows), the fewest jobs are dropped (greedy).
///
/// Reserved GPUs (ClusterSpec::reserved): sia is not told where they are, so the Placer chooses
/// them after the jobs, filling the smallest free holes first (fewest free GPUs on a node first,
/// then lowest node index and GPU id) so that whole nodes stay free. They are reported in
/// PlacementResult::reserved; a caller whose reservations sit on known GPUs should mark those
/// nodes down instead.
///
/// Rigid jobs may use fewer GPUs than their configuration (the footprint): a single-node one is
/// placed in a free power-of-two block of the footprint's size and leaves the rest of it to
/// smaller jobs; a multi-node one takes s GPUs on each of n − 1 nodes and its remainder on one
/// more node, placed as a single-node item of the next power of two (it may share that node with
/// other jobs, distributed ones included; on nodes larger than s, when no other node has room, a
/// node of its own: the job then spans n − 1 nodes, and may keep that placement). This is what the
/// capacity rows charge (rigid_row_usage in
/// configuration_set.hpp), so every allocation meeting them fits.
///
/// Everything is deterministic: the same input gives the same placement.

#include <sia/allocation.hpp>
#include <sia/cluster.hpp>
#include <sia/configuration.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sia {

/// @brief One job as the Placer sees it.
struct PlacementRequest {
  std::string job;                           ///< job id (used in error messages)
  std::optional<ConfigurationSpec> config;   ///< new configuration; empty = no GPUs this round
  int gpus = 0;                              ///< GPUs used (<= config->gpus); 0 = config->gpus
  std::optional<CurrentAllocation> current;  ///< what the job holds now (placement may be empty)
};

/// @brief What happened to one job's GPUs.
enum class PlacementStatus {
  unallocated,  ///< no configuration: the job holds nothing
  kept,         ///< exactly the GPUs it held before
  placed,       ///< new or changed configuration (or unknown/invalid previous placement): placed
  evicted,      ///< unchanged configuration, but moved to make room (fragmentation)
  dropped,      ///< could not be placed at all: the allocation exceeds the cluster's capacity
};

/// The decision's name of a status (`placement_status` in sia_allocate's output, Python's `JobDecision`).
[[nodiscard]] constexpr std::string_view to_string(PlacementStatus s) noexcept {
  switch (s) {
    case PlacementStatus::unallocated:
      return "unallocated";
    case PlacementStatus::kept:
      return "kept";
    case PlacementStatus::placed:
      return "placed";
    case PlacementStatus::evicted:
      return "evicted";
    case PlacementStatus::dropped:
      return "dropped";
  }
  return "placed";
}

/// @brief Tuning of the Placer.
struct PlacementOptions {
  /// Upper bound on the number of eviction sets the exact minimum-eviction search may evaluate
  /// before settling for the greedy result (which is minimal by inclusion, not always by size).
  std::size_t exact_eviction_budget = 20000;
};

/// @brief The placement of a round.
struct PlacementResult {
  std::vector<std::vector<NodeShare>> placements;  ///< per request, sorted by node; GPU ids sorted
  std::vector<PlacementStatus> status;             ///< per request
  std::vector<std::size_t> evicted;                ///< requests with status evicted, ascending
  std::vector<std::size_t> dropped;                ///< requests with status dropped, ascending
  std::vector<std::vector<NodeShare>> reserved;    ///< per type: GPUs set aside for reservations
};

/**
 * @brief Places an allocation on the cluster.
 *
 * Node indices are per GPU type (0..nodes-1, names via ClusterSpec::node_name). Current
 * placements may omit GPU ids (NodeShare::gpu_ids empty): they are then taken as the lowest
 * GPU ids of the node not named by any other job, in request order.
 *
 * @throws InvalidArgument naming the job and node for bad input: a configuration outside the
 *         configuration set, a used GPU count outside 1..config->gpus, a current placement on a
 *         node or GPU that does not exist, more GPUs on a node than it has, two jobs on the same
 *         GPU, a node listed twice, or a placement whose size disagrees with its allocation.
 */
[[nodiscard]] PlacementResult place(const ClusterSpec& cluster, std::span<const PlacementRequest> requests,
                                    const PlacementOptions& options = {});

}  // namespace sia
