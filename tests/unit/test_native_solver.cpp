// The native MILP backend on hand-built round-shaped models: exhaustive search on hundreds of small
// random and adversarial instances, hand-computable prices, pins, forced choices, infeasibility,
// limits, warm starts and the general fallback.
#include <doctest/doctest.h>

#include <sia/milp/factory.hpp>
#include <sia/milp/model.hpp>
#include <sia/milp/solver.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

using sia::MilpModel;
using sia::MilpParams;
using sia::MilpSense;
using sia::MilpStatus;

/// A round-like instance: per job a list of options (type, gpus, cost); capacity per type.
struct Option {
  int type;
  int gpus;
  double cost;
};
struct Instance {
  MilpSense sense = MilpSense::maximize;
  double offset = 0.0;
  std::vector<int> capacity;              // per type
  std::vector<std::vector<Option>> jobs;  // options per job
  std::vector<char> forced;               // job must get one option (choice row lower = 1)
  std::vector<int> pinned;                // option index fixed to 1 (column bounds), -1 none
};

struct Built {
  MilpModel model;
  std::vector<std::vector<int>> col;  // per job, per option
  std::vector<int> cap_row;           // per type
  std::vector<int> choice_row;        // per job
};

/// `usage_scale` multiplies GPU counts and capacities (same problem; 0.5 makes the usages
/// fractional, which sends the native backend to its branch and bound instead of its DP).
Built build(const Instance& in, double usage_scale = 1.0) {
  Built b;
  auto& m = b.model;
  m.sense = in.sense;
  m.obj_offset = in.offset;
  for (std::size_t j = 0; j < in.jobs.size(); ++j) {
    b.col.emplace_back();
    for (std::size_t o = 0; o < in.jobs[j].size(); ++o) {
      const bool pin = !in.pinned.empty() && in.pinned[j] == static_cast<int>(o);
      b.col.back().push_back(m.add_col(in.jobs[j][o].cost, pin ? 1.0 : 0.0, 1.0, true,
                                       "x_" + std::to_string(j) + "_" + std::to_string(o)));
    }
  }
  for (std::size_t j = 0; j < in.jobs.size(); ++j) {
    const bool forced = !in.forced.empty() && in.forced[j];
    const int r = m.add_row(forced ? 1.0 : 0.0, 1.0, "job_" + std::to_string(j));
    b.choice_row.push_back(r);
    for (int c : b.col[j]) m.add_entry(r, c, 1.0);
  }
  for (std::size_t t = 0; t < in.capacity.size(); ++t) {
    const int r = m.add_row(-MilpModel::inf, usage_scale * in.capacity[t], "cap_" + std::to_string(t));
    b.cap_row.push_back(r);
    for (std::size_t j = 0; j < in.jobs.size(); ++j)
      for (std::size_t o = 0; o < in.jobs[j].size(); ++o)
        if (in.jobs[j][o].type == static_cast<int>(t)) m.add_entry(r, b.col[j][o], usage_scale * in.jobs[j][o].gpus);
  }
  return b;
}

/// Exhaustive optimum (in the model's sense, incl. offset); nullopt when infeasible.
std::optional<double> brute_force(const Instance& in) {
  const double sgn = in.sense == MilpSense::maximize ? 1.0 : -1.0;
  std::vector<int> used(in.capacity.size(), 0);
  double best = -std::numeric_limits<double>::infinity();
  bool found = false;
  std::function<void(std::size_t, double)> rec = [&](std::size_t j, double acc) {
    if (j == in.jobs.size()) {
      found = true;
      best = std::max(best, acc);
      return;
    }
    const bool forced = !in.forced.empty() && in.forced[j];
    const int pin = in.pinned.empty() ? -1 : in.pinned[j];
    if (!forced && pin < 0) rec(j + 1, acc);
    for (std::size_t o = 0; o < in.jobs[j].size(); ++o) {
      if (pin >= 0 && static_cast<int>(o) != pin) continue;
      const auto& op = in.jobs[j][o];
      if (used[static_cast<std::size_t>(op.type)] + op.gpus > in.capacity[static_cast<std::size_t>(op.type)]) continue;
      used[static_cast<std::size_t>(op.type)] += op.gpus;
      rec(j + 1, acc + sgn * op.cost);
      used[static_cast<std::size_t>(op.type)] -= op.gpus;
    }
  };
  rec(0, 0.0);
  if (!found) return std::nullopt;
  return in.offset + sgn * best;
}

