// Pollux's NSGA-II search (issues 6, 18): sorting, crowding, Pollux's operators, repair invariants, objectives,
// optimum on tiny cases.
#include <doctest/doctest.h>

#include "sim/pollux_genetic.hpp"

#include <sia/sim/catalogue.hpp>
#include <sia/sim/cluster.hpp>
#include <sia/sim/pollux_policy.hpp>

#include <algorithm>
#include <cmath>
#include <random>

using namespace sia::sim;
using namespace sia::sim::detail;

namespace {

bool dominates(std::pair<double, double> a, std::pair<double, double> b) {
  return a.first <= b.first && a.second <= b.second && a != b;
}

// Reference ranks: peel non-dominated fronts one by one (O(N^3), fine for tests).
std::vector<int> brute_ranks(const std::vector<std::pair<double, double>>& f) {
  std::vector<int> rank(f.size(), -1);
  for (int r = 0;; ++r) {
    std::vector<std::size_t> front;
    for (std::size_t i = 0; i < f.size(); ++i) {
      if (rank[i] >= 0) continue;
      bool dominated = false;
      for (std::size_t k = 0; k < f.size() && !dominated; ++k) dominated = rank[k] < 0 && dominates(f[k], f[i]);
      if (!dominated) front.push_back(i);
    }
    if (front.empty()) break;
    for (std::size_t i : front) rank[i] = r;
  }
  return rank;
}

// A concave speedup with a small penalty per extra vnode (like a network cost).
double toy_speedup(int job, int nodes, int replicas) {
  const double w = job == 0 ? 1.0 : 0.6;
  return w * std::sqrt(static_cast<double>(replicas)) * (1.0 - 0.05 * (nodes - 1));
}

PolluxGaProblem toy_problem(int jobs, std::vector<int> vnode_gpus) {
  PolluxGaProblem p;
  p.vnode_gpus = std::move(vnode_gpus);
  for (int j = 0; j < jobs; ++j) {
    p.max_replicas.push_back(8);
    p.rigid.push_back(0);
    p.restart_factor.push_back(0.5);
  }
  p.base.assign(static_cast<std::size_t>(jobs) * p.vnode_gpus.size(), 0);
  p.speedup = toy_speedup;
  return p;
}

// Feasibility exactly as the repair defines it.
bool feasible(const PolluxGaProblem& p, const PolluxState& x) {
  const auto J = static_cast<std::size_t>(p.jobs()), V = static_cast<std::size_t>(p.vnodes());
  std::vector<int> nodes(J, 0), sum(J, 0);
  for (std::size_t j = 0; j < J; ++j)
    for (std::size_t v = 0; v < V; ++v) {
      if (x[j * V + v] < 0) return false;
      nodes[j] += x[j * V + v] > 0;
      sum[j] += x[j * V + v];
    }
  for (std::size_t j = 0; j < J; ++j) {
    if (sum[j] > p.max_replicas[j]) return false;
    if (p.rigid[j] && sum[j] != 0 && sum[j] != p.max_replicas[j]) return false;
  }
  for (std::size_t v = 0; v < V; ++v) {
    int used = 0, distributed = 0;
    for (std::size_t j = 0; j < J; ++j) {
      used += x[j * V + v];
      distributed += nodes[j] >= 2 && x[j * V + v] > 0;
    }
    if (used > p.vnode_gpus[v] || distributed > 1) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("sim.pollux_ga.nondominated_sort") {
  // Hand example (minimise both): A(1,5) B(2,3) C(4,1) are the front, F = B is a duplicate (same front);
  // G(2,4) is dominated by B only (front 1); D(3,4) by G (front 2); E(5,5) by D (front 3).
  const std::vector<std::pair<double, double>> f = {{1, 5}, {2, 3}, {4, 1}, {3, 4}, {5, 5}, {2, 3}, {2, 4}};
  const auto r = pollux_nondominated_ranks(f);
  CHECK(r == std::vector<int>{0, 0, 0, 2, 3, 0, 1});
  // Random points with many ties agree with peeling fronts.
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::pair<double, double>> g(1 + rng() % 40);
    for (auto& x : g) x = {static_cast<double>(rng() % 6), static_cast<double>(rng() % 6)};
    CHECK(pollux_nondominated_ranks(g) == brute_ranks(g));
  }
}

TEST_CASE("sim.pollux_ga.crowding_distance") {
  // pymoo: extremes 1e14, interior (neighbour gap / range) averaged over objectives, duplicates 0.
  const auto cd = pollux_crowding_distance({{0, 3}, {1, 2}, {2, 1}, {3, 0}, {1, 2}});
  REQUIRE(cd.size() == 5);
  CHECK(cd[0] == 1e14);
  CHECK(cd[3] == 1e14);
  CHECK(cd[1] == doctest::Approx(2.0 / 3.0));
  CHECK(cd[2] == doctest::Approx(2.0 / 3.0));
  CHECK(cd[4] == 0.0);
  CHECK(pollux_crowding_distance({{0, 1}, {1, 0}}) == std::vector<double>{1e14, 1e14});
}

TEST_CASE("sim.pollux_ga.operators_deterministic") {
  const auto p = toy_problem(3, {4, 4, 4, 2});
  PolluxState a(12), b(12);
  for (int i = 0; i < 12; ++i) a[static_cast<std::size_t>(i)] = i % 3, b[static_cast<std::size_t>(i)] = 10 + i;
  std::mt19937_64 r1(42), r2(42), r3(43);
  PolluxGenetic g1(p, {}, r1), g2(p, {}, r2), g3(p, {}, r3);
  bool differs = false;
  for (int t = 0; t < 20; ++t) {
    const auto c1 = g1.crossover(a, b);
    const auto c2 = g2.crossover(a, b);
    CHECK(c1 == c2);
    // Single point over jobs: each child is a prefix of rows of one parent and the suffix of the other.
    const auto& x = c1.first;
    std::size_t k = 0;
    while (k < 3 && std::equal(x.begin() + static_cast<std::ptrdiff_t>(4 * k),
                               x.begin() + static_cast<std::ptrdiff_t>(4 * k + 4),
                               a.begin() + static_cast<std::ptrdiff_t>(4 * k)))
      ++k;
    CHECK(std::equal(x.begin() + static_cast<std::ptrdiff_t>(4 * k), x.end(),
                     b.begin() + static_cast<std::ptrdiff_t>(4 * k)));
    for (std::size_t i = 0; i < 12; ++i) CHECK(c1.second[i] == (i < 4 * k ? b[i] : a[i]));
    PolluxState m1 = a, m2 = a, m3 = a;
    g1.mutate(m1);
    g2.mutate(m2);
    g3.mutate(m3);
    CHECK(m1 == m2);
    differs |= m1 != m3;
    for (std::size_t i = 0; i < 12; ++i) CHECK((m1[i] >= 0 && m1[i] <= p.vnode_gpus[i % 4]));
  }
  CHECK(differs);
  // Whole runs: same seed, same result.
  std::mt19937_64 s1(5), s2(5);
  PolluxGaOptions o;
  o.population = 20;
  o.generations = 10;
  PolluxGenetic h1(p, o, s1), h2(p, o, s2);
  const auto res1 = h1.run({p.base});
  const auto res2 = h2.run({p.base});
  CHECK(res1.best == res2.best);
  CHECK(res1.population == res2.population);
  CHECK(res1.population.size() == 20);
  CHECK(!res1.front.empty());
  CHECK(res1.front.size() <= res1.population.size());
  CHECK(res1.generations_run == 9);
}

TEST_CASE("sim.pollux_ga.repair_invariants") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const int J = 1 + static_cast<int>(rng() % 6), V = 1 + static_cast<int>(rng() % 6);
    std::vector<int> gpus(static_cast<std::size_t>(V));
    for (auto& g : gpus) g = 1 + static_cast<int>(rng() % 8);
    auto p = toy_problem(J, gpus);
    for (int j = 0; j < J; ++j) {
      p.max_replicas[static_cast<std::size_t>(j)] = 1 + static_cast<int>(rng() % 12);
      p.rigid[static_cast<std::size_t>(j)] = rng() % 3 == 0;
    }
    std::mt19937_64 ga_rng(trial);
    PolluxGenetic ga(p, {}, ga_rng);
    PolluxState x(static_cast<std::size_t>(J * V));
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<int>(rng() % (2 * gpus[i % static_cast<std::size_t>(V)] + 2)) - 1;
    ga.repair(x);
    CHECK(feasible(p, x));
    // A feasible state is a fixed point.
    auto y = x;
    ga.repair(y);
    CHECK(y == x);
  }
}

