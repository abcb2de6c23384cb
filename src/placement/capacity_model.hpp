#pragma once
/// @file capacity_model.hpp
/// @brief Exact feasibility test of one GPU type's placement problem, and the eviction search.
///
/// Why a closed-form test exists: every item the Placer packs is a power of two (single-node
/// configurations are (1, 2^k) with 2^k <= s; multi-node ones take s = 2^m GPUs on each of n
/// distinct nodes). A node with f free GPUs is, for power-of-two items, the same as bins of the
/// sizes of f's binary digits. Power-of-two items fit into power-of-two bins iff, for every
/// threshold h, the items of size >= h fit into the bins of size >= h; for a node that is
/// f - f mod h GPUs. Distributed shares must go to "eligible" nodes (up, no kept distributed
/// job, f >= s), one share per node; taking s from any eligible node lowers every threshold
/// capacity (h <= s) by exactly s, so which eligible nodes they take does not matter for the
/// single-node jobs. Hence, with D distributed shares to place, single-node footprints I_h
/// (items >= h) and reserved GPUs r (items of size 1):
///   feasible  <=>  eligible >= D  and  for all h = 1, 2, 4, ..., s:  I_h + [h = 1] r <= C_h - s D
/// where C_h = sum over up nodes of (f - f mod h). Placing single-node jobs in decreasing size
/// order on ANY node with room keeps the condition true (an item of size g lowers C_h by exactly
/// g for h <= g, as it lowers I_h), so the construction never gets stuck once this test passes.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace sia::detail {

/// @brief A job of one GPU type as the capacity model sees it.
///
/// A rigid job may use fewer GPUs than its configuration: a single-node one uses `used` < g GPUs
/// of a slot of g; a multi-node one takes n − 1 whole shares and a tail of `used` GPUs in a slot
/// of `slot` (a power of two < s). Such a slot counts `used + ((slot − used) mod h)` at threshold
/// h <= slot (the rest of the slot serves smaller items: rigid_row_usage in configuration_set.hpp),
/// and placing it on any node with at least `slot` free GPUs lowers C_h by no more than that, so
/// the construction argument above holds unchanged.
struct ModelJob {
  bool distributed = false;  ///< multi-node configuration
  int nodes = 1;             ///< whole shares of s GPUs to place (distributed jobs)
  int footprint = 0;         ///< single-node: g (power of two); distributed: n·s
  int slot = 0;              ///< the single-node item: g, or a distributed job's tail slot (0: none)
  int used = 0;              ///< GPUs the item uses (< slot for a rigid job's remainder)
  /// (node, GPUs) currently held (keep candidates only): a view of storage the caller keeps (a
  /// vector per job cost an allocation per job, 20,000 per round at 100,000 GPUs).
  std::span<const std::pair<int, int>> held;
};

/// @brief The demand of many jobs at once: the sums add_demand(j) adds for each (integers, so the
/// same whatever the order). One pass over a type's thousands of jobs, whose sums then serve both
/// the whole allocation's model and the kept jobs' (plan_evictions), instead of a pass per model.
struct DemandSum {
  std::array<long long, 32> items{};  ///< per threshold h = 2^l (s is an int: l < 32)
  long long shares = 0;               ///< whole shares of the distributed jobs (D)
  void add(const ModelJob& j, int sign = +1);
  /// add(j) for every job of `jobs`: the same sums, with a job whose item fills its power-of-two
  /// slot counted once in its slot's class (the thresholds' sums then follow from the classes' in
  /// one pass), not once per threshold (thousands of jobs per type, a loop each).
  void add(std::span<const ModelJob> jobs);
};

/// @brief Incrementally maintained feasibility test (see file comment).
class CapacityModel {
 public:
  /// `node_size[i]` GPUs on node i, or -1 when the node is down. `s` = largest virtual node.
  CapacityModel(int s, const std::vector<int>& node_size, long long reserved);

