// LP methods of the MILP layer (LpMethod): interior point returns the centre of an optimal face,
// simplex a vertex; a backend without the method says so. Gavel's LP runs on whichever backend has one.
#include <doctest/doctest.h>

#include <sia/build_config.hpp>
#include <sia/error.hpp>
#include <sia/milp/factory.hpp>
#include <sia/sim/gavel_policy.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <stop_token>
#include <string>
#include <vector>

namespace {
// max x0 + x1 + x2  s.t.  x0 + x1 + x2 <= 1, 0 <= x <= 1: every point of the simplex face is optimal;
// its analytic centre is (1/3, 1/3, 1/3).
sia::MilpModel degenerate_lp() {
  sia::MilpModel m;
  m.sense = sia::MilpSense::maximize;
  for (int j = 0; j < 3; ++j) (void)m.add_col(1.0, 0.0, 1.0, false);
  const int r = m.add_row(-sia::MilpModel::inf, 1.0);
  for (int j = 0; j < 3; ++j) m.add_entry(r, j, 1.0);
  return m;
}
}  // namespace

TEST_CASE("milp.lp_method.interior_centre_and_simplex_vertex") {
  int with_interior = 0;
  for (const auto& name : sia::available_milp_solvers()) {
    auto solver = sia::make_milp_solver(name);
    CAPTURE(name);
    sia::MilpParams p;
    p.lp_method = sia::LpMethod::interior;
    const auto r = solver->solve(degenerate_lp(), p);
    if (!solver->supports(sia::LpMethod::interior)) {
      CHECK(r.status == sia::MilpStatus::error);
      CHECK(r.message.find("interior-point") != std::string::npos);
      continue;
    }
    ++with_interior;
    REQUIRE(r.status == sia::MilpStatus::optimal);
    CHECK(r.objective == doctest::Approx(1.0).epsilon(1e-6));
    for (double v : r.values) CHECK(v == doctest::Approx(1.0 / 3).epsilon(1e-3));
    p.lp_method = sia::LpMethod::simplex;
    const auto v = solver->solve(degenerate_lp(), p);
    REQUIRE(v.status == sia::MilpStatus::optimal);
    int at_bound = 0;
    for (double x : v.values) at_bound += std::abs(x) < 1e-9 || std::abs(x - 1.0) < 1e-9;
    CHECK(at_bound == 3);  // a vertex
  }
#if SIA_HAS_CBC
  CHECK(with_interior >= 1);  // Clp's barrier in the default build
#endif
  (void)with_interior;
}

TEST_CASE("milp.lp_method.gavel_lp_on_every_interior_backend") {
  // Two identical jobs, one GPU: the interior-point schedule shares the GPU, as the paper's Gavel does.
  const std::vector<std::vector<double>> T = {{2.0}, {2.0}};
  for (const auto& name : sia::available_milp_solvers()) {
    if (!sia::make_milp_solver(name)->supports(sia::LpMethod::interior)) continue;
    CAPTURE(name);
    const auto x = sia::sim::gavel_solve_lp(T, {1, 1}, {1}, sia::sim::GavelLpMethod::interior, name);
    CHECK(x[0][0] == doctest::Approx(0.5).epsilon(1e-4));
    CHECK(x[1][0] == doctest::Approx(0.5).epsilon(1e-4));
  }
  CHECK_THROWS_AS((void)sia::sim::gavel_solve_lp(T, {1, 1}, {1}, sia::sim::GavelLpMethod::interior, "nope"),
                  sia::BackendUnavailable);
}

#if SIA_HAS_GLPK
namespace {
// A feasible random LP (max Σ c·x, A x <= b, 0 <= x <= 1, A >= 0) large enough that GLPK's interior
// point needs many iterations, each longer than a millisecond.
sia::MilpModel interior_workload() {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0.1, 1.0);
  sia::MilpModel m;
  m.sense = sia::MilpSense::maximize;
  const int n = 400, rows = 200;
  for (int j = 0; j < n; ++j) (void)m.add_col(u(rng), 0.0, 1.0, false);
  for (int i = 0; i < rows; ++i) {
    const int r = m.add_row(-sia::MilpModel::inf, 10.0 * u(rng));
    for (int j = 0; j < n; ++j)
      if (std::uniform_int_distribution<int>(0, 9)(rng) == 0) m.add_entry(r, j, u(rng));
  }
  return m;
}
}  // namespace

