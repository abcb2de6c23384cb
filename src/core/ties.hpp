#pragma once
// Private to the round: the tie rules (docs/reliability.md) that make the decision the same for
// every backend when several allocations have exactly the same objective.
#include <cstddef>
#include <vector>

#include "core/problem.hpp"

namespace sia::detail {

/**
 * @brief Interchangeable jobs (same usable configurations with bit-identical utilities and GPU
 * counts, same current configuration, same requirement) can swap configurations without changing
 * the objective, capacity use or constraints, so backends pick different permutations. The
 * group's chosen configurations are handed out in a canonical order instead: earlier jobs (input
 * order) get fewer GPUs first, then the lower GPU type index, then fewer nodes; "no GPUs" goes
 * last. Only permutes within a group: the objective is unchanged.
 */
void canonicalize_ties(const Problem& pb, const Requirements& req, Choice& ch);

/// @brief canonicalize_ties() in two parts: the groups of interchangeable jobs depend only on the
/// problem and the requirements, not on the allocation, so a round that applies the rule twice
/// (before and after the rules below) finds them once.
class TieGroups {
 public:
  TieGroups(const Problem& pb, const Requirements& req);
  /// canonicalize_ties(pb, req, ch) for the `req` the groups were found with.
  void canonicalize(const Problem& pb, Choice& ch) const;

 private:
  std::vector<std::size_t> jobs_;   // the groups of two jobs or more, one after the other, each in input order
  std::vector<std::size_t> begin_;  // per group: its first job in jobs_ (+ one past the end)
};

/**
 * @brief The status quo wins ties. A running, preemptible job k that the solution moves or
 * suspends gets its current configuration back from a job i that took that configuration, when
 * the swap (i takes k's new choice instead) leaves the objective no worse — with exact ties it is
 * unchanged. Without this rule an exact tie between a running job and a waiting one (common with
 * rigid jobs of one model and count) can be broken differently every round, restarting both again
 * and again (measured: cifar10 rigid jobs restarting every minute). Swapping two jobs' choices
 * keeps the multiset of configurations, so capacity and the placement guarantee are untouched.
 * Later jobs (input order) give way first.
 */
void prefer_current_on_ties(const Problem& pb, const Requirements& req, Choice& ch);

/**
 * @brief Ties between different multisets of configurations (e.g. A:1 + A:1 against B:1 + B:1 when
 * both types score alike, or one job's 2 and 8 GPUs of equal utility): each job that does not hold
 * its current configuration moves, in input order, to its best-ranked configuration of
 * bit-identical utility — rank: its current configuration first, then fewer GPUs, lower GPU type
 * index, fewer nodes — either alone when capacity allows, or by swapping with a job that holds that
 * configuration and values both configurations bit-identically (a later job, or an earlier one that
 * ranks the swap better too), or together with one or two other jobs that move to configurations
 * they value alike to make room. Every move keeps the objective bit-identical and strictly lowers the
 * input-ordered vector of ranks, so the procedure ends; repeated until nothing moves. Jobs on their
 * current configuration, pinned jobs and jobs without GPUs never move.
 */
void canonicalize_equal_values(const Problem& pb, const Requirements& req, Choice& ch);

/**
 * @brief The canonical decision among equal-valued allocations, computed directly (docs/decision.md,
 * "Ties", rule 5). Among all valid allocations (capacity, pins, the tenants' rows of tenants.hpp) of
 * the class of `ch`, the first in this order: fewest forced jobs without GPUs; then running jobs
 * decide first, then waiting ones, each group in input order, each job taking its best-ranked option
 * still possible — its current configuration, then fewer GPUs, lower GPU type index, fewer nodes, no
 * GPUs last. The class: every allocation whose objective (objective_of's sum of weighted terms, with
 * Problem::model_lambda) equals that of `ch` up to rounding — within 2(n + 1)·ε times the sum of
 * |objective| and every option's |term| — searched exhaustively within a small share of `budget`; else
 * every allocation whose per-job weighted terms of the objective (weight times utility, or weight
 * times the λ term) are, bit for bit, a permutation of those of `ch`. Weights change only the class,
 * never the order. The search depends only on the problem and the class, not on `ch` itself, so
 * backends' equal-valued answers end in one decision. Depth-first search over at most `budget` option
 * checks; false (and `ch` unchanged) when it would need more. `shortcuts`: skip a search that is
 * certain to end without an answer, and count the steps of a subtree certain to complete nothing
 * instead of walking it (the same result); false runs every search in full (tests compare).
 */
/// What canonicalize_exactly's shortcuts did (tests check that they ran): class 2's dead ends whose
/// steps were counted instead of walked, of which the ones that ended the search (the budget ran out
/// in there), and the ones it could not count (walked); class 1's skip tests whose window test fell
/// between the bounds of the slack, so that the slack itself was computed; class 2's searches not run
/// because its skip test proved they would run out of their steps; and whether class 2 ran out of
/// its steps (or was proved to), the outcome the skip test must agree on.
struct ExactSearchStats {
  long long dead_ends_counted = 0;
  long long dead_ends_out_of_budget = 0;
  long long dead_ends_walked = 0;
  long long windows_unsure = 0;
  long long terms_out_of_reach = 0;  // class 2's searches skipped: certain to run out of their steps
  bool out_of_budget = false;        // class 2 ran out of its steps (or was certain to): nothing settled
};

/// `window_margin`: the relative margin of the bounds of class 1's slack that its skip test tries
/// before computing the slack itself (1e-6: far above the 2(N − 1)·2^-53 by which the two sums of
/// the magnitude differ). Any margin in [that, 1) gives the same result; tests widen it so that the
/// window's tests fall between the bounds (the slack then computed) on ordinary rounds.
/// `terms_window`: the depths below a dead end that class 2's skip test counts first, widened (twice
/// as many each time) while its count stays within the steps left and the window within a quarter of
/// the jobs (512: a few hundred suffice on rounds of 20,000 jobs). Any window gives the same result;
/// tests narrow it so that small rounds widen it.
bool canonicalize_exactly(const Problem& pb, const Requirements& req, Choice& ch, long long budget = 1'000'000,
                          bool shortcuts = true, ExactSearchStats* stats = nullptr, double window_margin = 1e-6,
                          std::size_t terms_window = 512);

}  // namespace sia::detail