/// A random round-like instance. `mode` varies the adversarial flavour.
Instance random_instance(std::mt19937& rng, int mode) {
  std::uniform_int_distribution<int> njobs(1, 5), ntypes(1, 3), capd(0, 9);
  Instance in;
  const int T = ntypes(rng), J = njobs(rng);
  for (int t = 0; t < T; ++t) in.capacity.push_back(capd(rng));
  const double p = (mode % 2 == 0) ? 1.0 : -0.5;
  const double lambda = 1.1;
  in.sense = p > 0 ? MilpSense::maximize : MilpSense::minimize;
  in.offset = p > 0 ? -lambda * J : lambda * J;
  std::uniform_real_distribution<double> speed(0.3, 1.0), gain(1.0, 3.0);
  std::uniform_int_distribution<int> coin(0, 3);
  for (int j = 0; j < J; ++j) {
    std::vector<Option> ops;
    for (int t = 0; t < T; ++t) {
      // Ties: in mode 2/3 all jobs share the same speed curve, values rounded to 1 decimal.
      const double base = (mode >= 2) ? 1.0 : gain(rng);
      const double sp = (mode >= 2) ? 0.7 : speed(rng);
      for (int g = 1; g <= 8; g *= 2) {
        if (coin(rng) == 0 && mode < 4) continue;
        double G = base * std::pow(g, sp);
        if (mode >= 2) G = std::round(G * 10.0) / 10.0;
        const double u = std::pow(G, p);
        ops.push_back({t, g, p > 0 ? u + lambda : u - lambda});
      }
    }
    in.jobs.push_back(ops);
  }
  std::uniform_int_distribution<int> pick(0, 9);
  in.forced.assign(static_cast<std::size_t>(J), 0);
  in.pinned.assign(static_cast<std::size_t>(J), -1);
  for (int j = 0; j < J; ++j) {
    if (in.jobs[static_cast<std::size_t>(j)].empty()) continue;
    const int r = pick(rng);
    if (r == 0) in.forced[static_cast<std::size_t>(j)] = 1;
    if (r == 1)
      in.pinned[static_cast<std::size_t>(j)] =
          std::uniform_int_distribution<int>(0, static_cast<int>(in.jobs[static_cast<std::size_t>(j)].size()) - 1)(rng);
  }
  return in;
}

void check_solution(const Built& b, const sia::MilpResult& r) {
  REQUIRE(r.values.size() == static_cast<std::size_t>(b.model.num_cols()));
  CHECK(b.model.is_feasible(r.values, 1e-9));
  CHECK(r.objective == doctest::Approx(b.model.objective_of(r.values)));
}

}  // namespace

TEST_CASE("native.exhaustive.random_small") {
  auto solver = sia::make_milp_solver("native");
  std::mt19937 rng(12345);
  int infeasible = 0, optimal = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const Instance in = random_instance(rng, iter % 5);
    const Built b = build(in, (iter / 5) % 2 == 0 ? 1.0 : 0.5);
    const auto expect = brute_force(in);
    MilpParams params;
    params.relative_gap = 0.0;
    const auto r = solver->solve(b.model, params);
    CAPTURE(iter);
    if (!expect) {
      CHECK(r.status == MilpStatus::infeasible);
      ++infeasible;
      continue;
    }
    REQUIRE(r.status == MilpStatus::optimal);
    ++optimal;
    check_solution(b, r);
    CHECK(r.objective == doctest::Approx(*expect).epsilon(1e-9));
    // The bound is proven: on the right side of the optimum.
    if (in.sense == MilpSense::maximize)
      CHECK(r.best_bound >= *expect - 1e-7);
    else
      CHECK(r.best_bound <= *expect + 1e-7);
  }
  CHECK(optimal > 250);
  CHECK(infeasible > 0);
}

