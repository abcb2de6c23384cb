// Themis (issue 18): the finish-time-fairness solver against closed forms and brute force, every backend, the
// fallback when a backend fails, and the policy's rounds.
#include <doctest/doctest.h>

#include "unit/fault_solver.hpp"
#include "unit/sim_test_support.hpp"

#include <sia/error.hpp>
#include <sia/milp/factory.hpp>
#include <sia/sim/catalogue.hpp>
#include <sia/sim/steps.hpp>
#include <sia/sim/themis_policy.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

using namespace sia::sim;

namespace {

// Backends that can solve the Themis LPs of these sizes (native's general fallback takes small models).
std::vector<std::string> lp_backends() {
  std::vector<std::string> out;
  for (const auto& b : sia::available_milp_solvers())
    if (b == "native" || b == "cbc" || b == "glpk") out.push_back(b);
  return out;
}

// One GPU type: the optimum has a closed form. For a given ρ each job needs x_j = rem_j / ((ρ D_j − t_j) T_j),
// feasible iff every x_j ≤ 1 and Σ gpus_j x_j ≤ cap; bisect on that.
double one_type_optimum(const std::vector<double>& T, const std::vector<int>& gpus, int cap,
                        const std::vector<ThemisJob>& q) {
  double lo = 0, hi = 1;
  for (const auto& j : q) lo = std::max(lo, j.elapsed_s / j.isolated_time_s);
  auto feasible = [&](double rho) {
    double used = 0;
    for (std::size_t j = 0; j < q.size(); ++j) {
      if (q[j].remaining_steps <= 0) continue;
      const double slack = rho * q[j].isolated_time_s - q[j].elapsed_s;
      if (slack <= 0) return false;
      const double x = q[j].remaining_steps / slack / T[j];
      if (x > 1) return false;
      used += gpus[j] * x;
    }
    return used <= cap;
  };
  hi = std::max(hi, 2 * lo);
  while (!feasible(hi)) hi *= 2;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (feasible(mid) ? hi : lo) = mid;
  }
  return hi;
}

void check_valid(const ThemisSolution& s, const std::vector<int>& gpus, const std::vector<int>& cap) {
  for (std::size_t w = 0; w < cap.size(); ++w) {
    double used = 0;
    for (std::size_t j = 0; j < gpus.size(); ++j) used += gpus[j] * s.x[j][w];
    CHECK(used <= cap[w] + 1e-9);
  }
  for (const auto& row : s.x) {
    double sum = 0;
    for (double v : row) {
      CHECK(v >= 0.0);
      CHECK(v <= 1.0);
      sum += v;
    }
    CHECK(sum <= 1.0 + 1e-9);
  }
}

}  // namespace

TEST_CASE("sim.themis.known_answer") {
  // Two equal 1-GPU jobs sharing one GPU: ρ_j = (100 / x_j) / 200, x_1 + x_2 ≤ 1 -> x = 1/2 each, ρ = 1.
  for (const auto& b : lp_backends()) {
    ThemisSolveOptions o;
    o.backend = b;
    const auto s = themis_solve({{1.0}, {1.0}}, {1, 1}, {1}, {{0, 100, 200}, {0, 100, 200}}, o);
    INFO(b);
    CHECK(!s.fallback);
    CHECK(s.rho == doctest::Approx(1.0).epsilon(1e-5));
    CHECK(s.x[0][0] == doctest::Approx(0.5).epsilon(1e-4));
    CHECK(s.x[1][0] == doctest::Approx(0.5).epsilon(1e-4));
    CHECK(s.rho_lower <= s.rho);
    CHECK(s.rho - s.rho_lower <= 1e-6 * s.rho + 1e-12);
  }
  // Job 1 has waited 100 s already (t = 100, D = 200): it gets more of the GPU. ρ equal at the optimum:
  // 0.5/x0 = (100 + 100/x1)/200 with x0 + x1 = 1 -> x1² + x1 − 1 = 0, x1 = (√5 − 1)/2, ρ = 0.5/(1 − x1).
  const double x1 = (std::sqrt(5.0) - 1) / 2;
  const auto s = themis_solve({{1.0}, {1.0}}, {1, 1}, {1}, {{0, 100, 200}, {100, 100, 200}});
  CHECK(s.rho == doctest::Approx(0.5 / (1 - x1)).epsilon(1e-5));
  CHECK(s.x[1][0] == doctest::Approx(x1).epsilon(1e-4));
  // The isolated allocation: 1/m of every type, in units of the job's GPUs, rows scaled to sum ≤ 1.
  const auto iso = themis_isolated_allocation({1, 4}, {8, 2});
  CHECK(iso[0][0] == doctest::Approx(4.0 / 5));  // (4, 1) -> scaled by 1/5
  CHECK(iso[0][1] == doctest::Approx(1.0 / 5));
  CHECK(iso[1][0] == doctest::Approx(0.8));  // (1, 0.25) -> scaled by 1/1.25
  CHECK(iso[1][1] == doctest::Approx(0.2));
}

