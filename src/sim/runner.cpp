// Independent simulations on a oneTBB thread pool (runner.hpp).
#include <sia/error.hpp>
#include <sia/sim/runner.hpp>

#include <tbb/blocked_range.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <iomanip>
#include <limits>
#include <mutex>
#include <ostream>
#include <sstream>
#include <string>

namespace sia::sim {

int effective_threads(int threads) {
  if (threads > 0) return threads;
  return std::max(1, tbb::info::default_concurrency());
}

namespace {

using Clock = std::chrono::steady_clock;

/// What the runner knows of one simulation, updated from its own thread.
struct Slot {
  std::size_t jobs_total = 0, jobs_finished = 0, rounds = 0;
  double now_s = 0.0, end_s = 0.0;
  bool running = false, done = false;
};

/// Gathers the simulations' progress and calls the caller's callback at most once per period.
class ProgressHub {
 public:
  ProgressHub(std::span<const SimulationSpec> specs, const RunnerOptions& options)
      : options_(options), slots_(specs.size()), start_(Clock::now()), last_(start_) {
    for (std::size_t i = 0; i < specs.size(); ++i) slots_[i].jobs_total = specs[i].workload->jobs.size();
  }

  void update(std::size_t i, const SimProgress& p) {
    if (!options_.on_progress) return;
    std::lock_guard lock(mutex_);
    Slot& s = slots_[i];
    s.jobs_finished = p.jobs_finished;
    s.rounds = p.rounds;
    s.now_s = p.now_s;
    s.end_s = p.last_submission_s;
    s.running = !p.done;
    s.done = s.done || p.done;
    const auto t = Clock::now();
    if (std::chrono::duration<double>(t - last_).count() < options_.progress_period_s) return;
    last_ = t;
    options_.on_progress(snapshot(false));
  }

  void finish() {
    if (!options_.on_progress) return;
    std::lock_guard lock(mutex_);
    options_.on_progress(snapshot(true));
  }

 private:
  RunnerProgress snapshot(bool done) const {
    RunnerProgress r;
    r.simulations = slots_.size();
    r.min_now_s = std::numeric_limits<double>::infinity();
    for (const Slot& s : slots_) {
      r.jobs_total += s.jobs_total;
      r.jobs_finished += s.done ? s.jobs_total : s.jobs_finished;
      r.rounds += s.rounds;
      if (s.done) ++r.simulations_done;
      if (s.running) {
        ++r.simulations_running;
        r.min_now_s = std::min(r.min_now_s, s.now_s);
        r.max_horizon_s = std::max(r.max_horizon_s, s.end_s);
      }
    }
    if (r.simulations_running == 0) r.min_now_s = 0.0;
    r.wall_s = std::chrono::duration<double>(Clock::now() - start_).count();
    if (r.jobs_finished > 0 && r.jobs_total > 0)
      r.eta_s = r.wall_s * static_cast<double>(r.jobs_total - r.jobs_finished) / static_cast<double>(r.jobs_finished);
    r.done = done;
    if (done) r.eta_s = 0.0;
    return r;
  }

