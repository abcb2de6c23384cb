// The round's problem from validated input (product.md §2 steps 1-3 and 5-6).
#include "core/problem.hpp"

#include <sia/error.hpp>
#include <sia/goodput_matrix.hpp>
#include <sia/lost_allocations.hpp>
#include <sia/valid_configs.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_set>

#include "core/input_checks.hpp"

namespace sia::detail {
namespace {

JobLimits limits_of(const JobSpec& j) {
  return JobLimits{j.min_gpus(),       j.max_gpus(),          j.kind(), j.pipeline_size(), j.max_gpus_ever(),
                   j.pipeline_sizes(), j.max_pipelines_ever()};
}

// Tenants: names unique and non-empty, caps and guarantees non-negative, per-type caps indexed by
// the cluster's types, and guarantees that the cluster's GPUs (all nodes up, nothing reserved) can
// hold together.
void check_tenants(const std::vector<TenantSpec>& tenants, const ClusterSpec& cluster) {
  std::unordered_set<std::string_view> names;
  long long guaranteed = 0, total = 0;
  for (const auto& t : cluster.types) total += static_cast<long long>(t.num_nodes()) * t.gpus_per_node();
  for (std::size_t k = 0; k < tenants.size(); ++k) {
    const TenantSpec& t = tenants[k];
    const std::string label =
        "RoundOptions.tenants[" + std::to_string(k) + "]" + (t.name.empty() ? std::string() : " ('" + t.name + "')");
    if (t.name.empty()) throw InvalidArgument(label + ": empty name");
    if (!names.insert(t.name).second) throw InvalidArgument(label + ": duplicate tenant name");
    if (t.max_gpus && *t.max_gpus < 0)
      throw InvalidArgument(label + ": max_gpus must be >= 0 (got " + std::to_string(*t.max_gpus) + ")");
    if (t.guaranteed_gpus < 0)
      throw InvalidArgument(label + ": guaranteed_gpus must be >= 0 (got " + std::to_string(t.guaranteed_gpus) + ")");
    if (t.max_gpus && t.guaranteed_gpus > *t.max_gpus)
      throw InvalidArgument(label + ": guaranteed_gpus (" + std::to_string(t.guaranteed_gpus) + ") exceeds max_gpus (" +
                            std::to_string(*t.max_gpus) + ")");
    if (!t.max_gpus_per_type.empty() && static_cast<int>(t.max_gpus_per_type.size()) != cluster.num_types())
      throw InvalidArgument(label + ": max_gpus_per_type has " + std::to_string(t.max_gpus_per_type.size()) +
                            " entries for " + std::to_string(cluster.num_types()) + " GPU types (-1 = no cap)");
    for (std::size_t ty = 0; ty < t.max_gpus_per_type.size(); ++ty)
      if (t.max_gpus_per_type[ty] < -1)
        throw InvalidArgument(label + ": max_gpus_per_type[" + std::to_string(ty) + "] ('" + cluster.types[ty].name() +
                              "') must be >= 0, or -1 for no cap (got " + std::to_string(t.max_gpus_per_type[ty]) +
                              ")");
    guaranteed += t.guaranteed_gpus;
  }
  if (guaranteed > total)
    throw InvalidArgument("RoundOptions.tenants: guaranteed_gpus sum to " + std::to_string(guaranteed) +
                          ", more than the cluster's " + std::to_string(total) + " GPUs");
}

int tenant_of(const std::vector<TenantSpec>& tenants, const JobSpec& j, std::size_t i) {
  for (std::size_t k = 0; k < tenants.size(); ++k)
    if (tenants[k].name == j.tenant()) return static_cast<int>(k);
  std::string known;
  for (const auto& t : tenants) known += (known.empty() ? "'" : ", '") + t.name + "'";
  std::string reason =
      "unknown tenant '" + j.tenant() + "' (tenants: " + (known.empty() ? std::string("none") : known) + ")";
  const std::string message = job_label(j, i) + ": tenant: " + reason;
  throw JobError(i, "tenant", std::move(reason), message);  // a job-level error (RoundOptions::strict)
}

}  // namespace

int Problem::entry_of(std::size_t i, int config) const {
  // valid[i] is sorted by configuration index: a binary search (the tie rules call this for every
  // job of a 20,000-job round).
  const auto& v = valid[i];
  const auto it = std::lower_bound(v.begin(), v.end(), config, [](const Entry& e, int c) { return e.config < c; });
  return it != v.end() && it->config == config ? static_cast<int>(it - v.begin()) : -1;
}

Problem build_problem(ConfigurationSet set, const ClusterSpec& cluster, std::span<const JobSpec> jobs,
                      const RoundOptions& options, const RoundDeadline* deadline) {
  Problem pb;
  pb.p = options.p;
  pb.lambda = options.lambda;
  pb.set = std::move(set);
  const auto n = jobs.size();
  pb.valid.resize(n);
  pb.current.assign(n, -1);
  pb.required.pinned.assign(n, 0);
  pb.required.forced.assign(n, 0);
  pb.weight.assign(n, 1.0);
  pb.tenant.assign(n, -1);
  pb.tenants = options.tenants;
  check_tenants(pb.tenants, cluster);
  // Raw goodputs, sparse by rows: only the configurations a job may take are stored.
  std::vector<Eigen::Triplet<double>> triplets;
  std::vector<std::vector<ValidConfig>> stored(n);  // per job, in column order: what row i stores
  Eigen::VectorXd nmin(static_cast<Eigen::Index>(n));
  std::vector<RestartInput> restarts(n);
  std::vector<std::string> ids(n);
  std::unordered_set<std::string_view> seen;
  seen.reserve(n);
  std::vector<int> type_limit;

  for (std::size_t i = 0; i < n; ++i) {
    const JobSpec& j = jobs[i];
    validate_job(j, i, cluster.num_types());
    if (!seen.insert(j.id()).second) throw InvalidArgument(job_label(j, i) + ": duplicate job id");
    ids[i] = j.id();
    pb.weight[i] = j.weight();
    if (!j.tenant().empty()) pb.tenant[i] = tenant_of(pb.tenants, j, i);
    const JobLimits lim = limits_of(j);
    nmin(static_cast<Eigen::Index>(i)) = effective_min_gpus(lim);
    // Past the deadline (checked every 16 jobs) the remaining jobs are not enumerated.
    if (deadline && pb.unevaluated == 0 && i % 16 == 0 && deadline->passed()) pb.unevaluated = n - i;
    std::vector<ValidConfig> candidates;
    if (pb.unevaluated == 0) {
      // Counts above the goodput model's limit per type (HasGpuLimit) are never enumerated.
      type_limit.clear();
      if (j.has_gpu_limit())
        for (const auto& t : cluster.types) type_limit.push_back(j.gpu_limit(t));
      candidates = valid_configs(pb.set, lim, type_limit);
    }
    if (j.current()) {
      pb.current[i] = current_config_index(pb.set, cluster, j, i);
      if (pb.unevaluated > 0) candidates.push_back(ValidConfig{pb.current[i], j.current()->gpus});
      if (!j.preemptible()) {
        pb.required.pinned[i] = 1;
        // A running non-preemptible job keeps what it holds, whatever the count rules say now.
        const bool listed = std::any_of(candidates.begin(), candidates.end(),
                                        [&](const ValidConfig& v) { return v.config == pb.current[i]; });
        if (!listed) {
          candidates.push_back(ValidConfig{pb.current[i], j.current()->gpus});
          std::sort(candidates.begin(), candidates.end(),
                    [](const ValidConfig& a, const ValidConfig& b) { return a.config < b.config; });
        }
      }
    } else if (!j.preemptible() && pb.unevaluated == 0) {
      pb.required.forced[i] = 1;  // (one not evaluated in time simply waits: the round says why)
    }
    double current_goodput = 0.0;
    double min_goodput = 0.0;
    for (const ValidConfig& v : candidates) {
      const ConfigurationSpec& c = pb.set.configs[static_cast<std::size_t>(v.config)];
      const auto& type = cluster.types[static_cast<std::size_t>(c.type)];
      const ConfigurationSpec asked{c.type, c.nodes, v.gpus};
      double g = 0.0;
      try {
        g = j.goodput(type, asked);
        check_goodput(g, j.id(), type.name(), asked);
      } catch (const InvalidArgument& e) {  // the job's own goodput: a job-level error
        throw JobError(i, "goodput", e.what(), e.what());
      }
      if (v.config == pb.current[i]) current_goodput = g;
      if (!(g > 0.0)) continue;
      // A hybrid job's worst configuration is worth its pipeline on the type holding it (the reference's
      // scale unit of that type): with per-type pipeline sizes Nmin depends on where the minimum lies.
      if (lim.kind == JobKind::hybrid && (min_goodput == 0.0 || g < min_goodput)) {
        min_goodput = g;
        nmin(static_cast<Eigen::Index>(i)) = effective_min_gpus(lim, c.type);
      }
      triplets.emplace_back(static_cast<int>(i), v.config, g);
      stored[i].push_back(v);
    }
    if (pb.required.pinned[i] && !(current_goodput > 0.0)) {
      const ConfigurationSpec& c = pb.set.configs[static_cast<std::size_t>(pb.current[i])];
      fail_job(j, i, "current",
               "is " + std::to_string(c.gpus) + " GPUs of type '" +
                   cluster.types[static_cast<std::size_t>(c.type)].name() +
                   "', but the job is non-preemptible and its goodput there is 0");
    }
    restarts[i] = RestartInput{pb.current[i], j.age_s(), static_cast<double>(j.restarts()), j.restart_cost_s()};
  }

  SparseGoodputMatrix g(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(pb.set.configs.size()));
  g.setFromTriplets(triplets.begin(), triplets.end());
  normalize_rows(g, nmin);
  apply_restart_factors(g, restarts);
  const SparseGoodputMatrix u = utility_matrix(g, options.p, options.round_utilities, ids);
  // Keep the usable entries (a restart factor of 0 makes the others unusable); a pinned job
  // only keeps its current configuration.
  for (std::size_t i = 0; i < n; ++i) {
    const auto row = static_cast<Eigen::Index>(i);
    std::size_t k = 0;
    SparseGoodputMatrix::InnerIterator uit(u, row);
    for (SparseGoodputMatrix::InnerIterator it(g, row); it; ++it, ++uit, ++k) {
      const ValidConfig& v = stored[i][k];
      if (!(it.value() > 0.0) || (pb.required.pinned[i] && v.config != pb.current[i])) continue;
      pb.valid[i].push_back(Entry{v.config, v.gpus, uit.value()});
    }
  }
  // A rigid job charged less than its footprint may need threshold rows its type does not have
  // (rigid_thresholds: its charge grows between two thresholds of equal capacity).
  std::vector<unsigned> needed(pb.set.vnode_size.size(), 0);
  for (const auto& entries : pb.valid)
    for (const Entry& e : entries) {
      const ConfigurationSpec& c = pb.set.configs[static_cast<std::size_t>(e.config)];
      if (e.gpus < c.gpus)
        needed[static_cast<std::size_t>(c.type)] |=
            rigid_thresholds(c, e.gpus, pb.set.vnode_size[static_cast<std::size_t>(c.type)]);
    }
  for (std::size_t t = 0; t < needed.size(); ++t)
    for (int h = 2; h > 0 && static_cast<unsigned>(h) <= needed[t]; h *= 2)
      if (needed[t] & static_cast<unsigned>(h)) pb.set.add_threshold(static_cast<int>(t), h);
  // λ far beyond every utility sum: the model uses λ' = 2·Σ max u + 1 instead (Problem::model_lambda),
  // which ranks every allocation exactly as λ does and keeps the utilities' differences within the
  // backends' resolution (at up to 2^20·λ', λ = 1e9 beside utilities near 1 made CBC and GLPK prove
  // wrong optima: decision.recompute.numerics_regressions).
  pb.util_bound = 0.0;
  pb.total_weight = 0.0;
  pb.integer_weights = true;
  for (std::size_t i = 0; i < n; ++i) {
    double best = 0.0;
    for (const Entry& e : pb.valid[i]) best = std::max(best, e.util);
    pb.util_bound += pb.weight[i] * best;
    pb.total_weight += pb.weight[i];
    pb.integer_weights = pb.integer_weights && pb.weight[i] == std::floor(pb.weight[i]);
  }
  // The objective must be a finite double for every allocation: Σ utilities and λ·J.
  if (!std::isfinite(pb.util_bound))
    throw InvalidArgument(
        "jobs: the utilities (normalised goodput^p) of the jobs' best configurations sum to more than the largest "
        "double (1.8e308); accepted: a finite sum (use goodputs of a narrower range or a smaller |p|)");
  if (!std::isfinite(pb.lambda * pb.total_weight) || !std::isfinite(pb.lambda * pb.total_weight + pb.util_bound))
    throw InvalidArgument("RoundOptions.lambda: " + std::to_string(pb.lambda) + " times " + std::to_string(n) +
                          " jobs (total weight " + std::to_string(pb.total_weight) +
                          ") overflows a double; accepted range: 0 < lambda <= 1.7e308 / (total weight of the jobs)");
  pb.model_lambda = pb.lambda;
  // With integer weights two allocations' waiting weights differ by 0 or at least 1, so every
  // λ' > util_bound ranks them alike; with fractional weights no such λ' is known: λ is kept.
  if (std::isfinite(pb.util_bound) && pb.integer_weights) {
    const double clamp = 2.0 * pb.util_bound + 1.0;
    if (pb.lambda > clamp) pb.model_lambda = clamp;
  }
  return pb;
}

double round_bound(const Problem& pb, double model_bound) {
  if (pb.model_lambda == pb.lambda || !std::isfinite(model_bound)) return model_bound;
  // (Only with integer weights: m below counts waiting weight, an integer.)
  // With λ' > T = util_bound, an allocation leaving m jobs waiting is worth U + λ'm (p < 0, to
  // minimise) or U − λ'm (p > 0, to maximise), with 0 <= U <= T. The model bound therefore proves
  // at least m_lb jobs wait, and the round's optimum is the model's shifted by (λ − λ')·m >= that.
  const double lp = pb.model_lambda;
  const double shift = pb.lambda - lp;
  if (pb.p < 0) {
    const double m = std::max(0.0, std::ceil((model_bound - pb.util_bound) / lp - 1e-6));
    return model_bound + shift * m;
  }
  const double m = std::max(0.0, std::ceil(-model_bound / lp - 1e-6));
  return model_bound - shift * m;
}

double objective_of(const Problem& pb, const Choice& ch) {
  double obj = 0.0;
  for (std::size_t i = 0; i < pb.num_jobs(); ++i) {
    if (ch[i] < 0) {
      obj += pb.weight[i] * (pb.p > 0 ? -pb.lambda : pb.lambda);
    } else {
      obj += pb.weight[i] * pb.valid[i][static_cast<std::size_t>(ch[i])].util;
    }
  }
  return obj;
}

}  // namespace sia::detail
