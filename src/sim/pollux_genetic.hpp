#pragma once
/// @file sim/pollux_genetic.hpp
/// @brief Pollux's published search (adaptdl `sched/adaptdl_sched/policy/pollux.py`, run by the Sia artifact as
/// `sia-simulator/pollux_unaware.py`): pymoo 0.4.2's NSGA-II over jobs × virtual-node GPU matrices with Pollux's
/// crossover, mutation, repair and objectives. Private to the simulator (used by PolluxPolicy and its tests).
///
/// What the published code does and how it is reproduced here (read from the public sources with the
/// project's fetch tools; no code copied):
/// - Problem: rows are the jobs in Pollux's order (pinned first — none in the simulator —, then by attained
///   service, then by creation time; the caller orders them), columns the virtual nodes in cluster order.
///   Objectives (both minimised): F0 = −power mean ((Σ_j (s_j·c + 1e-3)^p) / J)^(1/p) of the scaled speedups
///   (c = the dominant share × vnodes, 16/64 on the paper's clusters), a row that differs from the current
///   allocation multiplied by its re-allocation factor; F1 = −cluster utility = −Σ_j s_j / (GPUs of the vnodes
///   in use), with the raw speedups s_j (no scaling, no re-allocation factor).
/// - Initialisation: the seeds (first round: the current allocation; later rounds: the previous round's
///   optimum set `result.X`, i.e. its final non-dominated front, rows mapped to this round's jobs and zero for
///   new jobs — the current allocation is not added) are repaired, duplicates removed, evaluated and ranked.
///   The population is not padded: the first generation's offspring fill it to `population`.
/// - Generation: `population` offspring — binary tournaments (dominance, then larger crowding distance, then
///   a coin flip) over concatenated random permutations, single-point crossover over jobs applied to a pair
///   with pymoo's default probability 0.9, Pollux's mutation, Pollux's repair, elimination of offspring equal
///   to a member of the population or to an earlier offspring; up to 100 mating rounds to reach the count
///   (none new: the search stops). Survival: non-dominated sorting and crowding distance (pymoo's formula:
///   extremes and fronts of ≤ 2 points infinite — stored as 1e14 —, duplicate objective vectors 0; ties at
///   random). ("n_gen", N): the initial population is generation 1, N − 1 offspring generations follow.
/// - Pollux's mutation of an offspring: (1) each job row is reset to the current allocation with probability
///   0.1; (2) with probability 0.1 a row has each of its entries zeroed with probability 0.1; (3) with the
///   free GPUs of each vnode computed after (1)-(2), an entry (j, v) grows with probability p1 + p2 − p1·p2,
///   p1 = [v has a free GPU] / #vnodes with a free GPU, p2 = [job j is on v and v has a free GPU] / #such
///   vnodes of j, to a uniform integer between its value and the vnode's GPUs.
/// - Pollux's repair: (1) on each vnode only the first distributed job (in row order; distributed = on ≥ 2
///   vnodes before the repair) keeps its GPUs; (2) a job's vnodes are visited in a random order and keep GPUs
///   until the job has max_replicas and spans at most `max_job_vnodes` (16) vnodes; (3) vnode capacity: jobs
///   in row order keep their GPUs until the vnode is full.
/// - Result: the final front's individual with the lowest F0 (ties: lower F1, then first).
///
/// Departures: random numbers come from std::mt19937_64, not numpy (runs differ from the reference's, the
/// operators' distributions do not); rigid jobs (a Pollux run with `--force-category rigid`; the published
/// Pollux has only elastic jobs) get two extra repair steps: (0) a partial rigid row first grows to its count
/// (its own vnodes, then the following ones) — mutation alone almost never writes the exact count of a rigid
/// job spanning several vnodes —, and (4) a rigid row left below its count is emptied, like the artifact's
/// `pollux_unaware_fix.py` empties rows below `min_replicas`. Pollux's problem has no constraint violations
/// (the repair makes every individual feasible), so pymoo's constraint handling is not implemented.

#include <sia/sim/random.hpp>

