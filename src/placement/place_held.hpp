#pragma once
// Private to the library: the Placer (placement.hpp) for a caller that already holds every job's
// current allocation, so that the requests need not carry copies of them.
#include <sia/allocation.hpp>
#include <sia/cluster.hpp>
#include <sia/configuration.hpp>
#include <sia/placement.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>

namespace sia::detail {

/// @brief One job as a round hands it to the Placer: a PlacementRequest's configuration and GPUs,
/// without its id (named on demand: JobName) or its current allocation (by pointer).
struct PlacementTarget {
  std::optional<ConfigurationSpec> config;  ///< new configuration; empty = no GPUs this round
  int gpus = 0;                             ///< GPUs used (<= config->gpus); 0 = config->gpus
};

/// Job j's id, asked for only when an error names the job.
using JobName = std::function<std::string(std::size_t)>;

/**
 * @brief place() for a round that already holds every job's id and current allocation: the
 * requests would otherwise copy each (a 100-byte request per job, 20,000 jobs, written and read
 * back for a configuration and a GPU count; the placements' vectors of shares and ids were
 * allocations per job). `held[j]` (null: none) is job j's current allocation, `name(j)` its id.
 * Same result as place() with those ids and allocations in the requests.
 * @throws InvalidArgument as place(), and when `held` and `targets` differ in length.
 */
[[nodiscard]] PlacementResult place_held(const ClusterSpec& cluster, std::span<const PlacementTarget> targets,
                                         std::span<const CurrentAllocation* const> held, const JobName& name,
                                         const PlacementOptions& options = {});

}  // namespace sia::detail
