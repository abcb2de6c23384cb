#include <sia/error.hpp>
#include <sia/goodput/goodput_memo.hpp>
#include <sia/sim/limits.hpp>
#include <sia/sim/runner.hpp>
#include <sia/sim/simulator.hpp>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <set>

namespace sia::sim {

void validate_inputs(const SimCluster& cluster, const ApplicationSet& apps, const Workload& workload) {
  if (cluster.types.empty() || cluster.total_gpus() <= 0)
    throw InvalidArgument("cluster '" + cluster.name + "': the cluster has no GPUs");
  for (const auto& t : cluster.types)
    if (t.nodes < 0 || t.gpus_per_node < 1)
      throw InvalidArgument("cluster '" + cluster.name + "': GPU type '" + t.name + "' has a bad size");
  for (const auto& j : workload.jobs) {
    const auto it = apps.find(j.application);
    if (it == apps.end() || !it->second) {
      std::string known;
      for (const auto& [n, a] : apps) known += (known.empty() ? "" : ", ") + n;
      throw InvalidArgument(workload.source + ":" + std::to_string(j.line) + ": job '" + j.name + "': unknown model '" +
                            j.application + "' (known: " + known + ")");
    }
    if (it->second->types.size() != cluster.types.size())
      throw InvalidArgument("model '" + j.application + "': ground truth built for another cluster");
    (void)resolve_pipeline_sizes(j, *it->second, cluster, workload.source);
  }
}

ApplicationSet load_applications(const std::filesystem::path& profiles_dir, const SimCluster& cluster,
                                 const std::vector<Workload>& workloads, Interpolation interpolation) {
  ApplicationSet apps;
  std::error_code ec;
  if (!std::filesystem::is_directory(profiles_dir, ec))
    throw InvalidArgument(profiles_dir.string() + ": profiles directory not found");
  const auto models = list_models(profiles_dir);
  const std::set<std::string> known(models.begin(), models.end());
  for (const auto& w : workloads)
    for (const auto& j : w.jobs) {
      if (apps.count(j.application)) continue;
      if (!known.count(j.application)) {
        std::string k;
        for (const auto& n : models) k += (k.empty() ? "" : ", ") + n;
        throw InvalidArgument(w.source + ":" + std::to_string(j.line) + ":3 (application): job '" + j.name +
                              "': unknown model '" + j.application + "' (profiles in " + profiles_dir.string() + ": " +
                              k + ")");
      }
      const auto mp = load_model_profile(profiles_dir, j.application);
      apps[j.application] = std::make_shared<const Application>(Application::from_profile(mp, cluster, interpolation));
    }
  return apps;
}

namespace {

/// A round's jobs step in parallel only when at least this many of them refit first (SimJob::refits_first). Handing
/// work to another thread costs its wake-up, its pick-up and the join: 13-16 µs when the other core is free, 60-270
/// µs when another process holds it (a oneTBB arena of 2 threads on the 2-core machine, 2026-11-29), and a step
/// costs about 1 µs, 1.5-13 µs with a refit (most fits are memo hits: 1.5 µs per refitting job at 16,384 GPUs, 13 at
/// 64). Measured on that machine, quiet (2026-11-29 07:12-07:15 UTC): from 2 refits (and the goodput filler from 2
/// new estimators) the 936-job run at 64 GPUs (<= 13 refits a round) took 4-10 % more wall time at 2 threads than at
/// 1; from 32, `--scale 256 --rate 600 --hours 6.7` (70-114 refits a round) still took 0.70-0.78 s against 0.67 s;
/// from 256 (and 512 for the filler) it takes 0.67 s at either count, and `--rate 9600 --hours 2` (up to 1,454
/// refits), where only its largest rounds hand work over, 4.10 s against 4.07 s (2 threads never paid on 2 cores).
constexpr int kMinRefitsToStepInParallel = 256;

/// Calls step(i) for every index of `idx` (step must only touch the state of job i): on the calling thread with
/// one thread, else on the current task arena. An exception is the one of the first failing index in `idx`'s
/// order, as a serial loop would throw it (the other jobs' state is dropped with the simulation anyway).
template <class F>
void for_each_job(const std::vector<std::size_t>& idx, int threads, F&& step) {
  if (threads <= 1 || idx.size() < 2) {
    for (const std::size_t i : idx) step(i);
    return;
  }
  std::vector<std::exception_ptr> errors(idx.size());
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, idx.size(), 1),
      [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t k = r.begin(); k < r.end(); ++k) try {
            step(idx[k]);
          } catch (...) {
            errors[k] = std::current_exception();
          }
      },
      // One job per task: a job that refits its model costs a thousand times one that only steps.
      tbb::simple_partitioner());
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

