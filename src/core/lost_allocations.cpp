// Current configurations and allocations lost to failed nodes (see include/sia/lost_allocations.hpp).
#include <sia/error.hpp>
#include <sia/lost_allocations.hpp>

#include <algorithm>

namespace sia {

std::optional<int> current_configuration(const ConfigurationSet& set, const JobSpec& job) {
  if (!job.current()) return std::nullopt;
  const CurrentAllocation& cur = *job.current();
  // Configurations are grouped by ascending type and ascending in GPUs within a type.
  const auto& cs = set.configs;
  const auto first = std::lower_bound(cs.begin(), cs.end(), cur.type, [](const Config& c, int t) { return c.type < t; });
  const auto last = std::upper_bound(first, cs.end(), cur.type, [](int t, const Config& c) { return t < c.type; });
  const auto it = std::lower_bound(first, last, cur.gpus, [](const Config& c, int g) { return c.gpus < g; });
  if (it == last) return std::nullopt;
  if (it->gpus == cur.gpus || (job.kind() == JobKind::rigid && cur.gpus == job.min_gpus()))
    return static_cast<int>(it - cs.begin());
  return std::nullopt;
}

std::vector<std::string> forget_lost_allocations(const ClusterSpec& cluster, std::span<JobSpec> jobs) {
  std::vector<std::string> forgotten;
  const auto& down = cluster.down;
  if (std::all_of(down.begin(), down.end(), [](const auto& d) { return d.empty(); })) return forgotten;
  ConfigurationSet up;
  try {
    up = make_configuration_set(cluster);
  } catch (const InvalidArgument&) {
    return forgotten;  // e.g. reservations larger than what is left: the round reports it
  }
  for (JobSpec& job : jobs) {
    if (!job.current() || current_configuration(up, job)) continue;
    job.current(std::nullopt);
    forgotten.push_back(job.id());
  }
  return forgotten;
}

}  // namespace sia
