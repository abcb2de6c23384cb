#pragma once
// Private to the native backend: branch and bound over class counts.
//
// A node bounds how many members of a class may take each item (lo <= n_ci <= hi). Its bound is
// the LP relaxation, minimised in price space from the parent's prices (relaxation.hpp); the LP's
// primal solution comes from the master's duals, and the node branches on its most fractional
// count: n_ci <= floor(x) or n_ci >= ceil(x). For a class of one job this is the usual binary
// branching; for a class of a thousand identical jobs it is one general-integer variable per item,
// never a permutation of the jobs. Reduced-cost fixing bounds the counts (a member moved off its
// best item loses delta, so at most (L - target) / delta members can), the primal heuristic runs
// at every node, and nodes whose relaxation cannot fit the capacities are cut by the feasibility
// Lagrangian (Farkas). Depth first, the child nearer the LP value first.
#include <functional>
#include <optional>
#include <vector>

#include "milp/native/deadline.hpp"
#include "milp/native/relaxation.hpp"

namespace sia::detail::native {

struct BranchLimits {
  Deadline deadline;
  long long max_nodes = 2'000'000;
};

struct BranchOutcome {
  bool completed = false;  ///< the whole tree was searched (else a limit stopped it)
  bool improved = false;   ///< `counts`/`value` beat the incumbent passed in
  Counts counts;
  double value = -kInf;
  double bound = kInf;  ///< proven upper bound on the optimum (completed: max(value, pruned))
  long long nodes = 0;
  long long lift_pruned = 0;  ///< nodes pruned by their modular bound (core_dp.hpp), not by their LP
};

/**
 * @brief Searches from the root with prices `lam` (the root LP optimum) and root bound `root_L`,
 * against the incumbent (`incumbent`, -inf: none; `incumbent_counts` may be empty).
 */
BranchOutcome branch_and_bound(const Relaxation& rel, const std::vector<double>& lam, double root_L, double incumbent,
                               const Counts& incumbent_counts, const std::function<double(double)>& tol,
                               const BranchLimits& limits, bool debug);

}  // namespace sia::detail::native
