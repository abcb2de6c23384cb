// The round: Table 1 of the paper on every backend, statuses, pins, fallback, validation.
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/goodput_table.hpp>
#include <sia/milp/factory.hpp>
#include <sia/round.hpp>

#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "unit/brute_force_solver.hpp"
#include "unit/milp_test_support.hpp"
#include "unit/table1.hpp"

namespace {

using namespace sia;

using test::table1_cluster;
using test::table1_jobs;

// Backends under test: the library's own plus the brute-force reference (not the stubs and
// fault-injecting solvers that other tests register in the same process).
std::vector<std::string> backends_under_test() {
  test::register_brute_force_solver();
  auto out = test::real_milp_backends();
  out.push_back("bruteforce");
  return out;
}

void check_table1(double p, double expected_objective) {
  const auto cluster = table1_cluster();
  const auto jobs = table1_jobs();
  for (const auto& backend : backends_under_test()) {
    CAPTURE(backend);
    RoundOptions o;
    o.p = p;
    o.backend = backend;
    const auto r = run_round(cluster, jobs, o);
    CHECK(r.status == RoundStatus::optimal);
    CHECK_FALSE(r.fallback);
    CHECK(r.backend == backend);
    REQUIRE(r.decisions.size() == 2);
    CHECK(r.decisions[0].job == "J1");
    REQUIRE(r.decisions[0].config);
    CHECK(*r.decisions[0].config == ConfigurationSpec{1, 1, 4});
    CHECK(r.decisions[0].gpus == 4);
    REQUIRE(r.decisions[1].config);
    CHECK(*r.decisions[1].config == ConfigurationSpec{0, 1, 2});
    CHECK(r.decisions[0].changed);
    CHECK(r.objective == doctest::Approx(expected_objective).epsilon(1e-9));
    CHECK(r.gpus_used == std::vector<int>{2, 4});
    CHECK(r.unmet.empty());
  }
}

}  // namespace

TEST_CASE("round.table1.p_positive") { check_table1(1.0, 8.0); }
TEST_CASE("round.table1.p_negative") { check_table1(-0.5, 1.0); }

namespace {

// A backend that always fails / returns garbage, to exercise the fallback.
class ScriptedSolver final : public MilpSolver {
 public:
  enum class Mode { error, no_solution, over_capacity, throws, duals } mode;
  explicit ScriptedSolver(Mode m) : mode(m) {}

 private:
  std::string_view do_name() const noexcept override { return "scripted"; }
  MilpResult do_solve(const MilpModel& m, const MilpParams& p) override {
    MilpResult r;
    switch (mode) {
      case Mode::error:
        r.status = MilpStatus::error;
        r.message = "boom";
        return r;
      case Mode::no_solution:
        r.status = MilpStatus::no_solution;
        r.message = "time limit";
        return r;
      case Mode::throws:
        throw std::runtime_error("kaput");
      case Mode::over_capacity:
        r.status = MilpStatus::optimal;
        r.values.assign(static_cast<std::size_t>(m.num_cols()), 1.0);  // everything at once
        r.objective = m.objective_of(r.values);
        return r;
      case Mode::duals: {
        r = test::BruteForceSolver().solve(m, p);
        r.row_duals.assign(static_cast<std::size_t>(m.num_rows()), 0.0);
        for (std::size_t i = 0; i < r.row_duals.size(); ++i) r.row_duals[i] = 0.25;
        return r;
      }
    }
    return r;
  }
};

JobSpec table_job(std::string id, std::vector<std::pair<std::string, std::pair<int, double>>> rows) {
  GoodputTable t;
  for (auto& [type, gv] : rows) t.set(type, gv.first, gv.second);
  return JobSpec(std::move(id)).goodput_model(t);
}

RoundOptions brute(double p = -0.5) {
  test::register_brute_force_solver();
  RoundOptions o;
  o.p = p;
  o.backend = "bruteforce";
  return o;
}

bool all_within_capacity(const ClusterSpec& c, const RoundResult& r) {
  std::vector<int> used(c.types.size(), 0);
  for (const auto& d : r.decisions)
    if (d.config) used[static_cast<std::size_t>(d.config->type)] += d.config->gpus;
  for (std::size_t t = 0; t < used.size(); ++t)
    if (used[t] > c.types[t].num_nodes() * c.types[t].gpus_per_node() - c.reserved_gpus(static_cast<int>(t)))
      return false;
  return used == r.gpus_used;
}

}  // namespace

