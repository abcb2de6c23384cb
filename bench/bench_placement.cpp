// Placement at scale: the paper's heterogeneous cluster (aws 4 GPUs/node, rtx 8, dgx-ext 8;
// 6 + 3 + 2 nodes = 64 GPUs) scaled x32 (2048 GPUs) and x256 (16 384 GPUs), about 3 jobs per 8
// GPUs, an allocation that fills the configuration set's capacity rows.
//  - BM_place_empty:    everyone placed from scratch (first round, or a scheduler without state);
//  - BM_place_previous: the previous round's placement as current; 70 % of the jobs keep their
//    configuration, 15 % change it, 15 % finish, new jobs take the room (a steady-state round);
//  - BM_place_scattered: the same with previous placements scattered at random (fragmented
//    cluster: evictions happen);
//  - BM_place_all_changed: every job changes its configuration (all are re-placed, preferring
//    their old nodes: the largest stability matchings).
// Run: sia_bench --benchmark_filter=place --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <sia/configuration_set.hpp>
#include <sia/placement.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace sia;

ClusterSpec paper_cluster(int scale) {
  ClusterSpec c;
  c.types.emplace_back("aws", 6 * scale, 4);
  c.types.emplace_back("dgx-ext", 2 * scale, 8);
  c.types.emplace_back("rtx", 3 * scale, 8);
  return c;
}

struct Workload {
  ClusterSpec cluster;
  std::vector<PlacementRequest> requests;
};

/// Picks a configuration like a Sia round does: mostly small jobs, some whole nodes, a few
/// multi-node ones.
ConfigurationSpec random_config(std::mt19937_64& g, const ConfigurationSet& set, int types) {
  const int t = std::uniform_int_distribution<int>(0, types - 1)(g);
  const int s = set.vnode_size[static_cast<std::size_t>(t)];
  const double u = std::uniform_real_distribution<double>(0, 1)(g);
  if (u < 0.85) {
    int k = 0;
    while ((2 << k) <= s && std::uniform_real_distribution<double>(0, 1)(g) < 0.5) ++k;
    return ConfigurationSpec{t, 1, 1 << k};
  }
  if (u < 0.95) return ConfigurationSpec{t, 1, s};
  const int n = std::uniform_int_distribution<int>(2, 6)(g);
  return ConfigurationSpec{t, n, n * s};
}

struct Rows {
  const ConfigurationSet& set;
  std::vector<long long> used;
  explicit Rows(const ConfigurationSet& s) : set(s), used(s.rows.size(), 0) {}
  bool take(const ConfigurationSpec& c) {
    for (std::size_t r = 0; r < set.rows.size(); ++r)
      if (used[r] + set.row_usage(set.rows[r], c) > set.rows[r].capacity) return false;
    for (std::size_t r = 0; r < set.rows.size(); ++r) used[r] += set.row_usage(set.rows[r], c);
    return true;
  }
};

void fill(std::mt19937_64& g, const ConfigurationSet& set, Rows& rows, std::vector<PlacementRequest>& reqs,
          std::size_t target_jobs, int& next_id) {
  for (int attempt = 0; reqs.size() < target_jobs && attempt < 20 * static_cast<int>(target_jobs); ++attempt) {
    const ConfigurationSpec c = random_config(g, set, 3);
    if (!rows.take(c)) continue;
    PlacementRequest r;
    r.job = "j" + std::to_string(next_id++);
    r.config = c;
    reqs.push_back(std::move(r));
  }
}

Workload empty_round(int scale) {
  Workload w{paper_cluster(scale), {}};
  const ConfigurationSet set = make_configuration_set(w.cluster);
  Rows rows(set);
  std::mt19937_64 g(42);
  int next_id = 0;
  fill(g, set, rows, w.requests, static_cast<std::size_t>(64 * scale * 3 / 8), next_id);
  return w;
}

