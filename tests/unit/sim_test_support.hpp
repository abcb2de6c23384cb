#pragma once
// Test support for simulator policies: a tiny one-type cluster with cifar10 jobs of given GPU counts
// (built-in catalogue), and a driver that calls a policy for a number of rounds.
#include <sia/sim/catalogue.hpp>
#include <sia/sim/policy.hpp>

#include <memory>
#include <string>
#include <vector>

namespace sia::test {

struct TinyRigidJobs {
  sim::SimCluster cluster;
  sim::ApplicationSet apps;
  std::vector<std::unique_ptr<sim::SimJob>> owned;
  std::vector<sim::SimJob*> jobs;

  /// `nodes` rtx nodes of `gpus_per_node`; one cifar10 job per entry of `replicas` at global batch `batch`.
  TinyRigidJobs(int nodes, int gpus_per_node, const std::vector<int>& replicas, long long batch) {
    cluster.name = "tiny";
    cluster.types.push_back({"rtx", "rtx", nodes, gpus_per_node, nodes});
    apps = sim::catalogue_applications(cluster);
    for (std::size_t i = 0; i < replicas.size(); ++i) {
      sim::WorkloadJob w;
      w.name = "cifar10-" + std::to_string(i);
      w.application = "cifar10";
      w.num_replicas = replicas[i];
      w.batch_size = batch;
      owned.push_back(std::make_unique<sim::SimJob>(w, apps.at("cifar10"), 1));
      jobs.push_back(owned.back().get());
    }
  }

  /// Calls `policy` at 360 s, 720 s, ...; one vector of allocations (one per job) per round.
  std::vector<std::vector<sim::SimAllocation>> run(sim::Policy& policy, int rounds) {
    std::vector<std::vector<sim::SimAllocation>> out;
    for (int r = 0; r < rounds; ++r) {
      sim::PolicyContext ctx;
      ctx.now = 360.0 * (r + 1);
      ctx.cluster = &cluster;
      ctx.jobs = jobs;
      out.push_back(policy.allocate(ctx));
    }
    return out;
  }
};

}  // namespace sia::test
