#pragma once
// A test policy: first come, first served. Each job, in submission order, gets its workload GPU count
// (num_replicas) on the first GPU type, in cluster order, that still has that many free GPUs; jobs
// that fit nowhere wait. It shows what a policy is (one file: the class and its PolicyInfo) and is
// registered with sia::sim::register_policy(fifo_policy_info()) by the tests, the way a program adds
// a policy of its own; a built-in policy adds one `sia_add_policy` line instead (docs/architecture.md).
#include <sia/sim/policy.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace sia::test {

class FifoPolicy final : public sim::Policy {
 public:
  explicit FifoPolicy(double interval_s, int max_gpus) : interval_s_(interval_s), max_gpus_(max_gpus) {}
  [[nodiscard]] std::string name() const override { return "fifo"; }
  [[nodiscard]] double default_interval_s() const override { return interval_s_; }
  [[nodiscard]] std::vector<sim::SimAllocation> allocate(const sim::PolicyContext& ctx) override {
    const sim::SimCluster& cluster = *ctx.cluster;
    std::vector<int> free(cluster.types.size());
    for (std::size_t t = 0; t < free.size(); ++t) free[t] = cluster.type_gpus(static_cast<int>(t));
    std::vector<sim::SimAllocation> out(ctx.jobs.size());
    for (std::size_t j = 0; j < ctx.jobs.size(); ++j) {
      const int want = std::min(std::max(1, ctx.jobs[j]->target_replicas), max_gpus_);
      for (std::size_t t = 0; t < free.size(); ++t) {
        if (free[t] < want) continue;
        const int per_node = cluster.types[t].gpus_per_node;
        out[j] = sim::SimAllocation{static_cast<int>(t), (want + per_node - 1) / per_node, want};
        free[t] -= want;
        break;
      }
    }
    return out;
  }

 private:
  double interval_s_;
  int max_gpus_;
};

/// The registry entry of the test policy: name, description, options, factory.
inline sim::PolicyInfo fifo_policy_info() {
  sim::PolicyInfo info;
  info.name = "fifo";
  info.description = "test policy: first come first served, workload GPU counts, first type that fits";
  info.options = {{"interval_s", "60", "round length (s)"}, {"max_gpus", "64", "largest GPU count of one job"}};
  info.make = [](const sim::PolicyOptions& o) {
    return std::unique_ptr<sim::Policy>(std::make_unique<FifoPolicy>(
        o.number("interval_s", 60.0, 1e-3, 1e9), static_cast<int>(o.integer("max_gpus", 64, 1, 1 << 20))));
  };
  return info;
}

}  // namespace sia::test
