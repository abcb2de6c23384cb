#pragma once
// Private to the native backend: exact branch and bound for the multiple-choice multi-dimensional
// knapsack (problem.hpp), bounded by the Lagrangian relaxation of the capacity rows.
//
// For prices lambda >= 0 on the K capacity rows,
//     L(lambda) = fixed + cap·lambda + sum_g max_{i in g} (v_i - a_i·lambda)
// bounds every feasible solution from above, and its minimum over lambda equals the LP relaxation
// (the per-group subproblem has the integrality property). L is convex piecewise linear in K
// dimensions, K = number of GPU types (or node-size classes): Kelley's cutting-plane method with a
// (K+1)-variable master LP minimises it exactly in a few dozen evaluations. For every feasible x,
//     value(x) = L(lambda) - sum_g delta_g(x) - lambda·slack(x),
// where delta_g >= 0 is the reduced-value loss of the group's choice against its best item. Hence
// items whose delta exceeds L - incumbent can be discarded (reduced-cost fixing): with few
// capacity rows and many jobs almost every group is decided at the root, and the search runs on a
// small "core" of near-tied groups, re-optimising lambda at each node from its parent's prices.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <vector>

#include "milp/native/dense_lp.hpp"
#include "milp/native/problem.hpp"

namespace sia::detail::native {

using Clock = std::chrono::steady_clock;

struct SearchLimits {
  std::optional<Clock::time_point> deadline;
  long long max_nodes = 2'000'000;
};

struct SearchResult {
  bool feasible = false;    ///< an incumbent exists
  bool proven = false;      ///< search completed (optimal within the tolerance, or infeasible)
  std::vector<int> choice;  ///< item per group (full problem)
  double value = -std::numeric_limits<double>::infinity();  ///< internal value incl. fixed_value
  double bound = std::numeric_limits<double>::infinity();   ///< proven upper bound (internal)
  double root_bound = std::numeric_limits<double>::infinity();
  std::vector<double> prices;       ///< lambda at the root LP optimum
  std::vector<double> group_duals;  ///< per group: best reduced value at the root prices
  long long nodes = 0;
  bool hit_limit = false;
  // Statistics (for messages and tuning).
  int core_groups = 0, core_items = 0;
  bool dp_used = false;  ///< the core was settled by the dynamic programme
  double root_incumbent = -std::numeric_limits<double>::infinity();
};

class MckpSearch {
 public:
  /// `tolerance(z)`: absolute gap accepted for an incumbent of internal value z.
  template <class Tol>
  MckpSearch(const Problem& p, Tol tolerance, SearchLimits limits)
      : full_(p), tol_fn_(tolerance), limits_(limits), debug_(std::getenv("SIA_NATIVE_DEBUG") != nullptr) {}

  SearchResult run(const std::vector<double>* warm_prices, const std::vector<int>* warm_choice);

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  // ---- evaluation on a problem with an "allowed" mask ---------------------------------------
  struct View {
    const Problem* p;
    const std::vector<char>* allowed;
  };

  static double reduced(const Problem& p, int it, const std::vector<double>& lam) {
    double r = p.value[static_cast<std::size_t>(it)];
    for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
      r -= lam[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] *
           p.use_val[static_cast<std::size_t>(q)];
    return r;
  }

  /// L(lam) and its subgradient; best item per group in `best`. -inf when a group has no item.
  static double evaluate(const View& v, const std::vector<double>& lam, std::vector<double>& grad,
                         std::vector<int>* best) {
    const Problem& p = *v.p;
    const int K = p.num_rows, G = p.num_groups();
    double L = p.fixed_value;
    grad.assign(p.cap.begin(), p.cap.end());
    for (int k = 0; k < K; ++k) L += p.cap[static_cast<std::size_t>(k)] * lam[static_cast<std::size_t>(k)];
    if (best) best->assign(static_cast<std::size_t>(G), -1);
    for (int g = 0; g < G; ++g) {
      double bv = -kInf;
      int bi = -1;
      for (int it = p.group_begin[static_cast<std::size_t>(g)]; it < p.group_begin[static_cast<std::size_t>(g) + 1];
           ++it) {
        if (v.allowed && !(*v.allowed)[static_cast<std::size_t>(it)]) continue;
        const double r = reduced(p, it, lam);
        if (r > bv) {
          bv = r;
          bi = it;
        }
      }
      if (bi < 0) return -kInf;
      L += bv;
      for (int q = p.use_begin[static_cast<std::size_t>(bi)]; q < p.use_begin[static_cast<std::size_t>(bi) + 1]; ++q)
        grad[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] -=
            p.use_val[static_cast<std::size_t>(q)];
      if (best) (*best)[static_cast<std::size_t>(g)] = bi;
    }
    return L;
  }

