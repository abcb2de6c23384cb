// The solver bench: whole rounds (building, solve, tie rules, placement) of real and adversarial
// instances at 64, 2048, 16,384 and 100,000 GPUs, on every built backend.
//   Solver/<family>/<gpus>/<backend>
// Families: bench/round_instances.hpp (generated, several seeds per size) and scale32 / scale256
// (rounds recorded from simulating the artifact's scale_32x workload, bench/scale_rounds.hpp;
// skipped with a message when ../shared is absent). Per benchmark the counters are the median,
// p95 and max round time over all rounds run (instances x repetitions), the median CPU time of the
// process per round (all threads: on a loaded machine wall times grow, CPU times much less) and
// the median time in the backend, the peak heap of a round
// (every allocation, bench/heap_tracker.cpp), the largest proven relative gap
// |objective - best_bound| / |objective| (constant lambda terms counted; rounds whose backend
// proved no bound, or fell back to the greedy allocation, are counted apart), and how many rounds
// were proven optimal. At the end a markdown table of every Solver benchmark run is printed (the
// README's table).
//
// CBC and GLPK run with a time limit (SIA_BENCH_LIMIT_MS, default 10000); native with 60 s
// (SIA_BENCH_NATIVE_LIMIT_MS).
// Full run (about an hour):   build/bench/sia_bench --benchmark_filter='Solver/'
// One size:                   build/bench/sia_bench --benchmark_filter='Solver/.*/100000/native'
#include <benchmark/benchmark.h>

#include <sia/goodput_matrix.hpp>
#include <sia/milp/factory.hpp>
#include <sia/round.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bench_solver.hpp"
#include "heap_tracker.hpp"
#include "round_instances.hpp"
#include "scale_rounds.hpp"
#include "warm_sequence.hpp"

