// The per-job rows one round leaves to the next (round_cache.hpp).
#include "core/round_cache.hpp"

#include <algorithm>

namespace sia::detail {
namespace {

// The largest count effective_max_gpus() gives a job that is neither rigid nor hybrid (the same on
// every type: its minimum is min_gpus): max_gpus, capped by the 2x rule when max_gpus_ever is set.
long long capped_max_gpus(const LimitsKey& k) noexcept {
  long long hi = k.max_gpus;
  if (k.has_max_gpus_ever) {
    const long long nmin = k.min_gpus;
    hi = std::min(hi, k.max_gpus_ever <= 0 ? nmin : std::max(2LL * k.max_gpus_ever, nmin));
  }
  return hi;
}

// Does max_gpus_ever leave the same configurations to two jobs whose other limits are equal? It
// enters a job's rows only through effective_max_gpus() (valid_configs): a rigid job ignores it, a
// hybrid one with max_pipelines_ever too; for the others only the cap it makes counts. (A running
// job's max_gpus_ever grows with its largest allocation: most changes move neither the cap nor its
// rows, which were then asked again, 800 jobs a round in the bench's warm 20,000-job rounds.)
bool same_max_gpus_ever(const LimitsKey& a, const LimitsKey& b) noexcept {
  if (a.has_max_gpus_ever == b.has_max_gpus_ever && (!a.has_max_gpus_ever || a.max_gpus_ever == b.max_gpus_ever))
    return true;
  switch (static_cast<JobKind>(a.kind)) {
    case JobKind::rigid:
      return true;
    case JobKind::hybrid:
      return a.has_max_pipelines_ever;  // (equal in both, compared before)
    default:
      return capped_max_gpus(a) == capped_max_gpus(b);
  }
}

bool same_limits(const LimitsKey& a, std::span<const int> a_sizes, const LimitsKey& b,
                 std::span<const int> b_sizes) noexcept {
  return a.min_gpus == b.min_gpus && a.max_gpus == b.max_gpus && a.kind == b.kind &&
         a.pipeline_size == b.pipeline_size && a.has_max_pipelines_ever == b.has_max_pipelines_ever &&
         (!a.has_max_pipelines_ever || a.max_pipelines_ever == b.max_pipelines_ever) && same_max_gpus_ever(a, b) &&
         std::equal(a_sizes.begin(), a_sizes.end(), b_sizes.begin(), b_sizes.end());
}

bool same_rows(const std::vector<CapacityRow>& a, const std::vector<CapacityRow>& b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t r = 0; r < a.size(); ++r)
    if (a[r].type != b[r].type || a[r].min_item_gpus != b[r].min_item_gpus || a[r].capacity != b[r].capacity)
      return false;
  return true;
}

}  // namespace

bool same_row_inputs(const CachedJob& a, std::span<const int> a_sizes, const CachedJob& b,
                     std::span<const int> b_sizes) noexcept {
  // The configuration a job holds changes its row only when it must keep it (non-preemptible).
  return a.model != nullptr && a.model == b.model && a.preemptible == b.preemptible &&
         (a.preemptible || (a.current == b.current && a.current_gpus == b.current_gpus)) &&
         same_limits(a.limits, a_sizes, b.limits, b_sizes);
}

bool RoundCache::same_cluster(const ClusterSpec& cluster, const ConfigurationSet& s) const {
  return types == cluster.types && set.configs == s.configs && same_rows(set.rows, s.rows) &&
         set.free_gpus == s.free_gpus && set.vnode_size == s.vnode_size && set.up_nodes == s.up_nodes &&
         set.first_config == s.first_config;
}

const CachedJob* RoundCache::find(std::string_view id, std::size_t hash, std::size_t& position) const {
  const auto id_of = [this](std::size_t k) { return this->id_of(jobs[k]); };
  std::call_once(indexed_, [&] {
    by_id_.reserve(jobs.size(), id_of);
    for (std::size_t k = 0; k < jobs.size(); ++k)
      by_id_.insert(id_hashes[k], k, id_of);  // (a repeated id: the first stays)
  });
  const std::size_t k = by_id_.find(id, hash, id_of);
  if (k == IdTable::npos) return nullptr;
  position = k;
  return &jobs[k];
}

}  // namespace sia::detail
