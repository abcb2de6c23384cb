// Baselines of the simulator (issue 6): Gavel's LP and time sharing, Pollux's fitness and type fix.
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/sim/catalogue.hpp>
#include <sia/sim/gavel_policy.hpp>
#include <sia/sim/pollux_policy.hpp>
#include <sia/sim/simulator.hpp>

#include "fault_solver.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

using namespace sia::sim;

namespace {
SimCluster one_type_cluster(int nodes, int gpus_per_node) {
  SimCluster c;
  c.name = "tiny";
  c.types.push_back({"rtx", "rtx", nodes, gpus_per_node, nodes});
  return c;
}

WorkloadJob wjob(const std::string& name, int replicas, long long batch) {
  WorkloadJob w;
  w.name = name;
  w.application = "cifar10";
  w.num_replicas = replicas;
  w.batch_size = batch;
  return w;
}
}  // namespace

TEST_CASE("sim.baselines.gavel_lp_optimum") {
  // Job 0 is 3x faster on type 0, job 1 only 1.33x: the unique optimum puts job 0 on type 0, job 1 on type 1
  // (objective 3 + 1.5 = 4.5 against 1 + 2 = 3 for the swap).
  const std::vector<std::vector<double>> T = {{3.0, 1.0}, {2.0, 1.5}};
  for (auto m : {GavelLpMethod::interior, GavelLpMethod::simplex, GavelLpMethod::greedy}) {
    if (m != GavelLpMethod::greedy && !gavel_has_lp_solver()) continue;
    const auto x = gavel_solve_lp(T, {1, 1}, {1, 1}, m);
    CHECK(x[0][0] == doctest::Approx(1.0));
    CHECK(x[0][1] == doctest::Approx(0.0));
    CHECK(x[1][0] == doctest::Approx(0.0));
    CHECK(x[1][1] == doctest::Approx(1.0));
  }
  // Capacity in GPUs: a 2-GPU job on a 2-GPU type and a 1-GPU job: both fit on type 0 (3 GPUs).
  const auto y = gavel_solve_lp({{4.0}, {1.0}}, {2, 1}, {3});
  CHECK(y[0][0] == doctest::Approx(1.0));
  CHECK(y[1][0] == doctest::Approx(1.0));
  // With 2 GPUs, the 2-GPU job (4 per unit) beats the 1-GPU job (1 per unit, 2 per 2 GPUs).
  const auto z = gavel_solve_lp({{4.0}, {1.0}}, {2, 1}, {2});
  CHECK(z[0][0] == doctest::Approx(1.0));
  CHECK(z[1][0] == doctest::Approx(0.0));
  CHECK_THROWS_AS((void)gavel_solve_lp({{1.0, 2.0}}, {1}, {1}), sia::InvalidArgument);
  CHECK_THROWS_AS((void)gavel_solve_lp({{std::nan("")}}, {1}, {1}), sia::InvalidArgument);
}

TEST_CASE("sim.baselines.gavel_backend_failure_falls_back") {
  // Whatever the LP backend does (errors, throws, NaN, short answers, "optimal" values that break the rows),
  // Gavel's LP result stays a valid time-fraction matrix: an answer outside the LP's rows is never used, the
  // fractional greedy stands in. (A feasible but suboptimal "optimal" answer — violate_pin's zeros here, native
  // having no LP method to corrupt — cannot be told from an optimum without the duals; it is valid anyway.)
  sia::test::register_fault_solver();
  const std::vector<std::vector<double>> T = {{3.0, 1.0}, {2.0, 1.5}, {1.0, 1.0}};
  const std::vector<int> scale = {1, 2, 1}, cap = {1, 2};
  const auto greedy = gavel_solve_lp(T, scale, cap, GavelLpMethod::greedy);
  for (auto mode : sia::test::FaultSolver::all_modes) {
    if (mode == sia::test::FaultSolver::Mode::sleep_past_limit) continue;  // Gavel's LP has no time limit
    sia::test::ScopedFault arm(mode);
    for (auto m : {GavelLpMethod::interior, GavelLpMethod::simplex}) {
      INFO(sia::test::FaultSolver::mode_name(mode) << (m == GavelLpMethod::interior ? " interior" : " simplex"));
      const auto x = gavel_solve_lp(T, scale, cap, m, "fault");
      REQUIRE(x.size() == T.size());
      std::vector<double> used(cap.size(), 0.0);
      for (std::size_t j = 0; j < x.size(); ++j) {
        double share = 0.0;
        for (std::size_t k = 0; k < cap.size(); ++k) {
          CHECK(x[j][k] >= 0.0);
          share += x[j][k];
          used[k] += x[j][k] * scale[j];
        }
        CHECK(share <= 1.0 + 1e-6);
      }
      for (std::size_t k = 0; k < cap.size(); ++k) CHECK(used[k] <= cap[k] + 1e-6);
      if (mode != sia::test::FaultSolver::Mode::violate_pin) CHECK(x == greedy);
    }
  }
  CHECK_THROWS_AS((void)gavel_solve_lp(T, scale, cap, GavelLpMethod::interior, "no-such-backend"),
                  sia::BackendUnavailable);
}

