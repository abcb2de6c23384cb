#pragma once
// Round instances for the solver bench (bench_solver.cpp) and the solver's stress tests: clusters
// of 64 to 100,000 GPUs and job populations of several families, each deterministic from a seed.
//
// Families (what makes each hard):
//   helios        Helios-like load (20 active jobs per 64 GPUs, 20,000 at 100,000 GPUs), random
//                 concave speedup curves per type, half of the jobs running (restart factors), 3 %
//                 of the running ones non-preemptible, a few rigid jobs.
//   tables        the same load given as GoodputTable objects (what sia_allocate builds from
//                 JSON goodput tables): random, not necessarily concave tables.
//   tables-nomax  the same without max_gpus: only the tables say which counts a job can use
//                 (100,000 GPUs are 62,500 configurations per job before that is known).
//   near-ties     utilities drawn from a handful of values with perturbations near 1e-12: the
//                 Lagrangian reduced costs of many jobs coincide to the last digits.
//   identical     every job a copy of one of 3 templates (same table, same limits, waiting):
//                 thousands of interchangeable jobs.
//   oversub       demand 2-5x the capacity (minimum counts 2-16 GPUs).
//   pinned        30 % of the jobs non-preemptible and running.
//   many-types    5-10 GPU types, one with 6-GPU nodes (two capacity rows for that type).
//   batch         Pollux models (JobModel): every goodput optimises the batch size.
//   infeasible    interchangeable non-preemptible waiting jobs, one more than fit (capacities 4k+2,
//                 jobs of 4 GPUs): the LP relaxation is feasible, the integer problem is not.
#include <sia/allocation.hpp>
#include <sia/cluster.hpp>
#include <sia/configuration.hpp>
#include <sia/goodput/job_model.hpp>
#include <sia/goodput_table.hpp>
#include <sia/gpu_type_spec.hpp>
#include <sia/job_spec.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace sia::bench {

struct RoundInstance {
  std::string family;
  ClusterSpec cluster;
  std::vector<JobSpec> jobs;
};

/// The families above, in bench order.
inline const std::vector<std::string>& instance_families() {
  static const std::vector<std::string> f = {"helios",  "tables", "tables-nomax", "near-ties", "identical",
                                             "oversub", "pinned", "many-types",   "batch",     "infeasible"};
  return f;
}

/// The paper's heterogeneous cluster (6 x 4 T4 "aws", 3 x 8 "rtx", 2 x 8 A100 "dgx-ext", 64 GPUs)
/// with node counts x (gpus / 64) for 64, 2048 and 16,384 GPUs; 100,000 GPUs (and any size that is
/// not a multiple of 64) as five types of 4- and 8-GPU nodes in the proportions 10:20:30:20:20.
inline ClusterSpec bench_cluster(int gpus) {
  ClusterSpec c;
  if (gpus % 64 == 0 && gpus <= 16384) {
    const int s = gpus / 64;
    c.types = {GpuTypeSpec("aws", 6 * s, 4), GpuTypeSpec("rtx", 3 * s, 8), GpuTypeSpec("dgx-ext", 2 * s, 8)};
    return c;
  }
  const double share[] = {0.10, 0.20, 0.30, 0.20, 0.20};
  const int per_node[] = {4, 8, 8, 8, 8};
  const char* names[] = {"t4", "rtx", "a100", "v100", "h100"};
  for (int t = 0; t < 5; ++t)
    c.types.emplace_back(names[t], std::max(1, static_cast<int>(std::lround(share[t] * gpus / per_node[t]))),
                         per_node[t]);
  return c;
}

/// 5-10 GPU types (drawn from the seed) sharing `gpus` GPUs; one type has 6-GPU nodes.
inline ClusterSpec many_types_cluster(int gpus, std::mt19937& rng) {
  const int T = std::uniform_int_distribution<int>(5, 10)(rng);
  const int sizes[] = {4, 8, 6, 8, 16, 4, 8, 8, 4, 8};
  ClusterSpec c;
  std::vector<double> w(static_cast<std::size_t>(T));
  double sum = 0.0;
  for (auto& x : w) sum += (x = std::uniform_real_distribution<double>(1.0, 3.0)(rng));
  for (int t = 0; t < T; ++t) {
    const int per = sizes[t];
    const int nodes = std::max(1, static_cast<int>(std::lround(w[static_cast<std::size_t>(t)] / sum * gpus / per)));
    c.types.emplace_back("type" + std::to_string(t), nodes, per);
  }
  return c;
}

