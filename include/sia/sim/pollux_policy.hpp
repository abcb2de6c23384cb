#pragma once
/// @file sim/pollux_policy.hpp
/// @brief The heterogeneity-unaware Pollux baseline (OSDI 2021) as the Sia paper runs it (reference §6.6):
/// one merged throughput model per job, 4-GPU virtual nodes, power-mean (p = −1) fitness over speedups with
/// Pollux's re-allocation factor, and the paper's fix for allocations that mix GPU types. 60 s rounds.

#include <sia/goodput/throughput_model.hpp>
#include <sia/sim/policy.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace sia::sim {

/// @brief Search of the Pollux policy.
enum class PolluxSearch {
  genetic,  ///< Pollux's published search: NSGA-II (pymoo) with Pollux's crossover, mutation and repair (default)
  greedy,   ///< greedy marginal allocation of GPU counts + vnode packing (a faster, non-published heuristic)
};

/// @brief Options of the Pollux policy.
struct PolluxPolicyOptions {
  double interval_s = 60.0;
  double p = -1.0;                  ///< power-mean exponent of the fitness
  double restart_penalty_s = 30.0;  ///< re-allocation factor constant
  int vnode_gpus = 4;               ///< nodes with more GPUs (a multiple of this) are split into virtual nodes
  /// GPU-type priority when a job's GPUs span types (most GPUs wins, ties by this order; unknown names last).
  std::vector<std::string> type_priority = {"dgx-ext", "azure", "quad", "rtx", "aws"};
  PolluxSearch search = PolluxSearch::genetic;
  int population = 100;    ///< genetic: NSGA-II population size (Pollux: 100)
  int generations = 100;   ///< genetic: pymoo ("n_gen", N) termination, the initial population counting as 1
  std::uint64_t seed = 1;  ///< genetic: seed of the policy's random generator (same inputs + seed = same result)
};

/// @brief Pollux's re-allocation factor `max(age − P·restarts, 0) / (age + P)`.
[[nodiscard]] double pollux_restart_factor(double age_s, int restarts, double penalty_s = 30.0) noexcept;

/// @brief Pollux's fitness: power mean `((Σ (s_j + 1e-3)^p) / J)^(1/p)` of the (scaled) speedups; 0 when empty.
[[nodiscard]] double pollux_fitness(const std::vector<double>& scaled_speedups, double p = -1.0) noexcept;

/// @brief A virtual node: part of a physical node of one GPU type.
struct PolluxVnode {
  int type = 0;  ///< GPU type index
  int node = 0;  ///< physical node index within the type
  int gpus = 0;  ///< GPUs of this virtual node
};

/// @brief The virtual nodes of a cluster in cluster order (an 8-GPU node becomes two 4-GPU vnodes).
[[nodiscard]] std::vector<PolluxVnode> pollux_vnodes(const SimCluster& cluster, int vnode_gpus = 4);

/**
 * @brief Paper's fix for a job whose GPUs span several types: keep the type holding most of its GPUs
 * (ties by `priority` names), drop the others (left idle this round).
 * @param gpus_per_vnode GPUs of the job on each vnode (indexed like `vnodes`)
 * @return the allocation on the kept type (physical nodes counted once), empty when no GPUs.
 */
[[nodiscard]] SimAllocation pollux_fix_mixed(const SimCluster& cluster, const std::vector<PolluxVnode>& vnodes,
                                             const std::vector<int>& gpus_per_vnode,
                                             const std::vector<std::string>& priority);

