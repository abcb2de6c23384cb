// Numbers of any magnitude (issue 14, part 3): λ far above the utilities, objectives near the top of
// the double range, gradient statistics near DBL_MAX. Every finite input is solved right: the same
// allocation as a moderate λ that ranks allocations the same way, the objective and bound counted
// with the caller's λ, and no backend aborting the process.
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/goodput/efficiency.hpp>
#include <sia/goodput/goodput_function.hpp>
#include <sia/goodput_table.hpp>
#include <sia/milp/factory.hpp>
#include <sia/round.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "io/model_json.hpp"

#include <nlohmann/json.hpp>

namespace {

using namespace sia;

ClusterSpec small_cluster() {
  ClusterSpec c;
  c.types = {GpuTypeSpec("A", 1, 2), GpuTypeSpec("B", 1, 4)};
  return c;
}

// `n` jobs of Table 1's two shapes: with n > 6 some must wait (6 GPUs).
std::vector<JobSpec> jobs_of(int n) {
  std::vector<JobSpec> jobs;
  for (int k = 0; k < n; ++k) {
    GoodputTable t;
    const double f = 1.0 + 0.1 * k;
    if (k % 2 == 0)
      t.set("A", 1, 1 * f).set("A", 2, 1 * f).set("B", 1, 2 * f).set("B", 2, 3 * f).set("B", 4, 4 * f);
    else
      t.set("A", 1, 2 * f).set("A", 2, 4 * f).set("B", 1, 1 * f).set("B", 2, 2 * f).set("B", 4, 3 * f);
    jobs.push_back(JobSpec("J" + std::to_string(k)).goodput_model(t));
  }
  return jobs;
}

int waiting(const RoundResult& r) {
  int w = 0;
  for (const auto& d : r.decisions) w += d.config ? 0 : 1;
  return w;
}

}  // namespace

TEST_CASE("round.numbers.huge_lambda_solved_right_on_every_backend") {
  // Before: λ >= 1e16 gave native and glpk `optimal` with a wrong allocation and bound, cbc
  // "infeasible" (greedy fallback), and λ = 1e300 aborted the process inside CBC's Clp.
  const auto cluster = small_cluster();
  for (int n : {2, 9}) {
    const auto jobs = jobs_of(n);
    for (double p : {1.0, -0.5}) {
      for (const auto& backend : available_milp_solvers()) {
        // Every job's best utility is 4 (p = 1) or 1 (p = -0.5): a λ above their sum T ranks allocations
        // exactly as any larger λ (one more job served always wins, then utility). λ = T + 1 gives the
        // reference allocation in moderate numbers, without the round's own λ clamp (which starts above
        // 2T + 1), from the same backend.
        const double ref_lambda = (p > 0 ? 4.0 : 1.0) * n + 1.0;
        RoundOptions ref_o;
        ref_o.p = p;
        ref_o.lambda = ref_lambda;
        ref_o.backend = backend;
        const auto ref = run_round(cluster, jobs, ref_o);
        REQUIRE(ref.status == RoundStatus::optimal);
        const int w = waiting(ref);
        CHECK((n == 2 ? w == 0 : w == 3));
        const double ref_utils = p > 0 ? ref.objective + ref_lambda * w : ref.objective - ref_lambda * w;
        for (double lambda : {1e16, 1e100, 1e300}) {
          CAPTURE(n);
          CAPTURE(p);
          CAPTURE(backend);
          CAPTURE(lambda);
          RoundOptions o = ref_o;
          o.lambda = lambda;
          o.backend = backend;
          const auto r = run_round(cluster, jobs, o);
          CHECK(r.status == RoundStatus::optimal);
          CHECK_FALSE(r.fallback);
          REQUIRE(r.decisions.size() == ref.decisions.size());
          for (std::size_t i = 0; i < r.decisions.size(); ++i) {
            CAPTURE(i);
            CHECK(r.decisions[i].gpus == ref.decisions[i].gpus);
            CHECK(r.decisions[i].config.has_value() == ref.decisions[i].config.has_value());
            if (r.decisions[i].config && ref.decisions[i].config)
              CHECK(r.decisions[i].config->type == ref.decisions[i].config->type);
          }
          const double expected = p > 0 ? ref_utils - lambda * w : ref_utils + lambda * w;
          CHECK(r.objective == doctest::Approx(expected).epsilon(1e-12));
          // The bound is proven and on the right side, and proves the gap.
          const double slack = 1e-12 * std::abs(r.objective) + 1e-9;
          if (p > 0)
            CHECK(r.best_bound >= r.objective - slack);
          else
            CHECK(r.best_bound <= r.objective + slack);
          CHECK(std::abs(r.best_bound - r.objective) <= o.relative_gap * std::abs(r.objective) + 1e-9);
        }
      }
    }
  }
}

TEST_CASE("round.numbers.lambda_below_utilities_unchanged") {
  // λ inside the utilities' range keeps its exact meaning: nothing is rescaled or clamped.
  const auto cluster = small_cluster();
  const auto jobs = jobs_of(2);
  RoundOptions o;
  o.p = 1.0;
  o.lambda = 1.1;
  const auto r = run_round(cluster, jobs, o);
  CHECK(r.status == RoundStatus::optimal);
  CHECK(r.objective == doctest::Approx(8.0));  // Table 1: J0 (1,4,B) 4, J1 (1,2,A) 4
}