/// Active jobs of the Helios-like load for a cluster of `gpus` GPUs: 20 per 64 GPUs (the
/// artifact's scale_<N>x workloads, median 18 active), 20,000 at 100,000 GPUs (product.md §6).
inline int helios_jobs(int gpus) { return gpus >= 100000 ? 20000 : gpus / 64 * 20; }

namespace detail {

inline std::shared_ptr<const std::vector<std::string>> type_names(const ClusterSpec& c) {
  auto names = std::make_shared<std::vector<std::string>>();
  for (const auto& t : c.types) names->push_back(t.name());
  return names;
}

// Goodput of `c` on type index t from per-type curve parameters.
struct Curve {
  double base = 1.0, alpha = 0.8, pen = 0.9;
  [[nodiscard]] double at(const ConfigurationSpec& c) const {
    double g = base * std::pow(static_cast<double>(c.gpus), alpha);
    if (c.nodes > 1) g *= std::pow(pen, std::log2(static_cast<double>(c.nodes)));
    return g;
  }
};

// A job's goodput on its curves, as a goodput model object (JobSpec::goodput_model): an immutable
// value, so a warm round reuses the goodputs of an unchanged job (JobSpec::goodput_model_identity).
struct CurveModel {
  std::shared_ptr<const std::vector<Curve>> curves;
  std::shared_ptr<const std::vector<std::string>> names;
  [[nodiscard]] double goodput(const GpuTypeSpec& type, const ConfigurationSpec& c) const {
    // Types are few: a linear scan beats hashing here.
    for (std::size_t t = 0; t < names->size(); ++t)
      if ((*names)[t] == type.name()) return (*curves)[t].at(c);
    return 0.0;
  }
};

inline CurveModel curve_fn(std::shared_ptr<const std::vector<Curve>> curves,
                           std::shared_ptr<const std::vector<std::string>> names) {
  return CurveModel{std::move(curves), std::move(names)};
}

// Marks about `share` of the jobs as running on a power-of-two count of one type with room left
// (age and restarts drawn so that restart factors apply); `pin_share` of those non-preemptible.
inline void set_running(std::vector<JobSpec>& jobs, const ClusterSpec& cluster, std::mt19937& rng, double share,
                        double pin_share) {
  std::uniform_real_distribution<double> u(0.0, 1.0), age(0.0, 7200.0);
  std::uniform_int_distribution<int> restarts(0, 4);
  const int T = cluster.num_types();
  std::vector<long long> free(static_cast<std::size_t>(T));
  for (int t = 0; t < T; ++t)
    free[static_cast<std::size_t>(t)] = static_cast<long long>(cluster.types[static_cast<std::size_t>(t)].num_nodes()) *
                                        cluster.types[static_cast<std::size_t>(t)].gpus_per_node();
  for (auto& j : jobs) {
    if (u(rng) >= share) continue;
    const int t = static_cast<int>(rng() % static_cast<unsigned>(T));
    const int R = cluster.types[static_cast<std::size_t>(t)].gpus_per_node();
    int biggest = 1;  // largest power of two that fits in one node
    while (biggest * 2 <= R) biggest *= 2;
    int g = 1;
    if (j.kind() == JobKind::rigid) {
      g = j.min_gpus();
      if (g > biggest) continue;
    } else {
      while (g < j.min_gpus()) g *= 2;
      while (g * 2 <= std::min(j.max_gpus(), biggest) && u(rng) < 0.6) g *= 2;
      if (g > std::min(j.max_gpus(), biggest)) continue;
    }
    if (free[static_cast<std::size_t>(t)] < g) continue;
    if (!(j.goodput(cluster.types[static_cast<std::size_t>(t)], ConfigurationSpec{t, 1, g}) > 0.0))
      continue;  // cannot run there
    free[static_cast<std::size_t>(t)] -= g;
    CurrentAllocation cur;
    cur.type = t;
    cur.gpus = g;
    cur.nodes = 1;
    j.current(cur).age_s(age(rng)).restarts(restarts(rng)).max_gpus_ever(g);
    if (u(rng) < pin_share) j.preemptible(false);
  }
}

inline int draw_max_gpus(std::mt19937& rng) {
  const int replicas[] = {4, 6, 8, 10, 12, 16};
  int m = replicas[std::uniform_int_distribution<int>(0, 5)(rng)];
  if (std::uniform_int_distribution<int>(0, 99)(rng) < 3) m *= 4;
  return m;
}

inline std::vector<Curve> draw_curves(std::mt19937& rng, int T) {
  std::uniform_real_distribution<double> base(0.5, 3.0), alpha(0.5, 0.95), pen(0.75, 0.95);
  std::vector<Curve> cv;
  for (int t = 0; t < T; ++t) cv.push_back({base(rng), alpha(rng), pen(rng)});
  return cv;
}

// Helios-like jobs on curves; `rigid_pct` of them rigid at 4 GPUs.
inline std::vector<JobSpec> curve_jobs(const ClusterSpec& cluster, int n, std::mt19937& rng, int rigid_pct) {
  const auto names = type_names(cluster);
  std::vector<JobSpec> jobs;
  jobs.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto curves = std::make_shared<std::vector<Curve>>(draw_curves(rng, cluster.num_types()));
    const int max_g = draw_max_gpus(rng);
    JobSpec j("job-" + std::to_string(i));
    j.min_gpus(1).max_gpus(max_g).restart_cost_s(30.0 + 10.0 * (i % 7));
    if (std::uniform_int_distribution<int>(0, 99)(rng) < rigid_pct)
      j.kind(JobKind::rigid).min_gpus(std::min(4, max_g)).max_gpus(std::min(4, max_g));
    j.goodput_model(curve_fn(curves, names));
    jobs.push_back(std::move(j));
  }
  return jobs;
}

