// The LP relaxation in price space (relaxation.hpp): evaluation of L in parallel blocks, the
// greedy inner problem with count bounds, Kelley's method, the primal from the master's duals.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <optional>

#include "milp/native/dense_lp.hpp"
#include "milp/native/relaxation.hpp"

namespace sia::detail::native {
namespace {

constexpr int kBlock = 256;       // classes per block: fixed, so sums do not depend on the thread count
constexpr int kSerialBlocks = 8;  // screened evaluations of no more blocks run on the calling thread

// Items of one class ordered by reduced value, best first; ties to the lower item.
void order_items(int first, int n, const std::vector<double>& r, std::vector<int>& idx) {
  idx.resize(static_cast<std::size_t>(n));
  std::iota(idx.begin(), idx.end(), first);
  std::sort(idx.begin(), idx.end(), [&](int a, int b) {
    const double ra = r[static_cast<std::size_t>(a - first)], rb = r[static_cast<std::size_t>(b - first)];
    return ra > rb || (ra == rb && a < b);
  });
}

// Kelley's cutting-plane master over the box [lo, hi]: the minimum of the model
// max_s (c_s + g_s·lam) and its minimiser. With lam = lo + y, y >= 0 it is the LP
// max tau s.t. g_s·y + tau <= T - c_s - g_s·lo, y <= hi - lo, whose model minimum is T - tau;
// the duals of the cut rows are the weights of the cuts (the primal of the relaxation).
struct CutMaster {
  bool ok = false;
  double t = 0.0;               ///< the model's minimum over the box
  std::vector<double> lam;      ///< its minimiser
  std::vector<double> weights;  ///< dual value of each cut row
};

// Into `out` (its vectors' storage reused: a round solves a master per Kelley iteration). `cut_g`: the
// cuts' gradients one after the other, K per cut.
// `held`, when given, receives per price which edges of [lo, hi] hold the master's minimum (their
// multiplier above `tol`): 1 the lower one (the reduced cost of y_k), 2 the upper one (its row's dual).
void solve_cut_master(const std::vector<double>& cut_g, const std::vector<double>& cut_c, const std::vector<double>& lo,
                      const std::vector<double>& hi, CutMaster& out, std::vector<char>* held = nullptr,
                      double tol = 0.0) {
  out.ok = false;
  const auto Ku = lo.size();
  const int K = static_cast<int>(Ku);
  const int S = static_cast<int>(cut_c.size());
  // Scratch kept by the thread: a round solves a master per Kelley iteration, and these were a
  // third of its allocations.
  thread_local std::vector<double> shifted, a, rhs, obj;
  shifted.resize(static_cast<std::size_t>(S));
  double T = -kInf;
  for (int s = 0; s < S; ++s) {
    double v = cut_c[static_cast<std::size_t>(s)];
    for (std::size_t k = 0; k < Ku; ++k) v += cut_g[static_cast<std::size_t>(s) * Ku + k] * lo[k];
    shifted[static_cast<std::size_t>(s)] = v;
    T = std::max(T, v);
  }
  const int m = S + K, n = K + 1;
  a.assign(static_cast<std::size_t>(m) * static_cast<std::size_t>(n), 0.0);
  rhs.resize(static_cast<std::size_t>(m));
  obj.assign(static_cast<std::size_t>(n), 0.0);
  for (int s = 0; s < S; ++s) {
    for (int k = 0; k < K; ++k)
      a[static_cast<std::size_t>(s * n + k)] = cut_g[static_cast<std::size_t>(s) * Ku + static_cast<std::size_t>(k)];
    a[static_cast<std::size_t>(s * n + K)] = 1.0;
    rhs[static_cast<std::size_t>(s)] = T - shifted[static_cast<std::size_t>(s)];
  }
  for (int k = 0; k < K; ++k) {
    a[static_cast<std::size_t>((S + k) * n + k)] = 1.0;
    rhs[static_cast<std::size_t>(S + k)] = hi[static_cast<std::size_t>(k)] - lo[static_cast<std::size_t>(k)];
  }
  obj[Ku] = 1.0;
  thread_local DenseLp lp;
  thread_local DenseLpResult sol;
  lp.load(m, n, a, rhs, obj, 1e-12);
  lp.solve(sol, 20000);
  if (sol.status != DenseLpStatus::optimal) return;
  out.ok = true;
  out.t = T - sol.value;
  out.lam.resize(Ku);
  for (std::size_t k = 0; k < Ku; ++k) out.lam[k] = lo[k] + sol.x[k];
  out.weights.assign(sol.y.begin(), sol.y.begin() + S);
  if (held) {
    held->assign(Ku, 0);
    for (int k = 0; k < K; ++k) {
      const auto ku = static_cast<std::size_t>(k);
      double z = sol.y[static_cast<std::size_t>(S + k)];  // (y_k's reduced cost: its objective coefficient is 0)
      for (int s = 0; s < S; ++s)
        z += sol.y[static_cast<std::size_t>(s)] * cut_g[static_cast<std::size_t>(s) * Ku + ku];
      (*held)[ku] = static_cast<char>((z > tol ? 1 : 0) | (sol.y[static_cast<std::size_t>(S + k)] > tol ? 2 : 0));
    }
  }
}

// One evaluation's per-block results: partial sums, usages (K per block) and "a class without an
// admissible item" flags, zeroed, in the calling thread's scratch (references: the blocks may run
// on other threads, which must write into these, not into their own thread_local copies). Shared
// by the evaluations, which never run inside one another on a thread.
struct BlockSums {
  std::vector<double>& part;
  std::vector<double>& use;
  std::vector<char>& bad;
};

BlockSums block_sums(int nb, std::size_t Ku) {
  thread_local std::vector<double> part, use;
  thread_local std::vector<char> bad;
  part.assign(static_cast<std::size_t>(nb), 0.0);
  use.assign(static_cast<std::size_t>(nb) * Ku, 0.0);
  bad.assign(static_cast<std::size_t>(nb), 0);
  return {part, use, bad};
}

// L = base + cap·lam + the blocks' sums in block order, and the gradient cap - the blocks' usages,
// into `out`; false (out untouched) when a block found a class without an admissible item.
bool add_blocks(PriceEval& out, const BlockSums& s, double base, const Problem& p, const std::vector<double>& lam) {
  for (char x : s.bad)
    if (x) return false;
  const auto Ku = static_cast<std::size_t>(p.num_rows);
  const auto nb = s.part.size();
  double Lv = base;
  for (std::size_t k = 0; k < Ku; ++k) Lv += p.cap[k] * lam[k];
  out.grad.assign(p.cap.begin(), p.cap.end());
  for (std::size_t blk = 0; blk < nb; ++blk) {
    Lv += s.part[blk];
    for (std::size_t k = 0; k < Ku; ++k) out.grad[k] -= s.use[blk * Ku + k];
  }
  out.L = Lv;
  return true;
}
}  // namespace

void Bounds::reset(const Problem& p, const Classes& cls) {
  lo.assign(p.value.size(), 0);
  hi.assign(p.value.size(), 0);
  bounded.assign(static_cast<std::size_t>(cls.size()), 0);
  for (int c = 0; c < cls.size(); ++c) {
    const int f = cls.first_item(p, c), e = f + cls.items(p, c);
    for (int it = f; it < e; ++it) hi[static_cast<std::size_t>(it)] = cls.mult[static_cast<std::size_t>(c)];
  }
}

void Bounds::classify(const Problem& p, const Classes& cls, int c) {
  const int f = cls.first_item(p, c), e = f + cls.items(p, c);
  const int m = cls.mult[static_cast<std::size_t>(c)];
  bool free = true, mask = true;
  for (int it = f; it < e; ++it) {
    const int l = lo[static_cast<std::size_t>(it)], h = hi[static_cast<std::size_t>(it)];
    free = free && l == 0 && h >= m;
    mask = mask && l == 0 && (h == 0 || h >= m);
  }
  bounded[static_cast<std::size_t>(c)] = free ? 0 : (mask ? 1 : 2);
}

double Relaxation::fill_bounded(int c, const double* lam, const Bounds& b, int* counts_out, int* best_out,
                                double* usage, bool zero_values) const {
  thread_local std::vector<double> r;
  thread_local std::vector<int> idx;
  const int first = c_.first_item(p_, c), n = c_.items(p_, c);
  const int mult = c_.mult[static_cast<std::size_t>(c)];
  r.resize(static_cast<std::size_t>(n));
  long long lo_sum = 0, hi_sum = 0;
  for (int t = 0; t < n; ++t) {
    r[static_cast<std::size_t>(t)] = reduced_as(first + t, lam, zero_values);
    lo_sum += b.lo[static_cast<std::size_t>(first + t)];
    hi_sum += b.hi[static_cast<std::size_t>(first + t)];
  }
  if (lo_sum > mult || hi_sum < mult) return -kInf;
  order_items(first, n, r, idx);
  int rem = mult - static_cast<int>(lo_sum);
  double total = 0.0;
  int best = -1;
  auto take = [&](int it, int cnt) {
    if (cnt <= 0) return;
    total += cnt * r[static_cast<std::size_t>(it - first)];
    if (usage)
      for (int q = p_.use_begin[static_cast<std::size_t>(it)]; q < p_.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
        usage[p_.use_row[static_cast<std::size_t>(q)]] += cnt * p_.use_val[static_cast<std::size_t>(q)];
  };
  for (int it : idx) {
    const auto iu = static_cast<std::size_t>(it);
    const int extra = std::min(rem, b.hi[iu] - b.lo[iu]);
    if (best < 0 && (extra > 0 || rem == 0)) best = it;
    rem -= extra;
    const int cnt = b.lo[iu] + extra;
    take(it, cnt);
    if (counts_out) counts_out[it - first] = cnt;
  }
  if (best_out) *best_out = best;
  return total;
}

template <class Pick>
void Relaxation::evaluate_blocks(PriceEval& out, const std::vector<double>& lam, std::vector<int>* best, double base,
                                 Pick&& pick) const {
  const int C = c_.size();
  const auto Ku = static_cast<std::size_t>(p_.num_rows);
  const BlockSums sums = block_sums(Parallel::num_blocks(C, kBlock), Ku);
  if (best) best->assign(static_cast<std::size_t>(C), -1);
  par_.blocks(C, kBlock, [&](int blk, int beg, int end) {
    double sum = 0.0;
    double* u = sums.use.data() + static_cast<std::size_t>(blk) * Ku;
    for (int c = beg; c < end; ++c) {
      int bi = -1;
      if (!pick(c, u, sum, bi)) {
        sums.bad[static_cast<std::size_t>(blk)] = 1;
        return;
      }
      if (best) (*best)[static_cast<std::size_t>(c)] = bi;
    }
    sums.part[static_cast<std::size_t>(blk)] = sum;
  });
  add_blocks(out, sums, base, p_, lam);
}

PriceEval Relaxation::evaluate(const std::vector<double>& lam, const Bounds* b, std::vector<int>* best) const {
  PriceEval out;
  evaluate_impl(out, lam, b, best, false);
  return out;
}

PriceEval Relaxation::evaluate_feasibility(const std::vector<double>& lam, const Bounds* b) const {
  PriceEval out;
  evaluate_impl(out, lam, b, nullptr, true);
  return out;
}

void Relaxation::evaluate_impl(PriceEval& out, const std::vector<double>& lam, const Bounds* b, std::vector<int>* best,
                               bool zero_values) const {
  out.L = -kInf;  // (no admissible assignment, until shown otherwise)
  out.grad.clear();
  ++evaluations_;
  const double* L = lam.data();
  evaluate_blocks(out, lam, best, zero_values ? 0.0 : p_.fixed_value, [&](int c, double* u, double& sum, int& bi) {
    const char kind = b ? b->bounded[static_cast<std::size_t>(c)] : 0;
    if (kind == 2) {
      // (Its own best item: the address handed to fill_bounded() must not be the one the item loop
      // below keeps its best in, or that loop's best lives in memory — the cold LP's loop measured
      // 40 % slower so.)
      int fb = -1;
      const double r = fill_bounded(c, L, *b, nullptr, &fb, u, zero_values);
      bi = fb;
      if (r == -kInf) return false;
      sum += r;
      return true;
    }
    const int first = c_.first_item(p_, c), last = first + c_.items(p_, c);
    double bv = -kInf;
    int ib = -1;
    for (int it = first; it < last; ++it) {
      if (kind == 1 && b->hi[static_cast<std::size_t>(it)] == 0) continue;
      const double r = reduced_as(it, L, zero_values);
      if (r > bv) {
        bv = r;
        ib = it;
      }
    }
    bi = ib;
    if (ib < 0) return false;
    take_all(c, ib, bv, sum, u);
    return true;
  });
}

PriceEval Relaxation::evaluate_from(const std::vector<double>& lam, const std::vector<double>& red,
                                    const std::vector<int>& best) const {
  // evaluate_impl() without bounds, its block sums in its order: each block's classes summed from
  // 0, then the blocks added in order to fixed + cap·lam.
  PriceEval out;
  ++evaluations_;
  const int C = c_.size(), K = p_.num_rows;
  const auto Ku = static_cast<std::size_t>(K);
  const int nb = Parallel::num_blocks(C, kBlock);
  for (int c = 0; c < C; ++c)
    if (best[static_cast<std::size_t>(c)] < 0) return out;  // (no admissible item: L = -inf)
  double Lv = p_.fixed_value;
  for (int k = 0; k < K; ++k) Lv += p_.cap[static_cast<std::size_t>(k)] * lam[static_cast<std::size_t>(k)];
  out.grad.assign(p_.cap.begin(), p_.cap.end());
  std::vector<double> u(Ku);
  for (int blk = 0; blk < nb; ++blk) {
    double sum = 0.0;
    std::fill(u.begin(), u.end(), 0.0);
    for (int c = blk * kBlock; c < std::min(C, (blk + 1) * kBlock); ++c) {
      const int bi = best[static_cast<std::size_t>(c)];
      const double m = c_.mult[static_cast<std::size_t>(c)];
      sum += m * red[static_cast<std::size_t>(bi)];
      for (int q = p_.use_begin[static_cast<std::size_t>(bi)]; q < p_.use_begin[static_cast<std::size_t>(bi) + 1]; ++q)
        u[static_cast<std::size_t>(p_.use_row[static_cast<std::size_t>(q)])] +=
            m * p_.use_val[static_cast<std::size_t>(q)];
    }
    Lv += sum;
    for (std::size_t k = 0; k < Ku; ++k) out.grad[k] -= u[k];
  }
  out.L = Lv;
  return out;
}

Relaxation::Screen Relaxation::screen(const std::vector<double>& lo, const std::vector<double>& hi,
                                      const ScreenHint* hint) const {
  Screen sc;
  sc.lo = lo;
  sc.hi = hi;
  const int C = c_.size(), K = p_.num_rows;
  const auto Ku = static_cast<std::size_t>(K);
  const int nb = Parallel::num_blocks(C, kBlock);
  // The calling thread's scratch (as in evaluate_impl): per block its partial sums, and its active
  // classes in act[beg, beg + count) (a block has no more than its classes; were a vector per block).
  thread_local std::vector<double> part_scratch, use_scratch;
  // Likewise each class's candidates: a block's in cand[first item of the block, ...) (the classes'
  // items follow one another in class order), their number per class in ncand.
  thread_local std::vector<int> act_scratch, count_scratch, cand_scratch, ncand_scratch;
  // And beside each candidate its value, row and amount (PriceScreen::cand_value, ...), written as its
  // item is read: found in a pass of their own over the candidates, each item was read again, out of
  // the cache (about a third of a warm round's screen).
  thread_local std::vector<double> cval_scratch, camt_scratch;
  thread_local std::vector<int> crow_scratch;
  std::vector<double>& part = part_scratch;
  std::vector<double>& use = use_scratch;
  std::vector<int>& act = act_scratch;
  std::vector<int>& count = count_scratch;
  std::vector<int>& cand = cand_scratch;
  std::vector<int>& ncand = ncand_scratch;
  part.assign(static_cast<std::size_t>(nb), 0.0);
  use.assign(static_cast<std::size_t>(nb) * Ku, 0.0);
  act.resize(static_cast<std::size_t>(C));
  ncand.resize(static_cast<std::size_t>(C));
  cand.resize(p_.value.size());
  cval_scratch.resize(p_.value.size());
  camt_scratch.resize(p_.value.size());
  crow_scratch.resize(p_.value.size());
  // (The calling thread's: the blocks run on other threads too, whose thread_local are others.)
  double* const cval = cval_scratch.data();
  double* const camt = camt_scratch.data();
  int* const crow = crow_scratch.data();
  count.assign(static_cast<std::size_t>(nb), 0);
  // (The arrays the passes read, in locals: read through the vectors, their data pointers were
  // loaded again for every item, the compiler not knowing the stores below leave them alone.)
  const double* const val = p_.value.data();
  const int* const ub = p_.use_begin.data();
  const int* const ur = p_.use_row.data();
  const double* const uv = p_.use_val.data();
  const double* const lo_p = lo.data();
  const double* const hi_p = hi.data();
  const int* const mult = c_.mult.data();
  int* const ncand_p = ncand.data();
  // The hint's test (ScreenHint): a class whose gap at the hint's prices exceeds twice its cost
  // times the largest relative price change `rho` to the box, plus a margin, is settled on its best
  // item. (Every amount and price >= 0: an item's value moves from the hint's prices by at most
  // sum_k a_k |lambda_k - at_k| <= rho sum_k a_k at_k, its cost but for rounding.) The margin covers
  // the rounding of the values (at the hint's prices and in the box: each within (K + 1) units of
  // the last place of (1 + rho) (vabs + cost), K <= 256) and of the test. So settled, its item's
  // least value in the box beats every other item's largest as the screen computes them: the
  // screen's own test finds it settled on that item.
  const ScreenHint::Class* hint_cls =
      hint != nullptr && Ku <= 256 && hint->cls->size() == static_cast<std::size_t>(C) && hint->at->size() == Ku &&
              hint->best->size() == static_cast<std::size_t>(C)
          ? hint->cls->data()
          : nullptr;
  double rho = 0.0;
  for (std::size_t k = 0; hint_cls != nullptr && k < Ku; ++k) {
    const double at = (*hint->at)[k], d = std::max(std::abs(hi[k] - at), std::abs(lo[k] - at));
    if (!(at >= 0.0) || (d != 0.0 && !(at > 0.0)))
      hint_cls = nullptr;  // (a price below 0, or 0 that moves: no bound from the cost)
    else if (d != 0.0)
      rho = std::max(rho, d / at);
  }
  const int* const hint_best = hint_cls != nullptr ? hint->best->data() : nullptr;
  par_.blocks(C, kBlock, [&](int blk, int beg, int end) {
    int* const a = act.data() + beg;
    const std::size_t at0 = beg < end ? static_cast<std::size_t>(c_.first_item(p_, beg)) : 0;
    int* cw = cand.data() + at0;
    double* vw = cval + at0;
    double* aw = camt + at0;
    int* rw = crow + at0;
    // (A candidate, with its value and, when it uses one row, that row and amount.)
    auto emit = [&](int it) {
      *cw++ = it;
      const int u0 = ub[it];
      const bool one = ub[it + 1] == u0 + 1;
      *vw++ = val[it];
      *rw++ = one ? ur[u0] : -1;
      *aw++ = one ? uv[u0] : 0.0;
    };
    int n_act = 0;
    double* const u = use.data() + static_cast<std::size_t>(blk) * Ku;
    double sum = 0.0;
    for (int c = beg; c < end; ++c) {
      const int first = c_.first_item(p_, c), last = first + c_.items(p_, c);
      // (The hint's settled classes first: their items are not read.)
      int bi = -1;
      if (hint_cls != nullptr) {
        const ScreenHint::Class& h = hint_cls[c];
        const int b = hint_best[c];
        if (b >= first && b < last &&
            h.top - h.second > 2.0 * rho * h.cost * (1.0 + 1e-12) + 1e-12 * (1.0 + rho) * (1.0 + h.vabs + h.cost))
          bi = b;
      }
      if (bi < 0) {
        // Per item, the range of its reduced value over the box; the item with the largest least
        // value is the class's best everywhere when no other item's largest value exceeds it.
        double best_min = -kInf, second_max = -kInf, best_max = -kInf;
        for (int it = first; it < last; ++it) {
          double rmin = val[it], rmax = val[it];
          for (int q = ub[it]; q < ub[it + 1]; ++q) {
            const auto k = static_cast<std::size_t>(ur[q]);
            const double aq = uv[q];
            rmin -= aq * hi_p[k];
            rmax -= aq * lo_p[k];
          }
          if (rmin > best_min) {
            if (bi >= 0) second_max = std::max(second_max, best_max);
            best_min = rmin;
            best_max = rmax;
            bi = it;
          } else {
            second_max = std::max(second_max, rmax);
          }
        }
        if (bi < 0 || second_max >= best_min) {
          // Its candidates: the items whose largest value in the box reaches the largest least value
          // (another item's value is below that one's everywhere in the box, so it is never the first
          // item of largest value there). The margin covers rounding: the values at any prices of the
          // box are computed as here, the same operations in the same order, monotone in the prices.
          int n = 0;
          for (int it = first; it < last; ++it) {
            double rmax = val[it];
            for (int q = ub[it]; q < ub[it + 1]; ++q) rmax -= uv[q] * lo_p[static_cast<std::size_t>(ur[q])];
            if (bi < 0 || rmax >= best_min - 1e-9 * (1.0 + std::abs(best_min) + std::abs(rmax) + std::abs(val[it]))) {
              emit(it);
              ++n;
            }
          }
          ncand_p[c] = n;
          a[n_act++] = c;
          continue;
        }
      }
      emit(bi);  // (a settled class's one candidate: its best item everywhere in the box)
      ncand_p[c] = 1;
      const double m = mult[c];
      sum += m * val[bi];
      for (int q = ub[bi]; q < ub[bi + 1]; ++q) u[ur[q]] += m * uv[q];
    }
    part[static_cast<std::size_t>(blk)] = sum;
    count[static_cast<std::size_t>(blk)] = n_act;
  });
  sc.fixed_use.assign(Ku, 0.0);
  std::size_t n_active = 0;
  for (int blk = 0; blk < nb; ++blk) n_active += static_cast<std::size_t>(count[static_cast<std::size_t>(blk)]);
  sc.active.reserve(n_active);
  sc.cand_begin.resize(static_cast<std::size_t>(C) + 1);
  sc.cand_begin[0] = 0;
  for (int c = 0; c < C; ++c)
    sc.cand_begin[static_cast<std::size_t>(c) + 1] =
        sc.cand_begin[static_cast<std::size_t>(c)] + ncand[static_cast<std::size_t>(c)];
  const auto n_cand = static_cast<std::size_t>(sc.cand_begin[static_cast<std::size_t>(C)]);
  sc.cand.reserve(n_cand);
  sc.cand_value.reserve(n_cand);
  sc.cand_row.reserve(n_cand);
  sc.cand_amount.reserve(n_cand);
  for (int blk = 0; blk < nb; ++blk) {
    sc.fixed_value += part[static_cast<std::size_t>(blk)];
    for (std::size_t k = 0; k < Ku; ++k) sc.fixed_use[k] += use[static_cast<std::size_t>(blk) * Ku + k];
    const int* const a = act.data() + static_cast<std::ptrdiff_t>(blk) * kBlock;
    sc.active.insert(sc.active.end(), a, a + count[static_cast<std::size_t>(blk)]);
    const int beg = blk * kBlock, end = std::min(C, beg + kBlock);
    const auto from = static_cast<std::size_t>(c_.first_item(p_, beg));
    const auto n = static_cast<std::size_t>(sc.cand_begin[static_cast<std::size_t>(end)] -
                                            sc.cand_begin[static_cast<std::size_t>(beg)]);
    sc.cand.insert(sc.cand.end(), cand.data() + from, cand.data() + from + n);
    sc.cand_value.insert(sc.cand_value.end(), cval + from, cval + from + n);
    sc.cand_row.insert(sc.cand_row.end(), crow + from, crow + from + n);
    sc.cand_amount.insert(sc.cand_amount.end(), camt + from, camt + from + n);
  }
  return sc;
}

PriceEval Relaxation::evaluate_in(const Screen& sc, const std::vector<double>& lam) const {
  PriceEval out;
  evaluate_in_impl(out, sc, lam);
  return out;
}

void Relaxation::evaluate_in_impl(PriceEval& out, const Screen& sc, const std::vector<double>& lam) const {
  ++evaluations_;
  const int K = p_.num_rows;
  const auto Ku = static_cast<std::size_t>(K);
  const int A = static_cast<int>(sc.active.size());
  const int nb = Parallel::num_blocks(A, kBlock);
  const BlockSums sums = block_sums(nb, Ku);  // (its flags unused: a screen's classes all have an item)
  std::vector<double>& part = sums.part;
  std::vector<double>& use = sums.use;
  const double* L = lam.data();
  auto block = [&](int blk, int beg, int end) {
    double sum = 0.0;
    double* u = use.data() + static_cast<std::size_t>(blk) * Ku;
    for (int a = beg; a < end; ++a) {
      const int c = sc.active[static_cast<std::size_t>(a)];
      int bi = -1;
      // (Its candidates only, in item order: the same first item of largest value as over all items.)
      const double bv = best_candidate(sc, c, L, bi);
      take_all(c, bi, bv, sum, u);
    }
    part[static_cast<std::size_t>(blk)] = sum;
  };
  // A few blocks on the calling thread (a warm round's screens leave about a thousand classes
  // active: ten microseconds of work): handing them to the other threads cost more CPU than the
  // blocks themselves (at 100,000 GPUs, 0.4 ms a round in the prices' local finish). The same
  // blocks either way, so the same sums.
  if (nb <= kSerialBlocks) {
    for (int blk = 0; blk < nb; ++blk) block(blk, blk * kBlock, std::min(A, (blk + 1) * kBlock));
  } else {
    par_.blocks(A, kBlock, block);
  }
  double Lv = p_.fixed_value + sc.fixed_value;
  out.grad.assign(p_.cap.begin(), p_.cap.end());
  for (std::size_t k = 0; k < Ku; ++k) {
    Lv += (p_.cap[k] - sc.fixed_use[k]) * lam[k];
    out.grad[k] -= sc.fixed_use[k];
  }
  for (int blk = 0; blk < nb; ++blk) {
    Lv += part[static_cast<std::size_t>(blk)];
    for (std::size_t k = 0; k < Ku; ++k) out.grad[k] -= use[static_cast<std::size_t>(blk) * Ku + k];
  }
  out.L = Lv;
}

PriceEval Relaxation::evaluate_with(const Screen& sc, const std::vector<double>& lam, std::vector<int>* best) const {
  // evaluate_impl() without bounds, its blocks and sums in its order; each class's first item of
  // largest value is found among its candidates (the others are below one of them in the box).
  PriceEval out;
  ++evaluations_;
  const double* L = lam.data();
  evaluate_blocks(out, lam, best, p_.fixed_value, [&](int c, double* u, double& sum, int& bi) {
    const double bv = best_candidate(sc, c, L, bi);
    if (bi < 0) return false;
    take_all(c, bi, bv, sum, u);
    return true;
  });
  return out;
}

bool Relaxation::lp_infeasible(const Bounds* b, const Deadline& deadline) const {
  // min over [0,1]^K of the positively homogeneous L0 by Kelley; < 0 proves infeasibility.
  const int K = p_.num_rows;
  const auto Ku = static_cast<std::size_t>(K);
  std::vector<double> lam(Ku, 0.0);
  std::vector<double> cut_g;  // K per cut
  std::vector<double> cut_c;
  for (int iter = 0; iter < 60 + 20 * K; ++iter) {
    const PriceEval e = evaluate_feasibility(lam, b);
    if (e.L == -kInf) return true;  // the counts themselves contradict
    // Scale: what one unit of price on every row is worth (caps), so the test is relative.
    double scale = 1.0;
    for (double c : p_.cap) scale += std::abs(c);
    if (e.L < -1e-9 * scale) return true;
    if (K == 0) return false;
    double c = e.L;
    for (std::size_t k = 0; k < Ku; ++k) c -= e.grad[k] * lam[k];
    cut_g.insert(cut_g.end(), e.grad.begin(), e.grad.end());
    cut_c.push_back(c);
    if (deadline.passed()) return false;
    CutMaster master;
    solve_cut_master(cut_g, cut_c, std::vector<double>(Ku, 0.0), std::vector<double>(Ku, 1.0), master);
    if (!master.ok) return false;
    const double t = master.t;
    if (t >= -1e-9 * scale) return false;  // the model's minimum is >= 0: feasible
    const std::vector<double>& next = master.lam;
    bool same = true;
    for (std::size_t k = 0; k < Ku; ++k) same = same && std::abs(next[k] - lam[k]) <= 1e-13;
    if (same) return false;
    lam = next;
  }
  return false;
}

bool Relaxation::assign(const std::vector<double>& lam, const Bounds* b, Counts& count) const {
  const int C = c_.size();
  count.assign(p_.value.size(), 0);
  const int nb = Parallel::num_blocks(C, kBlock);
  std::vector<char> bad(static_cast<std::size_t>(nb), 0);
  const double* L = lam.data();
  par_.blocks(C, kBlock, [&](int blk, int beg, int end) {
    for (int c = beg; c < end; ++c) {
      const int first = c_.first_item(p_, c);
      const char kind = b ? b->bounded[static_cast<std::size_t>(c)] : 0;
      if (kind == 2) {
        if (fill_bounded(c, L, *b, count.data() + first, nullptr, nullptr) == -kInf)
          bad[static_cast<std::size_t>(blk)] = 1;
        continue;
      }
      const int last = first + c_.items(p_, c);
      int bi = -1;
      double bv = -kInf;
      for (int it = first; it < last; ++it) {
        if (kind == 1 && b->hi[static_cast<std::size_t>(it)] == 0) continue;
        const double r = reduced(it, L);
        if (r > bv) {
          bv = r;
          bi = it;
        }
      }
      if (bi < 0) {
        bad[static_cast<std::size_t>(blk)] = 1;
        continue;
      }
      count[static_cast<std::size_t>(bi)] = c_.mult[static_cast<std::size_t>(c)];
    }
  });
  return std::none_of(bad.begin(), bad.end(), [](char x) { return x != 0; });
}

std::vector<double> Relaxation::price_box() const {
  const int K = p_.num_rows;
  std::vector<double> box(static_cast<std::size_t>(K), 0.0), amin(static_cast<std::size_t>(K), kInf);
  double forced_spread = 0.0;
  if (c_.spread.size() == static_cast<std::size_t>(p_.num_groups()) && c_.box_ratio.size() == box.size() &&
      c_.box_amin.size() == amin.size()) {
    // Gathered by find_classes() (the largest ratios and least amounts over every group's items are
    // those over the representatives'; each class's spread is its representative's, computed as
    // below): the same numbers without a pass over the items.
    box = c_.box_ratio;
    amin = c_.box_amin;
    for (int c = 0; c < c_.size(); ++c) {
      const int rep = c_.rep[static_cast<std::size_t>(c)];
      const double s = c_.spread[static_cast<std::size_t>(rep)];
      if (!p_.has_none(rep) && s > 0.0) forced_spread += c_.mult[static_cast<std::size_t>(c)] * s;
    }
  } else {
    for (int c = 0; c < c_.size(); ++c) {
      const int first = c_.first_item(p_, c), last = first + c_.items(p_, c);
      double vmax = -kInf, vmin = kInf;
      for (int it = first; it < last; ++it) {
        const double v = p_.value[static_cast<std::size_t>(it)];
        vmax = std::max(vmax, v);
        vmin = std::min(vmin, v);
        for (int q = p_.use_begin[static_cast<std::size_t>(it)]; q < p_.use_begin[static_cast<std::size_t>(it) + 1];
             ++q) {
          const auto k = static_cast<std::size_t>(p_.use_row[static_cast<std::size_t>(q)]);
          const double a = p_.use_val[static_cast<std::size_t>(q)];
          box[k] = std::max(box[k], std::max(v, 0.0) / a);
          amin[k] = std::min(amin[k], a);
        }
      }
      if (!p_.has_none(c_.rep[static_cast<std::size_t>(c)]) && vmax > vmin)
        forced_spread += c_.mult[static_cast<std::size_t>(c)] * (vmax - vmin);
    }
  }
  for (int k = 0; k < K; ++k) {
    const auto ku = static_cast<std::size_t>(k);
    const double extra = amin[ku] < kInf ? forced_spread / amin[ku] : 0.0;
    box[ku] = 2.0 * box[ku] + 2.0 * extra + 1e-9;
  }
  return box;
}

KelleyResult Relaxation::minimise(std::vector<double> lam0, const std::vector<double>& box, const Bounds* b,
                                  double target, int max_iter, const Deadline& deadline, bool primal,
                                  const std::vector<double>* trust, const PriceEval* first) const {
  const int K = p_.num_rows;
  const auto Ku = static_cast<std::size_t>(K);
  KelleyResult out;
  for (std::size_t k = 0; k < Ku; ++k) lam0[k] = std::clamp(lam0[k], 0.0, box[k]);
  std::vector<double> cut_g, cut_lam;  // per cut, K each, one cut after the other
  std::vector<double> cut_c;
  {  // Room for the cuts of most solves at once (grown one cut at a time, they were reallocated often).
    const auto cuts = static_cast<std::size_t>(std::clamp(max_iter, 0, 64));
    cut_g.reserve(cuts * Ku);
    cut_lam.reserve(cuts * Ku);
    cut_c.reserve(cuts);
  }
  std::vector<double> lam = lam0;
  out.lam = lam0;
  CutMaster master;                          // each iteration's master, in the same storage
  master.weights.reserve(cut_c.capacity());  // (a weight per cut, as the cuts)
  auto finish_primal = [&](const std::vector<double>& y) {
    if (!primal) return;
    double sum = 0.0;
    for (std::size_t s = 0; s < cut_c.size(); ++s) sum += std::max(0.0, y[s]);
    out.cut_lam.clear();
    out.cut_weight.clear();
    if (!(sum > 0.0)) return;
    for (std::size_t s = 0; s < cut_c.size(); ++s)
      if (y[s] > 1e-12 * sum) {
        const auto at = cut_lam.begin() + static_cast<std::ptrdiff_t>(s * Ku);
        out.cut_lam.emplace_back(at, at + static_cast<std::ptrdiff_t>(Ku));
        out.cut_weight.push_back(y[s] / sum);
      }
  };
  // Two stabilisations of Kelley's method, both keeping its exact convergence:
  // - from a warm start (`trust` given): a trust region (box step) around the best prices so far,
  //   doubled whenever the master's minimiser sits on its edge; the master's bound certifies the
  //   optimum only once the region is not binding;
  // - from a cold start: Wentges smoothing, queries between the best prices and the master's
  //   minimiser, falling back to the minimiser itself after a query that does not cut it off.
  std::vector<double> radius;
  if (trust && trust->size() == Ku) radius = *trust;
  const bool boxed = !radius.empty();
  std::vector<double> last_y, lam_master;
  last_y.reserve(cut_c.capacity());
  std::vector<double> master_lo, master_hi;  // the master's box, storage kept from iteration to iteration
  std::vector<double> next;                  // the next query, likewise
  double t_master = -kInf;
  bool last_binding = false;
  const double alpha = 0.5;
  bool pure_next = true;
  // Screened evaluations (see Screen) in a box around the best prices once the search has
  // settled near them; a query outside the box is evaluated in full, and after two such misses
  // the box is rebuilt around the best prices.
  std::optional<Screen> sc;
  static const bool no_screen = std::getenv("SIA_NATIVE_NO_SCREEN") != nullptr;
  int misses = 0, built_at = -1;
  std::vector<std::vector<double>> recent;  // the last queries: how far the search still wanders
  recent.reserve(6);
  auto width_around = [&](const std::vector<double>& centre) {
    double top = 0.0;
    for (double x : centre) top = std::max(top, x);
    std::vector<double> w(Ku, 1e-3 * top + 1e-12);
    for (const auto& q : recent)
      for (std::size_t k = 0; k < Ku; ++k) w[k] = std::max(w[k], 2.0 * std::abs(q[k] - centre[k]));
    for (std::size_t k = 0; k < Ku; ++k) w[k] = std::min(w[k], std::max(0.25 * centre[k], 0.05 * top + 1e-12));
    return w;
  };
  auto build = [&](const std::vector<double>& centre, int iter) {
    const auto w = width_around(centre);
    std::vector<double> lo(Ku), hi(Ku);
    for (std::size_t k = 0; k < Ku; ++k) {
      lo[k] = std::max(0.0, centre[k] - w[k]);
      hi[k] = std::min(box[k], centre[k] + w[k]);
    }
    sc = screen(lo, hi);
    misses = 0;
    built_at = iter;
    if (std::getenv("SIA_NATIVE_DEBUG"))
      std::fprintf(stderr, "screen at %d: %zu active of %d, %zu candidates\n", iter, sc->active.size(), c_.size(),
                   sc->cand.size());
  };
  std::optional<Screen> tsc;  // the trust region's screen, for full evaluations (evaluate_with)
  auto eval = [&](int iter, PriceEval& e) {
    if (recent.size() < 6) {
      recent.push_back(lam);
    } else {  // the oldest out, its storage reused for the newest
      std::rotate(recent.begin(), recent.begin() + 1, recent.end());
      recent.back() = lam;
    }
    if (!b && sc && sc->contains(lam)) {
      evaluate_in_impl(e, *sc, lam);
      // The search has narrowed: a tighter box leaves fewer classes active.
      if (iter - built_at >= 6 && static_cast<int>(recent.size()) == 6 &&
          4 * sc->active.size() > static_cast<std::size_t>(c_.size())) {
        const auto w = width_around(e.L < out.L ? lam : out.lam);
        bool narrower = true;
        for (std::size_t k = 0; k < Ku; ++k) narrower = narrower && 2.0 * w[k] < sc->hi[k] - sc->lo[k];
        if (narrower) build(e.L < out.L ? lam : out.lam, iter);
      }
      return;
    }
    if (iter == 0 && first) {  // (what evaluate_impl() would find: the caller evaluated lam0 already)
      ++evaluations_;
      e.L = first->L;
      e.grad = first->grad;
    } else if (!b && tsc && tsc->contains(lam)) {
      e = evaluate_with(*tsc, lam);  // (evaluate_impl()'s bits: the same cuts, the same search)
    } else {
      evaluate_impl(e, lam, b, nullptr, false);
      // A warm start's search that goes on past its second evaluation: the trust region (around the
      // best prices, twice as wide, so that a doubling stays inside) screened once, and the full
      // evaluations inside it until the search's own screen visit its candidates only (at 100,000
      // GPUs 22,000 of 207,000 items; the screen costs about two evaluations, and saves six).
      if (boxed && !b && !no_screen && !tsc && iter >= 2 && iter < K + 3) {
        std::vector<double> lo(Ku), hi(Ku);
        const std::vector<double>& centre = e.L < out.L ? lam : out.lam;
        for (std::size_t k = 0; k < Ku; ++k) {
          lo[k] = std::max(0.0, centre[k] - 2.0 * radius[k]);
          hi[k] = std::min(box[k], centre[k] + 2.0 * radius[k]);
        }
        tsc = screen(lo, hi);
      }
    }
    ++misses;
    if (!b && !no_screen && iter >= K + 3 && (!sc || misses >= 2)) build(e.L < out.L ? lam : out.lam, iter);
  };
  PriceEval e;  // each iteration's evaluation, in the same storage
  for (int iter = 0; iter < max_iter; ++iter) {
    ++out.iterations;
    eval(iter, e);
    if (e.L == -kInf) {
      out.infeasible = true;
      return out;
    }
    const bool serious = e.L < out.L;
    if (serious) {
      out.L = e.L;
      out.lam = lam;
    }
    // Box step: a step that improved and was stopped by the region's edge asks for a larger region.
    if (boxed && serious && last_binding)
      for (double& r : radius) r *= 2.0;
    if (K == 0) {
      out.lower = out.L;
      if (primal) {
        out.cut_lam = {lam};
        out.cut_weight = {1.0};
      }
      return out;
    }
    double c = e.L;
    for (std::size_t k = 0; k < Ku; ++k) c -= e.grad[k] * lam[k];
    cut_g.insert(cut_g.end(), e.grad.begin(), e.grad.end());
    const std::vector<double>& grad = e.grad;
    cut_c.push_back(c);
    cut_lam.insert(cut_lam.end(), lam.begin(), lam.end());
    if (out.L <= target) return out;
    if (deadline.passed()) return out;
    if (!boxed && !lam_master.empty() && !pure_next) {
      // Mis-price check: does the new cut raise the model at the master's minimiser?
      double at = c;
      for (std::size_t k = 0; k < Ku; ++k) at += grad[k] * lam_master[k];
      if (at <= t_master + 1e-12 * (1.0 + std::abs(t_master))) {
        pure_next = true;
        lam = lam_master;
        continue;
      }
    }
    // Master over [lo, hi] (the box, or the trust region inside it), with lam = lo + y, y >= 0:
    // max tau s.t. g_s·y + tau <= T - c_s - g_s·lo, y <= hi - lo; the model's minimum is T - tau.
    bool binding = false;
    bool solved = false;
    for (int grow = 0; grow < 60 && !solved; ++grow) {
      master_lo.assign(Ku, 0.0);
      master_hi.assign(box.begin(), box.end());
      std::vector<double>& lo = master_lo;
      std::vector<double>& hi = master_hi;
      if (boxed)
        for (std::size_t k = 0; k < Ku; ++k) {
          lo[k] = std::max(0.0, out.lam[k] - radius[k]);
          hi[k] = std::min(box[k], out.lam[k] + radius[k]);
        }
      solve_cut_master(cut_g, cut_c, lo, hi, master);
      if (!master.ok) break;
      const double t = master.t;
      lam_master = master.lam;
      binding = false;
      if (boxed)
        for (std::size_t k = 0; k < Ku; ++k) {
          const double tolk = 1e-12 * (1.0 + hi[k]);
          binding = binding || (hi[k] < box[k] && lam_master[k] >= hi[k] - tolk) ||
                    (lo[k] > 0.0 && lam_master[k] <= lo[k] + tolk);
        }
      if (boxed && binding && out.L - t <= 1e-10 * (1.0 + std::abs(out.L))) {
        // The model is flat inside the region: only a larger region can tell.
        for (double& r : radius) r *= 4.0;
        continue;
      }
      solved = true;
      last_y = master.weights;
      if (!binding) out.lower = std::max(out.lower, t);
      t_master = t;
    }
    if (!solved) break;
    const double scale = 1.0 + std::abs(out.L);
    if (!binding && out.L - t_master <= 1e-10 * scale) break;  // converged: out.L is the minimum
    next.resize(Ku);
    last_binding = binding;
    if (boxed) {
      next = lam_master;
    } else {
      pure_next = false;  // the next query is the smoothed point
      for (std::size_t k = 0; k < Ku; ++k) next[k] = out.lam[k] + (1.0 - alpha) * (lam_master[k] - out.lam[k]);
    }
    bool same = true;
    for (std::size_t k = 0; k < Ku; ++k) same = same && std::abs(next[k] - lam[k]) <= 1e-13 * (1.0 + std::abs(lam[k]));
    if (same) {
      next = lam_master;
      pure_next = true;
      same = true;
      for (std::size_t k = 0; k < Ku; ++k)
        same = same && std::abs(next[k] - lam[k]) <= 1e-13 * (1.0 + std::abs(lam[k]));
      if (same) break;
    }
    lam.swap(next);  // (next is written whole before it is read again)
  }
  if (!last_y.empty()) finish_primal(last_y);
  if (sc && sc->contains(out.lam)) out.screen = std::move(sc);  // (evaluate() at out.lam: evaluate_with())
  return out;
}

KelleyResult Relaxation::minimise_locally(std::vector<double> lam0, const std::vector<double>& box,
                                          std::vector<double> radius, int max_active, const Deadline& deadline,
                                          std::vector<int>* best, std::vector<int>* active,
                                          const ScreenHint* hint) const {
  const int K = p_.num_rows;
  const auto Ku = static_cast<std::size_t>(K);
  KelleyResult out;
  if (K == 0 || radius.size() != Ku || box.size() != Ku) return out;
  for (std::size_t k = 0; k < Ku; ++k) lam0[k] = std::clamp(lam0[k], 0.0, box[k]);
  double cap_scale = 1.0;
  for (double c : p_.cap) cap_scale += std::abs(c);
  // A multiplier of an edge below this is rounding (the master's numbers are of the caps' size).
  const double tol = 1e-11 * cap_scale;
  static const bool debug = std::getenv("SIA_NATIVE_DEBUG") != nullptr;
  std::vector<double> lo(Ku), hi(Ku), lam(Ku), best_lam(Ku);
  // The cuts of every region: each is a cut of a function below L (a region's model), so below L.
  std::vector<double> cut_g, cut_c;
  CutMaster master;
  std::vector<char> held_k(Ku);
  PriceEval e;
  int shrinks = 0;
  std::vector<char> active_mark;  // (per class: listed in `active` already)
  for (int region = 0; region < 8; ++region) {
    if (deadline.passed()) return out;
    for (std::size_t k = 0; k < Ku; ++k) {
      lo[k] = std::max(0.0, lam0[k] - radius[k]);
      hi[k] = std::min(box[k], lam0[k] + radius[k]);
    }
    const Screen sc = screen(lo, hi, hint);
    ++out.iterations;
    if (active != nullptr && static_cast<int>(sc.active.size()) <= max_active) {
      // (Each class once: the regions overlap. Marked in a per-class array only when there is one.)
      if (active_mark.size() != static_cast<std::size_t>(c_.size()))
        active_mark.assign(static_cast<std::size_t>(c_.size()), 0);
      for (const int c : sc.active)
        if (!active_mark[static_cast<std::size_t>(c)]) {
          active_mark[static_cast<std::size_t>(c)] = 1;
          active->push_back(c);
        }
    }
    if (static_cast<int>(sc.active.size()) > max_active) {
      // Too many classes change their best item in this region: a smaller one. The first region
      // shrinks to a quarter (twice at most); a region moved towards the minimum, widened across
      // its held edges, half as wide (twice at most) — any region is valid, the cuts of the
      // earlier ones are kept, and giving up costs Kelley's method over all of L (70-110 full
      // evaluations, 17-45 ms at 100,000 GPUs, where a region costs 2-3 ms).
      if (debug)
        std::fprintf(stderr, "local region %d: %zu active, more than %d: smaller\n", region, sc.active.size(),
                     max_active);
      int& narrowings = region == 0 ? shrinks : out.narrowed;
      if (narrowings == 2) return out;
      ++narrowings;
      for (double& r : radius) r *= region == 0 ? 0.25 : 0.5;
      --region;
      continue;
    }
    // Kelley's method on the region's model (L there; below L elsewhere): its evaluations visit
    // the active classes only, and its master is restricted to the region, whose edges' multipliers
    // say whether the model's minimum over the whole box lies inside.
    lam = lam0;
    double f_best = kInf, t = -kInf;
    bool converged = false;
    int local = 0;
    for (; local < 200 + 50 * K; ++local) {
      evaluate_in_impl(e, sc, lam);
      if (e.L < f_best) {
        f_best = e.L;
        best_lam = lam;
      }
      double c = e.L;
      for (std::size_t k = 0; k < Ku; ++k) c -= e.grad[k] * lam[k];
      cut_g.insert(cut_g.end(), e.grad.begin(), e.grad.end());
      cut_c.push_back(c);
      solve_cut_master(cut_g, cut_c, lo, hi, master, &held_k, tol);
      if (!master.ok) return out;
      t = master.t;
      if (f_best - t <= 1e-10 * (1.0 + std::abs(f_best))) {
        converged = true;
        break;
      }
      bool same = true;
      for (std::size_t k = 0; k < Ku; ++k)
        same = same && std::abs(master.lam[k] - lam[k]) <= 1e-13 * (1.0 + std::abs(lam[k]));
      if (same) break;
      lam = master.lam;
    }
    bool held = false;  // (0 and the box are the problem's own bounds)
    for (std::size_t k = 0; k < Ku; ++k) {
      held_k[k] = static_cast<char>(((held_k[k] & 1) != 0 && lo[k] > 0.0) || ((held_k[k] & 2) != 0 && hi[k] < box[k]));
      held = held || held_k[k] != 0;
    }
    if (debug)
      std::fprintf(stderr, "local region %d: %zu active, %d evaluations, model %.12g, best %.12g, held %d\n", region,
                   sc.active.size(), local + 1, t, f_best, held ? 1 : 0);
    if (!converged) return out;
    // A first region that had to be narrowed and does not hold the minimum: the minimum lies far
    // (a round after a cold one, every job just started, moves the prices by tens of per cent),
    // across classes too dense for regions to reach it in a few steps.
    if (held && shrinks > 0) return out;
    if (held) {  // the minimum lies beyond the held edges: the region moves there, wider across them
      lam0 = master.lam;
      for (std::size_t k = 0; k < Ku; ++k)
        if (held_k[k]) radius[k] *= 4.0;
      continue;
    }
    // L at the best point, evaluate()'s bits: over the region's candidates when it lies in the
    // region (it does but for rounding at an edge), else in full.
    if (sc.contains(best_lam))
      e = evaluate_with(sc, best_lam, best);
    else
      evaluate_impl(e, best_lam, nullptr, best, false);
    ++out.iterations;
    if (e.L == -kInf) {
      out.infeasible = true;
      return out;
    }
    // The region's model is L in the region: the evaluation agrees up to rounding, or something is off.
    if (!(std::abs(e.L - f_best) <= 1e-10 * (1.0 + std::abs(e.L)))) return out;
    out.lam = best_lam;
    out.L = e.L;
    out.lower = std::min(t, e.L);
    return out;
  }
  return out;
}

void Relaxation::primal_counts(const KelleyResult& kr, const Bounds* b, std::vector<double>& x,
                               std::vector<int>& split) const {
  x.assign(p_.value.size(), 0.0);
  split.clear();
  std::vector<std::vector<double>> lams = kr.cut_lam;
  std::vector<double> w = kr.cut_weight;
  if (lams.empty()) {
    lams = {kr.lam};
    w = {1.0};
  }
  Counts first, n;
  std::vector<char> differs(static_cast<std::size_t>(c_.size()), 0);
  for (std::size_t s = 0; s < lams.size(); ++s) {
    if (!assign(lams[s], b, n)) continue;
    for (std::size_t it = 0; it < n.size(); ++it) x[it] += w[s] * n[it];
    if (s == 0) {
      first = n;
      continue;
    }
    for (int c = 0; c < c_.size(); ++c) {
      if (differs[static_cast<std::size_t>(c)]) continue;
      const int f = c_.first_item(p_, c), e = f + c_.items(p_, c);
      for (int it = f; it < e; ++it)
        if (n[static_cast<std::size_t>(it)] != first[static_cast<std::size_t>(it)]) {
          differs[static_cast<std::size_t>(c)] = 1;
          break;
        }
    }
  }
  for (int c = 0; c < c_.size(); ++c)
    if (differs[static_cast<std::size_t>(c)]) split.push_back(c);
}

}  // namespace sia::detail::native