namespace sia::bench {
namespace {

int limit_ms(const std::string& backend) {
  if (backend == "native") {
    if (const char* e = std::getenv("SIA_BENCH_NATIVE_LIMIT_MS")) return std::max(1, std::atoi(e));
    return 60000;
  }
  if (const char* e = std::getenv("SIA_BENCH_LIMIT_MS")) return std::max(1, std::atoi(e));
  return 10000;
}

/// Instances of a family at a size: several seeds for generated families, the recorded rounds
/// for scale32/scale256 (built once, on first use).
struct InstanceSet {
  std::vector<RoundInstance> instances;
  std::string skipped;
};

const InstanceSet& instances(const std::string& family, int gpus) {
  static std::map<std::pair<std::string, int>, InstanceSet> cache;
  static std::mutex m;
  std::lock_guard lock(m);
  auto it = cache.find({family, gpus});
  if (it != cache.end()) return it->second;
  InstanceSet set;
  if (family == "scale32" || family == "scale256") {
    const bool big = family == "scale256";
    auto rec = record_scale_rounds(big ? 256 : 32, big ? 8 : 1, big ? 1.0 : 3.0, big ? 3 : 6);
    set.instances = std::move(rec.rounds);
    set.skipped = rec.skipped;
  } else {
    const int seeds = gpus <= 64 ? 10 : (gpus <= 2048 ? 5 : 3);
    for (int s = 1; s <= seeds; ++s) set.instances.push_back(make_instance(family, gpus, static_cast<unsigned>(s)));
  }
  return cache.emplace(std::make_pair(family, gpus), std::move(set)).first->second;
}

std::vector<WarmRow>& warm_rows() {
  static std::vector<WarmRow> r;
  return r;
}

std::map<std::string, SolverRow>& rows() {
  static std::map<std::string, SolverRow> r;
  return r;
}

double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

void run(benchmark::State& state, const std::string& family, int gpus, const std::string& backend) {
  const InstanceSet& set = instances(family, gpus);
  if (set.instances.empty()) {
    state.SkipWithError(("no instances: " + set.skipped).c_str());
    return;
  }
  RoundOptions o;
  o.backend = backend;
  o.time_limit = std::chrono::milliseconds(limit_ms(backend));
  std::vector<double> ms, mb, gaps, cpu, solve;
  int optimal = 0, fallback = 0, unbounded = 0, n = 0;
  std::size_t jobs = 0;
  for (auto _ : state) {
    const RoundInstance& in = set.instances[static_cast<std::size_t>(n) % set.instances.size()];
    heap_reset_peak();
    const long long base = heap_current();
    const double c0 = process_cpu_ms();
    const auto t0 = std::chrono::steady_clock::now();
    RoundResult r = run_round(in.cluster, in.jobs, o);
    const double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    cpu.push_back(process_cpu_ms() - c0);
    solve.push_back(r.solve_ms);
    const double peak = static_cast<double>(heap_peak() - base) / (1024.0 * 1024.0);
    ms.push_back(t);
    mb.push_back(peak);
    jobs = std::max(jobs, in.jobs.size());
    if (r.fallback) {
      ++fallback;
    } else if (std::isnan(r.best_bound)) {
      ++unbounded;  // stopped by the limit without a proven bound: no gap to report
    } else {
      gaps.push_back(r.objective != 0.0 ? std::abs(r.objective - r.best_bound) / std::abs(r.objective) : 0.0);
      // An infeasible round (unmet demand) counts when the allocation of the relaxed round is proven.
      optimal +=
          r.status == RoundStatus::optimal || (r.status == RoundStatus::infeasible && gaps.back() <= 1.000001e-4);
    }
    ++n;
    benchmark::DoNotOptimize(r);
  }
  SolverRow row;
  row.family = family;
  row.gpus = gpus;
  row.jobs = static_cast<int>(jobs);
  row.backend = backend;
  row.rounds = n;
  row.median_ms = percentile(ms, 0.5);
  row.p95_ms = percentile(ms, 0.95);
  row.max_ms = *std::max_element(ms.begin(), ms.end());
  row.peak_mb = *std::max_element(mb.begin(), mb.end());
  row.cpu_ms = percentile(cpu, 0.5);
  row.solve_ms = percentile(solve, 0.5);
  row.max_gap = gaps.empty() ? -1.0 : *std::max_element(gaps.begin(), gaps.end());
  row.optimal = optimal;
  row.fallback = fallback;
  row.unbounded = unbounded;
  row.limit_ms = limit_ms(backend);
  state.counters["median_ms"] = row.median_ms;
  state.counters["p95_ms"] = row.p95_ms;
  state.counters["max_ms"] = row.max_ms;
  state.counters["cpu_ms"] = row.cpu_ms;
  state.counters["solve_ms"] = row.solve_ms;
  state.counters["peak_MB"] = row.peak_mb;
  state.counters["max_gap"] = row.max_gap;
  state.counters["optimal"] = optimal;
  state.counters["rounds"] = n;
  state.counters["jobs"] = static_cast<double>(jobs);
  rows()[family + "/" + std::to_string(gpus) + "/" + backend] = row;
}

// Warm rounds: a round is solved, applied (every job holds what it was given, one round older),
// three unchanged rounds follow (the cluster settles), then 5 % of the jobs change (half replaced
// by new arrivals, half re-estimated) and that round is solved cold (no warm start) and warm (from
// the previous round's WarmStart, whose cache lets the round rebuild only the changed jobs).
// Counters: median solver and round times, cold and warm, and their ratios, the median CPU time
// of the process per round (all threads), cold and warm, and how many warm decisions equal the
// cold one exactly. Checked (not timed): the warm round proves the cold round's optimum, and the
// same warm start without its cache gives the warm round's decision bit for bit.
// WarmPlaced rows: the same rounds, with every job also reporting the GPUs it was placed on (its
// `current` placement), as a scheduler that applied the decision does. Placement then checks and
// keeps the reported placements instead of placing every job anew.
// WarmPrices rows: the same rounds as Warm, with prices computed (RoundOptions::compute_prices, on
// by default), cold and warm alike: each round's native LP is then solved to its optimum.
// The same decision: every job's configuration, GPUs and placement.
bool same_decision(const RoundResult& a, const RoundResult& b) {
  if (a.decisions.size() != b.decisions.size()) return false;
  for (std::size_t i = 0; i < a.decisions.size(); ++i) {
    const JobDecision& x = a.decisions[i];
    const JobDecision& y = b.decisions[i];
    if (x.job != y.job || x.config != y.config || x.gpus != y.gpus || x.placement != y.placement) return false;
  }
  return true;
}

// The restart factor a job's utilities are multiplied by this round (1: not running).
double restart_of(const JobSpec& j) {
  return j.current() ? restart_factor(j.age_s(), static_cast<double>(j.restarts()), j.restart_cost_s()) : 1.0;
}

void run_warm(benchmark::State& state, const std::string& family, int gpus, bool placed, bool prices) {
  RoundOptions o;
  o.time_limit = std::chrono::milliseconds(60000);
  // Warm and WarmPlaced rows: no prices (the prices a warm start needs come with the solution
  // anyway); WarmPrices rows: prices, as RoundOptions asks for them by default.
  o.compute_prices = prices;
  std::vector<double> cold_solve, warm_solve, cold_total, warm_total, cold_cpu, warm_cpu;
  std::vector<double> jobs, changed_jobs, new_restart, zero_flips;
  unsigned seed = 1;
  int rounds = 0, same_as_cold = 0;
  for (auto _ : state) {
    const WarmSequence seq = warm_sequence(family, gpus, seed, o, placed);
    const RoundInstance& in = seq.settled;
    const RoundResult& r = seq.last;
    const RoundInstance& changed = seq.changed;
    // next_round keeps every job's position: a job is new or re-estimated when its id or its
    // goodput model object changed (a re-estimated job gets a goodput function, no model object).
    double n_changed = 0.0, n_restart = 0.0, n_flips = 0.0;
    for (std::size_t i = 0; i < changed.jobs.size() && i < in.jobs.size(); ++i) {
      const JobSpec& a = in.jobs[i];
      const JobSpec& b = changed.jobs[i];
      if (a.id() != b.id() || a.goodput_model_identity() != b.goodput_model_identity()) {
        ++n_changed;
        continue;
      }
      const double ra = restart_of(a), rb = restart_of(b);
      if (b.current() && ra != rb) ++n_restart;
      if ((ra == 0.0) != (rb == 0.0)) ++n_flips;
    }
    jobs.push_back(static_cast<double>(changed.jobs.size()));
    changed_jobs.push_back(n_changed);
    new_restart.push_back(n_restart);
    zero_flips.push_back(n_flips);
    // The warm round first, right after the previous warm round (as a scheduler runs them), then
    // the same round cold: measured after the cold one, the warm round started from the caches and
    // the heap a round of the cold round's size had just left (page faults, evicted lines), which is
    // not how warm rounds follow each other.
    RoundOptions ow = o;
    ow.warm_start = r.warm_start;
    const double c0 = process_cpu_ms();
    const RoundResult warm = run_round(changed.cluster, changed.jobs, ow);
    const double c1 = process_cpu_ms();
    const RoundResult cold = run_round(changed.cluster, changed.jobs, o);
    warm_cpu.push_back(c1 - c0);
    cold_cpu.push_back(process_cpu_ms() - c1);
    cold_solve.push_back(cold.solve_ms);
    warm_solve.push_back(warm.solve_ms);
    cold_total.push_back(cold.total_ms);
    warm_total.push_back(warm.total_ms);
    if (std::abs(cold.objective - warm.objective) > 2e-4 * std::abs(cold.objective))
      state.SkipWithError("warm and cold rounds disagree beyond the gap");
    auto uncached = std::make_shared<WarmStart>(*r.warm_start);
    uncached->cache = nullptr;
    ow.warm_start = uncached;
    const RoundResult rebuilt = run_round(changed.cluster, changed.jobs, ow);
    if (!same_decision(warm, rebuilt) || warm.objective != rebuilt.objective)
      state.SkipWithError("a warm round built from the cache differs from the same round built anew");
    same_as_cold += same_decision(warm, cold) ? 1 : 0;
    ++rounds;
    ++seed;
  }
  state.counters["cold_solve_ms"] = percentile(cold_solve, 0.5);
  state.counters["warm_solve_ms"] = percentile(warm_solve, 0.5);
  state.counters["cold_round_ms"] = percentile(cold_total, 0.5);
  state.counters["warm_round_ms"] = percentile(warm_total, 0.5);
  state.counters["solve_ratio"] = percentile(warm_solve, 0.5) / percentile(cold_solve, 0.5);
  state.counters["round_ratio"] = percentile(warm_total, 0.5) / percentile(cold_total, 0.5);
  state.counters["cold_cpu_ms"] = percentile(cold_cpu, 0.5);
  state.counters["warm_cpu_ms"] = percentile(warm_cpu, 0.5);
  state.counters["same_as_cold"] = same_as_cold;
  state.counters["changed_jobs"] = percentile(changed_jobs, 0.5);
  state.counters["new_restart"] = percentile(new_restart, 0.5);
  state.counters["restart_zero_flips"] = percentile(zero_flips, 0.5);
  WarmRow row{family,
              gpus,
              percentile(cold_solve, 0.5),
              percentile(warm_solve, 0.5),
              percentile(cold_total, 0.5),
              percentile(warm_total, 0.5),
              percentile(cold_cpu, 0.5),
              percentile(warm_cpu, 0.5),
              rounds,
              same_as_cold};
  row.jobs = percentile(jobs, 0.5);
  row.changed_jobs = percentile(changed_jobs, 0.5);
  row.new_restart = percentile(new_restart, 0.5);
  row.restart_zero_flips = percentile(zero_flips, 0.5);
  row.placed = placed;
  row.prices = prices;
  warm_rows().push_back(row);
}

const bool registered = [] {
  std::vector<std::string> families = instance_families();
  families.insert(families.begin(), {"scale32", "scale256"});
  const auto backends = available_milp_solvers();
  for (int gpus : {64, 2048, 16384, 100000})
    for (const auto& family : families) {
      if (family == "scale32" && gpus != 2048) continue;
      if (family == "scale256" && gpus != 16384) continue;
      for (const auto& b : backends) {
        if (b != "native" && b != "cbc" && b != "glpk") continue;
        // Rounds per benchmark: each instance three times at small sizes, twice at large ones
        // (once with the slow backends, whose rounds may take their whole limit).
        const int seeds =
            family.rfind("scale", 0) == 0 ? (family == "scale256" ? 3 : 6) : (gpus <= 64 ? 10 : (gpus <= 2048 ? 5 : 3));
        const int reps = b == "native" ? (gpus <= 2048 ? 3 : 2) : 1;
        benchmark::RegisterBenchmark(("Solver/" + family + "/" + std::to_string(gpus) + "/" + b).c_str(),
                                     [family, gpus, b](benchmark::State& st) { run(st, family, gpus, b); })
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime()
            ->Iterations(seeds * reps);
      }
    }
  for (const char* kind : {"Warm/", "WarmPlaced/", "WarmPrices/"})
    for (int gpus : {2048, 16384, 100000})
      for (const char* family : {"helios", "tables"}) {
        const bool placed = kind == std::string("WarmPlaced/"), prices = kind == std::string("WarmPrices/");
        if ((placed || prices) && gpus < 16384) continue;
        benchmark::RegisterBenchmark(
            (kind + std::string(family) + "/" + std::to_string(gpus)).c_str(),
            [family, gpus, placed, prices](benchmark::State& st) { run_warm(st, family, gpus, placed, prices); })
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime()
            ->Iterations(gpus >= 100000 ? 3 : 5);
      }
  return true;
}();

}  // namespace

void print_solver_table(std::FILE* out) {
  if (!warm_rows().empty()) {
    std::fprintf(out,
                 "\n| warm round | GPUs | cold solve ms | warm solve ms | solve ratio | cold round ms | warm round ms "
                 "| round ratio | cold CPU ms | warm CPU ms | CPU ratio | same decision as cold | jobs | new or "
                 "re-estimated | new restart factor | restart factor to or from 0 |\n");
    std::fprintf(out, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const WarmRow& w : warm_rows())
      std::fprintf(
          out,
          "| %s | %d | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f | %d/%d | %.0f | %.0f | %.0f "
          "| %.0f |\n",
          (w.family + (w.placed ? " (placements reported)" : "") + (w.prices ? " (prices)" : "")).c_str(), w.gpus,
          w.cold_solve_ms, w.warm_solve_ms, w.warm_solve_ms / w.cold_solve_ms, w.cold_round_ms, w.warm_round_ms,
          w.warm_round_ms / w.cold_round_ms, w.cold_cpu_ms, w.warm_cpu_ms, w.warm_cpu_ms / w.cold_cpu_ms,
          w.same_as_cold, w.rounds, w.jobs, w.changed_jobs, w.new_restart, w.restart_zero_flips);
  }
  if (rows().empty()) return;
  std::fprintf(
      out,
      "\n| family | GPUs | jobs | backend | median ms | p95 ms | max ms | CPU ms | solve ms | peak MB | max proven gap "
      "| optimal |\n");
  std::fprintf(out, "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  // Order: size, family (as registered), backend.
  std::vector<const SolverRow*> all;
  for (const auto& [k, r] : rows()) all.push_back(&r);
  std::stable_sort(all.begin(), all.end(), [](const SolverRow* a, const SolverRow* b) {
    if (a->gpus != b->gpus) return a->gpus < b->gpus;
    if (a->family != b->family) return a->family < b->family;
    return a->backend < b->backend;
  });
  for (const SolverRow* r : all) {
    char gap[32];
    if (r->max_gap < 0)
      std::snprintf(gap, sizeof gap, "n/a");
    else
      std::snprintf(gap, sizeof gap, "%.1e", r->max_gap);
    std::string backend = r->backend;
    if (backend != "native") backend += " (" + std::to_string(r->limit_ms / 1000) + " s)";
    std::string opt = std::to_string(r->optimal) + "/" + std::to_string(r->rounds);
    if (r->fallback > 0) opt += " (" + std::to_string(r->fallback) + " fallback)";
    if (r->unbounded > 0) opt += " (" + std::to_string(r->unbounded) + " without bound)";
    std::fprintf(out, "| %s | %d | %d | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %s |\n", r->family.c_str(),
                 r->gpus, r->jobs, backend.c_str(), r->median_ms, r->p95_ms, r->max_ms, r->cpu_ms, r->solve_ms,
                 r->peak_mb, gap, opt.c_str());
  }
}

}  // namespace sia::bench
