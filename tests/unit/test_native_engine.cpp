// The native backend's engine piece by piece (src/milp/native/), each against an independent
// answer: exhaustive search over small problems, the explicit LP solved by the dense simplex,
// duals checked by LP duality. Covers the price-space LP, its primal, the symmetry classes, the
// modular bound, the core DP, the branch and bound over counts, warm starts and the thread count.
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/milp/factory.hpp>
#include <sia/round.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <stop_token>
#include <string>
#include <vector>

#include "milp/native/branch.hpp"
#include "milp/native/classes.hpp"
#include "milp/native/core_dp.hpp"
#include "milp/native/dense_lp.hpp"
#include "milp/native/heuristic.hpp"
#include "milp/native/problem.hpp"
#include "milp/native/relaxation.hpp"
#include "milp/native/search.hpp"
#include "milp/rounding.hpp"
#include "round_instances.hpp"
#include "unit/capturing_solver.hpp"
#include "unit/native_shape_checks.hpp"

namespace {

using namespace sia::detail::native;

struct Spec {
  int rows = 2;
  int groups = 5;
  int max_items = 4;
  bool fractional = false;  // usages not integers
  bool identical = false;   // groups copied from a few templates
  bool forced = false;      // some groups without a "none" item
  bool two_rows = false;    // some items use two rows
  bool granular = false;    // usages multiples of 2 or 4 and odd capacities
};

Problem random_problem(std::mt19937& rng, const Spec& s) {
  Problem p;
  p.num_rows = s.rows;
  std::uniform_int_distribution<int> capd(0, 3 * s.groups);
  for (int k = 0; k < s.rows; ++k) {
    int c = capd(rng);
    if (s.granular) c = 2 * c + 1;
    p.cap.push_back(s.fractional ? c * 0.37 : c);
  }
  std::uniform_real_distribution<double> val(-0.5, 3.0);
  std::uniform_int_distribution<int> items(1, s.max_items), row(0, s.rows - 1), amt(1, 4), coin(0, 3);
  struct Item {
    double v;
    std::vector<std::pair<int, double>> use;
  };
  std::vector<std::pair<std::vector<Item>, bool>> templates;
  for (int g = 0; g < s.groups; ++g) {
    if (s.identical && !templates.empty() && coin(rng) != 0) {
      const auto& t = templates[rng() % templates.size()];
      for (const auto& it : t.first) p.add_item(it.v, 0, it.use);
      if (t.second) p.add_none();
      p.close_group(-1);
      continue;
    }
    std::vector<Item> its;
    const int n = items(rng);
    for (int i = 0; i < n; ++i) {
      Item it;
      it.v = std::round(val(rng) * 100.0) / 100.0;
      const int r = row(rng);
      double a = amt(rng);
      if (s.granular) a *= (coin(rng) < 2 ? 2 : 4);
      if (s.fractional) a *= 0.37;
      it.use.emplace_back(r, a);
      if (s.two_rows && s.rows > 1 && coin(rng) == 0) {
        const int r2 = (r + 1) % s.rows;
        it.use.emplace_back(r2, s.fractional ? 0.37 : 1.0);
        std::sort(it.use.begin(), it.use.end());
      }
      its.push_back(it);
    }
    const bool none = !(s.forced && coin(rng) == 0);
    for (const auto& it : its) p.add_item(it.v, 0, it.use);
    if (none) p.add_none();
    p.close_group(-1);
    templates.emplace_back(its, none);
  }
  return p;
}

/// Exhaustive optimum (internal value, maximisation); nullopt when infeasible.
std::optional<double> brute_force(const Problem& p) {
  std::vector<double> used(static_cast<std::size_t>(p.num_rows), 0.0);
  double best = -std::numeric_limits<double>::infinity();
  std::function<void(int, double)> rec = [&](int g, double acc) {
    if (g == p.num_groups()) {
      best = std::max(best, acc);
      return;
    }
    for (int it = p.begin(g); it < p.end(g); ++it) {
      bool fits = true;
      for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q) {
        const auto k = static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)]);
        fits = fits && used[k] + p.use_val[static_cast<std::size_t>(q)] <= p.cap[k] + 1e-9;
      }
      if (!fits) continue;
      for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
        used[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] +=
            p.use_val[static_cast<std::size_t>(q)];
      rec(g + 1, acc + p.value[static_cast<std::size_t>(it)]);
      for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
        used[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] -=
            p.use_val[static_cast<std::size_t>(q)];
    }
  };
  rec(0, p.fixed_value);
  if (best == -std::numeric_limits<double>::infinity()) return std::nullopt;
  return best;
}

/// The LP relaxation solved explicitly (x_gi >= 0, sum_i x_gi = 1, capacities).
std::optional<double> explicit_lp(const Problem& p) {
  const int n = p.num_items(), G = p.num_groups(), K = p.num_rows;
  const int m = K + 2 * G;
  std::vector<double> a(static_cast<std::size_t>(m) * static_cast<std::size_t>(n), 0.0), b(static_cast<std::size_t>(m)),
      c(p.value.begin(), p.value.end());
  for (int it = 0; it < n; ++it)
    for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
      a[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)]) * static_cast<std::size_t>(n) +
        static_cast<std::size_t>(it)] += p.use_val[static_cast<std::size_t>(q)];
  for (int k = 0; k < K; ++k) b[static_cast<std::size_t>(k)] = p.cap[static_cast<std::size_t>(k)];
  for (int g = 0; g < G; ++g) {
    for (int it = p.begin(g); it < p.end(g); ++it) {
      a[static_cast<std::size_t>(K + 2 * g) * static_cast<std::size_t>(n) + static_cast<std::size_t>(it)] = 1.0;
      a[static_cast<std::size_t>(K + 2 * g + 1) * static_cast<std::size_t>(n) + static_cast<std::size_t>(it)] = -1.0;
    }
    b[static_cast<std::size_t>(K + 2 * g)] = 1.0;
    b[static_cast<std::size_t>(K + 2 * g + 1)] = -1.0;
  }
  DenseLp lp(m, n, a, b, c);
  const auto r = lp.solve();
  if (r.status != DenseLpStatus::optimal) return std::nullopt;
  return r.value + p.fixed_value;
}

std::function<double(double)> gap_tolerance(double gap) {
  return [gap](double z) { return std::max(gap * std::abs(z), 1e-9 * (1.0 + std::abs(z))); };
}

// Groups a and b of p have the same items: values (+0 = -0), "none" items and usages.
bool same_groups(const Problem& p, int a, int b) {
  if (p.end(a) - p.begin(a) != p.end(b) - p.begin(b)) return false;
  for (int i = p.begin(a), j = p.begin(b); i < p.end(a); ++i, ++j) {
    const auto iu = static_cast<std::size_t>(i), ju = static_cast<std::size_t>(j);
    if (p.value[iu] != p.value[ju] || (p.column[iu] < 0) != (p.column[ju] < 0)) return false;
    if (std::vector<int>(p.use_row.begin() + p.use_begin[iu], p.use_row.begin() + p.use_begin[iu + 1]) !=
            std::vector<int>(p.use_row.begin() + p.use_begin[ju], p.use_row.begin() + p.use_begin[ju + 1]) ||
        std::vector<double>(p.use_val.begin() + p.use_begin[iu], p.use_val.begin() + p.use_begin[iu + 1]) !=
            std::vector<double>(p.use_val.begin() + p.use_begin[ju], p.use_val.begin() + p.use_begin[ju + 1]))
      return false;
  }
  return true;
}

Spec spec_for(int iter) {
  Spec s;
  s.rows = 1 + iter % 3;
  s.groups = 3 + iter % 5;
  s.identical = iter % 4 == 1;
  s.forced = iter % 3 == 2;
  s.two_rows = iter % 5 == 3;
  s.fractional = iter % 7 == 4;
  s.granular = iter % 6 == 5 && !s.fractional;
  return s;
}

}  // namespace

// milp/rounding.hpp: the integrality checks' distance to the nearest integer is std::round's, bit
// for bit, and the integer test agrees with v == std::round(v), on random doubles of every
// magnitude, random bit patterns and the edges (ties, 2^52, infinities, NaN, signed zeros).
TEST_CASE("native.engine.nearest_integer_is_round") {
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> unit(-3.0, 3.0);
  std::vector<double> values = {0.5,
                                -0.5,
                                1.5,
                                2.5,
                                -2.5,
                                0.49999999999999994,
                                4503599627370495.5,
                                4503599627370496.0,
                                -4503599627370497.0,
                                1e300,
                                1e-300,
                                0.0,
                                -0.0,
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN()};
  for (int i = 0; i < 200'000; ++i) {
    values.push_back(unit(gen));
    values.push_back(std::ldexp(unit(gen), static_cast<int>(gen() % 130) - 65));
    const std::uint64_t bits = gen();
    double x = 0.0;
    std::memcpy(&x, &bits, sizeof x);
    values.push_back(x);
  }
  for (const double v : values) {
    CHECK(sia::detail::is_integer_value(v) == (v == std::round(v)));
    if (!std::isfinite(v)) continue;
    const double a = std::abs(v - sia::detail::nearest_integer(v)), b = std::abs(v - std::round(v));
    CHECK(std::memcmp(&a, &b, sizeof a) == 0);
  }
}

TEST_CASE("native.engine.dense_lp_duals") {
  // y >= 0, y·A >= c and y·b = the optimum on random feasible LPs.
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> u(-1.0, 2.0);
  for (int iter = 0; iter < 200; ++iter) {
    const int m = 2 + iter % 5, n = 2 + iter % 4;
    std::vector<double> a(static_cast<std::size_t>(m * n)), b(static_cast<std::size_t>(m)),
        c(static_cast<std::size_t>(n));
    for (auto& x : a) x = u(rng);
    for (auto& x : b) x = 1.0 + u(rng);  // x = 0 is feasible
    for (auto& x : c) x = u(rng);
    for (int j = 0; j < n; ++j) a[static_cast<std::size_t>(j)] = 1.0;  // keeps the LP bounded
    DenseLp lp(m, n, a, b, c);
    const auto r = lp.solve();
    REQUIRE(r.status == DenseLpStatus::optimal);
    REQUIRE(r.y.size() == static_cast<std::size_t>(m));
    double yb = 0.0;
    for (int i = 0; i < m; ++i) {
      CHECK(r.y[static_cast<std::size_t>(i)] >= -1e-9);
      yb += r.y[static_cast<std::size_t>(i)] * b[static_cast<std::size_t>(i)];
    }
    CHECK(yb == doctest::Approx(r.value).epsilon(1e-9));
    for (int j = 0; j < n; ++j) {
      double ya = 0.0;
      for (int i = 0; i < m; ++i) ya += r.y[static_cast<std::size_t>(i)] * a[static_cast<std::size_t>(i * n + j)];
      CHECK(ya >= c[static_cast<std::size_t>(j)] - 1e-9);
    }
  }
}

TEST_CASE("native.engine.classes") {
  Problem p;
  p.num_rows = 1;
  p.cap = {4};
  const std::vector<std::pair<int, double>> one{{0, 1.0}}, two{{0, 2.0}};
  auto group = [&](double v1, double v2, bool none) {
    p.add_item(v1, 0, one);
    p.add_item(v2, 0, two);
    if (none) p.add_none();
    p.close_group(-1);
  };
  group(1.0, 1.5, true);                       // 0
  group(1.0, 1.5, true);                       // 1 = 0
  group(1.0, 1.5, false);                      // 2: no "none" item
  group(1.0, std::nextafter(1.5, 2.0), true);  // 3: one ulp apart: not interchangeable
  group(1.0, 1.5, true);                       // 4 = 0
  group(-0.0, 1.5, true);                      // 5
  group(0.0, 1.5, true);                       // 6 = 5 (+0 and -0 are the same value)
  Parallel par(1);
  const Classes c = find_classes(p, par);
  REQUIRE(c.size() == 4);
  CHECK(c.class_of == std::vector<int>{0, 0, 1, 2, 0, 3, 3});
  CHECK(c.mult == std::vector<int>{3, 1, 1, 2});
  CHECK(c.rep == std::vector<int>{0, 2, 3, 5});
  CHECK(std::vector<int>(c.members.begin(), c.members.begin() + 3) == std::vector<int>{0, 1, 4});
}

TEST_CASE("native.engine.price_lp_is_the_lp") {
  // Kelley in price space reaches the explicit LP's optimum; the master's convex combination is
  // an LP-feasible primal of that value; symmetric classes do not change either.
  std::mt19937 rng(11);
  Parallel par(1);
  for (int iter = 0; iter < 300; ++iter) {
    Spec s = spec_for(iter);
    const Problem p = random_problem(rng, s);
    const auto lp = explicit_lp(p);
    CAPTURE(iter);
    for (bool sym : {true, false}) {
      const Classes cls = sym ? find_classes(p, par) : singleton_classes(p);
      Relaxation rel(p, cls, par);
      const auto box = rel.price_box();
      const auto kr = rel.minimise(std::vector<double>(static_cast<std::size_t>(p.num_rows), 0.0), box, nullptr, -kInf,
                                   500, std::nullopt, true);
      if (!lp) {
        // Infeasible LP: the feasibility Lagrangian says so.
        CHECK(rel.lp_infeasible(nullptr, std::nullopt));
        continue;
      }
      CHECK_FALSE(rel.lp_infeasible(nullptr, std::nullopt));
      CHECK(kr.L == doctest::Approx(*lp).epsilon(1e-7));
      std::vector<double> x;
      std::vector<int> split;
      rel.primal_counts(kr, nullptr, x, split);
      std::vector<double> use(static_cast<std::size_t>(p.num_rows), 0.0);
      double value = p.fixed_value;
      for (int c = 0; c < cls.size(); ++c) {
        double members = 0.0;
        for (int it = cls.first_item(p, c); it < cls.first_item(p, c) + cls.items(p, c); ++it) {
          const double xv = x[static_cast<std::size_t>(it)];
          CHECK(xv >= -1e-9);
          members += xv;
          value += xv * p.value[static_cast<std::size_t>(it)];
          for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1];
               ++q)
            use[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] +=
                xv * p.use_val[static_cast<std::size_t>(q)];
        }
        CHECK(members == doctest::Approx(cls.mult[static_cast<std::size_t>(c)]));
      }
      for (int k = 0; k < p.num_rows; ++k)
        CHECK(use[static_cast<std::size_t>(k)] <= p.cap[static_cast<std::size_t>(k)] + 1e-6);
      CHECK(value == doctest::Approx(*lp).epsilon(1e-6));
    }
  }
}

