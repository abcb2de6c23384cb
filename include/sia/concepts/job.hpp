#pragma once
/// @file concepts/job.hpp
/// @brief The Job concept (JobKind lives in job_kind.hpp).

#include <sia/concepts/configuration.hpp>
#include <sia/concepts/gpu_type.hpp>
#include <sia/job_kind.hpp>  // std-only vocabulary

#include <concepts>
#include <string_view>

namespace sia {

/**
 * @brief A training job that sia can allocate, evaluated on configurations `C` of GPU type `G`.
 *
 * Required, for `const J& j`, `const G& t`, `const C& c`:
 * @code
 * j.id()          -> convertible_to<std::string_view>   // unique in a round
 * j.min_gpus()    -> convertible_to<int>
 * j.max_gpus()    -> convertible_to<int>
 * j.kind()        -> convertible_to<JobKind>
 * j.goodput(t, c) -> convertible_to<double>             // raw goodput on configuration c of type t
 * @endcode
 * Optional members, used when present (defaults in parentheses): `preemptible()` (true),
 * `age_s()` (0), `restarts()` (0), `restart_cost_s()` (30), `pipeline_size()` (1),
 * `max_gpus_ever()` -> std::optional<int> (rule off), `pipeline_sizes()` -> std::vector<int> (hybrid: GPUs
 * per pipeline on each GPU type, 0 = not there; valid_configs.hpp), `max_pipelines_ever()` -> std::optional<int>
 * (hybrid: the 2x rule in pipelines), `current()` -> std::optional<CurrentAllocation>
 * (none), `batch_size(t, c)` (HasBatchSize), `gpu_limit(t)` (HasGpuLimit), `weight()` (1, HasWeight) and
 * `tenant()` (none, HasTenant; concepts/tenancy.hpp). Each has a public concept, `describe_job_type<J, G>()`
 * reports which a type provides and `using sia_members = JobMembers<...>` makes a misspelt one a compile
 * error (job_members.hpp). The round calls `goodput` with the library's
 * configuration type: a scheduler's job satisfies `Job<J, MyGpuType, ConfigurationSpec>`.
 */
template <class J, class G, class C>
concept Job = GpuType<G> && Configuration<C> && requires(const J& j, const G& t, const C& c) {
  { j.id() } -> std::convertible_to<std::string_view>;
  { j.min_gpus() } -> std::convertible_to<int>;
  { j.max_gpus() } -> std::convertible_to<int>;
  { j.kind() } -> std::convertible_to<JobKind>;
  { j.goodput(t, c) } -> std::convertible_to<double>;
};

}  // namespace sia
