// TunedJobs: the artifact's rule for tuning a trace job's GPU count and batch size (see tuned_jobs.hpp).
#include <sia/error.hpp>
#include <sia/sim/steps.hpp>
#include <sia/sim/tuned_jobs.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace sia::sim {

namespace {

/// GPUs per node when `replicas` fill nodes of `gpn` in order (the artifact packs the last node partially).
std::vector<int> packed_placement(int replicas, int gpn) {
  std::vector<int> p;
  for (int left = replicas; left > 0; left -= gpn) p.push_back(std::min(left, gpn));
  return p;
}

/// FNV-1a over the seed and two names, finished by SplitMix64: the same pick on every platform.
std::uint64_t pick_hash(std::uint64_t seed, const std::string& a, const std::string& b) {
  std::uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](unsigned char c) {
    h ^= c;
    h *= 1099511628211ULL;
  };
  for (int i = 0; i < 8; ++i) mix(static_cast<unsigned char>(seed >> (8 * i)));
  for (char c : a) mix(static_cast<unsigned char>(c));
  mix(0);
  for (char c : b) mix(static_cast<unsigned char>(c));
  h += 0x9E3779B97F4A7C15ULL;
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
  return h ^ (h >> 31);
}

void check_options(const TunedJobsOptions& o) {
  if (o.max_gpus < 1)
    throw InvalidArgument("tuned jobs: max_gpus must be at least 1, got " + std::to_string(o.max_gpus));
  if (o.gpus_per_node < 0) throw InvalidArgument("tuned jobs: gpus_per_node must not be negative");
  if (!(o.lo_util >= 0 && o.lo_util < o.hi_util && o.hi_util <= 1))
    throw InvalidArgument("tuned jobs: utilisation bounds must satisfy 0 <= lo < hi <= 1");
  if (!(o.max_run_s > 0)) throw InvalidArgument("tuned jobs: max_run_s must be positive");
}

int tuning_type(const SimCluster& cluster, const TunedJobsOptions& o) {
  if (cluster.types.empty()) throw InvalidArgument("tuned jobs: the cluster has no GPU types");
  if (o.gpu_type.empty()) return 0;
  const int t = cluster.type_index(o.gpu_type);
  if (t < 0)
    throw InvalidArgument("tuned jobs: unknown GPU type '" + o.gpu_type + "' in cluster '" + cluster.name + "'");
  return t;
}

}  // namespace

double tuned_run_time(const Application& app, int type, int replicas, int gpn, double batch) {
  const double inf = std::numeric_limits<double>::infinity();
  if (type < 0 || type >= static_cast<int>(app.types.size()) || replicas < 1 || gpn < 1 || !(batch > 0)) return inf;
  const auto& tt = app.types[static_cast<std::size_t>(type)];
  const double local = std::ceil(batch / replicas - 1e-8);
  if (local < std::max(1, tt.min_local)) return inf;
  // The artifact's split (no single-GPU accumulation rule: an infinite threshold).
  const BatchSplit split = split_batch(batch, replicas, std::max(1, tt.max_local), inf);
  const double accum = static_cast<double>(split.accumulation_steps);
  const double atomic = static_cast<double>(split.local_batch);
  const StepSync st = app.step_time(type, packed_placement(replicas, gpn), atomic);
  const double iter = st.step + accum * (st.step - st.sync);
  if (!(iter > 0) || !std::isfinite(iter)) return inf;
  const double steps = total_steps(app, replicas * atomic * (accum + 1));
  return std::isfinite(steps) ? steps * iter : inf;
}

std::vector<TunedConfiguration> tuned_configurations(const Application& app, const SimCluster& cluster, int type,
                                                     const TunedJobsOptions& o) {
  check_options(o);
  if (type < 0 || type >= static_cast<int>(cluster.types.size()) || type >= static_cast<int>(app.types.size()))
    throw InvalidArgument("tuned jobs: GPU type index " + std::to_string(type) + " out of range");
  const int gpn = o.gpus_per_node > 0 ? o.gpus_per_node : cluster.types[static_cast<std::size_t>(type)].gpus_per_node;
  const auto& tt = app.types[static_cast<std::size_t>(type)];
  // Candidate batch sizes: the validated ones (the artifact iterates over its validation files).
  std::vector<double> batches = app.grad.batch_sizes;
  if (batches.empty()) batches.push_back(app.init_batch_size > 0 ? app.init_batch_size : 1.0);
  std::vector<int> counts{1};
  for (int x = 1; x < o.max_gpus / 2; ++x) counts.push_back(2 * x);
  std::vector<TunedConfiguration> out;
  TunedConfiguration base;
  for (int r : counts) {
    if (static_cast<double>(r) * std::max(1, tt.min_local) > app.max_batch_size) break;
    TunedConfiguration best;
    best.replicas = r;
    best.run_s = std::numeric_limits<double>::infinity();
    for (double b : batches) {
      const double run = tuned_run_time(app, type, r, gpn, b);
      if (run < best.run_s) {
        best.run_s = run;
        best.batch_size = static_cast<long long>(std::llround(b));
      }
    }
    if (!std::isfinite(best.run_s)) continue;
    if (r == 1) {
      base = best;
      continue;
    }
    if (!std::isfinite(base.run_s) || base.run_s <= 0) continue;
    const double util = base.run_s / best.run_s / r;
    if (best.run_s < o.max_run_s && util > o.lo_util && util < o.hi_util) out.push_back(best);
  }
  if (out.empty()) {
    if (base.batch_size <= 0) base.batch_size = static_cast<long long>(std::llround(batches.front()));
    out.push_back(base);
  }
  return out;
}

Workload retune_workload(const Workload& workload, const ApplicationSet& apps, const SimCluster& cluster,
                         const TunedJobsOptions& o) {
  check_options(o);
  const int type = tuning_type(cluster, o);
  Workload out = workload;
  std::map<std::string, std::vector<TunedConfiguration>> cache;
  for (auto& j : out.jobs) {
    const auto it = apps.find(j.application);
    if (it == apps.end() || !it->second)
      throw InvalidArgument(workload.source + ":" + std::to_string(j.line) + ": job '" + j.name + "': unknown model '" +
                            j.application + "' (no ground truth to tune it)");
    auto c = cache.find(j.application);
    if (c == cache.end()) c = cache.emplace(j.application, tuned_configurations(*it->second, cluster, type, o)).first;
    const auto& cands = c->second;
    const auto& pick = cands[static_cast<std::size_t>(pick_hash(o.seed, workload.name, j.name) % cands.size())];
    j.num_replicas = pick.replicas;
    j.batch_size = pick.batch_size;
  }
  return out;
}

TunedJobsOptions cluster_tuned_jobs(const SimCluster& cluster) {
  if (cluster.types.empty()) throw InvalidArgument("tuned jobs: the cluster has no GPU types");
  const auto& t = cluster.types.front();
  TunedJobsOptions o;
  o.gpu_type = t.name;
  o.gpus_per_node = t.gpus_per_node;
  const int span = t.max_job_nodes > 0 ? std::min(t.nodes, t.max_job_nodes) : t.nodes;
  o.max_gpus = std::max(1, span * t.gpus_per_node);
  return o;
}

}  // namespace sia::sim
