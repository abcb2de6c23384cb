#pragma once
/// @file configuration_set.hpp
/// @brief The cluster's configuration set (paper §3.3) and the capacity rows of the round.

#include <sia/cluster.hpp>
#include <sia/configuration.hpp>

#include <vector>

namespace sia {

/**
 * @brief One capacity row of the round: for GPU type `type`, the GPUs of chosen configurations
 * counted in *items* of at least `min_item_gpus` GPUs must not exceed `capacity`.
 *
 * A single-node configuration (1, g) is one item of g GPUs; a multi-node configuration (n, n·s)
 * is n items of s GPUs (whole virtual nodes). With every node a power of two of the same size
 * there is one row per type (min_item_gpus = 1, capacity = free GPUs). Node sizes that are not
 * powers of two become virtual nodes (binary decomposition: 6 = 4 + 2), and one extra row per
 * distinct virtual-node size makes the rows exactly strong enough for every allocation that meets
 * them to be placeable (power-of-two items into power-of-two bins: first-fit decreasing succeeds
 * iff, for every threshold h, the items of size >= h fit into the bins of size >= h).
 */
struct CapacityRow {
  int type = 0;
  int min_item_gpus = 1;
  int capacity = 0;
};

/// @brief All configurations of a cluster and the capacity rows that bound them.
struct ConfigurationSet {
  std::vector<Config> configs;         ///< grouped by type, in cluster type order
  std::vector<CapacityRow> rows;       ///< capacity rows (see CapacityRow)
  std::vector<int> free_gpus;          ///< per type: GPUs on up nodes minus reserved (>= 0)
  std::vector<int> vnode_size;         ///< per type: largest virtual node size (0 if none)

  /// GPUs that configuration `c` counts in row `r` (0 if the row does not apply).
  [[nodiscard]] int row_usage(const CapacityRow& r, const Config& c) const noexcept;
};

/**
 * @brief Builds the configuration set: per type, single-node shapes (1, 2^k) for 2^k up to the
 * largest virtual node size, and multi-node shapes (n, n·s) of whole largest virtual nodes for
 * 2 <= n <= their count. Failed nodes and reservations are taken into account.
 * @throws InvalidArgument for an empty cluster, negative counts or duplicate type names.
 */
[[nodiscard]] ConfigurationSet make_configuration_set(const ClusterSpec& cluster);

}  // namespace sia
