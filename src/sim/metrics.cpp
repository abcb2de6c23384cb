#include <sia/goodput/goodput_function.hpp>
#include <sia/sim/metrics.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

namespace sia::sim {

double percentile_index(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto i = std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())));
  return v[i];
}

namespace {

/// Seconds to train `app` alone on k GPUs of type t (see compute_ftf): every epoch at the batch size
/// with the best true progress rate (the library's batch-size choice over 24 candidates, with the
/// ground truth's step times and gradient statistics of that epoch), plus one restore delay.
double isolated_time(const Application& app, const SimCluster& cluster, int t, int k, double target_batch, bool tune) {
  const auto& type = cluster.types[static_cast<std::size_t>(t)];
  const auto& tt = app.types[static_cast<std::size_t>(t)];
  const int nodes = (k + type.gpus_per_node - 1) / type.gpus_per_node;
  const auto placement = placement_of(nodes, k);
  if (app.pipeline) {  // whole pipelines of the type's size, the best micro-batch each epoch
    const int d = tt.stages > 0 ? k / tt.stages : 0;
    if (!app.usable(t) || d < 1) return std::numeric_limits<double>::infinity();
    const auto pl = placement_of((d * tt.stages + type.gpus_per_node - 1) / type.gpus_per_node, d * tt.stages);
    double total = app.constants.rescale_time_s;
    for (int e = 0; e < app.num_epochs(); ++e) {
      double best = 0.0;
      for (int mb = std::max(1, tt.min_local); mb <= std::max(1, tt.max_local); ++mb) {
        const double batch = static_cast<double>(d) * mb * app.microbatches;
        if (batch > std::max(target_batch, app.init_batch_size) * (1 + 1e-12)) break;
        const double step = app.pipeline_step_time(t, pl, mb);
        if (step > 0) best = std::max(best, sia::gain(app.grad_stats(batch, e), batch, app.init_batch_size) / step);
      }
      const double rate = best / app.constants.slowdown;
      if (!(rate > 0) || !std::isfinite(rate)) return std::numeric_limits<double>::infinity();
      total += (app.progress_at(e + 1) - app.progress_at(e)) / rate;
    }
    return total;
  }
  int max_local = app.max_local_bsz(t, placement);
  if (max_local <= 0) max_local = tt.max_local;
  BatchLimits lim;
  lim.min_local = std::max(1, tt.min_local);
  lim.max_local = std::max(max_local, 0);
  lim.tune = tune;
  lim.max_batch_size =
      tune ? std::max(std::max(app.init_batch_size, static_cast<double>(lim.min_local) * k), target_batch)
           : target_batch;
  lim.candidates = 24;
  std::map<std::pair<double, int>, double> iter_time;  // ground-truth step time per split, shared by the epochs
  auto step = [&](double atomic, int s) {
    const auto key = std::make_pair(atomic, s);
    if (const auto it = iter_time.find(key); it != iter_time.end()) return it->second;
    const auto st = app.step_time(t, placement, atomic);
    const double iter = st.step + (st.step - st.sync) * static_cast<double>(s);
    iter_time.emplace(key, iter);
    return iter;
  };
  double total = app.constants.rescale_time_s;
  for (int e = 0; e < app.num_epochs(); ++e) {
    // goodput = batch / iter * gain * init / batch: the progress rate times the initial batch.
    const auto efficiency = [&](double batch) {
      return sia::efficiency(app.grad_stats(batch, e), batch, app.init_batch_size);
    };
    const GoodputChoice best = optimize_batch(k, app.init_batch_size, lim, step, efficiency);
    const double rate = best.goodput / app.init_batch_size / app.constants.slowdown;
    if (!(rate > 0) || !std::isfinite(rate)) return std::numeric_limits<double>::infinity();
    total += (app.progress_at(e + 1) - app.progress_at(e)) / rate;
  }
  return total;
}

}  // namespace