TEST_CASE("milp.lp_method.glpk_interior_honours_limit_and_stop") {
  // glp_interior has neither a callback nor a time limit; the GLPK backend stops it from its
  // terminal hook, once per iteration (src/milp/glpk/glpk_solver.cpp).
  auto glpk = sia::make_milp_solver("glpk");
  const auto model = interior_workload();
  sia::MilpParams p;
  p.lp_method = sia::LpMethod::interior;
  const auto full = glpk->solve(model, p);
  REQUIRE(full.status == sia::MilpStatus::optimal);  // solvable: what follows is the limit's doing

  p.time_limit = std::chrono::milliseconds(1);
  const auto limited = glpk->solve(model, p);
  CHECK(limited.status == sia::MilpStatus::no_solution);
  CHECK(limited.message.find("time limit") != std::string::npos);

  std::stop_source source;
  source.request_stop();
  p.time_limit.reset();
  p.stop = source.get_token();
  const auto stopped = glpk->solve(model, p);
  CHECK(stopped.status == sia::MilpStatus::no_solution);
  CHECK(stopped.message.find("stop requested") != std::string::npos);

  // The thread's GLPK environment is usable after a stop: the same solve without limits again.
  p.stop = {};
  const auto again = glpk->solve(model, p);
  REQUIRE(again.status == sia::MilpStatus::optimal);
  CHECK(again.objective == doctest::Approx(full.objective).epsilon(1e-9));
}
#endif

TEST_CASE("milp.lp_method.simplex_warm_start_by_name") {
  // A backend may start a named simplex LP from the basis of the last one it solved (CBC does, matching rows
  // and columns by name). Whatever it does, a sequence of related LPs — rows appended, coefficients and bounds
  // changed, columns and rows removed or renamed, the sense flipped — has the optima of fresh solves.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (const auto& name : sia::available_milp_solvers()) {
    auto warm = sia::make_milp_solver(name);
    if (!warm->supports(sia::LpMethod::simplex)) continue;
    CAPTURE(name);
    sia::MilpParams p;
    p.lp_method = sia::LpMethod::simplex;
    std::vector<std::uint64_t> id(12);
    for (std::size_t j = 0; j < id.size(); ++j) id[j] = j;
    std::uint64_t next_id = id.size();
    int extra_rows = 0;
    for (int step = 0; step < 40; ++step) {
      CAPTURE(step);
      // Change the set of columns now and then: drop one, add one.
      if (step % 7 == 3) {
        id.erase(id.begin() + static_cast<long>(rng() % id.size()));
        id.push_back(next_id++);
      }
      extra_rows = step % 5 == 0 ? 0 : extra_rows + 1;
      sia::MilpModel m;
      m.sense = step % 9 == 8 ? sia::MilpSense::minimize : sia::MilpSense::maximize;
      for (auto k : id)
        (void)m.add_col(m.sense == sia::MilpSense::maximize ? 0.5 + u(rng) : -(0.5 + u(rng)), 0.0, 1.0 + u(rng), false,
                        "x" + std::to_string(k));
      // Capacity-like rows, then extra "cut" rows appended one more per step.
      for (int r = 0; r < 3; ++r) {
        const int row = m.add_row(-sia::MilpModel::inf, 2.0 + 3 * u(rng), "cap" + std::to_string(r));
        for (int j = 0; j < m.num_cols(); ++j)
          if (u(rng) < 0.7) m.add_entry(row, j, 0.5 + u(rng));
      }
      for (int r = 0; r < extra_rows; ++r) {
        const int row = m.add_row(-sia::MilpModel::inf, 1.0 + u(rng), "cut" + std::to_string(r));
        for (int j = 0; j < m.num_cols(); ++j)
          if (u(rng) < 0.5) m.add_entry(row, j, u(rng));
      }
      const auto a = warm->solve(m, p);
      const auto b = sia::make_milp_solver(name)->solve(m, p);
      REQUIRE(a.status == sia::MilpStatus::optimal);
      REQUIRE(b.status == sia::MilpStatus::optimal);
      CHECK(a.objective == doctest::Approx(b.objective).epsilon(1e-9));
      CHECK(m.is_feasible(a.values, 1e-7));
    }
  }
}
