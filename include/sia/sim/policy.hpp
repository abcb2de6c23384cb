#pragma once
/// @file sim/policy.hpp
/// @brief The policy interface of the simulator: baselines (Gavel, Pollux, ...) plug in here.

#include <sia/sim/cluster.hpp>
#include <sia/sim/job.hpp>

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sia::sim {

/// @brief What a policy sees each round.
struct PolicyContext {
  double now = 0.0;                   ///< simulated time (s)
  const SimCluster* cluster = nullptr;
  std::span<SimJob* const> jobs;      ///< submitted, unfinished jobs, in submission order
};

/**
 * @brief A scheduling policy: called every `interval_s()` seconds of simulated time with the active jobs,
 * returns one allocation per job (in the same order; an empty allocation = no GPUs this round). The
 * simulator charges restarts for changed shapes and measures the call's wall time as the policy runtime.
 * A policy must never exceed the cluster's GPUs per type.
 */
class Policy {
 public:
  virtual ~Policy() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  /// Round length the policy is designed for (Sia 60 s, Gavel 360 s).
  [[nodiscard]] virtual double default_interval_s() const = 0;
  [[nodiscard]] virtual std::vector<SimAllocation> allocate(const PolicyContext& ctx) = 0;
  /// True when the jobs under this policy are heterogeneity-unaware (the paper's Pollux, reference §6.6):
  /// each job keeps ONE throughput model fitted to its observations on every GPU type, and its executor
  /// picks batch sizes with that merged model wherever it runs (SimJob::unaware_model).
  [[nodiscard]] virtual bool heterogeneity_unaware() const { return false; }
};

/// @brief Creates a policy by name; options are policy-specific "key=value" strings.
using PolicyFactory = std::function<std::unique_ptr<Policy>()>;

/// @brief Registers a policy under `name` (baselines call this; "sia" is built in).
void register_policy(std::string name, PolicyFactory factory);
/// @brief Names of the registered policies.
[[nodiscard]] std::vector<std::string> policy_names();
/// @brief Creates the policy `name`. @throws InvalidArgument listing the known names.
[[nodiscard]] std::unique_ptr<Policy> make_policy(const std::string& name);

}  // namespace sia::sim
