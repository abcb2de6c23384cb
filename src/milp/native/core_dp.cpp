// Exact dynamic programme over the core (core_dp.hpp).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numeric>
#include <vector>

#include "milp/native/core_dp.hpp"
#include "milp/native/heuristic.hpp"
#include "milp/rounding.hpp"

namespace sia::detail::native {
namespace {

// A state's deviation vector packed into two 64-bit words: each row's field (deviation plus an
// offset that keeps it non-negative) lies inside one word, so adding a move's packed deviation
// word by word never carries from one field into another.
struct Key {
  std::uint64_t w[2] = {0, 0};
  friend bool operator==(const Key& a, const Key& b) { return a.w[0] == b.w[0] && a.w[1] == b.w[1]; }
  [[nodiscard]] Key plus(const Key& d) const { return Key{{w[0] + d.w[0], w[1] + d.w[1]}}; }
  [[nodiscard]] std::size_t hash() const {
    std::uint64_t h = w[0] * 0x9E3779B97F4A7C15ULL ^ (w[1] + 0x632BE59BD9B4E019ULL) * 0xBF58476D1CE4E5B9ULL;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

// The relaxation's value at `lam` and its best item per class: from the caller's AtPrices when it
// has them, else evaluated (the same numbers either way).
double value_at(const Relaxation& rel, const std::vector<double>& lam, const AtPrices* at, std::vector<int>& best) {
  if (at == nullptr) return rel.evaluate(lam, nullptr, &best).L;
  best = at->best;
  return at->L;
}

}  // namespace

bool integer_usages(const Problem& p, double limit) {
  for (double a : p.use_val)
    if (!is_integer_value(a) || std::abs(a) > limit) return false;
  return true;
}

DpOutcome solve_core_dp(const Relaxation& rel, const std::vector<double>& lam, double incumbent,
                        const std::function<double(double)>& tol, const DpLimits& limits, bool debug, double min_cost,
                        const AtPrices* at) {
  DpOutcome out;
  const Problem& p = rel.problem();
  const Classes& cls = rel.classes();
  const int K = p.num_rows, C = cls.size();
  if (K == 0 || K > 24) return out;
  if (!integer_usages(p, 1e6)) return out;
  std::vector<int> base;
  const double L = value_at(rel, lam, at, base);
  if (L == -kInf) return out;
  const double target = incumbent == -kInf ? -kInf : incumbent + tol(incumbent);
  const double delta_max = L - target;
  if (!(delta_max > 0.0)) {
    out.kind = DpOutcome::Kind::settled;
    out.bound = L;
    return out;
  }
  const auto Ku = static_cast<std::size_t>(K);
  auto usage = [&](int it, long long* u) {
    std::fill(u, u + K, 0LL);
    for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
      // (Integers, checked above: the conversion is exact, as std::llround was, without a call.)
      u[p.use_row[static_cast<std::size_t>(q)]] += static_cast<long long>(p.use_val[static_cast<std::size_t>(q)]);
  };
  // Residual capacity of the base and the moves of each class (non-base items with delta < Delta).
  std::vector<long long> R(Ku), ub(Ku), ui(Ku);
  for (int k = 0; k < K; ++k)
    R[static_cast<std::size_t>(k)] = static_cast<long long>(std::floor(p.cap[static_cast<std::size_t>(k)] + 1e-9));
  std::vector<int> cmv_begin{0}, mv_item;
  std::vector<double> mv_delta;
  std::vector<long long> mv_dev;
  std::vector<double> cmin(static_cast<std::size_t>(C), kInf);
  // (At most one move per item: room for them at once, rather than a reallocation every few.)
  cmv_begin.reserve(static_cast<std::size_t>(C) + 1);
  mv_item.reserve(p.value.size());
  mv_delta.reserve(p.value.size());
  mv_dev.reserve(p.value.size() * Ku);
  for (int c = 0; c < C; ++c) {
    const int b = base[static_cast<std::size_t>(c)];
    const long long m = cls.mult[static_cast<std::size_t>(c)];
    usage(b, ub.data());
    for (std::size_t k = 0; k < Ku; ++k) R[k] -= m * ub[k];
    const double rb = rel.reduced(b, lam.data());
    const int f = cls.first_item(p, c), e = f + cls.items(p, c);
    for (int it = f; it < e; ++it) {
      if (it == b) continue;
      const double d = std::max(0.0, rb - rel.reduced(it, lam.data()));
      if (d >= delta_max) continue;
      usage(it, ui.data());
      mv_item.push_back(it);
      mv_delta.push_back(d);
      cmin[static_cast<std::size_t>(c)] = std::min(cmin[static_cast<std::size_t>(c)], d);
      for (std::size_t k = 0; k < Ku; ++k) mv_dev.push_back(ui[k] - ub[k]);
    }
    cmv_begin.push_back(static_cast<int>(mv_item.size()));
  }
  // Layers: one per member of a class with moves; classes whose cheapest move is dearest first
  // (their moves rarely fit in the budget, so the states stay few until the cheap layers at the
  // end, where little is left to complete a state and the pruning is strongest).
  std::vector<int> order;
  order.reserve(static_cast<std::size_t>(C));
  for (int c = 0; c < C; ++c)
    if (cmv_begin[static_cast<std::size_t>(c) + 1] > cmv_begin[static_cast<std::size_t>(c)]) order.push_back(c);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return cmin[static_cast<std::size_t>(a)] > cmin[static_cast<std::size_t>(b)]; });
  std::vector<int> layer_class;
  {
    std::size_t layers = 0;
    for (int c : order) layers += static_cast<std::size_t>(std::max(cls.mult[static_cast<std::size_t>(c)], 0));
    layer_class.reserve(layers);
  }
  for (int c : order)
    for (int r = 0; r < cls.mult[static_cast<std::size_t>(c)]; ++r) layer_class.push_back(c);
  const int NL = static_cast<int>(layer_class.size());
  // What layers l.. can still add (inc) or remove (dec) per row.
  std::vector<long long> inc((static_cast<std::size_t>(NL) + 1) * Ku, 0), dec(inc);
  for (int l = NL - 1; l >= 0; --l) {
    const int c = layer_class[static_cast<std::size_t>(l)];
    for (std::size_t k = 0; k < Ku; ++k) {
      long long up = 0, down = 0;
      for (int m = cmv_begin[static_cast<std::size_t>(c)]; m < cmv_begin[static_cast<std::size_t>(c) + 1]; ++m) {
        up = std::max(up, mv_dev[static_cast<std::size_t>(m) * Ku + k]);
        down = std::max(down, -mv_dev[static_cast<std::size_t>(m) * Ku + k]);
      }
      inc[static_cast<std::size_t>(l) * Ku + k] = inc[(static_cast<std::size_t>(l) + 1) * Ku + k] + up;
      dec[static_cast<std::size_t>(l) * Ku + k] = dec[(static_cast<std::size_t>(l) + 1) * Ku + k] + down;
    }
  }
  // Key packing: field k holds d_k + dec_k(0) in [0, inc_k(0) + dec_k(0)]; partial sums stay in
  // range, so adding a move is adding its packed deviation to the key.
  std::vector<int> shift(Ku), word(Ku);
  std::vector<std::uint64_t> mask(Ku);
  {
    int w = 0, bits = 0;
    for (std::size_t k = 0; k < Ku; ++k) {
      const long long range = inc[k] + dec[k] + 1;
      int b = 1;
      while (b < 62 && (1LL << b) < range) ++b;
      if (b > 62) return out;
      if (bits + b > 63) {
        if (++w > 1) return out;  // more than two words of deviations: not for this DP
        bits = 0;
      }
      word[k] = w;
      shift[k] = bits;
      mask[k] = (1ULL << b) - 1ULL;
      bits += b;
    }
  }
  std::vector<Key> mv_key(mv_item.size());
  for (std::size_t m = 0; m < mv_item.size(); ++m)
    for (std::size_t k = 0; k < Ku; ++k)
      mv_key[m].w[word[k]] += static_cast<std::uint64_t>(mv_dev[m * Ku + k]) << shift[k];
  Key key0;
  for (std::size_t k = 0; k < Ku; ++k) key0.w[word[k]] |= static_cast<std::uint64_t>(dec[k]) << shift[k];
  auto field = [&](const Key& key, std::size_t k) {
    return static_cast<long long>((key.w[word[k]] >> shift[k]) & mask[k]) - dec[k];
  };