/**
 * @brief Heterogeneity-unaware Pollux as a simulator policy.
 *
 * Each job has ONE throughput model fitted (sia's Pollux fit) to the union of its observations on all types
 * (first observation of a (nodes, replicas, local batch) key wins) and uses the `aws` type's batch limits
 * (the first type when there is none). Its speedup for r GPUs on n virtual nodes is goodput(n, r) divided by
 * the goodput of the "fair share" (1 node, ceil(GPUs/J) replicas), × vnodes/GPUs of the cluster (the
 * reference's scaling); before any observation the speedup is r. A job whose allocation changes is multiplied by
 * the re-allocation factor. The fitness is the power mean (p = −1) of the scaled speedups (+1e-3).
 *
 * **Genetic search (default, Pollux's published search: adaptdl `pollux.py` as the Sia artifact's
 * `pollux_unaware.py` runs it).** An individual is the integer matrix jobs × virtual nodes (cluster order) of
 * GPUs, the jobs in Pollux's order (least attained service first — GPU-seconds held —, then by submission).
 * pymoo 0.4.2's NSGA-II with `population` = 100 and ("n_gen", `generations` = 100) minimises F0 = −fitness and
 * F1 = −cluster utility (Σ raw speedups / GPUs of the vnodes in use); the speedup of a row uses the number of
 * vnodes it really spans and its restart factor applies when the row differs from the current allocation.
 * Seeds: the current allocation in the first round, afterwards the previous round's final front (rows of
 * departed jobs dropped, new jobs' rows zero). Operators: binary tournament, single-point crossover over jobs
 * (probability 0.9), Pollux's mutation (reset a row to the current allocation, zero entries out, grow entries
 * towards vnodes with free GPUs) and Pollux's repair (one distributed job per vnode and vnode capacity, both
 * in job order — so the jobs with the least attained service win conflicts —, ≤ max replicas and ≤ 16 vnodes
 * per job); duplicates are eliminated and survival is non-dominated sorting + crowding distance. The result is
 * the individual of the final front with the highest fitness. Details and the (small) departures:
 * src/sim/pollux_genetic.hpp. Randomness: one std::mt19937_64 per policy seeded by `seed`.
 *
 * **Greedy search (`search = greedy`, not Pollux's).** The fitness with p < 0 is a decreasing function of
 * Σ_j 1/(s_j + ε), separable over jobs, so the GPU counts are chosen by greedy marginal allocation over the
 * total virtual-node capacity — each step gives one job the jump r → r' (any r' > r up to its max replicas)
 * with the best decrease of Σ 1/(s + ε) per added GPU (jumps handle the non-concave re-allocation factor); the
 * speedup of r GPUs is taken on ceil(r / vnode GPUs) vnodes. The counts are then packed into virtual nodes (a
 * job keeps its previous vnodes when its count is unchanged and they are free; otherwise single-node jobs by
 * best fit, distributed jobs on whole free vnodes first, at most one distributed job per vnode); a job that
 * cannot be packed is shrunk until it fits. It optimises the fitness better than the genetic algorithm does.
 *
 * Either way, allocations spanning GPU types are then fixed by pollux_fix_mixed().
 */
class PolluxPolicy final : public Policy {
 public:
  explicit PolluxPolicy(PolluxPolicyOptions options = {});
  [[nodiscard]] std::string name() const override { return "pollux"; }
  [[nodiscard]] double default_interval_s() const override { return options_.interval_s; }
  [[nodiscard]] std::vector<SimAllocation> allocate(const PolicyContext& ctx) override;
  /// Pollux's jobs are heterogeneity-unaware: one merged model per job, for the policy and the executor.
  [[nodiscard]] bool heterogeneity_unaware() const override { return true; }
  /// Fitness (power mean of the scaled speedups) of the last round's chosen allocation, before the type fix.
  [[nodiscard]] double last_fitness() const noexcept { return last_fitness_; }

 private:
  PolluxPolicyOptions options_;
  struct JobState {
    std::map<std::tuple<int, int, int>, std::pair<double, double>> merged;  ///< (N,R,local) -> (step, sync)
    std::optional<PerfParams> perf;
    int perf_keys = -1;                                   ///< merged.size() when perf was fitted
    std::map<std::pair<int, int>, double> goodput_cache;  ///< (nodes, replicas) -> goodput, for perf_keys/grad
    double cache_grad_sqr = -1, cache_grad_var = -1;
    std::vector<int> vnodes;  ///< GPUs per vnode of the previous decision (empty = none)
  };
  std::map<std::uint64_t, JobState> jobs_;
  double last_fitness_ = 0.0;
  std::mt19937_64 rng_;
  std::vector<std::vector<int>> population_;    ///< genetic: last final population (jobs × vnodes each)
  std::vector<std::uint64_t> population_uids_;  ///< genetic: job of each row of population_
  int population_vnodes_ = 0;
};

}  // namespace sia::sim