TEST_CASE("sim.pollux_ga.objectives") {
  // F0 is minus the power mean of the scaled speedups with restart factors; F1 is minus Pollux's cluster
  // utility, the raw speedups over the GPUs of the vnodes in use (also beyond 64 vnodes).
  auto p = toy_problem(2, std::vector<int>(70, 1));
  p.speedup_scale = 0.25;
  p.base[0] = 1;  // job 0 currently on vnode 0
  std::mt19937_64 rng(1);
  PolluxGenetic ga(p, {}, rng);
  PolluxState x(140, 0);
  x[0] = 1, x[1] = 1, x[69] = 1;  // job 0 on vnodes 0, 1, 69 (changed: restart factor 0.5)
  x[70 + 69] = 1;                 // job 1 on vnode 69 too (repair would not allow it; evaluate does not care)
  const auto o = ga.evaluate(x);
  const double s0 = toy_speedup(0, 3, 3) * 0.25 * 0.5, s1 = toy_speedup(1, 1, 1) * 0.25 * 0.5;
  CHECK(-o.neg_fitness == doctest::Approx(2.0 / (1.0 / (s0 + 1e-3) + 1.0 / (s1 + 1e-3))));
  CHECK(-o.neg_utility == doctest::Approx((toy_speedup(0, 3, 3) + toy_speedup(1, 1, 1)) / 3.0));
  // Unchanged rows are not penalised.
  PolluxState y(140, 0);
  y[0] = 1;
  CHECK(ga.fitness(y) == doctest::Approx(2.0 / (1.0 / (0.25 * toy_speedup(0, 1, 1) + 1e-3) + 1.0 / 1e-3)));
  CHECK(-ga.evaluate(y).neg_utility == doctest::Approx(toy_speedup(0, 1, 1)));
  CHECK(ga.evaluate(PolluxState(140, 0)).neg_utility == 0.0);
}