  struct Trail {
    int prev;
    int layer;
    int move;
  };
  std::vector<Trail> trail;
  std::vector<Key> cur_key, next_key;
  std::vector<double> cur_cost, next_cost;
  std::vector<int> cur_node, next_node;
  std::vector<int> table;
  double budget =
      std::isfinite(delta_max) ? std::min(delta_max, std::max(delta_max / 64.0, 1e-6 * (1.0 + std::abs(L)))) : kInf;
  double proven = -kInf;  // L - largest budget fully enumerated without a solution
  if (min_cost > 0.0 && std::isfinite(delta_max)) {
    proven = L - std::min(min_cost, delta_max);
    budget = std::min(delta_max, std::max(budget, 1.5 * min_cost));
  }
  for (;;) {
    // Any state with d <= R completes to a feasible solution by keeping the base items of the
    // remaining layers, at cost + lam·(R - d): the pass's budget shrinks to the best completion.
    // Once a completion is known, only solutions better by more than the tolerance matter.
    int found_node = -2;
    double found_cost = budget, cut = budget;
    auto completion = [&](const Key& key, double c, int node) {
      for (std::size_t k = 0; k < Ku; ++k) {
        const long long d = field(key, k);
        if (d > R[k]) return;
        c += lam[k] * static_cast<double>(R[k] - d);
        if (c >= found_cost) return;
      }
      found_cost = c;
      found_node = node;
      cut = std::min(cut, c - tol(L - c));
    };
    trail.clear();
    cur_key.assign(1, key0);
    cur_cost.assign(1, 0.0);
    cur_node.assign(1, -1);
    completion(key0, 0.0, -1);
    bool gave_up = false;
    for (int l = 0; l < NL && !gave_up; ++l) {
      if (limits.deadline.passed()) {
        gave_up = true;
        break;
      }
      next_key.clear();
      next_cost.clear();
      next_node.clear();
      const int c = layer_class[static_cast<std::size_t>(l)];
      const int m0 = cmv_begin[static_cast<std::size_t>(c)], m1 = cmv_begin[static_cast<std::size_t>(c) + 1];
      // A layer never holds more than max_states + 1 states (the pass gives up then): the table is
      // sized for that, not for every state times every move (512 MB at 2 M states and 20 moves).
      const std::size_t expect =
          std::min(cur_key.size() * static_cast<std::size_t>(1 + m1 - m0), limits.max_states + 1);
      std::size_t tsize = 1024;
      while (tsize < 2 * expect) tsize <<= 1;
      table.assign(tsize, -1);
      const long long* inc_r = &inc[(static_cast<std::size_t>(l) + 1) * Ku];
      const long long* dec_r = &dec[(static_cast<std::size_t>(l) + 1) * Ku];
      for (std::size_t si = 0; si < cur_key.size() && !gave_up; ++si) {
        // A layer of millions of states takes seconds: the deadline is checked inside it too.
        if ((si & 4095) == 4095 && limits.deadline.passed()) {
          gave_up = true;
          break;
        }
        for (int m = m0 - 1; m < m1; ++m) {  // m0 - 1 = keep the base item
          const double cost = cur_cost[si] + (m >= m0 ? mv_delta[static_cast<std::size_t>(m)] : 0.0);
          if (cost >= cut) continue;
          const Key key = m >= m0 ? cur_key[si].plus(mv_key[static_cast<std::size_t>(m)]) : cur_key[si];
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
          if (dead || cost + slack_cost >= cut) continue;
          std::size_t h = key.hash() & (tsize - 1);
          while (table[h] >= 0 && next_key[static_cast<std::size_t>(table[h])] != key) h = (h + 1) & (tsize - 1);
          int node = cur_node[si];
          if (m >= m0) {
            if (table[h] >= 0 && next_cost[static_cast<std::size_t>(table[h])] <= cost) continue;
            if (trail.size() >= limits.max_trail) {
              gave_up = true;
              break;
            }
            trail.push_back({node, l, m});
            node = static_cast<int>(trail.size()) - 1;
          }
          completion(key, cost, node);
          if (table[h] < 0) {
            table[h] = static_cast<int>(next_key.size());
            next_key.push_back(key);
            next_cost.push_back(cost);
            next_node.push_back(node);
            if (next_key.size() > limits.max_states) {
              gave_up = true;
              break;
            }
          } else if (next_cost[static_cast<std::size_t>(table[h])] > cost) {
            next_cost[static_cast<std::size_t>(table[h])] = cost;
            next_node[static_cast<std::size_t>(table[h])] = node;
          }
        }
      }
      std::swap(cur_key, next_key);
      std::swap(cur_cost, next_cost);
      std::swap(cur_node, next_node);
      out.peak_states = std::max(out.peak_states, cur_key.size());
      if (debug && l % 200 == 0)
        std::fprintf(stderr, "dp budget %.4g layer %d/%d: %zu states, trail %zu\n", budget, l, NL, cur_key.size(),
                     trail.size());
    }
    if (gave_up) {
      out.kind = DpOutcome::Kind::gave_up;
      out.bound = proven == -kInf ? L : proven;
      return out;
    }
    if (found_node >= -1) {
      Counts n;
      rel.assign(lam, nullptr, n);
      for (int t = found_node; t >= 0; t = trail[static_cast<std::size_t>(t)].prev) {
        const int c = layer_class[static_cast<std::size_t>(trail[static_cast<std::size_t>(t)].layer)];
        --n[static_cast<std::size_t>(base[static_cast<std::size_t>(c)])];
        ++n[static_cast<std::size_t>(mv_item[static_cast<std::size_t>(trail[static_cast<std::size_t>(t)].move)])];
      }
      if (!counts_feasible(p, cls, nullptr, n)) {  // numerical trouble: let the branch and bound decide
        out.kind = DpOutcome::Kind::gave_up;
        out.bound = proven == -kInf ? L : proven;
        return out;
      }
      const double v = counts_value(p, cls, n);
      out.kind = DpOutcome::Kind::settled;
      if (v > incumbent) {
        out.improved = true;
        out.counts = std::move(n);
        out.value = v;
      }
      // Every solution of cost < cut was enumerated: nothing beats this one by more than the
      // tolerance (L - cut bounds what was pruned).
      out.bound = std::min(L, std::max(std::max(v, incumbent), L - cut));
      return out;
    }
    if (budget >= delta_max) {
      out.kind = DpOutcome::Kind::settled;
      out.bound = L - delta_max;  // -inf when there is no incumbent: proven infeasible
      return out;
    }
    proven = L - budget;
    budget = std::min(delta_max, budget * 2.0);
  }
}

}  // namespace sia::detail::native

