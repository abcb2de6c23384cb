#pragma once
/// @file valid_configs.hpp
/// @brief Per-job restriction of the configuration set (product.md §2 step 6).

#include <sia/concepts/job.hpp>
#include <sia/configuration_set.hpp>

#include <algorithm>
#include <climits>
#include <optional>
#include <vector>

namespace sia {

/**
 * @brief The count limits of one job, as the configuration set sees them.
 *
 * - `min_gpus` / `max_gpus`: the job's bounds (min >= 1, max >= min).
 * - `kind`: rigid jobs take exactly `min_gpus` (== `max_gpus`) GPUs; hybrid jobs take multiples of
 *   `pipeline_size` (at least one pipeline); adaptive and strong-scaling jobs any count in bounds.
 * - `max_gpus_ever` drives the 2x scale-up rule: absent = rule off; 0 = never ran, so only its
 *   minimum; k > 0 = at most max(2k, minimum). Rigid jobs ignore it (their count is fixed).
 */
struct JobLimits {
  int min_gpus = 1;
  int max_gpus = INT_MAX;
  JobKind kind = JobKind::adaptive;
  int pipeline_size = 1;
  std::optional<int> max_gpus_ever;
};

/// @brief A configuration a job may take: index into ConfigurationSet::configs, and the GPUs the
/// job uses on it (fewer than the configuration's GPUs only for a rigid job's footprint).
struct ValidConfig {
  int config = 0;
  int gpus = 0;
  friend bool operator==(const ValidConfig&, const ValidConfig&) = default;
};

/**
 * @brief The smallest GPU count the job may run with: its normalisation constant Nmin (product.md
 * §2 step 1). Rigid: its count; hybrid: the smallest multiple of P that is >= max(min_gpus, P);
 * otherwise min_gpus. Assumes validated limits (min >= 1, P >= 1).
 */
[[nodiscard]] inline int effective_min_gpus(const JobLimits& l) noexcept {
  if (l.kind == JobKind::hybrid) {
    const long long p = std::max(1, l.pipeline_size);
    const long long m = std::max<long long>(l.min_gpus, p);
    const long long r = (m + p - 1) / p * p;
    return r > INT_MAX ? INT_MAX : static_cast<int>(r);
  }
  return l.min_gpus;
}

/// @brief The largest GPU count the job may run with (bounds and the 2x rule). May be smaller
/// than effective_min_gpus() when nothing is allowed (e.g. max_gpus below one pipeline).
[[nodiscard]] inline int effective_max_gpus(const JobLimits& l) noexcept {
  if (l.kind == JobKind::rigid) return l.min_gpus;
  long long hi = l.max_gpus;
  if (l.max_gpus_ever) {
    const int nmin = effective_min_gpus(l);
    const long long cap = *l.max_gpus_ever <= 0 ? nmin : std::max<long long>(2LL * *l.max_gpus_ever, nmin);
    hi = std::min(hi, cap);
  }
  return static_cast<int>(hi);
}

/**
 * @brief The configurations of `set` that a job with limits `l` may take (before goodputs: a
 * goodput of 0 further removes a configuration).
 *
 * Rigid jobs get at most one configuration per GPU type: the one whose size equals their count
 * or, when the count is not a configuration size (e.g. 3 GPUs, or 12 GPUs on 8-GPU nodes), their
 * *footprint*: the smallest configuration of that type with at least that many GPUs. The job
 * uses `count` GPUs, the footprint's GPUs are what it blocks (a partial node is never shared
 * with a whole-node shape, see CapacityRow).
 */
[[nodiscard]] inline std::vector<ValidConfig> valid_configs(const ConfigurationSet& set, const JobLimits& l) {
  std::vector<ValidConfig> out;
  const int lo = effective_min_gpus(l);
  const int hi = effective_max_gpus(l);
  if (hi < lo) return out;
  const int p = std::max(1, l.pipeline_size);
  // configs are grouped by type (first_config) and strictly ascending in GPUs within a type:
  // binary-search each type's block instead of scanning the thousands of shapes of a large
  // cluster for every job.
  const auto& cs = set.configs;
  for (std::size_t t = 0; t + 1 < set.first_config.size(); ++t) {
    if (l.kind == JobKind::rigid) {
      // The shape of the count, or the footprint: the smallest shape with at least that many.
      if (const auto c = set.find(static_cast<int>(t), lo, CountMatch::footprint)) out.push_back(ValidConfig{*c, lo});
      continue;
    }
    const auto block_begin = cs.begin() + set.first_config[t];
    const auto block_end = cs.begin() + set.first_config[t + 1];
    auto it =
        std::lower_bound(block_begin, block_end, lo, [](const ConfigurationSpec& c, int g) { return c.gpus < g; });
    for (; it != block_end && it->gpus <= hi; ++it)
      if (l.kind != JobKind::hybrid || it->gpus % p == 0)
        out.push_back(ValidConfig{static_cast<int>(it - cs.begin()), it->gpus});
  }
  return out;
}

}  // namespace sia