TEST_CASE("round.fallback.backend_failures") {
  const auto cluster = table1_cluster();
  auto jobs = table1_jobs();
  // J2 is non-preemptible and running on (1,1,B): the fallback must keep it there.
  jobs[1].preemptible(false).current(CurrentAllocation{1, 1, 1, {}});
  for (auto mode : {ScriptedSolver::Mode::error, ScriptedSolver::Mode::no_solution, ScriptedSolver::Mode::over_capacity,
                    ScriptedSolver::Mode::throws}) {
    CAPTURE(static_cast<int>(mode));
    ScriptedSolver s(mode);
    const auto r = run_round(cluster, jobs, RoundOptions{}, s);
    CHECK(r.fallback);
    CHECK(r.status == (mode == ScriptedSolver::Mode::no_solution ? RoundStatus::feasible : RoundStatus::error));
    CHECK_FALSE(r.message.empty());
    REQUIRE(r.decisions[1].config);
    CHECK(*r.decisions[1].config == ConfigurationSpec{1, 1, 1});
    CHECK_FALSE(r.decisions[1].changed);
    CHECK(all_within_capacity(cluster, r));
    CHECK(r.decisions[0].config);  // J1 still gets something that fits
    CHECK(r.prices.empty());
  }
}

// Prices have one definition whatever the backend (docs/decision.md): the capacity-row duals of the
// round's LP relaxation computed by one routine. A backend whose own duals say otherwise (the
// scripted 0.25) does not change them; they used to be copied from each backend (8 of 20 rounds
// differed between backends).
TEST_CASE("round.prices.backend_independent") {
  const auto cluster = table1_cluster();
  const auto jobs = table1_jobs();
  for (const double p : {1.0, -0.5}) {
    CAPTURE(p);
    ScriptedSolver s(ScriptedSolver::Mode::duals);
    RoundOptions o;
    o.p = p;
    const auto scripted = run_round(cluster, jobs, o, s);
    o.backend = "native";
    const auto native = run_round(cluster, jobs, o);
    REQUIRE(scripted.prices.size() == 2);
    REQUIRE(native.prices.size() == 2);
    for (std::size_t t = 0; t < 2; ++t) {
      CHECK(scripted.prices[t] == native.prices[t]);
      CHECK(native.prices[t] >= 0.0);  // positive = more GPUs help, for either sign of p
    }
  }
}

TEST_CASE("round.non_preemptible.running_is_kept") {
  const auto cluster = table1_cluster();
  auto jobs = table1_jobs();
  jobs[0].preemptible(false).current(CurrentAllocation{1, 2, 1, {}}).age_s(1000).restarts(0);
  const auto r = run_round(cluster, jobs, brute(1.0));
  CHECK(r.status == RoundStatus::optimal);
  REQUIRE(r.decisions[0].config);
  CHECK(*r.decisions[0].config == ConfigurationSpec{1, 1, 2});
  CHECK_FALSE(r.decisions[0].changed);
  REQUIRE(r.decisions[1].config);
  CHECK(*r.decisions[1].config == ConfigurationSpec{0, 1, 2});
  CHECK(r.objective == doctest::Approx(3 + 4));
}

TEST_CASE("round.non_preemptible.waiting_must_run") {
  // One 4-GPU node. "big" scores best on 4 GPUs; "small" is non-preemptible, waiting, and only
  // runs on 1 GPU: it must get it even though giving everything to "big" scores more.
  ClusterSpec c;
  c.types = {GpuTypeSpec("B", 1, 4)};
  std::vector<JobSpec> jobs = {table_job("big", {{"B", {1, 1}}, {"B", {4, 100}}}),
                               table_job("small", {{"B", {1, 1}}}).preemptible(false)};
  auto r = run_round(c, jobs, brute(1.0));
  CHECK(r.status == RoundStatus::optimal);
  REQUIRE(r.decisions[1].config);
  REQUIRE(r.decisions[0].config);
  CHECK(r.decisions[0].config->gpus == 1);
  // Two waiting non-preemptible 4-GPU jobs on one 4-GPU node: one is unmet.
  std::vector<JobSpec> two = {table_job("x", {{"B", {4, 1}}}).preemptible(false),
                              table_job("y", {{"B", {4, 2}}}).preemptible(false)};
  r = run_round(c, two, brute(1.0));
  CHECK(r.status == RoundStatus::infeasible);
  REQUIRE(r.unmet.size() == 1);
  const std::size_t served = r.unmet[0] == "x" ? 1 : 0;  // both normalise to G = 1: a tie
  CHECK(r.decisions[served].config);
  CHECK_FALSE(r.decisions[1 - served].config);
  CHECK(r.message.find(r.unmet[0]) != std::string::npos);
}