TEST_CASE("sim.pollux_ga.repair_follows_job_order") {
  // Pollux's repair resolves conflicts in row order (the least attained service first): on a shared vnode
  // the first distributed job keeps its GPUs, and capacity goes to the first rows.
  auto p = toy_problem(3, {4, 4, 4});
  std::mt19937_64 rng(9);
  PolluxGenetic ga(p, {}, rng);
  PolluxState x = {2, 2, 0,   // job 0: distributed over vnodes 0-1
                   0, 2, 2,   // job 1: distributed over vnodes 1-2 -> loses vnode 1
                   3, 0, 3};  // job 2: distributed too -> loses vnodes 0 and 2 (jobs 0 and 1 are there first)
  ga.repair(x);
  CHECK(x == PolluxState{2, 2, 0, 0, 0, 2, 0, 0, 0});
  PolluxState y = {3, 0, 0,  // single-vnode jobs: capacity in row order
                   3, 0, 0, 0, 4, 0};
  ga.repair(y);
  CHECK(y == PolluxState{3, 0, 0, 1, 0, 0, 0, 4, 0});
  // Max replicas and at most max_job_vnodes vnodes per job.
  auto q = toy_problem(1, std::vector<int>(6, 2));
  q.max_replicas = {7};
  q.max_job_vnodes = 3;
  std::mt19937_64 rng2(4);
  PolluxGenetic gq(q, {}, rng2);
  for (int t = 0; t < 20; ++t) {
    PolluxState z(6, 2);
    gq.repair(z);
    int sum = 0, nodes = 0;
    for (int g : z) sum += g, nodes += g > 0;
    CHECK(sum <= 6);
    CHECK(nodes <= 3);
    CHECK(sum == 6);  // 3 vnodes of 2 GPUs, below max replicas 7
  }
}

TEST_CASE("sim.pollux_ga.mutation") {
  // Pollux's mutation resets rows to the current allocation, zeroes entries, and grows entries only on vnodes
  // with free GPUs (measured after the first two steps), to at most the vnode's size.
  auto p = toy_problem(2, {4, 4});
  p.base = {4, 0, 0, 4};
  std::mt19937_64 rng(17);
  PolluxGenetic ga(p, {}, rng);
  int grew = 0, zeroed = 0, reset = 0;
  for (int t = 0; t < 400; ++t) {
    PolluxState full = {4, 0, 0, 4};  // both vnodes full: only zeroing makes room
    ga.mutate(full);
    for (int g : full) CHECK((g >= 0 && g <= 4));
    // Room appears only when an entry was zeroed (then both rows may grow there; the repair settles it).
    zeroed += full[1] > 0 || full[2] > 0 || full[0] < 4 || full[3] < 4;
    PolluxState some = {1, 0, 0, 0};
    ga.mutate(some);
    for (int g : some) CHECK((g >= 0 && g <= 4));
    reset += some[3] == 4;
    grew += some[0] > 1 || some[1] > 0 || some[2] > 0;
  }
  CHECK(zeroed > 0);
  CHECK(reset > 0);
  CHECK(grew > 100);  // every row grows on some free vnode with probability about 1 (p1 sums to 1 over them)
}

