#pragma once
// Shared by the round benchmarks: the paper's heterogeneous cluster scaled up, and a synthetic but
// realistic active-job population (deterministic from a seed).
#include <sia/cluster.hpp>
#include <sia/configuration.hpp>
#include <sia/gpu_type_spec.hpp>
#include <sia/job_spec.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace sia::bench {

/// The paper's 64-GPU heterogeneous cluster (6 x 4 T4 "aws", 3 x 8 "rtx", 2 x 8 A100 "dgx-ext"),
/// every node count multiplied by `scale` (1 -> 64 GPUs, 32 -> 2048, 256 -> 16 384).
inline ClusterSpec heterogeneous_cluster(int scale) {
  ClusterSpec c;
  c.types = {GpuTypeSpec("aws", 6 * scale, 4), GpuTypeSpec("rtx", 3 * scale, 8), GpuTypeSpec("dgx-ext", 2 * scale, 8)};
  return c;
}

/// Active jobs of a Helios-like load per 64 GPUs. The artifact's scale_<N>x workloads submit
/// 160 jobs per 64 GPUs over 7.8 h (scale_32x: 5120 jobs for 2048 GPUs); with a residence time of
/// about one hour (the paper's Sia average JCT on Helios is 0.7 h, plus queueing) the median number
/// of active jobs is 18 per 64 GPUs (36 at 2x, 576 at 32x): we use 20.
inline constexpr int kActiveJobsPer64Gpus = 20;

/// `n` active jobs for `cluster`: per job and GPU type a concave speedup curve
/// goodput = base_t * gpus^alpha_t (alpha in [0.5, 0.95]) with a multi-node communication penalty,
/// GPU limits drawn from the workload's replica counts (4..16, rarely up to 64 for large
/// clusters), about 60 % currently running (with age and restarts, so restart factors apply),
/// a few rigid jobs, and a few non-preemptible running jobs.
inline std::vector<JobSpec> synthetic_jobs(const ClusterSpec& cluster, int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> base(0.5, 3.0), alpha(0.5, 0.95), penalty(0.75, 0.95), age(0.0, 7200.0);
  std::uniform_int_distribution<int> restarts(0, 4), coin(0, 99);
  const int replicas[] = {4, 6, 8, 10, 12, 16};
  std::uniform_int_distribution<int> pick(0, 5);
  const int T = cluster.num_types();
  std::vector<long long> free(static_cast<std::size_t>(T));
  for (int t = 0; t < T; ++t)
    free[static_cast<std::size_t>(t)] = static_cast<long long>(cluster.types[static_cast<std::size_t>(t)].num_nodes()) *
                                        cluster.types[static_cast<std::size_t>(t)].gpus_per_node();
  auto names = std::make_shared<std::vector<std::string>>();
  for (const auto& t : cluster.types) names->push_back(t.name());
  std::vector<JobSpec> jobs;
  jobs.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    struct Curve {
      double base, alpha, pen;
    };
    auto curves = std::make_shared<std::vector<Curve>>();
    for (int t = 0; t < T; ++t) curves->push_back({base(rng), alpha(rng), penalty(rng)});
    int max_g = replicas[pick(rng)];
    if (coin(rng) < 3) max_g *= 4;
    JobSpec j("job-" + std::to_string(i));
    j.min_gpus(1).max_gpus(max_g).restart_cost_s(30.0 + 10.0 * (i % 7));
    j.goodput_fn([curves, names](const GpuTypeSpec& type, const ConfigurationSpec& c) {
      const auto it = std::find(names->begin(), names->end(), type.name());
      if (it == names->end()) return 0.0;
      const auto t = static_cast<std::size_t>(it - names->begin());
      const auto& cv = (*curves)[t];
      double g = cv.base * std::pow(static_cast<double>(c.gpus), cv.alpha);
      if (c.nodes > 1) g *= std::pow(cv.pen, std::log2(static_cast<double>(c.nodes)));
      return g;
    });
    const int r = coin(rng);
    if (r < 5) j.kind(JobKind::rigid).min_gpus(std::min(4, max_g)).max_gpus(std::min(4, max_g));
    if (r < 60) {
      // Currently running: a power-of-two count on one type that still has room.
      const int t = static_cast<int>(rng() % static_cast<unsigned>(T));
      const int R = cluster.types[static_cast<std::size_t>(t)].gpus_per_node();
      int g = 1;
      while (g * 2 <= std::min(j.max_gpus(), R) && coin(rng) < 60) g *= 2;
      if (j.kind() == JobKind::rigid) g = j.min_gpus() <= R ? j.min_gpus() : g;
      if (free[static_cast<std::size_t>(t)] >= g) {
        free[static_cast<std::size_t>(t)] -= g;
        CurrentAllocation cur;
        cur.type = t;
        cur.gpus = g;
        cur.nodes = 1;
        j.current(cur).age_s(age(rng)).restarts(restarts(rng)).max_gpus_ever(g);
        if (coin(rng) < 3) j.preemptible(false);
      }
    }
    jobs.push_back(std::move(j));
  }
  return jobs;
}

}  // namespace sia::bench