namespace {
// The prices the modular-bound tests try: the relaxation's minimiser from zero prices, then one random price
// vector in [0, 1.5) per row (drawn from `rng`).
std::vector<std::vector<double>> trial_prices(Relaxation& rel, std::mt19937& rng) {
  const auto rows = static_cast<std::size_t>(rel.problem().num_rows);
  auto kr = rel.minimise(std::vector<double>(rows, 0.0), rel.price_box(), nullptr, -kInf, 500, std::nullopt, false);
  std::vector<std::vector<double>> prices{kr.lam};
  std::uniform_real_distribution<double> u(0.0, 1.5);
  std::vector<double> r(rows);
  for (auto& x : r) x = u(rng);
  prices.push_back(r);
  return prices;
}
}  // namespace

TEST_CASE("native.engine.modular_bound_is_valid") {
  // L(lam) - lift >= the optimum for every modulus, at the LP prices and at random prices.
  std::mt19937 rng(21);
  Parallel par(1);
  int lifted = 0;
  for (int iter = 0; iter < 400; ++iter) {
    Spec s = spec_for(iter);
    s.fractional = false;
    s.granular = iter % 2 == 0;
    const Problem p = random_problem(rng, s);
    const auto opt = brute_force(p);
    if (!opt) continue;
    const Classes cls = find_classes(p, par);
    Relaxation rel(p, cls, par);
    const auto prices = trial_prices(rel, rng);
    std::vector<int> all(static_cast<std::size_t>(p.num_rows));
    for (int k = 0; k < p.num_rows; ++k) all[static_cast<std::size_t>(k)] = k;
    for (const auto& lam : prices) {
      const double L = rel.evaluate(lam, nullptr).L;
      CAPTURE(iter);
      for (int M : {2, 3, 4, 8}) {
        const double lift = modular_cost_bound(rel, lam, 1e9, M, all);
        CHECK(L - lift >= *opt - 1e-9);
        lifted += lift > 1e-9;
        std::vector<int> first{0};
        CHECK(L - modular_cost_bound(rel, lam, 1e9, M, first) >= *opt - 1e-9);
      }
      CHECK(L - modular_bounds(rel, lam, 1e9) >= *opt - 1e-9);
    }
  }
  CHECK(lifted > 50);  // the bound does work on granular problems
}

namespace {
// modular_bounds as documented: modulus after modulus by modular_cost_bound, on the dearest rows that fit
// 2^16 residues, one shared work budget, stopping at the first bound that reaches `budget`.
double modular_bounds_by_definition(const Relaxation& rel, const std::vector<double>& lam, double budget) {
  const int K = rel.problem().num_rows;
  std::vector<int> by_price(static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k) by_price[static_cast<std::size_t>(k)] = k;
  std::stable_sort(by_price.begin(), by_price.end(),
                   [&](int a, int b) { return lam[static_cast<std::size_t>(a)] > lam[static_cast<std::size_t>(b)]; });
  double lift = 0.0, work_left = 5e7;
  for (int M : {2, 4, 8, 16}) {
    std::size_t states = 1;
    int n = 0;
    while (n < K && states * static_cast<std::size_t>(M) <= (1u << 16)) {
      states *= static_cast<std::size_t>(M);
      ++n;
    }
    std::vector<int> rows(by_price.begin(), by_price.begin() + n);
    std::sort(rows.begin(), rows.end());
    lift = std::max(lift, modular_cost_bound(rel, lam, budget, M, rows, 1u << 16, &work_left));
    if (lift >= budget) break;
  }
  return lift;
}
}  // namespace

TEST_CASE("native.engine.modular_bounds_same_bits_on_two_threads") {
  // modular_bounds evaluates the relaxation once for its four moduli and runs the last one's programme
  // beside the others on a second thread, or modulus 16's alone when every modulus uses the same rows (at
  // most 4): the same number as its definition, bit for bit, with 1 or 2 threads, at budgets that stop it
  // early and at budgets that let every modulus run; 1-3 rows (modulus 16 alone) and 5-6 (its rows differ).
  std::mt19937 rng(57);
  Parallel one(1), two(2);
  int compared = 0, lifted = 0, lifted_wide = 0;
  for (int iter = 0; iter < 300; ++iter) {
    Spec s = spec_for(iter);
    s.fractional = false;
    s.granular = iter % 3 != 0;
    if (iter % 5 == 4) {
      s.rows = 5 + iter % 2;
      s.groups = 6 + iter % 7;
    }
    const Problem p = random_problem(rng, s);
    const Classes cls = find_classes(p, one);
    Relaxation rel1(p, cls, one), rel2(p, cls, two);
    const auto prices = trial_prices(rel1, rng);
    for (const auto& lam : prices)
      for (const double budget : {1e9, 0.5, 0.05, 0.0}) {
        CAPTURE(iter);
        CAPTURE(budget);
        const double want = modular_bounds_by_definition(rel1, lam, budget);
        const double got1 = modular_bounds(rel1, lam, budget), got2 = modular_bounds(rel2, lam, budget);
        CHECK(std::memcmp(&want, &got1, sizeof want) == 0);
        CHECK(std::memcmp(&want, &got2, sizeof want) == 0);
        ++compared;
        lifted += want > 1e-9;
        lifted_wide += want > 1e-9 && p.num_rows > 4;
      }
  }
  CHECK(compared == 300 * 2 * 4);
  CHECK(lifted > 100);
  CHECK(lifted_wide > 10);
}

TEST_CASE("native.engine.modular_bound_at_a_node_is_valid") {
  // At a branch-and-bound node (items excluded; a one-member class's item forced), the node's
  // relaxation less its modular lift bounds the node's own optimum, found exhaustively over the
  // items its bounds allow, at the LP prices and at random ones.
  std::mt19937 rng(57);
  Parallel par(1);
  int lifted = 0, nodes = 0;
  for (int iter = 0; iter < 400; ++iter) {
    Spec s = spec_for(iter);
    s.fractional = false;
    s.granular = iter % 2 == 0;
    const Problem p = random_problem(rng, s);
    for (bool sym : {true, false}) {
      const Classes cls = sym ? find_classes(p, par) : singleton_classes(p);
      Relaxation rel(p, cls, par);
      Bounds b;
      b.reset(p, cls);
      std::uniform_int_distribution<int> coin(0, 2);
      for (int c = 0; c < cls.size(); ++c) {
        const int f = cls.first_item(p, c), n = cls.items(p, c);
        const int mode = coin(rng);
        if (mode == 1 && n > 1) {  // one item excluded (another stays allowed)
          b.hi[static_cast<std::size_t>(f + static_cast<int>(rng() % static_cast<unsigned>(n)))] = 0;
        } else if (mode == 2 && cls.mult[static_cast<std::size_t>(c)] == 1) {  // one item forced
          const int it = f + static_cast<int>(rng() % static_cast<unsigned>(n));
          b.lo[static_cast<std::size_t>(it)] = 1;
        }
        b.classify(p, cls, c);
      }
      // The node's optimum: each member of a class on an allowed item (its forced one, if any).
      auto allowed = [&](int g, int it) {
        const int c = cls.class_of[static_cast<std::size_t>(g)];
        const int rep_it = cls.first_item(p, c) + (it - p.begin(g));
        if (b.bounded[static_cast<std::size_t>(c)] == 0) return true;
        if (b.hi[static_cast<std::size_t>(rep_it)] <= 0) return false;
        for (int t = cls.first_item(p, c); t < cls.first_item(p, c) + cls.items(p, c); ++t)
          if (b.lo[static_cast<std::size_t>(t)] > 0) return t == rep_it;
        return true;
      };
      std::vector<double> used(static_cast<std::size_t>(p.num_rows), 0.0);
      double opt = -kInf;
      std::function<void(int, double)> rec = [&](int g, double acc) {
        if (g == p.num_groups()) {
          opt = std::max(opt, acc);
          return;
        }
        for (int it = p.begin(g); it < p.end(g); ++it) {
          if (!allowed(g, it)) continue;
          const auto iu = static_cast<std::size_t>(it);
          bool fits = true;
          for (int q = p.use_begin[iu]; q < p.use_begin[iu + 1]; ++q)
            fits = fits && used[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] +
                                   p.use_val[static_cast<std::size_t>(q)] <=
                               p.cap[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] + 1e-9;
          if (!fits) continue;
          for (int q = p.use_begin[iu]; q < p.use_begin[iu + 1]; ++q)
            used[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] +=
                p.use_val[static_cast<std::size_t>(q)];
          rec(g + 1, acc + p.value[iu]);
          for (int q = p.use_begin[iu]; q < p.use_begin[iu + 1]; ++q)
            used[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] -=
                p.use_val[static_cast<std::size_t>(q)];
        }
      };
      rec(0, p.fixed_value);
      if (opt == -kInf) continue;  // (no solution at this node: nothing to bound)
      for (const auto& lam : trial_prices(rel, rng)) {
        CAPTURE(iter);
        CAPTURE(sym);
        AtPrices at;
        at.L = rel.evaluate(lam, &b).L;
        REQUIRE(at.L > -kInf);
        REQUIRE(node_base_items(rel, lam, b, at.best));
        // (The base items are the node relaxation's: L is theirs.)
        double L = p.fixed_value;
        for (int k = 0; k < p.num_rows; ++k) L += lam[static_cast<std::size_t>(k)] * p.cap[static_cast<std::size_t>(k)];
        for (int c = 0; c < cls.size(); ++c)
          L += cls.mult[static_cast<std::size_t>(c)] * rel.reduced(at.best[static_cast<std::size_t>(c)], lam.data());
        CHECK(L == doctest::Approx(at.L).epsilon(1e-9));
        const double lift = modular_bounds(rel, lam, 1e9, &at, &b);
        CHECK(at.L - lift >= opt - 1e-9);
        lifted += lift > 1e-9;
        ++nodes;
      }
    }
  }
  CHECK(nodes > 500);
  CHECK(lifted > 50);  // the bound does work at nodes of granular problems
}

TEST_CASE("native.engine.improve_pairs_leaves_no_improving_pair") {
  // From a feasible choice, the exchanges end feasible, no worse, no better than the optimum, and
  // with no single move nor pair of moves of two groups left that fits and gains (checked over every
  // pair).
  std::mt19937 rng(61);
  Parallel par(1);
  int improved = 0, checked = 0, with_classes = 0;
  for (int iter = 0; iter < 400; ++iter) {
    Spec s = spec_for(iter);
    s.identical = iter % 2 == 1;  // (classes of several members: their counts move)
    const Problem p = random_problem(rng, s);
    const auto opt = brute_force(p);
    if (!opt) continue;
    const int G = p.num_groups(), K = p.num_rows;
    auto use_of = [&](const std::vector<int>& ch) {
      std::vector<double> u(static_cast<std::size_t>(K), 0.0);
      for (const int it : ch) {
        if (it < 0) continue;  // (a group not chosen yet)
        for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
          u[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] += p.use_val[static_cast<std::size_t>(q)];
      }
      return u;
    };
    auto fits = [&](const std::vector<int>& ch) {
      const auto u = use_of(ch);
      for (int k = 0; k < K; ++k)
        if (u[static_cast<std::size_t>(k)] > p.cap[static_cast<std::size_t>(k)] + 1e-9) return false;
      return true;
    };
    auto value_of = [&](const std::vector<int>& ch) {
      double v = p.fixed_value;
      for (const int it : ch) v += p.value[static_cast<std::size_t>(it)];
      return v;
    };
    // A feasible start: the first one found depth first, groups trying their items from a random end.
    std::vector<int> start(static_cast<std::size_t>(G), -1);
    const bool reverse = rng() % 2 == 0;
    std::function<bool(int)> first = [&](int g) {
      if (g == G) return fits(start);
      for (int t = 0; t < p.end(g) - p.begin(g); ++t) {
        start[static_cast<std::size_t>(g)] = reverse ? p.end(g) - 1 - t : p.begin(g) + t;
        if (fits(start) && first(g + 1)) return true;
      }
      start[static_cast<std::size_t>(g)] = -1;
      return false;
    };
    REQUIRE(first(0));
    const Classes cls = s.identical ? find_classes(p, par) : singleton_classes(p);
    with_classes += cls.size() < G;
    // The start as counts (a member's item is its representative's item at the same place), and
    // the counts found as a choice again: each class's members take its items in item order.
    Counts n(p.value.size(), 0);
    for (int g = 0; g < G; ++g) {
      const int c = cls.class_of[static_cast<std::size_t>(g)];
      ++n[static_cast<std::size_t>(cls.first_item(p, c) + (start[static_cast<std::size_t>(g)] - p.begin(g)))];
    }
    const Counts n0 = n;
    // A deadline already passed (a stop requested): nothing is exchanged.
    std::stop_source stopped;
    stopped.request_stop();
    const Deadline past(std::nullopt, stopped.get_token());
    CHECK_FALSE(improve_pairs(p, cls, n, 1 << 20, &past));
    CHECK(n == n0);
    const bool changed = improve_pairs(p, cls, n, 1 << 20);
    CHECK(changed == (n != n0));
    REQUIRE(counts_feasible(p, cls, nullptr, n));
    std::vector<int> ch(static_cast<std::size_t>(G), -1);
    for (int c = 0; c < cls.size(); ++c) {
      int m = cls.member_begin[static_cast<std::size_t>(c)];
      for (int t = 0; t < cls.items(p, c); ++t)
        for (int k = 0; k < n[static_cast<std::size_t>(cls.first_item(p, c) + t)]; ++k) {
          const int g = cls.members[static_cast<std::size_t>(m++)];
          ch[static_cast<std::size_t>(g)] = p.begin(g) + t;
        }
    }
    CAPTURE(iter);
    REQUIRE(fits(ch));
    const double v = value_of(ch);
    CHECK(v == doctest::Approx(counts_value(p, cls, n)).epsilon(1e-12));
    CHECK(v >= value_of(start) - 1e-9);
    CHECK(v <= *opt + 1e-9);
    improved += v > value_of(start) + 1e-9;
    for (int a = 0; a < G; ++a)
      for (int ia = p.begin(a); ia < p.end(a); ++ia) {
        std::vector<int> one = ch;
        one[static_cast<std::size_t>(a)] = ia;
        if (fits(one)) CHECK(value_of(one) <= v + 1e-7);
        for (int b = a + 1; b < G; ++b)
          for (int ib = p.begin(b); ib < p.end(b); ++ib) {
            std::vector<int> two = one;
            two[static_cast<std::size_t>(b)] = ib;
            if (fits(two)) CHECK(value_of(two) <= v + 1e-7);
            ++checked;
          }
      }
  }
  CHECK(improved > 50);
  CHECK(checked > 10000);
  CHECK(with_classes > 50);
}

