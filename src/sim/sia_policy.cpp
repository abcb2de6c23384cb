#include <sia/error.hpp>
#include <sia/job_spec.hpp>
#include <sia/milp/factory.hpp>
#include <sia/sim/sia_policy.hpp>

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace sia::sim {

// ---------------------------------------------------------------------------------------------
// Sia
// ---------------------------------------------------------------------------------------------
SiaPolicy::SiaPolicy(SiaPolicyOptions options) : options_(std::move(options)) {
  solver_ = make_milp_solver(options_.round.backend);
}

SiaPolicy::~SiaPolicy() = default;

JobModel job_model(const SimJob& job, const SimCluster& cluster, const SiaPolicyOptions& options) {
  JobModel m;
  const double init = job.app->init_batch_size;
  m.kind(job.kind)
      .init_batch_size(init)
      .max_batch_size(std::max(static_cast<double>(job.target_batch_size), init))  // reference §1.5
      .grad(job.grad)
      .projection(options.projection)
      .first_placement(options.first_placement);
  for (std::size_t t = 0; t < cluster.types.size(); ++t) {
    const SimGpuType& type = cluster.types[t];
    const auto& truth = job.app->types[t];
    TypeModel tm;
    tm.gpu_type = type.name;
    // What the scheduler has learnt on this type (an unaware job's merged model on every type).
    if (const auto fn = job.goodput_function(static_cast<int>(t))) tm.perf = fn->perf;
    tm.min_local = truth.min_local;
    tm.max_local = truth.max_local;
    tm.gpus_per_node = type.gpus_per_node;
    tm.xput1 = truth.xput1;
    tm.max_nodes = type.max_job_nodes;  // ground truth does not extend beyond the profiled nodes
    m.add_type(std::move(tm));
  }
  return m;
}

namespace {

/// A job's estimator for the rounds until its knowledge changes, memoised per configuration (the
/// round may ask twice; the memo survives rounds while SimJob::fit_generation stays the same).
struct JobEstimator {
  JobModel model;
  std::unordered_map<long long, double> memo;

  double operator()(const GpuTypeSpec& t, const ConfigurationSpec& c) {
    const long long key = (static_cast<long long>(c.type) << 40) ^ (static_cast<long long>(c.nodes) << 20) ^ c.gpus;
    const auto it = memo.find(key);
    if (it != memo.end()) return it->second;
    double v = model.goodput(t, c);
    if (!std::isfinite(v) || v < 0) v = 0.0;
    memo.emplace(key, v);
    return v;
  }
};

}  // namespace

std::vector<SimAllocation> SiaPolicy::allocate(const PolicyContext& ctx) {
  const SimCluster& cluster = *ctx.cluster;
  const int nt = static_cast<int>(cluster.types.size());
  std::vector<JobSpec> specs;
  specs.reserve(ctx.jobs.size());
  // Goodput estimates only change when the job's knowledge changes (fit_generation): reuse them across rounds.
  std::unordered_map<std::uint64_t, CachedEstimator> next_cache;
  for (SimJob* job : ctx.jobs) {
    const auto hit = cache_.find(job->uid);
    std::shared_ptr<JobEstimator> est;
    if (hit != cache_.end() && hit->second.generation == job->fit_generation && hit->second.cluster == &cluster)
      est = std::static_pointer_cast<JobEstimator>(hit->second.estimator);
    else
      est = std::make_shared<JobEstimator>(JobEstimator{job_model(*job, cluster, options_), {}});
    next_cache[job->uid] = CachedEstimator{job->fit_generation, &cluster, est};
    int ever = 0, cap = 1;
    for (int t = 0; t < nt; ++t) {
      ever = std::max(ever, job->max_profiled_replicas(t));
      const auto& tt = job->app->types[static_cast<std::size_t>(t)];
      const int mem_cap =
          tt.min_local > 0 ? static_cast<int>(job->app->max_batch_size / tt.min_local) : options_.max_gpus_per_job;
      cap = std::max(cap, std::min(options_.max_gpus_per_job, mem_cap));
    }
    JobSpec s(job->name);
    s.min_gpus(1).max_gpus(cap).max_gpus_ever(ever);
    if (job->kind == JobKind::rigid || job->kind == JobKind::strong_scaling) {
      s.kind(job->kind);
      if (job->kind == JobKind::rigid)
        s.min_gpus(job->target_replicas).max_gpus(job->target_replicas).max_gpus_ever(std::nullopt);
      else
        s.max_gpus(std::max(1, std::min(cap, job->target_replicas)));
    }
    s.age_s(ctx.now - job->submission_time)
        .restarts(job->num_restarts)
        .restart_cost_s(job->app->constants.restart_penalty_s);
    if (!job->alloc.empty()) {
      CurrentAllocation cur;
      cur.type = job->alloc.type;
      cur.gpus = job->alloc.gpus;
      cur.nodes = job->alloc.nodes;
      s.current(cur);
      // Checkpoint-restore in progress: the job keeps its configuration (reference §4, §9.8).
      if (job->rescale_time > 0) s.preemptible(false);
    }
    s.goodput_fn([est](const GpuTypeSpec& t, const ConfigurationSpec& c) { return (*est)(t, c); });
    specs.push_back(std::move(s));
  }
  cache_ = std::move(next_cache);
  RoundOptions ro = options_.round;
  ro.place = false;  // the simulator charges restarts by shape; node ids do not matter (reference §6.3)
  last_ = run_round(cluster.spec(), specs, ro, *solver_);
  std::vector<SimAllocation> out(ctx.jobs.size());
  for (std::size_t i = 0; i < ctx.jobs.size() && i < last_.decisions.size(); ++i) {
    const auto& d = last_.decisions[i];
    if (d.config && d.gpus > 0) out[i] = SimAllocation{d.config->type, d.config->nodes, d.gpus};
  }
  return out;
}

namespace detail {
PolicyInfo builtin_policy_sia() {
  PolicyInfo info;
  info.name = "sia";
  info.description = "Sia (SOSP 2023): the library's round (ILP over configurations) with each job's goodput model";
  info.options = {
      {"backend", "default", "MILP backend of the round (see sia_simulate --backend)"},
      {"first_placement", "tie",
       "value of a never-run job's first configurations: tie (reference code) or profiled "
       "(paper: 1-GPU profiled throughput)"},
      {"projection", "reference",
       "types a job has not run on: reference (scale a fitted type by 1-GPU "
       "throughputs) or none (not usable until observed)"},
      {"round_utilities", "false", "round utilities to 2 decimals like the reference code"},
      {"p", "-0.5", "fairness exponent (!= 0)"},
      {"lambda", "1.1", "penalty per job left without GPUs (> 0)"},
      {"max_gpus_per_job", "64", "largest GPU count of one job"},
      {"interval_s", "60", "round length (s)"},
  };
  info.make = [](const PolicyOptions& o) {
    SiaPolicyOptions so;
    so.round.backend = o.text("backend", "default");
    so.first_placement = o.choice("first_placement", "tie", {"tie", "profiled"}) == "tie" ? FirstPlacement::tie
                                                                                          : FirstPlacement::profiled;
    so.projection = o.choice("projection", "reference", {"reference", "none"}) == "reference"
                        ? ProjectionMode::reference
                        : ProjectionMode::none;
    so.round.round_utilities = o.boolean("round_utilities", false);
    so.round.p = o.number("p", so.round.p, -1e3, 1e3);
    so.round.lambda = o.number("lambda", so.round.lambda, 1e-12, 1e12);
    so.max_gpus_per_job = static_cast<int>(o.integer("max_gpus_per_job", so.max_gpus_per_job, 1, 1 << 20));
    so.interval_s = o.number("interval_s", so.interval_s, 1e-3, 1e9);
    return std::unique_ptr<Policy>(std::make_unique<SiaPolicy>(so));
  };
  return info;
}
}  // namespace detail

}  // namespace sia::sim
