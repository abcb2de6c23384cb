// Parallel simulations (runner.hpp): results in spec order, the same bits as a serial run, the first
// failure reported whatever the thread count, progress and cancellation.
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/sim/catalogue.hpp>
#include <sia/sim/cluster.hpp>
#include <sia/sim/runner.hpp>
#include <sia/sim/workload.hpp>

#include <atomic>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

using namespace sia;
using namespace sia::sim;

namespace {

/// Everything a simulation produces except the wall-clock measurements.
void require_same(const SimResult& a, const SimResult& b) {
  REQUIRE(a.policy == b.policy);
  REQUIRE(a.workload == b.workload);
  REQUIRE(a.jobs.size() == b.jobs.size());
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    const auto& x = a.jobs[i];
    const auto& y = b.jobs[i];
    INFO("job " << x.name);
    CHECK(x.name == y.name);
    CHECK(x.completion_time == y.completion_time);  // exact: same bits
    CHECK(x.restarts == y.restarts);
    CHECK(x.gpu_hours == y.gpu_hours);
    CHECK(x.gpu_hours_by_type == y.gpu_hours_by_type);
    CHECK(x.contention_avg == y.contention_avg);
    CHECK(x.ftf == y.ftf);
    CHECK(x.epochs == y.epochs);
  }
  REQUIRE(a.rounds.size() == b.rounds.size());
  for (std::size_t r = 0; r < a.rounds.size(); ++r) {
    CHECK(a.rounds[r].active == b.rounds[r].active);
    CHECK(a.rounds[r].queued == b.rounds[r].queued);
    REQUIRE(a.rounds[r].allocations.size() == b.rounds[r].allocations.size());
    for (std::size_t k = 0; k < a.rounds[r].allocations.size(); ++k) {
      const auto& p = a.rounds[r].allocations[k];
      const auto& q = b.rounds[r].allocations[k];
      CHECK(p.job == q.job);
      CHECK(p.type == q.type);
      CHECK(p.gpus == q.gpus);
      CHECK(p.batch == q.batch);
    }
  }
}

struct Inputs {
  std::shared_ptr<const SimCluster> cluster = std::make_shared<const SimCluster>(cluster_preset("paper-heterogeneous"));
  std::shared_ptr<const ApplicationSet> apps = std::make_shared<const ApplicationSet>(catalogue_applications(*cluster));
};

std::vector<SimulationSpec> specs_of(const Inputs& in, const std::vector<std::string>& policies, int seeds) {
  std::vector<SimulationSpec> specs;
  for (const auto& p : policies)
    for (int s = 1; s <= seeds; ++s) {
      SimulationSpec spec;
      spec.cluster = in.cluster;
      spec.apps = in.apps;
      spec.workload =
          std::make_shared<const Workload>(synthetic_philly_workload(static_cast<std::uint64_t>(s), 12, 1.5));
      spec.policy = p;
      if (p == "pollux") spec.policy_options.set("search", "greedy");  // keeps the test fast
      spec.options.keep_round_log = true;
      specs.push_back(std::move(spec));
    }
  return specs;
}

/// A policy that throws in its `fail_round`-th round.
class FailingPolicy final : public Policy {
 public:
  explicit FailingPolicy(int fail_round, std::string message) : fail_round_(fail_round), message_(std::move(message)) {}
  std::string name() const override { return "failing"; }
  double default_interval_s() const override { return 60.0; }
  std::vector<SimAllocation> allocate(const PolicyContext& ctx) override {
    if (++round_ >= fail_round_) throw InvalidArgument(message_);
    return std::vector<SimAllocation>(ctx.jobs.size());
  }

 private:
  int fail_round_;
  std::string message_;
  int round_ = 0;
};

}  // namespace

TEST_CASE("sim.runner.parallel_equals_serial") {
  const Inputs in;
  const auto specs = specs_of(in, {"sia", "gavel", "pollux"}, 2);
  RunnerOptions serial;
  serial.threads = 1;
  RunnerOptions parallel;
  parallel.threads = 4;  // more threads than this machine's cores is allowed: the answer must not change
  const auto a = run_simulations(specs, serial);
  const auto b = run_simulations(specs, parallel);
  REQUIRE(a.size() == specs.size());
  REQUIRE(b.size() == specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    INFO("simulation " << i << ": " << specs[i].policy << " on " << specs[i].workload->name);
    CHECK(a[i].policy == specs[i].policy);
    CHECK(a[i].jobs.size() == specs[i].workload->jobs.size());
    require_same(a[i], b[i]);
  }
}

