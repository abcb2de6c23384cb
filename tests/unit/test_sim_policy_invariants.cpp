// Every registered policy under the same invariants (issue 18): on small random workloads and clusters, every
// round stays within each GPU type's GPUs, allocations have whole nodes' worth of shape, the inelastic policies
// (TunedJobs) give a job exactly its GPU count or nothing, every job finishes, and runs are deterministic.
#include <doctest/doctest.h>

#include <sia/sim/catalogue.hpp>
#include <sia/sim/pollux_policy.hpp>
#include <sia/sim/simulator.hpp>
#include <sia/sim/time_sharing.hpp>

#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <set>

using namespace sia::sim;

namespace {

std::unique_ptr<Policy> small_policy(const std::string& name) {
  if (name == "pollux") {  // the genetic search with a small population keeps the Debug/sanitizer run short
    PolluxPolicyOptions o;
    o.population = 12;
    o.generations = 6;
    return std::make_unique<PolluxPolicy>(o);
  }
  return make_policy(name);
}

bool inelastic(const std::string& name) { return name == "gavel" || name == "themis" || name == "shockwave"; }

}  // namespace

TEST_CASE("sim.policies.invariants") {
  const int trials = std::getenv("SIA_POLICY_TRIALS") ? std::atoi(std::getenv("SIA_POLICY_TRIALS")) : 2;
  std::mt19937_64 rng(18);
  for (int trial = 0; trial < trials; ++trial) {
    for (const char* preset : {"paper-homogeneous", "paper-heterogeneous"}) {
      const auto cluster = cluster_preset(preset);
      const auto apps = catalogue_applications(cluster);
      auto w = synthetic_philly_workload(rng(), 10.0, 1.0);
      if (w.jobs.size() > 7) w.jobs.resize(7);
      for (auto& j : w.jobs)  // short jobs: small models only, counts that fit every type
        if (j.application == "imagenet" || j.application == "yolov3") j.application = "cifar10", j.batch_size = 2048;
      for (const auto& name : policy_names()) {
        INFO("trial " << trial << " " << preset << " " << name);
        SimOptions o;
        o.keep_round_log = true;
        o.horizon_s = 30 * 86400.0;
        auto p1 = small_policy(name);
        const auto r = simulate(cluster, apps, w, *p1, o);
        std::map<std::string, int> target;
        for (const auto& j : w.jobs) target[j.name] = j.num_replicas;
        for (const auto& round : r.rounds) {
          std::vector<int> used(cluster.types.size(), 0);
          std::set<std::string> seen;
          for (const auto& a : round.allocations) {
            CHECK(seen.insert(a.job).second);  // one allocation per job
            if (a.type < 0 || a.gpus <= 0) continue;
            REQUIRE(a.type < static_cast<int>(cluster.types.size()));
            const auto& t = cluster.types[static_cast<std::size_t>(a.type)];
            used[static_cast<std::size_t>(a.type)] += a.gpus;
            CHECK(a.nodes >= (a.gpus + t.gpus_per_node - 1) / t.gpus_per_node);
            CHECK(a.nodes <= std::min(a.gpus, t.nodes));
            if (inelastic(name)) CHECK(a.gpus == target[a.job]);
          }
          for (std::size_t t = 0; t < used.size(); ++t) CHECK(used[t] <= cluster.type_gpus(static_cast<int>(t)));
        }
        for (const auto& j : r.jobs) CHECK(j.completion_time.has_value());
        // Same inputs, same run.
        auto p2 = small_policy(name);
        const auto again = simulate(cluster, apps, w, *p2, o);
        REQUIRE(again.jobs.size() == r.jobs.size());
        for (std::size_t i = 0; i < r.jobs.size(); ++i) {
          CHECK(again.jobs[i].completion_time == r.jobs[i].completion_time);
          CHECK(again.jobs[i].restarts == r.jobs[i].restarts);
        }
      }
    }
  }
}

TEST_CASE("sim.policies.whole_gpu_placement_keeps_previous_nodes") {
  // The inelastic policies' placement: previous nodes when all still free (a running job stays put), else node
  // by node; nothing taken when the type has too few free GPUs.
  std::vector<int> free = {4, 4, 4};
  CHECK(place_whole_gpus(free, 4, {{2, 4}}) == std::vector<std::pair<int, int>>{{2, 4}});
  CHECK(free == std::vector<int>{4, 4, 0});
  CHECK(place_whole_gpus(free, 6, {{2, 4}, {1, 2}}) == std::vector<std::pair<int, int>>{{0, 4}, {1, 2}});
  CHECK(free == std::vector<int>{0, 2, 0});
  CHECK(place_whole_gpus(free, 3, {}).empty());  // only 2 free: nothing taken
  CHECK(free == std::vector<int>{0, 2, 0});
  CHECK(place_whole_gpus(free, 2, {{0, 2}}) == std::vector<std::pair<int, int>>{{1, 2}});  // previous node busy
}
