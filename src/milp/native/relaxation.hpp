#pragma once
// Private to the native backend: the LP relaxation of the round, solved exactly in the space of
// the capacity rows' prices (a few dimensions: one or two rows per GPU type).
//
// For prices lambda >= 0 on the K capacity rows,
//     L(lambda) = fixed + cap·lambda + sum_c max over admissible counts n_c of sum_i n_ci (v_i - a_i·lambda)
// bounds every feasible solution from above (class c has mult_c interchangeable members, n_ci of
// them take item i, sum_i n_ci = mult_c, lo_ci <= n_ci <= hi_ci in a branch-and-bound node). The
// inner maximum is a greedy fill by reduced value, so L is evaluated in one pass over the items,
// in parallel blocks (parallel.hpp). Its minimum over lambda equals the LP relaxation (the inner
// problem has the integrality property); L is convex piecewise linear in K dimensions, and
// Kelley's cutting-plane method with a (K+1)-variable master LP minimises it exactly: a basic LP
// optimum splits at most K + 1 classes, so the bound is almost tight for large rounds.
//
// The master's duals give the LP's primal solution as a convex combination of the inner
// solutions at the cuts' prices (Dantzig-Wolfe): the branch and bound branches on its fractional
// counts.
#include <chrono>
#include <limits>
#include <optional>
#include <vector>

#include "milp/native/classes.hpp"
#include "milp/native/deadline.hpp"
#include "milp/native/parallel.hpp"
#include "milp/native/problem.hpp"

namespace sia::detail::native {

using Clock = std::chrono::steady_clock;
inline constexpr double kInf = std::numeric_limits<double>::infinity();

/// Count bounds of a branch-and-bound node, per item of the representatives: lo <= n_ci <= hi.
/// `bounded[c]` says how class c is restricted: 0 free (0 <= n_ci <= mult_c, lo/hi unused),
/// 1 items excluded only (lo = 0, hi in {0, mult_c}: a best-item scan skipping excluded items),
/// 2 general (greedy fill).
struct Bounds {
  std::vector<int> lo, hi;    ///< per problem item (items of representatives only)
  std::vector<char> bounded;  ///< per class: 0, 1 or 2

  /// Free bounds for every class of `cls` over the items of `p`.
  void reset(const Problem& p, const Classes& cls);
  /// Recomputes bounded[c] from lo/hi (after a change to class c's bounds).
  void classify(const Problem& p, const Classes& cls, int c);
};

/// An assignment of counts: per problem item of the representatives, how many members take it.
using Counts = std::vector<int>;

struct PriceEval {
  double L = -kInf;          ///< the Lagrangian bound (-inf: no admissible assignment)
  std::vector<double> grad;  ///< cap - usage of the inner solution (a subgradient)
};

/// Screening for a box of prices [lo, hi] (Relaxation::screen): a free class whose best item stays
/// the best for every price vector of the box (its least reduced value there beats every other
/// item's largest) contributes a linear term there, summed once; only the other ("active") classes
/// are visited by Relaxation::evaluate_in(). Near the optimum, most classes are settled: evaluations
/// cost a few percent of a full one.
struct PriceScreen {
  std::vector<double> lo, hi;
  std::vector<int> active;        ///< classes evaluated item by item
  double fixed_value = 0.0;       ///< sum over settled classes of mult * value of their item
  std::vector<double> fixed_use;  ///< sum over settled classes of mult * usage of their item
  /// Per class its candidates cand[cand_begin[c], cand_begin[c + 1]): an active class's items, in
  /// order, but those whose value is below another's everywhere in the box; a settled class's item.
  std::vector<int> cand_begin, cand;
  /// Per candidate: its value, and its row and amount when it uses one row (else row -1).
  std::vector<double> cand_value, cand_amount;
  std::vector<int> cand_row;
  [[nodiscard]] bool contains(const std::vector<double>& lam) const {
    for (std::size_t k = 0; k < lam.size(); ++k)
      if (lam[k] < lo[k] || lam[k] > hi[k]) return false;
    return true;
  }
};

/// What a screen (Relaxation::screen) may read of a class instead of its items, from the reduced
/// values at prices `at` (warm_values()' pass over the items; every amount >= 0, every price of
/// `at` >= 0): per class (`cls`) its best item's value `top`, the largest value of its other items
/// `second` (-inf: none), and of its items the largest |value| `vabs` and the largest price of its
/// usage at `at`, `cost` (value less reduced value, at least 0); `best` per class its first item of
/// largest value. An item's value moves from `at` by at most its cost times the largest relative
/// price change (max_k |lambda_k - at_k| / at_k): a class whose gap top - second exceeds twice that
/// over a box (and a margin for rounding) is settled there on its item `best` — what the screen
/// finds from the items, the same bits.
struct ScreenHint {
  struct Class {
    double top, second, vabs, cost;
  };
  const std::vector<double>* at = nullptr;
  const std::vector<Class>* cls = nullptr;
  const std::vector<int>* best = nullptr;
};

struct KelleyResult {
  std::vector<double> lam;  ///< best prices found
  double L = kInf;          ///< L(lam)
  double lower = -kInf;     ///< the master's lower bound on min L (converged: lower ~ L)
  bool infeasible = false;  ///< no admissible assignment at all (counts contradict)
  int iterations = 0;
  /// minimise_locally(): regions narrowed after a move (too many classes active where it went).
  int narrowed = 0;
  // Convex combination of the inner solutions that the last master found optimal.
  std::vector<std::vector<double>> cut_lam;
  std::vector<double> cut_weight;
  /// The last screen built, when its box contains lam: evaluate() at lam is then
  /// Relaxation::evaluate_with() on it, the same bits.
  std::optional<PriceScreen> screen;
};

class Relaxation {
 public:
  Relaxation(const Problem& p, const Classes& c, const Parallel& par) : p_(p), c_(c), par_(par) {}

