// Job life cycle in the simulator (reference §6.1-§6.3) on a hand-checkable model: 1 progress unit per
// 0.1 s on any GPU count, 200 units to finish, a 30 s restore delay at every (re)start, 60 s rounds.
#include <doctest/doctest.h>

#include <sia/sim/metrics.hpp>
#include <sia/sim/sia_policy.hpp>
#include <sia/sim/simulator.hpp>

#include <cmath>

using namespace sia;
using namespace sia::sim;

namespace {

SimCluster tiny_cluster() {
  SimCluster c;
  c.name = "tiny";
  c.types = {SimGpuType{"x", "x", 1, 4, 1}};
  return c;
}

/// init = max batch 10, local 10..10, constant 0.1 s per step, no sync: 10 progress units / s.
std::shared_ptr<const Application> tiny_app(double rescale = 30.0) {
  Application a;
  a.name = "toy";
  a.init_batch_size = 10;
  a.max_batch_size = 10;
  a.constants = ModelConstants{2, rescale, 30, 1.0};
  a.grad.batch_sizes = {10};
  a.grad.epochs = {0, 1};
  a.grad.sqr = {{1.0, 1.0}};
  a.grad.var = {{0.0, 0.0}};
  a.grad.progress_per_epoch = {100, 200};
  Application::TypeTruth t;
  t.profile = "x";
  t.min_local = 1;
  t.max_local = 10;
  t.xput1 = 100;
  t.model = PerfParams{0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0};
  a.types.push_back(t);
  return std::make_shared<const Application>(std::move(a));
}

/// Fixed schedule: round k (1-based) gives every job `gpus[k-1]` GPUs (0 = none; last entry repeats).
class ScriptPolicy final : public Policy {
 public:
  explicit ScriptPolicy(std::vector<int> gpus) : gpus_(std::move(gpus)) {}
  std::string name() const override { return "script"; }
  double default_interval_s() const override { return 60.0; }
  std::vector<SimAllocation> allocate(const PolicyContext& ctx) override {
    const int g = gpus_[std::min(round_++, gpus_.size() - 1)];
    std::vector<SimAllocation> out(ctx.jobs.size());
    for (auto& a : out)
      if (g > 0) a = SimAllocation{0, 1, g};
    return out;
  }

 private:
  std::vector<int> gpus_;
  std::size_t round_ = 0;
};

PerfParams fixed_fit(const std::vector<StepObservation>&) { return PerfParams{0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0}; }

Workload one_job(double submit = 0.0) {
  Workload w;
  w.name = "w";
  w.source = "w.csv";
  WorkloadJob j;
  j.name = "toy-0";
  j.time = submit;
  j.application = "toy";
  j.num_replicas = 1;
  j.batch_size = 10;
  j.line = 2;
  w.jobs.push_back(j);
  return w;
}

}  // namespace

TEST_CASE("sim.lifecycle.first_start_pays_delay_and_completes") {
  ApplicationSet apps{{"toy", tiny_app()}};
  ScriptPolicy pol({1});
  SimOptions o;
  o.fitter = fixed_fit;
  const auto r = simulate(tiny_cluster(), apps, one_job(), pol, o);
  REQUIRE(r.jobs.size() == 1);
  const auto& j = r.jobs[0];
  // Allocated at the first round (t = 60), restores for 30 s, then 200 units at 10/s = 20 s.
  REQUIRE(j.completion_time.has_value());
  CHECK(*j.completion_time == doctest::Approx(110.0));
  CHECK(j.jct() == doctest::Approx(110.0));
  CHECK(j.restarts == 0);
  CHECK(j.gpu_hours == doctest::Approx(50.0 / 3600.0));
  CHECK(j.epochs == 2);
  CHECK(r.policy_ms.size() == 1);  // one round with an active job
}

TEST_CASE("sim.lifecycle.submission_waits_for_next_round") {
  ApplicationSet apps{{"toy", tiny_app()}};
  ScriptPolicy pol({1});
  SimOptions o;
  o.fitter = fixed_fit;
  const auto r = simulate(tiny_cluster(), apps, one_job(61.0), pol, o);
  // Submitted at 61: first round at 120, done at 120 + 30 + 20.
  CHECK(*r.jobs[0].completion_time == doctest::Approx(170.0));
  CHECK(r.jobs[0].jct() == doctest::Approx(109.0));
}

TEST_CASE("sim.lifecycle.restart_charges_delay_again") {
  // Restore delay 50 s: round 1 (t=60) starts on 1 GPU; restore 50 s, runs 10 s (100 units, epoch 1 done).
  // Round 2 (t=120) resizes to 2 GPUs: restart, 50 s restore, then 100 units in 10 s -> done at 180.
  ApplicationSet apps{{"toy", tiny_app(50.0)}};
  ScriptPolicy pol({1, 2});
  SimOptions o;
  o.fitter = fixed_fit;
  const auto r = simulate(tiny_cluster(), apps, one_job(), pol, o);
  CHECK(r.jobs[0].restarts == 1);
  CHECK(*r.jobs[0].completion_time == doctest::Approx(180.0));
  // GPU-seconds: 60 on 1 GPU, then 60 on 2 GPUs.
  CHECK(r.jobs[0].gpu_hours == doctest::Approx(180.0 / 3600.0));
}