  /// Box for the prices: no optimal price exceeds the best value per unit of the row (plus what
  /// groups that must choose can lose), so the Kelley master stays bounded.
  static std::vector<double> price_box(const Problem& p) {
    const int K = p.num_rows;
    std::vector<double> box(static_cast<std::size_t>(K), 0.0), spread(static_cast<std::size_t>(K), 0.0),
        amin(static_cast<std::size_t>(K), kInf);
    double forced_spread = 0.0;
    for (int g = 0; g < p.num_groups(); ++g) {
      double vmax = -kInf, vmin = kInf;
      for (int it = p.group_begin[static_cast<std::size_t>(g)]; it < p.group_begin[static_cast<std::size_t>(g) + 1];
           ++it) {
        const double v = p.value[static_cast<std::size_t>(it)];
        vmax = std::max(vmax, v);
        vmin = std::min(vmin, v);
        for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1];
             ++q) {
          const auto k = static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)]);
          const double a = p.use_val[static_cast<std::size_t>(q)];
          box[k] = std::max(box[k], std::max(v, 0.0) / a);
          amin[k] = std::min(amin[k], a);
        }
      }
      if (!p.has_none(g) && vmax > vmin) forced_spread += vmax - vmin;
    }
    for (int k = 0; k < K; ++k) {
      const auto ku = static_cast<std::size_t>(k);
      const double extra = amin[ku] < kInf ? forced_spread / amin[ku] : 0.0;
      box[ku] = 2.0 * box[ku] + 2.0 * extra + 1e-9;
    }
    return box;
  }

  struct KelleyOut {
    std::vector<double> lam;
    double L = kInf;
    bool infeasible = false;
  };

  /// Minimises L over the box from `lam0`; stops early once L <= target (prunable).
  KelleyOut kelley(const View& v, const std::vector<double>& box, std::vector<double> lam0, double target,
                   int max_iter) {
    const Problem& p = *v.p;
    const int K = p.num_rows;
    KelleyOut out;
    for (int k = 0; k < K; ++k)
      lam0[static_cast<std::size_t>(k)] =
          std::clamp(lam0[static_cast<std::size_t>(k)], 0.0, box[static_cast<std::size_t>(k)]);
    std::vector<double> grad;
    std::vector<std::vector<double>> cut_g;
    std::vector<double> cut_c;
    std::vector<double> lam = lam0;
    out.lam = lam0;
    for (int iter = 0; iter < max_iter; ++iter) {
      ++kelley_iters_;
      const double L = evaluate(v, lam, grad, nullptr);
      if (L == -kInf) {
        out.infeasible = true;
        return out;
      }
      if (L < out.L) {
        out.L = L;
        out.lam = lam;
      }
      if (out.L <= target || K == 0) return out;
      if (limit_hit()) return out;
      double c = L;
      for (int k = 0; k < K; ++k) c -= grad[static_cast<std::size_t>(k)] * lam[static_cast<std::size_t>(k)];
      cut_g.push_back(grad);
      cut_c.push_back(c);
      // Master: max tau s.t. g_s·lam + tau <= T - c_s, lam <= box; then t = T - tau.
      const int S = static_cast<int>(cut_c.size());
      const double T = *std::max_element(cut_c.begin(), cut_c.end());
      const int m = S + K, n = K + 1;
      std::vector<double> a(static_cast<std::size_t>(m) * static_cast<std::size_t>(n), 0.0),
          b(static_cast<std::size_t>(m)), cc(static_cast<std::size_t>(n), 0.0);
      for (int s = 0; s < S; ++s) {
        for (int k = 0; k < K; ++k)
          a[static_cast<std::size_t>(s * n + k)] = cut_g[static_cast<std::size_t>(s)][static_cast<std::size_t>(k)];
        a[static_cast<std::size_t>(s * n + K)] = 1.0;
        b[static_cast<std::size_t>(s)] = T - cut_c[static_cast<std::size_t>(s)];
      }
      for (int k = 0; k < K; ++k) {
        a[static_cast<std::size_t>((S + k) * n + k)] = 1.0;
        b[static_cast<std::size_t>(S + k)] = box[static_cast<std::size_t>(k)];
      }
      cc[static_cast<std::size_t>(K)] = 1.0;
      DenseLp lp(m, n, a, b, cc, 1e-12);
      const auto sol = lp.solve(20000);
      if (sol.status != DenseLpStatus::optimal) return out;
      const double t = T - sol.value;
      const double scale = 1.0 + std::abs(out.L);
      if (out.L - t <= 1e-10 * scale) return out;  // converged: out.L is the minimum
      if (t > target && converged_enough(out.L, t)) return out;
      std::vector<double> next(sol.x.begin(), sol.x.begin() + K);
      bool same = true;
      for (int k = 0; k < K; ++k)
        same = same && std::abs(next[static_cast<std::size_t>(k)] - lam[static_cast<std::size_t>(k)]) <=
                           1e-13 * (1.0 + std::abs(lam[static_cast<std::size_t>(k)]));
      if (same) return out;
      lam = std::move(next);
    }
    return out;
  }

  // Between the master's lower bound and the best value found, the bound cannot drop below the
  // target any more; prices a little off the exact optimum are still good for branching.
  static bool converged_enough(double best, double lower) { return best - lower <= 1e-6 * (1.0 + std::abs(best)); }

  // ---- primal heuristic ---------------------------------------------------------------------
  /// Capacity-aware rounding of the Lagrangian solution: groups with the largest regret (gap to
  /// their second-best reduced value) choose first, each taking its best item that still fits;
  /// then single-group improvements by true value while capacity allows.
  bool heuristic(const View& v, const std::vector<double>& lam, std::vector<int>& choice, double& value) {
    const Problem& p = *v.p;
    const int G = p.num_groups(), K = p.num_rows;
    std::vector<double> regret(static_cast<std::size_t>(G));
    std::vector<std::vector<std::pair<double, int>>> order(static_cast<std::size_t>(G));
    for (int g = 0; g < G; ++g) {
      auto& o = order[static_cast<std::size_t>(g)];
      for (int it = p.group_begin[static_cast<std::size_t>(g)]; it < p.group_begin[static_cast<std::size_t>(g) + 1];
           ++it)
        if (!v.allowed || (*v.allowed)[static_cast<std::size_t>(it)]) o.emplace_back(reduced(p, it, lam), it);
      if (o.empty()) return false;
      std::sort(o.begin(), o.end(), [](const auto& x, const auto& y) {
        return x.first > y.first || (x.first == y.first && x.second < y.second);
      });
      regret[static_cast<std::size_t>(g)] = o.size() > 1 ? o[0].first - o[1].first : kInf;
    }
    std::vector<int> gs(static_cast<std::size_t>(G));
    std::iota(gs.begin(), gs.end(), 0);
    std::vector<char> forced(static_cast<std::size_t>(G));
    for (int g = 0; g < G; ++g) {
      bool none_ok = false;
      for (const auto& [r, it] : order[static_cast<std::size_t>(g)])
        none_ok = none_ok || p.column[static_cast<std::size_t>(it)] < 0;
      forced[static_cast<std::size_t>(g)] = none_ok ? 0 : 1;
    }
    std::stable_sort(gs.begin(), gs.end(), [&](int a, int b) {
      if (forced[static_cast<std::size_t>(a)] != forced[static_cast<std::size_t>(b)])
        return forced[static_cast<std::size_t>(a)] > forced[static_cast<std::size_t>(b)];
      return regret[static_cast<std::size_t>(a)] > regret[static_cast<std::size_t>(b)];
    });
    std::vector<double> rem(p.cap);
    auto fits = [&](int it, int old) {
      for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q) {
        const auto k = static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)]);
        double avail = rem[k];
        if (old >= 0)
          for (int r = p.use_begin[static_cast<std::size_t>(old)]; r < p.use_begin[static_cast<std::size_t>(old) + 1];
               ++r)
            if (p.use_row[static_cast<std::size_t>(r)] == static_cast<int>(k))
              avail += p.use_val[static_cast<std::size_t>(r)];
        if (p.use_val[static_cast<std::size_t>(q)] > avail + cap_tol(k)) return false;
      }
      return true;
    };
    auto take = [&](int it, double sgn) {
      for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
        rem[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] -=
            sgn * p.use_val[static_cast<std::size_t>(q)];
    };
    choice.assign(static_cast<std::size_t>(G), -1);
    for (int g : gs) {
      for (const auto& [r, it] : order[static_cast<std::size_t>(g)])
        if (fits(it, -1)) {
          choice[static_cast<std::size_t>(g)] = it;
          take(it, 1.0);
          break;
        }
      if (choice[static_cast<std::size_t>(g)] < 0) return false;
    }
    // Improvement passes by true value.
    for (int pass = 0; pass < 3; ++pass) {
      bool improved = false;
      for (int g : gs) {
        const int cur = choice[static_cast<std::size_t>(g)];
        int best = cur;
        for (const auto& [r, it] : order[static_cast<std::size_t>(g)])
          if (p.value[static_cast<std::size_t>(it)] > p.value[static_cast<std::size_t>(best)] + 1e-12 && fits(it, cur))
            best = it;
        if (best != cur) {
          take(cur, -1.0);
          take(best, 1.0);
          choice[static_cast<std::size_t>(g)] = best;
          improved = true;
        }
      }
      if (!improved) break;
    }
    (void)K;
    value = p.fixed_value;
    for (int g = 0; g < G; ++g) value += p.value[static_cast<std::size_t>(choice[static_cast<std::size_t>(g)])];
    return true;
  }

  double cap_tol(std::size_t k) const {
    return 1e-9 * std::max(1.0, std::abs(full_.cap.size() > k ? full_.cap[k] : 1.0));
  }

  bool feasible_choice(const Problem& p, const std::vector<int>& choice) const {
    std::vector<double> used(static_cast<std::size_t>(p.num_rows), 0.0);
    for (int g = 0; g < p.num_groups(); ++g) {
      const int it = choice[static_cast<std::size_t>(g)];
      if (it < p.group_begin[static_cast<std::size_t>(g)] || it >= p.group_begin[static_cast<std::size_t>(g) + 1])
        return false;
      for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
        used[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] +=
            p.use_val[static_cast<std::size_t>(q)];
    }
    for (int k = 0; k < p.num_rows; ++k)
      if (used[static_cast<std::size_t>(k)] > p.cap[static_cast<std::size_t>(k)] + cap_tol(static_cast<std::size_t>(k)))
        return false;
    return true;
  }

  double value_of(const Problem& p, const std::vector<int>& choice) const {
    double v = p.fixed_value;
    for (int g = 0; g < p.num_groups(); ++g)
      v += p.value[static_cast<std::size_t>(choice[static_cast<std::size_t>(g)])];
    return v;
  }

  bool limit_hit() {
    if (hit_limit_) return true;
    if (nodes_ > limits_.max_nodes) hit_limit_ = true;
    if (limits_.deadline && Clock::now() > *limits_.deadline) hit_limit_ = true;
    return hit_limit_;
  }

  // ---- branch and bound on the core -----------------------------------------------------------
  void offer_core(const std::vector<int>& core_choice, double value);
  void dfs(std::vector<char>& allowed, const std::vector<double>& lam_start);
  int dp_core(const std::vector<double>& lam);
  [[nodiscard]] double target() const { return best_value_ == -kInf ? -kInf : best_value_ + tol_fn_(best_value_); }

  const Problem& full_;
  std::function<double(double)> tol_fn_;
  SearchLimits limits_;
  bool debug_ = false;  // SIA_NATIVE_DEBUG set: timings and DP sizes on stderr (tuning aid)
  bool hit_limit_ = false;
  int kelley_iters_ = 0;
  long long nodes_ = 0;

  // Incumbent (full problem).
  double best_value_ = -kInf;
  std::vector<int> best_choice_;
  double pruned_bound_ = -kInf;  // max bound of subtrees discarded by bound

  // Core problem and its mapping to the full problem.
  Problem core_;
  std::vector<int> core_item_to_full_;
  std::vector<int> core_group_to_full_;
  std::vector<int> base_choice_;  // full choice with the decided groups filled in
  std::vector<double> core_box_;
};

