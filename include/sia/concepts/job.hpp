#pragma once
/// @file concepts/job.hpp
/// @brief The Job concept (JobKind lives in job_kind.hpp).

#include <sia/allocation.hpp>
#include <sia/configuration.hpp>
#include <sia/gpu_type_spec.hpp>
#include <sia/job_kind.hpp>

#include <concepts>
#include <optional>
#include <string_view>

namespace sia {

/**
 * @brief A training job that sia can allocate, evaluated against GPU type `G`.
 *
 * Required, for `const J& j`, `const G& t`, `const Config& c`:
 * @code
 * j.id()          -> convertible_to<std::string_view>   // unique in a round
 * j.min_gpus()    -> convertible_to<int>
 * j.max_gpus()    -> convertible_to<int>
 * j.kind()        -> convertible_to<JobKind>
 * j.goodput(t, c) -> convertible_to<double>             // raw goodput on configuration c of type t
 * @endcode
 * Optional members, used when present (defaults in parentheses): `preemptible()` (true),
 * `age_s()` (0), `restarts()` (0), `restart_cost_s()` (30), `pipeline_size()` (1),
 * `max_gpus_ever()` -> std::optional<int> (rule off), `current()` -> std::optional<CurrentAllocation>
 * (none), `batch_size(t, c)` -> BatchChoice.
 */
template <class J, class G = GpuTypeSpec>
concept Job = GpuType<G> && requires(const J& j, const G& t, const Config& c) {
  { j.id() } -> std::convertible_to<std::string_view>;
  { j.min_gpus() } -> std::convertible_to<int>;
  { j.max_gpus() } -> std::convertible_to<int>;
  { j.kind() } -> std::convertible_to<JobKind>;
  { j.goodput(t, c) } -> std::convertible_to<double>;
};

}  // namespace sia
