#include <sia/error.hpp>
#include <sia/goodput/pipeline.hpp>
#include <sia/sim/job.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>

namespace sia::sim {

namespace {
std::uint64_t next_uid() {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}
}  // namespace

SimJob::SimJob(const WorkloadJob& spec, std::shared_ptr<const Application> a, int num_types)
    : uid(next_uid()),
      name(spec.name),
      app(std::move(a)),
      submission_time(spec.time),
      kind(spec.category),
      target_batch_size(spec.batch_size),
      target_replicas(spec.num_replicas),
      observed(static_cast<std::size_t>(num_types)),
      perf(static_cast<std::size_t>(num_types)) {}

std::vector<int> resolve_pipeline_sizes(const WorkloadJob& spec, const Application& app, const SimCluster& cluster,
                                        const std::string& source) {
  const std::string where = source + ":" + std::to_string(spec.line) + ": job '" + spec.name + "'";
  if (!app.pipeline) {
    if (spec.category == JobKind::hybrid)
      throw InvalidArgument(where + ": category hybrid, but model '" + app.name +
                            "' is data parallel (its profiles have 1-GPU placements; a pipeline model's start at one "
                            "pipeline, like gpt_pmp)");
    return {};
  }
  if (spec.category != JobKind::hybrid)
    throw InvalidArgument(where + ": model '" + app.name + "' is pipeline parallel: its category must be hybrid (got " +
                          std::string(to_string(spec.category)) + ")");
  std::vector<int> sizes(cluster.types.size(), 0);
  for (std::size_t t = 0; t < cluster.types.size(); ++t)
    if (app.types[t].available) sizes[t] = app.types[t].stages;
  if (spec.pipeline_sizes.empty()) return sizes;
  std::vector<int> chosen(cluster.types.size(), 0);
  for (const auto& [type, p] : spec.pipeline_sizes) {
    bool matched = false;
    for (std::size_t t = 0; t < cluster.types.size(); ++t) {
      const auto& ct = cluster.types[t];
      if (!type.empty() && type != ct.name && type != ct.profile) continue;
      matched = true;
      if (!type.empty() && sizes[t] == 0)
        throw InvalidArgument(where + ": pipeline_size for GPU type '" + type + "', but model '" + app.name +
                              "' has no profiles for it");
      if (sizes[t] == 0) continue;  // a bare size applies to the types the model has
      if (sizes[t] != p)
        throw InvalidArgument(where + ": pipeline_size " + std::to_string(p) + " on GPU type '" + ct.name +
                              "', but model '" + app.name + "' was profiled with pipelines of " +
                              std::to_string(sizes[t]) + " GPUs there");
      chosen[t] = p;
    }
    if (!matched) throw InvalidArgument(where + ": pipeline_size names GPU type '" + type + "', not in the cluster");
  }
  return chosen;
}

int SimJob::stages_on(int t) const noexcept {
  if (pipeline_sizes.empty()) return 1;
  return t >= 0 && static_cast<std::size_t>(t) < pipeline_sizes.size() ? pipeline_sizes[static_cast<std::size_t>(t)]
                                                                       : 0;
}

int SimJob::replicas_on(int t, int gpus) const noexcept {
  const int p = stages_on(t);
  return p > 0 ? gpus / p : 0;
}

long long SimJob::global_batch() const noexcept {
  if (alloc.empty()) return 0;
  return static_cast<long long>(replicas_on(alloc.type, alloc.gpus)) * atomic_bsz * (accum_steps + 1);
}

std::vector<int> SimJob::pipeline_placement() const {
  // Whole pipelines only: the GPUs of the placement, node by node, up to pipelines x stages.
  int left = replicas_on(alloc.type, alloc.gpus) * stages_on(alloc.type);
  std::vector<int> out;
  for (int g : placement) {
    if (left <= 0) break;
    out.push_back(std::min(g, left));
    left -= out.back();
  }
  return out;
}

int SimJob::max_profiled_replicas(int t) const noexcept {
  int m = 0;
  for (const auto& [key, v] : observed[static_cast<std::size_t>(t)]) m = std::max(m, replicas_on(t, std::get<1>(key)));
  return m;
}

std::optional<GoodputFunction> SimJob::goodput_function(int t) const {
  const auto& p = unaware_model ? merged_perf : perf[static_cast<std::size_t>(t)];
  if (!p || !grad) return std::nullopt;
  return GoodputFunction{*p, grad, app->init_batch_size};
}

bool SimJob::apply(const SimAllocation& a) {
  const SimAllocation next = a.empty() ? SimAllocation{} : a;
  if (next == alloc) return false;
  const auto new_placement = next.empty() ? std::vector<int>{} : placement_of(next.nodes, next.gpus);
  const bool type_changed = next.type != alloc.type;
  const bool shape_changed = new_placement != placement;
  alloc = next;
  placement = new_placement;
  // No fit_generation bump: what the scheduler knows of the job (its fitted models, its gradient statistics)
  // does not change with its allocation, so its cached goodput estimates stay valid.
  if (next.empty()) {  // suspend: no restart counted now; the next resume counts
    atomic_bsz = 0;
    accum_steps = 0;
    rescale_time = 0.0;
    return false;
  }
  if (!type_changed && !shape_changed) return false;  // same shape on other nodes: free (reference §6.3)
  update_local_bsz();
  rescale_time = app->constants.rescale_time_s;
  if (started) ++num_restarts;
  started = true;
  return true;
}

void SimJob::update_local_bsz() {
  if (alloc.empty()) return;
  // The batch size is a function of what the job knows (fit_generation), its kind and its allocation: the
  // step loop asks again after every stretch of progress, mostly with none of them changed (then the search
  // over batch sizes, 5-10 % of a simulation, is skipped with the same answer).
  const BszKey key{fit_generation, kind, unaware_model, alloc};
  if (bsz_memo_ && bsz_memo_->key == key) {
    atomic_bsz = bsz_memo_->atomic_bsz;
    accum_steps = bsz_memo_->accum_steps;
    return;
  }
  compute_local_bsz();
  bsz_memo_ = BszMemo{key, atomic_bsz, accum_steps};
}

void SimJob::compute_local_bsz() {
  const int t = alloc.type;
  const auto& tt = app->types[static_cast<std::size_t>(t)];
  const int nodes = static_cast<int>(placement.size());
  if (app->pipeline) {
    // GPipe executor (paper §5.3): M micro-batches per pipeline and step; the micro-batch is the goodput-best
    // one of the fitted pipeline model (1 before any fit; the profiles have 1 and 2).
    accum_steps = app->microbatches - 1;
    atomic_bsz = std::max(1, tt.min_local);
    const auto& p = perf[static_cast<std::size_t>(t)];
    if (p && stages_on(t) > 0 && replicas_on(t, alloc.gpus) > 0) {
      PipelineGoodputFunction f{PipelineParams{*p, stages_on(t), app->microbatches}, grad, app->init_batch_size};
      BatchLimits lim;
      lim.max_batch_size = app->max_batch_size;
      lim.min_local = std::max(1, tt.min_local);
      lim.max_local = std::max(lim.min_local, tt.max_local);
      const auto c = f.optimize(nodes, replicas_on(t, alloc.gpus) * stages_on(t), lim);
      if (c.goodput > 0) atomic_bsz = static_cast<int>(c.batch.local_batch);
    }
    return;
  }
  const int r = alloc.gpus;
  int max_local = app->max_local_bsz(t, placement);
  if (max_local <= 0) max_local = tt.max_local;
  const double init = app->init_batch_size;
  std::optional<double> batch;
  if (!tunes_batch()) batch = static_cast<double>(target_batch_size);
  const auto fn = goodput_function(t);
  if (!batch && !fn) batch = std::max(init, static_cast<double>(tt.min_local) * r);
  long long atomic = 0, s = 0;
  if (!batch) {
    BatchLimits lim;
    lim.max_batch_size = app->max_batch_size;  // executor optimises up to the largest validated batch (§1.6)
    lim.min_local = tt.min_local;
    lim.max_local = std::max(max_local, tt.min_local);
    lim.tune = true;
    lim.accumulation = true;
    const auto c = goodput_memo ? goodput_memo->optimize(*fn, nodes, r, lim) : fn->optimize(nodes, r, lim);
    if (c.goodput > 0) {
      atomic = c.batch.local_batch;
      s = c.batch.accumulation_steps;
    } else {
      batch = std::max(init, static_cast<double>(tt.min_local) * r);
    }
  }
  if (batch) {
    const BatchSplit split = split_batch(*batch, r, max_local, init);
    atomic = split.local_batch;
    s = split.accumulation_steps;
  }
  const int mem = app->max_local_for_replicas(t, r);
  if (mem > 0) atomic = std::min<long long>(atomic, mem);
  atomic =
      std::min<long long>(atomic, static_cast<long long>(app->max_batch_size / (static_cast<double>(r) * (s + 1))));
  atomic_bsz = static_cast<int>(std::max<long long>(atomic, 1));
  accum_steps = static_cast<int>(s);
}

namespace {
/// A fit's input: the observations in key order.
std::vector<StepObservation> observations_of(const std::map<std::tuple<int, int, int>, StepSync>& obs) {
  std::vector<StepObservation> v;
  v.reserve(obs.size());
  for (const auto& [k, t] : obs) v.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), t.step, t.sync});
  return v;
}
PerfParams fit_profile(const std::map<std::tuple<int, int, int>, StepSync>& obs, const PerfFitter& fitter) {
  return fitter(observations_of(obs));
}
}  // namespace