// Pollux parameters of a plausible data-parallel job on a GPU type of relative speed `speed`.
inline TypeModel pollux_type(const std::string& name, double speed, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  TypeModel tm;
  tm.gpu_type = name;
  PerfParams p;
  p.alpha_c = (0.02 + 0.05 * u(rng)) / speed;
  p.beta_c = (0.0005 + 0.002 * u(rng)) / speed;
  p.alpha_n = 0.05 + 0.1 * u(rng);
  p.beta_n = 0.002 + 0.01 * u(rng);
  p.alpha_r = 0.01 + 0.02 * u(rng);
  p.beta_r = 0.001 + 0.003 * u(rng);
  p.gamma = 1.0 + 2.0 * u(rng);
  tm.perf = p;
  tm.min_local = 8;
  tm.max_local = 64 + static_cast<int>(192 * u(rng) * speed);
  return tm;
}

}  // namespace detail

/**
 * @brief Instance `seed` of `family` on about `gpus` GPUs. @throws std::invalid_argument for an
 * unknown family.
 */
inline RoundInstance make_instance(const std::string& family, int gpus, unsigned seed) {
  using namespace detail;
  std::mt19937 rng(seed * 2654435761u + static_cast<unsigned>(gpus));
  RoundInstance in;
  in.family = family;
  in.cluster = bench_cluster(gpus);
  const int n = helios_jobs(gpus);
  const int T = in.cluster.num_types();
  if (family == "helios") {
    in.jobs = curve_jobs(in.cluster, n, rng, 5);
    set_running(in.jobs, in.cluster, rng, 0.5, 0.03);
  } else if (family == "tables" || family == "tables-nomax") {
    // Random tables: a noisy concave base, each entry perturbed by up to +-15 % (tables measured
    // by profiling are not concave), some types missing for some jobs.
    std::uniform_real_distribution<double> noise(0.85, 1.15), u(0.0, 1.0);
    for (int i = 0; i < n; ++i) {
      const auto cv = draw_curves(rng, T);
      const int max_g = draw_max_gpus(rng);
      GoodputTable table;
      for (int t = 0; t < T; ++t) {
        if (u(rng) < 0.1) continue;  // the job cannot run on this type
        const auto& type = in.cluster.types[static_cast<std::size_t>(t)];
        for (int g = 1; g <= max_g; ++g) {
          const int nodes = (g + type.gpus_per_node() - 1) / type.gpus_per_node();
          table.set(type.name(), g, cv[static_cast<std::size_t>(t)].at(ConfigurationSpec{t, nodes, g}) * noise(rng));
        }
      }
      JobSpec j("job-" + std::to_string(i));
      j.min_gpus(1).restart_cost_s(30.0 + 10.0 * (i % 7)).goodput_model(std::move(table));
      if (family == "tables") j.max_gpus(max_g);
      in.jobs.push_back(std::move(j));
    }
    set_running(in.jobs, in.cluster, rng, 0.5, 0.03);
  } else if (family == "near-ties") {
    // Goodputs from 4 curve shapes; each job scales its shape by 1 + k * 1e-12 (k < 8): reduced
    // costs tie to 11 digits, so every price breakpoint is crowded.
    const auto names = type_names(in.cluster);
    std::vector<std::vector<Curve>> shapes;
    for (int s = 0; s < 4; ++s) shapes.push_back(draw_curves(rng, T));
    for (int i = 0; i < n; ++i) {
      auto cv = std::make_shared<std::vector<Curve>>(shapes[rng() % 4]);
      const double eps = 1e-12 * static_cast<double>(rng() % 8);
      for (auto& c : *cv) c.base *= 1.0 + eps;
      JobSpec j("job-" + std::to_string(i));
      j.min_gpus(1).max_gpus(8 << (rng() % 2)).goodput_model(curve_fn(cv, names));
      in.jobs.push_back(std::move(j));
    }
    set_running(in.jobs, in.cluster, rng, 0.3, 0.0);
  } else if (family == "identical") {
    const auto names = type_names(in.cluster);
    std::vector<std::shared_ptr<const std::vector<Curve>>> shapes;
    for (int s = 0; s < 3; ++s) shapes.push_back(std::make_shared<std::vector<Curve>>(draw_curves(rng, T)));
    const int maxes[] = {4, 8, 16};
    for (int i = 0; i < n; ++i) {
      const int s = static_cast<int>(rng() % 3);
      JobSpec j("job-" + std::to_string(i));
      j.min_gpus(1).max_gpus(maxes[s]).goodput_model(curve_fn(shapes[static_cast<std::size_t>(s)], names));
      in.jobs.push_back(std::move(j));
    }
  } else if (family == "oversub") {
    // Minimum counts of 2-16 GPUs and 2-5x as much demand as capacity.
    const double factor = std::uniform_real_distribution<double>(2.0, 5.0)(rng);
    long long cap = 0;
    for (const auto& t : in.cluster.types) cap += static_cast<long long>(t.num_nodes()) * t.gpus_per_node();
    const int mins[] = {2, 4, 8, 16};
    const auto names = type_names(in.cluster);
    long long demand = 0;
    int i = 0;
    while (demand < factor * static_cast<double>(cap)) {
      const int mn = mins[rng() % 4];
      auto cv = std::make_shared<std::vector<Curve>>(draw_curves(rng, T));
      JobSpec j("job-" + std::to_string(i++));
      j.min_gpus(mn).max_gpus(mn * 2).goodput_model(curve_fn(cv, names));
      in.jobs.push_back(std::move(j));
      demand += mn;
    }
    set_running(in.jobs, in.cluster, rng, 0.2, 0.0);
  } else if (family == "pinned") {
    in.jobs = curve_jobs(in.cluster, n, rng, 5);
    set_running(in.jobs, in.cluster, rng, 0.6, 0.5);  // about 30 % of all jobs pinned
  } else if (family == "many-types") {
    in.cluster = many_types_cluster(gpus, rng);
    in.jobs = curve_jobs(in.cluster, n, rng, 5);
    set_running(in.jobs, in.cluster, rng, 0.5, 0.03);
  } else if (family == "batch") {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (int i = 0; i < n; ++i) {
      JobModel m;
      m.init_batch_size(128)
          .max_batch_size(128.0 * (4 << (rng() % 4)))
          .grad(GradParams{0.05 + u(rng), 5.0 + 50.0 * u(rng)});
      for (int t = 0; t < T; ++t)
        m.add_type(pollux_type(in.cluster.types[static_cast<std::size_t>(t)].name(),
                               0.5 + 1.5 * static_cast<double>(t) / T, rng));
      JobSpec j("job-" + std::to_string(i));
      j.min_gpus(1).max_gpus(detail::draw_max_gpus(rng)).goodput_model(std::move(m));
      in.jobs.push_back(std::move(j));
    }
    set_running(in.jobs, in.cluster, rng, 0.5, 0.03);
  } else if (family == "infeasible") {
    // 4-GPU non-preemptible waiting jobs of one model, one more than fit: every type keeps 2
    // GPUs reserved, so its capacity is 4k + 2 and the LP relaxation still fits the last job in
    // halves on two types (feasible) while no integer allocation does. Ordinary jobs beside them.
    const auto names = type_names(in.cluster);
    auto shape = std::make_shared<std::vector<Curve>>(draw_curves(rng, T));
    long long slots = 0;
    for (int t = 0; t < T; ++t) {
      const auto& type = in.cluster.types[static_cast<std::size_t>(t)];
      in.cluster.reserved.push_back(2);
      slots += (static_cast<long long>(type.num_nodes()) * type.gpus_per_node() - 2) / 4;
    }
    for (long long i = 0; i <= slots; ++i) {
      JobSpec j("forced-" + std::to_string(i));
      j.min_gpus(4).max_gpus(4).preemptible(false).goodput_model(curve_fn(shape, names));
      in.jobs.push_back(std::move(j));
    }
    auto others = curve_jobs(in.cluster, n / 4, rng, 0);
    for (auto& j : others) in.jobs.push_back(std::move(j));
  } else {
    throw std::invalid_argument("unknown instance family '" + family + "'");
  }
  return in;
}

}  // namespace sia::bench

