#include <sia/error.hpp>
#include <sia/goodput/goodput_memo.hpp>
#include <sia/job_spec.hpp>
#include <sia/milp/factory.hpp>
#include <sia/sim/limits.hpp>
#include <sia/sim/sia_policy.hpp>
#include <sia/valid_configs.hpp>

#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace sia::sim {

// ---------------------------------------------------------------------------------------------
// Sia
// ---------------------------------------------------------------------------------------------
SiaPolicy::SiaPolicy(SiaPolicyOptions options) : options_(std::move(options)) {
  solver_ = make_milp_solver(options_.round.backend);
  memo_ = std::make_shared<GoodputMemo>();
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
      .first_placement(options.first_placement)
      .microbatches(job.app->microbatches);
  // Seeds (1-GPU or one-pipeline profiles) are what the paper's Bootstrap measures; the reference's modes use none.
  const bool seeds = job.app->pipeline || options.first_placement == FirstPlacement::seed ||
                     options.projection == ProjectionMode::paper;
  for (std::size_t t = 0; t < cluster.types.size(); ++t) {
    const SimGpuType& type = cluster.types[t];
    const auto& truth = job.app->types[t];
    if (job.app->pipeline && job.stages_on(static_cast<int>(t)) < 1) continue;  // no pipeline here: not usable
    TypeModel tm;
    tm.gpu_type = type.name;
    // What the scheduler has learnt on this type (an unaware job's merged model on every type).
    if (job.app->pipeline)
      tm.perf = job.perf[t];
    else if (const auto fn = job.goodput_function(static_cast<int>(t)))
      tm.perf = fn->perf;
    if (seeds) tm.seed = truth.seed;
    tm.min_local = truth.min_local;
    tm.max_local = truth.max_local;
    tm.gpus_per_node = type.gpus_per_node;
    tm.xput1 = truth.xput1;
    tm.stages = std::max(1, job.stages_on(static_cast<int>(t)));
    tm.max_nodes = type.max_job_nodes;  // ground truth does not extend beyond the profiled nodes
    m.add_type(std::move(tm));
  }
  return m;
}

double oracle_goodput(const SimJob& job, const SimCluster& cluster, int t, int nodes, int gpus) {
  const Application& app = *job.app;
  if (t < 0 || static_cast<std::size_t>(t) >= cluster.types.size() || gpus < 1 || nodes < 1) return 0.0;
  const auto& type = cluster.types[static_cast<std::size_t>(t)];
  if (type.max_job_nodes > 0 && nodes > type.max_job_nodes) return 0.0;
  if (!app.usable(t)) return 0.0;
  const auto& tt = app.types[static_cast<std::size_t>(t)];
  const std::vector<int> placement = placement_of(nodes, gpus);
  const double init = app.init_batch_size;
  const GradParams truth_grad = app.grad_stats(init, job.epoch);
  const auto eff = efficiency_fn(job.grad ? job.grad : std::optional<GradParams>(truth_grad), init);
  const double max_batch = std::max(static_cast<double>(job.target_batch_size), init);
  if (app.pipeline) {
    const int p = job.stages_on(t);
    if (p < 1 || gpus % p != 0) return 0.0;
    const int d = gpus / p;
    double best = 0.0;
    for (int mb = std::max(1, tt.min_local); mb <= std::max(1, tt.max_local); ++mb) {
      const double global = static_cast<double>(d) * mb * app.microbatches;
      if (global > max_batch * (1 + 1e-12)) break;
      const double step = app.pipeline_step_time(t, placement, mb);
      if (step > 0) best = std::max(best, global / step * eff(global));
    }
    return best;
  }
  BatchLimits lim;
  lim.max_batch_size = max_batch;
  lim.min_local = tt.min_local;
  const int mem = app.max_local_bsz(t, placement);
  lim.max_local = std::max(mem > 0 ? mem : tt.max_local, std::max(1, tt.min_local));
  lim.tune = job.kind == JobKind::adaptive;
  lim.accumulation = true;
  const auto c = optimize_batch(
      gpus, init, lim,
      [&](double b, int acc) {
        const StepSync st = app.step_time(t, placement, b);
        return st.step + (st.step - st.sync) * acc;
      },
      eff);
  return std::isfinite(c.goodput) && c.goodput > 0 ? c.goodput : 0.0;
}

