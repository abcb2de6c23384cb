#pragma once
/// @file job_members.hpp
/// @brief The optional members of a Job: one public concept each, a compile-time report of which
/// members a type provides, and a way to declare the members a type means to provide so that a
/// misspelt or mistyped one is a compile error instead of a silently applied default.
///
/// The generic round (generic_round.hpp) uses a member exactly when its concept holds. A job type
/// with `restart() const` (for `restarts()`) compiles and runs with 0 restarts; to catch that, declare:
/// @code
/// struct MyJob {
///   using sia_members = sia::JobMembers<sia::JobMember::restarts, sia::JobMember::current>;
///   int restart() const;                                   // misspelt
///   std::optional<sia::CurrentAllocation> current() const;
///   ...
/// };
/// sia::run_round(gpus, jobs, options);   // error: "a declared optional member of the job type is
///                                        //  missing or has the wrong type: restarts() -> int"
/// @endcode
/// `sia::describe_job_type<MyJob, MyGpu>()` is the constexpr report (e.g.
/// `static_assert(sia::describe_job_type<MyJob, MyGpu>().provides(sia::JobMember::current))`), and
/// `to_string()` of it lists every member with "provided" or its default, for a log line at startup.

#include <sia/allocation.hpp>
#include <sia/concepts/goodput_model.hpp>
#include <sia/concepts/tenancy.hpp>  // HasWeight, HasTenant
#include <sia/configuration.hpp>

#include <array>
#include <concepts>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace sia {

/// `j.preemptible() -> bool` (default true: the round may suspend or resize the job).
template <class J>
concept HasPreemptible = requires(const J& j) {
  { j.preemptible() } -> std::convertible_to<bool>;
};
/// `j.age_s() -> double`: seconds the job has run, for its restart factor (default 0).
template <class J>
concept HasAge = requires(const J& j) {
  { j.age_s() } -> std::convertible_to<double>;
};
/// `j.restarts() -> int`: restarts so far, for its restart factor (default 0).
template <class J>
concept HasRestarts = requires(const J& j) {
  { j.restarts() } -> std::convertible_to<int>;
};
/// `j.restart_cost_s() -> double`: seconds one restart costs (default 30).
template <class J>
concept HasRestartCost = requires(const J& j) {
  { j.restart_cost_s() } -> std::convertible_to<double>;
};
/// `j.pipeline_size() -> int`: GPUs per pipeline of a hybrid job on every type (default 1).
template <class J>
concept HasPipelineSize = requires(const J& j) {
  { j.pipeline_size() } -> std::convertible_to<int>;
};
/// `j.pipeline_sizes() -> std::vector<int>`: per GPU type, GPUs per pipeline (0 = not there).
template <class J>
concept HasPipelineSizes = requires(const J& j) {
  { j.pipeline_sizes() } -> std::convertible_to<std::vector<int>>;
};
/// `j.max_pipelines_ever() -> std::optional<int>`: hybrid jobs, the 2x rule counted in pipelines.
template <class J>
concept HasMaxPipelinesEver = requires(const J& j) {
  { j.max_pipelines_ever() } -> std::convertible_to<std::optional<int>>;
};
/// `j.max_gpus_ever() -> std::optional<int>`: the largest count the job ever ran with (the 2x rule; none = off).
template <class J>
concept HasMaxGpusEver = requires(const J& j) {
  { j.max_gpus_ever() } -> std::convertible_to<std::optional<int>>;
};
/// `j.current() -> std::optional<CurrentAllocation>`: what the job runs on now (none = waiting).
template <class J>
concept HasCurrentAllocation = requires(const J& j) {
  { j.current() } -> std::convertible_to<std::optional<CurrentAllocation>>;
};

/// The optional members of a Job, in the order describe_job_type() reports them.
enum class JobMember : unsigned {
  preemptible,
  age_s,
  restarts,
  restart_cost_s,
  pipeline_size,
  pipeline_sizes,
  max_pipelines_ever,
  max_gpus_ever,
  current,
  batch_size,  ///< `j.batch_size(t, c)` (HasBatchSize)
  gpu_limit,   ///< `j.gpu_limit(t)` (HasGpuLimit)
  weight,      ///< `j.weight()` (HasWeight, concepts/tenancy.hpp)
  tenant,      ///< `j.tenant()` (HasTenant, concepts/tenancy.hpp)
};
inline constexpr std::size_t job_member_count = 13;

/// The member's signature, e.g. "restarts() -> int".
[[nodiscard]] constexpr std::string_view signature(JobMember m) noexcept {
  constexpr std::array<std::string_view, job_member_count> s{
      "preemptible() -> bool",
      "age_s() -> double",
      "restarts() -> int",
      "restart_cost_s() -> double",
      "pipeline_size() -> int",
      "pipeline_sizes() -> std::vector<int>",
      "max_pipelines_ever() -> std::optional<int>",
      "max_gpus_ever() -> std::optional<int>",
      "current() -> std::optional<sia::CurrentAllocation>",
      "batch_size(t, c) -> {global_batch, local_batch, accumulation_steps}",
      "gpu_limit(t) -> int",
      "weight() -> double",
      "tenant() -> std::string_view"};
  return s[static_cast<std::size_t>(m)];
}
/// What the round assumes when the member is absent.
[[nodiscard]] constexpr std::string_view default_of(JobMember m) noexcept {
  constexpr std::array<std::string_view, job_member_count> s{"true",     "0",
                                                             "0",        "30",
                                                             "1",        "pipeline_size() on every type",
                                                             "rule off", "rule off",
                                                             "waiting",  "no batch size reported",
                                                             "no limit", "1",
                                                             "none"};
  return s[static_cast<std::size_t>(m)];
}

