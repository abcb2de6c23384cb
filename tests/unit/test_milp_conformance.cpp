// The same small MILPs on every usable backend (sia::available_milp_solvers()).
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/milp/factory.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "unit/milp_test_support.hpp"

using namespace sia;
using sia::test::brute_force_optimum;
using sia::test::usable_milp_backends;

namespace {

MilpParams exact() {
  MilpParams p;
  p.relative_gap = 0.0;
  return p;
}

/// Checks an optimal result: status, feasibility of the values, objective consistent with values.
void check_optimal(const MilpModel& m, const MilpResult& r, double expected) {
  INFO("message: " << r.message);
  REQUIRE(r.status == MilpStatus::optimal);
  REQUIRE(r.values.size() == static_cast<std::size_t>(m.num_cols()));
  CHECK(m.is_feasible(r.values));
  CHECK(r.objective == doctest::Approx(m.objective_of(r.values)).epsilon(1e-9));
  CHECK(r.objective == doctest::Approx(expected).epsilon(1e-7));
  if (!std::isnan(r.best_bound)) {
    if (m.sense == MilpSense::maximize)
      CHECK(r.best_bound >= r.objective - 1e-6);
    else
      CHECK(r.best_bound <= r.objective + 1e-6);
  }
}

MilpModel knapsack() {
  MilpModel m;
  m.sense = MilpSense::maximize;
  const double value[] = {10, 13, 7, 8, 4};
  const double weight[] = {3, 4, 2, 3, 1};
  const int cap = m.add_row(-MilpModel::inf, 7.0, "capacity");
  for (int j = 0; j < 5; ++j) {
    const int c = m.add_col(value[j], 0, 1, true);
    m.add_entry(cap, c, weight[j]);
  }
  return m;
}

}  // namespace

TEST_CASE("milp.conformance.backends_listed") {
  const auto names = available_milp_solvers();
  CHECK(!names.empty());
  const auto usable = usable_milp_backends();
  MESSAGE("usable MILP backends: " << usable.size());
  for (auto& n : usable) MESSAGE("  " << n);
}

TEST_CASE("milp.conformance.knapsack") {
  const auto m = knapsack();
  for (const auto& name : usable_milp_backends()) {
    CAPTURE(name);
    auto r = make_milp_solver(name)->solve(m, exact());
    check_optimal(m, r, 24.0);  // items 1, 2, 4: 13 + 7 + 4 (weight 4 + 2 + 1)
  }
}

TEST_CASE("milp.conformance.multiple_choice_knapsack") {
  // 4 jobs, 3 options each (gpus 1, 2, 4); at most one option per job; 6 GPUs in total.
  MilpModel m;
  const double util[4][3] = {{1, 3, 5}, {2, 3, 4}, {1, 4, 6}, {0.5, 2.5, 6.5}};
  const double gpus[3] = {1, 2, 4};
  const int cap = m.add_row(-MilpModel::inf, 6.0, "gpus");
  for (int j = 0; j < 4; ++j) {
    const int row = m.add_row(-MilpModel::inf, 1.0, "job" + std::to_string(j));
    for (int c = 0; c < 3; ++c) {
      const int col = m.add_col(util[j][c], 0, 1, true);
      m.add_entry(row, col, 1.0);
      m.add_entry(cap, col, gpus[c]);
    }
  }
  const double expected = *brute_force_optimum(m);
  CHECK(expected == doctest::Approx(10.5));  // 4 GPUs to job 3 (6.5) + 2 GPUs to job 2 (4)
  for (const auto& name : usable_milp_backends()) {
    CAPTURE(name);
    check_optimal(m, make_milp_solver(name)->solve(m, exact()), expected);
  }
}

TEST_CASE("milp.conformance.infeasible") {
  MilpModel m;
  const int x = m.add_col(1, 0, 1, true);
  const int y = m.add_col(1, 0, 1, true);
  const int r = m.add_row(3.0, MilpModel::inf);
  m.add_entry(r, x, 1);
  m.add_entry(r, y, 1);
  // Integer-infeasible although the LP relaxation is feasible: 2x = 1.
  MilpModel m2;
  const int z = m2.add_col(1, 0, 5, true);
  const int r2 = m2.add_row(1.0, 1.0);
  m2.add_entry(r2, z, 2.0);
  for (const auto& name : usable_milp_backends()) {
    CAPTURE(name);
    auto s = make_milp_solver(name);
    auto res = s->solve(m);
    CHECK(res.status == MilpStatus::infeasible);
    CHECK(res.values.empty());
    auto res2 = s->solve(m2);
    CHECK(res2.status == MilpStatus::infeasible);
  }
}