TEST_CASE("sim.themis.one_type_closed_form") {
  std::mt19937_64 rng(18);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 5);
    const int cap = 1 + static_cast<int>(rng() % 8);
    std::vector<double> T(static_cast<std::size_t>(n));
    std::vector<int> gpus(static_cast<std::size_t>(n));
    std::vector<ThemisJob> q(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) {
      T[static_cast<std::size_t>(j)] = 0.5 + 3 * u(rng);
      gpus[static_cast<std::size_t>(j)] = 1 + static_cast<int>(rng() % static_cast<std::uint64_t>(cap));
      q[static_cast<std::size_t>(j)] = {1000 * u(rng), 100 + 5000 * u(rng), 200 + 3000 * u(rng)};
    }
    std::vector<std::vector<double>> TT;
    for (double t : T) TT.push_back({t});
    const double want = one_type_optimum(T, gpus, cap, q);
    for (const auto& b : lp_backends()) {
      ThemisSolveOptions o;
      o.backend = b;
      const auto s = themis_solve(TT, gpus, {cap}, q, o);
      INFO("trial " << trial << " backend " << b);
      CHECK(!s.fallback);
      CHECK(s.rho == doctest::Approx(want).epsilon(1e-5));
      check_valid(s, gpus, {cap});
    }
  }
}

TEST_CASE("sim.themis.two_types_brute_force") {
  // Two jobs, two types: a grid over the four fractions bounds the optimum from above; the solver must be
  // at least as good, and its ρ must be what its own x achieves.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 12; ++trial) {
    const std::vector<std::vector<double>> T = {{0.5 + 2 * u(rng), 0.5 + 2 * u(rng)},
                                                {0.5 + 2 * u(rng), 0.5 + 2 * u(rng)}};
    const std::vector<int> gpus = {1, 2}, cap = {2, 2};
    const std::vector<ThemisJob> q = {{500 * u(rng), 1000, 800}, {500 * u(rng), 1500, 900}};
    double grid = std::numeric_limits<double>::infinity();
    const int N = 20;
    std::vector<std::vector<double>> x(2, std::vector<double>(2));
    for (int a = 0; a <= N; ++a)
      for (int b = 0; a + b <= N; ++b)
        for (int c = 0; c <= N; ++c)
          for (int d = 0; c + d <= N; ++d) {
            x = {{a / double(N), b / double(N)}, {c / double(N), d / double(N)}};
            if (x[0][0] + 2 * x[1][0] > 2 + 1e-12 || x[0][1] + 2 * x[1][1] > 2 + 1e-12) continue;
            const auto r = themis_rhos(T, q, x);
            grid = std::min(grid, std::max(r[0], r[1]));
          }
    for (const auto& b : lp_backends()) {
      ThemisSolveOptions o;
      o.backend = b;
      const auto s = themis_solve(T, gpus, cap, q, o);
      INFO("trial " << trial << " backend " << b);
      CHECK(s.rho <= grid * (1 + 2e-6));  // the grid may hit the optimum; the solver is within 1e-6
      const auto r = themis_rhos(T, q, s.x);
      CHECK(std::max(r[0], r[1]) == doctest::Approx(s.rho));
      check_valid(s, gpus, cap);
    }
  }
}

