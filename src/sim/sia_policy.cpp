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

namespace {

/// Goodput estimates of one job for one round, memoised per configuration (run_round may ask twice).
struct JobEstimator {
  const SimJob* job = nullptr;
  const SimCluster* cluster = nullptr;
  const SiaPolicyOptions* options = nullptr;
  int source = -1;  ///< projection source: first type in cluster order with a goodput function
  std::vector<std::optional<GoodputFunction>> fns;
  std::unordered_map<long long, double> memo;

  double raw(int t, int nodes, int gpus) const {
    const auto& type = cluster->types[static_cast<std::size_t>(t)];
    if (type.max_job_nodes > 0 && nodes > type.max_job_nodes) return 0.0;
    const auto& fn = fns[static_cast<std::size_t>(t)];
    if (fn) return fn->optimize(nodes, gpus, job->scheduler_limits(t)).goodput;
    if (options->project_throughputs && source >= 0) {
      const auto& dest = cluster->types[static_cast<std::size_t>(source)];
      const int n2 = (gpus + dest.gpus_per_node - 1) / dest.gpus_per_node;
      const double xs = job->app->types[static_cast<std::size_t>(t)].xput1;
      const double xd = job->app->types[static_cast<std::size_t>(source)].xput1;
      if (!(xs > 0) || !(xd > 0)) return 0.0;
      return fns[static_cast<std::size_t>(source)]->optimize(n2, gpus, job->scheduler_limits(source)).goodput * xs / xd;
    }
    if (source >= 0) return 0.0;  // known elsewhere, no projection: this type is not usable yet
    // Never ran anywhere: only 1-GPU configurations, all tied or valued by their 1-GPU profile. A rigid job
    // can only run with its fixed GPU count, so that count takes the 1-GPU role (else it would never start).
    const int first_gpus = job->kind == JobKind::rigid ? std::max(1, job->target_replicas) : 1;
    if (gpus != first_gpus) return 0.0;
    // Rigid jobs are valued by their profiled throughput even in `tie` mode: the reference values rigid
    // jobs from the trace's throughput on every type (sia-reference-behaviour.md §4), never by a tie.
    if (options->bootstrap == Bootstrap::tie && job->kind != JobKind::rigid) return 1.0;
    return job->app->types[static_cast<std::size_t>(t)].xput1;
  }

  double operator()(const GpuTypeSpec&, const Config& c) {
    const long long key = (static_cast<long long>(c.type) << 40) ^ (static_cast<long long>(c.nodes) << 20) ^ c.gpus;
    const auto it = memo.find(key);
    if (it != memo.end()) return it->second;
    double v = raw(c.type, c.nodes, c.gpus);
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
      est = std::make_shared<JobEstimator>();
    next_cache[job->uid] = CachedEstimator{job->fit_generation, &cluster, est};
    est->job = job;
    est->cluster = &cluster;
    est->options = &options_;
    est->fns.assign(static_cast<std::size_t>(nt), std::nullopt);
    est->source = -1;
    int ever = 0, cap = 1;
    for (int t = 0; t < nt; ++t) {
      est->fns[static_cast<std::size_t>(t)] = job->goodput_function(t);
      if (est->source < 0 && est->fns[static_cast<std::size_t>(t)]) est->source = t;
      ever = std::max(ever, job->max_profiled_replicas(t));
      const auto& tt = job->app->types[static_cast<std::size_t>(t)];
      const int mem_cap = tt.min_local > 0 ? static_cast<int>(job->app->max_batch_size / tt.min_local) : options_.max_gpus_per_job;
      cap = std::max(cap, std::min(options_.max_gpus_per_job, mem_cap));
    }
    JobSpec s(job->name);
    s.min_gpus(1).max_gpus(cap).max_gpus_ever(ever);
    if (job->kind == JobKind::rigid || job->kind == JobKind::strong_scaling) {
      s.kind(job->kind);
      if (job->kind == JobKind::rigid) s.min_gpus(job->target_replicas).max_gpus(job->target_replicas).max_gpus_ever(std::nullopt);
      else s.max_gpus(std::max(1, std::min(cap, job->target_replicas)));
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
    s.goodput_fn([est](const GpuTypeSpec& t, const Config& c) { return (*est)(t, c); });
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
      {"first_placement", "tie", "value of a never-run job's first configurations: tie (reference code) or profiled "
                                 "(paper: 1-GPU profiled throughput)"},
      {"projection", "reference", "types a job has not run on: reference (scale a fitted type by 1-GPU "
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
    so.bootstrap = o.choice("first_placement", "tie", {"tie", "profiled"}) == "tie" ? Bootstrap::tie : Bootstrap::profiled;
    so.project_throughputs = o.choice("projection", "reference", {"reference", "none"}) == "reference";
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