TEST_CASE("sim.simulate.same_bits_for_any_thread_count") {
  // One simulation on 1, 2 and 4 threads (SimOptions::threads): its jobs step and refit in parallel between
  // rounds and Sia computes its new goodput estimates in parallel; per-job records and per-round allocations
  // must be the serial run's bits. Each run has its own fit memo, so the parallel runs refit for themselves.
  const Inputs in;
  const Workload w = synthetic_philly_workload(3, 24, 2.5);
  REQUIRE(w.jobs.size() > 30);
  struct Case {
    std::string policy, key, value;
  };
  for (const Case& c : {Case{"sia", "", ""}, Case{"sia", "profiling", "oracle"}, Case{"sia", "profiling", "eq1"},
                        Case{"gavel", "", ""}, Case{"pollux", "search", "greedy"}, Case{"themis", "", ""}}) {
    INFO("policy " << c.policy << " " << c.key << "=" << c.value);
    std::vector<SimResult> runs;
    for (int threads : {1, 2, 4}) {
      PolicyOptions po;
      if (!c.key.empty()) po.set(c.key, c.value);
      auto policy = make_policy(c.policy, po);
      SimOptions so;
      so.keep_round_log = true;
      so.threads = threads;
      runs.push_back(simulate(*in.cluster, *in.apps, w, *policy, so));
    }
    REQUIRE(runs[0].jobs.size() == w.jobs.size());
    require_same(runs[0], runs[1]);
    require_same(runs[0], runs[2]);
  }
}

TEST_CASE("sim.simulate.same_bits_with_every_hand_off") {
  // The same runs with the parallel paths taken in every round (SimOptions::hand_off_every_round; scripts/tsan.sh
  // runs it to check these paths for races): the jobs step in parallel and Sia's filler computes new goodput estimates beside the round, which the rounds of this small
  // workload are too small for by default (simulator.cpp, kMinRefitsToStepInParallel). Same bits as one thread.
  const Inputs in;
  const Workload w = synthetic_philly_workload(3, 24, 2.5);
  for (const std::string profiling : {"", "oracle", "eq1"}) {
    INFO("sia profiling=" << profiling);
    std::vector<SimResult> runs;
    for (int threads : {1, 2, 4}) {
      PolicyOptions po;
      if (!profiling.empty()) po.set("profiling", profiling);
      auto policy = make_policy("sia", po);
      SimOptions so;
      so.keep_round_log = true;
      so.threads = threads;
      so.hand_off_every_round = true;
      runs.push_back(simulate(*in.cluster, *in.apps, w, *policy, so));
    }
    REQUIRE(runs[0].jobs.size() == w.jobs.size());
    require_same(runs[0], runs[1]);
    require_same(runs[0], runs[2]);
  }
}

TEST_CASE("sim.runner.gives_a_single_simulation_its_threads") {
  // A batch of one simulation runs it on the runner's threads; the answer is the same as on one thread.
  const Inputs in;
  auto specs = specs_of(in, {"sia"}, 1);
  RunnerOptions one, two;
  one.threads = 1;
  two.threads = 2;
  const auto a = run_simulations(specs, one);
  const auto b = run_simulations(specs, two);
  require_same(a[0], b[0]);
  specs[0].options.threads = -1;
  CHECK_THROWS_AS((void)run_simulations(specs, two), InvalidArgument);
}

TEST_CASE("sim.runner.simulate_policies_groups_by_policy") {
  const Inputs in;
  std::vector<std::shared_ptr<const Workload>> w = {
      std::make_shared<const Workload>(synthetic_philly_workload(1, 10, 1)),
      std::make_shared<const Workload>(synthetic_philly_workload(2, 10, 1))};
  RunnerOptions ro;
  ro.threads = 2;
  const auto all = simulate_policies({"sia", "gavel"}, in.cluster, in.apps, w, SimOptions{}, ro);
  REQUIRE(all.size() == 2);
  CHECK(all[0].policy == "sia");
  CHECK(all[1].policy == "gavel");
  for (const auto& pr : all) {
    REQUIRE(pr.runs.size() == 2);
    REQUIRE(pr.metrics.size() == 2);
    CHECK(pr.runs[0].jobs.size() == w[0]->jobs.size());
    CHECK(pr.runs[1].jobs.size() == w[1]->jobs.size());
    CHECK(pr.aggregate.jobs == static_cast<int>(w[0]->jobs.size() + w[1]->jobs.size()));
  }
}

TEST_CASE("sim.runner.first_failure_wins_whatever_the_threads") {
  const Inputs in;
  auto specs = specs_of(in, {"sia"}, 3);
  // Simulation 1 fails late, simulation 2 at once: the error of simulation 1 is the batch's.
  specs[1].make_policy = [] { return std::make_unique<FailingPolicy>(20, "failure of simulation 1"); };
  specs[2].make_policy = [] { return std::make_unique<FailingPolicy>(1, "failure of simulation 2"); };
  for (int threads : {1, 3}) {
    RunnerOptions ro;
    ro.threads = threads;
    CHECK_THROWS_WITH_AS((void)run_simulations(specs, ro), "failure of simulation 1", InvalidArgument);
  }
}