TEST_CASE("native.engine.modular_bound_is_the_group_relaxation") {
  // Not only a valid bound: exactly min over every choice of an item per group (feasible or not) of
  // sum delta + sum_k lam_k * ((R_k - d_k) mod M), enumerated, for moduli 2^b (the carry-less add)
  // and others, on all rows and on a subset, with classes of several members (one move each).
  std::mt19937 rng(33);
  Parallel par(1);
  int compared = 0, positive = 0;
  for (int iter = 0; iter < 300; ++iter) {
    Spec s = spec_for(iter);
    s.fractional = false;
    s.groups = std::min(s.groups, 6);
    s.granular = iter % 2 == 0;
    const Problem p = random_problem(rng, s);
    const Classes cls = find_classes(p, par);
    Relaxation rel(p, cls, par);
    std::uniform_real_distribution<double> u(0.0, 1.5);
    std::vector<double> lam(static_cast<std::size_t>(p.num_rows));
    for (auto& x : lam) x = u(rng);
    std::vector<int> base;
    if (rel.evaluate(lam, nullptr, &base).L == -kInf) continue;
    std::vector<int> all(static_cast<std::size_t>(p.num_rows));
    for (int k = 0; k < p.num_rows; ++k) all[static_cast<std::size_t>(k)] = k;
    std::vector<int> last{p.num_rows - 1};
    auto use = [&](int it, int row) {
      long long v = 0;
      for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1]; ++q)
        if (p.use_row[static_cast<std::size_t>(q)] == row) v += std::llround(p.use_val[static_cast<std::size_t>(q)]);
      return v;
    };
    for (const auto* rows : {&all, &last})
      for (int M : {2, 3, 4, 5, 8}) {
        const auto K = rows->size();
        auto mod = [M](long long v) { return ((v % M) + M) % M; };
        // Base residual per row of the subset, and every group's item choices (its class's items).
        std::vector<long long> R(K);
        for (std::size_t k = 0; k < K; ++k)
          R[k] = static_cast<long long>(std::floor(p.cap[static_cast<std::size_t>((*rows)[k])] + 1e-9));
        std::vector<int> group_class(static_cast<std::size_t>(p.num_groups()));
        for (int g = 0; g < p.num_groups(); ++g) {
          const int c = cls.class_of[static_cast<std::size_t>(g)];
          group_class[static_cast<std::size_t>(g)] = c;
          for (std::size_t k = 0; k < K; ++k) R[k] -= use(base[static_cast<std::size_t>(c)], (*rows)[k]);
        }
        double best = 1e9;
        std::vector<long long> d(K, 0);
        std::function<void(int, double)> rec = [&](int g, double cost) {
          if (g == p.num_groups()) {
            double c = cost;
            for (std::size_t k = 0; k < K; ++k)
              c += lam[static_cast<std::size_t>((*rows)[k])] * static_cast<double>(mod(R[k] - d[k]));
            best = std::min(best, c);
            return;
          }
          const int c = group_class[static_cast<std::size_t>(g)];
          const int b = base[static_cast<std::size_t>(c)];
          const double rb = rel.reduced(b, lam.data());
          const int f = cls.first_item(p, c), e = f + cls.items(p, c);
          for (int it = f; it < e; ++it) {
            for (std::size_t k = 0; k < K; ++k) d[k] += use(it, (*rows)[k]) - use(b, (*rows)[k]);
            rec(g + 1, cost + (it == b ? 0.0 : std::max(0.0, rb - rel.reduced(it, lam.data()))));
            for (std::size_t k = 0; k < K; ++k) d[k] -= use(it, (*rows)[k]) - use(b, (*rows)[k]);
          }
        };
        rec(0, 0.0);
        const double got = modular_cost_bound(rel, lam, 1e9, M, *rows);
        CAPTURE(iter);
        CAPTURE(M);
        CHECK(got == doctest::Approx(best).epsilon(1e-12).scale(1.0));
        ++compared;
        positive += best > 1e-9;
      }
  }
  CHECK(compared > 2000);
  CHECK(positive > 300);
}

TEST_CASE("native.engine.dp_and_branch_and_bound_vs_exhaustive") {
  // Each exact method alone (the DP, the branch and bound over counts), with and without
  // symmetry classes, at gap 0 and 1e-4: value within the tolerance of the exhaustive optimum and
  // a bound on the right side of it.
  std::mt19937 rng(31);
  Parallel par(1);
  int dp_settled = 0, bnb_done = 0, infeasible = 0;
  for (int iter = 0; iter < 400; ++iter) {
    Spec s = spec_for(iter);
    const Problem p = random_problem(rng, s);
    const auto opt = brute_force(p);
    CAPTURE(iter);
    for (bool sym : {true, false}) {
      const Classes cls = sym ? find_classes(p, par) : singleton_classes(p);
      Relaxation rel(p, cls, par);
      const auto kr = rel.minimise(std::vector<double>(static_cast<std::size_t>(p.num_rows), 0.0), rel.price_box(),
                                   nullptr, -kInf, 500, std::nullopt, true);
      for (double gap : {0.0, 1e-4}) {
        const auto tol = gap_tolerance(gap);
        // Incumbent: the rounding heuristic, when it finds one.
        Counts n;
        double v = -kInf;
        std::vector<double> x;
        std::vector<int> split;
        if (!kr.infeasible) rel.primal_counts(kr, nullptr, x, split);
        if (kr.infeasible || !round_lp_and_repair(rel, kr.lam, nullptr, x, n, v)) {
          v = -kInf;
          n.clear();
        } else {
          REQUIRE(counts_feasible(p, cls, nullptr, n));
          REQUIRE(opt);
          CHECK(v <= *opt + 1e-9);
        }
        if (!opt) {
          CHECK(v == -kInf);
          const BranchOutcome bo = branch_and_bound(rel, kr.lam, kr.L, -kInf, {}, tol, BranchLimits{}, false);
          CHECK(bo.completed);
          CHECK_FALSE(bo.improved);
          ++infeasible;
          continue;
        }
        if (v > -kInf) {
          const DpOutcome dp = solve_core_dp(rel, kr.lam, v, tol, DpLimits{}, false);
          if (dp.kind == DpOutcome::Kind::settled) {
            ++dp_settled;
            const double best = dp.improved ? dp.value : v;
            if (dp.improved) CHECK(counts_feasible(p, cls, nullptr, dp.counts));
            CHECK(best >= *opt - tol(*opt) - 1e-9);
            CHECK(dp.bound >= *opt - 1e-9);
          }
        }
        const BranchOutcome bo = branch_and_bound(rel, kr.lam, kr.L, v, n, tol, BranchLimits{}, false);
        REQUIRE(bo.completed);
        ++bnb_done;
        const double best = bo.improved ? bo.value : v;
        if (bo.improved) CHECK(counts_feasible(p, cls, nullptr, bo.counts));
        CHECK(best >= *opt - tol(*opt) - 1e-9);
        CHECK(bo.bound >= *opt - 1e-9);
      }
    }
  }
  CHECK(dp_settled > 300);
  CHECK(bnb_done > 1000);
  CHECK(infeasible > 10);
}

TEST_CASE("native.engine.search_vs_exhaustive") {
  // The whole search (LP, heuristics, modular bound, DP, branch and bound) from cold and from
  // warm prices and solutions, with and without symmetry, on 1 and 3 threads.
  std::mt19937 rng(41);
  for (int iter = 0; iter < 300; ++iter) {
    Spec s = spec_for(iter);
    const Problem p = random_problem(rng, s);
    const auto opt = brute_force(p);
    CAPTURE(iter);
    SearchOptions o;
    o.threads = 1 + 2 * (iter % 2);
    o.symmetry = iter % 3 != 0;
    const auto tol = gap_tolerance(iter % 2 ? 1e-4 : 0.0);
    const SearchResult r = solve_mckp(p, tol, o, nullptr, nullptr);
    REQUIRE(r.proven);
    if (!opt) {
      CHECK_FALSE(r.feasible);
      continue;
    }
    REQUIRE(r.feasible);
    CHECK(r.value >= *opt - tol(*opt) - 1e-9);
    CHECK(r.value <= *opt + 1e-9);
    CHECK(r.bound >= *opt - 1e-9);
    // Warm: the prices and the solution of the same problem give the same value.
    const SearchResult w = solve_mckp(p, tol, o, &r.prices, &r.choice);
    REQUIRE(w.proven);
    CHECK(w.value >= *opt - tol(*opt) - 1e-9);
    // A partial warm solution (unknown groups = -1) is completed, never trusted blindly.
    std::vector<int> partial(r.choice);
    for (std::size_t g = 0; g < partial.size(); g += 2) partial[g] = -1;
    const SearchResult w2 = solve_mckp(p, tol, o, nullptr, &partial);
    REQUIRE(w2.proven);
    CHECK(w2.value >= *opt - tol(*opt) - 1e-9);
  }
}

TEST_CASE("native.engine.symmetric_infeasible_is_proven_fast") {
  // 4-GPU jobs that must all run, one more than fit: capacities 4k + 2 on three rows, so the LP
  // fits the last job in halves and only integrality says no. Thousands of interchangeable jobs:
  // one class, a handful of nodes.
  Problem p;
  p.num_rows = 3;
  p.cap = {4 * 300 + 2, 4 * 500 + 2, 4 * 200 + 2};
  for (int g = 0; g < 1001; ++g) {
    for (int k = 0; k < 3; ++k) p.add_item(1.0 + 0.1 * k, 0, std::vector<std::pair<int, double>>{{k, 4.0}});
    p.close_group(-1);
  }
  SearchOptions o;
  o.threads = 1;
  const SearchResult r = solve_mckp(p, gap_tolerance(1e-4), o, nullptr, nullptr);
  CHECK(r.proven);
  CHECK_FALSE(r.feasible);
  CHECK(r.classes == 1);
  CHECK(r.nodes < 100);
  // One job fewer fits exactly.
  p.group_begin.pop_back();
  p.group_row.pop_back();
  for (int k = 0; k < 3; ++k) {
    p.value.pop_back();
    p.column.pop_back();
    p.use_begin.pop_back();
    p.use_row.pop_back();
    p.use_val.pop_back();
  }
  const SearchResult r2 = solve_mckp(p, gap_tolerance(0.0), o, nullptr, nullptr);
  CHECK(r2.proven);
  REQUIRE(r2.feasible);
  CHECK(r2.value == doctest::Approx(300 * 1.0 + 500 * 1.1 + 200 * 1.2));
}

TEST_CASE("native.engine.same_answer_on_any_thread_count") {
  // Large enough for several parallel blocks: bit-identical values, bounds, prices and choices.
  std::mt19937 rng(51);
  Spec s;
  s.rows = 3;
  s.groups = 4000;
  s.max_items = 6;
  s.identical = true;
  s.two_rows = true;
  const Problem p = random_problem(rng, s);
  std::optional<SearchResult> first;
  for (int threads : {1, 2, 3, 8}) {
    SearchOptions o;
    o.threads = threads;
    const SearchResult r = solve_mckp(p, gap_tolerance(1e-4), o, nullptr, nullptr);
    REQUIRE(r.feasible);
    if (!first) {
      first = r;
      continue;
    }
    CAPTURE(threads);
    CHECK(r.value == first->value);
    CHECK(r.bound == first->bound);
    CHECK(r.prices == first->prices);
    CHECK(r.choice == first->choice);
    CHECK(r.proven == first->proven);
  }
}

// ---------------------------------------------------------------------------------------------
// Recognition: the round's layout read in place (recognise) against the general reading by
// compressed rows (recognise_by_rows), on the models rounds hand the backend and on variants of
// them that leave the layout or break it in every way the fast reading must refuse.

