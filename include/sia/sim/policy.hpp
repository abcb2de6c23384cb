#pragma once
/// @file sim/policy.hpp
/// @brief The simulator's scheduling policies (Sia, Gavel, Pollux, ...): the interface every policy
/// implements, its options, and the registry that makes a policy by name.
///
/// Adding a policy (docs/architecture.md, "Adding a policy"): write `src/sim/<name>_policy.cpp`
/// defining `sia::sim::PolicyInfo sia::sim::detail::builtin_policy_<name>()` and add one line
/// `sia_add_policy(<name> src/sim/<name>_policy.cpp)` to CMakeLists.txt; the build generates the
/// call that registers it. Code outside the library registers its own policies with
/// register_policy().

#include <sia/sim/cluster.hpp>
#include <sia/sim/job.hpp>

#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sia::sim {

/// @brief What a policy sees each round.
struct PolicyContext {
  double now = 0.0;  ///< simulated time (s)
  const SimCluster* cluster = nullptr;
  std::span<SimJob* const> jobs;  ///< submitted, unfinished jobs, in submission order
  /// Threads the policy may use for this round: 0 = all cores, 1 = the calling thread only (several
  /// simulations already share the cores). Policies that parallelise must give the same answer either way.
  int threads = 0;
  /// Hand work to the other threads in this round whatever its size, instead of only when the round has enough of
  /// it to pay for the hand-off (SimOptions::hand_off_every_round: tests of the parallel paths).
  bool hand_off_every_round = false;
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

/**
 * @brief Option values of one policy, as `key -> text` (from `sia_simulate --policy-option` or code).
 *
 * A policy reads its options with the typed getters; each getter returns the default when the key is
 * absent and throws InvalidArgument naming the policy, the key and the value when the text does not
 * parse or is out of range. make_policy() rejects keys the policy does not declare.
 */
class PolicyOptions {
 public:
  PolicyOptions() = default;
  PolicyOptions(std::initializer_list<std::pair<const std::string, std::string>> values) : values_(values) {}

  /// Sets (or replaces) `key`.
  PolicyOptions& set(std::string key, std::string value);
  [[nodiscard]] bool has(std::string_view key) const;
  [[nodiscard]] const std::map<std::string, std::string, std::less<>>& values() const noexcept { return values_; }

  [[nodiscard]] std::string text(std::string_view key, std::string_view fallback) const;
  /// One of `choices` (exact match).
  [[nodiscard]] std::string choice(std::string_view key, std::string_view fallback,
                                   std::initializer_list<std::string_view> choices) const;
  /// A finite number in [lo, hi].
  [[nodiscard]] double number(std::string_view key, double fallback, double lo, double hi) const;
  /// An integer in [lo, hi].
  [[nodiscard]] long long integer(std::string_view key, long long fallback, long long lo, long long hi) const;
  /// `true`/`false`/`1`/`0`/`on`/`off`/`yes`/`no`.
  [[nodiscard]] bool boolean(std::string_view key, bool fallback) const;

  /// Name used in error messages ("policy 'gavel'"); set by make_policy().
  std::string owner = "policy";

 private:
  [[noreturn]] void fail(std::string_view key, std::string_view value, std::string_view expected) const;
  std::map<std::string, std::string, std::less<>> values_;
};

/// @brief One option a policy declares (shown by `sia_simulate --list-policies`).
struct PolicyOptionInfo {
  std::string key;
  std::string default_value;
  std::string help;
};

/// @brief Makes a policy from its options.
using PolicyFactory = std::function<std::unique_ptr<Policy>(const PolicyOptions&)>;

/// @brief A registered policy: name, one-line description, declared options and factory.
struct PolicyInfo {
  std::string name;
  std::string description;
  std::vector<PolicyOptionInfo> options;
  PolicyFactory make;
};

/// @brief Registers (or replaces) a policy. Thread-safe. @throws InvalidArgument for an empty name or factory.
void register_policy(PolicyInfo info);
/// @brief Names of the registered policies: built-in ones in build order, then registered ones.
[[nodiscard]] std::vector<std::string> policy_names();
/// @brief The registered policy `name`, if any.
[[nodiscard]] std::optional<PolicyInfo> find_policy(std::string_view name);
/**
 * @brief Makes the policy `name` with `options`.
 * @throws InvalidArgument for an unknown name (listing the known ones), an option the policy does not
 * declare (listing the declared ones) or a bad option value.
 */
[[nodiscard]] std::unique_ptr<Policy> make_policy(std::string_view name, const PolicyOptions& options = {});

}  // namespace sia::sim