TEST_CASE("native.exhaustive.default_gap") {
  auto solver = sia::make_milp_solver("native");
  std::mt19937 rng(777);
  for (int iter = 0; iter < 200; ++iter) {
    const Instance in = random_instance(rng, iter % 5);
    const Built b = build(in, (iter / 5) % 2 == 0 ? 1.0 : 0.5);
    const auto expect = brute_force(in);
    const auto r = solver->solve(b.model);
    CAPTURE(iter);
    if (!expect) {
      CHECK(r.status == MilpStatus::infeasible);
      continue;
    }
    REQUIRE(r.status == MilpStatus::optimal);
    check_solution(b, r);
    CHECK(std::abs(r.objective - *expect) <= 1e-4 * std::abs(*expect) + 1e-9);
  }
}

TEST_CASE("native.exhaustive.capacity_exactly_full_identical_jobs") {
  // Many identical jobs whose options exactly fill the capacity in several ways.
  auto solver = sia::make_milp_solver("native");
  for (int J = 1; J <= 7; ++J) {
    for (int cap = 0; cap <= 9; ++cap) {
      Instance in;
      in.capacity = {cap};
      for (int j = 0; j < J; ++j) in.jobs.push_back({{0, 1, 1.0}, {0, 2, 2.0}, {0, 4, 4.0}});
      const Built b = build(in, cap % 2 == 0 ? 1.0 : 0.5);
      const auto expect = brute_force(in);
      MilpParams params;
      params.relative_gap = 0.0;
      const auto r = solver->solve(b.model, params);
      CAPTURE(J);
      CAPTURE(cap);
      REQUIRE(r.status == MilpStatus::optimal);
      check_solution(b, r);
      CHECK(r.objective == doctest::Approx(*expect));
    }
  }
}

TEST_CASE("native.prices.one_type_linear") {
  // One type with 10 GPUs; job j gets value w_j * g for g in {1,2,4,8} (linear utility).
  // LP: fill by decreasing w; the fractional job's w is the price of a GPU.
  Instance in;
  in.capacity = {10};
  const double w[] = {3.0, 2.0, 1.0};
  for (double wj : w) in.jobs.push_back({{0, 1, wj}, {0, 2, 2 * wj}, {0, 4, 4 * wj}, {0, 8, 8 * wj}});
  const Built b = build(in);
  auto solver = sia::make_milp_solver("native");
  const auto r = solver->solve(b.model);
  REQUIRE(r.status == MilpStatus::optimal);
  // Job 0 takes 8, job 1 the remaining 2 (LP: job 1 fractional between 2 and 4 -> price 2).
  CHECK(r.objective == doctest::Approx(8 * 3.0 + 2 * 2.0));
  REQUIRE(r.row_duals.size() == static_cast<std::size_t>(b.model.num_rows()));
  CHECK(r.row_duals[static_cast<std::size_t>(b.cap_row[0])] == doctest::Approx(2.0));
  // Choice-row duals: job 0 keeps 8*(3-2) = 8 of reduced value, job 1 none, job 2 none.
  CHECK(r.row_duals[static_cast<std::size_t>(b.choice_row[0])] == doctest::Approx(8.0));
  CHECK(r.row_duals[static_cast<std::size_t>(b.choice_row[1])] == doctest::Approx(0.0).epsilon(1e-9));
}

TEST_CASE("native.prices.two_types_minimise") {
  // Minimisation (p < 0 style): cost = -w*g. Type 0 has 4 GPUs, type 1 has 2 GPUs.
  // Job A: only type 0, value 1/GPU; job B: type 0 value 0.5/GPU or type 1 value 3/GPU.
  Instance in;
  in.sense = MilpSense::minimize;
  in.capacity = {4, 2};
  in.jobs.push_back({{0, 1, -1.0}, {0, 2, -2.0}, {0, 4, -4.0}, {0, 8, -8.0}});
  in.jobs.push_back({{0, 1, -0.5}, {0, 2, -1.0}, {0, 4, -2.0}, {1, 1, -3.0}, {1, 2, -6.0}, {1, 4, -12.0}});
  const Built b = build(in);
  auto solver = sia::make_milp_solver("native");
  const auto r = solver->solve(b.model);
  REQUIRE(r.status == MilpStatus::optimal);
  CHECK(r.objective == doctest::Approx(-10.0));
  // LP: job A fractional between 4 and 8 GPUs of type 0 -> price 1 per GPU of type 0; job B
  // fractional between 2 and 4 GPUs of type 1 -> price 3. In minimisation sense d obj / d cap < 0.
  CHECK(r.row_duals[static_cast<std::size_t>(b.cap_row[0])] == doctest::Approx(-1.0));
  CHECK(r.row_duals[static_cast<std::size_t>(b.cap_row[1])] == doctest::Approx(-3.0));
}