namespace sia::bench {

/**
 * @brief The round after `prev` (whose decision was `result`), as a scheduler would send it: every
 * job holds what it was given (`current`, one round older; a suspended job holds nothing), and a
 * fraction `changed` of the jobs changed: half of them left and were replaced by new arrivals of
 * the same family, the other half had their goodput re-estimated (scaled by 0.9-1.1, as after a
 * refit). With `placed` (the decision's placements, one per job), every job also reports the GPUs
 * it was placed on, as a scheduler that applied the decision does; without, placements are unknown.
 */
inline RoundInstance next_round(const RoundInstance& prev, const std::vector<std::optional<ConfigurationSpec>>& given,
                                double changed, unsigned seed, int gpus_for_arrivals,
                                const std::vector<std::vector<NodeShare>>* placed = nullptr) {
  RoundInstance in = prev;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0), scale(0.9, 1.1);
  const auto fresh = make_instance(prev.family, gpus_for_arrivals, seed + 7777u);
  std::size_t next_new = 0;
  for (std::size_t i = 0; i < in.jobs.size(); ++i) {
    JobSpec& j = in.jobs[i];
    const auto& g = i < given.size() ? given[i] : std::nullopt;
    if (g) {
      CurrentAllocation cur;
      cur.type = g->type;
      cur.gpus = j.kind() == JobKind::rigid ? j.min_gpus() : g->gpus;
      cur.nodes = g->nodes;
      if (placed != nullptr && i < placed->size()) cur.placement = (*placed)[i];
      const bool moved = !j.current() || j.current()->type != cur.type || j.current()->gpus != cur.gpus;
      j.current(cur).age_s(moved ? 0.0 : j.age_s() + 60.0).restarts(j.restarts() + (moved && j.current() ? 1 : 0));
      j.max_gpus_ever(std::max(j.max_gpus_ever().value_or(0), cur.gpus));
    } else if (j.current() && j.preemptible()) {
      j.current(std::nullopt);
    }
    const double r = u(rng);
    if (r < changed / 2 && next_new < fresh.jobs.size()) {
      JobSpec arrival = fresh.jobs[next_new++];
      arrival.id("arrival-" + std::to_string(seed) + "-" + std::to_string(i))
          .current(std::nullopt)
          .max_gpus_ever(std::nullopt);
      arrival.preemptible(true);
      j = std::move(arrival);
    } else if (r < changed) {
      const JobSpec orig = j;
      const double s = scale(rng);
      JobSpec::LimitFn limit;
      if (orig.has_gpu_limit()) limit = [orig](const GpuTypeSpec& t) { return orig.gpu_limit(t); };
      j.goodput_fn([orig, s](const GpuTypeSpec& t, const ConfigurationSpec& c) { return s * orig.goodput(t, c); },
                   nullptr, std::move(limit));
    }
  }
  return in;
}

}  // namespace sia::bench