// An independent reference for larger problems: plain bisection on ρ to 1e-10, each step one feasibility LP
// (does some x give every job Σ_w T x ≥ rem / (ρ D − t)?) through the MILP layer.
double bisection_optimum(const std::vector<std::vector<double>>& T, const std::vector<int>& gpus,
                         const std::vector<int>& cap, const std::vector<ThemisJob>& q) {
  auto solver = sia::make_milp_solver("cbc");
  const std::size_t nj = T.size(), nt = cap.size();
  auto feasible = [&](double rho) {
    sia::MilpModel m;
    std::vector<std::vector<int>> col(nj, std::vector<int>(nt, -1));
    for (std::size_t j = 0; j < nj; ++j) {
      const double slack = rho * q[j].isolated_time_s - q[j].elapsed_s;
      if (q[j].remaining_steps > 0 && slack <= 0) return false;
      const int share = m.add_row(-sia::MilpModel::inf, 1.0);
      const int need = m.add_row(q[j].remaining_steps > 0 ? q[j].remaining_steps / slack : 0.0, sia::MilpModel::inf);
      for (std::size_t w = 0; w < nt; ++w) {
        if (gpus[j] > cap[w]) continue;
        col[j][w] = m.add_col(0.0, 0.0, 1.0, false);
        m.add_entry(share, col[j][w], 1.0);
        m.add_entry(need, col[j][w], T[j][w]);
      }
    }
    for (std::size_t w = 0; w < nt; ++w) {
      const int r = m.add_row(-sia::MilpModel::inf, cap[w]);
      for (std::size_t j = 0; j < nj; ++j)
        if (col[j][w] >= 0) m.add_entry(r, col[j][w], gpus[j]);
    }
    return solver->solve(m).status == sia::MilpStatus::optimal;
  };
  double lo = 0, hi = 1;
  for (const auto& j : q) lo = std::max(lo, j.elapsed_s / j.isolated_time_s);
  hi = std::max(hi, 2 * lo);
  while (!feasible(hi)) hi *= 2;
  while (hi - lo > 1e-10 * hi) {
    const double mid = 0.5 * (lo + hi);
    (feasible(mid) ? hi : lo) = mid;
  }
  return hi;
}

TEST_CASE("sim.themis.many_jobs_against_bisection") {
  // The solver's LPs and Lagrangian bounds against plain bisection on 12 random problems of 30 jobs on 3 types
  // (some jobs elapsed, some nearly done, GPU counts up to 8): the same optimum within the tolerance, a lower
  // bound that is one (up to the LPs' tolerances), and the same optimum from a start guess far below or above it.
  if (!sia::has_milp_solver("cbc")) return;
  std::mt19937_64 rng(19);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 12; ++trial) {
    const std::size_t nj = 30;
    const std::vector<int> cap = {32, 24, 16};
    std::vector<std::vector<double>> T(nj, std::vector<double>(3));
    std::vector<int> gpus(nj);
    std::vector<ThemisJob> q(nj);
    for (std::size_t j = 0; j < nj; ++j) {
      for (auto& t : T[j]) t = 0.2 + 3 * u(rng);
      gpus[j] = 1 << static_cast<int>(4 * u(rng));
      const double d = 500 + 5000 * u(rng);
      q[j] = {d * 1.5 * u(rng), (u(rng) < 0.1 ? 0.01 : 1.0) * 2000 * u(rng), d};
    }
    const double want = bisection_optimum(T, gpus, cap, q);
    for (double guess : {std::numeric_limits<double>::quiet_NaN(), 0.5 * want, 0.999 * want, 3 * want}) {
      ThemisSolveOptions o;
      o.backend = "cbc";
      o.start_rho = guess;
      const auto s = themis_solve(T, gpus, cap, q, o);
      INFO("trial " << trial << " guess " << guess << " LPs " << s.lp_solves << " " << s.message);
      CHECK(s.message.empty());
      CHECK(s.rho == doctest::Approx(want).epsilon(2e-6));
      // Both sides rest on Clp's feasibility tolerance (1e-7, so the reference's "feasible" may be a hair
      // below the true optimum): the bound is a lower bound up to that.
      CHECK(s.rho_lower <= want * (1 + 5e-7));
      CHECK(s.rho - s.rho_lower <= 1e-6 * s.rho);
      CHECK(s.lp_solves <= 30);
      const auto r = themis_rhos(T, q, s.x);
      CHECK(*std::max_element(r.begin(), r.end()) == doctest::Approx(s.rho));
      check_valid(s, gpus, cap);
    }
  }
}

