#pragma once
/// @file sim/sia_policy.hpp
/// @brief The Sia policy in the simulator: the library's `sia::run_round`, fed with each job's goodput
/// estimates from its fitted per-type models (reference §2-§5).

#include <sia/milp/solver.hpp>
#include <sia/round.hpp>
#include <sia/sim/policy.hpp>

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <string>

namespace sia::sim {

/// @brief How a job that has never run is valued before its first placement (reference §2 item 4, §9.3).
enum class Bootstrap {
  tie,       ///< reference default: every type's 1-GPU configuration has the same value (solver tie-break)
  profiled,  ///< paper: 1-GPU configurations valued by the type's 1-GPU profiled throughput
};

/// @brief Options of the Sia policy.
struct SiaPolicyOptions {
  RoundOptions round;                  ///< p = -0.5, lambda = 1.1 by default
  Bootstrap bootstrap = Bootstrap::tie;  // reference default; measured 0.676 h vs 0.685 h on Philly (both in range)
  bool project_throughputs = true;     ///< bootstrap unseen types from a fitted one (paper Eq. 1, reference §2)
  int max_gpus_per_job = 64;           ///< reference cap
  double interval_s = 60.0;
};

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
    int generation = -1;
    const SimCluster* cluster = nullptr;
    std::shared_ptr<void> estimator;  ///< goodput memo of the job (private type)
  };
  std::unique_ptr<MilpSolver> solver_;
  RoundResult last_;
  std::unordered_map<std::uint64_t, CachedEstimator> cache_;
};

}  // namespace sia::sim