TEST_CASE("milp.conformance.empty_model") {
  MilpModel none;
  none.obj_offset = 2.5;
  MilpModel rows_only;
  rows_only.add_row(-1.0, 1.0);
  MilpModel impossible;
  impossible.add_row(1.0, 2.0);
  for (const auto& name : usable_milp_backends()) {
    CAPTURE(name);
    auto s = make_milp_solver(name);
    auto r = s->solve(none);
    CHECK(r.status == MilpStatus::optimal);
    CHECK(r.values.empty());
    CHECK(r.objective == doctest::Approx(2.5));
    CHECK(s->solve(rows_only).status == MilpStatus::optimal);
    CHECK(s->solve(impossible).status == MilpStatus::infeasible);
  }
}

TEST_CASE("milp.conformance.no_rows") {
  MilpModel m;
  m.sense = MilpSense::minimize;
  m.add_col(2.0, -3, 4, true);
  m.add_col(-1.5, 0, 2.5, false);
  m.obj_offset = 1.0;
  for (const auto& name : usable_milp_backends()) {
    CAPTURE(name);
    check_optimal(m, make_milp_solver(name)->solve(m, exact()), 1.0 - 6.0 - 3.75);
  }
}

TEST_CASE("milp.conformance.equality_rows") {
  // x + y + z = 4, x - y = 1 (integers in [0,4]); max 3x + 2y + z  -> x = 2.5? no: integers.
  MilpModel m;
  const int x = m.add_col(3, 0, 4, true), y = m.add_col(2, 0, 4, true), z = m.add_col(1, 0, 4, true);
  const int r0 = m.add_row(4, 4), r1 = m.add_row(1, 1);
  m.add_entry(r0, x, 1);
  m.add_entry(r0, y, 1);
  m.add_entry(r0, z, 1);
  m.add_entry(r1, x, 1);
  m.add_entry(r1, y, -1);
  const double expected = *brute_force_optimum(m);
  for (const auto& name : usable_milp_backends()) {
    CAPTURE(name);
    auto r = make_milp_solver(name)->solve(m, exact());
    check_optimal(m, r, expected);
  }
}

TEST_CASE("milp.conformance.duplicate_entries_are_summed") {
  MilpModel m;
  const int x = m.add_col(1, 0, 10, true);
  const int r = m.add_row(-MilpModel::inf, 7);
  m.add_entry(r, x, 1.0);
  m.add_entry(r, x, 1.0);  // 2x <= 7
  m.add_entry(r, x, 0.0);
  for (const auto& name : usable_milp_backends()) {
    CAPTURE(name);
    check_optimal(m, make_milp_solver(name)->solve(m, exact()), 3.0);
  }
}

TEST_CASE("milp.conformance.negative_costs_and_sense") {
  MilpModel m = knapsack();
  for (auto& c : m.obj) c = -c;
  m.sense = MilpSense::minimize;  // min -v·x == -(max v·x)
  MilpModel mx = knapsack();
  const double best = *brute_force_optimum(mx);
  MilpModel trivial_max = m;  // max of negative costs = take nothing
  trivial_max.sense = MilpSense::maximize;
  for (const auto& name : usable_milp_backends()) {
    CAPTURE(name);
    auto s = make_milp_solver(name);
    check_optimal(m, s->solve(m, exact()), -best);
    check_optimal(mx, s->solve(mx, exact()), best);
    check_optimal(trivial_max, s->solve(trivial_max, exact()), 0.0);
  }
}