  /// Occupies the GPUs `j` holds (j is kept in place).
  void add_kept(const ModelJob& j, int sign = +1);
  /// add_kept(j) for every job of `jobs` in order, the same model: the nodes' free GPUs first, then
  /// the thresholds' capacities once from them (thousands of kept jobs per type each updated every
  /// threshold twice).
  void add_all_kept(std::span<const ModelJob> jobs);
  /// Adds (sign = +1) or removes (sign = -1) `j`'s footprint to the demand still to be placed.
  void add_demand(const ModelJob& j, int sign = +1);
  /// add_demand(j, sign) for every job summed in `d`.
  void add_demand(const DemandSum& d, int sign = +1);
  /// Kept -> to be re-placed.
  void evict(const ModelJob& j) {
    add_kept(j, -1);
    add_demand(j, +1);
  }
  /// Inverse of evict.
  void unevict(const ModelJob& j) {
    add_demand(j, -1);
    add_kept(j, +1);
  }

  [[nodiscard]] bool feasible() const noexcept;
  /// How far from feasible, in GPUs (0 iff feasible); used to choose what to drop.
  [[nodiscard]] long long deficit() const noexcept;
  /// Largest threshold h (power of two) whose condition fails, 0 if none.
  [[nodiscard]] int largest_violated_level() const noexcept;

  [[nodiscard]] int s() const noexcept { return s_; }
  [[nodiscard]] int free(int node) const noexcept { return free_[static_cast<std::size_t>(node)]; }
  [[nodiscard]] bool up(int node) const noexcept { return free_[static_cast<std::size_t>(node)] >= 0; }
  [[nodiscard]] int kept_distributed(int node) const noexcept { return dist_[static_cast<std::size_t>(node)]; }
  [[nodiscard]] int num_nodes() const noexcept { return static_cast<int>(free_.size()); }
  [[nodiscard]] long long eligible() const noexcept { return eligible_; }
  [[nodiscard]] long long distributed_demand() const noexcept { return shares_; }
  [[nodiscard]] long long conflicts() const noexcept { return conflicts_; }
  /// Thresholds h = 2^0 .. 2^(levels() - 1) = s, and each one's C_h and I_h (reserved GPUs included at h = 1).
  [[nodiscard]] int levels() const noexcept { return levels_; }
  [[nodiscard]] long long capacity(int level) const noexcept { return cap_[static_cast<std::size_t>(level)]; }
  [[nodiscard]] long long items(int level) const noexcept { return items_[static_cast<std::size_t>(level)]; }

 private:
  void change_free(int node, int delta);
  void change_dist(int node, int delta);
  /// C_h, the eligible nodes and the conflicts worked out anew from the nodes' state.
  void recount();
  [[nodiscard]] bool is_eligible(std::size_t i) const noexcept { return free_[i] >= s_ && dist_[i] == 0; }

  int s_ = 0;
  int levels_ = 0;                // thresholds h = 2^0 .. 2^(levels_-1) = s
  std::vector<int> free_;         // -1 = down
  std::vector<int> dist_;         // kept distributed jobs per node
  std::vector<long long> cap_;    // C_h
  std::vector<long long> items_;  // I_h (+ reserved at h = 1)
  long long eligible_ = 0;
  long long conflicts_ = 0;
  long long shares_ = 0;  // D
};

/// @brief Outcome of the eviction search on one GPU type.
struct EvictionPlan {
  std::vector<int> evicted;             ///< candidate indices to evict (re-place), ascending
  std::vector<int> dropped_candidates;  ///< candidate indices that cannot be placed at all
  std::vector<int> dropped_movers;      ///< mover indices that cannot be placed at all
};

/**
 * @brief Chooses the fewest keep-candidates to evict (and, if the allocation cannot fit at all,
 * the movers to drop).
 *
 * `candidates` hold GPUs and would like to keep them; `movers` must be placed anew. Exact search
 * (by increasing set size, fewest GPUs then lexicographic among equals) while the number of sets
 * to test stays within `budget`; otherwise a targeted greedy (free a block on the node needing
 * the fewest evictions) followed by pruning, which is minimal by inclusion.
 */
[[nodiscard]] EvictionPlan plan_evictions(int s, const std::vector<int>& node_size, long long reserved,
                                          const std::vector<ModelJob>& candidates, const std::vector<ModelJob>& movers,
                                          std::size_t budget);

}  // namespace sia::detail