namespace {

using sia::test::CapturingSolver;

std::vector<sia::MilpModel>& captured_models() {
  static std::vector<sia::MilpModel> models;
  return models;
}

using sia::test::bits_equal;
using sia::test::check_same_shape;

// solution_feasible (the backend's check of its answer, through the entry index of a model read
// in layout) against MilpModel::is_feasible, on 0/1 vectors: one item per group (the first, a
// random one, the "none" item where there is one) with the pins, then one column flipped; then
// some zeros written -0.0, a value that is neither 0 nor 1 (0.5, the least denormal, NaN, 2, -1,
// inf), and tolerances 0 and below 0.
void check_solution_check(const sia::MilpModel& m, const sia::detail::native::Shape& s, std::mt19937& rng,
                          int& feasible, int& infeasible) {
  if (!s.round_shaped || s.infeasible) return;
  const auto& p = s.problem;
  for (int t = 0; t < 12; ++t) {
    std::vector<double> x(static_cast<std::size_t>(m.num_cols()), 0.0);
    for (int c : s.pinned_cols) x[static_cast<std::size_t>(c)] = 1.0;
    for (int g = 0; g < p.num_groups(); ++g) {
      const int n = p.end(g) - p.begin(g);
      const int pick = t % 3 == 0 ? 0 : (t % 3 == 1 ? static_cast<int>(rng() % static_cast<unsigned>(n)) : n - 1);
      const int c = p.column[static_cast<std::size_t>(p.begin(g) + pick)];
      if (c >= 0) x[static_cast<std::size_t>(c)] = 1.0;
    }
    if (t >= 3 && t < 6 && m.num_cols() > 0) {
      auto& v = x[rng() % static_cast<unsigned>(m.num_cols())];
      v = 1.0 - v;
    }
    if (t == 6)
      for (double& v : x)
        if (v == 0.0 && rng() % 3 == 0) v = -0.0;
    if ((t == 7 || t == 8) && m.num_cols() > 0) {
      const double odd[] = {0.5, std::numeric_limits<double>::denorm_min(), std::nan(""), 2.0, -1.0, kInf};
      x[rng() % static_cast<unsigned>(m.num_cols())] = odd[rng() % 6];
    }
    const double tol = t == 9 ? 0.0 : (t == 10 ? -1e-9 : (t == 11 ? -2.0 : 1e-6));
    const bool want = m.is_feasible(x, tol);
    CHECK(sia::detail::native::solution_feasible(m, s.entries, x, tol) == want);
    // With the columns at 1 listed (as the backend writes its answer: every other value +0.0),
    // ascending; then listed out of order, or with a column that is not at 1 (the pass over x decides).
    bool zeros = true;
    std::vector<int> ones;
    for (std::size_t j = 0; j < x.size(); ++j) {
      if (x[j] == 1.0)
        ones.push_back(static_cast<int>(j));
      else
        zeros = zeros && std::bit_cast<std::uint64_t>(x[j]) == 0;
    }
    if (zeros) {
      CHECK(sia::detail::native::solution_feasible(m, s.entries, x, ones, tol) == want);
      if (ones.size() >= 2) {
        auto swapped = ones;
        std::swap(swapped.front(), swapped.back());
        CHECK(sia::detail::native::solution_feasible(m, s.entries, x, swapped, tol) == want);
      }
      if (m.num_cols() > 0) {
        auto extra = ones;
        extra.push_back(static_cast<int>(rng() % static_cast<unsigned>(m.num_cols())));
        std::sort(extra.begin(), extra.end());
        CHECK(sia::detail::native::solution_feasible(m, s.entries, x, extra, tol) == want);
      }
    }
    (want ? feasible : infeasible) += 1;
  }
}

// The items of every group of a recognised model without pins against the definition of the
// single-row dominance: a choice row's candidates (its columns ascending, value > 0 unless forced)
// stably sorted by (the single capacity row used, -1 none, -2 several; amount; value descending),
// and of those using the same single row only the ones whose value strictly increases; the kept
// columns ascending. (recognise() takes a one-pass path while a group's candidates come in that
// order, as a round's do, and sorts otherwise: both checked here.) Returns the groups checked.
int check_dominance(const sia::MilpModel& m, const sia::detail::native::Shape& s) {
  if (!s.round_shaped || s.infeasible || !s.pinned_cols.empty()) return 0;
  for (std::size_t j = 0; j < m.col_lower.size(); ++j)
    if (m.col_lower[j] != 0.0 || m.col_upper[j] != 1.0) return 0;
  const auto& p = s.problem;
  std::vector<int> cap_k(static_cast<std::size_t>(m.num_rows()), -1);
  for (std::size_t k = 0; k < s.cap_rows.size(); ++k)
    cap_k[static_cast<std::size_t>(s.cap_rows[k])] = static_cast<int>(k);
  std::vector<std::vector<int>> members(static_cast<std::size_t>(m.num_rows()));
  std::vector<std::vector<std::pair<int, double>>> use(static_cast<std::size_t>(m.num_cols()));
  for (const auto& e : m.entries) {
    if (cap_k[static_cast<std::size_t>(e.row)] >= 0)
      use[static_cast<std::size_t>(e.col)].emplace_back(cap_k[static_cast<std::size_t>(e.row)], e.value);
    else
      members[static_cast<std::size_t>(e.row)].push_back(e.col);
  }
  int checked = 0;
  for (int g = 0; g < p.num_groups(); ++g) {
    const int row = p.group_row[static_cast<std::size_t>(g)];
    if (row < 0) continue;
    auto cols = members[static_cast<std::size_t>(row)];
    std::sort(cols.begin(), cols.end());
    const bool forced = !p.has_none(g);
    struct Cand {
      int j, key;
      double amount, v;
    };
    std::vector<Cand> cand;
    for (int j : cols) {
      const double v = s.sign * m.obj[static_cast<std::size_t>(j)];
      if (!forced && v <= 0.0) continue;
      const auto& u = use[static_cast<std::size_t>(j)];
      cand.push_back({j, u.size() == 1 ? u[0].first : (u.empty() ? -1 : -2), u.size() == 1 ? u[0].second : 0.0, v});
    }
    std::stable_sort(cand.begin(), cand.end(), [](const Cand& x, const Cand& y) {
      if (x.key != y.key) return x.key < y.key;
      if (x.key == -2) return false;
      if (x.amount != y.amount) return x.amount < y.amount;
      return x.v > y.v;
    });
    std::vector<int> kept;
    int last_key = -3;
    double best = -kInf;
    for (const Cand& x : cand) {
      if (x.key != last_key) {
        last_key = x.key;
        best = -kInf;
      }
      if (x.key == -2 || x.v > best) {
        kept.push_back(x.j);
        if (x.key != -2) best = x.v;
      }
    }
    std::sort(kept.begin(), kept.end());
    std::vector<int> got;
    for (int it = p.begin(g); it < p.end(g); ++it)
      if (p.column[static_cast<std::size_t>(it)] >= 0) got.push_back(p.column[static_cast<std::size_t>(it)]);
    CHECK(got == kept);
    for (int it = p.begin(g); it < p.end(g); ++it) {
      const int j = p.column[static_cast<std::size_t>(it)];
      if (j < 0) continue;
      CHECK(std::bit_cast<std::uint64_t>(p.value[static_cast<std::size_t>(it)]) ==
            std::bit_cast<std::uint64_t>(s.sign * m.obj[static_cast<std::size_t>(j)]));
      const auto& u = use[static_cast<std::size_t>(j)];
      const int b = p.use_begin[static_cast<std::size_t>(it)];
      REQUIRE(p.use_begin[static_cast<std::size_t>(it) + 1] - b == static_cast<int>(u.size()));
      for (std::size_t q = 0; q < u.size(); ++q) {
        CHECK(p.use_row[static_cast<std::size_t>(b) + q] == u[q].first);
        CHECK(p.use_val[static_cast<std::size_t>(b) + q] == u[q].second);
      }
    }
    ++checked;
  }
  return checked;
}

// recognise_checked(m) is m.validate() and then recognise(m): the same exception and message,
// or the same Shape.
void check_checked_reading(const sia::MilpModel& m, const sia::detail::native::Shape& shape) {
  std::string expected;
  try {
    m.validate();
  } catch (const sia::InvalidArgument& e) {
    expected = e.what();
  }
  if (expected.empty()) {
    check_same_shape(shape, sia::detail::native::recognise_checked(m));
    return;
  }
  std::string got;
  try {
    (void)sia::detail::native::recognise_checked(m);
  } catch (const sia::InvalidArgument& e) {
    got = e.what();
  }
  CHECK(got == expected);
}

// A round of `family` on `backend` (a capturing one: the models it is handed are the test's), then
// the next round (5 % of the jobs changed) warm from it.
void round_and_warm_successor(const std::string& family, int gpus, unsigned seed, double p,
                              const std::string& backend) {
  sia::test::round_and_warm_successor(family, gpus, seed, p, backend, std::chrono::milliseconds(2000));
}

}  // namespace

TEST_CASE("native.engine.recognise_in_layout_is_recognise_by_rows") {
  sia::register_milp_solver("test-capture", [] { return std::make_unique<CapturingSolver>(&captured_models()); });
  auto& models = captured_models();
  models.clear();
  // Round models of every generated family, p > 0 and p < 0, cold and warm.
  for (const std::string& family : sia::bench::instance_families())
    for (int gpus : {64, 512})
      for (double p : {-1.0, 0.5}) round_and_warm_successor(family, gpus, 3, p, "test-capture");
  REQUIRE(models.size() >= 40);
  std::mt19937 rng(12);
  int in_layout = 0, variants = 0, variants_in_layout = 0, variants_refused = 0;
  int indexed = 0, listed_indexed = 0, checked_feasible = 0, checked_infeasible = 0;
  int dominance_groups = 0, shuffled_groups = 0;
  for (std::size_t k = 0; k < models.size(); ++k) {
    CAPTURE(k);
    const sia::MilpModel& m = models[k];
    const auto fast = sia::detail::native::recognise(m);
    in_layout += fast.in_layout ? 1 : 0;
    check_same_shape(fast, sia::detail::native::recognise_by_rows(m));
    check_checked_reading(m, fast);
    indexed += fast.entries.empty() ? 0 : 1;
    listed_indexed += fast.entries.bounds_listed ? 1 : 0;
    check_solution_check(m, fast, rng, checked_feasible, checked_infeasible);
    dominance_groups += check_dominance(m, fast);
    if (m.num_cols() == 0 || m.entries.empty()) continue;
    {  // The costs of a third of the choice rows' columns shuffled: candidates out of order.
      sia::MilpModel x = m;
      std::vector<std::vector<int>> cols(static_cast<std::size_t>(x.num_rows()));
      for (const auto& e : x.entries)
        if (e.value == 1.0) cols[static_cast<std::size_t>(e.row)].push_back(e.col);
      for (auto& c : cols) {
        if (c.size() < 2 || rng() % 3 != 0) continue;
        std::vector<double> costs;
        for (int j : c) costs.push_back(x.obj[static_cast<std::size_t>(j)]);
        std::shuffle(costs.begin(), costs.end(), rng);
        for (std::size_t q = 0; q < c.size(); ++q) x.obj[static_cast<std::size_t>(c[q])] = costs[q];
      }
      const auto shuffled = sia::detail::native::recognise(x);
      check_same_shape(shuffled, sia::detail::native::recognise_by_rows(x));
      shuffled_groups += check_dominance(x, shuffled);
    }
    // Variants: each must give what the general reading gives (in the layout or not).
    std::uniform_int_distribution<std::size_t> col(0, static_cast<std::size_t>(m.num_cols()) - 1);
    std::uniform_int_distribution<std::size_t> ent(0, m.entries.size() - 1);
    for (int v = 0; v < 12; ++v) {
      CAPTURE(v);
      sia::MilpModel x = m;
      switch (v) {
        case 0:  // entries in another order
          std::shuffle(x.entries.begin(), x.entries.end(), rng);
          break;
        case 1:  // a zero entry
          x.entries[ent(rng)].value = 0.0;
          break;
        case 2:  // a duplicate entry
          x.entries.push_back(x.entries[ent(rng)]);
          break;
        case 3: {  // a capacity row of ones with upper bound 1 over one column: a choice row there
          const int r = x.add_row(-sia::MilpModel::inf, 1.0);
          x.add_entry(r, static_cast<int>(col(rng)), 1.0);
          break;
        }
        case 4: {  // an empty row that excludes 0, and one that does not
          (void)x.add_row(-sia::MilpModel::inf, 3.0);
          if (rng() % 2) (void)x.add_row(1.0, 3.0);
          break;
        }
        case 5: {  // a redundant row (no upper bound) and a negative coefficient
          const int r = x.add_row(-sia::MilpModel::inf, sia::MilpModel::inf);
          x.add_entry(r, static_cast<int>(col(rng)), 2.0);
          if (rng() % 2) x.add_entry(r, static_cast<int>(col(rng)), -1.0);
          break;
        }
        case 6:  // pins and columns fixed to 0
          for (int q = 0; q < 3; ++q) x.col_lower[col(rng)] = 1.0;
          for (int q = 0; q < 3; ++q) x.col_upper[col(rng)] = 0.0;
          break;
        case 7: {  // a tenant-like row after the capacity rows, row by row
          const int r = x.add_row(-sia::MilpModel::inf, 5.0);
          for (int c = 0; c < x.num_cols(); c += 3) x.add_entry(r, c, 2.0);
          break;
        }
        case 8: {  // a forced choice row
          if (x.row_lower.empty()) break;
          x.row_lower[0] = 1.0;
          break;
        }
        case 9: {  // a choice row over columns that another one holds (refused)
          const auto& e = x.entries.front();
          const int r = x.add_row(1.0, 1.0);
          x.add_entry(r, e.col, 1.0);
          break;
        }
        case 10:  // coefficients of a capacity row that are not integers, and capacity cut down
          for (auto& e : x.entries)
            if (e.value != 1.0) e.value *= 1.5;
          for (double& u : x.row_upper)
            if (u > 1.0 && u != sia::MilpModel::inf) u = std::floor(u / 3.0);
          break;
        case 11: {  // a first-part row that is a capacity row (numbered before the choice rows' end)
          if (x.row_lower.empty()) break;
          x.row_upper[0] = 7.0;
          break;
        }
        default:
          break;
      }
      ++variants;
      const auto shape = sia::detail::native::recognise(x);
      (shape.in_layout ? variants_in_layout : variants_refused) += 1;
      check_same_shape(shape, sia::detail::native::recognise_by_rows(x));
      check_checked_reading(x, shape);
      check_solution_check(x, shape, rng, checked_feasible, checked_infeasible);
    }
  }
  // The rounds' own models are read in place (those with tenant rows would not be: none here),
  // with the entry index that checks an answer.
  CHECK(in_layout == static_cast<int>(models.size()));
  CHECK(indexed == static_cast<int>(models.size()));
  CHECK(listed_indexed == indexed);  // (the check then reads only the values not +0 and the listed columns' bounds)
  // The groups' items are the single-row dominance's, candidates in order and not.
  CHECK(dominance_groups > 1000);
  CHECK(shuffled_groups > 1000);
  MESSAGE(
      dominance_groups
      << " groups' items checked, " << shuffled_groups
      << " with shuffled costs");  // (every column between 0 and 1: the check reads only the values that are not +0)
  // The answer check agreed with MilpModel::is_feasible on both outcomes.
  CHECK(checked_feasible > 100);
  CHECK(checked_infeasible > 100);
  MESSAGE(checked_feasible << " feasible and " << checked_infeasible << " infeasible 0/1 vectors checked");
  CHECK(variants > 400);
  // Both readings are exercised by the variants.
  CHECK(variants_in_layout > variants / 6);
  CHECK(variants_refused > variants / 6);
  MESSAGE(variants_in_layout << " variants read in place, " << variants_refused << " refused");
}

