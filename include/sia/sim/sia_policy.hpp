#pragma once
/// @file sim/sia_policy.hpp
/// @brief The Sia policy in the simulator: the library's `sia::run_round`, fed with each job's
/// library goodput estimator (sia::JobModel) built from what the job has observed (reference §2-§5).

#include <sia/configuration_set.hpp>
#include <sia/goodput/job_model.hpp>
#include <sia/milp/solver.hpp>
#include <sia/round.hpp>
#include <sia/sim/policy.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sia::sim {

/// @brief A tenant of the simulated cluster: its caps and guarantee (sia::TenantSpec) and the weight
/// of its jobs. Jobs are assigned to tenants by name (tenant_index).
struct SimTenant {
  TenantSpec spec;
  double weight = 1.0;
};

/// @brief The tenant (index below `tenants`) of the job called `job_name`: a fixed hash of the name
/// (FNV-1a), so the assignment does not depend on the platform or on the order of arrival.
[[nodiscard]] std::size_t tenant_index(std::string_view job_name, std::size_t tenants) noexcept;

/// @brief Parses the sia policy's `tenants` option, `name:weight=W,max=N,guarantee=M;name2:...`
/// (every key optional; `max_<gpu type>=K` caps one type of `cluster_types`).
/// @throws InvalidArgument naming the part that is wrong.
[[nodiscard]] std::vector<SimTenant> parse_sim_tenants(std::string_view text,
                                                       const std::vector<std::string>& cluster_types = {});

/// @brief Options of the Sia policy.
struct SiaPolicyOptions {
  RoundOptions round;  ///< p = -0.5, lambda = 1.1 by default
  /// A never-run job's value (reference §2 item 4, §9.3): `tie` (the reference code's default) or
  /// `profiled` (the paper: 1-GPU profiled throughput). Measured 0.676 h vs 0.685 h on Philly.
  FirstPlacement first_placement = FirstPlacement::tie;
  /// Types a job has not run on: `reference` (the reference's 1-GPU throughput ratio, §2), `paper` (Eq. 1 with
  /// each type's 1-GPU seed model), `equal` (no profiles: as fast as the known type) or `none`.
  ProjectionMode projection = ProjectionMode::reference;
  /// Oracle (paper §5.7): every job's throughput on every configuration is known — the simulator's ground truth,
  /// not a fitted model — with the batch size chosen on it.
  bool oracle = false;
  /// Strong-scaling jobs: the reference lets them take any count up to their target at once (`false`);
  /// `true` applies the paper's 2x scale-up rule to them as to adaptive jobs.
  bool strong_scaling_2x = false;
  int max_gpus_per_job = 64;  ///< reference cap (pipelines for hybrid jobs)
  double interval_s = 60.0;
  /// Tenants (issue 15): every job belongs to tenants[tenant_index(name, tenants.size())], takes its
  /// weight, and the round applies their caps and guarantees. Empty = none (the paper's setting).
  std::vector<SimTenant> tenants;
  /// Called after every round with its input and its result (e.g. the solver bench records the
  /// rounds of a simulated workload); the job specs' goodput functions are valid only during the call.
  std::function<void(const ClusterSpec&, std::span<const JobSpec>, const RoundResult&)> on_round;
};

/// @brief The profiling modes of the paper's §5.7 ablation as Sia policy options (`sia_simulate --profiling`):
/// `reference` (the reference code: a never-run job's types tie, unseen types by the 1-GPU throughput ratio),
/// `eq1` (the paper's Bootstrap: 1-GPU profiles seed every type, unseen types by Eq. 1), `noprof` (no
/// profiles: types tie, an unseen type is assumed as fast as the known one until the job runs there), `oracle`
/// (true throughputs known). @throws InvalidArgument for another name.
[[nodiscard]] SiaPolicyOptions apply_profiling_mode(SiaPolicyOptions options, std::string_view mode);

/// @brief The library estimator of `job` on `cluster` as the Sia policy uses it: one TypeModel per
/// cluster type in cluster order (fitted model when the job has run there and has gradient
/// statistics, the type's local batch range, 1-GPU throughput, node size and profiled node range),
/// the workload batch size as the largest (or fixed) batch.
[[nodiscard]] JobModel job_model(const SimJob& job, const SimCluster& cluster, const SiaPolicyOptions& options = {});

/// @brief Sia (SOSP 2023) as a simulator policy.
class SiaPolicy final : public Policy {
 public:
  explicit SiaPolicy(SiaPolicyOptions options = {});
  ~SiaPolicy() override;
  [[nodiscard]] std::string name() const override { return "sia"; }
  [[nodiscard]] double default_interval_s() const override { return options_.interval_s; }
  [[nodiscard]] std::vector<SimAllocation> allocate(const PolicyContext& ctx) override;
  /// Status of the last round (for logs).
  [[nodiscard]] const RoundResult& last_result() const noexcept { return last_; }

 private:
  SiaPolicyOptions options_;
  struct CachedEstimator {
    /// The job's JobModel and its memo (a private type), reset in place when the job's knowledge changes.
    std::shared_ptr<void> estimator;
    std::uint64_t round = 0;  ///< last round the job was active in
  };
  std::uint64_t round_ = 0;
  std::unique_ptr<MilpSolver> solver_;
  RoundResult last_;
  std::unordered_map<std::uint64_t, CachedEstimator> cache_;
  /// The configuration set of the cluster last seen (its new estimators' goodputs are computed on it).
  ConfigurationSet set_;
  const SimCluster* set_cluster_ = nullptr;
  /// Batch-size optimisations shared by the jobs' models (the same bits as without it: goodput_memo.hpp).
  std::shared_ptr<GoodputMemo> memo_;
};

}  // namespace sia::sim
