#pragma once
// Private to the round: a WarmStart (warm_start.hpp) turned into a backend's start
// (MilpParams::start_values or ReadingSolver::StartBits, and start_duals), and a solved round
// turned into the next WarmStart.
#include <sia/cluster.hpp>
#include <sia/job_spec.hpp>
#include <sia/milp/solver.hpp>
#include <sia/warm_start.hpp>

#include <memory>
#include <span>
#include <string>

#include "core/formulation.hpp"
#include "core/problem.hpp"
#include "core/round_cache.hpp"
#include "milp/reading_solver.hpp"

namespace sia::detail {

/// Problem::entry_of(i, config) on job i's entries `v` (sorted by configuration, each once): the
/// entry of configuration `config`, -1 when there is none; a search without a branch on its
/// comparisons.
[[nodiscard]] inline int entry_index(std::span<const Entry> v, int config) noexcept {
  if (v.empty()) return -1;
  // lower_bound by halving without a branch on the comparison (a conditional move): the
  // comparisons' outcomes are random, and each mispredicted branch cost more than the search.
  const Entry* base = v.data();
  std::size_t len = v.size();
  while (len > 1) {
    const std::size_t half = len / 2;
    base = base[half].config < config ? base + half : base;
    len -= half;
  }
  const Entry* const it = base + (base->config < config ? 1 : 0);
  return it != v.data() + v.size() && it->config == config ? static_cast<int>(it - v.data()) : -1;
}

/// Fills params.start_values (the warm allocation, for the jobs and configurations this round
/// still has; without one, the jobs' current configurations) and params.start_duals (the warm
/// prices of the capacity rows this round still has). With `bits`, the start is written there
/// instead (the same values, for a backend that takes them: ReadingSolver::CallerHints::start) and
/// start_values is left as it is.
void apply_warm_start(const WarmStart& warm, const Problem& pb, const ClusterSpec& cluster,
                      std::span<const JobSpec> jobs, const Formulation& f, MilpParams& params,
                      ReadingSolver::StartBits* bits = nullptr);

/// The WarmStart of a solved round, written in steps: the prices from the backend's duals of the
/// capacity rows (none when it gave none) at once, then each job's allocation as the round's pass
/// over the jobs (its decisions) comes to it — where the job's id is at hand: a pass of its own read
/// every JobSpec again, a cache miss per job —, with the round's rows `cache` (build_problem's
/// `next`; may be null).
class WarmStartWriter {
 public:
  WarmStartWriter(const Problem& pb, const ClusterSpec& cluster, std::size_t jobs, const Formulation& f,
                  const MilpResult& result, std::shared_ptr<RoundCache> cache);
  /// The next job (input order, every job once): its id, its configuration index (-1: none) and
  /// the entry of its Problem::valid row that is that configuration (the round's choice).
  void add(const std::string& id, int config, int entry);
  /// The warm start, once every job was added (the cache kept only then).
  [[nodiscard]] std::shared_ptr<const WarmStart> finish() &&;

 private:
  const Problem& pb_;
  const ClusterSpec& cluster_;
  std::shared_ptr<WarmStart> w_;
  std::shared_ptr<RoundCache> cache_;
};

}  // namespace sia::detail