namespace sia::detail::native {

namespace {

// modular_cost_bound in three parts, so that modular_bounds evaluates the relaxation once for its
// four moduli and runs their programmes on two threads (the same numbers as one call each).

// May a member of class c move from its base to item `it` under node bounds `b` (null: no bounds)?
// node_base_items() says which bounds the lift handles: a class whose items are only excluded
// (hi 0), or a class of one member with its item forced (lo 1: no move) or some items excluded.
bool may_move(const Problem& p, const Classes& cls, const Bounds* b, int c, int it) {
  if (b == nullptr || b->bounded[static_cast<std::size_t>(c)] == 0) return true;
  if (b->hi[static_cast<std::size_t>(it)] <= 0) return false;
  if (b->bounded[static_cast<std::size_t>(c)] == 1) return true;
  // (mult 1, general bounds: a forced item leaves no move.)
  const int f = cls.first_item(p, c), e = f + cls.items(p, c);
  for (int i = f; i < e; ++i)
    if (b->lo[static_cast<std::size_t>(i)] > 0) return false;
  return true;
}

// Does the bound apply (integer usages, at most `max_states` residue vectors)? `states`: M^K.
// `integral`: integer_usages(p, 1e9), the same for every modulus.
bool modular_applies(bool integral, int K, int modulus, double budget, std::size_t max_states, std::size_t& states) {
  if (K == 0 || modulus < 2 || !(budget > 0.0)) return false;
  if (!integral) return false;
  states = 1;
  for (int k = 0; k < K; ++k) {
    states *= static_cast<std::size_t>(modulus);
    if (states > max_states) return false;
  }
  return true;
}

// Per class, its moves cheaper than `budget` (`base`: the relaxation's best item per class): what
// modular_work needs of the prices, the same for every modulus.
std::vector<int> modular_moves(const Relaxation& rel, const std::vector<double>& lam, double budget,
                               const std::vector<int>& base, const Bounds* bounds) {
  const Problem& p = rel.problem();
  const Classes& cls = rel.classes();
  std::vector<int> moves(static_cast<std::size_t>(cls.size()), 0);
  for (int c = 0; c < cls.size(); ++c) {
    const int b = base[static_cast<std::size_t>(c)];
    const double rb = rel.reduced(b, lam.data());
    const int f = cls.first_item(p, c), e = f + cls.items(p, c);
    for (int it = f; it < e; ++it)
      moves[static_cast<std::size_t>(c)] +=
          it != b && may_move(p, cls, bounds, c, it) && rb - rel.reduced(it, lam.data()) < budget;
  }
  return moves;
}

// Work estimate: relaxation rounds x states x moves (`moves`: modular_moves).
double modular_work(const Classes& cls, const std::vector<int>& moves, std::size_t states) {
  double work = 0.0;
  for (int c = 0; c < cls.size(); ++c) {
    const int n = moves[static_cast<std::size_t>(c)];
    if (n > 0)
      work += static_cast<double>(
                  std::min<std::size_t>(static_cast<std::size_t>(cls.mult[static_cast<std::size_t>(c)]), states)) *
              static_cast<double>(states) * n;
  }
  return work;
}

// A class's cheap move in the programme below: its cost and its residue shifts.
struct ResidueMove {
  double delta;
  std::size_t packed;  // the residue shifts as a key
  std::size_t dev;     // and one by one (M no power of two): K of the shifts' array from here
};

// The residues, their costs and marks, kept by the thread between calls of modular_programme.
struct ResidueScratch {
  std::vector<double> cost, next;
  std::vector<unsigned> stamp;
  unsigned stamp_now = 0;
  std::vector<std::size_t> active, frontier, fallen;  // up to one entry per residue each
};

// One round of a class's moves from the residues `front[0, n_front)` (moves cheapest first): every
// residue lowered in `next` is listed once in `fallen` (returns their number), every residue reached
// for the first time in `active[n_active++]`. `to_of(key, move)`: the residue a move leads to. A
// function of its own, with its state in arguments: as a lambda over the programme's locals, its
// loop kept them on the stack.
template <class ToOf>
std::size_t relax_round(const std::size_t* front, std::size_t n_front, const ResidueMove* mv_begin,
                        const ResidueMove* mv_end, double budget, const double* cost, double* next, unsigned* stamp,
                        unsigned now, std::size_t* active, std::size_t& n_active, std::size_t* fallen, ToOf to_of) {
  std::size_t n_fallen = 0, n_act = n_active;
  for (std::size_t f = 0; f < n_front; ++f) {
    const std::size_t key = front[f];
    const double base_cost = cost[key];
    for (const ResidueMove* mv = mv_begin; mv != mv_end; ++mv) {
      const double c2 = base_cost + mv->delta;
      if (!(c2 < budget)) break;  // and every later move (dearer)
      const std::size_t to = to_of(key, *mv);
      const double was = next[to];
      if (c2 < was) {
        if (!(was < budget) && !(cost[to] < budget)) active[n_act++] = to;
        next[to] = c2;
        if (stamp[to] != now) {
          stamp[to] = now;
          fallen[n_fallen++] = to;
        }
      }
    }
  }
  n_active = n_act;
  return n_fallen;
}

// The programme over the residues. `stop` (may be null): set by another thread when the result is
// no longer wanted; the call then returns early with a meaningless value.
double modular_programme(const Relaxation& rel, const std::vector<double>& lam, double budget, int modulus,
                         const std::vector<int>& rows, std::size_t states, const std::vector<int>& base,
                         const std::atomic<bool>* stop, const Bounds* bounds = nullptr) {
  const Problem& p = rel.problem();
  const Classes& cls = rel.classes();
  const int K = static_cast<int>(rows.size()), C = cls.size();
  const auto M = static_cast<long long>(modulus);
  // v modulo M in [0, M): for M = 2^b the low b bits (two's complement), the same number without
  // the two divisions (per item and row building the moves, per residue and row at the end).
  const bool pow2_mod = M > 0 && (M & (M - 1)) == 0;
  auto mod = [M, pow2_mod](long long v) { return pow2_mod ? v & (M - 1) : ((v % M) + M) % M; };
  // Residual of the base modulo M, and each class's cheap moves as residue shifts.
  std::vector<long long> R(static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k)
    R[static_cast<std::size_t>(k)] =
        static_cast<long long>(std::floor(p.cap[static_cast<std::size_t>(rows[static_cast<std::size_t>(k)])] + 1e-9));
  // Usage of item `it` on the k-th row of the subset.
  auto use = [&](int it, int k) {
    const int row = rows[static_cast<std::size_t>(k)];
    for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
      if (p.use_row[static_cast<std::size_t>(q)] == row)  // (integers: modular_applies)
        return static_cast<long long>(p.use_val[static_cast<std::size_t>(q)]);
    return 0LL;
  };
  std::vector<long long> stride(static_cast<std::size_t>(K));
  long long s = 1;
  for (int k = 0; k < K; ++k) {
    stride[static_cast<std::size_t>(k)] = s;
    s *= M;
  }
  // The residues of a state's key, base M (shifts and masks when M is a power of two, as moduli
  // 2, 4, 8, 16 are: a division per digit took most of the time).
  int log2m = 0;
  while ((1LL << log2m) < M) ++log2m;
  const bool pow2 = (1LL << log2m) == M;
  auto digits_of = [&](std::size_t key, long long* out) {
    if (pow2) {
      for (int k = 0; k < K; ++k)
        out[k] = static_cast<long long>((key >> (static_cast<unsigned>(log2m) * static_cast<unsigned>(k))) &
                                        static_cast<std::size_t>(M - 1));
      return;
    }
    for (int k = 0; k < K; ++k) {
      out[k] = static_cast<long long>(key % static_cast<std::size_t>(M));
      key /= static_cast<std::size_t>(M);
    }
  };
  // With M = 2^b, a key is K fields of b bits: adding a move's residues to every field modulo M at
  // once is a carry-less add (the top bit of each field by exclusive or, the others by a plain add
  // that cannot carry past it).
  std::size_t high = 0;
  if (pow2)
    for (int k = 0; k < K; ++k)
      high |= std::size_t{1} << (static_cast<unsigned>(log2m) * static_cast<unsigned>(k + 1) - 1);
  auto shifted = [&](std::size_t key, std::size_t mv, const long long* key_digits, const long long* mv_digits) {
    if (pow2) return ((key & ~high) + (mv & ~high)) ^ ((key ^ mv) & high);
    std::size_t to = 0;
    for (int k = 0; k < K; ++k) {
      long long x = key_digits[k] + mv_digits[k];  // both in [0, M)
      if (x >= M) x -= M;
      to += static_cast<std::size_t>(x * stride[static_cast<std::size_t>(k)]);
    }
    return to;
  };
  // Scratch kept by the thread between calls: the four moduli of a round, and every round, would
  // otherwise map and fault in fresh pages for tables of up to 2^16 residues. Between calls every
  // entry of `cost` and `next` is +inf and every stamp is below `stamp_now`, so a call touches only
  // the residues it reaches (`active`) and restores them when it returns: a round of 3 rows spent
  // more time filling and scanning the 16^3 residues of modulus 16 than in the relaxation itself.
  thread_local ResidueScratch scratch;
  ResidueScratch& sc = scratch;
  if (sc.cost.size() < states) {
    sc.cost.resize(states, kInf);
    sc.next.resize(states, kInf);
    sc.stamp.resize(states, 0u);
    sc.active.resize(states);
    sc.frontier.resize(states);
    sc.fallen.resize(states);
  }
  if (sc.stamp_now > std::numeric_limits<unsigned>::max() / 2) {  // (a call adds at most its work, < 5e7)
    std::fill(sc.stamp.begin(), sc.stamp.end(), 0u);
    sc.stamp_now = 0;
  }
  double* const cost = sc.cost.data();
  double* const next = sc.next.data();
  std::size_t* const active = sc.active.data();
  std::size_t n_active = 1;
  active[0] = 0;
  struct Restore {
    ResidueScratch& sc;
    const std::size_t& n;
    ~Restore() {
      for (std::size_t a = 0; a < n; ++a) sc.cost[sc.active[a]] = sc.next[sc.active[a]] = kInf;
    }
  } restore{sc, n_active};
  cost[0] = next[0] = 0.0;  // residue of d = 0
  // Residues whose cost fell in the last round (`frontier`), marked by round in `stamp`: only they
  // can lower another residue in the next round, as the others spread the same sums again.
  std::size_t* frontier = sc.frontier.data();
  std::size_t* fallen = sc.fallen.data();
  std::vector<long long> dev(static_cast<std::size_t>(K)), digits(static_cast<std::size_t>(K));
  using Move = ResidueMove;
  std::vector<Move> moves;
  std::vector<long long> move_dev;
  for (int c = 0; c < C; ++c) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) return 0.0;
    const int b = base[static_cast<std::size_t>(c)];
    const long long m = cls.mult[static_cast<std::size_t>(c)];
    for (int k = 0; k < K; ++k) R[static_cast<std::size_t>(k)] -= m * use(b, k);
    const double rb = rel.reduced(b, lam.data());
    const int f = cls.first_item(p, c), e = f + cls.items(p, c);
    moves.clear();
    move_dev.clear();
    for (int it = f; it < e; ++it) {
      if (it == b || !may_move(p, cls, bounds, c, it)) continue;
      const double d = std::max(0.0, rb - rel.reduced(it, lam.data()));
      if (d >= budget) continue;
      std::size_t packed = 0;
      for (int k = 0; k < K; ++k) {
        dev[static_cast<std::size_t>(k)] = mod(use(it, k) - use(b, k));
        packed += static_cast<std::size_t>(dev[static_cast<std::size_t>(k)] * stride[static_cast<std::size_t>(k)]);
      }
      if (packed == 0) continue;  // a move that keeps every residue only costs
      moves.push_back({d, packed, move_dev.size()});
      if (!pow2) move_dev.insert(move_dev.end(), dev.begin(), dev.end());
    }
    if (moves.empty()) continue;
    // Cheapest first, so that a residue stops at its first move past the budget. The order of the
    // moves changes no cost (each is the least of the same sums) nor `best` (a minimum over `active`).
    std::sort(moves.begin(), moves.end(), [](const Move& x, const Move& y) { return x.delta < y.delta; });
    // Each member may apply one move (one round of relaxation per member, reading the costs of
    // the round before: `cost`, written into `next`, the two equal between rounds). Costs are
    // >= 0, so a cheapest path to any residue repeats none: more rounds than residues change
    // nothing. The first round spreads every residue reached so far; later ones only those whose
    // cost fell in the round before (the same minima, without the sums that cannot lower any).
    const long long rounds = std::min<long long>(m, static_cast<long long>(states));
    const std::size_t* front = active;  // the first round: every residue reached so far
    std::size_t n_front = n_active;
    for (long long r = 0; r < rounds; ++r) {
      const unsigned now = ++sc.stamp_now;
      std::size_t n_fallen = 0;
      if (pow2) {
        n_fallen = relax_round(front, n_front, moves.data(), moves.data() + moves.size(), budget, cost, next,
                               sc.stamp.data(), now, active, n_active, fallen, [high](std::size_t key, const Move& mv) {
                                 return ((key & ~high) + (mv.packed & ~high)) ^ ((key ^ mv.packed) & high);
                               });
      } else {
        n_fallen = relax_round(front, n_front, moves.data(), moves.data() + moves.size(), budget, cost, next,
                               sc.stamp.data(), now, active, n_active, fallen, [&](std::size_t key, const Move& mv) {
                                 digits_of(key, digits.data());
                                 return shifted(key, mv.packed, digits.data(), move_dev.data() + mv.dev);
                               });
      }
      for (std::size_t a = 0; a < n_fallen; ++a) cost[fallen[a]] = next[fallen[a]];
      if (n_fallen == 0) break;
      std::swap(frontier, fallen);
      front = frontier;
      n_front = n_fallen;
    }
  }
  // Cheapest completion: slack (R - d) taken modulo M at its least non-negative value. Only the
  // residues reached below the budget (`active`) can beat it; a minimum in any order.
  double best = budget;
  for (std::size_t a = 0; a < n_active; ++a) {
    const std::size_t key = active[a];
    if (!(cost[key] < best)) continue;
    digits_of(key, digits.data());
    double c = cost[key];
    for (int k = 0; k < K; ++k) {
      const long long dk = digits[static_cast<std::size_t>(k)];
      c += lam[static_cast<std::size_t>(rows[static_cast<std::size_t>(k)])] *
           static_cast<double>(mod(R[static_cast<std::size_t>(k)] - dk));
    }
    best = std::min(best, c);
  }
  return best;
}

}  // namespace

