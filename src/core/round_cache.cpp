// The per-job rows one round leaves to the next (round_cache.hpp).
#include "core/round_cache.hpp"

#include <bit>

namespace sia::detail {
namespace {

bool same_limits(const JobLimits& a, const JobLimits& b) noexcept {
  return a.min_gpus == b.min_gpus && a.max_gpus == b.max_gpus && a.kind == b.kind &&
         a.pipeline_size == b.pipeline_size && a.max_gpus_ever == b.max_gpus_ever &&
         a.pipeline_sizes == b.pipeline_sizes && a.max_pipelines_ever == b.max_pipelines_ever;
}

bool same_rows(const std::vector<CapacityRow>& a, const std::vector<CapacityRow>& b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t r = 0; r < a.size(); ++r)
    if (a[r].type != b[r].type || a[r].min_item_gpus != b[r].min_item_gpus || a[r].capacity != b[r].capacity)
      return false;
  return true;
}

}  // namespace

bool same_row_inputs(const CachedJob& a, const CachedJob& b) noexcept {
  // The configuration a job holds changes its row only when it must keep it (non-preemptible).
  return a.model != nullptr && a.model == b.model && a.preemptible == b.preemptible &&
         (a.preemptible || (a.current == b.current && a.current_gpus == b.current_gpus)) &&
         same_limits(a.limits, b.limits);
}

bool RoundCache::same_cluster(const ClusterSpec& cluster, const ConfigurationSet& s) const {
  return types == cluster.types && set.configs == s.configs && same_rows(set.rows, s.rows) &&
         set.free_gpus == s.free_gpus && set.vnode_size == s.vnode_size && set.up_nodes == s.up_nodes &&
         set.first_config == s.first_config;
}

const CachedJob* RoundCache::find(std::string_view id, std::size_t hash, std::size_t& position) const {
  std::call_once(indexed_, [this] {
    by_id_.assign(std::bit_ceil(2 * jobs.size() + 2), Slot{});
    const std::size_t mask = by_id_.size() - 1;
    for (std::size_t k = 0; k < jobs.size(); ++k) {
      const CachedJob& j = jobs[k];
      const std::size_t h = j.hashed ? j.id_hash : hash_id(j.id);
      const auto tag = static_cast<std::uint32_t>(h >> 32);
      for (std::size_t s = h & mask;; s = (s + 1) & mask) {
        Slot& slot = by_id_[s];
        if (slot.position == 0) {
          slot = Slot{tag, static_cast<std::uint32_t>(k + 1)};
          break;
        }
        if (slot.tag == tag && jobs[slot.position - 1].id == j.id) break;  // (the first stays)
      }
    }
  });
  const std::size_t mask = by_id_.size() - 1;
  const auto tag = static_cast<std::uint32_t>(hash >> 32);
  for (std::size_t s = hash & mask;; s = (s + 1) & mask) {
    const Slot& slot = by_id_[s];
    if (slot.position == 0) return nullptr;
    if (slot.tag == tag && jobs[slot.position - 1].id == id) {
      position = slot.position - 1;
      return &jobs[position];
    }
  }
}

}  // namespace sia::detail
