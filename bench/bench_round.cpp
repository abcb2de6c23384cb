// Full scheduling rounds (goodput matrix + solve + placement) on the paper's heterogeneous
// cluster scaled from 64 to 16 384 GPUs, for every available MILP backend.
//   Round/<backend>/<gpus>      Helios-like load: 20 active jobs per 64 GPUs (bench_common.hpp)
//   RoundJobs/<backend>/<jobs>  20, 50, 100, 200 jobs at 64 GPUs; x32 jobs at 2048 GPUs
//   RoundRigid/<backend>/<gpus> the Round load with half the jobs rigid at counts that are mostly no
//                               configuration size (3, 5, 6, 7, 10, 12: charged their count)
// Each iteration is a fresh round through sia::run_round with the backend chosen by name (no warm
// start). A backend whose first round takes longer than 30 s (its time limit) or does not reach
// the gap is skipped with a message saying so. Medians:
//   sia_bench --benchmark_filter='Round' --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <sia/milp/factory.hpp>
#include <sia/round.hpp>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bench_common.hpp"

namespace {

using namespace std::chrono_literals;

struct Scenario {
  sia::ClusterSpec cluster;
  std::vector<sia::JobSpec> jobs;
};

// `rigid`: every other job becomes rigid at a count cycling through 3, 5, 6, 7, 10, 12 (preemptible,
// its current allocation dropped when it does not hold that count).
const Scenario& scenario(int scale, int jobs, bool rigid = false) {
  static std::map<std::tuple<int, int, bool>, Scenario> cache;
  auto it = cache.find({scale, jobs, rigid});
  if (it == cache.end()) {
    Scenario s;
    s.cluster = sia::bench::heterogeneous_cluster(scale);
    s.jobs = sia::bench::synthetic_jobs(s.cluster, jobs, 20231023u + static_cast<unsigned>(scale * 7919 + jobs));
    if (rigid) {
      const int counts[] = {3, 5, 6, 7, 10, 12};
      for (std::size_t i = 0; i < s.jobs.size(); i += 2) {
        const int n = counts[(i / 2) % 6];
        auto& j = s.jobs[i];
        j.kind(sia::JobKind::rigid).min_gpus(n).max_gpus(n).max_gpus_ever(std::nullopt);
        if (j.current() && j.current()->gpus != n) j.current(std::nullopt);
      }
    }
    it = cache.emplace(std::make_tuple(scale, jobs, rigid), std::move(s)).first;
  }
  return it->second;
}

constexpr auto kTimeLimit = 30000ms;

sia::RoundOptions options_for(const std::string& backend) {
  sia::RoundOptions o;
  o.backend = backend;
  o.time_limit = kTimeLimit;
  return o;
}

// First round of each (backend, scenario), reused to decide whether to skip.
const sia::RoundResult& probe(const std::string& backend, int scale, int jobs, bool rigid) {
  static std::map<std::tuple<std::string, int, int, bool>, sia::RoundResult> cache;
  auto key = std::make_tuple(backend, scale, jobs, rigid);
  auto it = cache.find(key);
  if (it == cache.end()) {
    const auto& s = scenario(scale, jobs, rigid);
    it = cache.emplace(key, sia::run_round(s.cluster, s.jobs, options_for(backend))).first;
  }
  return it->second;
}

void run(benchmark::State& state, const std::string& backend, int scale, int jobs, bool rigid = false) {
  const auto& s = scenario(scale, jobs, rigid);
  const auto& first = probe(backend, scale, jobs, rigid);
  if (first.status != sia::RoundStatus::optimal) {
    state.SkipWithError((backend + ": first round ended '" + std::string(sia::to_string(first.status)) + "' after " +
                         std::to_string(static_cast<long long>(first.total_ms)) + " ms (limit " +
                         std::to_string(kTimeLimit.count()) + " ms): " + first.message)
                            .c_str());
    return;
  }
  const auto opts = options_for(backend);
  double solve_ms = 0.0;
  for (auto _ : state) {
    auto r = sia::run_round(s.cluster, s.jobs, opts);
    solve_ms += r.solve_ms;
    benchmark::DoNotOptimize(r);
  }
  state.counters["jobs"] = static_cast<double>(jobs);
  state.counters["gpus"] = 64.0 * scale;
  state.counters["solve_ms"] = benchmark::Counter(solve_ms, benchmark::Counter::kAvgIterations);
  state.counters["objective"] = first.objective;
  int served = 0;
  for (const auto& d : first.decisions) served += d.config ? 1 : 0;
  state.counters["served"] = served;
  state.counters["gap"] =
      first.objective != 0.0 ? std::abs(first.best_bound - first.objective) / std::abs(first.objective) : 0.0;
}

const bool registered = [] {
  const auto backends = sia::available_milp_solvers();
  for (int scale : {1, 8, 32, 256})
    for (const auto& b : backends) {
      const int jobs = sia::bench::kActiveJobsPer64Gpus * scale;
      benchmark::RegisterBenchmark(("Round/" + b + "/" + std::to_string(64 * scale)).c_str(),
                                   [b, scale, jobs](benchmark::State& st) { run(st, b, scale, jobs); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  for (int scale : {1, 8, 32, 256})
    for (const auto& b : backends) {
      const int jobs = sia::bench::kActiveJobsPer64Gpus * scale;
      benchmark::RegisterBenchmark(("RoundRigid/" + b + "/" + std::to_string(64 * scale)).c_str(),
                                   [b, scale, jobs](benchmark::State& st) { run(st, b, scale, jobs, true); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  for (int scale : {1, 32})
    for (const auto& b : backends)
      for (int per64 : {20, 50, 100, 200}) {
        const int jobs = per64 * scale;
        benchmark::RegisterBenchmark(("RoundJobs/" + b + "/" + std::to_string(jobs)).c_str(),
                                     [b, scale, jobs](benchmark::State& st) { run(st, b, scale, jobs); })
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
  return true;
}();

}  // namespace