TEST_CASE("round.numbers.huge_utilities") {
  // Utilities near 1e300 (p > 0, goodputs far apart): the backends see a rescaled objective.
  const auto cluster = small_cluster();
  GoodputTable t0, t1;
  t0.set("A", 1, 1).set("B", 1, 1).set("B", 4, 1e150);
  t1.set("A", 1, 1).set("A", 2, 1e149).set("B", 1, 1);
  const std::vector<JobSpec> jobs{JobSpec("J0").goodput_model(t0), JobSpec("J1").goodput_model(t1)};
  for (const auto& backend : available_milp_solvers()) {
    CAPTURE(backend);
    RoundOptions o;
    o.p = 2.0;
    o.backend = backend;
    const auto r = run_round(cluster, jobs, o);
    CHECK(r.status == RoundStatus::optimal);
    REQUIRE(r.decisions[0].config);
    CHECK(r.decisions[0].gpus == 4);
    CHECK(r.decisions[1].gpus == 2);
    CHECK(r.objective == doctest::Approx(1e300 + 1e298).epsilon(1e-9));
  }
}

TEST_CASE("milp.cbc.huge_coefficients_never_abort") {
  // Before: an objective coefficient of 1e300 made Clp assert (SIGABRT) inside CBC.
  const auto names = available_milp_solvers();
  for (const auto& name : names) {
    CAPTURE(name);
    MilpModel m;
    m.sense = MilpSense::maximize;
    const int a = m.add_col(1e300, 0, 1, true);
    const int b = m.add_col(5e299, 0, 1, true);
    const int row = m.add_row(-MilpModel::inf, 1);
    m.add_entry(row, a, 1);
    m.add_entry(row, b, 1);
    const auto r = make_milp_solver(name)->solve(m);
    CHECK(r.status == MilpStatus::optimal);
    REQUIRE(r.values.size() == 2);
    CHECK(r.values[0] == doctest::Approx(1.0));
    CHECK(r.objective == doctest::Approx(1e300));
  }
  if (std::find(names.begin(), names.end(), "cbc") != names.end()) {
    // A constraint coefficient beyond what Clp handles is refused, not aborted on.
    MilpModel m;
    const int a = m.add_col(1, 0, 1, true);
    const int row = m.add_row(-MilpModel::inf, 1e30);
    m.add_entry(row, a, 1e30);
    const auto r = make_milp_solver("cbc")->solve(m);
    CHECK(r.status == MilpStatus::error);
    CHECK(r.message.find("safe range") != std::string::npos);
  }
}

TEST_CASE("goodput.numbers.gradient_statistics_near_dbl_max") {
  // Before: sqr = var = 1e308 overflowed var + sqr to infinity: goodput 0, the job got no GPUs.
  const GradParams g{1e308, 1e308};
  CHECK(gain(g, 256, 128) == doctest::Approx(gain(GradParams{1, 1}, 256, 128)));
  CHECK(efficiency(g, 256, 128) == doctest::Approx(efficiency(GradParams{1, 1}, 256, 128)));
  const auto fn = efficiency_fn(g, 128);
  CHECK(fn(256) == doctest::Approx(efficiency(GradParams{1, 1}, 256, 128)));

  ClusterSpec c;
  c.types = {GpuTypeSpec("a100", 2, 8)};
  const auto model = nlohmann::json::parse(R"({
    "init_batch_size": 128, "max_batch_size": 4096,
    "grad": {"sqr": 1e308, "var": 1e308},
    "perf": {"a100": {"alpha_c": 0.024, "beta_c": 8.7e-5, "alpha_n": 0.014, "beta_n": 7.7e-4,
                      "alpha_r": 0.0127, "beta_r": 1.36e-3, "gamma": 2.53}},
    "local_batch": {"a100": [32, 4096]}
  })");
  JobSpec job("J1");
  job.max_gpus(8);
  detail::apply_model_json(job, model, c, "jobs[0].model");
  const std::vector<JobSpec> jobs{job};
  const auto r = run_round(c, jobs, {});
  CHECK(r.status == RoundStatus::optimal);
  CHECK(r.decisions[0].gpus >= 1);
}

TEST_CASE("round.numbers.overflowing_objective_is_rejected_naming_the_field") {
  // Before: goodputs spanning 1e308 overflowed the objective to infinity and the round failed with
  // an unrelated message ("MilpParams.relative_gap must be >= 0").
  const auto cluster = small_cluster();
  GoodputTable t0, t1;
  t0.set("A", 1, 1).set("B", 4, 1e308);
  t1.set("A", 1, 1).set("A", 2, 1e308);
  const std::vector<JobSpec> jobs{JobSpec("J0").goodput_model(t0), JobSpec("J1").goodput_model(t1)};
  RoundOptions o;
  o.p = 1.0;
  CHECK_THROWS_WITH_AS((void)run_round(cluster, jobs, o), doctest::Contains("utilities"), InvalidArgument);
  // λ·J beyond the largest double: rejected with the accepted range.
  RoundOptions big;
  big.lambda = 1.7e308;
  CHECK_THROWS_WITH_AS((void)run_round(cluster, jobs_of(2), big), doctest::Contains("RoundOptions.lambda"),
                       InvalidArgument);
}