#include <cstdint>
#include <functional>
#include <random>
#include <utility>
#include <vector>

namespace sia::sim::detail {

/// @brief One individual: GPUs of job j on virtual node v at `x[j * vnodes + v]` (jobs in Pollux's order,
/// vnodes in cluster order).
using PolluxState = std::vector<int>;

/// @brief The optimisation problem of one Pollux round.
struct PolluxGaProblem {
  std::vector<int> vnode_gpus;    ///< GPUs of each virtual node
  std::vector<int> max_replicas;  ///< per job, ≥ 1
  std::vector<char> rigid;        ///< per job: needs exactly max_replicas GPUs or none
  /// Per (job, vnode), jobs × vnodes: 0 = the job may not use the vnode (a pipeline job on a type without its
  /// pipelines); empty = every job may use every vnode. The repair empties forbidden entries first.
  std::vector<char> allowed;
  PolluxState base;                    ///< current allocation (jobs × vnodes)
  std::vector<double> restart_factor;  ///< per job, multiplies the scaled speedup when its row differs from `base`
  double p = -1.0;                     ///< power-mean exponent (< 0)
  double speedup_scale = 1.0;          ///< F0 scales speedups by this (Pollux: dominant share × vnodes)
  int max_job_vnodes = 16;             ///< repair: a job spans at most this many vnodes (Pollux's `max_nodes`)
  /// Raw speedup of job j on (nodes, replicas) with 1 ≤ nodes ≤ replicas ≤ max_replicas[j] (goodput over the
  /// fair-share goodput). Called at most once per (job, nodes, replicas) per run (memoised).
  std::function<double(int job, int nodes, int replicas)> speedup;

  [[nodiscard]] int jobs() const noexcept { return static_cast<int>(max_replicas.size()); }
  [[nodiscard]] int vnodes() const noexcept { return static_cast<int>(vnode_gpus.size()); }
};

/// @brief Objectives of an individual (both minimised): F0 = −fitness, F1 = −cluster utility.
struct PolluxObjectives {
  double neg_fitness = 0.0;
  double neg_utility = 0.0;
};

/// @brief pymoo-style NSGA-II options.
struct PolluxGaOptions {
  int population = 100;
  int generations = 100;
  int max_mating_rounds = 100;         ///< pymoo Mating.n_max_iterations
  double crossover_probability = 0.9;  ///< pymoo's Crossover default: other pairs pass to mutation unchanged
};

/// @brief Result of a run.
struct PolluxGaResult {
  PolluxState best;  ///< lowest F0 on the final front (ties: lower F1, then first)
  PolluxObjectives best_objectives;
  std::vector<PolluxState> front;       ///< the final non-dominated front (pymoo's `result.X`: next round's seeds)
  std::vector<PolluxState> population;  ///< the whole final population
  long evaluations = 0;                 ///< individuals evaluated
  int generations_run = 0;              ///< offspring generations bred
};

/**
 * @brief Fronts of a bi-objective minimisation (0 = non-dominated), O(N log N): points sorted by (f0, f1), each
 * placed by binary search on the first front whose last point does not dominate it. Equal points share a front.
 */
[[nodiscard]] std::vector<int> pollux_nondominated_ranks(const std::vector<std::pair<double, double>>& f);

/// @brief pymoo's crowding distance of one front (extremes and fronts of ≤ 2 points: 1e14; duplicates: 0).
[[nodiscard]] std::vector<double> pollux_crowding_distance(const std::vector<std::pair<double, double>>& f);

/// @brief NSGA-II with Pollux's operators on one problem. Deterministic given the generator's state.
class PolluxGenetic {
 public:
  PolluxGenetic(PolluxGaProblem problem, PolluxGaOptions options, std::mt19937_64& rng);

