#pragma once
// Private to the native backend: exact dynamic programme over the core of near-tied jobs.
//
// With the base choice b = the best item of every class at prices lambda, every solution x has
// value L(lambda) - cost(x) with
//     cost(x) = sum of reduced-value losses delta + lambda·(R - d(x)),
//     d(x) = usage deviation from the base,  R = cap - usage(b),
// and is feasible iff d(x) <= R. A solution better than the incumbent by more than the tolerance
// has cost < Delta = L - target, so only moves with delta < Delta matter (reduced-cost fixing: with
// few capacity rows and many jobs almost every job is decided by the prices) and d stays in a
// small box around R: states are the integer deviation vectors reachable with partial cost below
// the budget, pruned by what the remaining layers can still add or remove. Each member of a class
// is one layer; members of a class share their moves, and states merge by deviation, so
// interchangeable jobs never multiply the states. Exact, pseudo-polynomial in the few rows.
//
// Iterative widening: a pass with budget D enumerates every solution of cost < D; a solution found
// is optimal, none found proves OPT <= L - D. Small budgets are cheap, so they grow geometrically.
#include <functional>
#include <optional>
#include <vector>

#include "milp/native/deadline.hpp"
#include "milp/native/relaxation.hpp"

namespace sia::detail::native {

struct DpOutcome {
  enum class Kind { not_applicable, settled, gave_up };
  Kind kind = Kind::not_applicable;
  bool improved = false;  ///< `counts` holds a better solution than the incumbent
  Counts counts;          ///< the improved solution
  double value = -kInf;
  double bound = -kInf;  ///< settled: nothing beats max(value, incumbent) by more than the tolerance
                         ///< gave up: a proven upper bound on the optimum (L - largest budget done)
  std::size_t peak_states = 0;
};

/// The relaxation at the prices a search works at, as Relaxation::evaluate(lam, nullptr, &best) gives
/// it: solve_core_dp and modular_bounds take it from a caller that has it instead of evaluating again
/// (the same numbers: the evaluation is a function of the prices).
struct AtPrices {
  double L = -kInf;
  std::vector<int> best;
};

/// Are all of `p`'s usages integers of magnitude at most `limit`? (What the core DP, limit 1e6, and
/// the modular bounds, 1e9, need.)
[[nodiscard]] bool integer_usages(const Problem& p, double limit);

struct DpLimits {
  Deadline deadline;
  std::size_t max_states = 2'000'000;  ///< per layer
  std::size_t max_trail = 6'000'000;   ///< back-pointers kept for the solution
};

/**
 * @brief Settles the problem (no bounds) at prices `lam` against the incumbent value `incumbent`
 * (-inf: none), with `tol(z)` the absolute gap accepted at value z. Applies when every usage is an
 * integer and the deviations fit in two 64-bit words. `min_cost`: a proven lower bound on every
 * solution's cost (e.g. modular_bounds()): the widening starts there.
 */
DpOutcome solve_core_dp(const Relaxation& rel, const std::vector<double>& lam, double incumbent,
                        const std::function<double(double)>& tol, const DpLimits& limits, bool debug,
                        double min_cost = 0.0, const AtPrices* at = nullptr);

}  // namespace sia::detail::native

namespace sia::detail::native {

/**
 * @brief A lower bound on the cost (see above) of every solution, from the group relaxation of
 * the capacity rows modulo M: with integer usages, R_k - d_k(x) >= 0 is an integer, so
 *     cost(x) >= sum delta(x) + sum_k lam_k * ((R_k - d_k(x)) mod M),
 * which depends on d only modulo M: a DP over at most M^K residue vectors. It ignores whether a
 * solution fits, and catches what the LP cannot see: a row that no cheap combination of moves
 * fills to the last GPU (parities, node sizes). Moves dearer than `budget` are left out, so the
 * result is min(budget, the DP's minimum). Only `rows` take part (the others' slack terms are
 * dropped, which keeps the bound valid). Returns 0 when it does not apply (fractional usages,
 * M^|rows| above `max_states`).
 */
double modular_cost_bound(const Relaxation& rel, const std::vector<double>& lam, double budget, int modulus,
                          const std::vector<int>& rows, std::size_t max_states = 1u << 16, double* work_left = nullptr);

/// The best of the modular bounds for moduli 2, 4, 8 and 16: on all rows when M^K states are few
/// enough, else on the rows with the highest prices (the other rows' slack terms are dropped,
/// which keeps the bound valid). Stops as soon as a bound reaches `budget`. The moduli share one
/// work budget (~5e7 steps, as one modulus had alone): with several capacity rows per type (rigid
/// remainders, node sizes that are no power of two) each modulus can come near it, and four
/// such passes cost half a second for a lift the core DP then finds in a millisecond. When every
/// modulus uses the same rows (at most 4) and their prices are non-negative, modulus 16's bound is
/// the largest of the four, bit for bit: it runs alone.
///
/// With node bounds `bounds` (a branch-and-bound node's, relaxation.hpp) the lift is that node's:
/// members move only to items their bounds allow, from the base items `at->best` (required: per
/// class its best allowed item, a forced item for a class of one member whose item is forced), and
/// `at->L` is the node's relaxation at `lam`. Bounds on counts of classes of several members other
/// than excluded items are not handled: the lift is 0 there.
double modular_bounds(const Relaxation& rel, const std::vector<double>& lam, double budget,
                      const AtPrices* at = nullptr, const Bounds* bounds = nullptr);

/// The base items modular_bounds() needs at a node with bounds `b`: per class its first allowed item
/// (hi > 0) of largest reduced value at `lam`, or for a class of one member its forced item (lo > 0).
/// False (no lift at this node) where a class of several members has general count bounds or a
/// class has no allowed item.
bool node_base_items(const Relaxation& rel, const std::vector<double>& lam, const Bounds& b, std::vector<int>& base);

}  // namespace sia::detail::native
