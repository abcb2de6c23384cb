#pragma once
/// @file sim/time_sharing.hpp
/// @brief Gavel's round-based scheduling mechanism (OSDI 2020 §5; reference §6.5): turns the time fractions of an
/// allocation LP (Gavel's max-sum-throughput, Themis's finish-time fairness) into whole-GPU allocations for one
/// round. Also the whole-GPU placement helper the inelastic policies share.

#include <sia/sim/policy.hpp>

#include <cstdint>
#include <map>
#include <span>
#include <vector>

namespace sia::sim {

/**
 * @brief Places `need` GPUs on one GPU type: keeps `previous` (node index, GPUs) pairs when all of them are still
 * free, otherwise takes free GPUs node by node in order. Updates `free_per_node` and returns the chosen pairs
 * (empty when the type has fewer than `need` free GPUs — nothing is taken then).
 */
[[nodiscard]] std::vector<std::pair<int, int>> place_whole_gpus(std::vector<int>& free_per_node, int need,
                                                                const std::vector<std::pair<int, int>>& previous);

/**
 * @brief Gavel's time sharing: every job has a clock per GPU type (a new job starts with `interval/2` on every
 * type and advances the type's clock by the same), fraction = job time / type time, priority = x / fraction
 * (1e9·x when the fraction is 0, 0 when x is 0); all (job, type) pairs are scheduled greedily by (priority, x)
 * descending — each job once, with its full GPU count, when the type has that many free GPUs — on its previous
 * nodes when they are all free, else on free GPUs node by node. A scheduled job adds `interval` to its and the
 * type's clock. Finished jobs' time stays in the type clocks (like the reference).
 */
class TimeSharingRounds {
 public:
  explicit TimeSharingRounds(double interval_s);

  /**
   * @brief One round.
   * @param jobs this round's jobs (departed jobs are forgotten)
   * @param gpus GPUs each job needs (≥ 1)
   * @param x time fractions, jobs × types (rows may be all zero)
   * @return one allocation per job (empty = not scheduled); never more GPUs than a type or node has.
   */
  [[nodiscard]] std::vector<SimAllocation> schedule(const SimCluster& cluster, std::span<SimJob* const> jobs,
                                                    const std::vector<int>& gpus,
                                                    const std::vector<std::vector<double>>& x);
  /// Priorities of the last round (jobs × types).
  [[nodiscard]] const std::vector<std::vector<double>>& last_priorities() const noexcept { return last_priority_; }

 private:
  double interval_;
  struct JobState {
    std::vector<double> time;  ///< per type: time scheduled there (+interval/2 at arrival)
    int type = -1;
    std::vector<std::pair<int, int>> nodes;  ///< (node index within the type, GPUs) of the previous round
  };
  std::map<std::uint64_t, JobState> jobs_;
  std::vector<double> cluster_time_;  ///< per type, never decreases
  std::vector<std::vector<double>> last_priority_;
};

}  // namespace sia::sim