SiaPolicyOptions apply_profiling_mode(SiaPolicyOptions o, std::string_view mode) {
  if (mode == "reference") {
    o.first_placement = FirstPlacement::tie;
    o.projection = ProjectionMode::reference;
    o.oracle = false;
  } else if (mode == "eq1") {
    o.first_placement = FirstPlacement::seed;
    o.projection = ProjectionMode::paper;
    o.oracle = false;
  } else if (mode == "noprof") {
    o.first_placement = FirstPlacement::tie;
    o.projection = ProjectionMode::equal;
    o.oracle = false;
  } else if (mode == "oracle") {
    o.oracle = true;
  } else {
    throw InvalidArgument("profiling mode '" + std::string(mode) + "': expected reference, eq1, noprof or oracle");
  }
  return o;
}

namespace {

/// The goodput filler (SiaPolicy::allocate) runs only in a round with at least this many new estimators. Filling one
/// costs 1.4-4.8 µs (most searches are goodput-memo hits: 1.4 µs at 16,384 GPUs, 4.8 at 64), handing work to another
/// thread 13-16 µs when the other core is free, 60-270 µs when another process holds it. On the 2-core machine the
/// filler did not pay in any round measured (simulator.cpp, kMinRefitsToStepInParallel, has the runs): from 2 new
/// estimators the 936-job run (<= 27 a round) was slower at 2 threads than at 1, from 32 so was `--scale 256 --rate
/// 600` (130-217 a round; 0.70-0.78 s against 0.67 s), from 512 only `--rate 9600`'s largest rounds (up to 3,056)
/// fill ahead, at no loss.
constexpr std::size_t kMinFreshEstimatorsToFillAhead = 512;

/// A job's goodput estimates for the rounds until its knowledge changes (SimJob::fit_generation), memoised per
/// configuration: the round may ask twice, and the memo survives rounds while the generation stays the same.
/// One object per job for the whole simulation, reset in place when the generation changes: at 10,000 active
/// jobs, building a new estimator (a hash map of nodes) per change and freeing the old one was a tenth of a round.
class JobEstimator {
 public:
  /// Starts over for `job`'s current knowledge (the model, or the ground truth with `oracle`).
  void reset(const SimJob& job, const SimCluster& cluster, const SiaPolicyOptions& options, int generation,
             const std::shared_ptr<GoodputMemo>& memo) {
    job_ = &job;
    cluster_ = &cluster;
    generation_ = generation;
    oracle_ = options.oracle;
    if (!oracle_) {
      model_ = job_model(job, cluster, options);
      model_.memo(memo);
    }
    std::fill(keys_.begin(), keys_.end(), kEmpty);
    used_ = 0;
    max_replicas_ever_ = max_replicas_ever(job, cluster);
  }
  /// The largest count the job has run with on any type: what observe() adds changes the generation too.
  [[nodiscard]] static int max_replicas_ever(const SimJob& job, const SimCluster& cluster) noexcept {
    int m = 0;
    for (int t = 0; t < static_cast<int>(cluster.types.size()); ++t) m = std::max(m, job.max_profiled_replicas(t));
    return m;
  }
  [[nodiscard]] bool current(const SimJob& job, const SimCluster& cluster) const noexcept {
    return job_ == &job && cluster_ == &cluster && generation_ == job.fit_generation;
  }
  [[nodiscard]] int max_replicas_ever() const noexcept { return max_replicas_ever_; }

  // Who fills the memo of a new estimator, in a round with several threads (SiaPolicy::allocate): the round
  // itself as it asks for goodputs, or another thread ahead of it. kPending: nobody yet; kAhead: the other thread is
  // filling it; kReady: the memo is the round's (filled, or left for the round to fill).
  static constexpr int kReady = 0, kPending = 1, kAhead = 2;
  std::atomic<int> filling{kReady};
  /// The round's goodput of the job on `c`: from the memo when the round may use it (taking the job over when
  /// nobody has), else computed apart while the other thread fills the memo — the same number, without waiting
  /// for a thread that may have lost its core.
  double round_goodput(const GpuTypeSpec& t, const ConfigurationSpec& c) {
    int state = filling.load(std::memory_order_acquire);
    if (state == kPending && filling.compare_exchange_strong(state, kReady, std::memory_order_acq_rel)) state = kReady;
    return state == kReady ? (*this)(t, c) : compute(c.type, t, c);
  }