TEST_CASE("milp.conformance.general_integers_and_continuous") {
  // max x + 2y + 0.5z, 2x + 3y <= 12.5, x - y >= -1, z <= x + 0.3 (z continuous), x,y in [0,10] integer
  MilpModel m;
  const int x = m.add_col(1, 0, 10, true), y = m.add_col(2, 0, 10, true), z = m.add_col(0.5, 0, 100, false);
  const int r0 = m.add_row(-MilpModel::inf, 12.5), r1 = m.add_row(-1, MilpModel::inf),
            r2 = m.add_row(-MilpModel::inf, 0.3);
  m.add_entry(r0, x, 2);
  m.add_entry(r0, y, 3);
  m.add_entry(r1, x, 1);
  m.add_entry(r1, y, -1);
  m.add_entry(r2, z, 1);
  m.add_entry(r2, x, -1);
  // Enumerate x, y; z = x + 0.3 at best.
  double best = -1e9;
  for (int a = 0; a <= 10; ++a)
    for (int b = 0; b <= 10; ++b)
      if (2 * a + 3 * b <= 12.5 && a - b >= -1) best = std::max(best, a + 2.0 * b + 0.5 * (a + 0.3));
  for (const auto& name : usable_milp_backends()) {
    CAPTURE(name);
    auto r = make_milp_solver(name)->solve(m, exact());
    check_optimal(m, r, best);
    if (r.values.size() == 3) {
      CHECK(r.values[0] == std::round(r.values[0]));  // integers are returned exactly
      CHECK(r.values[1] == std::round(r.values[1]));
    }
  }
}

TEST_CASE("milp.conformance.unbounded") {
  MilpModel m;
  const int x = m.add_col(1, 0, MilpModel::inf, true);
  const int y = m.add_col(1, 0, MilpModel::inf, true);
  const int r = m.add_row(-MilpModel::inf, 3);
  m.add_entry(r, x, 1);
  m.add_entry(r, y, -1);
  for (const auto& name : usable_milp_backends()) {
    CAPTURE(name);
    auto res = make_milp_solver(name)->solve(m);
    CHECK(res.status == MilpStatus::unbounded);
  }
}

TEST_CASE("milp.conformance.lp_duals") {
  // max 3x + 2y; r0: x + y <= 4, r1: x + 3y <= 6, r2: x <= 3.5. LP optimum (3.5, 0.5):
  // r0 and r2 binding, duals 2, 0, 1 (d objective / d rhs).
  MilpModel m;
  const int x = m.add_col(3, 0, MilpModel::inf, true), y = m.add_col(2, 0, MilpModel::inf, true);
  const int r0 = m.add_row(-MilpModel::inf, 4), r1 = m.add_row(-MilpModel::inf, 6),
            r2 = m.add_row(-MilpModel::inf, 3.5);
  m.add_entry(r0, x, 1);
  m.add_entry(r0, y, 1);
  m.add_entry(r1, x, 1);
  m.add_entry(r1, y, 3);
  m.add_entry(r2, x, 1);
  MilpModel mn = m;  // min -3x - 2y: same point, duals negated in the model's own sense
  mn.sense = MilpSense::minimize;
  for (auto& c : mn.obj) c = -c;
  for (const auto& name : usable_milp_backends()) {
    CAPTURE(name);
    auto s = make_milp_solver(name);
    auto r = s->solve(m, exact());
    check_optimal(m, r, 11.0);  // integer optimum: (3, 1)
    if (r.row_duals.empty()) {
      MESSAGE("backend " << name << " reports no LP duals");
      continue;
    }
    REQUIRE(r.row_duals.size() == 3);
    CHECK(r.row_duals[0] == doctest::Approx(2.0));
    CHECK(r.row_duals[1] == doctest::Approx(0.0));
    CHECK(r.row_duals[2] == doctest::Approx(1.0));
    auto rn = s->solve(mn, exact());
    check_optimal(mn, rn, -11.0);
    REQUIRE(rn.row_duals.size() == 3);
    CHECK(rn.row_duals[0] == doctest::Approx(-2.0));
    CHECK(rn.row_duals[2] == doctest::Approx(-1.0));
    MilpParams no_duals = exact();
    no_duals.lp_duals = false;
    auto r3 = s->solve(m, no_duals);
    check_optimal(m, r3, 11.0);
    CHECK(r3.row_duals.empty());
  }
}