TEST_CASE("sim.themis.special_jobs_and_errors") {
  // A job that needs more GPUs than any type has, or has no throughput, is left out; a finished job needs none.
  const auto s = themis_solve({{1.0, 1.0}, {2.0, 0.0}, {1.0, 1.0}}, {1, 8, 1}, {2, 2},
                              {{0, 100, 100}, {0, 100, 100}, {50, 0, 100}});
  CHECK(s.x[1][0] == 0.0);
  CHECK(s.x[1][1] == 0.0);
  CHECK(s.x[2][0] == 0.0);
  CHECK(s.x[2][1] == 0.0);
  // Job 0 alone: its best is all of one type (x = 1 on type 1 or 0, throughput 1): ρ = (100 / 1) / 100 = 1;
  // job 2's ρ is its elapsed share 50 / 100.
  CHECK(s.rho == doctest::Approx(1.0).epsilon(1e-5));
  CHECK(themis_solve({}, {}, {4}, {}).x.empty());
  CHECK_THROWS_AS((void)themis_solve({{1.0}}, {1, 1}, {1}, {{0, 1, 1}}), sia::InvalidArgument);
  CHECK_THROWS_AS((void)themis_solve({{-1.0}}, {1}, {1}, {{0, 1, 1}}), sia::InvalidArgument);
  CHECK_THROWS_AS((void)themis_solve({{1.0}}, {0}, {1}, {{0, 1, 1}}), sia::InvalidArgument);
  CHECK_THROWS_AS((void)themis_solve({{1.0}}, {1}, {1}, {{0, 1, 0}}), sia::InvalidArgument);
  CHECK_THROWS_AS((void)themis_solve({{1.0}}, {1}, {-1}, {{0, 1, 1}}), sia::InvalidArgument);
}

TEST_CASE("sim.themis.solver_across_calls") {
  // A policy's rounds through one ThemisSolver (each call's LPs start from the last call's basis, jobs matched
  // by id): time passes, jobs progress, finish and arrive; every call has the optimum of plain bisection and a
  // lower bound within the tolerance, in few LPs once warm.
  if (!sia::has_milp_solver("cbc")) return;
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const std::vector<int> cap = {32, 24, 16};
  struct Live {
    std::uint64_t id;
    std::vector<double> T;
    int gpus;
    ThemisJob q;
  };
  std::uint64_t next_id = 100;
  auto make_job = [&] {
    Live l{next_id++, std::vector<double>(3), 1 << static_cast<int>(4 * u(rng)), {}};
    for (auto& t : l.T) t = 0.2 + 3 * u(rng);
    const double d = 500 + 5000 * u(rng);
    l.q = {d * 0.5 * u(rng), 2000 * u(rng), d};
    return l;
  };
  std::vector<Live> live;
  for (int j = 0; j < 25; ++j) live.push_back(make_job());
  ThemisSolver solver;
  ThemisSolveOptions o;
  o.backend = "cbc";
  double last = std::numeric_limits<double>::quiet_NaN();
  int lps = 0;
  for (int round = 0; round < 16; ++round) {
    CAPTURE(round);
    std::vector<std::vector<double>> T;
    std::vector<int> gpus;
    std::vector<ThemisJob> q;
    std::vector<std::uint64_t> ids;
    for (const auto& l : live) T.push_back(l.T), gpus.push_back(l.gpus), q.push_back(l.q), ids.push_back(l.id);
    o.start_rho = last;
    const auto s = solver.solve(T, gpus, cap, q, ids, o);
    const double want = bisection_optimum(T, gpus, cap, q);
    INFO("LPs " << s.lp_solves << " " << s.message);
    CHECK(s.message.empty());
    CHECK(s.rho == doctest::Approx(want).epsilon(2e-6));
    CHECK(s.rho_lower <= want * (1 + 5e-7));
    CHECK(s.rho - s.rho_lower <= 1e-6 * s.rho);
    check_valid(s, gpus, cap);
    CHECK(themis_solve(T, gpus, cap, q, o).rho == doctest::Approx(s.rho).epsilon(2e-6));
    if (round > 0) lps += s.lp_solves;
    last = s.rho;
    // Six minutes pass: every job ages and runs some steps; one finishes and another arrives now and then.
    for (auto& l : live) {
      l.q.elapsed_s += 360;
      l.q.remaining_steps = std::max(0.0, l.q.remaining_steps - 100 * u(rng));
    }
    if (round % 3 == 1) live.erase(live.begin() + static_cast<long>(rng() % live.size()));
    if (round % 4 == 2) live.push_back(make_job());
  }
  CHECK(lps <= 15 * 4);  // a few LPs a round (measured: docs/performance.md, "960-job workloads per policy")
  // Ids: one per job, unique.
  CHECK_THROWS_AS((void)solver.solve({{1.0}, {1.0}}, {1, 1}, {1}, {{0, 1, 1}, {0, 1, 1}}, {5, 5}, o),
                  sia::InvalidArgument);
  CHECK_THROWS_AS((void)solver.solve({{1.0}}, {1}, {1}, {{0, 1, 1}}, {}, o), sia::InvalidArgument);
}