  double operator()(const GpuTypeSpec& t, const ConfigurationSpec& c) {
    const std::uint64_t key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(c.type)) << 42) ^
                              (static_cast<std::uint64_t>(static_cast<std::uint32_t>(c.nodes)) << 21) ^
                              static_cast<std::uint32_t>(c.gpus);
    if (2 * (used_ + 1) > keys_.size()) grow();
    std::size_t i = slot(key);
    if (keys_[i] == key) return values_[i];
    const double v = compute(c.type, t, c);
    keys_[i] = key;
    values_[i] = v;
    ++used_;
    return v;
  }

 private:
  // The goodput itself (reads only the model, the job and the ground truth).
  [[nodiscard]] double compute(int type, const GpuTypeSpec& t, const ConfigurationSpec& c) const {
    const double v = oracle_ ? oracle_goodput(*job_, *cluster_, type, c.nodes, c.gpus) : model_.goodput(t, c);
    return std::isfinite(v) && v >= 0 ? v : 0.0;
  }
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  // Open addressing with linear probing in flat arrays: clearing it is a fill, and it allocates only to grow.
  [[nodiscard]] std::size_t slot(std::uint64_t key) const noexcept {
    const std::size_t mask = keys_.size() - 1;
    std::size_t i = static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> 20) & mask;
    while (keys_[i] != kEmpty && keys_[i] != key) i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<std::uint64_t> keys(std::max<std::size_t>(16, 2 * keys_.size()), kEmpty);
    std::vector<double> values(keys.size(), 0.0);
    keys.swap(keys_);
    values.swap(values_);
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] != kEmpty) {
        const std::size_t j = slot(keys[i]);
        keys_[j] = keys[i];
        values_[j] = values[i];
      }
  }

  const SimJob* job_ = nullptr;
  const SimCluster* cluster_ = nullptr;
  int generation_ = -1;
  bool oracle_ = false;
  JobModel model_;
  int max_replicas_ever_ = 0;
  std::vector<std::uint64_t> keys_;
  std::vector<double> values_;
  std::size_t used_ = 0;
};

}  // namespace