TEST_CASE("sim.baselines.gavel_time_sharing_order") {
  // Three identical 1-GPU jobs on one GPU: the interior-point LP gives each 1/3 (analytic centre), so
  // priorities decide. Round 1: all fractions 1/3 -> tie -> job 0. Round 2: job 0 has 1.5 of 2.5 intervals
  // (priority 0.56), jobs 1-2 have 0.5 of 2.5 (1.67) -> job 1. Round 3: job 2. Round 4: all 1.5/3.5 -> job 0.
  const auto cluster = one_type_cluster(1, 1);
  const auto apps = catalogue_applications(cluster);
  std::vector<std::unique_ptr<SimJob>> jobs;
  for (int i = 0; i < 3; ++i)
    jobs.push_back(std::make_unique<SimJob>(wjob("cifar10-" + std::to_string(i), 1, 128), apps.at("cifar10"), 1));
  std::vector<SimJob*> ptrs;
  for (auto& j : jobs) ptrs.push_back(j.get());
  GavelPolicy gavel;
  std::vector<int> order;
  for (int round = 0; round < 4; ++round) {
    PolicyContext ctx;
    ctx.now = 360.0 * (round + 1);
    ctx.cluster = &cluster;
    ctx.jobs = ptrs;
    const auto a = gavel.allocate(ctx);
    REQUIRE(a.size() == 3);
    int running = -1, count = 0;
    for (int j = 0; j < 3; ++j)
      if (!a[static_cast<std::size_t>(j)].empty()) running = j, ++count;
    CHECK(count == 1);
    order.push_back(running);
    if (gavel_has_lp_solver())
      for (int j = 0; j < 3; ++j)
        CHECK(gavel.last_lp()[static_cast<std::size_t>(j)][0] == doctest::Approx(1.0 / 3).epsilon(1e-3));
  }
  if (gavel_has_lp_solver()) CHECK(order == std::vector<int>{0, 1, 2, 0});
  for (auto* j : ptrs) CHECK(j->kind == sia::JobKind::rigid);  // TunedJobs
}