namespace {
/// A model no backend solves in 100 ms: a market-split instance (Cornuéjols & Dawande), 4 dense
/// equality rows over 36 binaries, usually infeasible and notoriously hard for branch and bound.
MilpModel market_split(unsigned seed, bool with_slack_objective) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> coef(0, 99);
  MilpModel m;
  m.sense = MilpSense::maximize;
  const int n = 36, rows = 4;
  for (int j = 0; j < n; ++j) m.add_col(with_slack_objective ? coef(rng) : 0.0, 0, 1, true);
  for (int i = 0; i < rows; ++i) {
    double sum = 0;
    std::vector<double> a(n);
    for (int j = 0; j < n; ++j) sum += (a[static_cast<std::size_t>(j)] = coef(rng));
    const double rhs = std::floor(sum / 2);
    const int r = with_slack_objective ? m.add_row(-MilpModel::inf, rhs) : m.add_row(rhs, rhs);
    for (int j = 0; j < n; ++j) m.add_entry(r, j, a[static_cast<std::size_t>(j)]);
  }
  return m;
}
}  // namespace

TEST_CASE("milp.conformance.time_limit_honoured") {
  MilpParams p;
  p.time_limit = std::chrono::milliseconds(100);
  p.relative_gap = 0.0;
  const auto hard_infeasible = market_split(7, false);  // no incumbent in 100 ms
  const auto hard_feasible = market_split(11, true);    // multi-dimensional knapsack: easy incumbent, hard proof
  for (const auto& name : usable_milp_backends()) {
    CAPTURE(name);
    auto s = make_milp_solver(name);
    for (const auto* m : {&hard_infeasible, &hard_feasible}) {
      const auto t0 = std::chrono::steady_clock::now();
      auto r = s->solve(*m, p);
      const auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      INFO("status " << to_string(r.status) << " after " << secs << " s: " << r.message);
      if (std::getenv("SIA_MILP_TIMES")) MESSAGE(name << ": " << to_string(r.status) << " in " << secs << " s");
      CHECK(secs < 3.0);  // generous: 100 ms limit, sanitizer builds, a shared 2-core machine
      const bool limit_outcome = r.status == MilpStatus::feasible || r.status == MilpStatus::no_solution;
      // A very lucky search may finish; anything else is wrong.
      CHECK((limit_outcome || r.status == MilpStatus::optimal || r.status == MilpStatus::infeasible));
      if (r.status == MilpStatus::feasible) {
        CHECK(m->is_feasible(r.values));
        CHECK(r.objective == doctest::Approx(m->objective_of(r.values)));
        if (!std::isnan(r.best_bound)) CHECK(r.best_bound >= r.objective - 1e-6);  // maximisation
      }
      if (r.status == MilpStatus::no_solution) CHECK(r.values.empty());
    }
  }
}

TEST_CASE("milp.conformance.validation_errors") {
  MilpModel nan_coef = knapsack();
  nan_coef.entries[1].value = std::numeric_limits<double>::quiet_NaN();
  MilpModel bad_bounds = knapsack();
  bad_bounds.col_lower[2] = 2.0;  // lb > ub
  MilpModel bad_index = knapsack();
  bad_index.add_entry(0, 99, 1.0);
  MilpModel bad_row = knapsack();
  bad_row.add_entry(-1, 0, 1.0);
  MilpModel inf_cost = knapsack();
  inf_cost.obj[0] = MilpModel::inf;
  MilpModel bad_row_bounds = knapsack();
  bad_row_bounds.row_lower[0] = 10;
  MilpParams bad_gap;
  bad_gap.relative_gap = -1.0;
  for (const auto& name : usable_milp_backends()) {
    CAPTURE(name);
    auto s = make_milp_solver(name);
    CHECK_THROWS_AS((void)s->solve(nan_coef), InvalidArgument);
    CHECK_THROWS_AS((void)s->solve(bad_bounds), InvalidArgument);
    CHECK_THROWS_AS((void)s->solve(bad_index), InvalidArgument);
    CHECK_THROWS_AS((void)s->solve(bad_row), InvalidArgument);
    CHECK_THROWS_AS((void)s->solve(inf_cost), InvalidArgument);
    CHECK_THROWS_AS((void)s->solve(bad_row_bounds), InvalidArgument);
    CHECK_THROWS_AS((void)s->solve(knapsack(), bad_gap), InvalidArgument);
    // The solver stays usable afterwards.
    CHECK(s->solve(knapsack()).status == MilpStatus::optimal);
  }
}