void compute_ftf(const SimCluster& cluster, const ApplicationSet& apps, const Workload& workload, SimResult& result) {
  std::map<std::tuple<std::string, int, int, long long, bool>, double> cache;
  const double total = cluster.total_gpus();
  for (std::size_t i = 0; i < result.jobs.size() && i < workload.jobs.size(); ++i) {
    auto& r = result.jobs[i];
    const auto& w = workload.jobs[i];
    r.ftf = 0.0;
    if (!r.completion_time) continue;
    const auto& app = *apps.at(w.application);
    const bool tune = w.category == JobKind::adaptive;
    const double n_avg = std::max(1.0, r.contention_avg);
    double rho = 0.0;
    for (int t = 0; t < static_cast<int>(cluster.types.size()); ++t) {
      const double ng = cluster.type_gpus(t);
      if (ng <= 0) continue;
      const double share = std::min(ng / n_avg, 64.0);
      auto time_k = [&](int k) {
        if (k <= 0) return std::numeric_limits<double>::infinity();
        const auto key = std::make_tuple(w.application, t, k, w.batch_size, tune);
        const auto it = cache.find(key);
        if (it != cache.end()) return it->second;
        const double v = isolated_time(app, cluster, t, k, static_cast<double>(w.batch_size), tune);
        cache.emplace(key, v);
        return v;
      };
      const int k = static_cast<int>(std::floor(share));
      const double a = share - k;
      const double rate = (1 - a) / time_k(k) + (a > 1e-12 ? a / time_k(k + 1) : 0.0);
      if (!(rate > 0) || !std::isfinite(rate)) continue;
      rho += ng / total * r.jct() * rate;
    }
    r.ftf = rho;
  }
}

RunMetrics aggregate_metrics(const std::vector<const SimResult*>& runs) {
  RunMetrics m;
  if (runs.empty()) return m;
  m.policy = runs.front()->policy;
  m.workload = runs.size() == 1 ? runs.front()->workload : std::to_string(runs.size()) + " workloads";
  std::vector<double> jcts, per_wl_mean, makespans, gpu_h_per_wl, ftf, pms;
  double gpu_h = 0, restarts = 0, contention_sum = 0;
  int unfair = 0, ftf_n = 0;
  for (const auto* r : runs) {
    double wl_sum = 0, wl_gpu = 0;
    int wl_n = 0;
    double first_sub = std::numeric_limits<double>::infinity(), last_end = 0;
    for (const auto& j : r->jobs) {
      ++m.jobs;
      gpu_h += j.gpu_hours;
      wl_gpu += j.gpu_hours;
      restarts += j.restarts;
      first_sub = std::min(first_sub, j.submission_time);
      if (!j.completion_time) continue;
      ++m.completed;
      jcts.push_back(j.jct());
      wl_sum += j.jct();
      ++wl_n;
      last_end = std::max(last_end, *j.completion_time);
      if (j.ftf > 0) {
        ++ftf_n;
        if (j.ftf > 1.0) ++unfair;
        m.ftf_worst = std::max(m.ftf_worst, j.ftf);
      }
    }
    if (wl_n > 0) per_wl_mean.push_back(wl_sum / wl_n);
    if (!r->jobs.empty()) gpu_h_per_wl.push_back(wl_gpu / static_cast<double>(r->jobs.size()));
    makespans.push_back(std::isfinite(first_sub) && last_end > first_sub ? last_end - first_sub : 0.0);
    double c = 0;
    for (const auto& l : r->rounds) {
      c += l.active;
      m.contention_max = std::max(m.contention_max, l.active);
    }
    contention_sum += r->rounds.empty() ? 0.0 : c / static_cast<double>(r->rounds.size());
    pms.insert(pms.end(), r->policy_ms.begin(), r->policy_ms.end());
    m.wall_s += r->wall_s;
  }
  auto mean = [](const std::vector<double>& v) {
    return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  };
  auto stdev = [&](const std::vector<double>& v) {
    if (v.size() < 2) return 0.0;
    const double mu = mean(v);
    double s = 0;
    for (double x : v) s += (x - mu) * (x - mu);
    return std::sqrt(s / static_cast<double>(v.size()));  // numpy's default (population) std
  };
  m.avg_jct_h = mean(jcts) / 3600.0;
  m.avg_jct_std_h = stdev(per_wl_mean) / 3600.0;
  m.p99_jct_h = percentile_index(jcts, 0.99) / 3600.0;
  m.makespan_h = mean(makespans) / 3600.0;
  m.makespan_std_h = stdev(makespans) / 3600.0;
  m.gpu_hours_per_job = m.jobs ? gpu_h / m.jobs : 0.0;
  m.gpu_hours_std = stdev(gpu_h_per_wl);
  m.restarts_per_job = m.jobs ? restarts / m.jobs : 0.0;
  m.contention_mean = contention_sum / static_cast<double>(runs.size());
  m.unfair_fraction = ftf_n ? static_cast<double>(unfair) / ftf_n : 0.0;
  m.policy_ms_median = percentile_index(pms, 0.5);
  m.policy_ms_p95 = percentile_index(pms, 0.95);
  m.rounds = static_cast<int>(pms.size());
  return m;
}

RunMetrics compute_metrics(const SimResult& r) { return aggregate_metrics({&r}); }

}  // namespace sia::sim
