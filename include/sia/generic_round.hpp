#pragma once
/// @file generic_round.hpp
/// @brief run_round() over a scheduler's own GPU-type and job types (no conversion by the caller).
///
/// Any range of objects modelling GpuType and any range of objects modelling Job<J, G> can be
/// passed directly; the optional members of the Job concept (job_members.hpp) are detected
/// and used when present. The objects are only borrowed for the duration of the call: the round asks
/// the caller's jobs for goodputs (`j.goodput(t, c)` with the caller's own GPU type object `t`)
/// and batch sizes while it runs.
/// @code
/// std::vector<MyGpu> gpus = ...;      // name(), num_nodes(), gpus_per_node()
/// std::vector<MyJob> jobs = ...;      // id(), min_gpus(), max_gpus(), kind(), goodput(t, c)
/// sia::RoundResult r = sia::run_round(gpus, jobs, sia::RoundOptions{});
/// @endcode

#include <sia/allocation.hpp>
#include <sia/cluster.hpp>
#include <sia/concepts/gpu_type.hpp>
#include <sia/concepts/job.hpp>
#include <sia/concepts/tenancy.hpp>
#include <sia/configuration.hpp>
#include <sia/gpu_type_spec.hpp>
#include <sia/job_members.hpp>
#include <sia/job_spec.hpp>
#include <sia/milp/solver.hpp>
#include <sia/round.hpp>

#include <concepts>
#include <optional>
#include <ranges>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace sia {

/// @brief What a generic round needs to know beyond the GPU types themselves (all optional;
/// same meaning as the fields of ClusterSpec, indexed by the position of the type in the range).
struct ClusterState {
  std::vector<int> reserved;                         ///< per type: GPUs not available to sia
  std::vector<std::vector<int>> down;                ///< per type: indices of failed nodes
  std::vector<std::vector<std::string>> node_names;  ///< per type: node names (optional)
};

/// @brief A range of GPU types usable by the generic round.
template <class R>
concept GpuTypeRange = std::ranges::forward_range<R> && GpuType<std::ranges::range_value_t<R>> &&
    std::is_lvalue_reference_v<std::ranges::range_reference_t<const R>>;

/// @brief A range of jobs usable by the generic round with GPU type `G`.
template <class R, class G>
concept JobRange = std::ranges::forward_range<R> && Job<std::ranges::range_value_t<R>, G, ConfigurationSpec> &&
    std::is_lvalue_reference_v<std::ranges::range_reference_t<const R>>;