TEST_CASE("native.pins_and_forced") {
  auto solver = sia::make_milp_solver("native");
  SUBCASE("pin keeps its configuration even when worse") {
    Instance in;
    in.capacity = {4};
    in.jobs.push_back({{0, 1, 1.0}, {0, 4, 10.0}});
    in.jobs.push_back({{0, 2, 1.0}, {0, 4, 2.0}});
    in.pinned = {-1, 0};
    const Built b = build(in);
    const auto r = solver->solve(b.model);
    REQUIRE(r.status == MilpStatus::optimal);
    CHECK(r.values[static_cast<std::size_t>(b.col[1][0])] == 1.0);
    CHECK(r.objective == doctest::Approx(2.0));  // job 0 can only take 1 GPU beside the pin
  }
  SUBCASE("pins over capacity are infeasible") {
    Instance in;
    in.capacity = {3};
    in.jobs.push_back({{0, 2, 1.0}});
    in.jobs.push_back({{0, 2, 1.0}});
    in.pinned = {0, 0};
    const auto r = solver->solve(build(in).model);
    CHECK(r.status == MilpStatus::infeasible);
  }
  SUBCASE("forced jobs that cannot all fit are infeasible") {
    Instance in;
    in.capacity = {4, 2};
    for (int j = 0; j < 4; ++j) in.jobs.push_back({{0, 2, 1.0}, {1, 2, 1.0}});
    in.forced = {1, 1, 1, 1};
    const auto r = solver->solve(build(in).model);
    CHECK(r.status == MilpStatus::infeasible);
  }
  SUBCASE("forced job takes a negative-value option") {
    Instance in;
    in.capacity = {4};
    in.jobs.push_back({{0, 1, -1.0}, {0, 2, -0.5}});
    in.jobs.push_back({{0, 4, 5.0}});
    in.forced = {1, 0};
    const Built b = build(in);
    const auto r = solver->solve(b.model);
    REQUIRE(r.status == MilpStatus::optimal);
    CHECK(r.objective == doctest::Approx(-0.5));
  }
  SUBCASE("reservation: capacity zero leaves everyone out") {
    Instance in;
    in.capacity = {0};
    in.jobs.push_back({{0, 1, 1.0}});
    const auto r = solver->solve(build(in).model);
    REQUIRE(r.status == MilpStatus::optimal);
    CHECK(r.objective == doctest::Approx(0.0));
  }
}

TEST_CASE("native.larger.bound_and_limits") {
  // 300 jobs, 3 types: bound within the gap, time limit honoured with a valid allocation.
  std::mt19937 rng(99);
  Instance in;
  in.sense = MilpSense::minimize;
  in.capacity = {96, 96, 64};
  std::uniform_real_distribution<double> gain(1.0, 4.0), sp(0.3, 0.95);
  for (int j = 0; j < 300; ++j) {
    std::vector<Option> ops;
    for (int t = 0; t < 3; ++t) {
      const double a = gain(rng), s = sp(rng);
      for (int g = 1; g <= 16; g *= 2) ops.push_back({t, g, std::pow(a * std::pow(g, s), -0.5) - 1.1});
    }
    in.jobs.push_back(ops);
  }
  in.offset = 1.1 * 300;
  const Built b = build(in);
  auto solver = sia::make_milp_solver("native");
  const auto r = solver->solve(b.model);
  REQUIRE(r.status == MilpStatus::optimal);
  check_solution(b, r);
  CHECK(r.best_bound <= r.objective + 1e-9);
  CHECK(r.objective - r.best_bound <= 1e-4 * std::abs(r.objective) + 1e-9);
  for (int t = 0; t < 3; ++t)
    CHECK(r.row_duals[static_cast<std::size_t>(b.cap_row[static_cast<std::size_t>(t)])] <= 0.0);

  MilpParams tight;
  tight.time_limit = std::chrono::milliseconds(0);
  const auto r0 = solver->solve(b.model, tight);
  CHECK((r0.status == MilpStatus::feasible || r0.status == MilpStatus::optimal));
  check_solution(b, r0);

  // Warm start on the same instance object: same answer.
  const auto r2 = solver->solve(b.model);
  REQUIRE(r2.status == MilpStatus::optimal);
  CHECK(r2.objective == doctest::Approx(r.objective).epsilon(1e-4));
}

