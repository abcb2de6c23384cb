// Current configurations and allocations lost to failed nodes (see include/sia/lost_allocations.hpp
// and include/sia/round_state.hpp: one rule for a request's jobs and for a scheduler's round state).
// The count -> configuration rule itself lives in configuration_set.cpp (held_configuration).
#include <sia/lost_allocations.hpp>
#include <sia/round_state.hpp>

#include <algorithm>

namespace sia {
namespace {

std::optional<int> rigid_count(const JobSpec& job) {
  return job.kind() == JobKind::rigid ? std::optional<int>(job.min_gpus()) : std::nullopt;
}

bool any_down(const ClusterSpec& cluster) {
  return std::any_of(cluster.down.begin(), cluster.down.end(), [](const auto& d) { return !d.empty(); });
}

// True when `cur` names a type the cluster has but a configuration its nodes that are up no longer
// hold. Arithmetic on the type's shape: no configuration set is built here (the round builds it once).
bool configuration_gone(const ClusterSpec& cluster, const CurrentAllocation& cur, std::optional<int> rigid) {
  const auto t = static_cast<std::size_t>(cur.type);
  const int failed = t < cluster.down.size() ? static_cast<int>(cluster.down[t].size()) : 0;
  const auto& g = cluster.types[t];
  return !held_configuration(cur.type, largest_virtual_node(g.gpus_per_node()), g.num_nodes() - failed, cur.gpus,
                             rigid);
}

}  // namespace

std::optional<int> current_configuration(const ConfigurationSet& set, const JobSpec& job) {
  if (!job.current()) return std::nullopt;
  return set.find_held(job.current()->type, job.current()->gpus, rigid_count(job));
}

std::vector<std::string> forget_lost_allocations(const ClusterSpec& cluster, std::span<JobSpec> jobs) {
  std::vector<std::string> forgotten;
  if (!any_down(cluster)) return forgotten;
  for (JobSpec& job : jobs) {
    if (!job.current()) continue;
    const CurrentAllocation& cur = *job.current();
    if (cur.type < 0 || cur.type >= cluster.num_types()) continue;  // the round reports it
    if (!configuration_gone(cluster, cur, rigid_count(job))) continue;
    job.current(std::nullopt);
    forgotten.push_back(job.id());
  }
  return forgotten;
}

bool forget_lost_allocation(JobRoundState& state, const ClusterSpec& cluster) {
  if (!state.current) return false;
  const CurrentAllocation& cur = *state.current;
  // A state holds what a decision gave: a count that is a configuration size, or a rigid job's count
  // on its footprint. Matching by footprint covers both (a configuration size is its own footprint,
  // and a size that no longer fits has no larger footprint either).
  const bool gone =
      cur.type < 0 || cur.type >= cluster.num_types() || cur.gpus < 1 || configuration_gone(cluster, cur, cur.gpus);
  if (gone) state.current.reset();
  return gone;
}

}  // namespace sia