inline void MckpSearch::offer_core(const std::vector<int>& core_choice, double value) {
  if (value <= best_value_) return;
  best_value_ = value;
  best_choice_ = base_choice_;
  for (int g = 0; g < core_.num_groups(); ++g)
    best_choice_[static_cast<std::size_t>(core_group_to_full_[static_cast<std::size_t>(g)])] =
        core_item_to_full_[static_cast<std::size_t>(core_choice[static_cast<std::size_t>(g)])];
}

inline void MckpSearch::dfs(std::vector<char>& allowed, const std::vector<double>& lam_start) {
  ++nodes_;
  if (limit_hit()) return;
  const Problem& p = core_;
  const int G = p.num_groups(), K = p.num_rows;
  View v{&p, &allowed};

  // Quick infeasibility: the least each row must carry.
  {
    std::vector<double> need(static_cast<std::size_t>(K), 0.0);
    for (int g = 0; g < G; ++g) {
      std::vector<double> mn(static_cast<std::size_t>(K), kInf);
      bool any = false, none = false;
      for (int it = p.group_begin[static_cast<std::size_t>(g)]; it < p.group_begin[static_cast<std::size_t>(g) + 1];
           ++it) {
        if (!allowed[static_cast<std::size_t>(it)]) continue;
        any = true;
        if (p.use_begin[static_cast<std::size_t>(it)] == p.use_begin[static_cast<std::size_t>(it) + 1]) {
          none = true;
          break;
        }
      }
      if (!any) return;
      if (none) continue;
      for (int it = p.group_begin[static_cast<std::size_t>(g)]; it < p.group_begin[static_cast<std::size_t>(g) + 1];
           ++it) {
        if (!allowed[static_cast<std::size_t>(it)]) continue;
        std::vector<double> u(static_cast<std::size_t>(K), 0.0);
        for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
          u[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] += p.use_val[static_cast<std::size_t>(q)];
        for (int k = 0; k < K; ++k)
          mn[static_cast<std::size_t>(k)] = std::min(mn[static_cast<std::size_t>(k)], u[static_cast<std::size_t>(k)]);
      }
      for (int k = 0; k < K; ++k) need[static_cast<std::size_t>(k)] += mn[static_cast<std::size_t>(k)];
    }
    for (int k = 0; k < K; ++k)
      if (need[static_cast<std::size_t>(k)] > p.cap[static_cast<std::size_t>(k)] + cap_tol(static_cast<std::size_t>(k)))
        return;
  }

  const double tgt = target();
  auto kel = kelley(v, core_box_, lam_start, tgt, 40 + 20 * K);
  if (kel.infeasible) return;
  if (kel.L <= tgt) {
    pruned_bound_ = std::max(pruned_bound_, kel.L);
    return;
  }
  if (hit_limit_) return;
  const auto& lam = kel.lam;
  std::vector<double> grad;
  std::vector<int> best;
  const double L = evaluate(v, lam, grad, &best);

  // Greedy solution at these prices: optimal for the node when it fits and closes the gap.
  if (feasible_choice(p, best)) {
    const double val = value_of(p, best);
    offer_core(best, val);
    if (val >= L - tol_fn_(val)) {
      pruned_bound_ = std::max(pruned_bound_, L);
      return;
    }
  }
  {
    std::vector<int> hc;
    double hv = 0.0;
    if (heuristic(v, lam, hc, hv)) offer_core(hc, hv);
  }
  if (L <= target()) {
    pruned_bound_ = std::max(pruned_bound_, L);
    return;
  }

  // Reduced-cost fixing and choice of the branching group (smallest gap to its second-best item).
  const double thr = best_value_ > -kInf ? L - target() : kInf;
  std::vector<char> child(allowed);
  int branch = -1;
  double branch_gap = kInf;
  for (int g = 0; g < G; ++g) {
    const int bi = best[static_cast<std::size_t>(g)];
    const double rb = reduced(p, bi, lam);
    int count = 0;
    double second = kInf;
    for (int it = p.group_begin[static_cast<std::size_t>(g)]; it < p.group_begin[static_cast<std::size_t>(g) + 1];
         ++it) {
      if (!child[static_cast<std::size_t>(it)]) continue;
      const double d = rb - reduced(p, it, lam);
      if (d > thr) {
        child[static_cast<std::size_t>(it)] = 0;
        pruned_bound_ = std::max(pruned_bound_, L - d);
        continue;
      }
      ++count;
      if (it != bi) second = std::min(second, d);
    }
    if (count > 1 && second < branch_gap) {
      branch_gap = second;
      branch = g;
    }
  }
  if (branch < 0) {
    // Every group decided: `best` restricted to the survivors is the only candidate left.
    std::vector<int> only(static_cast<std::size_t>(G), -1);
    for (int g = 0; g < G; ++g)
      for (int it = p.group_begin[static_cast<std::size_t>(g)]; it < p.group_begin[static_cast<std::size_t>(g) + 1];
           ++it)
        if (child[static_cast<std::size_t>(it)]) only[static_cast<std::size_t>(g)] = it;
    if (std::find(only.begin(), only.end(), -1) == only.end() && feasible_choice(p, only))
      offer_core(only, value_of(p, only));
    return;
  }
  std::vector<std::pair<double, int>> order;
  for (int it = p.group_begin[static_cast<std::size_t>(branch)];
       it < p.group_begin[static_cast<std::size_t>(branch) + 1]; ++it)
    if (child[static_cast<std::size_t>(it)]) order.emplace_back(reduced(p, it, lam), it);
  std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    return x.first > y.first || (x.first == y.first && x.second < y.second);
  });
  for (const auto& [r, it] : order) {
    if (hit_limit_) return;
    std::vector<char> sub(child);
    for (int j = p.group_begin[static_cast<std::size_t>(branch)];
         j < p.group_begin[static_cast<std::size_t>(branch) + 1]; ++j)
      sub[static_cast<std::size_t>(j)] = j == it ? 1 : 0;
    dfs(sub, lam);
  }
}

