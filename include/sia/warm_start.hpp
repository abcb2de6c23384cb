#pragma once
/// @file warm_start.hpp
/// @brief WarmStart: what one round leaves for the next to start from.

#include <memory>
#include <string>
#include <vector>

namespace sia {

namespace detail {
struct RoundCache;  // private to the library (src/core/round_cache.hpp)
}  // namespace detail

/**
 * @brief The previous round's prices (one per capacity row of the configuration set: GPU type and
 * smallest item size, see CapacityRow) and allocation (configuration per job id).
 *
 * Take it from RoundResult::warm_start and hand it to the next round in RoundOptions::warm_start
 * (sia_allocate: the decision's `"warm_start"` object, passed back as the next request's
 * `"warm_start"`). A backend that can use it (native) starts its price search from these prices
 * and tries this allocation, repaired for what changed, as its first solution: a round in which
 * few jobs changed is proven optimal after a few price evaluations. It never changes the answer
 * beyond the relative gap: rows, types and jobs it does not know are ignored, and a stale
 * allocation is only a starting point.
 */
struct WarmStart {
  /// Price of one capacity row: the marginal value of one unit of it in the previous round's LP
  /// relaxation, in the objective's own units (>= 0; larger means scarcer).
  struct RowPrice {
    std::string gpu_type;
    int min_item_gpus = 1;
    double price = 0.0;
  };
  /// The configuration a job was given (gpus = 0, empty type: none).
  struct Allocation {
    std::string job;
    std::string gpu_type;
    int nodes = 0;
    int gpus = 0;
  };
  std::vector<RowPrice> prices;
  /// Every job of the round, with or without GPUs: a job of the next round that is not listed is
  /// new, and the backend chooses its start freely. Empty: the jobs' `current` configurations
  /// are the previous allocation (what a scheduler that applied the decision reports).
  std::vector<Allocation> allocations;
  /// Opaque: what the round that made this warm start built per job (its usable configurations
  /// and utilities, keyed by everything that determines them), so that the next round rebuilds
  /// only the jobs that changed — with the same bits as building them anew. Not serialised (a warm
  /// start read back from JSON has none); null is always valid.
  std::shared_ptr<const detail::RoundCache> cache;
};

}  // namespace sia