TEST_CASE("native.engine.recognise_checked_is_validate") {
  // recognise_checked() checks a model's numbers as it reads them instead of MilpModel::validate()'s
  // pass before the backend (MilpSolver::solve() calls it for the native backend): on round models
  // spoiled by every kind of offence validate() names — in the choice part, the capacity part, a
  // pinned or free column, alone or two at once — it must throw validate()'s exception with
  // validate()'s message, and so must the native backend's solve(); on the valid ones, give
  // recognise()'s Shape (also checked on every model of recognise_in_layout_is_recognise_by_rows).
  // Static: the registered factory outlives this test (the registry is the process's), and a later
  // test that makes every registered backend must not write into a vector that is gone.
  static std::vector<sia::MilpModel> models;
  models.clear();
  sia::register_milp_solver("test-capture-checked", [] { return std::make_unique<CapturingSolver>(&models); });
  for (const std::string family : {"tables", "pinned", "helios"})
    round_and_warm_successor(family, 64, 5, sia::RoundOptions{}.p, "test-capture-checked");
  REQUIRE(models.size() >= 6);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = sia::MilpModel::inf;
  using Spoil = std::function<void(sia::MilpModel&, std::size_t)>;  // (the model, a random number)
  auto col = [](const sia::MilpModel& m, std::size_t r) { return r % m.obj.size(); };
  auto row = [](const sia::MilpModel& m, std::size_t r) { return r % m.row_lower.size(); };
  auto entry = [](const sia::MilpModel& m, std::size_t r) { return r % m.entries.size(); };
  // (A choice-part entry: the first entries; a capacity-part one: the last.)
  auto first_part = [](const sia::MilpModel& m, std::size_t r) {
    return r % std::max<std::size_t>(1, m.entries.size() / 3);
  };
  auto last_part = [](const sia::MilpModel& m, std::size_t r) {
    return m.entries.size() - 1 - r % (m.entries.size() / 3);
  };
  const std::vector<Spoil> spoils = {
      [&](sia::MilpModel& m, std::size_t r) { m.obj[col(m, r)] = nan; },
      [&](sia::MilpModel& m, std::size_t r) { m.obj[col(m, r)] = -inf; },
      [&](sia::MilpModel& m, std::size_t r) { m.obj[col(m, r)] = inf; },
      [&](sia::MilpModel& m, std::size_t r) { m.col_lower[col(m, r)] = nan; },
      [&](sia::MilpModel& m, std::size_t r) { m.col_upper[col(m, r)] = nan; },
      [&](sia::MilpModel& m, std::size_t r) { m.col_lower[col(m, r)] = 2.0; },
      [&](sia::MilpModel& m, std::size_t r) { m.col_lower[col(m, r)] = m.col_upper[col(m, r)] = inf; },
      [&](sia::MilpModel& m, std::size_t r) { m.col_lower[col(m, r)] = m.col_upper[col(m, r)] = -inf; },
      [&](sia::MilpModel& m, std::size_t r) {  // a pinned column with a bad cost
        m.col_lower[col(m, r)] = 1.0;
        m.obj[col(m, r)] = nan;
      },
      [&](sia::MilpModel& m, std::size_t r) { m.row_upper[row(m, r)] = nan; },
      [&](sia::MilpModel& m, std::size_t r) { m.row_lower[row(m, r)] = nan; },
      [&](sia::MilpModel& m, std::size_t r) { m.row_lower[row(m, r)] = m.row_upper[row(m, r)] + 1.0; },
      [&](sia::MilpModel& m, std::size_t r) { m.row_lower[row(m, r)] = m.row_upper[row(m, r)] = inf; },
      [&](sia::MilpModel& m, std::size_t r) { m.row_upper[row(m, r)] = m.row_lower[row(m, r)] = -inf; },
      [&](sia::MilpModel& m, std::size_t r) { m.entries[entry(m, r)].value = nan; },
      [&](sia::MilpModel& m, std::size_t r) { m.entries[first_part(m, r)].value = inf; },
      [&](sia::MilpModel& m, std::size_t r) { m.entries[last_part(m, r)].value = -inf; },
      [&](sia::MilpModel& m, std::size_t r) { m.entries[last_part(m, r)].value = nan; },
      [&](sia::MilpModel& m, std::size_t r) { m.entries[first_part(m, r)].row = -1; },
      [&](sia::MilpModel& m, std::size_t r) { m.entries[last_part(m, r)].row = m.num_rows(); },
      [&](sia::MilpModel& m, std::size_t r) { m.entries[first_part(m, r)].col = m.num_cols(); },
      [&](sia::MilpModel& m, std::size_t r) { m.entries[last_part(m, r)].col = -7; },
      [&](sia::MilpModel& m, std::size_t) { m.obj_offset = nan; },
      [&](sia::MilpModel& m, std::size_t) { m.col_upper.pop_back(); },
      [&](sia::MilpModel& m, std::size_t) { m.is_integer.push_back(1); },
      [&](sia::MilpModel& m, std::size_t) { m.row_upper.pop_back(); },
      [&](sia::MilpModel& m, std::size_t) { m.col_names.assign(3, "x"); },
      [&](sia::MilpModel& m, std::size_t) { m.row_names.assign(m.row_lower.size() + 1, "r"); },
  };
  std::mt19937 rng(44);
  auto solver = sia::make_milp_solver("native");
  int spoiled = 0;
  for (std::size_t k = 0; k < models.size(); ++k) {
    CAPTURE(k);
    const sia::MilpModel& m = models[k];
    check_same_shape(sia::detail::native::recognise(m), sia::detail::native::recognise_checked(m));
    for (std::size_t a = 0; a < spoils.size(); ++a)
      for (int twice = 0; twice < 3; ++twice) {
        CAPTURE(a);
        CAPTURE(twice);
        sia::MilpModel x = m;
        spoils[a](x, rng());
        if (twice > 0) spoils[rng() % spoils.size()](x, rng());
        std::string expected;
        try {
          x.validate();
        } catch (const sia::InvalidArgument& e) {
          expected = e.what();
        }
        if (expected.empty()) {  // (a spoil that left the model valid: the same Shape)
          check_checked_reading(x, sia::detail::native::recognise(x));
          continue;
        }
        ++spoiled;
        check_checked_reading(x, sia::detail::native::Shape{});
        std::string solved;
        try {
          (void)solver->solve(x);
        } catch (const sia::InvalidArgument& e) {
          solved = e.what();
        }
        CHECK(solved == expected);
      }
  }
  CHECK(spoiled > static_cast<int>(models.size() * spoils.size()) * 2);
  // And the solver still solves the valid models after the spoiled ones (nothing kept from them).
  for (const auto& m : models) CHECK(solver->solve(m).status == sia::make_milp_solver("native")->solve(m).status);
}

TEST_CASE("native.engine.classes_are_the_first_equal_group") {
  // find_classes against the definition: each group joins the first earlier group with the same
  // items (values and usages bit for bit, +0 = -0, the same "none" item). Groups drawn from a few
  // templates, some changed by one ulp or a sign of zero, on 1 and 4 threads.
  std::mt19937 rng(31);
  for (int trial = 0; trial < 60; ++trial) {
    CAPTURE(trial);
    Problem p;
    p.num_rows = 3;
    p.cap = {10, 10, 10};
    const int templates = 1 + static_cast<int>(rng() % 6);
    std::vector<std::vector<std::pair<double, std::vector<std::pair<int, double>>>>> pool;
    std::vector<char> pool_none;
    for (int t = 0; t < templates; ++t) {
      std::vector<std::pair<double, std::vector<std::pair<int, double>>>> items;
      const int n = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < n; ++i) {
        std::vector<std::pair<int, double>> use;
        for (int r = 0; r < 3; ++r)
          if (rng() % 2) use.emplace_back(r, static_cast<double>(1 + rng() % 3));
        items.emplace_back(static_cast<double>(rng() % 5) * 0.5, use);
      }
      pool.push_back(items);
      pool_none.push_back(static_cast<char>(rng() % 2));
    }
    const int G = 50 + static_cast<int>(rng() % 200);
    for (int g = 0; g < G; ++g) {
      const std::size_t t = rng() % pool.size();
      auto items = pool[t];
      bool none = pool_none[t] != 0;
      switch (rng() % 8) {
        case 0:
          items.front().first = std::nextafter(items.front().first, 10.0);
          break;
        case 1:
          if (items.front().first == 0.0) items.front().first = -items.front().first;
          break;
        case 2:
          none = !none;
          break;
        case 3:
          if (!items.back().second.empty()) items.back().second.back().second += 1.0;
          break;
        default:
          break;
      }
      for (const auto& [v, use] : items) p.add_item(v, 0, use);
      if (none) p.add_none();
      p.close_group(-1);
    }
    std::vector<int> leader(static_cast<std::size_t>(G));
    auto same = [&](int a, int b) { return same_groups(p, a, b); };
    for (int g = 0; g < G; ++g) {
      leader[static_cast<std::size_t>(g)] = g;
      for (int h = 0; h < g; ++h)
        if (same(h, g)) {
          leader[static_cast<std::size_t>(g)] = h;
          break;
        }
    }
    for (int threads : {1, 4}) {
      Parallel par(threads);
      const Classes c = find_classes(p, par);
      for (int g = 0; g < G; ++g)
        CHECK(c.rep[static_cast<std::size_t>(c.class_of[static_cast<std::size_t>(g)])] ==
              leader[static_cast<std::size_t>(g)]);
      int classes = 0;
      for (int g = 0; g < G; ++g) classes += leader[static_cast<std::size_t>(g)] == g ? 1 : 0;
      CHECK(c.size() == classes);
    }
  }
}

TEST_CASE("native.engine.classes_of_distinct_groups") {
  // find_classes() first keys each group by its number of items and first two values and classes
  // in full only the groups whose key another shares: against the definition (each group joins the
  // first earlier group with the same items) on rounds of mostly distinct groups, some sharing
  // their first two values (or their first, or a sign of zero) and differing later, in a usage, in
  // the "none" item or not at all, groups of one and two items; every field of the classes, and of
  // singleton_classes() when no two groups are equal; 1 and 4 threads.
  using Items = std::vector<std::pair<double, std::vector<std::pair<int, double>>>>;
  std::mt19937 rng(91);
  for (int trial = 0; trial < 40; ++trial) {
    const int G = 1 + static_cast<int>(rng() % 3000);
    const int twins = trial % 4;  // 0: no equal groups at all
    CAPTURE(trial);
    CAPTURE(G);
    std::vector<Items> groups;
    std::vector<char> nones;
    Problem p;
    p.num_rows = 4;
    p.cap.assign(4, 10.0);
    for (int g = 0; g < G; ++g) {
      Items items;
      bool none = rng() % 4 != 0;
      if (!groups.empty() && rng() % 5 == 0) {
        const std::size_t from = rng() % groups.size();
        items = groups[from];
        none = nones[from] != 0;
        switch (rng() % 6) {
          case 0:  // differs after its first two values
            if (items.size() > 2)
              items.back().first = std::nextafter(items.back().first, 1e9);
            else
              none = !none;
            break;
          case 1:  // another usage
            items.back().second = {{static_cast<int>(rng() % 4), 7.0}};
            break;
          case 2:
            none = !none;
            break;
          case 3:  // the same up to the sign of zero
            if (items.front().first == 0.0) items.front().first = -items.front().first;
            break;
          default:  // equal
            break;
        }
      } else {
        const int n = 1 + static_cast<int>(rng() % 12);
        for (int i = 0; i < n; ++i) {
          std::vector<std::pair<int, double>> use;
          if (rng() % 8 != 0) use.emplace_back(static_cast<int>(rng() % 4), static_cast<double>(1 + rng() % 4));
          // (a common first value, as jobs at a floor utility share, and zeros of both signs)
          const double v = i == 0 && rng() % 3 == 0 ? 0.1
                           : rng() % 9 == 0         ? (rng() % 2 ? 0.0 : -0.0)
                                                    : std::ldexp(double(rng() % 100000), -10);
          items.emplace_back(v, use);
        }
      }
      if (twins == 0) items.back().first += 1.0 + 4096.0 * g;  // (then no two groups are equal)
      for (const auto& [v, use] : items) p.add_item(v, 0, use);
      if (none) p.add_none();
      p.close_group(-1);
      groups.push_back(items);
      nones.push_back(static_cast<char>(none));
    }
    auto same = [&](int a, int b) { return same_groups(p, a, b); };
    // The definition: each group's leader is the first group with its exact items (values up to
    // the sign of zero, the "none" item, usages), found through a map of the items' bits.
    std::map<std::vector<std::uint64_t>, int> first_of;
    std::vector<int> leader(static_cast<std::size_t>(G));
    for (int g = 0; g < G; ++g) {
      std::vector<std::uint64_t> k;
      for (int i = p.begin(g); i < p.end(g); ++i) {
        const auto iu = static_cast<std::size_t>(i);
        k.push_back(p.value[iu] == 0.0 ? 0 : std::bit_cast<std::uint64_t>(p.value[iu]));
        k.push_back(p.column[iu] < 0 ? 1 : 2);
        for (int q = p.use_begin[iu]; q < p.use_begin[iu + 1]; ++q) {
          k.push_back(static_cast<std::uint64_t>(p.use_row[static_cast<std::size_t>(q)]) + 3);
          k.push_back(std::bit_cast<std::uint64_t>(p.use_val[static_cast<std::size_t>(q)]));
        }
        k.push_back(~0ULL);
      }
      leader[static_cast<std::size_t>(g)] = first_of.emplace(k, g).first->second;
    }
    for (int threads : {1, 4}) {
      Parallel par(threads);
      const Classes c = find_classes(p, par);
      REQUIRE(c.class_of.size() == static_cast<std::size_t>(G));
      int classes = 0;
      for (int g = 0; g < G; ++g) {
        const int rep = c.rep[static_cast<std::size_t>(c.class_of[static_cast<std::size_t>(g)])];
        CHECK(rep == leader[static_cast<std::size_t>(g)]);
        CHECK(same(rep, g));
        classes += rep == g ? 1 : 0;
      }
      CHECK(c.size() == classes);
      // Members ascending within a class, the classes by their first member.
      for (int k = 0; k < c.size(); ++k) {
        CHECK(c.members[static_cast<std::size_t>(c.member_begin[static_cast<std::size_t>(k)])] ==
              c.rep[static_cast<std::size_t>(k)]);
        CHECK(c.member_begin[static_cast<std::size_t>(k) + 1] - c.member_begin[static_cast<std::size_t>(k)] ==
              c.mult[static_cast<std::size_t>(k)]);
        if (k > 0) CHECK(c.rep[static_cast<std::size_t>(k) - 1] < c.rep[static_cast<std::size_t>(k)]);
        for (int m = c.member_begin[static_cast<std::size_t>(k)] + 1;
             m < c.member_begin[static_cast<std::size_t>(k) + 1]; ++m)
          CHECK(c.members[static_cast<std::size_t>(m) - 1] < c.members[static_cast<std::size_t>(m)]);
      }
      if (classes == G) {
        const Classes s = singleton_classes(p);
        CHECK(c.rep == s.rep);
        CHECK(c.mult == s.mult);
        CHECK(c.member_begin == s.member_begin);
        CHECK(c.members == s.members);
        CHECK(c.class_of == s.class_of);
      }
    }
    if (twins == 0) CHECK(first_of.size() == static_cast<std::size_t>(G));
  }
}