  [[nodiscard]] const Problem& problem() const noexcept { return p_; }
  [[nodiscard]] const Classes& classes() const noexcept { return c_; }
  [[nodiscard]] const Parallel& parallel() const noexcept { return par_; }

  /// Reduced value v_i - a_i·lambda.
  [[nodiscard]] double reduced(int it, const double* lam) const noexcept {
    const auto iu = static_cast<std::size_t>(it);
    double r = p_.value[iu];
    for (int q = p_.use_begin[iu]; q < p_.use_begin[iu + 1]; ++q)
      r -= lam[p_.use_row[static_cast<std::size_t>(q)]] * p_.use_val[static_cast<std::size_t>(q)];
    return r;
  }

  /// L(lambda) and a subgradient. When `best` is given it receives per class the item that takes
  /// the members left after the lower bounds (the best admissible item: all members of a free class).
  [[nodiscard]] PriceEval evaluate(const std::vector<double>& lam, const Bounds* b,
                                   std::vector<int>* best = nullptr) const;

  /// evaluate(lam, nullptr, &best), the same bits, from what the caller already has: `red`, every
  /// representative's item's reduced value at lam (reduced()), and `best`, per class its first item
  /// of largest reduced value (-1: none). A pass over the classes instead of their items (the warm
  /// start has both: the LP's first evaluation at its prices is then free).
  [[nodiscard]] PriceEval evaluate_from(const std::vector<double>& lam, const std::vector<double>& red,
                                        const std::vector<int>& best) const;

  /// The same with every value taken as 0: min over lambda in [0,1]^K of this L is < 0 exactly
  /// when no fractional assignment fits the capacities (Farkas), whatever the values.
  [[nodiscard]] PriceEval evaluate_feasibility(const std::vector<double>& lam, const Bounds* b) const;

  /// True when the LP relaxation under `b` is proven infeasible (by the feasibility Lagrangian).
  [[nodiscard]] bool lp_infeasible(const Bounds* b, const Deadline& deadline) const;

  /// The inner solution at lambda as counts (greedy fill by reduced value, ties to the lower item).
  /// Returns false when some class has no admissible assignment.
  bool assign(const std::vector<double>& lam, const Bounds* b, Counts& count) const;

  /// A box containing an optimal price vector (no price exceeds what one unit of the row can earn,
  /// plus what groups that must choose can lose), so the master LP stays bounded.
  [[nodiscard]] std::vector<double> price_box() const;

  /// Minimises L from lam0 within the box. Stops when converged (relative 1e-10), when L <= target
  /// (the node can be pruned), after `max_iter` evaluations, or at the deadline. With `primal`
  /// the result carries the master's convex combination. `trust`: half-widths of a trust region
  /// around lam0 (a warm start that is probably close), grown as needed. `first`: evaluate(lam0, b)
  /// when the caller has it (lam0 within the box: the first iteration takes it instead of evaluating).
  KelleyResult minimise(std::vector<double> lam0, const std::vector<double>& box, const Bounds* b, double target,
                        int max_iter, const Deadline& deadline, bool primal, const std::vector<double>* trust = nullptr,
                        const PriceEval* first = nullptr) const;

  /// The LP's minimum from lam0 (within the box) region by region instead of by Kelley's tail over
  /// all of L: a region [lam0 - radius, lam0 + radius] is screened (Screen) and its model — the
  /// settled classes' items, the active classes' max over their candidates — is minimised over the
  /// region by Kelley's method, each evaluation visiting the active classes' candidates only. The
  /// model is L inside the region and below L everywhere, and so are its cuts; when no edge of the
  /// region (0 and the box are the problem's own bounds) has a multiplier in the final master, the
  /// master's minimum is the cuts' minimum over the whole box, a lower bound on L's, and the best
  /// point's L (evaluate()'s bits, from the region's screen) meets it: that point minimises L.
  /// Otherwise the region moves to the master's minimiser, four times wider across the held edges
  /// (and half as wide again, up to twice, where more than `max_active` classes are active there).
  /// Returns that point with L there (`best`, when given, receives evaluate()'s best items there)
  /// and `lower` the master's bound; `lower` is -inf when it gives up (more than `max_active`
  /// classes active in the first region narrowed twice to a quarter, or in a moved one narrowed
  /// twice; a narrowed first region that does not hold the minimum; no convergence; eight regions;
  /// the deadline): the caller then runs minimise().
  /// `active`, when given: receives every class active in some region it screened (each once).
  KelleyResult minimise_locally(std::vector<double> lam0, const std::vector<double>& box, std::vector<double> radius,
                                int max_active, const Deadline& deadline, std::vector<int>* best = nullptr,
                                std::vector<int>* active = nullptr, const ScreenHint* hint = nullptr) const;

