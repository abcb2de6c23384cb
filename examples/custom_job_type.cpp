// custom_job_type: a scheduler runs a Sia round on its OWN job and GPU-type structs, without
// converting them to sia::JobSpec (generic_round.hpp adapts them through the concepts).
//
// The scheduler's types below only have to offer what the concepts ask for:
//   GPU type: name(), num_nodes(), gpus_per_node()
//   job:      id(), min_gpus(), max_gpus(), kind(), goodput(gpu_type, config)
// and may offer more (preemptible(), current(), age_s(), restarts(), restart_cost_s(),
// max_gpus_ever(), pipeline_size(), batch_size(gpu_type, config)), which sia then uses.
#include <sia/generic_round.hpp>

#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace myscheduler {

// The scheduler's own description of a GPU pool.
struct GpuPool {
  std::string model;  // "t4", "a100", ...
  int machines = 0;
  int gpus_per_machine = 0;
  double tflops = 0.0;  // whatever the scheduler knows about the hardware

  const std::string& name() const { return model; }
  int num_nodes() const { return machines; }
  int gpus_per_node() const { return gpus_per_machine; }
};

// The scheduler's own job record, with a toy goodput model: per-GPU speed proportional to the
// pool's TFLOPS, sub-linear scaling, and a communication penalty across machines.
struct TrainingJob {
  std::string name;
  int min_replicas = 1;
  int max_replicas = 16;
  double scaling = 0.9;           // exponent of the speed-up curve
  double network_penalty = 0.85;  // per extra machine
  bool checkpointing = false;     // busy saving state: cannot be moved this round
  std::optional<sia::CurrentAllocation> running_on;
  double seconds_running = 0.0;
  int restarts_so_far = 0;

  std::string_view id() const { return name; }
  int min_gpus() const { return min_replicas; }
  int max_gpus() const { return max_replicas; }
  sia::JobKind kind() const { return sia::JobKind::adaptive; }
  double goodput(const GpuPool& pool, const sia::ConfigurationSpec& c) const {
    return pool.tflops * std::pow(c.gpus, scaling) * std::pow(network_penalty, c.nodes - 1);
  }
  // Optional members: detected and used by the round.
  bool preemptible() const { return !checkpointing; }
  std::optional<sia::CurrentAllocation> current() const { return running_on; }
  double age_s() const { return seconds_running; }
  int restarts() const { return restarts_so_far; }
  sia::BatchChoice batch_size(const GpuPool&, const sia::ConfigurationSpec& c) const {
    return {128LL * c.gpus, 128, 0};
  }
};

}  // namespace myscheduler

int main() {
  using myscheduler::GpuPool;
  using myscheduler::TrainingJob;
  const std::vector<GpuPool> pools = {{"t4", 4, 4, 65.0}, {"rtx", 2, 8, 108.0}, {"a100", 1, 8, 312.0}};

  std::vector<TrainingJob> jobs(6);
  const char* names[] = {"resnet", "bert", "yolo", "gpt-small", "deepspeech", "ncf"};
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].name = names[i];
    jobs[i].scaling = 0.6 + 0.07 * static_cast<double>(i);
    jobs[i].max_replicas = 4 << (i % 3);
  }
  // "bert" is checkpointing on 8 rtx GPUs: it keeps them this round.
  jobs[1].checkpointing = true;
  jobs[1].running_on = sia::CurrentAllocation{1, 8, 1, {}};
  jobs[1].seconds_running = 3600;
  // "yolo" runs on 4 t4 GPUs; moving it costs a restart.
  jobs[2].running_on = sia::CurrentAllocation{0, 4, 1, {}};
  jobs[2].seconds_running = 600;
  jobs[2].restarts_so_far = 1;

  sia::RoundOptions options;  // p = -0.5, lambda = 1.1, default backend
  sia::ClusterState state;
  state.reserved = {0, 0, 2};  // two A100s belong to someone else
  const sia::RoundResult r = sia::run_round(pools, jobs, options, state);

  std::cout << "round: status " << sia::to_string(r.status) << ", backend " << r.backend << ", objective "
            << r.objective << "\n";
  for (const auto& d : r.decisions) {
    std::cout << "  " << d.job << ": ";
    if (!d.config) {
      std::cout << "waits\n";
      continue;
    }
    std::cout << d.gpus << " x " << pools[static_cast<std::size_t>(d.config->type)].model << " on " << d.config->nodes
              << " node(s)";
    if (d.batch) std::cout << ", batch " << d.batch->global_batch;
    std::cout << (d.changed ? " (changed)" : " (unchanged)") << "\n";
  }
  bool ok = r.status == sia::RoundStatus::optimal;
  for (std::size_t t = 0; t < pools.size(); ++t) {
    const int capacity = pools[t].machines * pools[t].gpus_per_machine - state.reserved[t];
    std::cout << "  " << pools[t].model << ": " << r.gpus_used[t] << " of " << capacity << " free GPUs used\n";
    ok = ok && r.gpus_used[t] <= capacity;
  }
  ok = ok && r.decisions[1].config && !r.decisions[1].changed;  // the checkpointing job kept its GPUs
  std::cout << (ok ? "custom job types: round OK\n" : "custom job types: round FAILED\n");
  return ok ? 0 : 1;
}