  const RunnerOptions& options_;
  std::vector<Slot> slots_;
  Clock::time_point start_, last_;
  std::mutex mutex_;
};

void check_spec(const SimulationSpec& s, std::size_t i) {
  const std::string where = "simulation " + std::to_string(i);
  if (!s.cluster) throw InvalidArgument(where + ": no cluster");
  if (!s.apps) throw InvalidArgument(where + ": no ground truths (apps)");
  if (!s.workload) throw InvalidArgument(where + ": no workload");
  if (s.options.threads < 0) throw InvalidArgument(where + ": options.threads must be >= 0 (0 = all cores)");
  if (!s.make_policy && !find_policy(s.policy)) throw InvalidArgument(where + ": unknown policy '" + s.policy + "'");
}

}  // namespace

std::vector<SimResult> run_simulations(std::span<const SimulationSpec> specs, const RunnerOptions& options) {
  for (std::size_t i = 0; i < specs.size(); ++i) check_spec(specs[i], i);
  const std::size_t n = specs.size();
  std::vector<SimResult> results(n);
  std::vector<std::exception_ptr> errors(n);
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::atomic<std::size_t> first_failed{kNone};
  std::atomic<bool> user_cancelled{false};
  ProgressHub hub(specs, options);
  // No more threads than cores: oneTBB would only warn (on standard error) and ignore the rest.
  const int all = std::min(effective_threads(options.threads), effective_threads(0));
  const int threads = std::min<int>(all, static_cast<int>(std::max<std::size_t>(n, 1)));
  // Each simulation's share of the threads: all of them for a single simulation (its jobs step in parallel), one
  // each when the batch has at least as many simulations as threads. Never more in total: no oversubscription.
  const int per_simulation = std::max(1, all / threads);

  // One memo of the default fit for the whole batch: a fit is a pure function of its observations, and the
  // simulations of a batch (workloads x policies) share many (Philly x 8: 9,857 fits alone, 5,014 shared).
  const PerfFitter shared_fitter = memoised_perf_fitter(default_perf_fitter());

  auto run_one = [&](std::size_t i) {
    if (i > first_failed.load()) return;  // an earlier simulation failed: its error is the batch's
    const SimulationSpec& spec = specs[i];
    try {
      auto policy = spec.make_policy ? spec.make_policy() : make_policy(spec.policy, spec.policy_options);
      if (!policy) throw InvalidArgument("simulation " + std::to_string(i) + ": the policy factory returned null");
      SimOptions so = spec.options;
      so.threads = so.threads > 0 ? std::min(so.threads, per_simulation) : per_simulation;
      if (!so.fitter) so.fitter = shared_fitter;
      so.on_progress = [&, i, inner = spec.options.on_progress](const SimProgress& p) {
        hub.update(i, p);
        if (inner) inner(p);
      };
      so.cancelled = [&, i, inner = spec.options.cancelled] {
        if (i > first_failed.load()) return true;
        if (options.cancelled && (user_cancelled.load() || options.cancelled())) {
          user_cancelled = true;
          return true;
        }
        return inner && inner();
      };
      SimResult r = simulate(*spec.cluster, *spec.apps, *spec.workload, *policy, so);
      if (spec.finish_time_fairness) compute_ftf(*spec.cluster, *spec.apps, *spec.workload, r);
      results[i] = std::move(r);
    } catch (...) {
      errors[i] = std::current_exception();
      // Later simulations stop; earlier ones finish (their errors, if any, come first).
      std::size_t cur = first_failed.load();
      while (i < cur && !first_failed.compare_exchange_weak(cur, i)) {
      }
      SimProgress p;
      p.done = true;
      hub.update(i, p);
    }
  };

  if (threads <= 1) {
    for (std::size_t i = 0; i < n; ++i) run_one(i);
  } else {
    tbb::task_arena arena(threads);
    arena.execute([&] {
      tbb::parallel_for(
          tbb::blocked_range<std::size_t>(0, n, 1),
          [&](const tbb::blocked_range<std::size_t>& r) {
            for (std::size_t i = r.begin(); i < r.end(); ++i)
              // Isolation: while this simulation waits inside nested oneTBB work, its thread runs only
              // that work, never another simulation.
              tbb::this_task_arena::isolate([&] { run_one(i); });
          },
          tbb::simple_partitioner());
    });
  }
  hub.finish();
  if (const std::size_t f = first_failed.load(); f != kNone) std::rethrow_exception(errors[f]);
  return results;
}

namespace {

std::string thousands(std::size_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

std::string duration(double s) {
  std::ostringstream o;
  if (!(s >= 0) || !std::isfinite(s)) return "?";
  const auto t = static_cast<long long>(std::llround(s));
  if (t >= 3600)
    o << t / 3600 << " h " << (t % 3600) / 60 << " min";
  else if (t >= 60)
    o << t / 60 << " min " << t % 60 << " s";
  else
    o << t << " s";
  return o.str();
}

}  // namespace

std::string ProgressPrinter::line(const RunnerProgress& p, double rounds_per_s) {
  std::ostringstream o;
  o << std::fixed;
  if (p.simulations > 1) o << "[" << p.simulations_done << "/" << p.simulations << " runs] ";
  if (p.simulations_running > 0) {
    o << "t " << std::setprecision(1) << p.min_now_s / 3600.0 << " h";
    if (p.max_horizon_s > 0) o << " (arrivals until " << std::setprecision(1) << p.max_horizon_s / 3600.0 << " h)";
    o << " | ";
  }
  o << thousands(p.jobs_finished) << "/" << thousands(p.jobs_total) << " jobs finished | " << std::setprecision(0)
    << rounds_per_s << " rounds/s | ";
  if (p.done)
    o << "done in " << duration(p.wall_s);
  else
    o << "ETA " << (p.eta_s >= 0 ? duration(p.eta_s) : std::string("?"));
  return o.str();
}

void ProgressPrinter::operator()(const RunnerProgress& p) {
  const double dt = p.wall_s - last_wall_;
  const double rate = dt > 0 ? static_cast<double>(p.rounds - last_rounds_) / dt : 0.0;
  last_wall_ = p.wall_s;
  last_rounds_ = p.rounds;
  const std::string text = line(p, p.done && p.wall_s > 0 ? static_cast<double>(p.rounds) / p.wall_s : rate);
  if (!terminal_) {
    *out_ << "progress: " << text << "\n" << std::flush;
    return;
  }
  if (p.done) {  // erase the line: the report follows
    *out_ << "\r" << std::string(width_, ' ') << "\r" << std::flush;
    return;
  }
  *out_ << "\r" << text;
  if (text.size() < width_) *out_ << std::string(width_ - text.size(), ' ');
  width_ = std::max(width_, text.size());
  *out_ << std::flush;
}

std::vector<PolicyRuns> simulate_policies(const std::vector<std::string>& policies,
                                          std::shared_ptr<const SimCluster> cluster,
                                          std::shared_ptr<const ApplicationSet> apps,
                                          const std::vector<std::shared_ptr<const Workload>>& workloads,
                                          const SimOptions& sim, const RunnerOptions& options,
                                          const std::function<PolicyOptions(const std::string&)>& policy_options) {
  std::vector<SimulationSpec> specs;
  specs.reserve(policies.size() * workloads.size());
  for (const auto& name : policies)
    for (const auto& w : workloads) {
      SimulationSpec s;
      s.cluster = cluster;
      s.apps = apps;
      s.workload = w;
      s.policy = name;
      if (policy_options) s.policy_options = policy_options(name);
      s.options = sim;
      specs.push_back(std::move(s));
    }
  auto results = run_simulations(specs, options);
  std::vector<PolicyRuns> all(policies.size());
  std::size_t k = 0;
  for (std::size_t p = 0; p < policies.size(); ++p) {
    PolicyRuns& pr = all[p];
    pr.policy = policies[p];
    for (std::size_t w = 0; w < workloads.size(); ++w, ++k) {
      pr.metrics.push_back(compute_metrics(results[k]));
      pr.runs.push_back(std::move(results[k]));
    }
    std::vector<const SimResult*> ptrs;
    for (const auto& r : pr.runs) ptrs.push_back(&r);
    pr.aggregate = aggregate_metrics(ptrs);
    if (workloads.size() == 1) pr.aggregate.workload = workloads.front()->name;
  }
  return all;
}

}  // namespace sia::sim
