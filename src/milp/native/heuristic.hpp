#pragma once
// Private to the native backend: the primal heuristic. From the Lagrangian solution at prices
// lambda (every class on its best items, usually a little over capacity on the rows where the LP
// splits a class), repair the over-full rows with the moves that lose the least reduced value per
// unit of capacity freed, then spend the capacity left on moves that gain true value, most
// price-efficient first. Works on class counts, so thousands of identical jobs move in one step.
#include <vector>

#include "milp/native/relaxation.hpp"

namespace sia::detail::native {

/// Tolerance on capacity row k (absolute), the same everywhere in the backend.
[[nodiscard]] inline double cap_tolerance(double cap) noexcept { return 1e-9 * std::max(1.0, std::abs(cap)); }

/// Internal value of an assignment of counts (fixed value included).
[[nodiscard]] double counts_value(const Problem& p, const Classes& cls, const Counts& n);

/// True when the counts give every class exactly its members, respect `b` and the capacities.
/// `items`: per class the item the caller holds to be its one member's (repair()'s `items`), every
/// group its own class and no bounds: the counts are then checked through them (the same answer).
/// `usage`, with `items`: the rows' usage of `n` as a sum over the counts would give it (repair()'s
/// `usage_after`), taken instead of that sum.
[[nodiscard]] bool counts_feasible(const Problem& p, const Classes& cls, const Bounds* b, const Counts& n,
                                   const std::vector<int>* items = nullptr, const std::vector<double>* usage = nullptr);

/// Is `amount` a whole number in [0, 2^32]? Sums of fewer than 2^21 of them, and differences of
/// such sums, are exact in doubles: the same bits in any order.
[[nodiscard]] inline bool whole_amount(double amount) noexcept {
  // (Converted only when in range, where the conversion is defined.)
  return (amount >= 0.0) & (amount <= 0x1p32) && amount == static_cast<double>(static_cast<long long>(amount));
}

/**
 * @brief Builds a feasible assignment near the Lagrangian solution at `lam` (respecting `b`).
 * Returns false when the repair cannot reach feasibility (some class may have to take an item no
 * move reaches, e.g. forced jobs that do not fit: the branch and bound decides then).
 */
bool round_and_repair(const Relaxation& rel, const std::vector<double>& lam, const Bounds* b, Counts& counts,
                      double& value);

/// The same from the LP's primal counts `x` (per item, fractional): counts rounded down, the members
/// left to the largest fractional parts, then repaired. Follows the LP where it splits classes.
bool round_lp_and_repair(const Relaxation& rel, const std::vector<double>& lam, const Bounds* b,
                         const std::vector<double>& x, Counts& counts, double& value);

/// Reduced values v_i - a_i·lam of the representatives' items into `red`, per problem item (the
/// other items' places left as they were), in parallel blocks: the repair and the improvement look
/// each up many times. With `best`: per class also its first item of largest reduced value (-1 when
/// none is larger than -inf), as evaluate() picks it.
void reduced_values(const Relaxation& rel, const std::vector<double>& lam, std::vector<double>& red,
                    std::vector<int>* best = nullptr);

/// Per class, when every group is its own class: the item the warm start gives its member, and that
/// item's best improving move as improve() collects it from those counts (`to` -1: none), and the
/// largest reduced value of the class's other items (-inf: none). `row`: the one capacity row the
/// item uses, when it uses exactly one and by an amount above 0 (-1 otherwise); `bound`, then: the
/// repair's bound of the score of moving it off that row (ri >= other ? (ri - other) / amount : -inf).
struct WarmPicks {
  std::vector<int> item, to, row;
  std::vector<double> key, other, bound;
  std::vector<double> need;   ///< improve()'s Move::need of the picked item's move
  std::vector<double> value;  ///< the picked item's value
  /// Per class what a screen may read instead of its items (ScreenHint::cls), at the same prices.
  std::vector<ScreenHint::Class> hint;
};

/// reduced_values(rel, lam, red, &best) and, every group its own class, the warm start's `picks`
/// in the same pass over the items: a group keeps `warm_choice`'s item while its reduced value is
/// within 1e-9 (relative) of its best, else takes its best item (its first item when none is above
/// -inf). `box`: also what find_classes(p, par, false) left out of the classes (PriceBoxParts,
/// sized here), in the same pass (each group's items read from memory once for both).
void warm_values(const Relaxation& rel, const std::vector<double>& lam, std::vector<double>& red,
                 std::vector<int>& best, const std::vector<int>& warm_choice, WarmPicks& picks,
                 PriceBoxParts* box = nullptr);

/// The same from a given starting assignment `counts` (every class complete, within `b`, maybe
/// over capacity), e.g. the previous round's solution. `red`: reduced_values(rel, lam) when the
/// caller has them; `usage`: the rows' usage of `counts` when the caller has it, bit for bit the sum
/// over the counts other than 0 in item order of count × amount (moved from).
/// `picks`: warm_values()'s, when `counts` are its items (every group its own class, no bounds):
/// the improvement then collects anew only the moves of the classes the repair changed.
/// `bounded_queue` false: every candidate's move is found when its row's repair starts (the
/// definition, for tests; the default finds a move only when a bound of its score comes first,
/// with the same result). `items`: improve()'s (with `picks`).
/// `whole_usage`: `usage` sums whole amounts (whole_amount()) of fewer than 2^21 items; then, with
/// `usage_after`, the rows' usage of the final counts goes there when every item moved has whole
/// amounts too (the same bits as a sum over the counts: every sum and difference exact), else it is
/// left empty.
bool repair(const Relaxation& rel, const std::vector<double>& lam, const Bounds* b, Counts& counts, double& value,
            const std::vector<double>* red = nullptr, std::vector<double>* usage = nullptr,
            const WarmPicks* picks = nullptr, bool bounded_queue = true, std::vector<int>* items = nullptr,
            bool whole_usage = false, std::vector<double>* usage_after = nullptr);

/// Improves a feasible assignment in place by single moves that gain true value and fit. `red`:
/// reduced_values(rel, lam) when the caller has them.
/// `picks` with `changed` (per class): a class not changed holds its one member on `picks->item`,
/// whose move is `picks`' (what collecting it would find). `items`, with them: per class its item
/// of count other than 0 (the last such; -1: none), found while the value is summed.
/// `usage`: the rows' usage of `counts`, bit for bit the sum over them, of whole amounts (repair()'s
/// `whole_usage`): taken instead of that sum, and left as the usage of the final counts — emptied
/// when an item moved has amounts that are not whole.
void improve(const Relaxation& rel, const std::vector<double>& lam, const Bounds* b, Counts& counts, double& value,
             const std::vector<double>* red = nullptr, const WarmPicks* picks = nullptr,
             const std::vector<char>* changed = nullptr, std::vector<int>* items = nullptr,
             std::vector<double>* usage = nullptr);

/// Improves feasible counts `n` (every class complete, no bounds) by exchanges: in each of at most
/// `max_rounds` rounds, the single move of a member that fits or the pair of moves of two members
/// whose usage changes fit together (one freeing a row the other fills) gaining the most true value,
/// until none gains. Near the LP, rows are full to the last GPU and improve()'s single moves find
/// nothing, while one job giving up GPUs of a type another takes often gains (many-types at 2048
/// GPUs: 0.015-0.037 on incumbents 0.04-0.09 below the bound). True when `n` changed (it stays
/// feasible). `deadline`: checked before each round and every 4,096 pairs tried (a round not proven
/// at 100,000 GPUs has hundreds of thousands of moves); when it passes, the exchanges made so far stay.
bool improve_pairs(const Problem& p, const Classes& cls, Counts& n, int max_rounds, const Deadline* deadline = nullptr);

// Calls f(it, count) for every item of the representatives with a count other than 0, in item
// order (the classes' order: by first member, so by item). When every group is its own class (as in
// most rounds) those are all the items: the counts are then scanned eight at a time.
template <class F>
void for_counted(const Problem& p, const Classes& cls, const Counts& n, F&& f) {
  if (cls.size() == p.num_groups() && n.size() == p.value.size()) {
    const int* cv = n.data();
    const std::size_t ni = n.size();
    std::size_t b = 0;
    for (; b + 8 <= ni; b += 8) {
      int any = 0;
      for (std::size_t q = b; q < b + 8; ++q) any |= cv[q];
      if (any == 0) continue;
      for (std::size_t q = b; q < b + 8; ++q)
        if (cv[q] != 0) f(static_cast<int>(q), cv[q]);
    }
    for (; b < ni; ++b)
      if (cv[b] != 0) f(static_cast<int>(b), cv[b]);
    return;
  }
  for (int c = 0; c < cls.size(); ++c) {
    const int first = cls.first_item(p, c), e = first + cls.items(p, c);
    for (int it = first; it < e; ++it)
      if (n[static_cast<std::size_t>(it)] != 0) f(it, n[static_cast<std::size_t>(it)]);
  }
}

}  // namespace sia::detail::native
