// The primal heuristic (heuristic.hpp): repair by the cheapest capacity per unit of reduced value,
// then improvement by true value.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "milp/native/heuristic.hpp"

namespace sia::detail::native {
namespace {

int lo_of(const Bounds* b, int it) { return b ? b->lo[static_cast<std::size_t>(it)] : 0; }

// Per-class upper bound of item `it` (mult for free classes).
int hi_of(const Bounds* b, const Classes& cls, int c, int it) {
  if (b && b->bounded[static_cast<std::size_t>(c)]) return b->hi[static_cast<std::size_t>(it)];
  return cls.mult[static_cast<std::size_t>(c)];
}
int lo_in(const Bounds* b, int c, int it) { return b && b->bounded[static_cast<std::size_t>(c)] ? lo_of(b, it) : 0; }

// Amount item `it` uses on row k (0 when it does not use it).
double amount(const Problem& p, int it, int k) {
  for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
    if (p.use_row[static_cast<std::size_t>(q)] == k) return p.use_val[static_cast<std::size_t>(q)];
  return 0.0;
}

// How many members can move from item i to item j without overfilling any row (given usage U).
long long fit_count(const Problem& p, int i, int j, const std::vector<double>& U, long long want) {
  long long n = want;
  // Rows j uses more than i.
  for (int q = p.use_begin[static_cast<std::size_t>(j)]; q < p.use_begin[static_cast<std::size_t>(j) + 1] && n > 0;
       ++q) {
    const int k = p.use_row[static_cast<std::size_t>(q)];
    const double e = p.use_val[static_cast<std::size_t>(q)] - amount(p, i, k);
    if (e <= 0.0) continue;
    const double room = p.cap[static_cast<std::size_t>(k)] + cap_tolerance(p.cap[static_cast<std::size_t>(k)]) -
                        U[static_cast<std::size_t>(k)];
    if (n == 1) {  // (one member, the common question: no rounding call)
      if (room < 0.0 || !(room / e + 1e-12 >= 1.0)) n = 0;
      continue;
    }
    n = std::min<long long>(n, room < 0.0 ? 0 : static_cast<long long>(std::floor(room / e + 1e-12)));
  }
  return std::max<long long>(n, 0);
}

// The most item j uses of any row beyond what item i uses there (0 when it uses no row more): the
// largest `e` of fit_count(p, i, j, ...), the same doubles. One member fits from i to j only where
// some row has at least about that much room (improve()'s test before it reads a class's items).
double extra_need(const Problem& p, int i, int j) {
  double need = 0.0;
  for (int q = p.use_begin[static_cast<std::size_t>(j)]; q < p.use_begin[static_cast<std::size_t>(j) + 1]; ++q) {
    const double e = p.use_val[static_cast<std::size_t>(q)] - amount(p, i, p.use_row[static_cast<std::size_t>(q)]);
    if (e > need) need = e;
  }
  return need;
}

// Are all of item `it`'s amounts whole (whole_amount())?
bool whole_item(const Problem& p, int it) {
  bool whole = true;
  for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
    whole = whole && whole_amount(p.use_val[static_cast<std::size_t>(q)]);
  return whole;
}

void apply_move(const Problem& p, Counts& n, std::vector<double>& U, int i, int j, long long cnt) {
  n[static_cast<std::size_t>(i)] -= static_cast<int>(cnt);
  n[static_cast<std::size_t>(j)] += static_cast<int>(cnt);
  for (int q = p.use_begin[static_cast<std::size_t>(i)]; q < p.use_begin[static_cast<std::size_t>(i) + 1]; ++q)
    U[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] -= cnt * p.use_val[static_cast<std::size_t>(q)];
  for (int q = p.use_begin[static_cast<std::size_t>(j)]; q < p.use_begin[static_cast<std::size_t>(j) + 1]; ++q)
    U[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] += cnt * p.use_val[static_cast<std::size_t>(q)];
}

std::vector<double> usage_of(const Problem& p, const Classes& cls, const Counts& n) {
  std::vector<double> U(static_cast<std::size_t>(p.num_rows), 0.0);
  for_counted(p, cls, n, [&](int it, int cnt) {
    for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
      U[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] +=
          cnt * p.use_val[static_cast<std::size_t>(q)];
  });
  return U;
}

// Stamps of a thread's calls in an array it keeps: take(size, n) gives a call n stamps, base ..
// base + n - 1, that no element holds (each below them), the array at least `size` long.
struct Stamps {
  std::vector<unsigned> v;
  unsigned next = 1;
  unsigned take(std::size_t size, unsigned n) {
    if (v.size() < size) v.resize(size, 0u);
    if (next > std::numeric_limits<unsigned>::max() - n) {  // (after 4 billion stamps: all anew)
      std::fill(v.begin(), v.end(), 0u);
      next = 1;
    }
    const unsigned base = next;
    next += n;
    return base;
  }
};

bool over(const Problem& p, const std::vector<double>& U, int k) {
  const double c = p.cap[static_cast<std::size_t>(k)];
  return U[static_cast<std::size_t>(k)] > c + cap_tolerance(c);
}

}  // namespace

double counts_value(const Problem& p, const Classes& cls, const Counts& n) {
  double v = p.fixed_value;
  for_counted(p, cls, n, [&](int it, int cnt) { v += cnt * p.value[static_cast<std::size_t>(it)]; });
  return v;
}

bool counts_feasible(const Problem& p, const Classes& cls, const Bounds* b, const Counts& n,
                     const std::vector<int>* items, const std::vector<double>* usage) {
  if (n.size() != p.value.size()) return false;
  const int G = p.num_groups();
  const bool singletons = !b && cls.size() == G;
  std::vector<double> U;
  // Every group its own class, and the items the caller found: the counts other than 0 are counted
  // without a branch, then each group's item is looked at. G of them, each a 1 in its own group, are
  // all the counts other than 0: what the scan below accepts, with the same usage in the same order
  // (item order is group order). Items that do not show it leave it to the scan (the same answer
  // either way; the scan's branches on the counts cost twice as much).
  bool by_items = singletons && items != nullptr && items->size() == static_cast<std::size_t>(G);
  if (by_items) {
    unsigned nonzero = 0;  // (items are numbered by ints: no overflow)
    for (const int x : n) nonzero += x != 0 ? 1u : 0u;
    if (nonzero != static_cast<unsigned>(G)) return false;  // (as the scan's count of them)
    for (int g = 0; g < G && by_items; ++g) {
      const int it = (*items)[static_cast<std::size_t>(g)];
      by_items = it >= p.begin(g) && it < p.end(g) && n[static_cast<std::size_t>(it)] == 1;
    }
  }
  if (by_items && usage != nullptr && usage->size() == static_cast<std::size_t>(p.num_rows)) {
    U = *usage;  // (the same bits as the sum below)
  } else if (by_items) {
    U.assign(static_cast<std::size_t>(p.num_rows), 0.0);
    for (const int it : *items)
      for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
        U[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] +=
            1 * p.use_val[static_cast<std::size_t>(q)];
  } else if (singletons) {
    // Every group its own class (of one member): its counts are all 0 but one 1. Only the counts
    // other than 0 are looked at: each must be 1 and the only one of its group, and every group
    // must have one. The rows' usage is summed in the same pass, in usage_of()'s order (the same
    // bits: one pass over the counts instead of two).
    U.assign(static_cast<std::size_t>(p.num_rows), 0.0);
    bool ok = true;
    int g = 0, last = -1;
    long long counted = 0;
    for_counted(p, cls, n, [&](int it, int cnt) {
      ok = ok && cnt == 1;
      while (p.group_begin[static_cast<std::size_t>(g) + 1] <= it) ++g;
      ok = ok && g != last;
      last = g;
      ++counted;
      for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
        U[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] +=
            cnt * p.use_val[static_cast<std::size_t>(q)];
    });
    if (!ok || counted != G) return false;
  }
  for (int c = 0; c < (singletons ? 0 : cls.size()); ++c) {
    const int f = cls.first_item(p, c), e = f + cls.items(p, c);
    long long sum = 0;
    for (int it = f; it < e; ++it) {
      const int cnt = n[static_cast<std::size_t>(it)];
      if (cnt < lo_in(b, c, it) || cnt > hi_of(b, cls, c, it)) return false;
      sum += cnt;
    }
    if (sum != cls.mult[static_cast<std::size_t>(c)]) return false;
  }
  if (!singletons) U = usage_of(p, cls, n);
  for (int k = 0; k < p.num_rows; ++k)
    if (over(p, U, k)) return false;
  return true;
}

bool round_and_repair(const Relaxation& rel, const std::vector<double>& lam, const Bounds* b, Counts& counts,
                      double& value) {
  if (!rel.assign(lam, b, counts)) return false;
  return repair(rel, lam, b, counts, value);
}

namespace {

// Lower bounds raised a class's counts above its members (cannot happen for an admissible x): the
// surplus `rem` (< 0) taken back from its last items first; false when the bounds leave too many.
bool lower_surplus(const Bounds* b, int c, int f, int e, Counts& counts, long long rem) {
  for (int it = e - 1; it >= f && rem < 0; --it) {
    const int take = std::min<long long>(-rem, counts[static_cast<std::size_t>(it)] - lo_in(b, c, it));
    counts[static_cast<std::size_t>(it)] -= take;
    rem += take;
  }
  return rem >= 0;
}

}  // namespace

bool round_lp_and_repair(const Relaxation& rel, const std::vector<double>& lam, const Bounds* b,
                         const std::vector<double>& x, Counts& counts, double& value) {
  const Problem& p = rel.problem();
  const Classes& cls = rel.classes();
  if (x.size() != p.value.size()) return false;
  counts.assign(p.value.size(), 0);
  std::vector<int> order;
  std::vector<double> frac, red;
  for (int c = 0; c < cls.size(); ++c) {
    const int f = cls.first_item(p, c), e = f + cls.items(p, c);
    long long rem = cls.mult[static_cast<std::size_t>(c)];
    for (int it = f; it < e; ++it) {
      const double xv = std::max(0.0, x[static_cast<std::size_t>(it)]);
      const int fl = static_cast<int>(std::floor(xv + 1e-9));
      counts[static_cast<std::size_t>(it)] = std::max(fl, lo_in(b, c, it));
      rem -= counts[static_cast<std::size_t>(it)];
    }
    // Members left by the rounding down go to the largest fractional parts, then to the best
    // reduced values (the repair fixes any overfull row).
    // (Each item's fractional part and reduced value computed once; ties in both keep the item
    // order, as a stable sort of the items in order does — without its buffer, allocated per class.
    // A class the rounding down placed whole, as every class the LP does not split, needs no order.)
    if (rem <= 0) {
      if (rem < 0 && !lower_surplus(b, c, f, e, counts, rem)) return false;
      continue;
    }
    order.clear();
    frac.clear();
    red.clear();
    for (int it = f; it < e; ++it) {
      order.push_back(it);
      frac.push_back(x[static_cast<std::size_t>(it)] - counts[static_cast<std::size_t>(it)]);
      red.push_back(rel.reduced(it, lam.data()));
    }
    std::sort(order.begin(), order.end(), [&](int a, int bb) {
      const auto ka = static_cast<std::size_t>(a - f), kb = static_cast<std::size_t>(bb - f);
      if (frac[ka] != frac[kb]) return frac[ka] > frac[kb];
      if (red[ka] != red[kb]) return red[ka] > red[kb];
      return a < bb;
    });
    while (rem > 0) {
      bool placed = false;
      for (int it : order) {
        if (rem == 0) break;
        if (counts[static_cast<std::size_t>(it)] < hi_of(b, cls, c, it)) {
          ++counts[static_cast<std::size_t>(it)];
          --rem;
          placed = true;
        }
      }
      if (!placed) return false;
    }
  }
  return repair(rel, lam, b, counts, value);
}

namespace {

// The reduced values of class c's items at prices `lam`, written to `red`; returns its best item
// (the first of the largest value; -1 for a class without items).
int class_reduced_values(const Relaxation& rel, const std::vector<double>& lam, std::vector<double>& red, int c) {
  const Problem& p = rel.problem();
  const Classes& cls = rel.classes();
  const int f = cls.first_item(p, c), e = f + cls.items(p, c);
  int bi = -1;
  double bv = -kInf;
  for (int it = f; it < e; ++it) {
    const double r = rel.reduced(it, lam.data());
    red[static_cast<std::size_t>(it)] = r;
    if (r > bv) {
      bv = r;
      bi = it;
    }
  }
  return bi;
}

}  // namespace

void reduced_values(const Relaxation& rel, const std::vector<double>& lam, std::vector<double>& red,
                    std::vector<int>* best) {
  const Problem& p = rel.problem();
  const Classes& cls = rel.classes();
  red.resize(p.value.size());
  if (best) best->resize(static_cast<std::size_t>(cls.size()));
  rel.parallel().blocks(cls.size(), 256, [&](int, int beg, int end) {
    for (int c = beg; c < end; ++c) {
      const int bi = class_reduced_values(rel, lam, red, c);
      if (best) (*best)[static_cast<std::size_t>(c)] = bi;
    }
  });
}

void warm_values(const Relaxation& rel, const std::vector<double>& lam, std::vector<double>& red,
                 std::vector<int>& best, const std::vector<int>& warm_choice, WarmPicks& picks, PriceBoxParts* box) {
  const Problem& p = rel.problem();
  const Classes& cls = rel.classes();
  constexpr int kBlock = 256;
  if (box)
    *box = PriceBoxParts(static_cast<std::size_t>(Parallel::num_blocks(p.num_groups(), kBlock)),
                         static_cast<std::size_t>(p.num_rows), static_cast<std::size_t>(p.num_groups()));
  if (cls.size() != p.num_groups() || warm_choice.size() != static_cast<std::size_t>(p.num_groups())) {
    reduced_values(rel, lam, red, &best);
    picks = WarmPicks{};
    if (box)
      rel.parallel().blocks(p.num_groups(), kBlock, [&](int blk, int beg, int end) {
        for (int g = beg; g < end; ++g)
          box->spread[static_cast<std::size_t>(g)] = gather_group_box(p, g, box->ratio_of(blk), box->amin_of(blk));
      });
    return;
  }
  red.resize(p.value.size());
  const auto nc = static_cast<std::size_t>(cls.size());
  best.resize(nc);
  picks.item.resize(nc);
  picks.to.resize(nc);
  picks.key.resize(nc);
  picks.other.resize(nc);
  picks.row.resize(nc);
  picks.bound.resize(nc);
  picks.need.resize(nc);
  picks.value.resize(nc);
  picks.hint.resize(nc);
  rel.parallel().blocks(cls.size(), kBlock, [&](int blk, int beg, int end) {
    for (int c = beg; c < end; ++c) {
      const int f = cls.first_item(p, c), e = f + cls.items(p, c);
      // (Class c is group c: with `box`, its reduced values and best item in the same pass.)
      int bi = -1;
      if (box)
        box->spread[static_cast<std::size_t>(c)] =
            gather_group_box<true>(p, c, box->ratio_of(blk), box->amin_of(blk), lam.data(), red.data(), &bi);
      else
        bi = class_reduced_values(rel, lam, red, c);
      const auto cu = static_cast<std::size_t>(c);
      best[cu] = bi;
      // The warm start's item (search.cpp's warm solution, its class's one member) ...
      const int g = cls.members[static_cast<std::size_t>(cls.member_begin[cu])];
      const int w = warm_choice[static_cast<std::size_t>(g)];
      const double top = bi >= 0 ? red[static_cast<std::size_t>(bi)] : -kInf;
      int it = w >= p.begin(g) && w < p.end(g) ? f + (w - p.begin(g)) : -1;
      if (it < 0 || red[static_cast<std::size_t>(it)] < top - 1e-9 * (1.0 + std::abs(top))) it = bi >= 0 ? bi : f;
      picks.item[cu] = it;
      // ... and its move, as improve()'s collect finds it with that item's count 1 and the others' 0
      // (their bound, the class's one member, never refuses them).
      const double vi = p.value[static_cast<std::size_t>(it)], ri = red[static_cast<std::size_t>(it)];
      int to = -1;
      double key = -kInf, other = -kInf, need = kInf;
      // (And the class's ScreenHint, its numbers read here anyway: the largest |value| and cost.)
      double vabs = 0.0, cost = 0.0;
      for (int j = f; j < e; ++j) {
        const double vj = p.value[static_cast<std::size_t>(j)];
        vabs = std::max(vabs, std::abs(vj));
        cost = std::max(cost, vj - red[static_cast<std::size_t>(j)]);
        if (j == it) continue;
        other = std::max(other, red[static_cast<std::size_t>(j)]);
        if (p.value[static_cast<std::size_t>(j)] <= vi + 1e-12 * (1.0 + std::abs(vi))) continue;
        need = std::min(need, extra_need(p, it, j));
        const double k = red[static_cast<std::size_t>(j)] - ri;
        if (k > key) {
          key = k;
          to = j;
        }
      }
      picks.to[cu] = to;
      picks.key[cu] = key;
      picks.other[cu] = other;
      picks.need[cu] = need;
      picks.value[cu] = vi;
      // (The hint's second: `other` when the warm item is the best, as it mostly is.)
      double second = other;
      if (it != bi) {
        second = -kInf;
        for (int j = f; j < e; ++j)
          if (j != bi) second = std::max(second, red[static_cast<std::size_t>(j)]);
      }
      picks.hint[cu] = ScreenHint::Class{top, second, vabs, cost};
      // (What the repair's queue reads of the item when a row it uses is over capacity: its row
      // and score bound here, in order, instead of scattered reads of the item's arrays there.)
      const int q0 = p.use_begin[static_cast<std::size_t>(it)];
      const bool single = p.use_begin[static_cast<std::size_t>(it) + 1] - q0 == 1;
      const double a = single ? p.use_val[static_cast<std::size_t>(q0)] : 0.0;
      const bool one = single && a > 0.0;
      picks.row[cu] = one ? p.use_row[static_cast<std::size_t>(q0)] : -1;
      picks.bound[cu] = one && ri >= other ? (ri - other) / a : -kInf;
    }
  });
}

bool repair(const Relaxation& rel, const std::vector<double>& lam, const Bounds* b, Counts& counts, double& value,
            const std::vector<double>* red_given, std::vector<double>* usage_given, const WarmPicks* picks,
            bool bounded_queue, std::vector<int>* items, bool whole_usage, std::vector<double>* usage_after) {
  const Problem& p = rel.problem();
  const Classes& cls = rel.classes();
  std::vector<double> U = usage_given ? std::move(*usage_given) : usage_of(p, cls, counts);
  // U is bit for bit the sum over the counts, also after the moves below, while it sums whole
  // amounts (exactly, in any order) and every item moved has whole amounts.
  bool exact = usage_given != nullptr && whole_usage && usage_after != nullptr && cls.size() < (1 << 21);
  if (usage_after) usage_after->clear();
  const int K = p.num_rows;
  // The reduced values, computed once (the same bits as rel.reduced()).
  std::vector<double> red_own;
  if (!red_given) reduced_values(rel, lam, red_own);
  const std::vector<double>& red = red_given ? *red_given : red_own;
  using Cand = std::tuple<double, int, int, int>;  // score, class, from, to
  // Best destination for members of class c on item i, to free row k: least reduced value lost
  // per unit freed among moves that fit one member, given the class's counts `cnt` (its items' in
  // order) and the rows' usage `use`.
  auto best_to_in = [&](int c, int i, int k, double& score, const int* cnt, const std::vector<double>& use) {
    const int f = cls.first_item(p, c), e = f + cls.items(p, c);
    const double ri = red[static_cast<std::size_t>(i)], ai = amount(p, i, k);
    int best = -1;
    score = kInf;
    for (int j = f; j < e; ++j) {
      if (j == i || cnt[j - f] >= hi_of(b, cls, c, j)) continue;
      const double gain = ai - amount(p, j, k);
      if (gain <= 0.0) continue;
      const double s = (ri - red[static_cast<std::size_t>(j)]) / gain;
      // (Whether one member fits only matters for a better move.)
      if (s < score && fit_count(p, i, j, use, 1) >= 1) {
        score = s;
        best = j;
      }
    }
    return best;
  };
  auto best_to = [&](int c, int i, int k, double& score) {
    return best_to_in(c, i, k, score, counts.data() + cls.first_item(p, c), U);
  };
  // A row's repair starts with every candidate's best move at the row's start; nearly all of them
  // (about 97 % in a warm round) are never taken. A candidate's entry is therefore queued with a
  // lower bound of its score and its destination -1, and its move found when that entry comes
  // first — from the counts and usage at the row's start (its class's counts saved before its
  // first move in the row, the usage copied), so the same move as then: the entries come off the
  // queue in the same order (an entry's bound is at most its score, and (bound, c, i, -1) comes
  // before (score, c, i, j)). The bound: every other item j of the class has rj <= ro, the
  // largest of their reduced values, and, all usages being >= 0, a gain 0 < ai - aj <= ai; with
  // ri >= ro, fl(fl(ri - rj) / fl(ai - aj)) >= fl(fl(ri - ro) / ai) (rounding is monotone).
  bool nonneg = cls.box_amin.size() == static_cast<std::size_t>(K);  // (find_classes()' least amounts)
  for (std::size_t k = 0; nonneg && k < cls.box_amin.size(); ++k) nonneg = cls.box_amin[k] >= 0.0;
  // (With the warm start's picks, ro of a class's picked item is the picks'.)
  const bool with_other = picks && !b && picks->other.size() == static_cast<std::size_t>(cls.size()) &&
                          picks->item.size() == picks->other.size() && cls.size() == p.num_groups();
  auto score_bound = [&](int c, int i, int k) {
    const auto cu = static_cast<std::size_t>(c);
    const double ri = red[static_cast<std::size_t>(i)];
    double ro = -kInf;
    bool ok = true;
    if (nonneg && with_other && picks->item[cu] == i) {
      ro = picks->other[cu];
    } else {
      const int f = cls.first_item(p, c), e = f + cls.items(p, c);
      for (int j = f; j < e; ++j) {
        if (j == i) continue;
        ro = std::max(ro, red[static_cast<std::size_t>(j)]);
        if (!nonneg) ok = ok && amount(p, j, k) >= 0.0;
      }
    }
    return ok && ri >= ro ? (ri - ro) / amount(p, i, k) : -kInf;
  };
  std::vector<double> U0;  // the rows' usage at the row's start
  // Per item, the last round that looked at it, and per class, the round at whose start its
  // counts were saved (where in `saved`): stamps, in the thread's arrays kept between calls (filling
  // arrays of a round's items and classes each call was 0.9 MB of stores, and page faults).
  thread_local Stamps seen_st, saved_st;
  thread_local std::vector<int> saved_at;
  unsigned seen0 = 0, saved0 = 0;  // this call's stamp of its round 0
  std::vector<int> saved;          // those counts
  auto save_class = [&](int c, int round) {
    const auto cu = static_cast<std::size_t>(c);
    if (saved_st.v[cu] == saved0 + static_cast<unsigned>(round)) return;
    const int f = cls.first_item(p, c), e = f + cls.items(p, c);
    saved_st.v[cu] = saved0 + static_cast<unsigned>(round);
    saved_at[cu] = static_cast<int>(saved.size());
    saved.insert(saved.end(), counts.begin() + f, counts.begin() + e);
  };
  // Per row, the items (with their class) that had members above their lower bounds when the
  // first row was found over capacity, or gained some since: a superset of the items a row's
  // repair may move members from. Built then, in one pass; a fitting start needs none.
  // With the warm start's picks: the classes whose counts the repair changes (the improvement
  // collects theirs anew).
  const bool picked =
      picks && !b && picks->item.size() == static_cast<std::size_t>(cls.size()) && cls.size() == p.num_groups();
  std::vector<char> changed(picked ? static_cast<std::size_t>(cls.size()) : 0, 0);
  std::vector<std::vector<std::pair<int, int>>> on_row;
  // With the picks' rows and bounds (every usage >= 0, the bounded queue): a row's first entries,
  // [0, first_listed[k]), are the picks' items, each once; an entry there of a class the repair has
  // not changed holds its one member on its pick (count 1), its amount on row k above 0 and its
  // bound the picks' — queued from those, without the item's arrays or its stamp (a later entry of
  // the same item, listed after a move back to it, is known by being the pick).
  const bool by_row = picked && nonneg && with_other && bounded_queue &&
                      picks->row.size() == static_cast<std::size_t>(cls.size()) &&
                      picks->bound.size() == picks->row.size();
  std::vector<std::size_t> first_listed(picked ? static_cast<std::size_t>(K) : 0, 0);
  auto note_item = [&](int c, int it) {
    for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
      on_row[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])].emplace_back(c, it);
  };
  for (int round = 0; round <= K; ++round) {
    int k = -1;
    for (int r = 0; r < K && k < 0; ++r)
      if (over(p, U, r)) k = r;
    if (k < 0) break;
    if (round == K) return false;
    if (on_row.empty()) {
      on_row.resize(static_cast<std::size_t>(K));
      seen0 = seen_st.take(p.value.size(), static_cast<unsigned>(K) + 1);
      saved0 = saved_st.take(static_cast<std::size_t>(cls.size()), static_cast<unsigned>(K) + 1);
      if (saved_at.size() < static_cast<std::size_t>(cls.size())) saved_at.resize(static_cast<std::size_t>(cls.size()));
      if (picked) {
        // The counts are the picks' items (one member each, in class order, so in item order):
        // the same lists without a pass over the counts. An item of one row is listed from its
        // pick's row, the lists sized first (their entries read in order, not from the items).
        if (by_row) {
          std::vector<int> listed(static_cast<std::size_t>(K), 0);
          for (int c = 0; c < cls.size(); ++c)
            if (const int r = picks->row[static_cast<std::size_t>(c)]; r >= 0) ++listed[static_cast<std::size_t>(r)];
          for (int r = 0; r < K; ++r)
            on_row[static_cast<std::size_t>(r)].reserve(listed[static_cast<std::size_t>(r)] + 64);
        }
        for (int c = 0; c < cls.size(); ++c) {
          const int it = picks->item[static_cast<std::size_t>(c)];
          if (const int r = by_row ? picks->row[static_cast<std::size_t>(c)] : -1; r >= 0)
            on_row[static_cast<std::size_t>(r)].emplace_back(c, it);
          else
            note_item(c, it);
        }
        for (int r = 0; r < K; ++r)
          first_listed[static_cast<std::size_t>(r)] = on_row[static_cast<std::size_t>(r)].size();
      } else if (!b && cls.size() == p.num_groups()) {
        // Every group its own class (class c is group c), no bounds: the items with members are
        // the counts other than 0 (none is negative), found eight at a time, in the same order.
        int g = 0;
        for_counted(p, cls, counts, [&](int i, int cnt) {
          while (p.group_begin[static_cast<std::size_t>(g) + 1] <= i) ++g;
          if (cnt > 0) note_item(g, i);
        });
      } else {
        for (int c = 0; c < cls.size(); ++c) {
          const int f = cls.first_item(p, c), e = f + cls.items(p, c);
          for (int i = f; i < e; ++i)
            if (counts[static_cast<std::size_t>(i)] > lo_in(b, c, i)) note_item(c, i);
        }
      }
    }
    // Every member on an item that uses row k may move. (The heap orders its entries by their
    // whole tuple, so the order they are found in does not matter.)
    // (A heap made of the entries at once: the same entries, popped in the same total order.)
    // (The heap in the thread's buffer, kept between calls: a fresh one of a row's candidates cost
    // page faults. std::priority_queue's own operations on it.)
    thread_local std::vector<Cand> heap;
    heap.clear();
    heap.reserve(on_row[static_cast<std::size_t>(k)].size());
    const auto push = [](double sc, int cc, int from, int to) {
      heap.emplace_back(sc, cc, from, to);
      std::push_heap(heap.begin(), heap.end(), std::greater<>{});
    };
    U0 = U;
    saved.clear();
    const auto& row_items = on_row[static_cast<std::size_t>(k)];
    const std::size_t first = by_row ? first_listed[static_cast<std::size_t>(k)] : 0;
    for (std::size_t q = 0; q < first; ++q) {
      const auto [c, i] = row_items[q];
      const auto cu = static_cast<std::size_t>(c);
      if (!changed[cu] && picks->row[cu] == k && picks->bound[cu] > -kInf) {
        heap.emplace_back(picks->bound[cu], c, i, -1);
        continue;
      }
      // (Otherwise as below: a class the repair changed, an item of several rows, no bound.)
      if (seen_st.v[static_cast<std::size_t>(i)] == seen0 + static_cast<unsigned>(round)) continue;
      seen_st.v[static_cast<std::size_t>(i)] = seen0 + static_cast<unsigned>(round);
      if (counts[static_cast<std::size_t>(i)] <= lo_in(b, c, i) || amount(p, i, k) <= 0.0) continue;
      if (const double lb = score_bound(c, i, k); lb > -kInf) {
        heap.emplace_back(lb, c, i, -1);
        continue;
      }
      double s = 0.0;
      const int j = best_to(c, i, k, s);
      if (j >= 0) heap.emplace_back(s, c, i, j);
    }
    for (std::size_t q = first; q < row_items.size(); ++q) {
      const auto [c, i] = row_items[q];
      // (A later entry of a pick listed first: seen there.)
      if (by_row && i == picks->item[static_cast<std::size_t>(c)] && picks->row[static_cast<std::size_t>(c)] >= 0)
        continue;
      if (q + 8 < row_items.size()) {  // (the entries 8 ahead fetched: each is a cache miss in several arrays)
        const auto [c8, i8] = row_items[q + 8];
        __builtin_prefetch(&seen_st.v[static_cast<std::size_t>(i8)]);
        __builtin_prefetch(&counts[static_cast<std::size_t>(i8)]);
        __builtin_prefetch(&red[static_cast<std::size_t>(i8)]);
        __builtin_prefetch(&p.use_begin[static_cast<std::size_t>(i8)]);
        (void)c8;
      }
      if (seen_st.v[static_cast<std::size_t>(i)] == seen0 + static_cast<unsigned>(round)) continue;
      seen_st.v[static_cast<std::size_t>(i)] = seen0 + static_cast<unsigned>(round);
      if (counts[static_cast<std::size_t>(i)] <= lo_in(b, c, i) || amount(p, i, k) <= 0.0) continue;
      const double lb = bounded_queue ? score_bound(c, i, k) : -kInf;
      if (lb > -kInf) {
        heap.emplace_back(lb, c, i, -1);
        continue;
      }
      double s = 0.0;
      const int j = best_to(c, i, k, s);
      if (j >= 0) heap.emplace_back(s, c, i, j);
    }
    std::make_heap(heap.begin(), heap.end(), std::greater<>{});
    while (over(p, U, k)) {
      if (heap.empty()) return false;
      std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
      auto [s, c, i, j] = heap.back();
      heap.pop_back();
      if (j < 0) {  // (a candidate's move at the row's start, found now)
        const auto cu = static_cast<std::size_t>(c);
        const int* cnt = saved_st.v[cu] == saved0 + static_cast<unsigned>(round) ? saved.data() + saved_at[cu]
                                                                                 : counts.data() + cls.first_item(p, c);
        double s0 = 0.0;
        const int j0 = best_to_in(c, i, k, s0, cnt, U0);
        if (j0 >= 0) push(s0, c, i, j0);
        continue;
      }
      const long long avail = counts[static_cast<std::size_t>(i)] - lo_in(b, c, i);
      if (avail <= 0) continue;
      // Re-validate against the current usage; re-queue with the current best move if stale.
      const long long room = std::min<long long>(avail, hi_of(b, cls, c, j) - counts[static_cast<std::size_t>(j)]);
      if (room <= 0 || fit_count(p, i, j, U, 1) < 1) {
        double s2 = 0.0;
        const int j2 = best_to(c, i, k, s2);
        if (j2 >= 0) push(s2, c, i, j2);
        continue;
      }
      const double freed = amount(p, i, k) - amount(p, j, k);
      const double excess = U[static_cast<std::size_t>(k)] - p.cap[static_cast<std::size_t>(k)];
      const long long need = std::max<long long>(1, static_cast<long long>(std::ceil(excess / freed - 1e-12)));
      const long long cnt = fit_count(p, i, j, U, std::min(room, need));
      if (cnt <= 0) continue;
      const bool j_had = counts[static_cast<std::size_t>(j)] > lo_in(b, c, j);
      save_class(c, round);
      apply_move(p, counts, U, i, j, cnt);
      exact = exact && whole_item(p, i) && whole_item(p, j);
      if (picked) changed[static_cast<std::size_t>(c)] = 1;
      if (!j_had) note_item(c, j);  // (j may have been noted before: its stamp skips repeats)
      // Members left on i, and those that moved to a smaller item still on row k, can move on.
      for (int from : {i, j}) {
        if (counts[static_cast<std::size_t>(from)] <= lo_in(b, c, from) || amount(p, from, k) <= 0.0) continue;
        double s2 = 0.0;
        const int j2 = best_to(c, from, k, s2);
        if (j2 >= 0) push(s2, c, from, j2);
      }
    }
  }
  for (int k = 0; k < K; ++k)
    if (over(p, U, k)) return false;
  if (exact) *usage_after = std::move(U);
  improve(rel, lam, b, counts, value, &red, picked ? picks : nullptr, picked ? &changed : nullptr, items,
          exact ? usage_after : nullptr);  // (sets `value`)
  return true;
}