TEST_CASE("sim.baselines.gavel_repeated_lp_is_reused_with_the_same_answer") {
  // A round with the same active jobs as the previous one asks the same LP: the policy reuses the last answer
  // (no solve). It must be the bits a fresh solve gives, and a changed job set must solve again.
  const auto cluster = cluster_preset("paper-heterogeneous");
  const auto apps = catalogue_applications(cluster);
  const int nt = static_cast<int>(cluster.types.size());
  std::vector<std::unique_ptr<SimJob>> jobs;
  const char* models[] = {"cifar10", "bert", "deepspeech2", "yolov3", "imagenet"};
  for (int i = 0; i < 12; ++i) {
    WorkloadJob w = wjob("job-" + std::to_string(i), 1 + (i % 4) * 2, 256);
    w.application = models[i % 5];
    jobs.push_back(std::make_unique<SimJob>(w, apps.at(w.application), nt));
  }
  std::vector<SimJob*> ptrs;
  for (auto& j : jobs) ptrs.push_back(j.get());
  auto fresh_lp = [&](const std::vector<SimJob*>& js) {
    std::vector<std::vector<double>> T(js.size(), std::vector<double>(static_cast<std::size_t>(nt), 0.0));
    std::vector<int> scale(js.size(), 1), cap(static_cast<std::size_t>(nt), 0);
    for (int k = 0; k < nt; ++k) cap[static_cast<std::size_t>(k)] = cluster.type_gpus(k);
    for (std::size_t j = 0; j < js.size(); ++j) {
      scale[j] = std::max(1, js[j]->target_replicas);
      for (int k = 0; k < nt; ++k)
        T[j][static_cast<std::size_t>(k)] =
            gavel_throughput(*js[j]->app, cluster, k, scale[j], static_cast<double>(js[j]->target_batch_size));
    }
    return gavel_solve_lp(T, scale, cap, GavelLpMethod::interior);
  };
  GavelPolicy gavel;
  for (int round = 0; round < 4; ++round) {
    std::vector<SimJob*> active = ptrs;
    if (round == 2) active.pop_back();  // a job finished: a new LP
    PolicyContext ctx;
    ctx.now = 360.0 * (round + 1);
    ctx.cluster = &cluster;
    ctx.jobs = active;
    const auto a = gavel.allocate(ctx);
    REQUIRE(a.size() == active.size());
    CHECK(gavel.last_lp() == fresh_lp(active));  // exact: the reused answer is the fresh solve's bits
  }
}

TEST_CASE("sim.baselines.gavel_throughput") {
  const auto cluster = cluster_preset("paper-heterogeneous");
  const auto apps = catalogue_applications(cluster);
  const auto& app = *apps.at("cifar10");
  const int aws = cluster.type_index("aws");
  const int dgx = cluster.type_index("dgx-ext");
  // iterations/s: positive, more GPUs at a fixed global batch are faster per iteration, A100 beats T4.
  const double a1 = gavel_throughput(app, cluster, aws, 1, 512), a4 = gavel_throughput(app, cluster, aws, 4, 512);
  CHECK(a1 > 0);
  CHECK(a4 > a1);
  CHECK(gavel_throughput(app, cluster, dgx, 4, 512) > a4);
  CHECK(gavel_throughput(app, cluster, dgx, 17, 512) == doctest::Approx(0.1));  // more GPUs than the type has
}

TEST_CASE("sim.baselines.pollux_fitness") {
  // Power mean p = -1 (harmonic mean) of speedups + 1e-3.
  CHECK(pollux_fitness({1.0, 3.0}) == doctest::Approx(2.0 / (1.0 / 1.001 + 1.0 / 3.001)));
  CHECK(pollux_fitness({2.0}) == doctest::Approx(2.001));
  CHECK(pollux_fitness({0.0, 4.0}) == doctest::Approx(2.0 / (1000.0 + 1.0 / 4.001)));  // a starved job dominates
  CHECK(pollux_fitness({}) == 0.0);
  // Re-allocation factor max(age - 30 restarts, 0) / (age + 30).
  CHECK(pollux_restart_factor(100, 1) == doctest::Approx(70.0 / 130.0));
  CHECK(pollux_restart_factor(100, 0) == doctest::Approx(100.0 / 130.0));
  CHECK(pollux_restart_factor(50, 2) == doctest::Approx(0.0));
  // Example allocation: speedups 1.0 (unchanged) and 2.0 (changed, age 100, 1 restart) on the 16-vnode / 64-GPU
  // heterogeneous cluster, scaled by 16/64.
  const double s1 = 1.0 * 0.25, s2 = 2.0 * 0.25 * 70.0 / 130.0;
  CHECK(pollux_fitness({s1, s2}) == doctest::Approx(2.0 / (1.0 / (s1 + 1e-3) + 1.0 / (s2 + 1e-3))));
}