namespace {
/// Random small pure-integer model: mixed row kinds, either sense, costs of both signs.
MilpModel random_model(std::mt19937& rng, bool general_integers) {
  std::uniform_int_distribution<int> ncols(general_integers ? 2 : 3, general_integers ? 6 : 10);
  std::uniform_int_distribution<int> nrows(0, 4);
  std::uniform_int_distribution<int> coef(-6, 9);
  std::uniform_int_distribution<int> kind(0, 3);
  std::bernoulli_distribution dense(0.6);
  MilpModel m;
  m.sense = std::bernoulli_distribution(0.5)(rng) ? MilpSense::maximize : MilpSense::minimize;
  const int n = ncols(rng);
  for (int j = 0; j < n; ++j) {
    const double ub = general_integers ? std::uniform_int_distribution<int>(1, 3)(rng) : 1.0;
    const double lb = general_integers && std::bernoulli_distribution(0.3)(rng) ? -1.0 : 0.0;
    m.add_col(coef(rng) * 0.5, lb, ub, true);
  }
  const int rows = nrows(rng);
  for (int i = 0; i < rows; ++i) {
    double sum_pos = 0;
    std::vector<double> a(static_cast<std::size_t>(n), 0.0);
    for (int j = 0; j < n; ++j)
      if (dense(rng)) {
        a[static_cast<std::size_t>(j)] = coef(rng);
        sum_pos += std::abs(a[static_cast<std::size_t>(j)]);
      }
    const double rhs = std::uniform_real_distribution<double>(-0.3, 0.6)(rng) * sum_pos;
    int r;
    switch (kind(rng)) {
      case 0:
        r = m.add_row(-MilpModel::inf, std::round(rhs));
        break;
      case 1:
        r = m.add_row(std::round(rhs) - sum_pos / 2, MilpModel::inf);
        break;
      case 2:
        r = m.add_row(std::round(rhs), std::round(rhs));
        break;
      default:
        r = m.add_row(std::round(rhs) - 3, std::round(rhs) + 2);
        break;
    }
    for (int j = 0; j < n; ++j)
      if (a[static_cast<std::size_t>(j)] != 0.0) m.add_entry(r, j, a[static_cast<std::size_t>(j)]);
  }
  m.obj_offset = std::uniform_int_distribution<int>(-3, 3)(rng);
  return m;
}

void run_random(bool general_integers, unsigned seed, int count) {
  const auto backends = usable_milp_backends();
  std::mt19937 rng(seed);
  int infeasible = 0;
  for (int t = 0; t < count; ++t) {
    const auto m = random_model(rng, general_integers);
    const auto expected = brute_force_optimum(m);
    if (!expected) ++infeasible;
    for (const auto& name : backends) {
      CAPTURE(name);
      CAPTURE(t);
      auto r = make_milp_solver(name)->solve(m, exact());
      if (std::getenv("SIA_MILP_DUMP") &&
          (r.status == MilpStatus::error || (!expected && r.status != MilpStatus::infeasible) ||
           (expected && std::abs(r.objective - *expected) > 1e-6))) {
        for (auto v : r.values) MESSAGE("x " << v);
        for (int j = 0; j < m.num_cols(); ++j)
          MESSAGE("col " << j << " c=" << m.obj[j] << " [" << m.col_lower[j] << "," << m.col_upper[j] << "]");
        for (int i = 0; i < m.num_rows(); ++i)
          MESSAGE("row " << i << " [" << m.row_lower[i] << "," << m.row_upper[i] << "]");
        for (auto& e : m.entries) MESSAGE("e " << e.row << " " << e.col << " " << e.value);
        MESSAGE("sense " << (m.sense == MilpSense::maximize) << " exp " << (expected ? *expected : -999));
      }
      if (!expected) {
        CHECK(r.status == MilpStatus::infeasible);
      } else {
        check_optimal(m, r, *expected);
      }
    }
  }
  MESSAGE(count << " random models (" << infeasible << " infeasible) on " << backends.size() << " backends");
}
}  // namespace

namespace {
int random_count(int fallback) {
  // SIA_MILP_RANDOM_COUNT=5000 sia_tests -tc='milp.conformance.random*' runs a longer sweep.
  const char* env = std::getenv("SIA_MILP_RANDOM_COUNT");
  return env != nullptr ? std::max(1, std::atoi(env)) : fallback;
}
}  // namespace

TEST_CASE("milp.conformance.random_binary_vs_brute_force") { run_random(false, 12345u, random_count(150)); }

TEST_CASE("milp.conformance.random_general_integer_vs_brute_force") { run_random(true, 777u, random_count(100)); }