void improve(const Relaxation& rel, const std::vector<double>& lam, const Bounds* b, Counts& counts, double& value,
             const std::vector<double>* red_given, const WarmPicks* picks, const std::vector<char>* changed,
             std::vector<int>* items, std::vector<double>* usage) {
  const Problem& p = rel.problem();
  const Classes& cls = rel.classes();
  std::vector<double> red_own;
  if (!red_given) reduced_values(rel, lam, red_own);
  const std::vector<double>& red = red_given ? *red_given : red_own;
  // The rows' usage, usage_of(counts): summed in the first pass over the classes below, which
  // reads every count in usage_of()'s order (the same bits, without a pass of its own).
  // (Given: the same bits.)
  const bool usage_given = usage != nullptr && usage->size() == static_cast<std::size_t>(p.num_rows);
  std::vector<double> U =
      usage_given ? std::move(*usage) : std::vector<double>(static_cast<std::size_t>(p.num_rows), 0.0);
  bool exact = usage_given;
  // Candidate moves (one per used item): the destination with the best reduced gain among those
  // that gain true value; applied best reduced gain first, as many members as fit.
  struct Move {
    double key;
    int c, i, j;
    long long failed;  // the number of moves applied when it last found no destination, -1: not so
    // The least extra_need(p, i, j') over the destinations j' that gain true value, whatever their
    // counts (+inf: none; 0: one needs no room). While no row has at least about that much room,
    // the move finds no destination: the loop below says so without reading the class's items,
    // each a cache miss (most of a warm round's thousands of moves find no room: 0-3 GPUs left).
    double need;
  };
  std::vector<Move> moves;
  auto collect = [&](int c) {
    const int f = cls.first_item(p, c), e = f + cls.items(p, c);
    for (int i = f; i < e; ++i) {
      if (counts[static_cast<std::size_t>(i)] <= lo_in(b, c, i)) continue;
      const double vi = p.value[static_cast<std::size_t>(i)], ri = red[static_cast<std::size_t>(i)];
      int best = -1;
      double key = -kInf, need = kInf;
      for (int j = f; j < e; ++j) {
        if (j == i || p.value[static_cast<std::size_t>(j)] <= vi + 1e-12 * (1.0 + std::abs(vi))) continue;
        need = std::min(need, extra_need(p, i, j));
        if (counts[static_cast<std::size_t>(j)] >= hi_of(b, cls, c, j)) continue;
        const double k = red[static_cast<std::size_t>(j)] - ri;
        if (k > key) {
          key = k;
          best = j;
        }
      }
      if (best >= 0) moves.push_back({key, c, i, best, -1, need});
    }
  };
  // A class's candidate moves depend on its own counts only: after the first pass, only the classes
  // a pass changed collect theirs again (the moves are sorted by a total order, so the list is the
  // same as if every class collected anew).
  std::vector<char> dirty(static_cast<std::size_t>(cls.size()), 0);
  std::vector<int> touched;
  // A move that found no destination finds none again while its class is unchanged and no row's
  // usage went down: the later passes skip it (nearly all of them: the room is spent by then).
  long long applied = 0, last_room = -1;  // moves applied; the last of them that lowered a usage
  std::vector<double> before;
  const auto by_key = [](const Move& x, const Move& y) {
    return x.key > y.key || (x.key == y.key && (x.c < y.c || (x.c == y.c && x.i < y.i)));
  };
  const bool picked = picks && changed && !b && picks->item.size() == static_cast<std::size_t>(cls.size()) &&
                      changed->size() == picks->item.size();
  std::vector<char> moved(picked ? static_cast<std::size_t>(cls.size()) : 0, 0);  // (classes a move here changed)
  // (The picks' needs, where warm_values() found them; else 0, which never stops a move.)
  const bool with_need = picked && picks->need.size() == picks->item.size();
  const bool with_value = picked && picks->value.size() == picks->item.size();
  // The most room any row has (fit_count()'s room, the same doubles): a move whose every destination
  // needs more on some row (Move::need, with a margin for fit_count()'s rounding) finds none.
  auto most_room = [&] {
    double most = -kInf;
    for (int k = 0; k < p.num_rows; ++k)
      most = std::max(most, p.cap[static_cast<std::size_t>(k)] + cap_tolerance(p.cap[static_cast<std::size_t>(k)]) -
                                U[static_cast<std::size_t>(k)]);
    return most;
  };
  for (int pass = 0; pass < 3; ++pass) {
    std::size_t sorted = 0;  // moves[0, sorted) are in order already
    if (pass == 0) {
      for (int c = 0; c < cls.size(); ++c) {
        if (picked && !(*changed)[static_cast<std::size_t>(c)]) {
          // The class's one member on its picked item (count 1): its usage, and its move as picked.
          const int it = picks->item[static_cast<std::size_t>(c)];
          if (!usage_given)
            for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1];
                 ++q)
              U[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] +=
                  1 * p.use_val[static_cast<std::size_t>(q)];
          if (const int to = picks->to[static_cast<std::size_t>(c)]; to >= 0)
            moves.push_back({picks->key[static_cast<std::size_t>(c)], c, it, to, -1,
                             with_need ? picks->need[static_cast<std::size_t>(c)] : 0.0});
          continue;
        }
        const int f = cls.first_item(p, c), e = f + cls.items(p, c);
        for (int it = f; it < e && !usage_given; ++it) {
          const int cnt = counts[static_cast<std::size_t>(it)];
          if (cnt == 0) continue;
          for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1];
               ++q)
            U[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] +=
                cnt * p.use_val[static_cast<std::size_t>(q)];
        }
        collect(c);
      }
    } else {
      // (What the pass before sorted stays in order when the changed classes' moves leave.)
      std::erase_if(moves, [&](const Move& m) { return dirty[static_cast<std::size_t>(m.c)] != 0; });
      sorted = moves.size();
      for (int c : touched) {
        collect(c);
        dirty[static_cast<std::size_t>(c)] = 0;
      }
      touched.clear();
    }
    if (moves.empty()) break;
    // The order is total (one move per class and item; no key is NaN, checked): sorting the moves
    // collected again and merging them into the rest gives the order a sort of all would.
    const bool merge =
        sorted > 0 && std::none_of(moves.begin(), moves.end(), [](const Move& m) { return std::isnan(m.key); });
    if (merge) {
      std::sort(moves.begin() + static_cast<std::ptrdiff_t>(sorted), moves.end(), by_key);
      std::inplace_merge(moves.begin(), moves.begin() + static_cast<std::ptrdiff_t>(sorted), moves.end(), by_key);
    } else {
      std::sort(moves.begin(), moves.end(), by_key);
    }
    bool changed = false;
    double room_left = most_room();
    for (Move& m : moves) {
      if (m.failed >= 0 && !dirty[static_cast<std::size_t>(m.c)] && last_room <= m.failed) continue;
      // No row has the room its destinations need: the scan below would find none (a destination j
      // fits only where room_k / e + 1e-12 >= 1 for its largest e, so room_k >= e (1 - 1e-11) at least).
      if (m.need > 0.0 && !(room_left >= m.need * (1.0 - 1e-11))) {
        m.failed = applied;
        continue;
      }
      // The destination may have filled up since: take the best destination that still fits.
      const int f = cls.first_item(p, m.c), e = f + cls.items(p, m.c);
      long long avail = counts[static_cast<std::size_t>(m.i)] - lo_in(b, m.c, m.i);
      if (avail <= 0) {
        m.failed = applied;
        continue;
      }
      const double vi = p.value[static_cast<std::size_t>(m.i)], ri = red[static_cast<std::size_t>(m.i)];
      int best = -1;
      double key = -kInf;
      for (int j = f; j < e; ++j) {
        if (j == m.i || p.value[static_cast<std::size_t>(j)] <= vi + 1e-12 * (1.0 + std::abs(vi))) continue;
        if (counts[static_cast<std::size_t>(j)] >= hi_of(b, cls, m.c, j)) continue;
        const double k = red[static_cast<std::size_t>(j)] - ri;
        // (Whether one member fits only matters for a better destination.)
        if (k > key && fit_count(p, m.i, j, U, 1) >= 1) {
          key = k;
          best = j;
        }
      }
      if (best < 0) {
        m.failed = applied;
        continue;
      }
      const long long room =
          std::min<long long>(avail, hi_of(b, cls, m.c, best) - counts[static_cast<std::size_t>(best)]);
      const long long cnt = fit_count(p, m.i, best, U, room);
      if (cnt <= 0) {
        m.failed = applied;
        continue;
      }
      // (Only rows of the item left can go down; compared exactly, rounding included.)
      const int ub = p.use_begin[static_cast<std::size_t>(m.i)], ue = p.use_begin[static_cast<std::size_t>(m.i) + 1];
      before.clear();
      for (int q = ub; q < ue; ++q)
        before.push_back(U[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])]);
      apply_move(p, counts, U, m.i, best, cnt);
      room_left = most_room();
      exact = exact && whole_item(p, m.i) && whole_item(p, best);
      if (picked) moved[static_cast<std::size_t>(m.c)] = 1;
      ++applied;
      for (int q = ub; q < ue; ++q)
        if (U[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] <
            before[static_cast<std::size_t>(q - ub)])
          last_room = applied;
      changed = true;
      if (!dirty[static_cast<std::size_t>(m.c)]) {
        dirty[static_cast<std::size_t>(m.c)] = 1;
        touched.push_back(m.c);
      }
    }
    if (!changed) break;
  }
  if (usage != nullptr) {
    usage->clear();
    if (exact) *usage = std::move(U);
  }
  if (!picked) {
    value = counts_value(p, cls, counts);
    return;
  }
  // counts_value(), the same sum in the same order (class by class is item by item here): a class
  // neither the repair nor a move here changed holds its one member on its picked item, the others'
  // counts are read (without a pass over every count).
  double v = p.fixed_value;
  if (items) items->assign(static_cast<std::size_t>(cls.size()), -1);
  for (int c = 0; c < cls.size(); ++c) {
    const auto cu = static_cast<std::size_t>(c);
    if (!(*changed)[cu] && !moved[cu]) {
      // (Its value as warm_values() read it: the same bits, without a cache miss per class.)
      v += 1 * (with_value ? picks->value[cu] : p.value[static_cast<std::size_t>(picks->item[cu])]);
      if (items) (*items)[cu] = picks->item[cu];
      continue;
    }
    const int f = cls.first_item(p, c), e = f + cls.items(p, c);
    for (int it = f; it < e; ++it)
      if (const int cnt = counts[static_cast<std::size_t>(it)]; cnt != 0) {
        v += cnt * p.value[static_cast<std::size_t>(it)];
        if (items) (*items)[cu] = it;
      }
  }
  value = v;
}