void SimJob::observe(int nodes, int replicas, int local, const StepSync& s, const PerfFitter& fitter) {
  auto& obs = observed[static_cast<std::size_t>(alloc.type)];
  const auto key = std::make_tuple(nodes, replicas, local);
  if (!obs.try_emplace(key, s).second) return;  // (try_emplace: no node allocated for a key already seen)
  ++fit_generation;
  if (app->pipeline) {  // the pipeline model of this type, fitted on every pipeline placement seen there
    const int stages = stages_on(alloc.type);
    std::vector<PipelineObservation> v;
    for (const auto& [k, t] : obs)
      if (stages > 0 && std::get<1>(k) % stages == 0 && t.step > 0)
        v.push_back(PipelineObservation{std::get<0>(k), std::get<1>(k), std::get<1>(k) / stages,
                                        static_cast<double>(std::get<2>(k)), t.step, std::max(0.0, t.sync)});
    if (!v.empty()) perf[static_cast<std::size_t>(alloc.type)] = fit_pipeline_params(v, stages, app->microbatches).perf;
    return;
  }
  // An unaware job only ever uses its merged model (goodput_function): fit that one, not the type's.
  if (!unaware_model)
    perf[static_cast<std::size_t>(alloc.type)] = fit_profile(obs, fitter);
  else if (merged_observed.try_emplace(key, s).second)
    merged_perf = fit_profile(merged_observed, fitter);
}

