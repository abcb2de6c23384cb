// The native backend's exact search (search.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>

#include "milp/native/branch.hpp"
#include "milp/native/classes.hpp"
#include "milp/native/core_dp.hpp"
#include "milp/native/heuristic.hpp"
#include "milp/native/search.hpp"

namespace sia::detail::native {
namespace {

double ms(Clock::time_point a) { return std::chrono::duration<double, std::milli>(Clock::now() - a).count(); }

// Per group item from class counts: the members of a class (ascending) take the class's items in
// item order, as many as each count says.
std::vector<int> expand(const Problem& p, const Classes& cls, const Counts& n) {
  std::vector<int> choice(static_cast<std::size_t>(p.num_groups()), -1);
  if (cls.size() == p.num_groups() && n.size() == p.value.size()) {
    // Every group its own class (class g is group g, its own representative): a feasible
    // assignment (every offer is checked) has one item of count 1 per group, the group's choice.
    // Only the counts other than 0 are looked at (for_counted: eight at a time).
    int g = 0;
    auto take = [&](std::size_t it) {
      while (p.group_begin[static_cast<std::size_t>(g) + 1] <= static_cast<int>(it)) ++g;
      choice[static_cast<std::size_t>(g)] = static_cast<int>(it);
    };
    for_counted(p, cls, n, [&](int it, int) { take(static_cast<std::size_t>(it)); });
    return choice;
  }
  for (int c = 0; c < cls.size(); ++c) {
    const int f = cls.first_item(p, c), e = f + cls.items(p, c);
    int m = cls.member_begin[static_cast<std::size_t>(c)];
    for (int it = f; it < e; ++it)
      for (int k = 0; k < n[static_cast<std::size_t>(it)]; ++k) {
        const int g = cls.members[static_cast<std::size_t>(m++)];
        choice[static_cast<std::size_t>(g)] = p.begin(g) + (it - f);
      }
  }
  return choice;
}

// One member on item `it`: its count, and its usage added row by row (`whole`: every amount added so
// far is whole, whole_amount()).
void add_member(const Problem& p, int it, Counts& n, std::vector<double>& usage, bool& whole) {
  ++n[static_cast<std::size_t>(it)];
  for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q) {
    usage[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] +=
        1 * p.use_val[static_cast<std::size_t>(q)];
    whole &= whole_amount(p.use_val[static_cast<std::size_t>(q)]);
  }
}

}  // namespace