bool improve_pairs(const Problem& p, const Classes& cls, Counts& n, int max_rounds, const Deadline* deadline) {
  const int C = cls.size(), K = p.num_rows;
  if (n.size() != p.value.size()) return false;
  // A move: a member of class c from item `from` to `to` (items of the class's representative), its
  // true value gained and its usage change, sparse (an item uses one or two rows: at most four entries).
  struct Move {
    int c, from, to;
    double dv;
    int n;
    int row[4];
    double du[4];
  };
  std::vector<double> slack(p.cap.begin(), p.cap.end());
  for (int c = 0; c < C; ++c) {
    const int f = cls.first_item(p, c), e = f + cls.items(p, c);
    for (int it = f; it < e; ++it) {
      const auto iu = static_cast<std::size_t>(it);
      if (n[iu] == 0) continue;
      for (int q = p.use_begin[iu]; q < p.use_begin[iu + 1]; ++q)
        slack[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] -=
            n[iu] * p.use_val[static_cast<std::size_t>(q)];
    }
  }
  std::vector<Move> moves;
  std::vector<std::vector<int>> frees(static_cast<std::size_t>(K));  // per row: moves that free it, by dv
  bool changed = false;
  auto late = [deadline] { return deadline != nullptr && deadline->passed(); };
  long long tried = 0;  // (pairs tried: the deadline is read every 4,096)
  for (int round = 0; round < max_rounds && !late(); ++round) {
    moves.clear();
    for (int c = 0; c < C; ++c) {
      const int f = cls.first_item(p, c), e = f + cls.items(p, c);
      for (int cur = f; cur < e; ++cur) {
        const auto cu = static_cast<std::size_t>(cur);
        if (n[cu] <= 0) continue;
        for (int it = f; it < e; ++it) {
          if (it == cur) continue;
          const auto iu = static_cast<std::size_t>(it);
          Move m{c, cur, it, p.value[iu] - p.value[cu], 0, {}, {}};
          bool ok = true;
          auto add = [&](int row, double a) {
            for (int j = 0; j < m.n; ++j)
              if (m.row[j] == row) {
                m.du[j] += a;
                return;
              }
            if (m.n == 4) {
              ok = false;
              return;
            }
            m.row[m.n] = row;
            m.du[m.n++] = a;
          };
          for (int q = p.use_begin[iu]; q < p.use_begin[iu + 1]; ++q)
            add(p.use_row[static_cast<std::size_t>(q)], p.use_val[static_cast<std::size_t>(q)]);
          for (int q = p.use_begin[cu]; q < p.use_begin[cu + 1]; ++q)
            add(p.use_row[static_cast<std::size_t>(q)], -p.use_val[static_cast<std::size_t>(q)]);
          if (ok) moves.push_back(m);
        }
      }
    }
    // Largest gain first (ties by class and items: the same order on every machine).
    std::sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) {
      if (a.dv != b.dv) return a.dv > b.dv;
      return std::tie(a.c, a.from, a.to) < std::tie(b.c, b.from, b.to);
    });
    for (auto& fr : frees) fr.clear();
    for (std::size_t m = 0; m < moves.size(); ++m)
      for (int j = 0; j < moves[m].n; ++j)
        if (moves[m].du[j] < 0.0) frees[static_cast<std::size_t>(moves[m].row[j])].push_back(static_cast<int>(m));
    auto over_by = [&](int row, double d) {
      return d > slack[static_cast<std::size_t>(row)] + cap_tolerance(p.cap[static_cast<std::size_t>(row)]);
    };
    auto fits = [&](const Move& a, const Move& b) {
      for (int j = 0; j < a.n; ++j) {
        double d = a.du[j];
        for (int t = 0; t < b.n; ++t) d += b.row[t] == a.row[j] ? b.du[t] : 0.0;
        if (over_by(a.row[j], d)) return false;
      }
      for (int t = 0; t < b.n; ++t) {
        bool shared = false;
        for (int j = 0; j < a.n; ++j) shared = shared || a.row[j] == b.row[t];
        if (!shared && over_by(b.row[t], b.du[t])) return false;
      }
      return true;
    };
    // The best single move that fits, or pair of moves (two members: of two classes, or of one
    // class whose items they leave have members enough): a move that overfills a row pairs only with
    // moves that free that row.
    double best_gain = 1e-9;
    int ba = -1, bb = -1;
    for (std::size_t a = 0; a < moves.size() && 2.0 * moves[a].dv > best_gain; ++a) {
      const Move& ma = moves[a];
      int over = -1;
      for (int j = 0; j < ma.n && over < 0; ++j)
        if (over_by(ma.row[j], ma.du[j])) over = ma.row[j];
      if (over < 0) {
        if (!(ma.dv > best_gain)) continue;
        best_gain = ma.dv;
        ba = static_cast<int>(a);
        bb = -1;
        continue;
      }
      for (const int b : frees[static_cast<std::size_t>(over)]) {
        const Move& mb = moves[static_cast<std::size_t>(b)];
        if (!(ma.dv + mb.dv > best_gain)) break;
        if ((++tried & 4095) == 0 && late()) return changed;  // (nothing of this round applied yet)
        if (mb.c == ma.c && mb.from == ma.from && n[static_cast<std::size_t>(ma.from)] < 2) continue;
        if (!fits(ma, mb)) continue;
        best_gain = ma.dv + mb.dv;
        ba = static_cast<int>(a);
        bb = b;
      }
    }
    if (ba < 0) break;
    for (const int m : {ba, bb}) {
      if (m < 0) continue;
      const Move& mv = moves[static_cast<std::size_t>(m)];
      for (int j = 0; j < mv.n; ++j) slack[static_cast<std::size_t>(mv.row[j])] -= mv.du[j];
      --n[static_cast<std::size_t>(mv.from)];
      ++n[static_cast<std::size_t>(mv.to)];
    }
    changed = true;
  }
  return changed;
}

}  // namespace sia::detail::native