double modular_cost_bound(const Relaxation& rel, const std::vector<double>& lam, double budget, int modulus,
                          const std::vector<int>& rows, std::size_t max_states, double* work_left) {
  std::size_t states = 1;
  if (!modular_applies(integer_usages(rel.problem(), 1e9), static_cast<int>(rows.size()), modulus, budget, max_states,
                       states))
    return 0.0;
  std::vector<int> base;
  const PriceEval ev = rel.evaluate(lam, nullptr, &base);
  if (ev.L == -kInf) return 0.0;
  // Skip what would take more than ~5e7 steps.
  const double work = modular_work(rel.classes(), modular_moves(rel, lam, budget, base, nullptr), states);
  if (work > (work_left != nullptr ? *work_left : 5e7)) return 0.0;
  if (work_left != nullptr) *work_left -= work;
  return modular_programme(rel, lam, budget, modulus, rows, states, base, nullptr);
}

bool node_base_items(const Relaxation& rel, const std::vector<double>& lam, const Bounds& b, std::vector<int>& base) {
  const Problem& p = rel.problem();
  const Classes& cls = rel.classes();
  base.assign(static_cast<std::size_t>(cls.size()), -1);
  for (int c = 0; c < cls.size(); ++c) {
    const char bd = b.bounded[static_cast<std::size_t>(c)];
    if (bd == 2 && cls.mult[static_cast<std::size_t>(c)] > 1) return false;
    const int f = cls.first_item(p, c), e = f + cls.items(p, c);
    int bi = -1;
    double bv = -kInf;
    for (int it = f; it < e; ++it) {
      if (bd != 0 && b.hi[static_cast<std::size_t>(it)] <= 0) continue;
      if (bd == 2 && b.lo[static_cast<std::size_t>(it)] > 0) {  // (forced: the member's only item)
        bi = it;
        break;
      }
      const double r = rel.reduced(it, lam.data());
      if (bi < 0 || r > bv) {
        bv = r;
        bi = it;
      }
    }
    if (bi < 0) return false;
    base[static_cast<std::size_t>(c)] = bi;
  }
  return true;
}