TEST_CASE("sim.baselines.pollux_vnodes_and_type_fix") {
  const auto cluster = cluster_preset("paper-heterogeneous");  // aws 6x4, dgx-ext 2x8, rtx 3x8
  const auto vn = pollux_vnodes(cluster);
  REQUIRE(vn.size() == 16);
  CHECK(vn[5].type == cluster.type_index("aws"));
  CHECK(vn[6].type == cluster.type_index("dgx-ext"));
  CHECK(vn[6].node == 0);
  CHECK(vn[7].node == 0);
  CHECK(vn[8].node == 1);
  CHECK(vn[15].type == cluster.type_index("rtx"));
  // 4 GPUs on aws vnode 0, 4 on each dgx vnode of node 0: dgx-ext has most GPUs, on one physical node.
  std::vector<int> g(16, 0);
  g[0] = 4, g[6] = 4, g[7] = 4;
  const auto a = pollux_fix_mixed(cluster, vn, g, PolluxPolicyOptions{}.type_priority);
  CHECK(a.type == cluster.type_index("dgx-ext"));
  CHECK(a.nodes == 1);
  CHECK(a.gpus == 8);
  // Tie 4 aws vs 4 rtx: priority rtx > aws.
  std::vector<int> h(16, 0);
  h[1] = 4, h[10] = 4;
  CHECK(pollux_fix_mixed(cluster, vn, h, PolluxPolicyOptions{}.type_priority).type == cluster.type_index("rtx"));
}

TEST_CASE("sim.baselines.pollux_allocate_fresh_jobs") {
  // Before any observation the speedup is r / fair share but max replicas is max(2·0, 1) = 1: every job gets one GPU.
  const auto cluster = cluster_preset("paper-heterogeneous");
  const auto apps = catalogue_applications(cluster);
  std::vector<std::unique_ptr<SimJob>> jobs;
  for (int i = 0; i < 3; ++i)
    jobs.push_back(std::make_unique<SimJob>(wjob("cifar10-" + std::to_string(i), 4, 2048), apps.at("cifar10"), 3));
  std::vector<SimJob*> ptrs;
  for (auto& j : jobs) ptrs.push_back(j.get());
  PolluxPolicy pollux;
  PolicyContext ctx;
  ctx.now = 60;
  ctx.cluster = &cluster;
  ctx.jobs = ptrs;
  const auto a = pollux.allocate(ctx);
  for (const auto& x : a) {
    CHECK(x.gpus == 1);
    CHECK(x.nodes == 1);
  }
  // Three jobs each with speedup 1 GPU / fair share ceil(64 / 3) = 22 (no model yet), scaled by 16/64
  // (first allocation: age 60, no restarts -> factor 60/90).
  const double s = 0.25 / 22.0 * 60.0 / 90.0;
  CHECK(pollux.last_fitness() == doctest::Approx(s + 1e-3));
}

TEST_CASE("sim.baselines.simulate_small_workload") {
  // Both baselines run a small synthetic workload to completion without over-allocating, and the forced
  // category reaches every job.
  const auto cluster = cluster_preset("paper-heterogeneous");
  const auto apps = catalogue_applications(cluster);
  auto w = synthetic_philly_workload(7, 6.0, 1.0);
  if (w.jobs.size() > 6) w.jobs.resize(6);
  // Pollux runs both searches; its genetic one with a small population to keep the Debug run fast.
  for (const char* name : {"gavel", "pollux", "pollux-greedy"}) {
    std::unique_ptr<Policy> policy;
    if (std::string(name) == "gavel") {
      policy = make_policy(name);
    } else {
      PolluxPolicyOptions po;
      po.population = 16;
      po.generations = 8;
      if (std::string(name) == "pollux-greedy") po.search = PolluxSearch::greedy;
      policy = std::make_unique<PolluxPolicy>(po);
    }
    SimOptions o;
    o.force_category = sia::JobKind::rigid;
    const auto r = simulate(cluster, apps, w, *policy, o);
    CHECK(r.jobs.size() == w.jobs.size());
    for (const auto& j : r.jobs) {
      CHECK(j.completion_time.has_value());
      CHECK(j.category == sia::JobKind::rigid);
      double sum = 0;
      for (double g : j.gpu_hours_by_type) sum += g;
      CHECK(sum == doctest::Approx(j.gpu_hours));
    }
  }
}
