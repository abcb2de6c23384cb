#pragma once
/// @file valid_configs.hpp
/// @brief Per-job restriction of the configuration set (README.md, "What a round does", step 2).

#include <sia/concepts/job.hpp>
#include <sia/configuration_set.hpp>

#include <algorithm>
#include <climits>
#include <optional>
#include <span>
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
 * - `pipeline_sizes` (hybrid jobs whose pipeline differs per GPU type, e.g. 2 A100s or 8 RTXs per
 *   pipeline; paper §5.3): the pipeline size on each type, indexed like the cluster's types; 0 = the
 *   job cannot run on that type. Empty = `pipeline_size` on every type.
 * - `max_pipelines_ever` (hybrid): the 2x rule counted in pipelines, as the reference counts
 *   replicas: a job that has run at most k pipelines may take up to max(2k, 1) pipelines on any type
 *   (2k·P_t GPUs on type t). It takes precedence over `max_gpus_ever`.
 */
struct JobLimits {
  int min_gpus = 1;
  int max_gpus = INT_MAX;
  JobKind kind = JobKind::adaptive;
  int pipeline_size = 1;
  std::optional<int> max_gpus_ever;
  std::vector<int> pipeline_sizes{};
  std::optional<int> max_pipelines_ever{};

  /// GPUs per pipeline on type `t` (0 = not usable there); 1 for non-hybrid jobs.
  [[nodiscard]] int pipeline_on(int t) const noexcept {
    if (kind != JobKind::hybrid) return 1;
    if (pipeline_sizes.empty()) return std::max(1, pipeline_size);
    return t >= 0 && static_cast<std::size_t>(t) < pipeline_sizes.size()
               ? std::max(0, pipeline_sizes[static_cast<std::size_t>(t)])
               : 0;
  }
};

/// @brief A configuration a job may take: index into ConfigurationSet::configs, and the GPUs the
/// job uses on it (fewer than the configuration's GPUs only for a rigid job's footprint; the
/// capacity rows charge the GPUs used, rigid_row_usage()).
struct ValidConfig {
  int config = 0;
  int gpus = 0;
  friend bool operator==(const ValidConfig&, const ValidConfig&) = default;
};

/**
 * @brief The smallest GPU count the job may run with: its normalisation constant Nmin (README.md,
 * "What a round does", step 3). Rigid: its count; hybrid: the smallest multiple of P that is >= max(min_gpus, P);
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

/// @brief The smallest GPU count on type `t`: as effective_min_gpus() with the type's pipeline size
/// (hybrid jobs with per-type sizes); INT_MAX when the job cannot run on `t`.
[[nodiscard]] inline int effective_min_gpus(const JobLimits& l, int t) noexcept {
  if (l.kind != JobKind::hybrid) return effective_min_gpus(l);
  const int p = l.pipeline_on(t);
  if (p < 1) return INT_MAX;
  const long long m = std::max<long long>(l.min_gpus, p);
  const long long r = (m + p - 1) / p * p;
  return r > INT_MAX ? INT_MAX : static_cast<int>(r);
}

/// @brief The largest GPU count the job may run with on type `t` (bounds and the 2x rule; for hybrid
/// jobs with `max_pipelines_ever` the rule counts pipelines). May be smaller than
/// effective_min_gpus(l, t) when nothing is allowed (e.g. max_gpus below one pipeline).
[[nodiscard]] inline int effective_max_gpus(const JobLimits& l, int t) noexcept {
  if (l.kind == JobKind::rigid) return l.min_gpus;
  long long hi = l.max_gpus;
  const int nmin = effective_min_gpus(l, t);
  if (l.kind == JobKind::hybrid && l.max_pipelines_ever) {
    const long long p = std::max(1, l.pipeline_on(t));
    const long long k = std::max(0, *l.max_pipelines_ever);
    hi = std::min(hi, k <= 0 ? static_cast<long long>(nmin) : std::max<long long>(2 * k * p, nmin));
  } else if (l.max_gpus_ever) {
    const long long cap = *l.max_gpus_ever <= 0 ? nmin : std::max<long long>(2LL * *l.max_gpus_ever, nmin);
    hi = std::min(hi, cap);
  }
  return static_cast<int>(hi);
}

/// @brief The largest GPU count the job may run with (bounds and the 2x rule), with the job's
/// single pipeline size. May be smaller than effective_min_gpus() when nothing is allowed (e.g.
/// max_gpus below one pipeline).
[[nodiscard]] inline int effective_max_gpus(const JobLimits& l) noexcept {
  if (l.kind != JobKind::hybrid || l.pipeline_sizes.empty()) return effective_max_gpus(l, 0);
  JobLimits one = l;
  one.pipeline_sizes.clear();
  return effective_max_gpus(one, 0);
}

/**
 * @brief The configurations of `set` that a job with limits `l` may take (before goodputs: a
 * goodput of 0 further removes a configuration).
 *
 * Rigid jobs get at most one configuration per GPU type: the one whose size equals their count
 * or, when the count is not a configuration size (e.g. 3 GPUs, or 12 GPUs on 8-GPU nodes), their
 * *footprint*: the smallest configuration of that type with at least that many GPUs. The job
 * uses `count` GPUs and is charged them in the capacity rows (rigid_row_usage(): whole virtual
 * nodes plus a remainder whose power-of-two slot serves smaller items).
 *
 * `type_limit` (optional, one entry per GPU type): the largest GPU count of each type with a
 * positive goodput (HasGpuLimit); configurations asking for more of the type are left out.
 * They are written into `out` (cleared first): a caller asking for every job of a round keeps its capacity
 * from job to job.
 */
inline void valid_configs(const ConfigurationSet& set, const JobLimits& l, std::span<const int> type_limit,
                          std::vector<ValidConfig>& out) {
  out.clear();
  // configs are grouped by type (first_config) and strictly ascending in GPUs within a type:
  // binary-search each type's block instead of scanning the thousands of shapes of a large
  // cluster for every job.
  const auto& cs = set.configs;
  for (std::size_t t = 0; t + 1 < set.first_config.size(); ++t) {
    const int p = l.pipeline_on(static_cast<int>(t));
    if (p < 1) continue;  // a hybrid job without a pipeline on this type
    const int lo = effective_min_gpus(l, static_cast<int>(t));
    const int hi = effective_max_gpus(l, static_cast<int>(t));
    if (hi < lo) continue;
    const int limit = t < type_limit.size() ? type_limit[t] : INT_MAX;
    if (l.kind == JobKind::rigid) {
      if (lo > limit) continue;
      // The shape of the count, or the footprint: the smallest shape with at least that many.
      if (const auto c = set.find(static_cast<int>(t), lo, CountMatch::footprint)) out.push_back(ValidConfig{*c, lo});
      continue;
    }
    const auto block_begin = cs.begin() + set.first_config[t];
    const auto block_end = cs.begin() + set.first_config[t + 1];
    auto it =
        std::lower_bound(block_begin, block_end, lo, [](const ConfigurationSpec& c, int g) { return c.gpus < g; });
    for (; it != block_end && it->gpus <= std::min(hi, limit); ++it)
      if (l.kind != JobKind::hybrid || it->gpus % p == 0)
        out.push_back(ValidConfig{static_cast<int>(it - cs.begin()), it->gpus});
  }
}

/// @brief valid_configs() as a new vector.
[[nodiscard]] inline std::vector<ValidConfig> valid_configs(const ConfigurationSet& set, const JobLimits& l,
                                                            std::span<const int> type_limit = {}) {
  std::vector<ValidConfig> out;
  valid_configs(set, l, type_limit, out);
  return out;
}

}  // namespace sia
