// Branch and bound over class counts (branch.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "milp/native/branch.hpp"
#include "milp/native/core_dp.hpp"
#include "milp/native/heuristic.hpp"

namespace sia::detail::native {
namespace {

class Search {
 public:
  Search(const Relaxation& rel, double root_L, double incumbent, const Counts& incumbent_counts,
         const std::function<double(double)>& tol, const BranchLimits& limits, bool debug)
      : rel_(rel),
        p_(rel.problem()),
        cls_(rel.classes()),
        tol_(tol),
        limits_(limits),
        debug_(debug),
        root_L_(root_L),
        best_(incumbent),
        best_counts_(incumbent_counts) {
    b_.reset(p_, cls_);
    box_ = rel.price_box();
  }

  BranchOutcome run(const std::vector<double>& lam) {
    node(lam, root_L_, 0);
    BranchOutcome out;
    out.nodes = nodes_;
    out.lift_pruned = lift_pruned_;
    out.completed = !stopped_;
    out.improved = improved_;
    if (improved_) {
      out.counts = best_counts_;
      out.value = best_;
    }
    double bound = std::max(best_, pruned_);
    if (stopped_) bound = std::max(bound, frontier_);
    out.bound = std::min(root_L_, bound);
    if (debug_) std::fprintf(stderr, "bnb: %lld nodes, %lld pruned by their modular bound\n", nodes_, lift_pruned_);
    return out;
  }

 private:
  [[nodiscard]] double target() const { return best_ == -kInf ? -kInf : best_ + tol_(best_); }

  bool limit_hit() {
    if (stopped_) return true;
    if (nodes_ > limits_.max_nodes || limits_.deadline.passed()) stopped_ = true;
    return stopped_;
  }

  void offer(const Counts& n, double v) {
    if (v > best_) {
      best_ = v;
      best_counts_ = n;
      improved_ = true;
    }
  }

  struct Undo {
    int item, lo, hi, cls;
    char bounded;
  };
  void set_bounds(int c, int it, int lo, int hi, std::vector<Undo>& log) {
    const auto iu = static_cast<std::size_t>(it);
    log.push_back({it, b_.lo[iu], b_.hi[iu], c, b_.bounded[static_cast<std::size_t>(c)]});
    b_.lo[iu] = lo;
    b_.hi[iu] = hi;
    b_.classify(p_, cls_, c);
  }
  void undo(std::vector<Undo>& log, std::size_t to) {
    while (log.size() > to) {
      const Undo u = log.back();
      log.pop_back();
      b_.lo[static_cast<std::size_t>(u.item)] = u.lo;
      b_.hi[static_cast<std::size_t>(u.item)] = u.hi;
      b_.bounded[static_cast<std::size_t>(u.cls)] = u.bounded;
    }
  }

  // Reduced-cost fixing of free and item-excluding classes: a member off its best item loses
  // delta, so at most floor(Delta / delta) members may take an item of loss delta. Returns false
  // when a lower bound already costs more than Delta (the node cannot beat the target).
  bool fix_by_reduced_cost(const std::vector<double>& lam, double L, std::vector<Undo>& log) {
    const double slack = L - target();
    if (!std::isfinite(slack)) return true;
    for (int c = 0; c < cls_.size(); ++c) {
      if (b_.bounded[static_cast<std::size_t>(c)] == 2) continue;
      const int f = cls_.first_item(p_, c), e = f + cls_.items(p_, c);
      const int m = cls_.mult[static_cast<std::size_t>(c)];
      double rb = -kInf;
      for (int it = f; it < e; ++it)
        if (b_.hi[static_cast<std::size_t>(it)] > 0) rb = std::max(rb, rel_.reduced(it, lam.data()));
      for (int it = f; it < e; ++it) {
        const int hi = b_.hi[static_cast<std::size_t>(it)];
        if (hi == 0) continue;
        const double d = rb - rel_.reduced(it, lam.data());
        if (!(d > 0.0)) continue;
        const double cap = std::floor(slack / d);
        if (cap >= std::min(hi, m)) continue;
        const int nh = static_cast<int>(std::max(0.0, cap));
        pruned_ = std::max(pruned_, L - d * (nh + 1));
        set_bounds(c, it, 0, nh, log);
      }
    }
    return true;
  }