double modular_bounds(const Relaxation& rel, const std::vector<double>& lam, double budget, const AtPrices* at,
                      const Bounds* bounds) {
  if (bounds != nullptr) {
    if (at == nullptr) return 0.0;  // (the node's base items are the caller's)
    const Classes& cls = rel.classes();
    for (int c = 0; c < cls.size(); ++c)
      if (bounds->bounded[static_cast<std::size_t>(c)] == 2 && cls.mult[static_cast<std::size_t>(c)] > 1)
        return 0.0;  // (general count bounds on several members: not for the residues' programme)
  }
  const int K = rel.problem().num_rows;
  std::vector<int> by_price(static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k) by_price[static_cast<std::size_t>(k)] = k;
  std::stable_sort(by_price.begin(), by_price.end(),
                   [&](int a, int b) { return lam[static_cast<std::size_t>(a)] > lam[static_cast<std::size_t>(b)]; });
  // Each modulus skips itself when its work would exceed ~5e7 operations (see above).
  constexpr std::size_t kStates = 1u << 16;
  // The moduli that take part, in order, as modular_cost_bound would run them one after the other
  // with a shared work budget (what a modulus spends depends only on the prices, not on the bounds
  // before it). Stopping at the first bound that reaches `budget` is decided below, in this order.
  struct Pass {
    int modulus;
    std::vector<int> rows;
    std::size_t states;
  };
  std::vector<Pass> passes;
  std::vector<int> base;   // the relaxation's best items at lam: one evaluation for every modulus
  std::vector<int> moves;  // per class, its cheap moves (modular_moves)
  bool evaluated = false;
  double work_left = 5e7;
  const bool integral = integer_usages(rel.problem(), 1e9);
  for (int M : {2, 4, 8, 16}) {
    // As many rows as M^rows <= kStates allows, the dearest first.
    std::size_t states = 1;
    int n = 0;
    while (n < K && states * static_cast<std::size_t>(M) <= kStates) {
      states *= static_cast<std::size_t>(M);
      ++n;
    }
    std::vector<int> rows(by_price.begin(), by_price.begin() + n);
    std::sort(rows.begin(), rows.end());
    if (!modular_applies(integral, n, M, budget, kStates, states)) continue;
    if (!evaluated) {
      evaluated = true;
      if (value_at(rel, lam, at, base) == -kInf) return 0.0;  // every modulus: 0
    }
    if (moves.empty()) moves = modular_moves(rel, lam, budget, base, bounds);  // (the same for every modulus)
    const double work = modular_work(rel.classes(), moves, states);
    if (work > work_left) continue;
    work_left -= work;
    passes.push_back({M, std::move(rows), states});
  }
  auto run = [&](const Pass& pass, const std::atomic<bool>* stop) {
    return modular_programme(rel, lam, budget, pass.modulus, pass.rows, pass.states, base, stop, bounds);
  };
  // With every pass on the same rows (K <= 4: 16^K fits) and non-negative prices there, modulus 16's
  // bound is the largest, bit for bit, so it alone is the lift (rounds of a few GPU types: the other
  // three moduli were 40 % of the time). Why: a residue modulo 8 is one modulo 16 taken modulo 8, and
  // a path of moves modulo 16 is one modulo 8 (moves that keep every residue dropped, a cycle cut
  // out: deltas >= 0 and rounding is monotone, so neither makes a sum larger); so the programme's
  // cost of each residue modulo 8 is the least of the costs of the residues modulo 16 above it,
  // the same double (min(x) + d rounds to min(x + d)). The completion of a residue modulo 16 adds
  // lam_k * ((R_k - d_k) mod 16) >= lam_k * ((R_k - d_k) mod 8) to a cost no smaller, so
  // bound(16) >= bound(8) >= bound(4) >= bound(2) (each also capped by `budget`): the serial
  // maximum, and stopping early at `budget` changes nothing, as bound(16) is then `budget` too.
  // (tests/unit/test_native_engine.cpp compares this with the four passes.)
  if (passes.size() >= 2 && passes.back().modulus == 16) {
    const Pass& last = passes.back();
    bool same = true;
    for (const Pass& pass : passes) same = same && pass.rows == last.rows;
    for (const int row : last.rows) same = same && lam[static_cast<std::size_t>(row)] >= 0.0;
    if (same) return run(last, nullptr);
  }
  // The last modulus (the largest programme: 16^K residues) on another thread beside the others; it is
  // not wanted when one of those already reaches the budget.
  double lift = 0.0;
  const std::size_t n = passes.size();
  if (n < 2 || rel.parallel().threads() < 2) {
    for (const Pass& pass : passes) {
      lift = std::max(lift, run(pass, nullptr));
      if (lift >= budget) break;
    }
    return lift;
  }
  std::atomic<bool> stop{false};
  double last = 0.0;
  bool reached = false;
  rel.parallel().alongside(
      [&] {
        for (std::size_t i = 0; i + 1 < n && !reached; ++i) {
          lift = std::max(lift, run(passes[i], nullptr));
          reached = lift >= budget;
        }
        if (reached) stop.store(true, std::memory_order_relaxed);
      },
      [&] { last = run(passes[n - 1], &stop); });
  return reached ? lift : std::max(lift, last);
}

}  // namespace sia::detail::native
