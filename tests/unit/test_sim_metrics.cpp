// Simulator metrics on hand-made results (reference §6.7 conventions, paper Eq. 6).
#include <doctest/doctest.h>

#include <sia/sim/metrics.hpp>
#include <sia/sim/report.hpp>

#include <cmath>

using namespace sia;
using namespace sia::sim;

namespace {
JobRecord job(double sub, double end, int restarts, double gpu_h, double ftf = 0.0) {
  JobRecord j;
  j.name = "j" + std::to_string(static_cast<int>(sub));
  j.application = "toy";
  j.submission_time = sub;
  j.completion_time = end;
  j.restarts = restarts;
  j.gpu_hours = gpu_h;
  j.ftf = ftf;
  return j;
}
sim::RoundLog round(double t, int active, double ms) {
  sim::RoundLog l;
  l.time = t;
  l.active = active;
  l.policy_ms = ms;
  return l;
}
}  // namespace

TEST_CASE("sim.metrics.percentile_index") {
  CHECK(percentile_index({}, 0.99) == 0.0);
  CHECK(percentile_index({3, 1, 2}, 0.5) == 2.0);  // element int(1.5) = 1 of {1,2,3}
  std::vector<double> v;
  for (int i = 0; i < 100; ++i) v.push_back(i);
  CHECK(percentile_index(v, 0.99) == 99.0);  // int(99.0) = 99
  CHECK(percentile_index(v, 0.95) == 95.0);
}

TEST_CASE("sim.metrics.one_run") {
  SimResult r;
  r.policy = "sia";
  r.workload = "w1";
  r.jobs = {job(0, 3600, 1, 2.0, 0.5), job(3600, 3 * 3600, 3, 4.0, 1.5)};
  r.rounds = {round(60, 1, 1.0), round(120, 2, 3.0), round(180, 0, 0.0), round(240, 1, 2.0)};
  r.policy_ms = {1.0, 3.0, 2.0};
  const auto m = compute_metrics(r);
  CHECK(m.jobs == 2);
  CHECK(m.completed == 2);
  CHECK(m.avg_jct_h == doctest::Approx(1.5));   // (1 + 2) / 2
  CHECK(m.p99_jct_h == doctest::Approx(2.0));   // element int(1.98) = 1
  CHECK(m.makespan_h == doctest::Approx(3.0));  // max end - min submission
  CHECK(m.gpu_hours_per_job == doctest::Approx(3.0));
  CHECK(m.restarts_per_job == doctest::Approx(2.0));
  CHECK(m.contention_mean == doctest::Approx(1.0));  // (1 + 2 + 0 + 1) / 4 rounds
  CHECK(m.contention_max == 2);
  CHECK(m.ftf_worst == doctest::Approx(1.5));
  CHECK(m.unfair_fraction == doctest::Approx(0.5));
  CHECK(m.policy_ms_median == doctest::Approx(2.0));
  CHECK(m.policy_ms_p95 == doctest::Approx(3.0));
  CHECK(m.rounds == 3);
}

TEST_CASE("sim.metrics.aggregate_pools_jobs") {
  SimResult a, b;
  a.policy = b.policy = "sia";
  a.workload = "w1";
  b.workload = "w2";
  a.jobs = {job(0, 3600, 0, 1.0)};                                // mean 1 h, makespan 1 h
  b.jobs = {job(0, 2 * 3600, 2, 3.0), job(0, 4 * 3600, 0, 5.0)};  // mean 3 h, makespan 4 h
  a.rounds = {round(60, 2, 1.0)};
  b.rounds = {round(60, 4, 5.0), round(120, 6, 7.0)};
  a.policy_ms = {1.0};
  b.policy_ms = {5.0, 7.0};
  const auto m = aggregate_metrics({&a, &b});
  CHECK(m.jobs == 3);
  CHECK(m.avg_jct_h == doctest::Approx(7.0 / 3.0));  // pooled over jobs
  CHECK(m.avg_jct_std_h == doctest::Approx(1.0));    // population std of {1, 3}
  CHECK(m.makespan_h == doctest::Approx(2.5));
  CHECK(m.makespan_std_h == doctest::Approx(1.5));
  CHECK(m.gpu_hours_per_job == doctest::Approx(3.0));
  CHECK(m.restarts_per_job == doctest::Approx(2.0 / 3.0));
  CHECK(m.contention_mean == doctest::Approx((2.0 + 5.0) / 2.0));  // mean of per-workload means
  CHECK(m.contention_max == 6);
  CHECK(m.policy_ms_median == doctest::Approx(5.0));
}

TEST_CASE("sim.metrics.ftf_hand_checked") {
  // One type of 4 GPUs; the toy model makes 10 progress units / s on any count (see test_sim_lifecycle),
  // 200 units + 30 s restore = 50 s alone on any share >= 1 GPU.
  SimCluster c;
  c.name = "tiny";
  c.types = {SimGpuType{"x", "x", 1, 4, 1}};
  Application a;
  a.name = "toy";
  a.init_batch_size = 10;
  a.max_batch_size = 10;
  a.constants = ModelConstants{2, 30, 30, 1.0};
  a.grad.batch_sizes = {10};
  a.grad.epochs = {0};
  a.grad.sqr = {{1.0}};
  a.grad.var = {{0.0}};
  a.grad.progress_per_epoch = {100, 200};
  Application::TypeTruth t;
  t.profile = "x";
  t.min_local = 1;
  t.max_local = 10;
  t.model = PerfParams{0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0};
  a.types.push_back(t);
  ApplicationSet apps{{"toy", std::make_shared<const Application>(a)}};
  Workload w;
  w.name = "w";
  for (int i = 0; i < 2; ++i) {
    WorkloadJob j;
    j.name = "toy-" + std::to_string(i);
    j.application = "toy";
    j.batch_size = 10;
    w.jobs.push_back(j);
  }
  SimResult r;
  r.jobs = {job(0, 100, 0, 0.0), job(0, 100, 0, 0.0)};
  r.jobs[0].contention_avg = 1.0;  // share 4 GPUs: alone 50 s -> rho = 100 / 50
  r.jobs[1].contention_avg = 8.0;  // share 0.5 GPU: time-sliced, alone 100 s -> rho = 1
  compute_ftf(c, apps, w, r);
  CHECK(r.jobs[0].ftf == doctest::Approx(2.0));
  CHECK(r.jobs[1].ftf == doctest::Approx(1.0));
}

TEST_CASE("sim.metrics.report_json_fields") {
  SimResult r;
  r.policy = "sia";
  r.workload = "w1";
  r.jobs = {job(0, 3600, 1, 2.0)};
  PolicyRuns p;
  p.policy = "sia";
  p.metrics = {compute_metrics(r)};
  p.aggregate = p.metrics.front();
  p.runs.push_back(r);
  const auto s = report_json({p});
  for (const char* f :
       {"\"runs\"", "\"aggregate\"", "\"avg_jct_h\"", "\"p99_jct_h\"", "\"makespan_h\"", "\"gpu_hours_per_job\"",
        "\"restarts_per_job\"", "\"contention_mean\"", "\"contention_max\"", "\"ftf_worst\"", "\"unfair_fraction\"",
        "\"policy_ms_median\"", "\"policy_ms_p95\"", "\"workload\"", "\"jobs\""})
    CHECK(s.find(f) != std::string::npos);
}