  void node(const std::vector<double>& lam_parent, double parent_L, int depth) {
    if (root_L_ <= target()) {  // the root bound already proves the incumbent: all is pruned by it
      pruned_ = std::max(pruned_, root_L_);
      return;
    }
    ++nodes_;
    if (limit_hit()) {
      frontier_ = std::max(frontier_, parent_L);
      return;
    }
    if (best_ == -kInf && rel_.lp_infeasible(&b_, limits_.deadline)) return;
    const int K = p_.num_rows;
    KelleyResult kr = rel_.minimise(lam_parent, box_, &b_, target(), 40 + 20 * K, limits_.deadline, true);
    if (kr.infeasible) return;
    double L = std::min(kr.L, parent_L);
    if (L <= target()) {
      pruned_ = std::max(pruned_, L);
      return;
    }
    // The node's modular bound (core_dp.hpp): rows that the node's cheap moves cannot fill to the
    // last GPU lower its bound below its LP's, as at the root; with rounds whose gap is such
    // granularity (many GPU types, few jobs per type) most nodes are pruned by it. (Not at the root:
    // the caller's bound, parent_L there, holds the root's lift already.)
    if (depth > 0 && std::isfinite(target())) {
      AtPrices at;
      if (node_base_items(rel_, kr.lam, b_, at.best)) {
        at.L = kr.L;
        const double budget = kr.L - target();
        const double lift = modular_bounds(rel_, kr.lam, budget, &at, &b_);
        if (kr.L - lift < L) L = kr.L - lift;
        // (A lift that reaches the budget proves the node: L - lift may round to just above the
        // target then.)
        if (lift >= budget || L <= target()) {
          ++lift_pruned_;
          pruned_ = std::max(pruned_, L);
          return;
        }
      }
    }
    if (limit_hit()) {
      frontier_ = std::max(frontier_, L);
      return;
    }
    std::vector<double> x;
    std::vector<int> split;
    rel_.primal_counts(kr, &b_, x, split);
    {
      Counts n;
      double v = 0.0;
      if (round_lp_and_repair(rel_, kr.lam, &b_, x, n, v)) offer(n, v);
      if (depth <= 2 && !(L <= target()) && round_and_repair(rel_, kr.lam, &b_, n, v)) offer(n, v);
    }
    if (L <= target()) {
      pruned_ = std::max(pruned_, L);
      return;
    }
    std::vector<Undo> log;
    // The fixing must use L at the prices it prices with (kr.L), not a smaller inherited bound.
    fix_by_reduced_cost(kr.lam, kr.L, log);

    // Branching count: the most fractional count of the LP's primal solution.
    int bc = -1, bi = -1;
    double bx = 0.0, bscore = -1.0;
    for (int c : split) {
      const int f = cls_.first_item(p_, c), e = f + cls_.items(p_, c);
      for (int it = f; it < e; ++it) {
        const double xv = x[static_cast<std::size_t>(it)];
        const double fr = xv - std::floor(xv);
        if (fr < 1e-6 || fr > 1.0 - 1e-6) continue;
        const int lo = b_.bounded[static_cast<std::size_t>(c)] ? b_.lo[static_cast<std::size_t>(it)] : 0;
        const int hi = b_.bounded[static_cast<std::size_t>(c)] ? b_.hi[static_cast<std::size_t>(it)]
                                                               : cls_.mult[static_cast<std::size_t>(c)];
        if (std::floor(xv) < lo || std::ceil(xv) > hi) continue;
        const double score = std::min(fr, 1.0 - fr);
        if (score > bscore + 1e-12) {
          bscore = score;
          bc = c;
          bi = it;
          bx = xv;
        }
      }
    }
    int down_hi = 0, up_lo = 0;
    bool up_first = false;
    if (bc >= 0) {
      down_hi = static_cast<int>(std::floor(bx));
      up_lo = static_cast<int>(std::ceil(bx));
      up_first = bx - std::floor(bx) >= 0.5;
    } else {
      // The recovered primal is integral (or unusable): branch on the undecided class whose two
      // best admissible items are closest in reduced value: its best item is taken by at least
      // one member, or by none.
      double gap = kInf;
      for (int c = 0; c < cls_.size(); ++c) {
        const int f = cls_.first_item(p_, c), e = f + cls_.items(p_, c);
        const bool bd = b_.bounded[static_cast<std::size_t>(c)] != 0;
        double r1 = -kInf, r2 = -kInf;
        int i1 = -1, allowed = 0;
        for (int it = f; it < e; ++it) {
          const int hi = bd ? b_.hi[static_cast<std::size_t>(it)] : cls_.mult[static_cast<std::size_t>(c)];
          const int lo = bd ? b_.lo[static_cast<std::size_t>(it)] : 0;
          if (hi == 0 || lo == hi) continue;
          ++allowed;
          const double r = rel_.reduced(it, kr.lam.data());
          if (r > r1) {
            r2 = r1;
            r1 = r;
            i1 = it;
          } else if (r > r2) {
            r2 = r;
          }
        }
        if (allowed < 2) continue;
        if (r1 - r2 < gap) {
          gap = r1 - r2;
          bc = c;
          bi = i1;
        }
      }
      if (bc < 0) {
        // Every count is decided: the Lagrangian solution under these bounds is the only candidate.
        Counts n;
        if (rel_.assign(kr.lam, &b_, n) && counts_feasible(p_, cls_, &b_, n)) offer(n, counts_value(p_, cls_, n));
        pruned_ = std::max(pruned_, std::min(L, std::max(best_, pruned_)));
        undo(log, 0);
        return;
      }
      const int lo = b_.bounded[static_cast<std::size_t>(bc)] ? b_.lo[static_cast<std::size_t>(bi)] : 0;
      down_hi = lo;    // the best item keeps only its lower bound
      up_lo = lo + 1;  // at least one more member takes it
      up_first = true;
    }
    if (debug_ && nodes_ % 1000 == 0)
      std::fprintf(stderr, "bnb node %lld depth %d L %.10g best %.10g split %zu\n", nodes_, depth, L, best_,
                   split.size());
    const auto bu = static_cast<std::size_t>(bi);
    const bool bd = b_.bounded[static_cast<std::size_t>(bc)] != 0;
    const int cur_lo = bd ? b_.lo[bu] : 0;
    const int cur_hi = bd ? b_.hi[bu] : cls_.mult[static_cast<std::size_t>(bc)];
    if (!bd) {
      // Materialise the class's free bounds before changing one item.
      const int f = cls_.first_item(p_, bc), e = f + cls_.items(p_, bc);
      for (int it = f; it < e; ++it) {
        b_.lo[static_cast<std::size_t>(it)] = 0;
        b_.hi[static_cast<std::size_t>(it)] = cls_.mult[static_cast<std::size_t>(bc)];
      }
    }
    const std::size_t mark = log.size();
    for (int side = 0; side < 2; ++side) {
      const bool up = (side == 0) == up_first;
      if (limit_hit()) {
        frontier_ = std::max(frontier_, L);
        break;
      }
      if (up) {
        if (up_lo > cur_hi) continue;
        set_bounds(bc, bi, std::max(cur_lo, up_lo), cur_hi, log);
      } else {
        if (down_hi < cur_lo) continue;
        set_bounds(bc, bi, cur_lo, std::min(cur_hi, down_hi), log);
      }
      node(kr.lam, L, depth + 1);
      undo(log, mark);
    }
    undo(log, 0);
  }

  const Relaxation& rel_;
  const Problem& p_;
  const Classes& cls_;
  const std::function<double(double)>& tol_;
  BranchLimits limits_;
  bool debug_;
  Bounds b_;
  std::vector<double> box_;
  double root_L_;
  double best_;
  Counts best_counts_;
  bool improved_ = false;
  double pruned_ = -kInf, frontier_ = -kInf;
  long long nodes_ = 0;
  long long lift_pruned_ = 0;  // (statistics: nodes the modular bound pruned)
  bool stopped_ = false;
};

}  // namespace

BranchOutcome branch_and_bound(const Relaxation& rel, const std::vector<double>& lam, double root_L, double incumbent,
                               const Counts& incumbent_counts, const std::function<double(double)>& tol,
                               const BranchLimits& limits, bool debug) {
  Search s(rel, root_L, incumbent, incumbent_counts, tol, limits, debug);
  return s.run(lam);
}

}  // namespace sia::detail::native