TEST_CASE("native.agrees_with_cbc_and_glpk") {
  // Medium instances (too large for exhaustive search): every other backend's objective must be
  // within the gap of native's, and native's proven bound must not contradict their solutions.
  std::vector<std::unique_ptr<sia::MilpSolver>> others;
  for (const auto& name : sia::available_milp_solvers())
    if (name == "cbc" || name == "glpk") others.push_back(sia::make_milp_solver(name));
  if (others.empty()) {
    MESSAGE("neither CBC nor GLPK is built: nothing to compare with");
    return;
  }
  auto native = sia::make_milp_solver("native");
  std::mt19937 rng(2024);
  std::uniform_real_distribution<double> gain(1.0, 4.0), sp(0.3, 0.95);
  for (int iter = 0; iter < 12; ++iter) {
    Instance in;
    const double p = iter % 2 == 0 ? -0.5 : 1.0;
    in.sense = p > 0 ? MilpSense::maximize : MilpSense::minimize;
    in.capacity = {8 + 4 * (iter % 3), 8, 4 + 4 * (iter % 2)};
    const int J = 12 + iter;
    for (int j = 0; j < J; ++j) {
      std::vector<Option> ops;
      for (int t = 0; t < 3; ++t) {
        const double a = gain(rng), s = sp(rng);
        for (int g = 1; g <= 8; g *= 2) {
          const double u = std::pow(a * std::pow(g, s), p);
          ops.push_back({t, g, p > 0 ? u + 1.1 : u - 1.1});
        }
      }
      in.jobs.push_back(ops);
    }
    in.offset = p > 0 ? -1.1 * J : 1.1 * J;
    in.forced.assign(static_cast<std::size_t>(J), 0);
    in.pinned.assign(static_cast<std::size_t>(J), -1);
    in.pinned[0] = 0;
    in.forced[1] = 1;
    const Built b = build(in);
    const auto rn = native->solve(b.model);
    CAPTURE(iter);
    REQUIRE(rn.status == MilpStatus::optimal);
    check_solution(b, rn);
    for (auto& o : others) {
      CAPTURE(o->name());
      const auto ro = o->solve(b.model);
      REQUIRE(ro.status == MilpStatus::optimal);
      const double tol = 1e-4 * std::abs(rn.objective) + 1e-4 * std::abs(ro.objective) + 1e-9;
      CHECK(std::abs(rn.objective - ro.objective) <= tol);
      // Native's bound is proven: no solution beats it.
      if (in.sense == MilpSense::maximize)
        CHECK(ro.objective <= rn.best_bound + 1e-9);
      else
        CHECK(ro.objective >= rn.best_bound - 1e-9);
    }
  }
}