TEST_CASE("native.engine.price_box_from_classes") {
  // price_box() from what find_classes() gathers in its pass over the items against its own pass
  // over the classes' representatives: bit for bit, on 1 and 4 threads (blocks of 1,024 groups
  // combined), with equal groups (up to the sign of zero), negative values, groups without a
  // "none" item, fractional amounts, ratios equal to a row's largest (find_classes() leaves out the
  // divisions that cannot raise it), and values and amounts scaled to the ends of the doubles'
  // range (ratios that overflow, products that underflow).
  std::mt19937 rng(77);
  const int value_exp[] = {0, 0, 1010, -1050, -1000, 600, 0};
  const int amount_exp[] = {0, 0, 0, 0, -500, -600, 1000};
  for (int trial = 0; trial < 70; ++trial) {
    CAPTURE(trial);
    const int ve = value_exp[trial % 7], ae = amount_exp[trial % 7];
    Problem p;
    p.num_rows = 1 + static_cast<int>(rng() % 6);
    p.cap.assign(static_cast<std::size_t>(p.num_rows), 100.0);
    const int G = 1 + static_cast<int>(rng() % 5000);
    std::vector<std::pair<double, std::vector<std::pair<int, double>>>> last;
    for (int g = 0; g < G; ++g) {
      std::vector<std::pair<double, std::vector<std::pair<int, double>>>> items;
      if (!last.empty() && rng() % 3 == 0) {
        items = last;  // an equal group
        if (rng() % 2 && items.front().first == 0.0) items.front().first = -items.front().first;
      } else {
        const int n = 1 + static_cast<int>(rng() % 5);
        for (int i = 0; i < n; ++i) {
          std::vector<std::pair<int, double>> use;
          for (int r = 0; r < p.num_rows; ++r)
            if (rng() % 3 == 0)
              use.emplace_back(r, std::ldexp(rng() % 4 == 0 ? 0.25 * (1 + rng() % 9) : 1.0 + rng() % 8, ae));
          const double v = rng() % 7 == 0 ? 0.0 : (static_cast<double>(rng() % 1000) - 300.0) / 97.0;
          items.emplace_back(std::ldexp(v, ve), use);
        }
      }
      for (const auto& [v, use] : items) p.add_item(v, 0, use);
      if (rng() % 2) p.add_none();
      p.close_group(-1);
      last = items;
    }
    for (int threads : {1, 4}) {
      Parallel par(threads);
      const Classes c = find_classes(p, par);
      Classes plain = c;
      plain.box_ratio.clear();
      plain.box_amin.clear();
      plain.spread.clear();
      const Relaxation gathered(p, c, par), own(p, plain, par);
      CHECK(bits_equal(gathered.price_box(), own.price_box()));
      // The classes without the box (a warm round's), the box gathered after: the same classes and
      // the same numbers.
      Classes later = find_classes(p, par, false);
      CHECK(later.box_ratio.empty());
      CHECK(later.box_amin.empty());
      CHECK(later.spread.empty());
      CHECK(later.rep == c.rep);
      CHECK(later.mult == c.mult);
      CHECK(later.members == c.members);
      CHECK(later.member_begin == c.member_begin);
      CHECK(later.class_of == c.class_of);
      gather_price_box(p, later, par);
      CHECK(bits_equal(later.box_ratio, c.box_ratio));
      CHECK(bits_equal(later.box_amin, c.box_amin));
      CHECK(bits_equal(later.spread, c.spread));
    }
  }
}

// The warm start's shortcut (search.cpp): the reduced values and best items of reduced_values()
// give evaluate()'s L, subgradient and best items bit for bit (evaluate_from), and minimise() from
// that first evaluation is minimise() itself. Problems of up to 700 groups (several blocks of 256
// classes), one and two threads, prices at the LP's optimum, random, and some that leave no item
// above -inf.
TEST_CASE("native.engine.warm_picks_are_the_repair_and_improvement") {
  // The warm solution with warm_values()'s picks (every group its own class): the same reduced values
  // and best items as reduced_values(), and the same repaired and improved counts and value, bit for
  // bit, as the repair and improvement collecting every move themselves; from random previous items
  // (some groups unknown) at random prices, on 1 and 2 threads.
  std::mt19937 rng(57);
  int repaired = 0, exact_usage = 0;
  for (int iter = 0; iter < 120; ++iter) {
    Spec s = spec_for(iter);
    s.groups = iter % 3 == 0 ? 700 : 3 + iter % 40;
    const Problem p = random_problem(rng, s);
    CAPTURE(iter);
    for (int threads : {1, 2}) {
      Parallel par(threads);
      // (Every group its own class, as singleton_classes() or as find_classes() finds them, which
      // also gives the least amounts repair()'s bounds read.)
      const Classes cls = threads == 2 ? find_classes(p, par) : singleton_classes(p);
      if (cls.size() != p.num_groups()) continue;
      Relaxation rel(p, cls, par);
      for (const auto& lam : trial_prices(rel, rng)) {
        std::vector<int> warm(static_cast<std::size_t>(p.num_groups()));
        for (int g = 0; g < p.num_groups(); ++g)
          warm[static_cast<std::size_t>(g)] =
              rng() % 5 == 0 ? -1 : p.begin(g) + static_cast<int>(rng() % static_cast<unsigned>(p.end(g) - p.begin(g)));
        std::vector<double> red_a, red_b;
        std::vector<int> best_a, best_b;
        reduced_values(rel, lam, red_a, &best_a);
        WarmPicks picks;
        warm_values(rel, lam, red_b, best_b, warm, picks);
        CHECK(bits_equal(red_a, red_b));
        CHECK(best_a == best_b);
        {  // With the price box gathered in the same pass (a warm round's): the same, and find_classes()' box.
          std::vector<double> red_c;
          std::vector<int> best_c;
          WarmPicks picks_c;
          PriceBoxParts box;
          warm_values(rel, lam, red_c, best_c, warm, picks_c, &box);
          CHECK(bits_equal(red_a, red_c));
          CHECK(best_a == best_c);
          CHECK(picks_c.item == picks.item);
          CHECK(picks_c.to == picks.to);
          CHECK(picks_c.row == picks.row);
          CHECK(bits_equal(picks_c.key, picks.key));
          CHECK(bits_equal(picks_c.other, picks.other));
          CHECK(bits_equal(picks_c.bound, picks.bound));
          CHECK(bits_equal(picks_c.need, picks.need));
          CHECK(bits_equal(picks_c.value, picks.value));
          Classes with_box = cls;
          box.set_price_box(with_box);
          const Classes whole = find_classes(p, par);
          CHECK(bits_equal(with_box.box_ratio, whole.box_ratio));
          CHECK(bits_equal(with_box.box_amin, whole.box_amin));
          CHECK(bits_equal(with_box.spread, whole.spread));
        }
        // search.cpp's warm start: the previous item while within 1e-9 of the best, else the best.
        Counts n(p.value.size(), 0);
        for (int c = 0; c < cls.size(); ++c) {
          const int f = cls.first_item(p, c), b = best_a[static_cast<std::size_t>(c)];
          const int bi = b >= 0 ? b : f;
          const double bv = b >= 0 ? red_a[static_cast<std::size_t>(b)] : -kInf;
          const int g = cls.members[static_cast<std::size_t>(cls.member_begin[static_cast<std::size_t>(c)])];
          const int w = warm[static_cast<std::size_t>(g)];
          int it = w >= p.begin(g) && w < p.end(g) ? f + (w - p.begin(g)) : -1;
          if (it < 0 || red_a[static_cast<std::size_t>(it)] < bv - 1e-9 * (1.0 + std::abs(bv))) it = bi;
          CHECK(picks.item[static_cast<std::size_t>(c)] == it);
          ++n[static_cast<std::size_t>(it)];
        }
        Counts na = n, nb = n;
        double va = 0.0, vb = 0.0;
        const bool ra = repair(rel, lam, nullptr, na, va, &red_a);
        std::vector<int> items;
        const bool rb = repair(rel, lam, nullptr, nb, vb, &red_b, nullptr, &picks, true, &items);
        CHECK(ra == rb);
        {  // The improvement's room test (a move whose destinations all need more room than any row
           // has is not looked at) skips only moves that would find no destination, and the picks'
           // values are the items': without the picks' needs (then never skipped) and values, the
           // same answer bit for bit.
          WarmPicks no_need = picks;
          no_need.need.clear();
          no_need.value.clear();
          Counts nd = n;
          double vd = 0.0;
          std::vector<int> items_d;
          const bool rd = repair(rel, lam, nullptr, nd, vd, &red_b, nullptr, &no_need, true, &items_d);
          CHECK(rd == rb);
          if (rd && rb) {
            CHECK(nd == nb);
            CHECK(std::bit_cast<std::uint64_t>(vd) == std::bit_cast<std::uint64_t>(vb));
            CHECK(items_d == items);
          }
        }
        {  // With the usage summed from the picks (search.cpp's), whole amounts or not: the same
           // answer, and when the final usage comes back it is the sum over the final counts.
          Counts nc = n;
          double vc = 0.0;
          std::vector<int> items_c;
          std::vector<double> usage(static_cast<std::size_t>(p.num_rows), 0.0), after;
          bool whole = true;
          for (int c = 0; c < cls.size(); ++c) {
            const int it = picks.item[static_cast<std::size_t>(c)];
            for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1];
                 ++q) {
              usage[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] +=
                  1 * p.use_val[static_cast<std::size_t>(q)];
              whole = whole && whole_amount(p.use_val[static_cast<std::size_t>(q)]);
            }
          }
          const bool rc = repair(rel, lam, nullptr, nc, vc, &red_b, &usage, &picks, true, &items_c, whole, &after);
          CHECK(rc == rb);
          if (rc && rb) {
            CHECK(nc == nb);
            CHECK(std::bit_cast<std::uint64_t>(vc) == std::bit_cast<std::uint64_t>(vb));
            CHECK(items_c == items);
            if (!after.empty()) {
              CHECK(whole);
              ++exact_usage;
              std::vector<double> sum(static_cast<std::size_t>(p.num_rows), 0.0);
              for (std::size_t it = 0; it < nc.size(); ++it)
                for (int q = p.use_begin[it]; q < p.use_begin[it + 1]; ++q)
                  if (nc[it] != 0)
                    sum[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] +=
                        nc[it] * p.use_val[static_cast<std::size_t>(q)];
              CHECK(bits_equal(after, sum));
              CHECK(counts_feasible(p, cls, nullptr, nc, &items_c, &after) ==
                    counts_feasible(p, cls, nullptr, nc, &items_c));
            }
          }
        }
        if (!ra || !rb) continue;
        ++repaired;
        CHECK(na == nb);
        CHECK(std::bit_cast<std::uint64_t>(va) == std::bit_cast<std::uint64_t>(vb));
        // The improvement's items: each class's (one) item of count other than 0.
        REQUIRE(items.size() == static_cast<std::size_t>(cls.size()));
        for (int c = 0; c < cls.size(); ++c) {
          int it = -1;
          for (int i = cls.first_item(p, c); i < cls.first_item(p, c) + cls.items(p, c); ++i)
            if (nb[static_cast<std::size_t>(i)] != 0) it = i;
          CHECK(items[static_cast<std::size_t>(c)] == it);
        }
      }
    }
  }
  CHECK(repaired > 100);
  CHECK(exact_usage > 20);
  MESSAGE(repaired << " warm solutions repaired and improved, " << exact_usage << " with their usage kept exact");
}

TEST_CASE("native.engine.evaluate_from_is_evaluate") {
  std::mt19937 rng(23);
  for (int iter = 0; iter < 120; ++iter) {
    Spec s = spec_for(iter);
    s.groups = iter % 3 == 0 ? 700 : 3 + iter % 40;
    const Problem p = random_problem(rng, s);
    CAPTURE(iter);
    for (int threads : {1, 2}) {
      Parallel par(threads);
      const Classes cls = iter % 2 ? find_classes(p, par) : singleton_classes(p);
      Relaxation rel(p, cls, par);
      const auto box = rel.price_box();
      auto prices = trial_prices(rel, rng);
      if (iter % 10 == 7) prices.push_back(std::vector<double>(static_cast<std::size_t>(p.num_rows), kInf));
      for (const auto& lam : prices) {
        std::vector<int> best_eval;
        const PriceEval e = rel.evaluate(lam, nullptr, &best_eval);
        std::vector<double> red;
        std::vector<int> best;
        reduced_values(rel, lam, red, &best);
        for (int c = 0; c < cls.size(); ++c)
          for (int it = cls.first_item(p, c); it < cls.first_item(p, c) + cls.items(p, c); ++it)
            CHECK(std::bit_cast<std::uint64_t>(red[static_cast<std::size_t>(it)]) ==
                  std::bit_cast<std::uint64_t>(rel.reduced(it, lam.data())));
        const PriceEval f = rel.evaluate_from(lam, red, best);
        CHECK(std::bit_cast<std::uint64_t>(e.L) == std::bit_cast<std::uint64_t>(f.L));
        CHECK(bits_equal(e.grad, f.grad));
        if (e.L != -kInf) CHECK(best == best_eval);
        std::vector<double> lam0 = lam;
        for (std::size_t k = 0; k < lam0.size(); ++k) lam0[k] = std::clamp(lam0[k], 0.0, box[k]);
        std::vector<double> red0;
        std::vector<int> best0;
        reduced_values(rel, lam0, red0, &best0);
        const PriceEval f0 = rel.evaluate_from(lam0, red0, best0);
        for (double target : {-kInf, f0.L - 1.0}) {
          const auto a = rel.minimise(lam0, box, nullptr, target, 200, std::nullopt, true);
          const auto b = rel.minimise(lam0, box, nullptr, target, 200, std::nullopt, true, nullptr, &f0);
          CHECK(bits_equal(a.lam, b.lam));
          CHECK(std::bit_cast<std::uint64_t>(a.L) == std::bit_cast<std::uint64_t>(b.L));
          CHECK(std::bit_cast<std::uint64_t>(a.lower) == std::bit_cast<std::uint64_t>(b.lower));
          CHECK(a.iterations == b.iterations);
          CHECK(a.infeasible == b.infeasible);
          CHECK(bits_equal(a.cut_weight, b.cut_weight));
        }
      }
    }
  }
}