/// A steady-state round: previous placements (made by the Placer, or scattered at random), some
/// jobs unchanged, some changed, some gone, new ones.
Workload next_round(int scale, bool scattered, double keep = 0.70, double change = 0.15) {
  Workload w = empty_round(scale);
  std::mt19937_64 g(7);
  const PlacementResult prev = place(w.cluster, w.requests);
  for (std::size_t j = 0; j < w.requests.size(); ++j) {
    auto& r = w.requests[j];
    CurrentAllocation cur;
    cur.type = r.config->type;
    cur.gpus = r.config->gpus;
    cur.placement = prev.placements[j];
    r.current = cur;
  }
  if (scattered) {
    // Previous placements chosen at random (a cluster placed by someone else, or long-lived
    // churn): every job on random nodes with room, distributed jobs on nodes free of others.
    std::vector<std::vector<int>> free(3);
    std::vector<std::vector<char>> dist(3);
    for (std::size_t t = 0; t < 3; ++t) {
      free[t].assign(static_cast<std::size_t>(w.cluster.types[t].num_nodes()), w.cluster.types[t].gpus_per_node());
      dist[t].assign(free[t].size(), 0);
    }
    for (auto& r : w.requests) {
      const auto t = static_cast<std::size_t>(r.config->type);
      const int share = r.config->gpus / r.config->nodes;
      std::vector<NodeShare> pl;
      for (int tries = 0; tries < 64 && static_cast<int>(pl.size()) < r.config->nodes; ++tries) {
        const int node = std::uniform_int_distribution<int>(0, static_cast<int>(free[t].size()) - 1)(g);
        const auto ni = static_cast<std::size_t>(node);
        const bool taken = std::any_of(pl.begin(), pl.end(), [&](const NodeShare& sh) { return sh.node == node; });
        if (taken || free[t][ni] < share || (r.config->nodes > 1 && dist[t][ni])) continue;
        pl.push_back({node, share, {}});
      }
      if (static_cast<int>(pl.size()) < r.config->nodes) {
        r.current.reset();
        continue;
      }
      for (auto& sh : pl) {
        free[t][static_cast<std::size_t>(sh.node)] -= share;
        if (r.config->nodes > 1) dist[t][static_cast<std::size_t>(sh.node)] = 1;
      }
      std::sort(pl.begin(), pl.end(), [](const NodeShare& a, const NodeShare& b) { return a.node < b.node; });
      r.current->placement = std::move(pl);  // GPU ids left to the Placer (lowest unnamed)
    }
  }
  const ConfigurationSet set = make_configuration_set(w.cluster);
  Rows rows(set);
  std::vector<PlacementRequest> next;
  std::uniform_real_distribution<double> u(0, 1);
  for (auto& r : w.requests) {
    const double x = u(g);
    if (x < keep) {
      if (rows.take(*r.config)) next.push_back(r);
    } else if (x < keep + change) {
      const ConfigurationSpec c = random_config(g, set, 3);
      if (rows.take(c)) {
        r.config = c;
        next.push_back(r);
      }
    }
  }
  int next_id = 1 << 20;
  fill(g, set, rows, next, w.requests.size(), next_id);
  w.requests = std::move(next);
  return w;
}

void report(benchmark::State& state, const Workload& w, const PlacementResult& res) {
  long long gpus = 0;
  for (const auto& t : w.cluster.types) gpus += static_cast<long long>(t.num_nodes()) * t.gpus_per_node();
  std::size_t kept = 0;
  for (auto s : res.status) kept += s == PlacementStatus::kept;
  state.counters["gpus"] = static_cast<double>(gpus);
  state.counters["jobs"] = static_cast<double>(w.requests.size());
  state.counters["kept"] = static_cast<double>(kept);
  state.counters["evicted"] = static_cast<double>(res.evicted.size());
  state.counters["dropped"] = static_cast<double>(res.dropped.size());
}

void BM_place_empty(benchmark::State& state) {
  const Workload w = empty_round(static_cast<int>(state.range(0)));
  PlacementResult res;
  for (auto _ : state) {
    res = place(w.cluster, w.requests);
    benchmark::DoNotOptimize(res);
  }
  report(state, w, res);
}

void BM_place_previous(benchmark::State& state) {
  const Workload w = next_round(static_cast<int>(state.range(0)), false);
  PlacementResult res;
  for (auto _ : state) {
    res = place(w.cluster, w.requests);
    benchmark::DoNotOptimize(res);
  }
  report(state, w, res);
}

void BM_place_scattered(benchmark::State& state) {
  const Workload w = next_round(static_cast<int>(state.range(0)), true);
  PlacementResult res;
  for (auto _ : state) {
    res = place(w.cluster, w.requests);
    benchmark::DoNotOptimize(res);
  }
  report(state, w, res);
}

void BM_place_all_changed(benchmark::State& state) {
  // Worst case for the stability matching: every job changes its configuration and still
  // prefers its old nodes.
  const Workload w = next_round(static_cast<int>(state.range(0)), false, 0.0, 1.0);
  PlacementResult res;
  for (auto _ : state) {
    res = place(w.cluster, w.requests);
    benchmark::DoNotOptimize(res);
  }
  report(state, w, res);
}

}  // namespace

BENCHMARK(BM_place_empty)->Arg(32)->Arg(256)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_place_previous)->Arg(32)->Arg(256)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_place_scattered)->Arg(32)->Arg(256)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_place_all_changed)->Arg(32)->Arg(256)->Unit(benchmark::kMillisecond);