// The core as a shortest path over usage deviations. With the base choice b_g = best item of
// each group at prices lam, every solution x has value L(lam) - cost(x) with
//     cost(x) = sum_g delta_g(x_g) + lam·(R - d(x)),  d(x) = sum_g (a(x_g) - a(b_g)),  R = cap - a(b),
// feasible iff d(x) <= R. A better solution than the target needs cost < Delta = L - target, so
// only items with delta < Delta matter and d stays in a small box around R: states are the
// integer vectors d reachable with partial cost < Delta (pruned further by what the remaining
// groups can still add or remove). Exact, pseudo-polynomial in the few capacity rows.
// Returns 1 when it settled the core (incumbent updated if it improved), -1 when it gave up
// (too many states, time), 0 when it does not apply.
inline int MckpSearch::dp_core(const std::vector<double>& lam) {
  const Problem& p = core_;
  const int G = p.num_groups(), K = p.num_rows;
  if (K == 0 || K > 6) return 0;
  for (double a : p.use_val)
    if (a != std::round(a) || std::abs(a) > 1e6) return 0;
  std::vector<double> grad;
  std::vector<int> base;
  const double L = evaluate(View{&p, nullptr}, lam, grad, &base);
  if (L == -kInf) return 0;
  const double delta_max = L - target();
  if (!(delta_max > 0.0)) {
    pruned_bound_ = std::max(pruned_bound_, L);
    return 1;
  }
  const auto Ku = static_cast<std::size_t>(K);
  auto usage = [&](int it, long long* u) {
    std::fill(u, u + K, 0LL);
    for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
      u[p.use_row[static_cast<std::size_t>(q)]] +=
          static_cast<long long>(std::llround(p.use_val[static_cast<std::size_t>(q)]));
  };
  // Moves per group (non-base items with delta < delta_max): item, delta, deviation (flat, K per move).
  std::vector<int> mv_begin{0}, mv_item;
  std::vector<double> mv_delta;
  std::vector<long long> mv_dev;
  std::vector<long long> R(Ku), ub(Ku), ui(Ku);
  for (int k = 0; k < K; ++k)
    R[static_cast<std::size_t>(k)] = static_cast<long long>(std::floor(p.cap[static_cast<std::size_t>(k)] + 1e-9));
  for (int g = 0; g < G; ++g) {
    const int b = base[static_cast<std::size_t>(g)];
    usage(b, ub.data());
    for (std::size_t k = 0; k < Ku; ++k) R[k] -= ub[k];
    const double rb = reduced(p, b, lam);
    for (int it = p.group_begin[static_cast<std::size_t>(g)]; it < p.group_begin[static_cast<std::size_t>(g) + 1];
         ++it) {
      if (it == b) continue;
      const double d = std::max(0.0, rb - reduced(p, it, lam));
      if (d >= delta_max) continue;
      usage(it, ui.data());
      mv_item.push_back(it);
      mv_delta.push_back(d);
      for (std::size_t k = 0; k < Ku; ++k) mv_dev.push_back(ui[k] - ub[k]);
    }
    mv_begin.push_back(static_cast<int>(mv_item.size()));
  }
  // What groups g.. can still add (inc) or remove (dec) per row.
  std::vector<long long> inc((static_cast<std::size_t>(G) + 1) * Ku, 0), dec(inc);
  for (int g = G - 1; g >= 0; --g)
    for (std::size_t k = 0; k < Ku; ++k) {
      long long up = 0, down = 0;
      for (int m = mv_begin[static_cast<std::size_t>(g)]; m < mv_begin[static_cast<std::size_t>(g) + 1]; ++m) {
        up = std::max(up, mv_dev[static_cast<std::size_t>(m) * Ku + k]);
        down = std::max(down, -mv_dev[static_cast<std::size_t>(m) * Ku + k]);
      }
      inc[static_cast<std::size_t>(g) * Ku + k] = inc[(static_cast<std::size_t>(g) + 1) * Ku + k] + up;
      dec[static_cast<std::size_t>(g) * Ku + k] = dec[(static_cast<std::size_t>(g) + 1) * Ku + k] + down;
    }
  // Key packing: field k holds d_k + dec_k(0) in [0, inc_k(0) + dec_k(0)]; partial sums stay in
  // range, so adding a move is adding its packed deviation to the key.
  std::vector<int> shift(Ku);
  std::vector<unsigned long long> mask(Ku);
  int bits = 0;
  for (std::size_t k = 0; k < Ku; ++k) {
    const long long range = inc[k] + dec[k] + 1;
    int b = 1;
    while ((1LL << b) < range) ++b;
    shift[k] = bits;
    mask[k] = (1ULL << b) - 1ULL;
    bits += b;
  }
  if (bits > 62) return 0;
  std::vector<long long> mv_key(mv_item.size(), 0);
  for (std::size_t m = 0; m < mv_item.size(); ++m)
    for (std::size_t k = 0; k < Ku; ++k) mv_key[m] += mv_dev[m * Ku + k] * (1LL << shift[k]);
  unsigned long long key0 = 0;
  for (std::size_t k = 0; k < Ku; ++k) key0 |= static_cast<unsigned long long>(dec[k]) << shift[k];
  auto field = [&](unsigned long long key, std::size_t k) {
    return static_cast<long long>((key >> shift[k]) & mask[k]) - dec[k];
  };

  // Iterative widening: a pass with budget D enumerates every solution of cost < D. A solution
  // found is optimal; none found proves OPT <= L - D. Small budgets are cheap, so budgets grow
  // geometrically up to delta_max.
  struct Trail {
    int prev;
    int move;
  };
  std::vector<Trail> trail;
  std::vector<unsigned long long> cur_key, next_key;
  std::vector<double> cur_cost, next_cost;
  std::vector<int> cur_node, next_node;
  std::vector<int> table;
  constexpr std::size_t kMaxStates = 2'000'000, kMaxTrail = 4'000'000;
  double budget = std::min(delta_max, std::max(delta_max / 64.0, 1e-6 * (1.0 + std::abs(L))));
  for (;;) {
    // Any state with d <= R completes to a feasible solution by keeping the base items of the
    // remaining groups, at cost + lam·(R - d): the pass's budget shrinks to the best completion.
    // Once a completion is known, only solutions better by more than the tolerance matter.
    int found_node = -2;
    double found_cost = budget, cut = budget;
    auto completion = [&](unsigned long long key, double c, int node) {
      for (std::size_t k = 0; k < Ku; ++k) {
        const long long d = field(key, k);
        if (d > R[k]) return;
        c += lam[k] * static_cast<double>(R[k] - d);
        if (c >= found_cost) return;
      }
      found_cost = c;
      found_node = node;
      cut = std::min(cut, c - tol_fn_(L - c));
    };
    trail.clear();
    cur_key.assign(1, key0);
    cur_cost.assign(1, 0.0);
    cur_node.assign(1, -1);
    bool gave_up = false;
    for (int g = 0; g < G && !gave_up; ++g) {
      if (limit_hit()) return -1;
      next_key.clear();
      next_cost.clear();
      next_node.clear();
      const int m0 = mv_begin[static_cast<std::size_t>(g)], m1 = mv_begin[static_cast<std::size_t>(g) + 1];
      const std::size_t expect = cur_key.size() * static_cast<std::size_t>(1 + m1 - m0);
      std::size_t tsize = 1024;
      while (tsize < 2 * expect) tsize <<= 1;
      table.assign(tsize, -1);
      const long long* inc_r = &inc[(static_cast<std::size_t>(g) + 1) * Ku];
      const long long* dec_r = &dec[(static_cast<std::size_t>(g) + 1) * Ku];
      for (std::size_t si = 0; si < cur_key.size() && !gave_up; ++si) {
        for (int m = m0 - 1; m < m1; ++m) {  // m0 - 1 = keep the base item
          const double c = cur_cost[si] + (m >= m0 ? mv_delta[static_cast<std::size_t>(m)] : 0.0);
          if (c >= cut) continue;
          const unsigned long long key =
              m >= m0 ? cur_key[si] + static_cast<unsigned long long>(mv_key[static_cast<std::size_t>(m)])
                      : cur_key[si];
          double slack_cost = 0.0;
          bool dead = false;
          for (std::size_t k = 0; k < Ku; ++k) {
            const long long d = field(key, k);
            if (d - dec_r[k] > R[k]) {  // can no longer get back under capacity
              dead = true;
              break;
            }
            const long long slack = R[k] - d - inc_r[k];
            if (slack > 0) slack_cost += lam[k] * static_cast<double>(slack);
          }
          if (dead || c + slack_cost >= cut) continue;
          std::size_t h = static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> 20) & (tsize - 1);
          while (table[h] >= 0 && next_key[static_cast<std::size_t>(table[h])] != key) h = (h + 1) & (tsize - 1);
          int node = cur_node[si];
          if (m >= m0) {
            if (table[h] >= 0 && next_cost[static_cast<std::size_t>(table[h])] <= c) continue;
            if (trail.size() >= kMaxTrail) {
              gave_up = true;
              break;
            }
            trail.push_back({node, m});
            node = static_cast<int>(trail.size()) - 1;
          }
          completion(key, c, node);
          if (table[h] < 0) {
            table[h] = static_cast<int>(next_key.size());
            next_key.push_back(key);
            next_cost.push_back(c);
            next_node.push_back(node);
            if (next_key.size() > kMaxStates) {
              gave_up = true;
              break;
            }
          } else if (next_cost[static_cast<std::size_t>(table[h])] > c) {
            next_cost[static_cast<std::size_t>(table[h])] = c;
            next_node[static_cast<std::size_t>(table[h])] = node;
          }
        }
      }
      if (g == 0) completion(key0, 0.0, -1);
      std::swap(cur_key, next_key);
      std::swap(cur_cost, next_cost);
      std::swap(cur_node, next_node);
      if (debug_ && g % 20 == 0)
        std::fprintf(stderr, "dp budget %.4g layer %d: %zu states, trail %zu\n", budget, g, cur_key.size(),
                     trail.size());
    }
    if (gave_up) return -1;
    if (found_node >= -1) {
      std::vector<int> choice(base);
      for (int n = found_node; n >= 0; n = trail[static_cast<std::size_t>(n)].prev) {
        const int m = trail[static_cast<std::size_t>(n)].move;
        const auto g =
            static_cast<std::size_t>(std::upper_bound(mv_begin.begin(), mv_begin.end(), m) - mv_begin.begin() - 1);
        choice[g] = mv_item[static_cast<std::size_t>(m)];
      }
      if (!feasible_choice(p, choice)) return -1;  // numerical trouble: let the branch and bound decide
      const double v = value_of(p, choice);
      offer_core(choice, v);
      // Every solution of cost < cut was enumerated: nothing beats this one by more than the
      // tolerance (L - cut bounds what was pruned).
      pruned_bound_ = std::max(pruned_bound_, std::min(L, std::max(v, L - cut)));
      return 1;
    }
    if (budget >= delta_max) {
      pruned_bound_ = std::max(pruned_bound_, L - delta_max);
      return 1;
    }
    budget = std::min(delta_max, budget * 2.0);
  }
}

