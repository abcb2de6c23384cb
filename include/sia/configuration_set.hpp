#pragma once
/// @file configuration_set.hpp
/// @brief The cluster's configuration set (paper §3.3) and the capacity rows of the round.

#include <sia/cluster.hpp>
#include <sia/configuration.hpp>

#include <optional>
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

/// @brief How a GPU count is matched to a configuration of one GPU type.
enum class CountMatch {
  exact,      ///< the configuration with exactly that many GPUs
  footprint,  ///< the smallest configuration with at least that many GPUs (a rigid job's footprint)
};

/// @brief The largest virtual node of a node of `gpus_per_node` GPUs: the largest power of two
/// that is <= it (0 for a node without GPUs).
[[nodiscard]] int largest_virtual_node(int gpus_per_node) noexcept;

/**
 * @brief The one rule that maps a GPU count of one type to a configuration (paper §3.3).
 *
 * A type whose largest virtual node has `vnode_size` GPUs (largest_virtual_node()) and that has
 * `up_nodes` nodes up has the single-node shapes (1, 2^k) for 2^k <= vnode_size and the
 * multi-node shapes (n, n·vnode_size) for 2 <= n <= up_nodes. Within a type GPU counts are
 * distinct, so a count names at most one configuration; with CountMatch::footprint a count that
 * is no shape maps to the smallest shape holding it. Empty when no shape matches.
 */
[[nodiscard]] std::optional<ConfigurationSpec> configuration_of_count(int type, int vnode_size, int up_nodes, int gpus,
                                                                      CountMatch match) noexcept;

/**
 * @brief The configuration a job holds when it runs `gpus` GPUs of one type: the shape of that
 * count, or, for a rigid job whose fixed count (`rigid_count`, empty for other kinds) is `gpus`
 * and is no shape, its footprint (the smallest shape holding it; see valid_configs.hpp).
 */
[[nodiscard]] std::optional<ConfigurationSpec> held_configuration(int type, int vnode_size, int up_nodes, int gpus,
                                                                  std::optional<int> rigid_count) noexcept;

/**
 * @brief What a rigid job that uses `gpus` GPUs of configuration `c` counts in the capacity row of
 * threshold `h` (a power of two), on a type whose largest virtual node has `vnode_size` GPUs.
 *
 * Why: a rigid count that is no configuration size (6 on 8-GPU nodes, 10 = 8 + 2) is charged its
 * count, not its footprint, while every allocation meeting the rows stays placeable. Its pieces:
 * (n − 1) whole virtual nodes when `c` spans n >= 2 nodes, and a tail t = gpus − (n − 1)·s (the
 * whole count on one node when n = 1). A tail that is a power of two is an ordinary item. Any
 * other tail occupies a slot of F = bit_ceil(t) GPUs on one node and frees the rest of it, F − t,
 * as bins of the sizes of its binary digits (8 − 6 = 2: one 2-GPU bin). With power-of-two items
 * and bins, "items >= h fit into bins >= h for every h" is exact (see CapacityRow), and moving the
 * freed bins to the item side gives the tail the charge t + ((F − t) mod h) for h <= F, 0 above:
 * its count in row 1, F in rows h that no piece of F − t can serve. Two such tails may share a
 * node (3 + 3 on a 8-GPU node) but not when their slots do not fit together (5 + 3 is refused).
 * `gpus` >= c.gpus (or <= 0) gives the configuration's own charge.
 */
[[nodiscard]] int rigid_row_usage(int h, const ConfigurationSpec& c, int gpus, int vnode_size) noexcept;

/**
 * @brief The thresholds whose rows a rigid job using `gpus` GPUs of `c` needs beyond the set's own
 * rows, as a bit mask of the thresholds h (bit h set): those where its charge exceeds its charge
 * at h/2, i.e. h = 2b for every binary digit b of F − t (t its remainder, F its slot). Elsewhere,
 * with the capacity unchanged from h/2 to h, row h/2 implies row h. 0 for a count that is its
 * configuration's size or whose remainder is a power of two (10 = 8 + 2 on 8-GPU nodes).
 */
