// Current configurations and allocations lost to failed nodes (see include/sia/lost_allocations.hpp).
// The count -> configuration rule itself lives in configuration_set.cpp (held_configuration).
#include <sia/lost_allocations.hpp>

#include <algorithm>

namespace sia {
namespace {

std::optional<int> rigid_count(const JobSpec& job) {
  return job.kind() == JobKind::rigid ? std::optional<int>(job.min_gpus()) : std::nullopt;
}

}  // namespace

std::optional<int> current_configuration(const ConfigurationSet& set, const JobSpec& job) {
  if (!job.current()) return std::nullopt;
  return set.find_held(job.current()->type, job.current()->gpus, rigid_count(job));
}

std::vector<std::string> forget_lost_allocations(const ClusterSpec& cluster, std::span<JobSpec> jobs) {
  std::vector<std::string> forgotten;
  const auto& down = cluster.down;
  if (std::all_of(down.begin(), down.end(), [](const auto& d) { return d.empty(); })) return forgotten;
  for (JobSpec& job : jobs) {
    if (!job.current()) continue;
    const CurrentAllocation& cur = *job.current();
    if (cur.type < 0 || cur.type >= cluster.num_types()) continue;  // the round reports it
    // Arithmetic on the type's shape: no configuration set is built here (the round builds it once).
    const auto t = static_cast<std::size_t>(cur.type);
    const int failed = t < down.size() ? static_cast<int>(down[t].size()) : 0;
    const auto& g = cluster.types[t];
    if (held_configuration(cur.type, largest_virtual_node(g.gpus_per_node()), g.num_nodes() - failed, cur.gpus,
                           rigid_count(job)))
      continue;
    job.current(std::nullopt);
    forgotten.push_back(job.id());
  }
  return forgotten;
}

}  // namespace sia
