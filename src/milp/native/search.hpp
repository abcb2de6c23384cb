#pragma once
// Private to the native backend: the exact search for the round's multiple-choice knapsack
// (problem.hpp), in this order:
//   1. symmetry: interchangeable jobs become one class with a multiplicity (classes.hpp);
//   2. the LP relaxation in price space from the warm prices, if any (relaxation.hpp);
//   3. a feasible solution near the LP: the warm solution and the repair heuristic (heuristic.hpp);
//      with a 1e-4 gap on a large round this usually closes the gap at once;
//   4. otherwise the exact dynamic programme over the near-tied core (core_dp.hpp);
//   5. otherwise (fractional usages, many rows, too many states, no solution yet) branch and bound
//      over class counts (branch.hpp).
// Whatever stops the search, the result is the best solution found with a proven bound.
#include <functional>
#include <optional>
#include <vector>

#include "milp/native/deadline.hpp"
#include "milp/native/problem.hpp"
#include "milp/native/relaxation.hpp"

namespace sia::detail::native {

struct SearchOptions {
  Deadline deadline;
  long long max_nodes = 2'000'000;
  int threads = 0;       ///< 0: all cores
  bool symmetry = true;  ///< merge interchangeable groups into classes
  bool use_dp = true;    ///< try the core DP before branching
  bool debug = false;    ///< timings and sizes on stderr
  /// Solve the LP relaxation to optimality for its prices (MilpParams::lp_duals). When false the
  /// price search stops once its bound proves the incumbent.
  bool exact_prices = true;
};

struct SearchResult {
  bool feasible = false;            ///< a solution exists in `choice`
  bool proven = false;              ///< optimal within the tolerance, or infeasible
  std::vector<int> choice;          ///< item per group (full problem)
  double value = -kInf;             ///< internal value incl. fixed_value
  double bound = kInf;              ///< proven upper bound (internal)
  double root_bound = kInf;         ///< the LP relaxation's value
  std::vector<double> prices;       ///< lambda at the LP optimum (or the best found, see prices_exact)
  bool prices_exact = false;        ///< `prices` minimise the LP relaxation
  std::vector<double> group_duals;  ///< per group: its best reduced value at those prices
  long long nodes = 0;
  bool hit_limit = false;
  // Statistics.
  int classes = 0;
  int lp_iterations = 0;
  bool dp_used = false, bnb_used = false;
  bool lp_located =
      false;  ///< a warm start its first evaluation left unproven, proven at the LP's minimum located first
  /// ... by the warm solution repaired there over the located region's active classes only
  bool lp_located_restricted = false;
  std::size_t dp_peak_states = 0;
};

/**
 * @brief Solves `p` to the absolute tolerance `tol(value)`. `warm_prices` (K values) start the
 * price search; `warm_choice` (an item per group, -1 where unknown) is tried as an incumbent,
 * completed with each group's best item where unknown.
 */
SearchResult solve_mckp(const Problem& p, const std::function<double(double)>& tol, const SearchOptions& options,
                        const std::vector<double>* warm_prices, const std::vector<int>* warm_choice);

}  // namespace sia::detail::native