SimResult simulate_on(const SimCluster& cluster, const ApplicationSet& apps, const Workload& workload, Policy& policy,
                      const SimOptions& options, int threads) {
  validate_inputs(cluster, apps, workload);
  const auto wall0 = std::chrono::steady_clock::now();
  // 0 = the policy's round length; anything else (NaN too) is checked, never replaced silently.
  const double interval = options.interval_s != 0 ? options.interval_s : policy.default_interval_s();
  // Refused before the first round (sim/limits.hpp): a round length out of range, a job submitted after the
  // horizon (it could never run), more rounds than a run can take.
  check_run(workload, interval, options.horizon_s,
            options.interval_s != 0 ? "interval" : "policy '" + policy.name() + "' interval", options.truncate);
  // The default fit is memoised per simulation (same bits, one fit per distinct observation set).
  const PerfFitter fitter = options.fitter ? options.fitter : memoised_perf_fitter(default_perf_fitter());
  const int nt = static_cast<int>(cluster.types.size());

  std::vector<std::unique_ptr<SimJob>> jobs;
  jobs.reserve(workload.jobs.size());
  // The executors' batch-size searches, shared by the jobs: two thirds of them repeat an earlier one on the 936-job
  // trace (jobs of one model with the same observations and statistics on the same placement).
  const auto batch_memo = std::make_shared<GoodputMemo>();
  for (const auto& w : workload.jobs) {
    jobs.push_back(std::make_unique<SimJob>(w, apps.at(w.application), nt));
    jobs.back()->goodput_memo = batch_memo;
    jobs.back()->pipeline_sizes = resolve_pipeline_sizes(w, *jobs.back()->app, cluster, workload.source);
    // --force-category changes the data-parallel jobs; a pipeline job stays hybrid.
    if (options.force_category && jobs.back()->pipeline_sizes.empty()) jobs.back()->kind = *options.force_category;
    jobs.back()->unaware_model = policy.heterogeneity_unaware();
  }
  std::vector<std::vector<double>> gpu_s_by_type(jobs.size(), std::vector<double>(static_cast<std::size_t>(nt), 0.0));
  std::vector<double> contention_sum(jobs.size(), 0.0);
  std::vector<int> contention_rounds(jobs.size(), 0);

  SimResult res;
  res.policy = policy.name();
  res.workload = workload.name;
  res.interval_s = interval;
  SimProgress progress;
  progress.jobs_total = jobs.size();
  progress.horizon_s = options.horizon_s;
  progress.last_submission_s = workload.jobs.empty() ? 0.0 : workload.jobs.back().time;
  auto report = [&](bool last) {
    if (!options.on_progress) return;
    progress.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    progress.done = last;
    options.on_progress(progress);
  };
  std::size_t done = 0, next_submit = 0;
  double now = 0.0;
  // Work per round is proportional to the active jobs, never to the whole trace: `active_idx` holds the
  // submitted, unfinished jobs in submission order and is updated as jobs arrive and finish.
  std::vector<std::size_t> active_idx, running;
  std::vector<SimJob*> active;
  while (done < jobs.size()) {
    if (options.cancelled && options.cancelled())
      throw SimulationCancelled("simulation of '" + workload.name + "' under '" + policy.name() + "' cancelled at " +
                                std::to_string(now / 3600.0) + " h simulated");
    // (1) advance every job by one interval with its current allocation. Between two rounds the jobs are
    // independent: a job's step reads only its own state, its allocation and the read-only ground truth (whose
    // interpolation cache is locked), and refits its own models through the fit memo (locked, and a fit is a pure
    // function of its observations: the same bits whoever computes it). No random numbers, no events between
    // jobs: completions are counted afterwards in submission order. So the jobs step in parallel with the
    // serial loop's results, whatever the thread count.
    running.clear();
    for (const std::size_t i : active_idx)
      if (!jobs[i]->completed() && !jobs[i]->alloc.empty()) running.push_back(i);
    // In parallel only in a round with enough refits to pay for the hand-off (kMinRefitsToStepInParallel).
    int refitting = 0;
    if (threads > 1)
      for (const std::size_t i : running)
        if (jobs[i]->refits_first(interval) && ++refitting >= kMinRefitsToStepInParallel) break;
    const bool parallel_steps =
        refitting >= kMinRefitsToStepInParallel || (options.hand_off_every_round && running.size() > 1);
    for_each_job(running, parallel_steps ? threads : 1, [&](std::size_t i) {
      SimJob& j = *jobs[i];
      const double held = j.gpu_seconds;
      const int type = j.alloc.type;
      j.step(now, interval, fitter);
      gpu_s_by_type[i][static_cast<std::size_t>(type)] += j.gpu_seconds - held;
      if (j.completed()) j.apply(SimAllocation{});
    });
    bool finished_any = false;
    for (const std::size_t i : running)
      if (jobs[i]->completed()) {
        ++done;
        finished_any = true;
      }
    now += interval;
    progress.now_s = now;
    progress.jobs_finished = done;
    if (done >= jobs.size()) break;
    if (now > options.horizon_s) break;
    // (2) run the policy on submitted, unfinished jobs.
    if (finished_any)
      active_idx.erase(
          std::remove_if(active_idx.begin(), active_idx.end(), [&](std::size_t i) { return jobs[i]->completed(); }),
          active_idx.end());
    while (next_submit < jobs.size() && jobs[next_submit]->submission_time <= now) active_idx.push_back(next_submit++);
    active.clear();
    for (const std::size_t i : active_idx) active.push_back(jobs[i].get());
    RoundLog log;
    log.time = now;
    log.active = static_cast<int>(active.size());
    if (!active.empty()) {
      PolicyContext ctx;
      ctx.now = now;
      ctx.cluster = &cluster;
      ctx.jobs = active;
      ctx.threads = threads;
      ctx.hand_off_every_round = options.hand_off_every_round;
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<SimAllocation> allocs = policy.allocate(ctx);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      res.policy_ms.push_back(ms);
      log.policy_ms = ms;
      if (allocs.size() != active.size())
        throw Error("policy '" + policy.name() + "' returned a wrong number of allocations");
      std::vector<int> used(static_cast<std::size_t>(nt), 0);
      for (std::size_t k = 0; k < active.size(); ++k) {
        auto a = allocs[k];
        if (a.type >= nt || a.gpus < 0) a = SimAllocation{};
        if (!a.empty()) used[static_cast<std::size_t>(a.type)] += a.gpus;
        active[k]->apply(a);
        if (active[k]->alloc.empty()) ++log.queued;
        contention_sum[active_idx[k]] += static_cast<double>(active.size());
        ++contention_rounds[active_idx[k]];
        if (options.keep_round_log) {
          const auto* j = active[k];
          log.allocations.push_back({j->name, j->alloc.type, j->alloc.nodes, j->alloc.gpus, j->global_batch()});
        }
      }
      for (int t = 0; t < nt; ++t)
        if (used[static_cast<std::size_t>(t)] > cluster.type_gpus(t))
          throw Error("policy '" + policy.name() + "' over-allocated GPU type '" +
                      cluster.types[static_cast<std::size_t>(t)].name + "'");
    }
    res.rounds.push_back(std::move(log));
    progress.rounds = res.rounds.size();
    progress.jobs_submitted = next_submit;
    progress.active = active.size();
    report(false);
  }
  progress.jobs_finished = done;
  report(true);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto& j = *jobs[i];
    JobRecord r;
    r.name = j.name;
    r.application = j.app->name;
    r.category = j.kind;
    r.submission_time = j.submission_time;
    r.completion_time = j.completion_time;
    r.restarts = j.num_restarts;
    r.gpu_hours = j.gpu_seconds / 3600.0;
    for (double g : gpu_s_by_type[i]) r.gpu_hours_by_type.push_back(g / 3600.0);
    r.contention_avg = contention_rounds[i] > 0 ? contention_sum[i] / contention_rounds[i] : 1.0;
    r.epochs = j.epoch;
    res.jobs.push_back(std::move(r));
  }
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return res;
}

}  // namespace

SimResult simulate(const SimCluster& cluster, const ApplicationSet& apps, const Workload& workload, Policy& policy,
                   const SimOptions& options) {
  if (options.threads < 0) throw InvalidArgument("SimOptions::threads must be >= 0 (0 = all cores)");
  // No more threads than cores (oneTBB would only warn and ignore the rest); the results do not depend on it.
  const int threads = std::min(effective_threads(options.threads), effective_threads(0));
  // The whole simulation runs in an arena of its threads: the parallel loops above, the policy's and the fits'
  // nested oneTBB work never use more cores than it was given (one thread: everything on the calling thread).
  tbb::task_arena arena(threads);
  SimResult res;
  arena.execute([&] { res = simulate_on(cluster, apps, workload, policy, options, threads); });
  return res;
}

}  // namespace sia::sim
