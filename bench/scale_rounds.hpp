#pragma once
// Round instances recorded from simulated rounds of the artifact's scale workloads
// (../shared/data/sia-artifact/workloads/scale/scale_32x, Helios-like arrivals of 160 jobs per 64
// GPUs over 7.8 h): the simulator runs the Sia policy on the paper's heterogeneous cluster scaled
// by `cluster_scale`, and every few rounds the round's input is copied into a self-contained
// instance (each job's goodputs evaluated on the configurations it may take, as a GoodputTable).
// Nothing is written to disk and nothing is committed: the rounds are recorded at bench time.
// At --scale 256 (16,384 GPUs) the workload is tiled `tiles` times (job names suffixed) to keep
// its load per GPU.
#include <sia/configuration_set.hpp>
#include <sia/goodput_table.hpp>
#include <sia/sim/cluster.hpp>
#include <sia/sim/sia_policy.hpp>
#include <sia/sim/simulator.hpp>
#include <sia/sim/workload.hpp>
#include <sia/valid_configs.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "round_instances.hpp"

namespace sia::bench {

struct ScaleRounds {
  std::vector<RoundInstance> rounds;
  std::string skipped;  ///< why there are none (missing data), empty otherwise
};

/// Copy of a round's input whose goodputs no longer depend on the simulator.
inline RoundInstance freeze_round(const ClusterSpec& cluster, std::span<const JobSpec> jobs,
                                  const std::string& family) {
  RoundInstance in;
  in.family = family;
  in.cluster = cluster;
  const ConfigurationSet set = make_configuration_set(cluster);
  for (const JobSpec& j : jobs) {
    JobSpec c(j.id());
    c.min_gpus(j.min_gpus()).max_gpus(j.max_gpus()).kind(j.kind()).preemptible(j.preemptible()).age_s(j.age_s());
    c.restarts(j.restarts()).restart_cost_s(j.restart_cost_s()).pipeline_size(j.pipeline_size());
    c.max_gpus_ever(j.max_gpus_ever()).current(j.current());
    GoodputTable table;
    const JobLimits lim{j.min_gpus(), j.max_gpus(), j.kind(), j.pipeline_size(), j.max_gpus_ever()};
    for (const ValidConfig& v : valid_configs(set, lim)) {
      const ConfigurationSpec& cfg = set.configs[static_cast<std::size_t>(v.config)];
      const auto& type = cluster.types[static_cast<std::size_t>(cfg.type)];
      const double g = j.goodput(type, ConfigurationSpec{cfg.type, cfg.nodes, v.gpus});
      if (g > 0.0) table.set(type.name(), cfg.nodes, v.gpus, g);
    }
    // A running job is asked for its current configuration too (it may lie outside its limits).
    if (j.current()) {
      const auto& cur = *j.current();
      const auto& type = cluster.types[static_cast<std::size_t>(cur.type)];
      const double g = j.goodput(type, ConfigurationSpec{cur.type, cur.nodes, cur.gpus});
      if (g > 0.0) table.set(type.name(), cur.nodes, cur.gpus, g);
    }
    c.goodput_model(std::move(table));
    in.jobs.push_back(std::move(c));
  }
  return in;
}

/**
 * @brief Simulates scale_32x on the heterogeneous cluster x `cluster_scale` (the workload tiled
 * `tiles` times) for `hours` of simulated time and records `count` rounds spread over the second
 * half of that time (when the cluster is loaded).
 */
inline ScaleRounds record_scale_rounds(int cluster_scale, int tiles, double hours, int count) {
  ScaleRounds out;
  const std::filesystem::path shared = SIA_SHARED_DIR;
  const auto wdir = shared / "data/sia-artifact/workloads/scale/scale_32x";
  const auto profiles = shared / "data/sia-artifact/profiles";
  if (!std::filesystem::exists(wdir) || !std::filesystem::exists(profiles)) {
    out.skipped = "missing " + (std::filesystem::exists(wdir) ? profiles : wdir).string();
    return out;
  }
  const auto cluster = sim::load_cluster("paper-heterogeneous", cluster_scale);
  auto workloads = sim::load_workloads(wdir);
  if (workloads.empty()) {
    out.skipped = "no workload CSV in " + wdir.string();
    return out;
  }
  sim::Workload w = workloads.front();
  if (tiles > 1) {
    std::vector<sim::WorkloadJob> tiled;
    for (const auto& job : w.jobs)
      for (int k = 0; k < tiles; ++k) {
        sim::WorkloadJob copy = job;
        if (k > 0) copy.name += "#" + std::to_string(k);
        tiled.push_back(std::move(copy));
      }
    w.jobs = std::move(tiled);  // stays sorted by time: copies share their original's time
  }
  const auto apps = sim::load_applications(profiles, cluster, {w});
  const std::string family = "scale" + std::to_string(cluster_scale);
  const double interval = 60.0;
  // One round per interval: skip the first half (the cluster fills up), then record every
  // `stride`-th round.
  const int total = static_cast<int>(hours * 3600.0 / interval);
  const int warm = total / 2;
  const int stride = std::max(1, (total - warm) / std::max(1, count));
  int round_no = 0;
  sim::SiaPolicyOptions po;
  po.interval_s = interval;
  po.on_round = [&](const ClusterSpec& c, std::span<const JobSpec> jobs, const RoundResult&) {
    const int r = round_no++;
    if (r < warm || (r - warm) % stride != 0 || static_cast<int>(out.rounds.size()) >= count) return;
    out.rounds.push_back(freeze_round(c, jobs, family));
  };
  sim::SiaPolicy policy(po);
  sim::SimOptions so;
  so.interval_s = interval;
  so.horizon_s = hours * 3600.0;
  // The recording window ends before the workload's last arrivals (scale_32x submits until 7.8 h): cut it short
  // on purpose, as the round-time experiments do, rather than have the simulator refuse the later jobs.
  so.truncate = true;
  (void)sim::simulate(cluster, apps, w, policy, so);
  return out;
}

}  // namespace sia::bench