std::vector<SimAllocation> SiaPolicy::allocate(const PolicyContext& ctx) {
  const SimCluster& cluster = *ctx.cluster;
  const int nt = static_cast<int>(cluster.types.size());
  std::vector<JobSpec> specs;
  specs.reserve(ctx.jobs.size());
  // Goodput estimates only change when the job's knowledge changes (fit_generation): reuse them across rounds.
  // The cache is updated in place (a round at 10,000 active jobs spent a third of its time in the allocator
  // when it was rebuilt every round); entries of jobs no longer active are dropped after the loop.
  ++round_;
  // Jobs whose knowledge changed since their estimator was built: their estimator is rebuilt and its goodputs
  // computed below, in parallel (one job per task: each estimator is its own job's).
  std::vector<std::size_t> fresh;
  std::vector<JobEstimator*> estimators(ctx.jobs.size(), nullptr);
  for (std::size_t k = 0; k < ctx.jobs.size(); ++k) {
    SimJob* job = ctx.jobs[k];
    CachedEstimator& slot = cache_[job->uid];
    slot.round = round_;
    if (!slot.estimator) slot.estimator = std::make_shared<JobEstimator>();
    auto* est = static_cast<JobEstimator*>(slot.estimator.get());
    estimators[k] = est;
    const bool current = est->current(*job, cluster);
    if (!current) fresh.push_back(k);
    // (what reset() keeps: the largest count the job ran with, which only changes with its generation)
    const int ever = current ? est->max_replicas_ever() : JobEstimator::max_replicas_ever(*job, cluster);
    int cap = 1;
    for (int t = 0; t < nt; ++t) {
      const auto& tt = job->app->types[static_cast<std::size_t>(t)];
      const int mem_cap =
          tt.min_local > 0 ? static_cast<int>(job->app->max_batch_size / tt.min_local) : options_.max_gpus_per_job;
      cap = std::max(cap, std::min(options_.max_gpus_per_job, mem_cap));
    }
    JobSpec s(job->name);
    s.min_gpus(1).max_gpus(cap).max_gpus_ever(ever);
    if (job->app->pipeline) {
      // Hybrid (paper §3.4, §5.3): whole pipelines of each type's size; the 2x rule and the cap count pipelines
      // (reference §3: replicas of PMP jobs are pipelines).
      const int pmax = *std::max_element(job->pipeline_sizes.begin(), job->pipeline_sizes.end());
      s.kind(JobKind::hybrid)
          .pipeline_sizes(job->pipeline_sizes)
          .max_gpus(options_.max_gpus_per_job * std::max(1, pmax))
          .max_gpus_ever(std::nullopt)
          .max_pipelines_ever(ever);
    } else if (job->kind == JobKind::rigid || job->kind == JobKind::strong_scaling) {
      s.kind(job->kind);
      if (job->kind == JobKind::rigid) {
        s.min_gpus(job->target_replicas).max_gpus(job->target_replicas).max_gpus_ever(std::nullopt);
      } else {
        s.max_gpus(std::max(1, std::min(cap, job->target_replicas)));
        // The reference caps a strong-scaling job at its target count only: no 2x rule (reference §3).
        if (!options_.strong_scaling_2x) s.max_gpus_ever(std::nullopt);
      }
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
    // A raw pointer (the cache owns the estimator until the next round): the function needs no allocation.
    s.goodput_fn([est](const GpuTypeSpec& t, const ConfigurationSpec& c) { return est->round_goodput(t, c); });
    if (!options_.tenants.empty()) {
      const SimTenant& t = options_.tenants[tenant_index(job->name, options_.tenants.size())];
      s.tenant(t.spec.name).weight(t.weight);
    }
    specs.push_back(std::move(s));
  }
  if (cache_.size() > ctx.jobs.size()) std::erase_if(cache_, [&](const auto& kv) { return kv.second.round != round_; });
  const ClusterSpec spec = cluster.spec();
  const int threads = ctx.threads > 0 ? ctx.threads : tbb::this_task_arena::max_concurrency();
  // Another thread fills the new estimators' goodputs (below) only in a round with enough of them to pay for it.
  const bool ahead =
      threads > 1 && (fresh.size() >= kMinFreshEstimatorsToFillAhead || (ctx.hand_off_every_round && fresh.size() > 1));
  if (ahead && set_cluster_ != &cluster) {  // the round builds the same set every round
    set_ = make_configuration_set(spec);
    set_cluster_ = &cluster;
  }
  const ConfigurationSet& set = set_;
  // New estimators start over here, on the round's thread (an error in a job's model is the round's error).
  for (const std::size_t k : fresh)
    estimators[k]->reset(*ctx.jobs[k], cluster, options_, ctx.jobs[k]->fit_generation, memo_);
  // With several threads, another one computes the new estimators' goodputs on every configuration the round will
  // ask for (run_round asks each job for its goodput on valid_configs() of its limits, in the same configuration
  // set), from the last job back, while the round runs: the round takes over each job it reaches before that
  // thread, and computes apart (without the memo) the goodputs of a job that thread is filling, never waiting for
  // it (on a loaded machine it may have lost its core). A goodput is a pure function of the job's knowledge and the
  // configuration, so the round reads the same numbers whichever thread computed them. A
  // configuration missed here (say, a non-preemptible job's current one) is computed by the round itself, an error
  // is left for the round to report. (One thread: the round computes the goodputs as it asks for them.)
  auto fill_ahead = [&](std::size_t k) {
    JobEstimator& est = *estimators[k];
    const JobSpec& s = specs[k];
    const JobLimits lim{s.min_gpus(),       s.max_gpus(),          s.kind(), s.pipeline_size(), s.max_gpus_ever(),
                        s.pipeline_sizes(), s.max_pipelines_ever()};
    try {
      for (const ValidConfig& v : valid_configs(set, lim)) {
        const ConfigurationSpec& c = set.configs[static_cast<std::size_t>(v.config)];
        if (static_cast<std::size_t>(c.type) >= spec.types.size()) break;  // (a stale set: the round asks itself)
        (void)est(spec.types[static_cast<std::size_t>(c.type)], ConfigurationSpec{c.type, c.nodes, v.gpus});
      }
    } catch (const std::exception&) {  // the round asks again and reports it
    }
  };
  std::atomic<bool> round_over{false};  // the other thread starts no new job after the round
  tbb::task_group filler;
  struct Join {  // the other thread reads this call's data: it ends before the call does, however it ends
    tbb::task_group* group;
    std::atomic<bool>& over;
    ~Join() {
      if (group == nullptr) return;
      over.store(true, std::memory_order_relaxed);
      group->wait();
    }
  } join{ahead ? &filler : nullptr, round_over};
  if (ahead) {
    for (const std::size_t k : fresh) estimators[k]->filling.store(JobEstimator::kPending, std::memory_order_relaxed);
    filler.run([&] {
      for (std::size_t i = fresh.size(); i-- > 0 && !round_over.load(std::memory_order_relaxed);) {
        JobEstimator& est = *estimators[fresh[i]];
        int state = JobEstimator::kPending;
        if (!est.filling.compare_exchange_strong(state, JobEstimator::kAhead, std::memory_order_acq_rel)) continue;
        fill_ahead(fresh[i]);
        est.filling.store(JobEstimator::kReady, std::memory_order_release);
      }
    });
  }
  RoundOptions ro = options_.round;
  if (ro.threads == 0) ro.threads = ctx.threads;  // 1 while other simulations keep the cores busy (runner)
  for (const SimTenant& t : options_.tenants) ro.tenants.push_back(t.spec);
  ro.place = false;  // the simulator charges restarts by shape; node ids do not matter (reference §6.3)
  ro.strict = true;  // the simulator builds its jobs itself: a job-level error is a bug, never a rejection
  last_ = run_round(spec, specs, ro, *solver_);
  if (ahead) {
    round_over.store(true, std::memory_order_relaxed);
    filler.wait();
    join.group = nullptr;
    // Jobs the round never asked for and the other thread did not reach.
    for (const std::size_t k : fresh) estimators[k]->filling.store(JobEstimator::kReady, std::memory_order_relaxed);
  }
  if (options_.on_round) options_.on_round(spec, specs, last_);
  std::vector<SimAllocation> out(ctx.jobs.size());
  for (std::size_t i = 0; i < ctx.jobs.size() && i < last_.decisions.size(); ++i) {
    const auto& d = last_.decisions[i];
    if (d.config && d.gpus > 0) out[i] = SimAllocation{d.config->type, d.config->nodes, d.gpus};
  }
  return out;
}

std::size_t tenant_index(std::string_view job_name, std::size_t tenants) noexcept {
  if (tenants == 0) return 0;
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a 64-bit offset basis
  for (const char c : job_name) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return static_cast<std::size_t>(h % tenants);
}

std::vector<SimTenant> parse_sim_tenants(std::string_view text, const std::vector<std::string>& cluster_types) {
  std::vector<SimTenant> out;
  auto fail = [&](std::string_view part, const std::string& why) {
    throw InvalidArgument("policy 'sia' option 'tenants': '" + std::string(part) + "': " + why +
                          " (form: name:weight=W,max=N,guarantee=M;name2:...)");
  };
  auto split = [](std::string_view s, char sep) {
    std::vector<std::string_view> parts;
    std::size_t b = 0;
    for (std::size_t e = 0; e <= s.size(); ++e)
      if (e == s.size() || s[e] == sep) {
        parts.push_back(s.substr(b, e - b));
        b = e + 1;
      }
    return parts;
  };
  auto number = [&](std::string_view part, std::string_view v) {
    const std::string str(v);
    char* end = nullptr;
    const double x = std::strtod(str.c_str(), &end);
    if (str.empty() || end != str.c_str() + str.size() || !std::isfinite(x)) fail(part, "not a number");
    return x;
  };
  for (std::string_view part : split(text, ';')) {
    if (part.empty()) continue;
    const auto colon = part.find(':');
    SimTenant t;
    t.spec.name = std::string(part.substr(0, colon));
    if (t.spec.name.empty()) fail(part, "empty tenant name");
    for (const auto& o : out)
      if (o.spec.name == t.spec.name) fail(part, "duplicate tenant");
    if (colon != std::string_view::npos)
      for (std::string_view kv : split(part.substr(colon + 1), ',')) {
        if (kv.empty()) continue;
        const auto eq = kv.find('=');
        if (eq == std::string_view::npos) fail(part, "'" + std::string(kv) + "' is not key=value");
        const std::string_view key = kv.substr(0, eq);
        const double v = number(part, kv.substr(eq + 1));
        const bool count = v >= 0 && v <= 1e7 && v == std::floor(v);
        if (key == "weight") {
          if (!(v > 0)) fail(part, "weight must be > 0");
          t.weight = v;
        } else if (key == "max" && count) {
          t.spec.max_gpus = static_cast<int>(v);
        } else if (key == "guarantee" && count) {
          t.spec.guaranteed_gpus = static_cast<int>(v);
        } else if (key.substr(0, 4) == "max_" && count && !cluster_types.empty()) {
          const auto it = std::find(cluster_types.begin(), cluster_types.end(), key.substr(4));
          if (it == cluster_types.end()) fail(part, "unknown GPU type '" + std::string(key.substr(4)) + "'");
          t.spec.max_gpus_per_type.resize(cluster_types.size(), -1);
          t.spec.max_gpus_per_type[static_cast<std::size_t>(it - cluster_types.begin())] = static_cast<int>(v);
        } else {
          fail(part, "unknown key '" + std::string(key) + "' or not a GPU count (weight, max, guarantee" +
                         (cluster_types.empty() ? "" : ", max_<gpu type>") + ")");
        }
      }
    out.push_back(std::move(t));
  }
  if (out.empty()) fail(text, "no tenant");
  return out;
}

namespace detail {
PolicyInfo builtin_policy_sia() {
  PolicyInfo info;
  info.name = "sia";
  info.description = "Sia (SOSP 2023): the library's round (ILP over configurations) with each job's goodput model";
  info.options = {
      {"backend", "default", "MILP backend of the round (see sia_simulate --backend)"},
      {"profiling", "",
       "preset of first_placement/projection/oracle (paper §5.7): reference, eq1, noprof or oracle; set alone"},
      {"first_placement", "tie",
       "value of a never-run job's first configurations: tie (reference code), profiled (paper: 1-GPU profiled "
       "throughput) or seed (1-GPU seed model)"},
      {"projection", "reference",
       "types a job has not run on: reference (scale a fitted type by 1-GPU throughputs), paper (Eq. 1 with 1-GPU "
       "seed models), equal (as fast as the known type) or none (not usable until observed)"},
      {"oracle", "false", "true throughputs known (ground truth instead of fitted models)"},
      {"strong_scaling", "reference",
       "count rule of strong-scaling jobs: reference (any count up to the target at once) or 2x (scale-up rule)"},
      {"round_utilities", "false", "round utilities to 2 decimals like the reference code"},
      {"p", "-0.5", "fairness exponent, in [-10, 10] without 0 (paper Fig. 10: -1 to 1)"},
      {"lambda", "1.1", "penalty per job left without GPUs, in [1e-6, 1000]"},
      {"max_gpus_per_job", "64", "largest GPU count of one job"},
      {"interval_s", "60", interval_option_help()},
      {"tenants", "",
       "tenants, jobs assigned by a hash of their name: name:weight=W,max=N,guarantee=M;name2:... (max_<type>=K "
       "caps one GPU type; docs/decision.md, Tenants)"},
  };
  info.make = [](const PolicyOptions& o) {
    SiaPolicyOptions so;
    so.round.backend = o.text("backend", "default");
    const std::string fp = o.choice("first_placement", "tie", {"tie", "profiled", "seed"});
    so.first_placement = fp == "tie"    ? FirstPlacement::tie
                         : fp == "seed" ? FirstPlacement::seed
                                        : FirstPlacement::profiled;
    const std::string pr = o.choice("projection", "reference", {"reference", "paper", "equal", "none"});
    so.projection = pr == "reference" ? ProjectionMode::reference
                    : pr == "paper"   ? ProjectionMode::paper
                    : pr == "equal"   ? ProjectionMode::equal
                                      : ProjectionMode::none;
    so.oracle = o.boolean("oracle", false);
    so.strong_scaling_2x = o.choice("strong_scaling", "reference", {"reference", "2x"}) == "2x";
    if (o.has("profiling")) {
      const std::string mode = o.choice("profiling", "reference", {"reference", "eq1", "noprof", "oracle"});
      if (o.has("first_placement") || o.has("projection") || o.has("oracle"))
        throw InvalidArgument(
            "policy 'sia': option 'profiling' sets first_placement, projection and oracle; give "
            "either profiling or those");
      so = apply_profiling_mode(so, mode);
    }
    so.round.round_utilities = o.boolean("round_utilities", false);
    so.round.p = o.number("p", so.round.p, -10.0, 10.0);
    if (so.round.p == 0.0) throw InvalidArgument("policy 'sia' option 'p': must not be 0 (range [-10, 10] without 0)");
    so.round.lambda = o.number("lambda", so.round.lambda, 1e-6, 1e3);
    so.max_gpus_per_job = static_cast<int>(o.integer("max_gpus_per_job", so.max_gpus_per_job, 1, 1 << 20));
    so.interval_s = o.number("interval_s", so.interval_s, kMinIntervalS, kMaxIntervalS);
    if (o.has("tenants")) so.tenants = parse_sim_tenants(o.text("tenants", ""));
    return std::unique_ptr<Policy>(std::make_unique<SiaPolicy>(so));
  };
  return info;
}
}  // namespace detail

}  // namespace sia::sim