TEST_CASE("sim.lifecycle.suspend_and_resume_counts_a_restart") {
  ApplicationSet apps{{"toy", tiny_app(50.0)}};
  ScriptPolicy pol({1, 0, 1});
  SimOptions o;
  o.fitter = fixed_fit;
  const auto r = simulate(tiny_cluster(), apps, one_job(), pol, o);
  // t=60 start: 50 s restore + 10 s = 100 units; suspended 120..180; resumed at 180: 50 s + 10 s -> 240.
  CHECK(r.jobs[0].restarts == 1);
  CHECK(*r.jobs[0].completion_time == doctest::Approx(240.0));
  CHECK(r.rounds[1].queued == 1);
}

TEST_CASE("sim.lifecycle.same_shape_is_free") {
  SimJob j(one_job().jobs[0], tiny_app(), 1);
  CHECK(j.apply(SimAllocation{0, 1, 2}));
  CHECK(j.rescale_time == doctest::Approx(30.0));
  CHECK_FALSE(j.apply(SimAllocation{0, 1, 2}));
  CHECK(j.num_restarts == 0);
  CHECK(j.apply(SimAllocation{0, 1, 1}));
  CHECK(j.num_restarts == 1);
}

TEST_CASE("sim.lifecycle.sia_policy_runs_jobs_to_completion") {
  ApplicationSet apps{{"toy", tiny_app()}};
  Workload w = one_job();
  for (int i = 1; i < 5; ++i) {
    auto j = w.jobs[0];
    j.name = "toy-" + std::to_string(i);
    j.time = 30.0 * i;
    w.jobs.push_back(j);
  }
  SiaPolicy pol;
  SimOptions o;
  o.fitter = fixed_fit;
  o.keep_round_log = true;
  const auto r = simulate(tiny_cluster(), apps, w, pol, o);
  for (const auto& j : r.jobs) {
    CHECK(j.completion_time.has_value());
    CHECK(j.jct() >= 50.0 - 1e-9);  // restore + training at best
  }
  for (const auto& l : r.rounds) {
    int used = 0;
    for (const auto& a : l.allocations) used += a.gpus;
    CHECK(used <= 4);
  }
}

TEST_CASE("sim.lifecycle.bad_inputs_fail_before_running") {
  ApplicationSet apps{{"toy", tiny_app()}};
  ScriptPolicy pol({1});
  Workload w = one_job();
  w.jobs[0].application = "resnet";
  CHECK_THROWS_WITH_AS(validate_inputs(tiny_cluster(), apps, w), doctest::Contains("w.csv:2"), InvalidArgument);
  SimCluster empty = tiny_cluster();
  empty.types[0].nodes = 0;
  CHECK_THROWS_AS(validate_inputs(empty, apps, one_job()), InvalidArgument);
}

// Heterogeneity-unaware jobs (the paper's Pollux, reference §6.6): one merged profile whose first
// observation of a key wins, one model for every type; aware jobs keep one model per type.
TEST_CASE("sim.lifecycle.unaware_job_merges_its_profiles") {
  Application a = *tiny_app();
  Application::TypeTruth slow = a.types[0];
  slow.profile = "y";
  slow.model = PerfParams{0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0};  // 3x slower steps on type 1
  a.types.push_back(slow);
  const auto app = std::make_shared<const Application>(std::move(a));
  // The fit records how many observations it saw and the first one's step time.
  const PerfFitter fit = [](const std::vector<StepObservation>& obs) {
    return PerfParams{static_cast<double>(obs.size()), obs.front().step_time, 0.0, 0.0, 0.0, 0.0, 1.0};
  };
  for (const bool unaware : {false, true}) {
    CAPTURE(unaware);
    SimJob j(one_job().jobs[0], app, 2);
    j.unaware_model = unaware;
    j.apply(SimAllocation{0, 1, 1});
    j.step(0.0, 35.0, fit);  // 30 s restore, 5 s of progress (the job needs 20 s in all)
    j.apply(SimAllocation{1, 1, 1});
    j.step(35.0, 35.0, fit);
    REQUIRE_FALSE(j.completed());
    REQUIRE(j.goodput_function(0));
    REQUIRE(j.goodput_function(1));
    const auto p0 = j.goodput_function(0)->perf;
    const auto p1 = j.goodput_function(1)->perf;
    if (unaware) {
      // Same (nodes, replicas, local batch) key on both types: type 0's observation won.
      CHECK(j.merged_observed.size() == 1);
      CHECK(p0.alpha_c == p1.alpha_c);
      CHECK(p0 == p1);
      CHECK(p1.beta_c == doctest::Approx(0.1));  // type 0's step time
    } else {
      CHECK(j.merged_observed.empty());
      CHECK(p0.beta_c == doctest::Approx(0.1));
      CHECK(p1.beta_c == doctest::Approx(0.3));  // type 1's own (slower) observation
    }
  }
}
