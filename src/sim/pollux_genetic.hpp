#pragma once
/// @file sim/pollux_genetic.hpp
/// @brief Pollux's published search (adaptdl `pollux.py`): pymoo's NSGA-II over jobs × virtual-node GPU matrices
/// with Pollux's crossover, mutation and repair. Private to the simulator (used by PolluxPolicy and its tests).
///
/// What pymoo does and how it is reproduced here (see also pollux_policy.hpp):
/// - Initialisation: the seeds (previous final population adapted to this round's jobs, then the current
///   allocation) are repaired, duplicates removed, evaluated, and ranked (non-dominated sorting + crowding
///   distance). Like pymoo with an array sampling, the population is NOT padded: when fewer than `population`
///   seeds are given (first round: one), the first generation's 100 offspring fill it (survival keeps up to 100).
/// - Generation: mating produces `population` offspring — binary tournaments (pymoo `comp_by_dom_and_crowding`:
///   Pareto dominance, then larger crowding distance, then a coin flip) over concatenated random permutations,
///   single-point crossover over jobs (applied to a pair with pymoo's default probability 0.9, otherwise the
///   parents are copied), mutation, repair, and elimination of offspring equal to a member of the population or
///   to an earlier offspring; up to 100 mating rounds are tried to reach the count (none new: the search stops).
///   Parents + offspring are reduced to `population` by non-dominated sorting and crowding distance (pymoo's
///   formula: extremes and fronts of ≤ 2 points get 1e14, duplicate objective vectors 0; ties broken at random).
/// - `generations` counts like pymoo's ("n_gen", N) termination: the initial population is generation 1,
///   so N − 1 offspring generations are bred.
/// - Result: the individual with the lowest (F0, F1) — the highest fitness on the non-dominated front.
///
/// Departures and assumptions (neither Pollux's nor pymoo's source is part of the reference material; this port
/// follows their behaviour as described for issue 6): random numbers come from std::mt19937_64, not numpy; the mutation rule (each entry with
/// probability 1/(jobs × vnodes), pymoo's 1/n_var, to a uniform value in [0, vnode GPUs]) and the crossover
/// probability 0.9 are assumptions (with 1/vnodes instead, Philly restarts are 2.5× the paper's Pollux);
/// Pollux's shuffle in repair step (1) is drawn as one uniform pick of the job that keeps the vnode (the same
/// distribution); the repair's step (4) (rigid jobs cut by the capacity step are emptied) is added because a
/// rigid job cannot run on fewer GPUs, and so is step (0): a rigid job's partial row first grows to its count
/// (its own vnodes, then the following ones) — mutation alone almost never writes the exact count of a rigid
/// job spanning several vnodes, and such jobs never started; the whole final population seeds the next round (adaptdl may keep only
/// the optimum set `result.X`); Pollux's problem has no constraint violations (the repair makes every individual
/// feasible), so pymoo's constraint handling never comes into play and is not implemented.

#include <cstdint>
#include <functional>
#include <random>
#include <utility>
#include <vector>

namespace sia::sim::detail {

/// @brief One individual: GPUs of job j on virtual node v at `x[j * vnodes + v]` (jobs FIFO, vnodes in cluster order).
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
  std::vector<double> restart_factor;  ///< per job, multiplies the speedup when its row differs from `base`
  double p = -1.0;                     ///< power-mean exponent (< 0)
  /// Speedup of job j on (nodes, replicas) with 1 ≤ nodes ≤ replicas ≤ max_replicas[j], already scaled, before
  /// the restart factor. Called at most once per (job, nodes, replicas) per run (memoised).
  std::function<double(int job, int nodes, int replicas)> speedup;

  [[nodiscard]] int jobs() const noexcept { return static_cast<int>(max_replicas.size()); }
  [[nodiscard]] int vnodes() const noexcept { return static_cast<int>(vnode_gpus.size()); }
};

/// @brief Objectives of an individual (both minimised): F0 = −fitness, F1 = virtual nodes in use.
struct PolluxObjectives {
  double neg_fitness = 0.0;
  int vnodes_used = 0;
};

/// @brief pymoo-style NSGA-II options.
struct PolluxGaOptions {
  int population = 100;
  int generations = 100;
  int max_mating_rounds = 100;         ///< pymoo Mating.n_max_iterations
  double mutation_probability = 0.0;   ///< per entry; 0 = 1 / (jobs × vnodes) (pymoo's 1/n_var)
  double crossover_probability = 0.9;  ///< pymoo's Crossover default: other pairs pass to mutation unchanged
};

/// @brief Result of a run.
struct PolluxGaResult {
  PolluxState best;  ///< highest fitness on the final front (ties: fewer vnodes, then first)
  PolluxObjectives best_objectives;
  std::vector<PolluxState> population;  ///< final population (seeds of the next round)
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

  /// Pollux's repair, in place: (0) a rigid job's partial row grows to its count; (1) on each vnode at most one distributed job (a job on ≥ 2 vnodes before the
  /// repair) keeps its GPUs, chosen at random; (2) a job's GPUs are capped at max_replicas (first vnodes keep
  /// theirs), a rigid job with fewer than its count is emptied; (3) vnode capacity: jobs in a random order keep
  /// their GPUs until the vnode is full; (4) a rigid job left with fewer than its count is emptied.
  void repair(PolluxState& x);
  /// Single-point crossover over jobs: k uniform in [0, J); child 0 = a[0,k) + b[k,J), child 1 the reverse.
  [[nodiscard]] std::pair<PolluxState, PolluxState> crossover(const PolluxState& a, const PolluxState& b);
  /// Each entry (job, vnode) is replaced, with probability 1 / (jobs × vnodes) unless set, by a uniform integer
  /// in [0, vnode GPUs].
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
  [[nodiscard]] double term(int job, int nodes, int replicas, bool changed);
  void complete_rigid(int* row, int count, const char* allowed) const;  // allowed: per vnode, or nullptr
  [[nodiscard]] std::uint64_t uniform(std::uint64_t n);                 ///< uniform integer in [0, n)
  [[nodiscard]] double real();                                          ///< uniform in [0, 1)
  void survive(std::vector<Individual>& pop, std::size_t n);
  [[nodiscard]] std::size_t tournament(const std::vector<Individual>& pop, std::size_t a, std::size_t b);

  PolluxGaProblem problem_;
  PolluxGaOptions options_;
  std::mt19937_64& rng_;
  int jobs_ = 0, vnodes_ = 0;
  std::vector<int> max_r_;                 ///< per job
  std::vector<std::size_t> table_offset_;  ///< per job: start of its (changed, nodes, replicas) term table
  std::vector<double> table_;              ///< (speedup·factor + 1e-3)^p, NaN = not computed yet
  long evaluations_ = 0;
  // Scratch buffers of repair() (kept to avoid allocations).
  std::vector<int> perm_, col_, start_, end_, list_, dcount_;
  std::vector<char> distributed_, used_;
};

}  // namespace sia::sim::detail