  /// The LP's primal counts from a KelleyResult's convex combination: per problem item of the
  /// representatives, sum_s w_s n_s (fractional). Only classes whose inner solutions differ are
  /// listed in `split` (the others are integral and equal to the inner solution at lam).
  void primal_counts(const KelleyResult& kr, const Bounds* b, std::vector<double>& x, std::vector<int>& split) const;

  /// Screening for a box of prices (PriceScreen).
  using Screen = PriceScreen;
  /// `hint`: the classes it shows settled in the box are taken as settled without reading their items.
  [[nodiscard]] Screen screen(const std::vector<double>& lo, const std::vector<double>& hi,
                              const ScreenHint* hint = nullptr) const;
  /// L and a subgradient at lam, which must lie in the screen's box (free classes only: no bounds).
  [[nodiscard]] PriceEval evaluate_in(const Screen& s, const std::vector<double>& lam) const;
  /// evaluate(lam, nullptr, best), the same bits, for lam in the screen's box: every class visited
  /// in the same order, but only its candidates (its first item of largest value is one of them).
  [[nodiscard]] PriceEval evaluate_with(const Screen& s, const std::vector<double>& lam,
                                        std::vector<int>* best = nullptr) const;

  /// Evaluations so far (statistics).
  [[nodiscard]] long long evaluations() const noexcept { return evaluations_; }

 private:
  // Greedy fill of class c with bounds; returns the class's reduced value, or -inf.
  double fill_bounded(int c, const double* lam, const Bounds& b, int* counts_out, int* best_out, double* usage,
                      bool zero_values = false) const;
  // evaluate() / evaluate_in() into `out` (its gradient's storage reused: minimise evaluates once
  // per iteration).
  void evaluate_impl(PriceEval& out, const std::vector<double>& lam, const Bounds* b, std::vector<int>* best,
                     bool zero_values) const;
  void evaluate_in_impl(PriceEval& out, const Screen& s, const std::vector<double>& lam) const;
  // The frame of evaluate_impl() and evaluate_with(): every class in blocks of a fixed size, each
  // block's sum and usage in the calling thread's scratch, the blocks added in order to
  // base + cap·lam (relaxation.cpp). pick(c, u, sum, bi) adds class c's term to the block's `sum`
  // and usages `u`, sets `bi` to its best item (the one taking the members left after the lower
  // bounds) and returns false when c has no admissible assignment (out.L then stays as it was).
  template <class Pick>
  void evaluate_blocks(PriceEval& out, const std::vector<double>& lam, std::vector<int>* best, double base,
                       Pick&& pick) const;
  // Class c's first candidate of largest reduced value at lam in screen s (bi; left as it is when c
  // has none) and that value.
  double best_candidate(const Screen& s, int c, const double* lam, int& bi) const noexcept {
    double bv = -kInf;
    for (int q = s.cand_begin[static_cast<std::size_t>(c)]; q < s.cand_begin[static_cast<std::size_t>(c) + 1]; ++q) {
      const auto qu = static_cast<std::size_t>(q);
      const int row = s.cand_row[qu];
      // (reduced(), the same operations: the value less each used row's price times its amount)
      const double r = row >= 0 ? s.cand_value[qu] - lam[row] * s.cand_amount[qu] : reduced(s.cand[qu], lam);
      if (r > bv) {
        bv = r;
        bi = s.cand[qu];
      }
    }
    return bv;
  }
  // Adds class c's members all taking item bi, of reduced value bv, to a block's sum and usages.
  void take_all(int c, int bi, double bv, double& sum, double* u) const noexcept {
    const double m = c_.mult[static_cast<std::size_t>(c)];
    sum += m * bv;
    for (int q = p_.use_begin[static_cast<std::size_t>(bi)]; q < p_.use_begin[static_cast<std::size_t>(bi) + 1]; ++q)
      u[p_.use_row[static_cast<std::size_t>(q)]] += m * p_.use_val[static_cast<std::size_t>(q)];
  }
  [[nodiscard]] double reduced_as(int it, const double* lam, bool zero_values) const noexcept {
    if (!zero_values) return reduced(it, lam);
    const auto iu = static_cast<std::size_t>(it);
    double r = 0.0;
    for (int q = p_.use_begin[iu]; q < p_.use_begin[iu + 1]; ++q)
      r -= lam[p_.use_row[static_cast<std::size_t>(q)]] * p_.use_val[static_cast<std::size_t>(q)];
    return r;
  }

  const Problem& p_;
  const Classes& c_;
  const Parallel& par_;
  mutable long long evaluations_ = 0;
};

}  // namespace sia::detail::native
