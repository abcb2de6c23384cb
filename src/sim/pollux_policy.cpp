// Heterogeneity-unaware Pollux (reference §6.6): Pollux's NSGA-II search (pollux_genetic.cpp) or a greedy one.
#include <sia/error.hpp>
#include <sia/goodput/goodput_function.hpp>
#include <sia/sim/limits.hpp>
#include <sia/sim/pollux_policy.hpp>

#include "sim/pollux_genetic.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

namespace sia::sim {

double pollux_restart_factor(double age_s, int restarts, double penalty_s) noexcept {
  if (!(age_s >= 0) || !std::isfinite(age_s)) age_s = 0;
  const double den = age_s + penalty_s;
  if (!(den > 0)) return 1.0;
  return std::max(age_s - penalty_s * restarts, 0.0) / den;
}

double pollux_fitness(const std::vector<double>& s, double p) noexcept {
  if (s.empty()) return 0.0;
  double sum = 0.0;
  for (double v : s) sum += std::pow(std::max(v, 0.0) + 1e-3, p);
  if (p == 0) return 0.0;
  return std::pow(sum / static_cast<double>(s.size()), 1.0 / p);
}

std::vector<PolluxVnode> pollux_vnodes(const SimCluster& cluster, int vg) {
  std::vector<PolluxVnode> out;
  for (std::size_t t = 0; t < cluster.types.size(); ++t) {
    const auto& ty = cluster.types[t];
    const bool split = vg > 0 && ty.gpus_per_node > vg && ty.gpus_per_node % vg == 0;
    for (int n = 0; n < ty.nodes; ++n) {
      if (split)
        for (int v = 0; v < ty.gpus_per_node / vg; ++v) out.push_back({static_cast<int>(t), n, vg});
      else
        out.push_back({static_cast<int>(t), n, ty.gpus_per_node});
    }
  }
  return out;
}

namespace {
int type_rank(const SimCluster& cluster, int t, const std::vector<std::string>& priority) {
  const auto& name = cluster.types[static_cast<std::size_t>(t)].name;
  const auto it = std::find(priority.begin(), priority.end(), name);
  return it == priority.end() ? static_cast<int>(priority.size()) + t : static_cast<int>(it - priority.begin());
}
}  // namespace

SimAllocation pollux_fix_mixed(const SimCluster& cluster, const std::vector<PolluxVnode>& vnodes,
                               const std::vector<int>& g, const std::vector<std::string>& priority) {
  if (g.size() != vnodes.size()) throw InvalidArgument("pollux_fix_mixed: one GPU count per virtual node expected");
  std::vector<int> per_type(cluster.types.size(), 0);
  for (std::size_t v = 0; v < g.size(); ++v)
    if (g[v] > 0) per_type[static_cast<std::size_t>(vnodes[v].type)] += g[v];
  int best = -1;
  for (int t = 0; t < static_cast<int>(per_type.size()); ++t) {
    if (per_type[static_cast<std::size_t>(t)] <= 0) continue;
    if (best < 0 || per_type[static_cast<std::size_t>(t)] > per_type[static_cast<std::size_t>(best)] ||
        (per_type[static_cast<std::size_t>(t)] == per_type[static_cast<std::size_t>(best)] &&
         type_rank(cluster, t, priority) < type_rank(cluster, best, priority)))
      best = t;
  }
  if (best < 0) return {};
  std::set<int> nodes;
  for (std::size_t v = 0; v < g.size(); ++v)
    if (g[v] > 0 && vnodes[v].type == best) nodes.insert(vnodes[v].node);
  return SimAllocation{best, static_cast<int>(nodes.size()), per_type[static_cast<std::size_t>(best)]};
}

PolluxPolicy::PolluxPolicy(PolluxPolicyOptions options) : options_(std::move(options)), rng_(options_.seed) {
  if (!(options_.interval_s > 0)) throw InvalidArgument("pollux: interval_s must be positive");
  if (!(options_.p < 0)) throw InvalidArgument("pollux: p must be negative (the search relies on it)");
  if (options_.vnode_gpus < 1) throw InvalidArgument("pollux: vnode_gpus must be at least 1");
  if (options_.population < 1) throw InvalidArgument("pollux: population must be at least 1");
  if (options_.generations < 1) throw InvalidArgument("pollux: generations must be at least 1");
}

std::vector<SimAllocation> PolluxPolicy::allocate(const PolicyContext& ctx) {
  const SimCluster& cluster = *ctx.cluster;
  const auto vn = pollux_vnodes(cluster, options_.vnode_gpus);
  const int V = static_cast<int>(vn.size());
  int G = 0;
  for (const auto& v : vn) G += v.gpus;
  const std::size_t nj = ctx.jobs.size();
  std::vector<SimAllocation> out(nj);
  if (nj == 0 || G <= 0) return out;
  // Pollux scales data-parallel jobs only: a pipeline (hybrid) job runs as a rigid job of the workload's GPU
  // count, and is dropped this round when the paper's mixed-type fix leaves it on a type where that count is not
  // whole pipelines (or the model has no profiles).
  bool any_pipeline = false;
  for (SimJob* job : ctx.jobs)
    if (job->app->pipeline) {
      job->kind = JobKind::rigid;
      any_pipeline = true;
    }
  // Virtual nodes a job may use: a pipeline job only the types its model has pipelines on.
  const auto usable_v = [&](std::size_t j, int v) {
    const SimJob& job = *ctx.jobs[j];
    return !job.app->pipeline || job.app->usable(vn[static_cast<std::size_t>(v)].type);
  };
  const int vg = options_.vnode_gpus;
  int min_type_gpus = std::numeric_limits<int>::max();
  for (int t = 0; t < static_cast<int>(cluster.types.size()); ++t)
    if (cluster.type_gpus(t) > 0) min_type_gpus = std::min(min_type_gpus, cluster.type_gpus(t));
  int limit_type = cluster.type_index("aws");
  if (limit_type < 0) limit_type = 0;
  const PerfFitter fitter = default_perf_fitter();
  const double eps = 1e-3;
  const double p = options_.p;
  const double scale_factor = static_cast<double>(V) / static_cast<double>(G);  // reference: (1/64)·16
  const int fair_r = (G + static_cast<int>(nj) - 1) / static_cast<int>(nj);

  // Per job: model, limits and speedups; the greedy search also gets value tables f[r] = (s(r) + eps)^p.
  const bool greedy = options_.search == PolluxSearch::greedy;
  struct RoundJob {
    std::optional<GoodputFunction> fn;
    BatchLimits lim;
    double base = 0.0;       // goodput of the fair share
    double rf = 1.0;         // re-allocation factor
    JobState* st = nullptr;  // node of `next`, moved into jobs_ by swap (stays valid)
  };
  std::vector<RoundJob> rj(nj);
  std::vector<std::vector<double>> value(nj), scaled(nj);
  std::vector<int> current(nj, 0), maxr(nj, 1);
  std::map<std::uint64_t, JobState> next;
  auto goodput = [&](std::size_t j, int nodes, int r) {
    JobState& st = *rj[j].st;
    const auto key = std::make_pair(nodes, r);
    if (auto it = st.goodput_cache.find(key); it != st.goodput_cache.end()) return it->second;
    double g = rj[j].fn->optimize(nodes, r, rj[j].lim).goodput;
    if (!std::isfinite(g) || g < 0) g = 0;
    st.goodput_cache.emplace(key, g);
    return g;
  };
  // Raw speedup of r GPUs on `nodes` vnodes: goodput over the fair-share goodput; before the job has a model,
  // r / fair share (Pollux replaces the speedup of a job without a goodput function by r / fair replicas).
  auto raw_speedup = [&](std::size_t j, int nodes, int r) {
    if (r <= 0 || (ctx.jobs[j]->kind == JobKind::rigid && r != maxr[j])) return 0.0;
    return (rj[j].fn && rj[j].base > 0) ? goodput(j, std::max(nodes, 1), r) / rj[j].base
                                        : static_cast<double>(r) / fair_r;
  };
  // Scaled speedup (the fitness's), before the re-allocation factor.
  auto speedup = [&](std::size_t j, int nodes, int r) { return raw_speedup(j, nodes, r) * scale_factor; };
  for (std::size_t j = 0; j < nj; ++j) {
    SimJob& job = *ctx.jobs[j];
    JobState& st = next[job.uid];
    if (auto it = jobs_.find(job.uid); it != jobs_.end()) st = std::move(it->second);
    rj[j].st = &st;
    int max_profiled = 0;
    if (job.unaware_model) {
      // The job keeps the merged profile itself (the first observation in time of a key wins) and its
      // fit, which its executor uses too (SimJob::unaware_model): the policy sees the same model.
      for (const auto& [key, s] : job.merged_observed) max_profiled = std::max(max_profiled, std::get<1>(key));
      if (job.merged_perf && static_cast<int>(job.merged_observed.size()) != st.perf_keys) {
        st.perf = job.merged_perf;
        st.perf_keys = static_cast<int>(job.merged_observed.size());
        st.goodput_cache.clear();
      }
    } else {
      // Jobs simulated with per-type models: merge their observations of every type here (a key's
      // observation on the first type in cluster order wins).
      for (const auto& by_type : job.observed)
        for (const auto& [key, s] : by_type) st.merged.emplace(key, std::make_pair(s.step, s.sync));
      for (const auto& [key, s] : st.merged) max_profiled = std::max(max_profiled, std::get<1>(key));
    }
    if (!job.unaware_model && !st.merged.empty() && static_cast<int>(st.merged.size()) != st.perf_keys) {
      std::vector<StepObservation> obs;
      for (const auto& [key, s] : st.merged)
        obs.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), s.first, s.second});
      st.perf = fitter(obs);
      st.perf_keys = static_cast<int>(st.merged.size());
      st.goodput_cache.clear();
    }
    if (job.grad && (job.grad->sqr != st.cache_grad_sqr || job.grad->var != st.cache_grad_var)) {
      st.goodput_cache.clear();
      st.cache_grad_sqr = job.grad->sqr;
      st.cache_grad_var = job.grad->var;
    }
    const auto& tt = job.app->types[static_cast<std::size_t>(limit_type)];
    BatchLimits& lim = rj[j].lim;
    lim.max_batch_size = job.app->max_batch_size;
    lim.min_local = tt.min_local;
    lim.max_local = tt.max_local;
    lim.tune = job.tunes_batch();
    lim.accumulation = true;
    if (!job.tunes_batch()) lim.max_batch_size = static_cast<double>(std::max<long long>(job.target_batch_size, 1));
    int mr = std::min({std::max(2 * max_profiled, 1), min_type_gpus, G});
    if (tt.min_local > 0) mr = std::min(mr, std::max(1, static_cast<int>(job.app->max_batch_size / tt.min_local)));
    if (job.app->name == "ncf") mr = 1;
    if (job.kind == JobKind::rigid)
      mr = std::min(std::max(1, job.target_replicas), G);
    else if (job.kind == JobKind::strong_scaling)
      mr = std::max(1, std::min(mr, job.target_replicas));
    maxr[j] = std::max(1, mr);
    for (int v : st.vnodes) current[j] += v;
    if (job.alloc.empty()) current[j] = 0;

    if (st.perf && job.grad) rj[j].fn = GoodputFunction{*st.perf, job.grad, job.app->init_batch_size};
    if (rj[j].fn) {
      rj[j].base = goodput(j, 1, fair_r);
      if (!(rj[j].base > 0)) rj[j].base = goodput(j, 1, 1);
    }
    rj[j].rf = pollux_restart_factor(ctx.now - job.submission_time, job.num_restarts, options_.restart_penalty_s);
    if (!greedy) continue;
    value[j].assign(static_cast<std::size_t>(maxr[j]) + 1, 0.0);
    scaled[j].assign(static_cast<std::size_t>(maxr[j]) + 1, 0.0);
    for (int r = 0; r <= maxr[j]; ++r) {
      double s = speedup(j, (r + vg - 1) / vg, r);
      if (r > 0 && r != current[j]) s *= rj[j].rf;
      scaled[j][static_cast<std::size_t>(r)] = s;
      value[j][static_cast<std::size_t>(r)] = std::pow(s + eps, p);
    }
  }
  jobs_.swap(next);  // swap keeps rj[j].st valid

  std::vector<int> count(nj, 0);
  std::vector<std::vector<int>> place(nj, std::vector<int>(static_cast<std::size_t>(V), 0));
  std::vector<char> placed(nj, 0);
  if (!greedy) {
    // Pollux's NSGA-II. Jobs in Pollux's order: by attained service (GPU-seconds held, restores included, as
    // the reference's Job.attained_service), then by creation time; vnodes in cluster order.
    std::vector<std::size_t> order(nj);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const SimJob& x = *ctx.jobs[a];
      const SimJob& y = *ctx.jobs[b];
      if (x.gpu_seconds != y.gpu_seconds) return x.gpu_seconds < y.gpu_seconds;
      return x.submission_time != y.submission_time ? x.submission_time < y.submission_time : x.uid < y.uid;
    });
    const auto Vs = static_cast<std::size_t>(V);
    detail::PolluxGaProblem prob;
    for (const auto& v : vn) prob.vnode_gpus.push_back(v.gpus);
    prob.base.assign(nj * Vs, 0);
    std::vector<std::uint64_t> uids(nj);
    for (std::size_t k = 0; k < nj; ++k) {
      const std::size_t j = order[k];
      uids[k] = ctx.jobs[j]->uid;
      prob.max_replicas.push_back(maxr[j]);
      prob.rigid.push_back(ctx.jobs[j]->kind == JobKind::rigid ? 1 : 0);
      if (any_pipeline) {
        prob.allowed.resize((k + 1) * Vs, 1);
        for (int v = 0; v < V; ++v) prob.allowed[k * Vs + static_cast<std::size_t>(v)] = usable_v(j, v) ? 1 : 0;
      }
      prob.restart_factor.push_back(rj[j].rf);
      const auto& prev = rj[j].st->vnodes;
      if (!ctx.jobs[j]->alloc.empty() && prev.size() == Vs)
        std::copy(prev.begin(), prev.end(), prob.base.begin() + static_cast<std::ptrdiff_t>(k * Vs));
    }
    prob.p = p;
    prob.speedup_scale = scale_factor;
    prob.speedup = [&](int k, int nodes, int r) { return raw_speedup(order[static_cast<std::size_t>(k)], nodes, r); };
    // Seeds: the first round starts from the current allocation; later rounds from the previous round's
    // optimum set (its final front, pymoo's result.X) adapted to this round's jobs (Pollux does not add the
    // current allocation then).
    std::vector<detail::PolluxState> seeds;
    if (population_vnodes_ == V && !population_.empty()) {
      std::map<std::uint64_t, std::size_t> prev_row;
      for (std::size_t i = 0; i < population_uids_.size(); ++i) prev_row.emplace(population_uids_[i], i);
      std::vector<std::ptrdiff_t> from(nj, -1);
      for (std::size_t k = 0; k < nj; ++k)
        if (auto it = prev_row.find(uids[k]); it != prev_row.end()) from[k] = static_cast<std::ptrdiff_t>(it->second);
      for (const auto& old : population_) {
        if (old.size() != population_uids_.size() * Vs) continue;
        detail::PolluxState x(nj * Vs, 0);
        for (std::size_t k = 0; k < nj; ++k)
          if (from[k] >= 0)
            std::copy_n(old.begin() + from[k] * static_cast<std::ptrdiff_t>(Vs), Vs,
                        x.begin() + static_cast<std::ptrdiff_t>(k * Vs));
        seeds.push_back(std::move(x));
      }
    }
    if (seeds.empty()) seeds.push_back(prob.base);
    detail::PolluxGaOptions go;
    go.population = options_.population;
    go.generations = options_.generations;
    detail::PolluxGenetic ga(std::move(prob), go, rng_);
    auto res = ga.run(seeds);
    for (std::size_t k = 0; k < nj; ++k) {
      const std::size_t j = order[k];
      std::copy_n(res.best.begin() + static_cast<std::ptrdiff_t>(k * Vs), Vs, place[j].begin());
      count[j] = std::accumulate(place[j].begin(), place[j].end(), 0);
      placed[j] = count[j] > 0;
    }
    population_ = std::move(res.front);
    population_uids_ = std::move(uids);
    population_vnodes_ = V;
    last_fitness_ = -res.best_objectives.neg_fitness;
  }

  // Greedy marginal allocation of the GPU counts (minimises Σ (s+eps)^p, i.e. maximises the power mean).
  int left = greedy ? G : 0;
  while (left > 0) {
    double best_gain = 0.0;
    std::size_t bj = nj;
    int br = 0;
    for (std::size_t j = 0; j < nj; ++j) {
      const int r0 = count[j];
      const double f0 = value[j][static_cast<std::size_t>(r0)];
      for (int r = r0 + 1; r <= std::min(maxr[j], r0 + left); ++r) {
        const double gain = (f0 - value[j][static_cast<std::size_t>(r)]) / (r - r0);
        if (gain > best_gain * (1 + 1e-12) + 1e-15) {
          best_gain = gain;
          bj = j;
          br = r;
        }
      }
    }
    if (bj == nj) break;
    left -= br - count[bj];
    count[bj] = br;
  }

  // Pack the counts into virtual nodes.
  std::vector<int> free_v(static_cast<std::size_t>(V));
  for (int v = 0; v < V; ++v) free_v[static_cast<std::size_t>(v)] = vn[static_cast<std::size_t>(v)].gpus;
  std::vector<char> distributed_on(static_cast<std::size_t>(V), 0);
  // (1) unchanged counts keep their previous vnodes when those are free.
  for (std::size_t j = 0; greedy && j < nj; ++j) {
    auto& st = jobs_.at(ctx.jobs[j]->uid);
    if (count[j] == 0 || count[j] != current[j] || st.vnodes.size() != static_cast<std::size_t>(V)) continue;
    bool ok = true;
    int used = 0;
    for (int v = 0; v < V && ok; ++v) {
      const int g = st.vnodes[static_cast<std::size_t>(v)];
      if (g > 0) ++used;
      ok = g <= free_v[static_cast<std::size_t>(v)];
    }
    if (!ok) continue;
    for (int v = 0; v < V; ++v) {
      const int g = st.vnodes[static_cast<std::size_t>(v)];
      free_v[static_cast<std::size_t>(v)] -= g;
      if (g > 0 && used > 1) distributed_on[static_cast<std::size_t>(v)] = 1;
    }
    place[j] = st.vnodes;
    placed[j] = 1;
  }
  // (2) the rest, largest first: distributed jobs on whole free vnodes, single-vnode jobs by best fit.
  std::vector<std::size_t> order(nj);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return count[a] > count[b]; });
  for (std::size_t j : order) {
    if (!greedy || placed[j]) continue;
    for (int r = count[j]; r > 0; --r) {
      if (ctx.jobs[j]->kind == JobKind::rigid && r != maxr[j]) break;
      auto& pl = place[j];
      std::fill(pl.begin(), pl.end(), 0);
      int best = -1;
      for (int v = 0; v < V; ++v) {  // best fit on one vnode
        if (!usable_v(j, v)) continue;
        const int f = free_v[static_cast<std::size_t>(v)];
        if (f >= r && (best < 0 || f < free_v[static_cast<std::size_t>(best)])) best = v;
      }
      if (best >= 0) {
        pl[static_cast<std::size_t>(best)] = r;
        free_v[static_cast<std::size_t>(best)] -= r;
        count[j] = r;
        placed[j] = 1;
        break;
      }
      // Distributed: whole free vnodes first, then partial ones without another distributed job.
      int need = r;
      std::vector<int> take(static_cast<std::size_t>(V), 0);
      for (int pass = 0; pass < 2 && need > 0; ++pass)
        for (int v = 0; v < V && need > 0; ++v) {
          const int f = free_v[static_cast<std::size_t>(v)] - take[static_cast<std::size_t>(v)];
          const bool whole = f == vn[static_cast<std::size_t>(v)].gpus;
          if (!usable_v(j, v)) continue;
          if (f <= 0 || (pass == 0 && !whole) || (pass == 1 && distributed_on[static_cast<std::size_t>(v)])) continue;
          const int t = std::min(f, need);
          take[static_cast<std::size_t>(v)] += t;
          need -= t;
        }
      if (need > 0) continue;  // does not fit: shrink
      for (int v = 0; v < V; ++v)
        if (take[static_cast<std::size_t>(v)] > 0) {
          free_v[static_cast<std::size_t>(v)] -= take[static_cast<std::size_t>(v)];
          distributed_on[static_cast<std::size_t>(v)] = 1;
        }
      pl = take;
      count[j] = r;
      placed[j] = 1;
      break;
    }
    if (!placed[j]) count[j] = 0;
  }

  std::vector<double> chosen(nj, 0.0);
  for (std::size_t j = 0; j < nj; ++j) {
    if (greedy) chosen[j] = scaled[j][static_cast<std::size_t>(std::min(count[j], maxr[j]))];
    auto& st = jobs_.at(ctx.jobs[j]->uid);
    if (!placed[j] || count[j] == 0) {
      st.vnodes.clear();
      continue;
    }
    out[j] = pollux_fix_mixed(cluster, vn, place[j], options_.type_priority);
    if (!out[j].empty() && ctx.jobs[j]->app->pipeline && !ctx.jobs[j]->app->usable(out[j].type, out[j].gpus))
      out[j] = SimAllocation{};
    // Remember only the GPUs the job really got (the dropped types stay idle this round).
    st.vnodes = place[j];
    for (int v = 0; v < V; ++v)
      if (vn[static_cast<std::size_t>(v)].type != out[j].type) st.vnodes[static_cast<std::size_t>(v)] = 0;
  }
  if (greedy) last_fitness_ = pollux_fitness(chosen, p);
  return out;
}