TEST_CASE("sim.runner.bad_specs") {
  const Inputs in;
  auto specs = specs_of(in, {"sia"}, 1);
  specs[0].policy = "no-such-policy";
  CHECK_THROWS_AS((void)run_simulations(specs), InvalidArgument);
  specs = specs_of(in, {"sia"}, 1);
  specs[0].workload.reset();
  CHECK_THROWS_AS((void)run_simulations(specs), InvalidArgument);
  CHECK(run_simulations(std::span<const SimulationSpec>{}).empty());
  CHECK(effective_threads(3) == 3);
  CHECK(effective_threads(0) >= 1);
}

TEST_CASE("sim.runner.progress_and_cancel") {
  const Inputs in;
  auto specs = specs_of(in, {"sia"}, 2);
  std::vector<RunnerProgress> seen;
  RunnerOptions ro;
  ro.threads = 2;
  ro.progress_period_s = 0.0;  // every round
  ro.on_progress = [&](const RunnerProgress& p) { seen.push_back(p); };
  (void)run_simulations(specs, ro);
  REQUIRE(seen.size() > 2);
  CHECK(seen.back().done);
  CHECK(seen.back().simulations == 2);
  CHECK(seen.back().simulations_done == 2);
  CHECK(seen.back().jobs_finished == seen.back().jobs_total);
  for (std::size_t i = 1; i < seen.size(); ++i) CHECK(seen[i].wall_s >= seen[i - 1].wall_s);
  std::ostringstream line;
  ProgressPrinter print(line, false);
  print(seen[seen.size() / 2]);
  CHECK(line.str().find("jobs finished") != std::string::npos);
  CHECK(line.str().find("rounds/s") != std::string::npos);

  std::atomic<int> polls{0};
  ro.on_progress = nullptr;
  ro.cancelled = [&] { return ++polls > 10; };
  CHECK_THROWS_AS((void)run_simulations(specs, ro), SimulationCancelled);
}

// Issue 19: the fits are memoised per simulation by their exact observations; a fit is a pure function of
// them, so a simulation gives the same bits with and without the memo.
TEST_CASE("sim.scale.memoised_fits_same_bits") {
  const Inputs in;
  auto specs = specs_of(in, {"sia"}, 1);
  auto plain = specs;
  plain[0].options.fitter = default_perf_fitter();  // a fitter given by the caller is used as it is
  RunnerOptions ro;
  ro.threads = 1;
  const auto a = run_simulations(specs, ro);
  const auto b = run_simulations(plain, ro);
  require_same(a[0], b[0]);
}

TEST_CASE("sim.scale.memoised_fitter_calls_inner_once_per_observation_set") {
  int calls = 0;
  const PerfFitter inner = [&](const std::vector<StepObservation>& obs) {
    ++calls;
    PerfParams p;
    p.alpha_c = obs.front().step_time;
    return p;
  };
  const PerfFitter memo = memoised_perf_fitter(inner, 2);
  const std::vector<StepObservation> x = {{1, 1, 32, 0.5, 0.0}}, y = {{1, 2, 32, 0.5, 0.1}},
                                     z = {{1, 1, 32, 0.5, 0.0}, {1, 2, 32, 0.5, 0.1}};
  CHECK(memo(x).alpha_c == 0.5);
  CHECK(memo(x).alpha_c == 0.5);
  CHECK(calls == 1);
  (void)memo(y);
  (void)memo(y);
  CHECK(calls == 2);
  (void)memo(z);  // the memo is full (capacity 2): emptied, then holds z
  CHECK(calls == 3);
  (void)memo(x);
  CHECK(calls == 4);
  std::vector<StepObservation> x2 = x;
  x2[0].sync_time = 1e-300;  // another bit pattern: another fit
  (void)memo(x2);
  CHECK(calls == 5);
  x2[0].sync_time = -0.0;  // equal to x's +0.0 as a number, not as bits: another fit
  (void)memo(x2);
  CHECK(calls == 6);
  const std::vector<StepObservation> zr = {z[1], z[0]};  // the same observations in another order: another input
  (void)memo(zr);
  CHECK(calls == 7);
  (void)memo(zr);  // (the memo was full again: it holds zr alone now)
  CHECK(calls == 7);
}