// counts_feasible against its definition (every class's counts within [0, mult] summing to mult,
// every row within its capacity and tolerance) on 0/1 assignments of one item per group, with
// a count added, taken, made 2, -1 or 0, or moved to any item, for one class per group (the path that reads only
// the counts other than 0) and for the symmetry classes.
TEST_CASE("native.engine.counts_feasible_is_the_definition") {
  std::mt19937 rng(37);
  int feasible = 0, infeasible = 0;
  for (int iter = 0; iter < 300; ++iter) {
    Spec s = spec_for(iter);
    s.groups = 1 + iter % 60;
    const Problem p = random_problem(rng, s);
    CAPTURE(iter);
    Parallel par(1);
    for (bool singletons : {true, false}) {
      const Classes cls = singletons ? singleton_classes(p) : find_classes(p, par);
      for (int t = 0; t < 8; ++t) {
        Counts n(p.value.size(), 0);
        for (int c = 0; c < cls.size(); ++c)
          for (int m = 0; m < cls.mult[static_cast<std::size_t>(c)]; ++m)
            ++n[static_cast<std::size_t>(cls.first_item(p, c) +
                                         static_cast<int>(rng() % static_cast<unsigned>(cls.items(p, c))))];
        const auto pick = [&] { return rng() % static_cast<unsigned>(p.num_items()); };
        switch (t) {
          case 1:
            if (n[pick()]-- > 0) break;
            [[fallthrough]];
          case 2:
            ++n[pick()];
            break;
          case 3:
            n[pick()] = 2;
            break;
          case 4:
            n[pick()] = -1;
            break;
          case 5:
            n[pick()] = 0;
            break;
          case 6:  // a member moved to any item: maybe two in one group and none in another
            for (auto& x : n)
              if (x > 0) {
                --x;
                break;
              }
            ++n[pick()];
            break;
          default:
            break;
        }
        bool want = true;
        for (int c = 0; c < cls.size(); ++c) {
          long long sum = 0;
          for (int it = cls.first_item(p, c); it < cls.first_item(p, c) + cls.items(p, c); ++it) {
            const int cnt = n[static_cast<std::size_t>(it)];
            want = want && cnt >= 0 && cnt <= cls.mult[static_cast<std::size_t>(c)];
            sum += cnt;
          }
          want = want && sum == cls.mult[static_cast<std::size_t>(c)];
        }
        // (Items of groups that are not a class's first member: counted nowhere by the definition.)
        std::vector<double> U(static_cast<std::size_t>(p.num_rows), 0.0);
        for (int c = 0; c < cls.size(); ++c)
          for (int it = cls.first_item(p, c); it < cls.first_item(p, c) + cls.items(p, c); ++it)
            for (int q = p.use_begin[static_cast<std::size_t>(it)]; q < p.use_begin[static_cast<std::size_t>(it) + 1];
                 ++q)
              if (n[static_cast<std::size_t>(it)] != 0)
                U[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(q)])] +=
                    n[static_cast<std::size_t>(it)] * p.use_val[static_cast<std::size_t>(q)];
        for (int k = 0; k < p.num_rows; ++k)
          want = want && !(U[static_cast<std::size_t>(k)] >
                           p.cap[static_cast<std::size_t>(k)] + cap_tolerance(p.cap[static_cast<std::size_t>(k)]));
        CHECK(counts_feasible(p, cls, nullptr, n) == want);
        // Through items (repair()'s): each group's last item of a count other than 0 (its first item
        // when none), then one item per group drawn at random, then a list one short: the same answer.
        std::vector<int> items(static_cast<std::size_t>(p.num_groups()));
        for (int g = 0; g < p.num_groups(); ++g) {
          items[static_cast<std::size_t>(g)] = p.begin(g);
          for (int it = p.begin(g); it < p.end(g); ++it)
            if (n[static_cast<std::size_t>(it)] != 0) items[static_cast<std::size_t>(g)] = it;
        }
        CHECK(counts_feasible(p, cls, nullptr, n, &items) == want);
        for (int g = 0; g < p.num_groups(); ++g)
          if (p.end(g) > p.begin(g))
            items[static_cast<std::size_t>(g)] =
                p.begin(g) + static_cast<int>(rng() % static_cast<unsigned>(p.end(g) - p.begin(g)));
        CHECK(counts_feasible(p, cls, nullptr, n, &items) == want);
        items.pop_back();
        CHECK(counts_feasible(p, cls, nullptr, n, &items) == want);
        (want ? feasible : infeasible) += 1;
      }
    }
  }
  CHECK(feasible > 300);
  CHECK(infeasible > 1000);
  MESSAGE(feasible << " feasible and " << infeasible << " infeasible assignments checked");
}

// A screened evaluation (Relaxation::screen, evaluate_in) visits only the candidates of its active
// classes: the items that can be their class's best somewhere in the box. It gives the same bits
// as the evaluation over all of the active classes' items (written out here as evaluate_in was,
// blocks of 256 active classes summed in order), and L within rounding of evaluate(), at prices
// inside boxes small and large, their corners included; evaluate_with() over every class's
// candidates is evaluate() bit for bit, best items included.
TEST_CASE("native.engine.screen_candidates_are_every_item") {
  std::mt19937 rng(61);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Parallel par(1);
  int active = 0, pruned = 0;
  for (int iter = 0; iter < 200; ++iter) {
    Spec s = spec_for(iter);
    s.rows = 1 + iter % 5;
    s.groups = 20 + 7 * (iter % 90);
    s.max_items = 2 + iter % 9;
    const Problem p = random_problem(rng, s);
    CAPTURE(iter);
    const Classes cls = iter % 2 == 0 ? find_classes(p, par) : singleton_classes(p);
    Relaxation rel(p, cls, par);
    const auto box = rel.price_box();
    const auto K = static_cast<std::size_t>(p.num_rows);
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<double> lo(K), hi(K);
      for (std::size_t k = 0; k < K; ++k) {
        const double centre = unit(rng) * box[k] * 0.5;
        const double w = std::pow(10.0, -4.0 + 4.0 * unit(rng)) * (1.0 + centre);
        lo[k] = std::max(0.0, centre - w);
        hi[k] = std::min(box[k], centre + w);
      }
      const auto sc = rel.screen(lo, hi);
      REQUIRE(sc.cand_begin.size() == static_cast<std::size_t>(cls.size()) + 1);
      active += static_cast<int>(sc.active.size());
      std::vector<char> is_active(static_cast<std::size_t>(cls.size()), 0);
      for (int c : sc.active) is_active[static_cast<std::size_t>(c)] = 1;
      for (int c = 0; c < cls.size(); ++c) {
        const auto cu = static_cast<std::size_t>(c);
        const int n = sc.cand_begin[cu + 1] - sc.cand_begin[cu];
        if (is_active[cu])
          pruned += cls.items(p, c) - n;
        else
          CHECK(n == 1);
      }
      for (int q = 0; q < 6; ++q) {
        std::vector<double> lam(K);
        for (std::size_t k = 0; k < K; ++k)
          lam[k] = q == 0 ? lo[k] : q == 1 ? hi[k] : lo[k] + unit(rng) * (hi[k] - lo[k]);
        const auto e = rel.evaluate_in(sc, lam);
        // The evaluation over every item of the active classes.
        double Lv = p.fixed_value + sc.fixed_value;
        std::vector<double> grad(p.cap);
        for (std::size_t k = 0; k < K; ++k) {
          Lv += (p.cap[k] - sc.fixed_use[k]) * lam[k];
          grad[k] -= sc.fixed_use[k];
        }
        for (std::size_t beg = 0; beg < sc.active.size(); beg += 256) {
          double sum = 0.0;
          std::vector<double> u(K, 0.0);
          for (std::size_t a = beg; a < std::min(sc.active.size(), beg + 256); ++a) {
            const int c = sc.active[a];
            int bi = -1;
            double bv = -kInf;
            for (int it = cls.first_item(p, c); it < cls.first_item(p, c) + cls.items(p, c); ++it) {
              const double r = rel.reduced(it, lam.data());
              if (r > bv) {
                bv = r;
                bi = it;
              }
            }
            const double m = cls.mult[static_cast<std::size_t>(c)];
            sum += m * bv;
            for (int u0 = p.use_begin[static_cast<std::size_t>(bi)]; u0 < p.use_begin[static_cast<std::size_t>(bi) + 1];
                 ++u0)
              u[static_cast<std::size_t>(p.use_row[static_cast<std::size_t>(u0)])] +=
                  m * p.use_val[static_cast<std::size_t>(u0)];
          }
          Lv += sum;
          for (std::size_t k = 0; k < K; ++k) grad[k] -= u[k];
        }
        CHECK(std::memcmp(&e.L, &Lv, sizeof(double)) == 0);
        REQUIRE(e.grad.size() == K);
        CHECK(std::memcmp(e.grad.data(), grad.data(), K * sizeof(double)) == 0);
        std::vector<int> full_best, with_best;
        const auto full = rel.evaluate(lam, nullptr, &full_best);
        CHECK(e.L == doctest::Approx(full.L).epsilon(1e-12));
        // Every class over its candidates: evaluate() itself, bit for bit.
        const auto with = rel.evaluate_with(sc, lam, &with_best);
        CHECK(std::memcmp(&with.L, &full.L, sizeof(double)) == 0);
        REQUIRE(with.grad.size() == K);
        CHECK(std::memcmp(with.grad.data(), full.grad.data(), K * sizeof(double)) == 0);
        CHECK(with_best == full_best);
      }
    }
  }
  MESSAGE(active << " active classes screened, " << pruned << " items left out");
  CHECK(pruned > 0);
}

// A screen with warm_values()' hint (ScreenHint: the classes whose gap at the hint's prices shows
// them settled in the box are not read) is the screen without it, bit for bit: boxes small and
// large around the hint's prices and beside them, on 1 and 2 threads (search.cpp's warm round
// screens its regions so).
TEST_CASE("native.engine.screen_hint_is_the_screen") {
  std::mt19937 rng(67);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int screens = 0, settled = 0;
  for (int iter = 0; iter < 120; ++iter) {
    Spec s = spec_for(iter);
    s.rows = 1 + iter % 5;
    s.groups = iter % 3 == 0 ? 700 : 20 + 7 * (iter % 40);
    const Problem p = random_problem(rng, s);
    CAPTURE(iter);
    for (int threads : {1, 2}) {
      Parallel par(threads);
      const Classes cls = threads == 2 ? find_classes(p, par) : singleton_classes(p);
      if (cls.size() != p.num_groups()) continue;
      Relaxation rel(p, cls, par);
      const auto box = rel.price_box();
      const auto K = static_cast<std::size_t>(p.num_rows);
      if (std::any_of(cls.box_amin.begin(), cls.box_amin.end(), [](double a) { return a < 0.0; })) continue;
      std::vector<double> at(K);
      for (std::size_t k = 0; k < K; ++k) at[k] = (0.05 + 0.5 * unit(rng)) * box[k];
      std::vector<int> warm(static_cast<std::size_t>(p.num_groups()));
      for (int g = 0; g < p.num_groups(); ++g)
        warm[static_cast<std::size_t>(g)] =
            p.begin(g) + static_cast<int>(rng() % static_cast<unsigned>(p.end(g) - p.begin(g)));
      std::vector<double> red;
      std::vector<int> best;
      WarmPicks picks;
      warm_values(rel, at, red, best, warm, picks);
      REQUIRE(picks.hint.size() == static_cast<std::size_t>(cls.size()));
      ScreenHint hint;
      hint.at = &at;
      hint.cls = &picks.hint;
      hint.best = &best;
      for (int trial = 0; trial < 6; ++trial) {
        // (Around the hint's prices, 0.1 % to 50 % wide; the last two beside them.)
        const double w = std::pow(10.0, -3.0 + 2.7 * unit(rng));
        std::vector<double> lo(K), hi(K);
        for (std::size_t k = 0; k < K; ++k) {
          const double centre = trial < 4 ? at[k] : at[k] * (1.0 + (unit(rng) - 0.5) * 4.0 * w);
          lo[k] = std::max(0.0, centre - w * at[k] * (0.5 + unit(rng)));
          hi[k] = std::min(box[k], centre + w * at[k] * (0.5 + unit(rng)));
          if (hi[k] < lo[k]) std::swap(lo[k], hi[k]);
        }
        const auto a = rel.screen(lo, hi);
        const auto b = rel.screen(lo, hi, &hint);
        ++screens;
        settled += cls.size() - static_cast<int>(a.active.size());
        CHECK(a.active == b.active);
        CHECK(std::memcmp(&a.fixed_value, &b.fixed_value, sizeof(double)) == 0);
        CHECK(bits_equal(a.fixed_use, b.fixed_use));
        CHECK(a.cand_begin == b.cand_begin);
        CHECK(a.cand == b.cand);
        CHECK(bits_equal(a.cand_value, b.cand_value));
        CHECK(a.cand_row == b.cand_row);
        CHECK(bits_equal(a.cand_amount, b.cand_amount));
      }
    }
  }
  MESSAGE(screens << " screens, " << settled << " settled classes");
  CHECK(screens > 500);
  CHECK(settled > 0);
}

namespace {
// A random problem of iter's shape (1-5 rows, groups + iter % span groups, 2-7 items) and its
// explicit LP's value; none when that LP has none.
std::optional<std::pair<Problem, double>> random_lp_case(std::mt19937& rng, int iter, int groups, int span) {
  Spec s = spec_for(iter);
  s.rows = 1 + iter % 5;
  s.groups = groups + iter % span;
  s.max_items = 2 + iter % 6;
  Problem p = random_problem(rng, s);
  const auto lp = explicit_lp(p);
  if (!lp) return std::nullopt;
  return std::make_pair(std::move(p), *lp);
}
}  // namespace

