#pragma once
/// @file lost_allocations.hpp
/// @brief Which configuration a running job occupies, and forgetting allocations that failed nodes
/// took away — scheduling rules every caller of the round needs before a round (sia_allocate's
/// request reader calls them; a scheduler keeping its own round state calls them too).

#include <sia/cluster.hpp>
#include <sia/configuration_set.hpp>
#include <sia/job_spec.hpp>

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sia {

/**
 * @brief Index in `set` of the configuration `job.current()` occupies: the configuration of its GPU
 * type with its GPU count or, for a rigid job reporting its count (min_gpus) where that count is no
 * configuration size, its footprint (the smallest configuration of that type with at least that many
 * GPUs, valid_configs.hpp). std::nullopt when the job holds nothing or the configuration no longer
 * exists (e.g. a node of a 2-node job failed).
 */
[[nodiscard]] std::optional<int> current_configuration(const ConfigurationSet& set, const JobSpec& job);

/**
 * @brief Clears `current` of every job whose configuration no longer exists because nodes of its
 * type failed (ClusterSpec::down): such a job has lost its GPUs and restarts like a waiting job (a
 * non-preemptible one must get GPUs again) instead of making the round invalid. Jobs whose
 * configuration still exists keep it (placement moves them off failed nodes). Does nothing when no
 * node is down, or when the configuration set cannot be built (the round reports that).
 * @return the ids of the jobs whose allocation was forgotten, in input order.
 */
std::vector<std::string> forget_lost_allocations(const ClusterSpec& cluster, std::span<JobSpec> jobs);

}  // namespace sia