namespace detail {
PolicyInfo builtin_policy_pollux() {
  PolicyInfo info;
  info.name = "pollux";
  info.description = "heterogeneity-unaware Pollux (OSDI 2021): one merged model per job, NSGA-II search";
  info.options = {
      {"search", "genetic", "genetic (Pollux's published NSGA-II) or greedy (marginal allocation)"},
      {"seed", "1", "genetic: seed of the policy's random generator"},
      {"population", "100", "genetic: NSGA-II population size"},
      {"generations", "100", "genetic: NSGA-II generations"},
      {"p", "-1", "power-mean exponent of the fitness (< 0)"},
      {"restart_penalty_s", "30", "re-allocation factor constant (s)"},
      {"vnode_gpus", "4", "GPUs of a virtual node"},
      {"interval_s", "60", interval_option_help()},
  };
  info.make = [](const PolicyOptions& o) {
    PolluxPolicyOptions po;
    po.search =
        o.choice("search", "genetic", {"genetic", "greedy"}) == "greedy" ? PolluxSearch::greedy : PolluxSearch::genetic;
    po.seed = static_cast<std::uint64_t>(o.integer("seed", 1, 0, std::numeric_limits<long long>::max()));
    po.population = static_cast<int>(o.integer("population", po.population, 1, 100000));
    po.generations = static_cast<int>(o.integer("generations", po.generations, 1, 100000));
    po.p = o.number("p", po.p, -1e3, -1e-12);
    po.restart_penalty_s = o.number("restart_penalty_s", po.restart_penalty_s, 0.0, 1e9);
    po.vnode_gpus = static_cast<int>(o.integer("vnode_gpus", po.vnode_gpus, 1, 1 << 20));
    po.interval_s = o.number("interval_s", po.interval_s, kMinIntervalS, kMaxIntervalS);
    return std::unique_ptr<Policy>(std::make_unique<PolluxPolicy>(po));
  };
  return info;
}
}  // namespace detail

}  // namespace sia::sim