  /// Pollux's repair, in place (steps in the file comment): (0) rigid rows grow to their count; (1) one
  /// distributed job per vnode, the first in row order; (2) max replicas and max vnodes per job, vnodes visited
  /// in a random order; (3) vnode capacity, jobs in row order; (4) rigid rows below their count are emptied.
  void repair(PolluxState& x);
  /// Single-point crossover over jobs: k uniform in [0, J); child 0 = a[0,k) + b[k,J), child 1 the reverse.
  [[nodiscard]] std::pair<PolluxState, PolluxState> crossover(const PolluxState& a, const PolluxState& b);
  /// Pollux's mutation (reset to the current allocation, zero out, grow towards free GPUs).
  void mutate(PolluxState& x);
  /// Objectives of a state (memoised speedups).
  [[nodiscard]] PolluxObjectives evaluate(const PolluxState& x);
  /// Fitness (power mean of the scaled speedups incl. restart factors) of a state.
  [[nodiscard]] double fitness(const PolluxState& x) { return -evaluate(x).neg_fitness; }
  /// The whole search from the given seeds (each must have jobs × vnodes entries; others are ignored).
  [[nodiscard]] PolluxGaResult run(const std::vector<PolluxState>& seeds);

  [[nodiscard]] const PolluxGaProblem& problem() const noexcept { return problem_; }

 private:
  struct Individual {
    PolluxState x;
    std::uint64_t hash = 0;
    PolluxObjectives f;
    int rank = 0;
    double crowding = 0.0;
  };
  struct Terms {
    double power = 0.0;  ///< (scaled speedup · factor + 1e-3)^p
    double raw = 0.0;    ///< raw speedup (cluster utility)
  };
  /// A set of 64-bit state hashes in one flat array (open addressing), cleared per generation without freeing:
  /// the search asks it about every offspring.
  class HashSet {
   public:
    void clear(std::size_t expected);
    [[nodiscard]] bool contains(std::uint64_t h) const noexcept;
    void insert(std::uint64_t h);

   private:
    [[nodiscard]] std::size_t find(std::uint64_t h) const noexcept;
    std::vector<std::uint64_t> slots_{std::vector<std::uint64_t>(16, 0)};  // 0 = empty (hash 0: has_zero_)
    bool has_zero_ = false;
    std::size_t used_ = 0;
  };
  [[nodiscard]] Terms term(int job, int nodes, int replicas, bool changed);
  /// crossover() into the caller's buffers (same draws): no allocation for recycled ones.
  void crossover_into(const PolluxState& a, const PolluxState& b, PolluxState& c0, PolluxState& c1);
  [[nodiscard]] PolluxState take_state();  ///< an empty state buffer, recycled when one is spare
  void recycle(PolluxState&& x);           ///< keeps a state's buffer for later offspring
  void complete_rigid(int* row, int count, const char* allowed) const;  // allowed: per vnode, or nullptr
  // Defined here so that the search's loops inline them (they draw about 10^8 numbers on a long run).
  [[nodiscard]] std::uint64_t uniform(std::uint64_t n) { return uniform_below(rng_, n); }  ///< in [0, n)
  [[nodiscard]] double real() { return uniform_real(rng_); }                               ///< in [0, 1)
  void survive(std::vector<Individual>& pop, std::size_t n);
  [[nodiscard]] std::size_t tournament(const std::vector<Individual>& pop, std::size_t a, std::size_t b);

  PolluxGaProblem problem_;
  PolluxGaOptions options_;
  std::mt19937_64& rng_;
  int jobs_ = 0, vnodes_ = 0;
  std::vector<int> max_r_;                 ///< per job
  std::vector<std::size_t> table_offset_;  ///< per job: start of its (changed, nodes, replicas) term table
  std::vector<Terms> table_;               ///< memoised terms; power = NaN: not computed yet
  long evaluations_ = 0;
  // Scratch buffers (kept to avoid allocations).
  std::vector<int> perm_, col_, nz_, free_, grow_;
  std::vector<char> distributed_, used_;
  std::vector<int> row_n_, row_total_;  ///< repair: vnodes and GPUs of each row after its step (1)
  std::vector<double> log_q1_;          ///< mutate: log1p(−1/k) by k (0 and 1: unused)
  std::vector<PolluxState> spare_;      ///< buffers of discarded individuals (the search breeds 10^4 per round)
  HashSet seen_;
};

}  // namespace sia::sim::detail