TEST_CASE("milp.conformance.validate_names_the_first_offence") {
  // validate() checks a model in one pass and walks it for the message only when that pass fails:
  // every kind of offence, alone or two at once, must still throw, naming the first in the order
  // of the walk (columns, then rows, then coefficients), and a valid model must pass.
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = MilpModel::inf;
  std::mt19937 rng(5);
  MilpModel base;
  for (int j = 0; j < 40; ++j) (void)base.add_col(1.0 + j, 0.0, 1.0, true);
  for (int i = 0; i < 10; ++i) (void)base.add_row(-inf, 5.0);
  for (int j = 0; j < 40; ++j) base.add_entry(j % 10, j, 1.0 + j % 3);
  CHECK_NOTHROW(base.validate());
  // An offence: where it is (for the expected message) and how to make it.
  struct Offence {
    int rank;  // 0 a column, 1 a row, 2 a coefficient: the order of the walk
    std::string where;
    std::function<void(MilpModel&)> make;
  };
  std::vector<Offence> offences;
  for (int j : {0, 17, 39}) {
    const std::string col = "column " + std::to_string(j);
    offences.push_back({0, col, [j, nan](MilpModel& m) { m.obj[static_cast<std::size_t>(j)] = nan; }});
    offences.push_back({0, col, [j, inf](MilpModel& m) { m.obj[static_cast<std::size_t>(j)] = -inf; }});
    offences.push_back({0, col, [j, nan](MilpModel& m) { m.col_lower[static_cast<std::size_t>(j)] = nan; }});
    offences.push_back({0, col, [j, nan](MilpModel& m) { m.col_upper[static_cast<std::size_t>(j)] = nan; }});
    offences.push_back({0, col, [j](MilpModel& m) { m.col_lower[static_cast<std::size_t>(j)] = 2.0; }});
    offences.push_back({0, col, [j, inf](MilpModel& m) {
                          m.col_lower[static_cast<std::size_t>(j)] = inf;
                          m.col_upper[static_cast<std::size_t>(j)] = inf;
                        }});
    offences.push_back({0, col, [j, inf](MilpModel& m) {
                          m.col_lower[static_cast<std::size_t>(j)] = -inf;
                          m.col_upper[static_cast<std::size_t>(j)] = -inf;
                        }});
  }
  for (int i : {0, 9}) {
    const std::string row = "row " + std::to_string(i);
    offences.push_back({1, row, [i, nan](MilpModel& m) { m.row_upper[static_cast<std::size_t>(i)] = nan; }});
    offences.push_back({1, row, [i](MilpModel& m) { m.row_lower[static_cast<std::size_t>(i)] = 6.0; }});
    offences.push_back({1, row, [i, inf](MilpModel& m) {
                          m.row_lower[static_cast<std::size_t>(i)] = inf;
                          m.row_upper[static_cast<std::size_t>(i)] = inf;
                        }});
  }
  offences.push_back({2, "(3, 40)", [](MilpModel& m) {
                        m.entries[5].col = 40;
                        m.entries[5].row = 3;
                      }});
  offences.push_back({2, "(-1, ", [](MilpModel& m) { m.entries[7].row = -1; }});
  offences.push_back({2, "(10, ", [](MilpModel& m) { m.entries[8].row = 10; }});
  offences.push_back({2, "column 11", [nan](MilpModel& m) { m.entries[11].value = nan; }});
  offences.push_back({2, "column 12", [inf](MilpModel& m) { m.entries[12].value = inf; }});
  // Alone, then with a second offence: the walk's order decides the message (columns before
  // rows before coefficients, lower indices first).
  for (std::size_t a = 0; a < offences.size(); ++a) {
    CAPTURE(a);
    MilpModel m = base;
    offences[a].make(m);
    try {
      m.validate();
      FAIL("no exception");
    } catch (const InvalidArgument& e) {
      CHECK(std::string(e.what()).find(offences[a].where) != std::string::npos);
    }
    const std::size_t b = rng() % offences.size();
    if (offences[b].rank <= offences[a].rank) continue;  // only a later-walked second one
    MilpModel two = m;
    offences[b].make(two);
    try {
      two.validate();
      FAIL("no exception");
    } catch (const InvalidArgument& e) {
      CHECK(std::string(e.what()).find(offences[a].where) != std::string::npos);
    }
  }
}
