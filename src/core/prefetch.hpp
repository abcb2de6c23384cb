#pragma once
// Private to the round: hints that bring a job's memory into cache a few jobs ahead of a pass over
// the jobs (each JobSpec, 320 bytes, and each id longer than std::string's inline buffer lie apart
// from the arrays a pass walks: a cache miss per job where the pass first reads them).
#include <sia/job_spec.hpp>

#include <cstddef>

namespace sia::detail {

/// How many jobs ahead the passes over the jobs fetch (a hint only).
inline constexpr std::size_t kFetchAhead = 8;

inline void fetch(const void* p) noexcept {
#if defined(__GNUC__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

/// Every line of job `j`.
inline void fetch_job(const JobSpec& j) noexcept {
  const char* const p = reinterpret_cast<const char*>(&j);
  for (std::size_t at = 0; at < sizeof(JobSpec); at += 64) fetch(p + at);
}

/// The bytes of job `j`'s id (its first line), where they lie apart from the JobSpec: an id longer
/// than std::string's inline buffer (15 characters in libstdc++), as most schedulers' ids are. Reads
/// the JobSpec's first line: fetched some jobs before (fetch_job).
inline void fetch_id(const JobSpec& j) noexcept { fetch(j.id().data()); }

}  // namespace sia::detail
