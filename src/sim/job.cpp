#include <sia/sim/job.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

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

int SimJob::max_profiled_replicas(int t) const noexcept {
  int m = 0;
  for (const auto& [key, v] : observed[static_cast<std::size_t>(t)]) m = std::max(m, std::get<1>(key));
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
  ++fit_generation;
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
  const int t = alloc.type;
  const auto& tt = app->types[static_cast<std::size_t>(t)];
  const int nodes = static_cast<int>(placement.size());
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
    const auto c = fn->optimize(nodes, r, lim);
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
PerfParams fit_profile(const std::map<std::tuple<int, int, int>, StepSync>& obs, const PerfFitter& fitter) {
  std::vector<StepObservation> v;
  v.reserve(obs.size());
  for (const auto& [k, t] : obs) v.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), t.step, t.sync});
  return fitter(v);
}
}  // namespace

void SimJob::observe(int nodes, int replicas, int local, const StepSync& s, const PerfFitter& fitter) {
  auto& obs = observed[static_cast<std::size_t>(alloc.type)];
  const auto key = std::make_tuple(nodes, replicas, local);
  if (!obs.emplace(key, s).second) return;
  ++fit_generation;
  // An unaware job only ever uses its merged model (goodput_function): fit that one, not the type's.
  if (!unaware_model)
    perf[static_cast<std::size_t>(alloc.type)] = fit_profile(obs, fitter);
  else if (merged_observed.emplace(key, s).second)
    merged_perf = fit_profile(merged_observed, fitter);
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
  const int nodes = static_cast<int>(placement.size());
  const int total_epochs = app->num_epochs();
  // Bounded loop: every iteration either consumes the remaining time or finishes one epoch.
  for (int guard = 0; seconds > 1e-9 && !completed() && guard < 100000; ++guard) {
    const int r = alloc.gpus;
    const double batch = static_cast<double>(r) * atomic_bsz * (accum_steps + 1);
    const GradParams gs = app->grad_stats(batch, epoch);
    const double gain = sia::gain(gs, batch, app->init_batch_size);  // true progress per step (reference §6.2)
    const StepSync st = app->step_time(alloc.type, placement, atomic_bsz);
    observe(nodes, r, atomic_bsz, st, fitter);
    if (!grad || grad->sqr != gs.sqr || grad->var != gs.var) {
      grad = gs;
      ++fit_generation;
    }
    const double iter = st.step + (st.step - st.sync) * accum_steps;
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