TEST_CASE("sim.themis.backend_failure_falls_back") {
  // Whatever a backend does (errors, throws, garbage, lies), the result is a valid allocation; when no LP
  // succeeded it is the isolated allocation, flagged.
  sia::test::register_fault_solver();
  const std::vector<std::vector<double>> T = {{1.0, 2.0}, {1.5, 0.5}, {1.0, 1.0}};
  const std::vector<int> gpus = {1, 2, 1}, cap = {2, 3};
  const std::vector<ThemisJob> q = {{10, 500, 400}, {0, 800, 600}, {30, 300, 500}};
  for (auto mode : sia::test::FaultSolver::all_modes) {
    if (mode == sia::test::FaultSolver::Mode::sleep_past_limit) continue;  // slow; the round tests cover it
    sia::test::ScopedFault arm(mode);
    ThemisSolveOptions o;
    o.backend = "fault";
    o.lp_time_limit = std::chrono::milliseconds(200);
    const auto s = themis_solve(T, gpus, cap, q, o);
    INFO(sia::test::FaultSolver::mode_name(mode));
    check_valid(s, gpus, cap);
    CHECK(std::isfinite(s.rho));
    if (s.fallback) CHECK(!s.message.empty());
  }
  ThemisSolveOptions o;
  o.backend = "no-such-backend";
  const auto s = themis_solve(T, gpus, cap, q, o);
  CHECK(s.fallback);
  CHECK(s.x == themis_isolated_allocation(gpus, cap));
}

TEST_CASE("sim.themis.policy_rounds") {
  // Three rigid 1-GPU jobs on one 2-GPU node: every round schedules whole jobs within capacity, and over the
  // rounds every job gets its turn (the LP shares time, the mechanism rotates).
  sia::test::TinyRigidJobs tiny(1, 2, {1, 1, 1}, 256);
  ThemisPolicy themis;
  std::vector<int> turns(3, 0);
  for (const auto& a : tiny.run(themis, 6)) {
    REQUIRE(a.size() == 3);
    int used = 0;
    for (std::size_t j = 0; j < 3; ++j) {
      if (a[j].empty()) continue;
      CHECK(a[j].gpus == 1);
      used += a[j].gpus;
      ++turns[j];
    }
    CHECK(used == 2);
  }
  CHECK(themis.last_solution().rho > 0);
  for (int t : turns) CHECK(t >= 3);
  for (auto* j : tiny.jobs) CHECK(j->kind == sia::JobKind::rigid);
  // Steps: a job that has not started needs all of its steps.
  CHECK(remaining_steps(*tiny.jobs[0], 256) == doctest::Approx(total_steps(*tiny.apps.at("cifar10"), 256)));
}