TEST_CASE("round.non_preemptible.pins_over_capacity") {
  // A reservation grew under two running non-preemptible jobs: the first keeps its GPUs.
  ClusterSpec c;
  c.types = {GpuTypeSpec("B", 1, 4)};
  c.reserved = {1};
  std::vector<JobSpec> jobs = {
      table_job("a", {{"B", {2, 1}}}).preemptible(false).current(CurrentAllocation{0, 2, 1, {}}),
      table_job("b", {{"B", {2, 1}}}).preemptible(false).current(CurrentAllocation{0, 2, 1, {}})};
  const auto r = run_round(c, jobs, brute());
  CHECK(r.status == RoundStatus::infeasible);
  CHECK(r.unmet == std::vector<std::string>{"b"});
  CHECK(r.decisions[0].config);
  CHECK_FALSE(r.decisions[1].config);
  CHECK(r.decisions[1].changed);
}

TEST_CASE("round.rigid_footprint_and_batch") {
  ClusterSpec c;
  c.types = {GpuTypeSpec("B", 1, 4)};
  GoodputTable t;
  t.set("B", 3, 5.0);
  std::vector<JobSpec> jobs = {
      JobSpec("r")
          .kind(JobKind::rigid)
          .min_gpus(3)
          .max_gpus(3)
          .goodput_fn([&](const GpuTypeSpec& g, const ConfigurationSpec& cfg) { return t.goodput(g, cfg); },
                      [](const GpuTypeSpec&, const ConfigurationSpec& cfg) {
                        return BatchChoice{cfg.gpus * 32LL, 32, 0};
                      })};
  const auto r = run_round(c, jobs, brute());
  REQUIRE(r.decisions[0].config);
  CHECK(*r.decisions[0].config == ConfigurationSpec{0, 1, 4});
  CHECK(r.decisions[0].gpus == 3);
  REQUIRE(r.decisions[0].batch);
  CHECK(r.decisions[0].batch->global_batch == 96);
  CHECK(r.gpus_used == std::vector<int>{3});  // the GPUs it uses, not its footprint
}

TEST_CASE("round.restart_factor_keeps_job") {
  // J1 runs on (1,2,B) with age 60 s, 1 restart, cost 30 s: r = 30/90 = 1/3, so (1,4,B) is worth
  // 4/3 < 3 and J1 stays. Without the penalty it would move.
  const auto cluster = table1_cluster();
  auto jobs = table1_jobs();
  jobs[0].current(CurrentAllocation{1, 2, 1, {}}).age_s(60).restarts(1).restart_cost_s(30);
  const auto r = run_round(cluster, jobs, brute(1.0));
  REQUIRE(r.decisions[0].config);
  CHECK(*r.decisions[0].config == ConfigurationSpec{1, 1, 2});
  CHECK_FALSE(r.decisions[0].changed);
  CHECK(r.objective == doctest::Approx(3 + 4));
}

TEST_CASE("round.empty_and_unusable") {
  const auto cluster = table1_cluster();
  auto r = run_round(cluster, std::vector<JobSpec>{}, brute());
  CHECK(r.status == RoundStatus::optimal);
  CHECK(r.decisions.empty());
  CHECK(r.objective == 0.0);
  std::vector<JobSpec> none = {JobSpec("nothing")};
  r = run_round(cluster, none, brute());
  CHECK(r.status == RoundStatus::optimal);
  CHECK_FALSE(r.decisions[0].config);
  CHECK(r.objective == doctest::Approx(1.1));  // p < 0: + lambda per job without GPUs
  r = run_round(cluster, none, brute(2.0));
  CHECK(r.objective == doctest::Approx(-1.1));
}