inline SearchResult MckpSearch::run(const std::vector<double>* warm_prices, const std::vector<int>* warm_choice) {
  SearchResult res;
  const Problem& p = full_;
  const int K = p.num_rows, G = p.num_groups();
  View v{&p, nullptr};
  const auto box = price_box(p);
  std::vector<double> lam0(static_cast<std::size_t>(K), 0.0);
  if (warm_prices && static_cast<int>(warm_prices->size()) == K) lam0 = *warm_prices;

  if (warm_choice && static_cast<int>(warm_choice->size()) == G && feasible_choice(p, *warm_choice)) {
    best_value_ = value_of(p, *warm_choice);
    best_choice_ = *warm_choice;
  }

  // Root: the LP optimum (no early stop: its prices are reported).
  const auto t_root = Clock::now();
  auto root = kelley(v, box, lam0, -kInf, 100 + 40 * K);
  nodes_ = 1;
  if (debug_)
    std::fprintf(stderr, "root kelley %.3f ms, %d iterations\n",
                 std::chrono::duration<double, std::milli>(Clock::now() - t_root).count(), kelley_iters_);
  if (root.infeasible) {
    res.proven = !hit_limit_;
    res.hit_limit = hit_limit_;
    return res;
  }
  res.root_bound = root.L;
  res.prices = root.lam;
  std::vector<double> grad;
  std::vector<int> best;
  const double L = evaluate(v, root.lam, grad, &best);
  res.group_duals.resize(static_cast<std::size_t>(G));
  for (int g = 0; g < G; ++g)
    res.group_duals[static_cast<std::size_t>(g)] = reduced(p, best[static_cast<std::size_t>(g)], root.lam);

  if (feasible_choice(p, best) && value_of(p, best) > best_value_) {
    best_value_ = value_of(p, best);
    best_choice_ = best;
  }
  {
    std::vector<int> hc;
    double hv = 0.0;
    if (heuristic(v, root.lam, hc, hv) && hv > best_value_) {
      best_value_ = hv;
      best_choice_ = hc;
    }
  }

  res.root_incumbent = best_value_;
  if (L <= target()) {
    pruned_bound_ = L;
  } else {
    // Reduced-cost fixing at the root; the survivors with a choice form the core.
    const double thr = best_value_ > -kInf ? L - target() : kInf;
    base_choice_.assign(static_cast<std::size_t>(G), -1);
    core_ = Problem{};
    core_.num_rows = K;
    core_.cap = p.cap;
    core_.fixed_value = p.fixed_value;
    std::vector<int> keep;
    for (int g = 0; g < G; ++g) {
      const int bi = best[static_cast<std::size_t>(g)];
      const double rb = reduced(p, bi, root.lam);
      keep.clear();
      for (int it = p.group_begin[static_cast<std::size_t>(g)]; it < p.group_begin[static_cast<std::size_t>(g) + 1];
           ++it) {
        const double d = rb - reduced(p, it, root.lam);
        if (d > thr) {
          pruned_bound_ = std::max(pruned_bound_, L - d);
          continue;
        }
        keep.push_back(it);
      }
      if (keep.size() == 1) {
        const int it = keep[0];
        base_choice_[static_cast<std::size_t>(g)] = it;
        core_.fixed_value += p.value[static_cast<std::size_t>(it)];
        for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
          core_.cap[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] -=
              p.use_val[static_cast<std::size_t>(q)];
        continue;
      }
      for (int it : keep) {
        std::vector<std::pair<int, double>> use;
        for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
          use.emplace_back(p.use_row[static_cast<std::size_t>(q)], p.use_val[static_cast<std::size_t>(q)]);
        core_.add_item(p.value[static_cast<std::size_t>(it)], p.column[static_cast<std::size_t>(it)], use);
        core_item_to_full_.push_back(it);
      }
      core_.close_group(p.group_row[static_cast<std::size_t>(g)]);
      core_group_to_full_.push_back(g);
    }
    core_box_ = price_box(core_);
    res.core_groups = core_.num_groups();
    res.core_items = core_.num_items();
    // Exact dynamic programme over the core's integer usage deviations; branch and bound when it
    // does not apply (fractional usage, many rows) or its state space gets too large.
    const auto t_dp = Clock::now();
    const int dp = best_value_ > -kInf ? dp_core(root.lam) : 0;
    if (debug_)
      std::fprintf(stderr, "dp %d: %.3f ms (heuristic+setup before: %.3f ms)\n", dp,
                   std::chrono::duration<double, std::milli>(Clock::now() - t_dp).count(),
                   std::chrono::duration<double, std::milli>(t_dp - t_root).count());
    res.dp_used = dp != 0;
    if (dp <= 0) {
      std::vector<char> allowed(static_cast<std::size_t>(core_.num_items()), 1);
      dfs(allowed, root.lam);
    }
  }

  res.nodes = nodes_;
  res.hit_limit = hit_limit_;
  res.feasible = best_value_ > -kInf;
  res.value = best_value_;
  res.choice = best_choice_;
  res.proven = !hit_limit_;
  if (res.proven) {
    res.bound = res.feasible ? std::min(L, std::max(best_value_, pruned_bound_)) : -kInf;
  } else {
    res.bound = L;
  }
  return res;
}

}  // namespace sia::detail::native