/// @brief Which optional members a job type provides (describe_job_type()).
struct JobTypeDescription {
  std::array<bool, job_member_count> members{};
  [[nodiscard]] constexpr bool provides(JobMember m) const noexcept { return members[static_cast<std::size_t>(m)]; }
  /// One line per member: "  restarts() -> int: provided" or "  restarts() -> int: absent (default 0)".
  [[nodiscard]] std::string to_string() const {
    std::string out;
    for (std::size_t k = 0; k < job_member_count; ++k) {
      const auto m = static_cast<JobMember>(k);
      out += "  " + std::string(signature(m)) + ": " +
             (members[k] ? std::string("provided") : "absent (default: " + std::string(default_of(m)) + ")") + "\n";
    }
    return out;
  }
};

/// The compile-time report: which optional members `J` provides, for GPU type `G` (batch_size and
/// gpu_limit take the GPU type; the round passes the caller's own GPU type objects).
template <class J, class G>
[[nodiscard]] constexpr JobTypeDescription describe_job_type() noexcept {
  JobTypeDescription d;
  d.members = {HasPreemptible<J>,
               HasAge<J>,
               HasRestarts<J>,
               HasRestartCost<J>,
               HasPipelineSize<J>,
               HasPipelineSizes<J>,
               HasMaxPipelinesEver<J>,
               HasMaxGpusEver<J>,
               HasCurrentAllocation<J>,
               HasBatchSize<J, G, ConfigurationSpec>,
               HasGpuLimit<J, G>,
               HasWeight<J>,
               HasTenant<J>};
  return d;
}

/// @brief The members a job type declares it provides: `using sia_members = sia::JobMembers<...>;`
/// inside the type. The generic round then refuses to compile when one of them is not detected.
template <JobMember... Ms>
struct JobMembers {
  static constexpr std::array<JobMember, sizeof...(Ms)> list{Ms...};
};

namespace detail {
template <class T>
struct IsJobMembers : std::false_type {};
template <JobMember... Ms>
struct IsJobMembers<JobMembers<Ms...>> : std::true_type {};
}  // namespace detail

/// `J::sia_members` is a JobMembers<...> list.
template <class J>
concept DeclaresJobMembers = detail::IsJobMembers<typename J::sia_members>::value;

/// Does `J` declare member `m` (false when it declares nothing)?
template <class J>
[[nodiscard]] constexpr bool declares(JobMember m) noexcept {
  if constexpr (DeclaresJobMembers<J>) {
    for (JobMember d : J::sia_members::list)
      if (d == m) return true;
  }
  return false;
}

/// Every member `J` declares is provided (true when it declares nothing).
template <class J, class G>
concept ProvidesDeclaredMembers = [] {
  for (std::size_t k = 0; k < job_member_count; ++k)
    if (declares<J>(static_cast<JobMember>(k)) && !describe_job_type<J, G>().members[k]) return false;
  return true;
}();

namespace detail {

/// One static_assert per member, so the compiler names the missing one (called by the generic round).
template <class J, class G>
consteval bool check_declared_members() {
  constexpr JobTypeDescription d = describe_job_type<J, G>();
  static_assert(!declares<J>(JobMember::preemptible) || d.provides(JobMember::preemptible),
                "a declared optional member of the job type is missing or has the wrong type: preemptible() -> bool");
  static_assert(!declares<J>(JobMember::age_s) || d.provides(JobMember::age_s),
                "a declared optional member of the job type is missing or has the wrong type: age_s() -> double");
  static_assert(!declares<J>(JobMember::restarts) || d.provides(JobMember::restarts),
                "a declared optional member of the job type is missing or has the wrong type: restarts() -> int");
  static_assert(
      !declares<J>(JobMember::restart_cost_s) || d.provides(JobMember::restart_cost_s),
      "a declared optional member of the job type is missing or has the wrong type: restart_cost_s() -> double");
  static_assert(!declares<J>(JobMember::pipeline_size) || d.provides(JobMember::pipeline_size),
                "a declared optional member of the job type is missing or has the wrong type: pipeline_size() -> int");
  static_assert(!declares<J>(JobMember::pipeline_sizes) || d.provides(JobMember::pipeline_sizes),
                "a declared optional member of the job type is missing or has the wrong type: pipeline_sizes() -> "
                "std::vector<int>");
  static_assert(!declares<J>(JobMember::max_pipelines_ever) || d.provides(JobMember::max_pipelines_ever),
                "a declared optional member of the job type is missing or has the wrong type: max_pipelines_ever() "
                "-> std::optional<int>");
  static_assert(!declares<J>(JobMember::max_gpus_ever) || d.provides(JobMember::max_gpus_ever),
                "a declared optional member of the job type is missing or has the wrong type: max_gpus_ever() -> "
                "std::optional<int>");
  static_assert(!declares<J>(JobMember::current) || d.provides(JobMember::current),
                "a declared optional member of the job type is missing or has the wrong type: current() -> "
                "std::optional<sia::CurrentAllocation>");
  static_assert(!declares<J>(JobMember::batch_size) || d.provides(JobMember::batch_size),
                "a declared optional member of the job type is missing or has the wrong type: batch_size(t, c)");
  static_assert(!declares<J>(JobMember::gpu_limit) || d.provides(JobMember::gpu_limit),
                "a declared optional member of the job type is missing or has the wrong type: gpu_limit(t) -> int");
  static_assert(!declares<J>(JobMember::weight) || d.provides(JobMember::weight),
                "a declared optional member of the job type is missing or has the wrong type: weight() -> double");
  static_assert(!declares<J>(JobMember::tenant) || d.provides(JobMember::tenant),
                "a declared optional member of the job type is missing or has the wrong type: tenant() -> "
                "std::string_view");
  return true;
}

}  // namespace detail

}  // namespace sia