[[nodiscard]] unsigned rigid_thresholds(const ConfigurationSpec& c, int gpus, int vnode_size) noexcept;

/// @brief All configurations of a cluster and the capacity rows that bound them.
struct ConfigurationSet {
  std::vector<ConfigurationSpec> configs;  ///< grouped by type, in cluster type order
  std::vector<CapacityRow> rows;           ///< capacity rows (see CapacityRow)
  std::vector<int> free_gpus;              ///< per type: GPUs on up nodes minus reserved (>= 0)
  std::vector<int> vnode_size;             ///< per type: largest virtual node size (0 if none)
  std::vector<int> up_nodes;               ///< per type: nodes that are up
  std::vector<int> first_config;           ///< per type: index of its first configuration (+ one past the end)

  /// GPUs that configuration `c` counts in row `r` (0 if the row does not apply).
  [[nodiscard]] int row_usage(const CapacityRow& r, const ConfigurationSpec& c) const noexcept;
  /// GPUs that a job using `gpus` GPUs of configuration `c` counts in row `r`: row_usage(r, c)
  /// when it uses all of them; for a rigid job on its footprint, the charge of its pieces
  /// (rigid_row_usage()).
  [[nodiscard]] int row_usage(const CapacityRow& r, const ConfigurationSpec& c, int gpus) const noexcept;

  /// Adds the row of threshold `h` (a power of two <= vnode_size[type]) to the type if it does
  /// not have it (in threshold order, beside the type's other rows), with the capacity of the
  /// virtual nodes of at least h GPUs minus the reserved ones. Rows the set leaves out are implied
  /// by lower ones for whole configurations; a rigid remainder's charge can grow from h/2 to h
  /// (rigid_thresholds()), and then row h is needed.
  void add_threshold(int type, int h);
  /// add_threshold() for every h = 1, 2, ..., vnode_size[type] (all valid; most implied).
  void add_all_thresholds(int type);

  /// Index in `configs` of the configuration of `type` matching `gpus` (configuration_of_count()).
  [[nodiscard]] std::optional<int> find(int type, int gpus, CountMatch match = CountMatch::exact) const noexcept;
  /// Index in `configs` of what a job running `gpus` GPUs of `type` holds (held_configuration()).
  [[nodiscard]] std::optional<int> find_held(int type, int gpus, std::optional<int> rigid_count) const noexcept;
  /// Index in `configs` of `c`, if it is a configuration of the set.
  [[nodiscard]] std::optional<int> index_of(const ConfigurationSpec& c) const noexcept;
};

/**
 * @brief Builds the configuration set: per type, single-node shapes (1, 2^k) for 2^k up to the
 * largest virtual node size, and multi-node shapes (n, n·s) of whole largest virtual nodes for
 * 2 <= n <= their count. Failed nodes and reservations are taken into account.
 *
 * Order: by type (cluster order), then single-node shapes by size, then multi-node shapes by
 * node count; within a type GPU counts are distinct and ascending.
 *
 * Rows: for each type, a row for threshold h = 1 (all GPUs) and, when the node size is not a
 * power of two, one for each h = 2·v where v is a virtual-node size other than the largest
 * (6 = 4 + 2 gives h = 4: 4-GPU items must fit into the 4-GPU virtual nodes). The capacity of
 * a row is the GPUs of the up nodes' virtual nodes of size >= h, minus the type's reserved GPUs
 * (floored at 0). A row implied by a lower threshold (same capacity) is omitted.
 *
 * @throws InvalidArgument naming the type or field for: no GPU types, no GPUs at all, an empty
 * or duplicate type name, a negative node count, gpus_per_node < 1, absurd sizes (more than
 * 2^20 nodes, 2^16 GPUs per node or 2^26 GPUs per type), more `reserved`/`down`/`node_names`
 * entries than types, a down node index out of range or listed twice, negative reserved GPUs,
 * or more reserved GPUs than the type's up nodes hold.
 */
[[nodiscard]] ConfigurationSet make_configuration_set(const ClusterSpec& cluster);

}  // namespace sia