TEST_CASE("sim.pollux_ga.finds_brute_force_optimum") {
  // 2 jobs on vnodes of 4, 4 and 2 GPUs (5·5·3 values per job row): enumerate every feasible state.
  for (int variant = 0; variant < 2; ++variant) {
    auto p = toy_problem(2, {4, 4, 2});
    p.max_replicas = {6, 5};
    if (variant == 1) {
      p.base = {0, 2, 0, 1, 0, 1};  // current allocation: the re-allocation factor favours keeping it
      p.restart_factor = {0.3, 0.3};
      p.rigid = {0, 1};  // job 1 needs exactly 5 GPUs or none
    }
    std::mt19937_64 rng(3);
    PolluxGenetic ga(p, {}, rng);
    double best = -1;
    PolluxState x(6, 0);
    for (int code = 0; code < 75 * 75; ++code) {
      int c = code;
      for (std::size_t i = 0; i < 6; ++i) {
        const int base = p.vnode_gpus[i % 3] + 1;
        x[i] = c % base;
        c /= base;
      }
      if (feasible(p, x)) best = std::max(best, ga.fitness(x));
    }
    REQUIRE(best > 0);
    const auto res = ga.run({p.base});
    CHECK(feasible(p, res.best));
    CHECK(-res.best_objectives.neg_fitness == doctest::Approx(best).epsilon(1e-12));
  }
}

TEST_CASE("sim.pollux_ga.policy_fresh_jobs_and_greedy") {
  // Before any observation max replicas is 1: both searches give every job one GPU.
  const auto cluster = cluster_preset("paper-heterogeneous");
  const auto apps = catalogue_applications(cluster);
  std::vector<std::unique_ptr<SimJob>> jobs;
  for (int i = 0; i < 5; ++i) {
    sia::sim::WorkloadJob w;
    w.name = "cifar10-" + std::to_string(i);
    w.time = 10.0 * i;
    w.application = "cifar10";
    w.num_replicas = 4;
    w.batch_size = 2048;
    jobs.push_back(std::make_unique<SimJob>(w, apps.at("cifar10"), 3));
  }
  std::vector<SimJob*> ptrs;
  for (auto& j : jobs) ptrs.push_back(j.get());
  PolicyContext ctx;
  ctx.now = 60;
  ctx.cluster = &cluster;
  ctx.jobs = ptrs;
  for (auto search : {PolluxSearch::genetic, PolluxSearch::greedy}) {
    PolluxPolicyOptions o;
    o.search = search;
    PolluxPolicy pollux(o);
    const auto a = pollux.allocate(ctx);
    REQUIRE(a.size() == 5);
    for (const auto& x : a) {
      CHECK(x.gpus == 1);
      CHECK(x.nodes == 1);
    }
    // Fitness = harmonic mean of the speedups before any model, 1 GPU / fair share (ceil(64 / 5) = 13),
    // scaled by 16/64, times the re-allocation factor r(age).
    double inv = 0;
    for (int i = 0; i < 5; ++i) inv += 1.0 / (0.25 / 13.0 * (60.0 - 10.0 * i) / (60.0 - 10.0 * i + 30.0) + 1e-3);
    CHECK(pollux.last_fitness() == doctest::Approx(5.0 / inv));
  }
  // Same seed, same decisions; the GA keeps its population between rounds.
  PolluxPolicy p1, p2;
  for (int round = 0; round < 3; ++round) {
    ctx.now = 60.0 * (round + 1);
    const auto a1 = p1.allocate(ctx);
    const auto a2 = p2.allocate(ctx);
    for (std::size_t i = 0; i < a1.size(); ++i) {
      CHECK(a1[i].type == a2[i].type);
      CHECK(a1[i].gpus == a2[i].gpus);
    }
  }
}

// Step (0) of the repair: a rigid job's partial row grows to its count (its own vnodes first, then the
// following ones), so a single mutated entry can start a rigid job that spans several vnodes.
TEST_CASE("sim.pollux_ga.repair_completes_rigid_rows") {
  auto p = toy_problem(2, {4, 4, 4, 4});
  p.max_replicas = {12, 4};
  p.rigid = {1, 0};
  std::mt19937_64 rng(3);
  PolluxGenetic ga(p, {}, rng);
  PolluxState x = {0, 2, 0, 0,   // rigid 12-GPU job: 2 GPUs on vnode 1
                   3, 0, 0, 0};  // adaptive job on vnode 0
  ga.repair(x);
  CHECK(x == PolluxState{0, 4, 4, 4, 3, 0, 0, 0});
  // Where the completed row does not fit, the capacity step still empties it (or the other job's share).
  PolluxState y = {0, 0, 0, 2,  // grows to vnodes 3, 0, 1 (cyclically after its first vnode)
                   3, 0, 0, 0};
  ga.repair(y);
  const bool rigid_kept = y[0] + y[1] + y[2] + y[3] == 12;
  CHECK((rigid_kept ? y[4] == 0 : (y[0] + y[1] + y[2] + y[3] == 0 && y[4] == 3)));
}