SearchResult solve_mckp(const Problem& p, const std::function<double(double)>& tol, const SearchOptions& options,
                        const std::vector<double>* warm_prices, const std::vector<int>* warm_choice) {
  SearchResult res;
  const auto t0 = Clock::now();
  const int K = p.num_rows, G = p.num_groups();
  Parallel par(options.threads);
  const bool warm = warm_prices && static_cast<int>(warm_prices->size()) == K;
  const bool warm_start = warm_choice && static_cast<int>(warm_choice->size()) == G;
  // A warm round: what the price box needs of the items is gathered in warm_values()' pass over
  // them, not in find_classes()' (each group's items then read from memory once for both).
  const bool box_later = options.symmetry && warm && warm_start;
  Classes cls = options.symmetry ? find_classes(p, par, !box_later) : singleton_classes(p);
  res.classes = cls.size();
  Relaxation rel(p, cls, par);
  // The warm solution's reduced values and best items at its prices, and its picks (warm_values()):
  // the LP's first evaluation and the relaxation at the LP's prices come from them when those are
  // the same prices. (The thread's buffers: a fresh one of a round's items cost a page fault per 4 kB.)
  thread_local std::vector<double> red_scratch;
  thread_local std::vector<int> best_scratch;
  WarmPicks picks;
  std::vector<double> warm_lam;  // the prices they are at (empty: none)
  bool values_ahead = false;     // warm_values() ran ahead of the warm solution (at warm_lam)
  // Bit for bit the prices the warm solution's values are at.
  auto at_warm_lam = [&](const std::vector<double>& lam) {
    return !warm_lam.empty() && warm_lam.size() == lam.size() &&
           std::memcmp(warm_lam.data(), lam.data(), lam.size() * sizeof(double)) == 0;
  };
  if (box_later) {
    if (cls.size() == G) {
      // At the previous round's prices as given: the warm solution's own unless the box clips them
      // (then computed again at the clipped ones, below).
      PriceBoxParts parts;
      warm_values(rel, *warm_prices, red_scratch, best_scratch, *warm_choice, picks, &parts);
      parts.set_price_box(cls);
      warm_lam = *warm_prices;
      values_ahead = true;
    } else {
      gather_price_box(p, cls, par);
    }
  }
  const auto box = rel.price_box();
  if (options.debug)
    std::fprintf(stderr, "native: %d groups, %d classes, %d items, %d rows (%.2f ms)\n", G, cls.size(), p.num_items(),
                 K, ms(t0));

  double best = -kInf;
  Counts best_counts;
  // The incumbent's item per group when the warm solution found it (every group its own class):
  // what expand() would find in its counts, without a pass over them; empty otherwise.
  std::vector<int> best_items;
  auto offer = [&](auto&& n, double v) {  // (a Counts the caller no longer needs is moved, not copied)
    if (v > best) {
      best = v;
      best_counts = std::forward<decltype(n)>(n);
      best_items.clear();
    }
  };
  auto target = [&] { return best == -kInf ? -kInf : best + tol(best); };
  // The rows' usage of best_items, when the warm solution that found them summed it exactly (the
  // restricted second repair below starts from it); empty otherwise.
  std::vector<double> warm_usage;

  // The previous round's solution, completed and repaired at `prices` (groups it does not know
  // take their best item there).
  auto try_warm_solution = [&](const std::vector<double>& prices) {
    if (!warm_start) return;
    Counts n(p.value.size(), 0);
    // Every group its own class: each class's one member adds its item's usage once, in item order,
    // as the repair's sum over the counts would (the same bits, without that pass), and the items and
    // their improving moves are picked in the pass that computes the reduced values.
    const bool singletons = cls.size() == G;
    if (singletons && values_ahead && at_warm_lam(prices)) {
      // (warm_values() at these prices already, with the box)
    } else if (singletons) {
      warm_values(rel, prices, red_scratch, best_scratch, *warm_choice, picks);
    } else {
      reduced_values(rel, prices, red_scratch, &best_scratch);
      picks = WarmPicks{};
    }
    values_ahead = false;
    warm_lam = prices;
    const std::vector<double>& red = red_scratch;
    std::vector<double> usage(singletons ? static_cast<std::size_t>(K) : 0, 0.0);
    bool whole = true;  // (the picks' amounts whole: repair()'s whole_usage)
    // (warm_values()' picks are the items found below: taken as they are.)
    const bool by_picks = singletons && picks.item.size() == static_cast<std::size_t>(G);
    for (int c = 0; c < cls.size(); ++c) {
      if (by_picks) {
        add_member(p, picks.item[static_cast<std::size_t>(c)], n, usage, whole);
        continue;
      }
      const int f = cls.first_item(p, c);
      // (The first item of largest reduced value; the class's first item when none is above -inf.)
      const int b = best_scratch[static_cast<std::size_t>(c)];
      const int bi = b >= 0 ? b : f;
      const double bv = b >= 0 ? red[static_cast<std::size_t>(b)] : -kInf;
      for (int m = cls.member_begin[static_cast<std::size_t>(c)]; m < cls.member_begin[static_cast<std::size_t>(c) + 1];
           ++m) {
        const int g = cls.members[static_cast<std::size_t>(m)];
        const int w = (*warm_choice)[static_cast<std::size_t>(g)];
        // The warm item stays while it is still a best item at these prices (so the previous
        // round's rounding of the classes the LP splits is kept); a job it does not know, or
        // whose warm item the prices no longer favour (its goodput or its restart factor
        // changed), takes its best item, and the repair makes it all fit.
        int it = w >= p.begin(g) && w < p.end(g) ? f + (w - p.begin(g)) : -1;
        if (it < 0 || red[static_cast<std::size_t>(it)] < bv - 1e-9 * (1.0 + std::abs(bv))) it = bi;
        ++n[static_cast<std::size_t>(it)];
        if (singletons)
          for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1];
               ++q)
            usage[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] +=
                1 * p.use_val[static_cast<std::size_t>(q)];
      }
    }
    double v = 0.0;
    std::vector<int> items;
    // (The final counts' usage, when exact: the check takes it instead of its own sum.)
    std::vector<double> usage_after;
    if (repair(rel, prices, nullptr, n, v, &red, singletons ? &usage : nullptr, singletons ? &picks : nullptr, true,
               singletons ? &items : nullptr, by_picks && whole, &usage_after) &&
        counts_feasible(p, cls, nullptr, n, &items, usage_after.empty() ? nullptr : &usage_after) && v > best) {
      offer(std::move(n), v);
      // (Checked feasible: one item of count 1 per group, the one improve() found.)
      if (items.size() == static_cast<std::size_t>(G)) {
        best_items = std::move(items);
        warm_usage = std::move(usage_after);
      }
    }
  };

  // The warm solution repaired again at `prices`, over the classes `active` only (every group its
  // own class), every other group keeping the item of the solution found (best_items): the groups a
  // second repair at the LP's minimum changes are nearly all among the classes active in the region
  // around the previous prices where that minimum was located (measured: 34-84 of 35-89 changed
  // jobs, among 126-187 such classes of 19,800), and this repair reads those classes' items only,
  // not every item. True when it found a solution (offered when better).
  auto try_restricted = [&](const std::vector<double>& prices, const std::vector<int>& active) {
    if (!warm_start || cls.size() != G || best_items.size() != static_cast<std::size_t>(G) ||
        warm_usage.size() != static_cast<std::size_t>(K) || active.empty())
      return false;
    std::vector<int> act = active;
    std::sort(act.begin(), act.end());
    // The sub-problem: the active groups with their items as they are, the capacities less what the
    // other groups use (whole amounts: exact).
    std::vector<double> fixed = warm_usage;
    std::size_t nitems = 0, nuses = 0;
    for (const int g : act) {
      const int it = best_items[static_cast<std::size_t>(g)];
      for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
        fixed[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] -=
            p.use_val[static_cast<std::size_t>(q)];
      nitems += static_cast<std::size_t>(p.end(g) - p.begin(g));
      nuses += static_cast<std::size_t>(p.use_begin[static_cast<std::size_t>(p.end(g))] -
                                        p.use_begin[static_cast<std::size_t>(p.begin(g))]);
    }
    Problem sub;
    sub.num_rows = K;
    sub.cap.resize(static_cast<std::size_t>(K));
    for (int k = 0; k < K; ++k)
      sub.cap[static_cast<std::size_t>(k)] = p.cap[static_cast<std::size_t>(k)] - fixed[static_cast<std::size_t>(k)];
    sub.reserve(act.size(), nitems, nuses);
    std::vector<int> orig;  // per item of `sub`: its item in p
    orig.reserve(nitems);
    std::vector<int> sub_warm(act.size(), -1);
    for (std::size_t t = 0; t < act.size(); ++t) {
      const int g = act[t];
      const int w = (*warm_choice)[static_cast<std::size_t>(g)];
      for (int it = p.begin(g); it < p.end(g); ++it) {
        const auto iu = static_cast<std::size_t>(it);
        if (it == w) sub_warm[t] = sub.num_items();
        sub.value.push_back(p.value[iu]);
        sub.column.push_back(p.column[iu]);
        for (int q = p.use_begin[iu]; q < p.use_begin[iu + 1]; ++q) {
          sub.use_row.push_back(p.use_row[static_cast<std::size_t>(q)]);
          sub.use_val.push_back(p.use_val[static_cast<std::size_t>(q)]);
        }
        sub.use_begin.push_back(static_cast<int>(sub.use_row.size()));
        orig.push_back(it);
      }
      sub.close_group(p.group_row[static_cast<std::size_t>(g)]);
    }
    const Parallel one(1);
    const Classes sub_cls = singleton_classes(sub);
    const Relaxation sub_rel(sub, sub_cls, one);
    // As try_warm_solution(): the warm items (or the best where the prices no longer favour them),
    // repaired and improved.
    std::vector<double> red;
    std::vector<int> best_of;
    WarmPicks picks_sub;
    warm_values(sub_rel, prices, red, best_of, sub_warm, picks_sub);
    Counts n(sub.value.size(), 0);
    std::vector<double> usage(static_cast<std::size_t>(K), 0.0);
    bool whole = true;
    for (std::size_t t = 0; t < act.size(); ++t) add_member(sub, picks_sub.item[t], n, usage, whole);
    double v = 0.0;
    std::vector<int> items;
    std::vector<double> after;
    if (!repair(sub_rel, prices, nullptr, n, v, &red, &usage, &picks_sub, true, &items, whole, &after) ||
        items.size() != act.size() ||
        !counts_feasible(sub, sub_cls, nullptr, n, &items, after.empty() ? nullptr : &after))
      return false;
    // The whole solution: the value found less the active groups' old items, plus their new ones.
    std::vector<int> chosen = best_items;
    double value = best;
    for (std::size_t t = 0; t < act.size(); ++t) {
      const auto g = static_cast<std::size_t>(act[t]);
      value -= p.value[static_cast<std::size_t>(chosen[g])];
      chosen[g] = orig[static_cast<std::size_t>(items[t])];
      value += p.value[static_cast<std::size_t>(chosen[g])];
    }
    if (!(value > best)) return true;
    Counts all(p.value.size(), 0);
    for (const int it : chosen) ++all[static_cast<std::size_t>(it)];
    // (Its usage exact when the sub-problem's was: the fixed groups' plus the active ones'.)
    std::vector<double> all_usage;
    if (!after.empty()) {
      all_usage = fixed;
      for (std::size_t k = 0; k < all_usage.size(); ++k) all_usage[k] += after[k];
    }
    // (A check of the whole, as every offered solution has: feasible, one item per group.)
    if (!counts_feasible(p, cls, nullptr, all, &chosen, all_usage.empty() ? nullptr : &all_usage)) return false;
    offer(std::move(all), value);
    best_items = std::move(chosen);
    warm_usage = std::move(all_usage);
    return true;
  };

  // 2. A warm start: the previous round's solution, repaired at its prices, before the LP: when
  // the round changed little, the LP's first evaluations already prove it.
  std::vector<double> lam0(static_cast<std::size_t>(K), 0.0);
  std::vector<double> trust;
  if (warm) {
    lam0 = *warm_prices;
    for (std::size_t k = 0; k < lam0.size(); ++k) lam0[k] = std::clamp(lam0[k], 0.0, box[k]);
    // The previous round's prices are probably close: search a region of 10 % around them first.
    double top = 0.0;
    for (double x : lam0) top = std::max(top, x);
    for (double x : lam0) trust.push_back(std::max(0.1 * x, 1e-3 * top + 1e-12));
  }
  const auto t_w = Clock::now();
  try_warm_solution(lam0);
  if (options.debug && warm_choice) std::fprintf(stderr, "native: warm solution %.3f ms, value %.12g\n", ms(t_w), best);

  // 3. The LP relaxation. When its prices are reported it is solved to optimality; otherwise it
  // stops as soon as its bound proves the incumbent (a warm round: after a few evaluations).
  const auto t_lp = Clock::now();
  // (The LP starts from lam0 as given.)
  std::optional<PriceEval> first;
  if (at_warm_lam(lam0)) first = rel.evaluate_from(lam0, red_scratch, best_scratch);
  // With prices asked for, a warm round first runs the LP as without them, up to the evaluation
  // whose bound proves the warm solution (the same evaluations, so the same answer); the rest of
  // the LP only gives the prices, and exact LPs over small regions around those prices
  // (minimise_locally) find its minimum in a few passes where Kelley's tail took dozens. The
  // minimum is the same up to the LP's tolerance, its prices other optimal duals where the LP is
  // degenerate (they seed the next round's warm start).
  const bool two_phase = options.exact_prices && warm && best > -kInf;
  // The LP's minimum by exact LPs over small regions (minimise_locally) from `from`: a region of
  // 5 % around it first (it moves and widens where the minimum lies beyond it): at 100,000 GPUs the
  // minimum lies 1-3 % from the previous round's prices, and the region leaves about 3-6 % of the
  // classes active. (With 3 %, 5 of a chain's 7 such rounds needed a second region, which cost as
  // much as the first: 3.8-4.6 ms against 2.0-2.4; with 5 %, 6 of 7 needed one, 2.2-2.4 ms.) Up to a
  // quarter of the classes, and 3,000, active: the region's model is then evaluated in a small part
  // of L's time, over the candidates of its active classes.
  std::vector<int> local_best;
  std::vector<int> region_active;  // (the classes active in the regions locate() screened)
  auto locate = [&](const std::vector<double>& from) {
    std::vector<double> radius;
    double top = 0.0;
    for (double x : from) top = std::max(top, x);
    for (double x : from) radius.push_back(std::max(0.05 * x, 1e-3 * top + 1e-12));
    const int max_active = std::min(3000, cls.size() / 4);
    region_active.clear();
    // (The warm solution's values, at warm_lam, settle most classes of a region without a read of
    // their items: a region's screen read every item, about 1.7 ms of its 2.4 at 100,000 GPUs.)
    // (Its bound needs every amount >= 0, as in a round: the least amount per row is the box's.)
    ScreenHint hint;
    const bool nonneg = cls.box_amin.size() == static_cast<std::size_t>(K) &&
                        std::all_of(cls.box_amin.begin(), cls.box_amin.end(), [](double a) { return a >= 0.0; });
    hint.at = &warm_lam;
    hint.cls = &picks.hint;
    hint.best = &best_scratch;
    return rel.minimise_locally(from, box, radius, max_active, options.deadline, &local_best, &region_active,
                                nonneg ? &hint : nullptr);
  };
  bool local = false;
  // A warm round whose first evaluation does not prove its warm solution: that solution, repaired
  // at the previous round's prices, falls a little short (5 % of the jobs changed move the prices by
  // 1-3 %), and Kelley's method would run to the LP's optimum (60-75 evaluations) for a bound it
  // cannot reach. The LP's minimum is located first, the warm solution repaired at its prices (as
  // step 4 does at the LP's prices); when that proves it, the minimum stands as the LP's result
  // (and as the prices asked for: minimise_locally's exact minimum). Otherwise Kelley's method runs
  // as before, towards the higher target.
  bool located = false;
  bool restricted_proof = false;  // (the restricted second repair proved it: SearchResult::lp_located_restricted)
  KelleyResult root_located;
  if (warm && warm_start && first && first->L != -kInf && !(first->L <= target()) &&
      (two_phase || !options.exact_prices)) {
    // (Timed for the debug output: such rounds are a third to a half of a scheduler's warm rounds, and
    // these two steps are what they cost more than the others.)
    const auto t_locate = Clock::now();
    KelleyResult fin = locate(lam0);
    const double locate_ms = ms(t_locate);
    const auto t_again = Clock::now();
    const double at_minimum = fin.L;  // (for the debug output)
    if (!fin.infeasible && fin.lower > -kInf) {
      // First the second repair over the region's active classes (a few hundred); the whole second
      // repair, a pass over every item, only where that one is not proven.
      restricted_proof = try_restricted(fin.lam, region_active) && fin.L <= target();
      if (!restricted_proof) try_warm_solution(fin.lam);
      if (fin.L <= target()) {
        located = true;
        local = true;
        root_located = std::move(fin);
        ++root_located.iterations;  // (the first evaluation's)
      }
    }
    if (options.debug)
      // (L at the previous prices and at the minimum: whether the warm solution repaired there
      // would have been proven at the first evaluation.)
      std::fprintf(stderr,
                   "native: LP minimum located first (%.3f ms), warm solution there %.12g (%.3f ms, %s), %s; L at the "
                   "previous prices %.12g, at the minimum %.12g, tolerance %.3g\n",
                   locate_ms, best, ms(t_again), restricted_proof ? "its active classes" : "every class",
                   located ? "proven" : "not proven", first->L, at_minimum, tol(best));
  }
  KelleyResult root =
      located ? std::move(root_located)
              : rel.minimise(lam0, box, nullptr, options.exact_prices && !two_phase ? -kInf : target(), 100 + 40 * K,
                             options.deadline, true, trust.empty() ? nullptr : &trust, first ? &*first : nullptr);
  // The first phase's bound proved the warm solution (then it stands, as without prices, whatever
  // the rounding of the minimum found after).
  bool proved_first = located && two_phase;
  if (two_phase && !located && !root.infeasible && root.L <= target()) {
    proved_first = true;
    const int it1 = root.iterations;
    KelleyResult fin = locate(root.lam);
    // (Its minimum is at most L at the proving prices but for rounding; were it above the target,
    // or L -inf there — which the first phase's evaluations rule out —, the proven answer would be
    // dropped: then, as when it gives up, Kelley's method from those prices.)
    if (!fin.infeasible && fin.lower > -kInf && fin.L <= target()) {
      local = true;
      root = std::move(fin);
    } else {
      const bool same0 = root.iterations == 1 && first && at_warm_lam(root.lam);
      root = rel.minimise(root.lam, box, nullptr, -kInf, 100 + 40 * K, options.deadline, false,
                          trust.empty() ? nullptr : &trust, same0 ? &*first : nullptr);
    }
    root.iterations += it1;
  }
  res.lp_iterations = root.iterations;
  res.lp_located = located;
  res.lp_located_restricted = restricted_proof;  // (proven there: located too)
  if (options.debug)
    std::fprintf(stderr, "native: LP %.3f ms, %d evaluations, L %.12g\n", ms(t_lp), root.iterations, root.L);
  if (root.infeasible) {  // a class with nothing admissible: cannot happen for recognised problems
    res.proven = true;
    return res;
  }
  const auto& lam = root.lam;
  const double L = root.L;
  res.root_bound = L;
  res.prices = lam;
  res.prices_exact = root.lower > -kInf && L - root.lower <= 1e-9 * (1.0 + std::abs(L));
  // The relaxation at the LP's prices: the group duals, and the modular bound and the core DP below
  // start from it.
  AtPrices at_lam;
  // (Then evaluate() would find these; not where the warm solution was tried again at the located
  // minimum.)
  const bool from_warm = first && first->L != -kInf && at_warm_lam(lam) &&
                         std::memcmp(lam.data(), lam0.data(), lam.size() * sizeof(double)) == 0;
  if (from_warm) {
    at_lam.L = first->L;
    at_lam.best = best_scratch;
  } else if (local) {  // (minimise_locally() evaluated L at lam last, with these best items)
    at_lam.L = root.L;
    at_lam.best = std::move(local_best);
  } else if (root.screen) {  // (the same bits as evaluate(), visiting the screen's candidates only)
    at_lam.L = rel.evaluate_with(*root.screen, lam, &at_lam.best).L;
  } else {
    at_lam.L = rel.evaluate(lam, nullptr, &at_lam.best).L;
  }
  {
    const std::vector<int>& bi = at_lam.best;
    res.group_duals.resize(static_cast<std::size_t>(G));
    for (int g = 0; g < G; ++g) {
      const int c = cls.class_of[static_cast<std::size_t>(g)];
      const int it = bi[static_cast<std::size_t>(c)];
      res.group_duals[static_cast<std::size_t>(g)] =
          from_warm ? red_scratch[static_cast<std::size_t>(it)] : rel.reduced(it, lam.data());
    }
  }

  // 4. Feasible solutions near the LP: the previous round's again at the LP prices, and the
  // rounding of the LP's solution, then repaired.
  const auto t_h = Clock::now();
  if (!proved_first && !(L <= target())) {
    if (warm) try_warm_solution(lam);
    Counts n;
    double v = 0.0;
    std::vector<double> x;
    std::vector<int> split;
    // (The LP's solution only for its rounding: not when the warm solution at the LP's prices is
    // proven already — a pass over every item per cut, more than the rest of a warm round's search.)
    if (!(L <= target())) rel.primal_counts(root, nullptr, x, split);
    if (!(L <= target()) && round_lp_and_repair(rel, lam, nullptr, x, n, v) && counts_feasible(p, cls, nullptr, n))
      offer(n, v);
    if (!(L <= target()) && round_and_repair(rel, lam, nullptr, n, v) && counts_feasible(p, cls, nullptr, n))
      offer(n, v);
  }
  if (options.debug)
    std::fprintf(stderr, "native: heuristic %.3f ms, incumbent %.12g, gap %.3g (tolerance %.3g)\n", ms(t_h), best,
                 L - best, best == -kInf ? 0.0 : tol(best));

  double bound = L;
  bool proven = proved_first || L <= target();
  bool limit = false;
  // The group relaxation modulo 2, 4, 8, 16: a row that no cheap move fills to the last unit.
  double lift = 0.0;
  if (!proven && best > -kInf) {
    const auto t_m = Clock::now();
    lift = modular_bounds(rel, lam, L - target(), &at_lam);
    bound = L - lift;
    proven = bound <= target();
    if (options.debug) std::fprintf(stderr, "native: modular bound %.3f ms, lifts the bound by %.6g\n", ms(t_m), lift);
  }
  // 4-5. The exact DP over the near-tied core and branch and bound over class counts, as a
  // portfolio: each first with a small effort (the DP settles rounds whose gap is granularity,
  // the branch and bound those whose gap is a few split classes, each in milliseconds), then the
  // DP with its full effort and the branch and bound with the time left.
  BranchLimits bl;
  bl.deadline = options.deadline;
  auto out_of_time = [&] { return options.deadline.passed(); };
  auto run_dp = [&](std::size_t max_states, std::size_t max_trail) {
    const auto t_dp = Clock::now();
    DpLimits dl;
    dl.deadline = options.deadline;
    dl.max_states = max_states;
    dl.max_trail = max_trail;
    const DpOutcome dp = solve_core_dp(rel, lam, best, tol, dl, options.debug, lift, &at_lam);
    res.dp_peak_states = std::max(res.dp_peak_states, dp.peak_states);
    if (dp.kind == DpOutcome::Kind::not_applicable) return false;
    res.dp_used = true;
    if (dp.improved && counts_feasible(p, cls, nullptr, dp.counts)) offer(dp.counts, dp.value);
    if (dp.kind == DpOutcome::Kind::settled) {
      proven = true;
      bound = std::min(bound, std::max(best, dp.bound));
    } else {
      bound = std::min(bound, std::max(best, dp.bound));
      proven = bound <= target();
    }
    if (options.debug)
      std::fprintf(stderr, "native: DP %d %.3f ms, peak %zu states, bound %.12g\n", static_cast<int>(dp.kind), ms(t_dp),
                   dp.peak_states, bound);
    return true;
  };
  bool complete_tree = false;
  bool tree_lifts = false;  // the branch and bound pruned nodes by their modular bound
  auto run_bnb = [&](long long max_nodes) {
    const auto t_b = Clock::now();
    bl.max_nodes = max_nodes;
    res.bnb_used = true;
    const BranchOutcome bo = branch_and_bound(rel, lam, bound, best, best_counts, tol, bl, options.debug);
    res.nodes += bo.nodes;
    if (bo.improved && counts_feasible(p, cls, nullptr, bo.counts)) offer(bo.counts, bo.value);
    bound = std::min(bound, std::max(best, bo.bound));
    complete_tree = bo.completed;
    tree_lifts = tree_lifts || bo.lift_pruned > 0;
    proven = bo.completed || bound <= target();
    if (options.debug)
      std::fprintf(stderr, "native: B&B %.3f ms, %lld nodes, completed %d, bound %.12g\n", ms(t_b), bo.nodes,
                   bo.completed ? 1 : 0, bound);
  };
  // No incumbent and an LP that cannot fit the forced jobs: infeasible without a search.
  if (!proven && best == -kInf && rel.lp_infeasible(nullptr, options.deadline)) {
    res.proven = true;
    res.bound = -kInf;
    return res;
  }
  // Effort limits are counted (nodes, states), never timed, so the answer does not depend on the
  // machine's speed or load; only the caller's time limit is wall-clock.
  const long long quick_nodes = std::clamp<long long>(2'000'000 / std::max(1, p.num_items()), 10, 2000);
  bool dp_applies = true;
  // Rounds with many interchangeable jobs (few classes) suit the count branching; the others the
  // DP, whose states never multiply with symmetric jobs but grow with distinct near-ties.
  const bool symmetric = 2 * cls.size() <= G;
  if (symmetric && !proven && !out_of_time()) run_bnb(std::min<long long>(options.max_nodes, quick_nodes));
  if (!proven && best > -kInf && options.use_dp && !out_of_time()) dp_applies = run_dp(200'000, 1'000'000);
  // Exchanges on the incumbent: rows full to the last GPU leave single moves nothing, while a pair
  // of jobs trading GPUs of a type often gains (improve_pairs()). A better incumbent also raises the
  // target the DP and the branch and bound prune against. After the quick DP pass: the rounds that
  // pass settles keep its answer (a round the full DP used to settle may now be proven on another
  // solution within the tolerance: one of the `near-ties` rounds at 2048 GPUs, whose three rounds the
  // limit used to stop are proven this way).
  if (!proven && best > -kInf && !out_of_time()) {
    const auto t_x = Clock::now();
    Counts n = best_counts;
    // (Each round reads every item: at most 64 rounds, and fewer on large rounds, about 2 M items read.)
    const int rounds = static_cast<int>(std::clamp<long long>(2'000'000 / std::max(1, p.num_items()), 1, 64));
    if (improve_pairs(p, cls, n, rounds, &options.deadline)) {
      const double v = counts_value(p, cls, n);
      if (counts_feasible(p, cls, nullptr, n)) offer(std::move(n), v);
      proven = bound <= target();
    }
    if (options.debug)
      std::fprintf(stderr, "native: exchanges %.3f ms, incumbent %.12g, gap %.3g\n", ms(t_x), best, bound - best);
  }
  if (!symmetric && !proven && !out_of_time()) run_bnb(std::min<long long>(options.max_nodes, quick_nodes));
  // Where the quick branch and bound pruned nodes by their modular bound, the tree is where the gap
  // closes (rows filled to the last GPU by few split jobs: many GPU types, few jobs per type) and
  // the full DP pass, whose states multiply with every such near-tie, ran to the limit without
  // lowering the bound (many-types at 2048 GPUs): the branch and bound goes first, the DP after it
  // only when it stops at its node limit.
  if (!tree_lifts && !proven && best > -kInf && options.use_dp && dp_applies && !out_of_time())
    run_dp(2'000'000, 6'000'000);
  if (!proven && !out_of_time()) run_bnb(options.max_nodes);
  if (tree_lifts && !proven && best > -kInf && options.use_dp && dp_applies && !out_of_time())
    run_dp(2'000'000, 6'000'000);
  limit = !proven && !complete_tree;
  res.nodes = std::max<long long>(res.nodes, 1);
  res.hit_limit = limit;
  res.feasible = best > -kInf;
  res.proven = proven;
  res.value = best;
  res.bound = res.feasible ? std::max(best, bound) : (proven ? -kInf : bound);
  if (res.feasible) res.choice = best_items.empty() ? expand(p, cls, best_counts) : std::move(best_items);
  if (options.debug) std::fprintf(stderr, "native: total %.3f ms\n", ms(t0));
  return res;
}

}  // namespace sia::detail::native