TEST_CASE("native.time_limit_branch_and_bound") {
  // Fractional usages keep the DP out: a hard instance for the branch and bound must stop near the
  // limit with a valid allocation and a bound on the right side.
  std::mt19937 rng(5);
  Instance in;
  in.capacity = {37, 29, 23};
  std::uniform_real_distribution<double> gain(1.0, 4.0), sp(0.3, 0.95);
  for (int j = 0; j < 60; ++j) {
    std::vector<Option> ops;
    for (int t = 0; t < 3; ++t) {
      const double a = gain(rng), s = sp(rng);
      for (int g = 1; g <= 8; g *= 2) ops.push_back({t, g, std::pow(a * std::pow(g, s), 0.5) + 1.1});
    }
    in.jobs.push_back(ops);
  }
  const Built b = build(in, 0.37);
  auto solver = sia::make_milp_solver("native");
  MilpParams params;
  params.relative_gap = 0.0;
  params.time_limit = std::chrono::milliseconds(50);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = solver->solve(b.model, params);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(secs < 2.0);  // generous: sanitizers, shared machine
  REQUIRE((r.status == MilpStatus::feasible || r.status == MilpStatus::optimal));
  check_solution(b, r);
  CHECK(r.best_bound >= r.objective - 1e-9);
}

TEST_CASE("native.fallback_general_model") {
  // Not round-shaped (general integer, negative coefficient): small LP-based branch and bound.
  MilpModel m;
  m.sense = MilpSense::maximize;
  const int x = m.add_col(5.0, 0.0, 10.0, true, "x");
  const int y = m.add_col(4.0, 0.0, 10.0, true, "y");
  const int r1 = m.add_row(-MilpModel::inf, 24.0);
  m.add_entry(r1, x, 6.0);
  m.add_entry(r1, y, 4.0);
  const int r2 = m.add_row(-MilpModel::inf, 6.0);
  m.add_entry(r2, x, 1.0);
  m.add_entry(r2, y, 2.0);
  const int r3 = m.add_row(-1.0, MilpModel::inf);
  m.add_entry(r3, x, -1.0);
  m.add_entry(r3, y, 1.0);
  auto solver = sia::make_milp_solver("native");
  const auto r = solver->solve(m);
  REQUIRE(r.status == MilpStatus::optimal);
  CHECK(m.is_feasible(r.values));
  // y >= x - 1 rules out (4,0) and (3,1); (2,2) = 18 is the integer optimum.
  CHECK(r.objective == doctest::Approx(18.0));
}

TEST_CASE("native.warm_start_params") {
  // MilpParams::start_values / start_duals: any start (right, partial with NaN, infeasible, of the
  // wrong size) gives the exhaustive optimum.
  std::mt19937 rng(321);
  auto solver = sia::make_milp_solver("native");
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int iter = 0; iter < 150; ++iter) {
    const Instance in = random_instance(rng, iter % 5);
    const Built b = build(in);
    const auto expect = brute_force(in);
    CAPTURE(iter);
    MilpParams params;
    params.relative_gap = 0.0;
    const auto cold = solver->solve(b.model, params);
    if (!expect) {
      CHECK(cold.status == MilpStatus::infeasible);
      continue;
    }
    REQUIRE(cold.status == MilpStatus::optimal);
    for (int variant = 0; variant < 4; ++variant) {
      MilpParams p = params;
      const auto n = static_cast<std::size_t>(b.model.num_cols());
      if (variant == 0) {  // the optimum and its duals
        p.start_values = cold.values;
        p.start_duals = cold.row_duals;
      } else if (variant == 1) {  // half unknown, random duals
        p.start_values = cold.values;
        for (std::size_t j = 0; j < n; j += 2) p.start_values[j] = std::numeric_limits<double>::quiet_NaN();
        p.start_duals.assign(static_cast<std::size_t>(b.model.num_rows()), 0.0);
        for (double& d : p.start_duals) d = (in.sense == MilpSense::maximize ? 1.0 : -1.0) * 3.0 * u(rng);
      } else if (variant == 2) {  // every column at 1: infeasible
        p.start_values.assign(n, 1.0);
      } else {  // wrong sizes: ignored
        p.start_values.assign(n + 1, 1.0);
        p.start_duals.assign(1, 5.0);
      }
      const auto r = sia::make_milp_solver("native")->solve(b.model, p);
      CAPTURE(variant);
      REQUIRE(r.status == MilpStatus::optimal);
      check_solution(b, r);
      CHECK(r.objective == doctest::Approx(*expect).epsilon(1e-9));
    }
  }
}
