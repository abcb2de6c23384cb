#pragma once
// Private to the library: the Placer (placement.hpp) for a caller that already holds every job's
// current allocation, so that the requests need not carry copies of them.
#include <sia/allocation.hpp>
#include <sia/cluster.hpp>
#include <sia/placement.hpp>

#include <span>

namespace sia::detail {

/**
 * @brief place() with each job's current allocation given by pointer: `held[j]` (null: none) stands
 * for `requests[j].current`, which is not read. A round's requests would otherwise copy every
 * job's placement (a vector of shares, each with its GPU ids: allocations per job, 20,000 jobs)
 * only for the Placer to read it. Same result as place() with those allocations in the requests.
 * @throws InvalidArgument as place(), and when `held` and `requests` differ in length.
 */
[[nodiscard]] PlacementResult place_held(const ClusterSpec& cluster, std::span<const PlacementRequest> requests,
                                         std::span<const CurrentAllocation* const> held,
                                         const PlacementOptions& options = {});

}  // namespace sia::detail
