// Rounds with weights and tenants against the same rounds without (issue 15 part 4), on the
// paper's heterogeneous cluster scaled to 2048 GPUs (and 64), Helios-like load, every backend:
//   Tenants/<backend>/<gpus>/plain     no weights, no tenants (as Round/<backend>/<gpus>)
//   Tenants/<backend>/<gpus>/weights   the same jobs with weights 1, 2 or 4
//   Tenants/<backend>/<gpus>/tenants   weights, and 4 tenants (jobs round-robin): every tenant capped
//                                      at 35 % of the GPUs, one also at 25 % of the A100s, three
//                                      guaranteed 15 % each
// Each iteration is a fresh run_round (no warm start); a first round that is not optimal within
// 30 s is reported as skipped. Medians:
//   sia_bench --benchmark_filter='^Tenants/' --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <sia/milp/factory.hpp>
#include <sia/round.hpp>

#include <chrono>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "bench_common.hpp"

namespace {

using namespace std::chrono_literals;

struct TenantScenario {
  sia::ClusterSpec cluster;
  std::vector<sia::JobSpec> jobs;
  sia::RoundOptions options;
};

TenantScenario make_scenario(int scale, const std::string& variant) {
  TenantScenario s;
  s.cluster = sia::bench::heterogeneous_cluster(scale);
  const int n = sia::bench::kActiveJobsPer64Gpus * scale;
  s.jobs = sia::bench::synthetic_jobs(s.cluster, n, 20231023u + static_cast<unsigned>(scale * 7919 + n));
  s.options.time_limit = 30000ms;
  if (variant == "plain") return s;
  const double weights[] = {1.0, 2.0, 4.0};
  for (std::size_t i = 0; i < s.jobs.size(); ++i) s.jobs[i].weight(weights[(i * 7) % 3]);
  if (variant == "weights") return s;
  int total = 0;
  for (const auto& t : s.cluster.types) total += t.num_nodes() * t.gpus_per_node();
  for (int t = 0; t < 4; ++t) {
    sia::TenantSpec spec;
    spec.name = "tenant" + std::to_string(t);
    spec.max_gpus = total * 35 / 100;
    if (t < 3) spec.guaranteed_gpus = total * 15 / 100;
    if (t == 0) {
      spec.max_gpus_per_type.assign(s.cluster.types.size(), -1);
      const auto& a100 = s.cluster.types.back();
      spec.max_gpus_per_type.back() = a100.num_nodes() * a100.gpus_per_node() / 4;
    }
    s.options.tenants.push_back(spec);
  }
  for (std::size_t i = 0; i < s.jobs.size(); ++i) s.jobs[i].tenant("tenant" + std::to_string(i % 4));
  return s;
}

const TenantScenario& scenario(int scale, const std::string& variant) {
  static std::map<std::pair<int, std::string>, TenantScenario> cache;
  auto it = cache.find({scale, variant});
  if (it == cache.end()) it = cache.emplace(std::make_pair(scale, variant), make_scenario(scale, variant)).first;
  return it->second;
}

void run(benchmark::State& state, const std::string& backend, int scale, const std::string& variant) {
  const auto& s = scenario(scale, variant);
  auto opts = s.options;
  opts.backend = backend;
  const auto first = sia::run_round(s.cluster, s.jobs, opts);
  if (first.status != sia::RoundStatus::optimal) {
    state.SkipWithError((backend + ": first round ended '" + std::string(sia::to_string(first.status)) + "' after " +
                         std::to_string(static_cast<long long>(first.total_ms)) + " ms: " + first.message)
                            .c_str());
    return;
  }
  double solve_ms = 0.0;
  for (auto _ : state) {
    auto r = sia::run_round(s.cluster, s.jobs, opts);
    solve_ms += r.solve_ms;
    benchmark::DoNotOptimize(r);
  }
  int running = 0;
  for (const auto& d : first.decisions) running += d.config ? 1 : 0;
  state.counters["jobs"] = static_cast<double>(s.jobs.size());
  state.counters["running"] = running;
  state.counters["solve_ms"] = benchmark::Counter(solve_ms, benchmark::Counter::kAvgIterations);
  state.counters["objective"] = first.objective;
}

const bool registered = [] {
  for (int scale : {1, 32})
    for (const auto& b : sia::available_milp_solvers())
      for (const char* v : {"plain", "weights", "tenants"}) {
        const std::string variant = v;
        benchmark::RegisterBenchmark(("Tenants/" + b + "/" + std::to_string(64 * scale) + "/" + variant).c_str(),
                                     [b, scale, variant](benchmark::State& st) { run(st, b, scale, variant); })
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
  return true;
}();

}  // namespace