TEST_CASE("round.validation") {
  const auto cluster = table1_cluster();
  // RoundOptions::strict: the whole round throws. Not strict: a job-level error rejects the job
  // alone (its field and reason name the same thing); a round-level one still throws.
  auto expect = [&](std::vector<JobSpec> jobs, const std::string& needle, RoundOptions o = brute()) {
    o.strict = true;
    try {
      (void)run_round(cluster, jobs, o);
      FAIL("no exception; expected one mentioning '" << needle << "'");
    } catch (const InvalidArgument& e) {
      CHECK_MESSAGE(std::string(e.what()).find(needle) != std::string::npos, e.what());
    }
    o.strict = false;
    try {
      const RoundResult r = run_round(cluster, jobs, o);
      REQUIRE(r.rejected.size() == 1);
      const std::string what = r.rejected[0].field + " " + r.rejected[0].reason;
      CHECK_MESSAGE(what.find(needle) != std::string::npos, what);
      REQUIRE(r.decisions.size() == jobs.size());
      CHECK(r.decisions[r.rejected[0].index].reason == PendingReason::rejected);
      CHECK_FALSE(r.decisions[r.rejected[0].index].config);
    } catch (const InvalidArgument& e) {
      CHECK_MESSAGE(std::string(e.what()).find(needle) != std::string::npos, e.what());
    }
  };
  auto ok = [] { return table_job("ok", {{"A", {1, 1}}}); };
  expect({ok(), ok()}, "duplicate job id");
  expect({JobSpec("")}, "id is empty");
  expect({ok().min_gpus(4).max_gpus(2)}, "min_gpus");
  expect({ok().min_gpus(0)}, "min_gpus");
  expect({ok().kind(JobKind::rigid).min_gpus(1).max_gpus(2)}, "rigid");
  expect({ok().restarts(-1)}, "restarts");
  expect({ok().age_s(-5)}, "age_s");
  expect({ok().age_s(std::nan(""))}, "age_s");
  expect({ok().restart_cost_s(-1)}, "restart_cost_s");
  expect({ok().pipeline_size(0)}, "pipeline_size");
  expect({ok().max_gpus_ever(-2)}, "max_gpus_ever");
  expect({ok().current(CurrentAllocation{5, 1, 1, {}})}, "current.gpu_type");
  expect({ok().current(CurrentAllocation{0, 0, 1, {}})}, "current.gpus");
  expect({ok().current(CurrentAllocation{0, 3, 1, {}})}, "not a configuration");
  expect({ok().current(CurrentAllocation{0, 2, 1, {}}).preemptible(false)}, "goodput there is 0");
  expect(
      {table_job("neg", {{"A", {1, 1}}}).goodput_fn([](const GpuTypeSpec&, const ConfigurationSpec&) { return -1.0; })},
      "neg");
  expect({JobSpec("nan").goodput_fn([](const GpuTypeSpec&, const ConfigurationSpec&) { return std::nan(""); })}, "NaN");
  RoundOptions o = brute();
  o.p = 0;
  expect({ok()}, "RoundOptions.p", o);
  o = brute();
  o.lambda = 0;
  expect({ok()}, "lambda", o);
  o.lambda = std::numeric_limits<double>::infinity();
  expect({ok()}, "lambda", o);
  o = brute();
  o.relative_gap = -1;
  expect({ok()}, "relative_gap", o);
  o = brute();
  o.time_limit = std::chrono::milliseconds(-1);
  expect({ok()}, "time_limit", o);
  CHECK_THROWS_AS((void)run_round(ClusterSpec{}, std::vector<JobSpec>{ok()}, brute()), InvalidArgument);
  RoundOptions unknown;
  unknown.backend = "no-such-backend";
  CHECK_THROWS_AS((void)run_round(cluster, std::vector<JobSpec>{ok()}, unknown), BackendUnavailable);
}

TEST_CASE("round.status_strings") {
  CHECK(to_string(RoundStatus::optimal) == "optimal");
  CHECK(to_string(RoundStatus::feasible) == "feasible");
  CHECK(to_string(RoundStatus::infeasible) == "infeasible");
  CHECK(to_string(RoundStatus::error) == "error");
}

TEST_CASE("round.prices.real_backends") {
  // Table 1 with more demand than supply: capacity is worth something, never negative.
  const auto cluster = table1_cluster();
  auto jobs = table1_jobs();
  GoodputTable j3;
  j3.set("A", 1, 1).set("B", 1, 1).set("B", 2, 2);
  jobs.push_back(JobSpec("J3").goodput_model(j3));
  for (const auto& backend : backends_under_test()) {
    for (double p : {1.0, -0.5}) {
      CAPTURE(backend);
      CAPTURE(p);
      RoundOptions o;
      o.p = p;
      o.backend = backend;
      const auto r = run_round(cluster, jobs, o);
      CHECK(r.status == RoundStatus::optimal);
      if (r.prices.empty()) continue;  // backend without duals
      REQUIRE(r.prices.size() == 2);
      for (double x : r.prices) {
        CHECK(std::isfinite(x));
        CHECK(x >= -1e-9);
      }
      CHECK(r.prices[0] + r.prices[1] > 0.0);
      o.compute_prices = false;
      CHECK(run_round(cluster, jobs, o).prices.empty());
    }
  }
}