// The warm round's exact finish (Relaxation::minimise_locally): from prices near the optimum or far
// from it, with regions small and large, whenever it certifies a minimum its value is the explicit
// LP's (an independent dense simplex over the groups' items) and L at its prices is that value, so
// the prices are optimal duals; its best items are evaluate()'s. When it gives up, minimise() is the
// answer (tested above).
TEST_CASE("native.engine.local_lp_is_the_lp") {
  std::mt19937 rng(29);
  Parallel par(1);
  int certified = 0, tried = 0, narrowed = 0;
  for (int iter = 0; iter < 600; ++iter) {
    const auto lp_case = random_lp_case(rng, iter, 4, 37);
    if (!lp_case) continue;
    const Problem& p = lp_case->first;
    const double lp = lp_case->second;
    CAPTURE(iter);
    const Classes cls = iter % 2 == 0 ? find_classes(p, par) : singleton_classes(p);
    Relaxation rel(p, cls, par);
    const auto box = rel.price_box();
    const auto K = static_cast<std::size_t>(p.num_rows);
    const auto kr = rel.minimise(std::vector<double>(K, 0.0), box, nullptr, -kInf, 500, std::nullopt, false);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (int start = 0; start < 4; ++start) {
      std::vector<double> lam0(K), radius(K);
      for (std::size_t k = 0; k < K; ++k) {
        // Near the minimiser (relative perturbations of 1e-4 .. 1e-1), or anywhere in the box.
        const double scale = std::pow(10.0, -4.0 + 3.0 * unit(rng));
        lam0[k] = start == 3 ? unit(rng) * box[k] : std::max(0.0, kr.lam[k] * (1.0 + scale * (2.0 * unit(rng) - 1.0)));
        radius[k] = std::pow(10.0, -3.0 + 3.0 * unit(rng)) * (1.0 + lam0[k]);
      }
      ++tried;
      std::vector<int> best;
      const auto loc = rel.minimise_locally(lam0, box, radius, 1 + iter % 50, std::nullopt, &best);
      REQUIRE_FALSE(loc.infeasible);
      if (loc.lower == -kInf) continue;
      ++certified;
      if (loc.narrowed > 0) ++narrowed;
      CHECK(loc.L == doctest::Approx(lp).epsilon(1e-9));
      CHECK(loc.lower <= loc.L);
      CHECK(loc.L - loc.lower <= 1e-9 * (1.0 + std::abs(loc.L)));
      std::vector<int> eval_best;
      const auto e = rel.evaluate(loc.lam, nullptr, &eval_best);
      CHECK(e.L == loc.L);
      CHECK(eval_best == best);
      for (std::size_t k = 0; k < K; ++k) CHECK((loc.lam[k] >= 0.0 && loc.lam[k] <= box[k]));
    }
  }
  MESSAGE("certified " << certified << " of " << tried << ", " << narrowed << " after narrowing a moved region");
  CHECK(certified > tried / 2);
  // A region moved towards the minimum where too many classes are active is narrowed, not given up
  // (the certificates found after it are checked above like the others).
  CHECK(narrowed > 0);
}

// A warm solve asked for prices (SearchOptions::exact_prices) decides exactly as one that is not:
// its LP runs as without prices until the warm solution is proven, and only then looks for the
// minimum (minimise_locally, or Kelley's method when that gives up). The LP's value is the explicit
// LP's, and L at the reported prices is that value: optimal duals (L >= the LP's value at any prices).
TEST_CASE("native.engine.warm_prices_leave_the_answer") {
  std::mt19937 rng(53);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Parallel par(1);
  int priced = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const auto lp_case = random_lp_case(rng, iter, 10, 60);
    if (!lp_case) continue;
    const Problem& p = lp_case->first;
    const double lp = lp_case->second;
    CAPTURE(iter);
    SearchOptions o;
    o.threads = 1;
    o.symmetry = iter % 3 != 0;
    const auto tol = gap_tolerance(iter % 4 == 0 ? 0.0 : 1e-3);
    const SearchResult cold = solve_mckp(p, tol, o, nullptr, nullptr);
    if (!cold.feasible || cold.prices.empty()) continue;
    // The previous round's prices, moved by up to 5 %, and its solution.
    std::vector<double> lam0(cold.prices);
    for (double& x : lam0) x *= 1.0 + 0.05 * (2.0 * unit(rng) - 1.0);
    SearchOptions without = o;
    without.exact_prices = false;
    const SearchResult w = solve_mckp(p, tol, o, &lam0, &cold.choice);
    const SearchResult w0 = solve_mckp(p, tol, without, &lam0, &cold.choice);
    CHECK(w.choice == w0.choice);
    CHECK(std::memcmp(&w.value, &w0.value, sizeof(double)) == 0);
    CHECK(w.proven == w0.proven);
    if (!w.prices_exact) continue;
    ++priced;
    CHECK(w.root_bound == doctest::Approx(lp).epsilon(1e-9));
    const Classes cls = o.symmetry ? find_classes(p, par) : singleton_classes(p);
    Relaxation rel(p, cls, par);
    CHECK(rel.evaluate(w.prices, nullptr).L == doctest::Approx(lp).epsilon(1e-9));
    for (double x : w.prices) CHECK(x >= 0.0);
  }
  MESSAGE(priced << " warm solves priced");
  CHECK(priced >= 200);
}

// The warm solve's local finish (minimise_locally) gives the same bits on any thread count: its
// screens, evaluations and sums run in blocks of a fixed size, added in order.
TEST_CASE("native.engine.warm_prices_same_bits_on_any_thread_count") {
  std::mt19937 rng(57);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int variant = 0; variant < 2; ++variant) {
    Spec s;
    s.rows = 3 + variant;
    s.groups = 4000;
    s.max_items = 6;
    s.two_rows = variant == 1;
    const Problem p = random_problem(rng, s);
    SearchOptions cold_options;
    cold_options.threads = 1;
    const SearchResult cold = solve_mckp(p, gap_tolerance(1e-4), cold_options, nullptr, nullptr);
    REQUIRE(cold.feasible);
    REQUIRE_FALSE(cold.prices.empty());
    // The previous round's prices, moved by up to 2 %, and its solution.
    std::vector<double> lam0(cold.prices);
    for (double& x : lam0) x *= 1.0 + 0.02 * (2.0 * unit(rng) - 1.0);
    std::optional<SearchResult> first;
    for (int threads : {1, 2, 3, 8}) {
      SearchOptions o;
      o.threads = threads;
      const SearchResult r = solve_mckp(p, gap_tolerance(1e-4), o, &lam0, &cold.choice);
      REQUIRE(r.feasible);
      if (!first) {
        first = r;
        CHECK(r.prices_exact);
        continue;
      }
      CAPTURE(variant);
      CAPTURE(threads);
      CHECK(std::memcmp(&r.value, &first->value, sizeof(double)) == 0);
      CHECK(std::memcmp(&r.root_bound, &first->root_bound, sizeof(double)) == 0);
      CHECK(r.prices == first->prices);
      CHECK(r.group_duals == first->group_duals);
      CHECK(r.choice == first->choice);
      CHECK(r.proven == first->proven);
    }
  }
}

// A warm start from the previous round's prices and solution where a fifth of the groups changed
// their values (and a tolerance of 1e-6, so that the first evaluation often leaves it unproven): where the first evaluation does not prove the repaired warm solution, the LP's minimum is
// located first (minimise_locally) and the warm solution repaired there. The answer is proven and
// within the tolerance of a cold solve's, with and without prices, the same bits on any thread
// count; the LP's bound is the cold LP's where both minimise it.
TEST_CASE("native.engine.warm_unproven_locates_the_lp_minimum") {
  std::mt19937 rng(61);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int located = 0, unproven_first = 0, restricted = 0;
  for (int iter = 0; iter < 24; ++iter) {
    Spec s;
    s.rows = 3 + iter % 3;
    s.groups = 1500;
    s.max_items = 6;
    s.two_rows = iter % 2 == 1;
    const Problem p = random_problem(rng, s);
    const auto tol = gap_tolerance(1e-6);
    SearchOptions o;
    o.threads = 1;
    const SearchResult before = solve_mckp(p, tol, o, nullptr, nullptr);
    if (!before.feasible || before.prices.empty()) continue;
    Problem q = p;  // a fifth of the groups re-estimated: their items' values moved by up to 30 %
    for (int g = 0; g < q.num_groups(); ++g) {
      if (unit(rng) >= 0.2) continue;
      for (int it = q.begin(g); it < q.end(g); ++it)
        if (q.value[static_cast<std::size_t>(it)] != 0.0)
          q.value[static_cast<std::size_t>(it)] *= 1.0 + 0.3 * (2.0 * unit(rng) - 1.0);
    }
    CAPTURE(iter);
    const SearchResult cold = solve_mckp(q, tol, o, nullptr, nullptr);
    REQUIRE(cold.proven);
    SearchOptions without = o;
    without.exact_prices = false;
    const SearchResult w = solve_mckp(q, tol, o, &before.prices, &before.choice);
    const SearchResult w0 = solve_mckp(q, tol, without, &before.prices, &before.choice);
    for (const SearchResult* r : {&w, &w0}) {
      CHECK(r->proven);
      CHECK(std::abs(r->value - cold.value) <= tol(cold.value) + 1e-9);
      CHECK(r->value <= cold.bound + 1e-9);
      CHECK(cold.value <= r->bound + 1e-9);
    }
    CHECK(w.choice == w0.choice);
    CHECK(std::memcmp(&w.value, &w0.value, sizeof(double)) == 0);
    CHECK(w.lp_located == w0.lp_located);
    if (w0.lp_iterations > 1) ++unproven_first;
    if (!w.lp_located) continue;
    ++located;
    restricted += w.lp_located_restricted ? 1 : 0;
    CHECK(w.lp_located_restricted == w0.lp_located_restricted);
    CHECK(w.prices_exact);
    if (cold.prices_exact) CHECK(w.root_bound == doctest::Approx(cold.root_bound).epsilon(1e-9));
    for (int threads : {2, 3}) {
      SearchOptions t = o;
      t.threads = threads;
      const SearchResult r = solve_mckp(q, tol, t, &before.prices, &before.choice);
      CAPTURE(threads);
      CHECK(r.lp_located);
      CHECK(std::memcmp(&r.value, &w.value, sizeof(double)) == 0);
      CHECK(r.choice == w.choice);
      CHECK(r.prices == w.prices);
    }
  }
  MESSAGE(unproven_first << " warm solves not proven by their first evaluation, " << located << " located, "
                         << restricted << " of them proven by the repair over the region's active classes");
  CHECK(located >= 4);
  CHECK(restricted >= 1);
}

TEST_CASE("native.engine.repair_bounded_queue_is_the_definition") {
  // repair() queues a row's candidates with a bound of their score and finds a move only when its
  // bound comes first: the same counts, value bits and verdict as finding every candidate's move
  // when the row's repair starts. Random problems (ties in values and amounts, equal groups, two-row
  // items, fractional amounts), symmetry classes or one class per group, the Lagrangian assignment and
  // random starts over capacity, without and with branch-and-bound bounds.
  std::mt19937 rng(91);
  int moved = 0, compared = 0;
  for (int iter = 0; iter < 300; ++iter) {
    Spec s = spec_for(iter);
    s.rows = 1 + iter % 5;
    s.groups = iter % 4 == 0 ? 400 : 3 + iter % 60;
    s.max_items = 2 + iter % 9;
    const Problem p = random_problem(rng, s);
    CAPTURE(iter);
    Parallel par(1);
    const Classes cls = iter % 2 ? find_classes(p, par) : singleton_classes(p);
    Relaxation rel(p, cls, par);
    for (const auto& lam : trial_prices(rel, rng)) {
      for (int start = 0; start < 4; ++start) {
        const bool with_bounds = start >= 2;
        Bounds bd;
        bd.reset(p, cls);
        if (with_bounds)
          for (int c = 0; c < cls.size(); ++c) {
            if (rng() % 3 != 0) continue;
            const int f = cls.first_item(p, c), e = f + cls.items(p, c);
            const int keep = f + static_cast<int>(rng() % static_cast<unsigned>(e - f));
            for (int it = f; it < e; ++it)
              if (it != keep && rng() % 3 == 0) bd.hi[static_cast<std::size_t>(it)] = 0;
            if (cls.mult[static_cast<std::size_t>(c)] >= 2 && rng() % 2 == 0) bd.lo[static_cast<std::size_t>(keep)] = 1;
            bd.classify(p, cls, c);
          }
        const Bounds* b = with_bounds ? &bd : nullptr;
        Counts n;
        if (start % 2 == 0) {
          if (!rel.assign(lam, b, n)) continue;
        } else {
          // Each class's members spread at random over the items its bounds allow (lower bounds first).
          n.assign(p.value.size(), 0);
          for (int c = 0; c < cls.size(); ++c) {
            const int f = cls.first_item(p, c), e = f + cls.items(p, c);
            int left = cls.mult[static_cast<std::size_t>(c)];
            for (int it = f; it < e; ++it) {
              n[static_cast<std::size_t>(it)] = bd.lo[static_cast<std::size_t>(it)];
              left -= bd.lo[static_cast<std::size_t>(it)];
            }
            for (int guard = 0; left > 0 && guard < 1000; ++guard) {
              const int it = f + static_cast<int>(rng() % static_cast<unsigned>(e - f));
              if (n[static_cast<std::size_t>(it)] < bd.hi[static_cast<std::size_t>(it)]) {
                ++n[static_cast<std::size_t>(it)];
                --left;
              }
            }
            if (left > 0) n.clear();
            if (n.empty()) break;
          }
          if (n.empty()) continue;
        }
        Counts na = n, nb = n;
        double va = 0.0, vb = 0.0;
        const bool ra = repair(rel, lam, b, na, va);
        const bool rb = repair(rel, lam, b, nb, vb, nullptr, nullptr, nullptr, false);
        CHECK(ra == rb);
        ++compared;
        if (!ra || !rb) continue;
        moved += na != n ? 1 : 0;
        CHECK(na == nb);
        CHECK(std::bit_cast<std::uint64_t>(va) == std::bit_cast<std::uint64_t>(vb));
      }
    }
  }
  CHECK(moved > 200);
  MESSAGE(compared << " repairs compared, " << moved << " of them moved members");
}