TEST_CASE("sim.scale.memoised_fitter_shared_by_threads") {
  // run_simulations() shares one memo between the simulations of a batch: from several threads at once, every
  // answer is the inner fit's, bit for bit, and each observation set is fitted at most once per thread.
  std::atomic<int> calls{0};
  const PerfFitter inner = [&](const std::vector<StepObservation>& obs) {
    ++calls;
    PerfParams p;
    p.alpha_c = 0.0;
    for (const auto& o : obs) p.alpha_c += o.step_time * o.local_bsz;
    return p;
  };
  const PerfFitter memo = memoised_perf_fitter(inner);
  std::vector<std::vector<StepObservation>> sets;
  for (int k = 1; k <= 50; ++k) {
    std::vector<StepObservation> v;
    for (int i = 1; i <= k % 7 + 1; ++i) v.push_back({1, i, 16 * k, 0.01 * k + 0.001 * i, 0.0});
    sets.push_back(v);
  }
  constexpr int kThreads = 4;
  std::vector<std::vector<double>> got(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      for (int pass = 0; pass < 3; ++pass)
        for (const auto& s : sets) got[static_cast<std::size_t>(t)].push_back(memo(s).alpha_c);
    });
  for (auto& th : pool) th.join();
  const int fitted = calls.load();
  CHECK(fitted >= static_cast<int>(sets.size()));
  CHECK(fitted <= kThreads * static_cast<int>(sets.size()));  // never again once in the memo
  for (int t = 0; t < kThreads; ++t)
    for (std::size_t i = 0; i < got[static_cast<std::size_t>(t)].size(); ++i)
      CHECK(got[static_cast<std::size_t>(t)][i] == inner(sets[i % sets.size()]).alpha_c);
}

TEST_CASE("sim.job.refits_first_foresees_the_next_step") {
  // SimJob::refits_first (the simulator's measure of a round's work): when it says so, a copy of the job stepped
  // ahead fits, through the memo, every fit of the job's next step when it keeps its allocation (the chain of
  // refits new batch sizes bring, not only the first), changes nothing in the job, and the job's step then fits
  // nothing itself; the job ends every round in the same state as a twin stepped without copies.
  const Inputs in;
  for (const bool unaware : {false, true}) {
    INFO("unaware " << unaware);
    WorkloadJob w;
    w.name = "a";
    w.application = "cifar10";
    w.batch_size = 4096;
    const int nt = static_cast<int>(in.cluster->types.size());
    SimJob a(w, in.apps->at("cifar10"), nt), b(w, in.apps->at("cifar10"), nt);
    a.unaware_model = b.unaware_model = unaware;
    int fits_a = 0, fits_b = 0;
    const PerfFitter inner = default_perf_fitter();
    const PerfFitter memo_a = memoised_perf_fitter([&](const std::vector<StepObservation>& o) {
      ++fits_a;
      return inner(o);
    });
    const PerfFitter memo_b = memoised_perf_fitter([&](const std::vector<StepObservation>& o) {
      ++fits_b;
      return inner(o);
    });
    int rehearsed = 0, chains = 0;
    double now = 0.0;
    for (int round = 0; round < 40 && !a.completed(); ++round, now += 60.0) {
      if (round == 0 || round == 6) {  // (re)allocations: 2 GPUs, then 4 on two nodes
        const SimAllocation to = round == 0 ? SimAllocation{0, 1, 2} : SimAllocation{0, 2, 4};
        CHECK(a.apply(to) == b.apply(to));
      }
      if (const auto copy = a.refits_first(60.0) ? std::make_unique<SimJob>(a) : nullptr) {
        ++rehearsed;
        const int generation = a.fit_generation, before = fits_a;
        copy->step(now, 60.0, memo_a);
        if (fits_a > before + 1) ++chains;
        CHECK(a.fit_generation == generation);  // the job itself is untouched
        CHECK(a.atomic_bsz == b.atomic_bsz);
        const int after = fits_a;
        a.step(now, 60.0, memo_a);
        CHECK(fits_a == after);  // everything the step fits was fitted ahead
      } else {
        a.step(now, 60.0, memo_a);
      }
      b.step(now, 60.0, memo_b);
      CHECK(a.atomic_bsz == b.atomic_bsz);
      CHECK(a.accum_steps == b.accum_steps);
      CHECK(a.progress == b.progress);
      CHECK(a.epoch == b.epoch);
      CHECK(a.fit_generation == b.fit_generation);
      CHECK(a.perf == b.perf);
      CHECK(a.merged_perf == b.merged_perf);
      CHECK(a.completed() == b.completed());
      CHECK(fits_a == fits_b);  // the copy fitted exactly what the step fits: nothing for nothing
    }
    CHECK(rehearsed > 0);
    CHECK(chains > 0);  // at least one step refitted more than once (a chain, not only the first refit)
  }
}