bool SimJob::refits_first(double seconds) const {
  if (completed() || alloc.empty() || app->pipeline || !(seconds - std::min(rescale_time, seconds) > 1e-9))
    return false;
  // What step() observes first: the placement and the local batch it holds (observe(): a new key refits).
  const auto key = std::make_tuple(static_cast<int>(placement.size()),
                                   std::accumulate(placement.begin(), placement.end(), 0), atomic_bsz);
  if (observed[static_cast<std::size_t>(alloc.type)].count(key)) return false;
  return !unaware_model || !merged_observed.count(key);
}

void SimJob::step(double now, double seconds, const PerfFitter& fitter) {
  if (completed() || alloc.empty() || seconds <= 0) return;
  const double g = alloc.gpus;
  const double delay = std::min(rescale_time, seconds);
  rescale_time -= delay;
  seconds -= delay;
  now += delay;
  gpu_seconds += delay * g;
  wasted_gpu_seconds += delay * g;
  const int total_epochs = app->num_epochs();
  // Bounded loop: every iteration either consumes the remaining time or finishes one epoch.
  for (int guard = 0; seconds > 1e-9 && !completed() && guard < 100000; ++guard) {
    const int r = alloc.gpus;
    const double batch = static_cast<double>(global_batch());
    const GradParams gs = app->grad_stats(batch, epoch);
    const double gain = sia::gain(gs, batch, app->init_batch_size);  // true progress per step (reference §6.2)
    // A pipeline job on GPUs that hold no whole pipeline (a baseline's allocation) cannot run.
    const bool runs = !app->pipeline || replicas_on(alloc.type, r) > 0;
    const std::vector<int> pipeline_pl = app->pipeline ? pipeline_placement() : std::vector<int>{};
    const std::vector<int>& pl = app->pipeline ? pipeline_pl : placement;
    const StepSync st = runs ? app->step_time(alloc.type, pl, atomic_bsz) : StepSync{};
    if (runs) observe(static_cast<int>(pl.size()), std::accumulate(pl.begin(), pl.end(), 0), atomic_bsz, st, fitter);
    if (!grad || grad->sqr != gs.sqr || grad->var != gs.var) {
      grad = gs;
      ++fit_generation;
    }
    const double iter = !runs           ? 0.0
                        : app->pipeline ? app->pipeline_step_time(alloc.type, pl, atomic_bsz)
                                        : st.step + (st.step - st.sync) * accum_steps;
    const double rate = iter > 0 ? gain / iter / app->constants.slowdown : 0.0;
    if (!(rate > 0) || !std::isfinite(rate)) {  // no progress possible: hold the GPUs for the interval
      gpu_seconds += seconds * g;
      break;
    }
    const double next = app->progress_at(epoch + 1);
    if (progress + rate * seconds < next) {
      progress += rate * seconds;
      gpu_seconds += seconds * g;
      seconds = 0;
    } else {
      const double delta = std::max(0.0, (next - progress) / rate);
      progress = next;
      ++epoch;
      gpu_seconds += delta * g;
      seconds -= delta;
      now += delta;
      if (epoch >= total_epochs) {
        completion_time = now;
        break;
      }
    }
    // The executor re-optimises its batch size after every stretch of progress, not only at epoch
    // boundaries (reference §1.6, `Job.step` calls `update_local_bsz` on every loop iteration): the
    // first observations on a new allocation refit the model, and the next round already runs the
    // batch size that model recommends.
    update_local_bsz();
  }
}

}  // namespace sia::sim