namespace detail {

/// Builds the ClusterSpec of a range of GpuType objects.
template <GpuTypeRange Types>
[[nodiscard]] ClusterSpec to_cluster_spec(const Types& types, const ClusterState& state) {
  ClusterSpec c;
  for (const auto& t : types)
    c.types.emplace_back(std::string(std::string_view(t.name())), static_cast<int>(t.num_nodes()),
                         static_cast<int>(t.gpus_per_node()));
  c.reserved = state.reserved;
  c.down = state.down;
  c.node_names = state.node_names;
  return c;
}

/// Wraps one caller job as a JobSpec that borrows it (and the caller's GPU type objects).
template <class J, class G>
[[nodiscard]] JobSpec borrow_job(const J& j, const std::vector<const G*>& types) {
  // A type that declares its optional members (`using sia_members = JobMembers<...>`) gets a compile
  // error naming any of them that is misspelt or mistyped (job_members.hpp).
  static_assert(check_declared_members<J, G>());
  JobSpec s(std::string(std::string_view(j.id())));
  s.min_gpus(static_cast<int>(j.min_gpus())).max_gpus(static_cast<int>(j.max_gpus())).kind(JobKind(j.kind()));
  if constexpr (HasPreemptible<J>) s.preemptible(j.preemptible());
  if constexpr (HasAge<J>) s.age_s(static_cast<double>(j.age_s()));
  if constexpr (HasRestarts<J>) s.restarts(static_cast<int>(j.restarts()));
  if constexpr (HasRestartCost<J>) s.restart_cost_s(static_cast<double>(j.restart_cost_s()));
  if constexpr (HasPipelineSize<J>) s.pipeline_size(static_cast<int>(j.pipeline_size()));
  if constexpr (HasPipelineSizes<J>) s.pipeline_sizes(std::vector<int>(j.pipeline_sizes()));
  if constexpr (HasMaxPipelinesEver<J>) s.max_pipelines_ever(std::optional<int>(j.max_pipelines_ever()));
  if constexpr (HasMaxGpusEver<J>) s.max_gpus_ever(std::optional<int>(j.max_gpus_ever()));
  if constexpr (HasCurrentAllocation<J>) s.current(std::optional<CurrentAllocation>(j.current()));
  if constexpr (HasWeight<J>) s.weight(static_cast<double>(j.weight()));
  if constexpr (HasTenant<J>) s.tenant(std::string(std::string_view(j.tenant())));
  // The round only calls these with configurations of the cluster, so c.type is a valid index.
  JobSpec::GoodputFn goodput = [&j, &types](const GpuTypeSpec&, const ConfigurationSpec& c) {
    return static_cast<double>(j.goodput(*types[static_cast<std::size_t>(c.type)], c));
  };
  JobSpec::BatchFn batch;
  if constexpr (HasBatchSize<J, G, ConfigurationSpec>) {
    batch = [&j, &types](const GpuTypeSpec&, const ConfigurationSpec& c) {
      return to_batch_choice(j.batch_size(*types[static_cast<std::size_t>(c.type)], c));
    };
  }
  JobSpec::LimitFn limit;
  if constexpr (HasGpuLimit<J, G>) {
    // The cluster's types are the caller's, in order: find the caller's object by name.
    limit = [&j, &types](const GpuTypeSpec& t) {
      for (const G* g : types)
        if (std::string_view(g->name()) == std::string_view(t.name())) return static_cast<int>(j.gpu_limit(*g));
      return 0;
    };
  }
  s.goodput_fn(std::move(goodput), std::move(batch), std::move(limit));
  return s;
}

template <class Types, class Jobs>
struct Borrowed {
  using G = std::ranges::range_value_t<Types>;
  ClusterSpec cluster;
  std::vector<const G*> types;
  std::vector<JobSpec> jobs;
  Borrowed(const Types& t, const Jobs& j, const ClusterState& state) : cluster(to_cluster_spec(t, state)) {
    for (const auto& g : t) types.push_back(&g);
    for (const auto& job : j) jobs.push_back(borrow_job(job, types));
  }
  Borrowed(const Borrowed&) = delete;  // the JobSpecs point into `types`
  Borrowed& operator=(const Borrowed&) = delete;
};

}  // namespace detail

/**
 * @brief Runs one round on the caller's own GPU-type and job objects.
 *
 * `types[t]` is GPU type t (configurations and `current().type` refer to it by this position).
 * Decisions come back in the order of `jobs`, identified by `id()`.
 * @throws InvalidArgument as run_round(const ClusterSpec&, ...) does.
 */
template <GpuTypeRange Types, JobRange<std::ranges::range_value_t<Types>> Jobs>
[[nodiscard]] RoundResult run_round(const Types& types, const Jobs& jobs, const RoundOptions& options = {},
                                    const ClusterState& state = {}) {
  const detail::Borrowed<Types, Jobs> b(types, jobs, state);
  return run_round(b.cluster, std::span<const JobSpec>(b.jobs), options);
}

/// Same, with a caller-owned backend instance (`options.backend` is ignored).
template <GpuTypeRange Types, JobRange<std::ranges::range_value_t<Types>> Jobs>
[[nodiscard]] RoundResult run_round(const Types& types, const Jobs& jobs, const RoundOptions& options,
                                    const ClusterState& state, MilpSolver& solver) {
  const detail::Borrowed<Types, Jobs> b(types, jobs, state);
  return run_round(b.cluster, std::span<const JobSpec>(b.jobs), options, solver);
}

}  // namespace sia
