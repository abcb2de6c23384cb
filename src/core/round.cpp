// One Sia scheduling round (product.md §2): validate, build the goodput matrix and the MILP,
// solve, verify, decode; a greedy fallback whenever the backend gives nothing usable.
#include <sia/configuration_set.hpp>
#include <sia/error.hpp>
#include <sia/goodput_matrix.hpp>
#include <sia/milp/factory.hpp>
#include <sia/placement.hpp>
#include <sia/lost_allocations.hpp>
#include <sia/round.hpp>
#include <sia/valid_configs.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace sia {

std::string_view to_string(RoundStatus s) noexcept {
  switch (s) {
    case RoundStatus::optimal: return "optimal";
    case RoundStatus::feasible: return "feasible";
    case RoundStatus::infeasible: return "infeasible";
    case RoundStatus::error: return "error";
  }
  return "error";
}

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string job_label(const JobSpec& j, std::size_t i) {
  // Appended piece by piece: g++ 12 -O2 warns falsely (-Wrestrict) on `"job #" + std::to_string(i)`.
  std::string label = "job ";
  if (j.id().empty()) {
    label += '#';
    label += std::to_string(i);
  } else {
    // Ids are quoted in full unless pathological (a multi-megabyte id would swamp the message).
    constexpr std::size_t max_shown = 64;
    label += '\'';
    if (j.id().size() <= max_shown) {
      label += j.id();
      label += '\'';
    } else {
      label.append(j.id(), 0, max_shown / 2);
      label += "...' (";
      label += std::to_string(j.id().size());
      label += " bytes)";
    }
  }
  return label;
}

void validate_options(const RoundOptions& o) {
  if (!std::isfinite(o.p) || o.p == 0.0)
    throw InvalidArgument("policy.p: the fairness exponent must be finite and != 0 (got " + std::to_string(o.p) + ")");
  if (!std::isfinite(o.lambda) || o.lambda <= 0.0)
    throw InvalidArgument("policy.lambda: the penalty must be finite and > 0 (got " + std::to_string(o.lambda) + ")");
  if (!(o.relative_gap >= 0.0) || !std::isfinite(o.relative_gap))
    throw InvalidArgument("policy.relative_gap must be finite and >= 0 (got " + std::to_string(o.relative_gap) + ")");
  if (o.time_limit && o.time_limit->count() < 0)
    throw InvalidArgument("policy.time_limit_ms must be >= 0 (got " + std::to_string(o.time_limit->count()) + ")");
}

JobLimits limits_of(const JobSpec& j) {
  return JobLimits{j.min_gpus(), j.max_gpus(), j.kind(), j.pipeline_size(), j.max_gpus_ever()};
}

// Index of the configuration a job currently holds. Configurations of one type have distinct
// GPU counts, so type and count identify it; a rigid job's count may instead map to its footprint.
int find_current_config(const ConfigurationSet& set, const ClusterSpec& cluster, const JobSpec& j, std::size_t i) {
  if (const auto c = current_configuration(set, j)) return *c;
  const auto& cur = *j.current();
  std::ostringstream msg;
  msg << job_label(j, i) << ": current allocation (" << cur.gpus << " GPUs of type '"
      << cluster.types[static_cast<std::size_t>(cur.type)].name()
      << "') is not a configuration of the cluster; GPU counts of that type:";
  bool any = false;
  for (const Config& c : set.configs)
    if (c.type == cur.type) {
      msg << ' ' << c.gpus;
      any = true;
    }
  if (!any) msg << " none (all its nodes are down)";
  msg << " (clear `current` of a job whose GPUs were lost)";
  throw InvalidArgument(msg.str());
}

void validate_job(const JobSpec& j, std::size_t i, const ClusterSpec& cluster) {
  if (j.id().empty()) throw InvalidArgument(job_label(j, i) + ": empty id");
  auto field = [&](const char* name, const std::string& what) {
    throw InvalidArgument(job_label(j, i) + ": " + name + " " + what);
  };
  if (j.min_gpus() < 1) field("min_gpus", "must be >= 1 (got " + std::to_string(j.min_gpus()) + ")");
  if (j.max_gpus() < j.min_gpus())
    field("min_gpus", "(" + std::to_string(j.min_gpus()) + ") > max_gpus (" + std::to_string(j.max_gpus()) + ")");
  if (j.kind() == JobKind::rigid && j.min_gpus() != j.max_gpus())
    field("min_gpus", "must equal max_gpus for a rigid job (its fixed count); got " + std::to_string(j.min_gpus()) +
                          " and " + std::to_string(j.max_gpus()));
  if (j.pipeline_size() < 1)
    field("pipeline_size", "must be >= 1 (got " + std::to_string(j.pipeline_size()) + ")");
  if (!std::isfinite(j.age_s()) || j.age_s() < 0.0)
    field("age_s", "must be finite and >= 0 (got " + std::to_string(j.age_s()) + ")");
  if (j.restarts() < 0) field("restarts", "must be >= 0 (got " + std::to_string(j.restarts()) + ")");
  if (!std::isfinite(j.restart_cost_s()) || j.restart_cost_s() < 0.0)
    field("restart_cost_s", "must be finite and >= 0 (got " + std::to_string(j.restart_cost_s()) + ")");
  if (j.max_gpus_ever() && *j.max_gpus_ever() < 0)
    field("max_gpus_ever", "must be >= 0 (got " + std::to_string(*j.max_gpus_ever()) + ")");
  if (j.current()) {
    const auto& c = *j.current();
    if (c.type < 0 || c.type >= cluster.num_types())
      field("current.gpu_type", "index " + std::to_string(c.type) + " is not a GPU type of the cluster (it has " +
                                    std::to_string(cluster.num_types()) + ")");
    if (c.gpus < 1) field("current.gpus", "must be >= 1 (got " + std::to_string(c.gpus) + ")");
    if (c.nodes < 0) field("current.nodes", "must be >= 0 (got " + std::to_string(c.nodes) + ")");
  }
}

// A configuration a job may take this round, with its utility.
struct Entry {
  int config = 0;     // index into ConfigurationSet::configs
  int gpus = 0;       // GPUs the job uses there (a rigid job's count on its footprint)
  double util = 0.0;  // u_ij
};

// Everything the MILP and the fallback need, derived from the validated input.
struct Problem {
  ConfigurationSet set;
  std::vector<std::vector<Entry>> valid;  // per job: usable configurations (G > 0), by config index
  std::vector<int> current;               // per job: current config index or -1
  std::vector<char> pinned;               // non-preemptible and running: keeps `current`
  std::vector<char> forced;               // non-preemptible and waiting: must get one
  double p = -0.5;
  double lambda = 1.1;
  [[nodiscard]] std::size_t num_jobs() const { return valid.size(); }
  // Contribution of giving job i its entry e, in "bigger is better" units.
  [[nodiscard]] double gain(const Entry& e) const { return p > 0 ? e.util + lambda : lambda - e.util; }
};

Problem build_problem(const ClusterSpec& cluster, std::span<const JobSpec> jobs, const RoundOptions& options) {
  Problem pb;
  pb.p = options.p;
  pb.lambda = options.lambda;
  pb.set = make_configuration_set(cluster);
  const auto n = jobs.size();
  pb.valid.resize(n);
  pb.current.assign(n, -1);
  pb.pinned.assign(n, 0);
  pb.forced.assign(n, 0);
  // Raw goodputs, sparse by rows: only the configurations a job may take are stored.
  std::vector<Eigen::Triplet<double>> triplets;
  std::vector<std::vector<ValidConfig>> stored(n);  // per job, in column order: what row i stores
  Eigen::VectorXd nmin(static_cast<Eigen::Index>(n));
  std::vector<RestartInput> restarts(n);
  std::vector<std::string> ids(n);
  std::unordered_set<std::string_view> seen;
  seen.reserve(n);

  for (std::size_t i = 0; i < n; ++i) {
    const JobSpec& j = jobs[i];
    validate_job(j, i, cluster);
    if (!seen.insert(j.id()).second) throw InvalidArgument(job_label(j, i) + ": duplicate job id");
    ids[i] = j.id();
    const JobLimits lim = limits_of(j);
    nmin(static_cast<Eigen::Index>(i)) = effective_min_gpus(lim);
    auto candidates = valid_configs(pb.set, lim);
    if (j.current()) {
      pb.current[i] = find_current_config(pb.set, cluster, j, i);
      if (!j.preemptible()) {
        pb.pinned[i] = 1;
        // A running non-preemptible job keeps what it holds, whatever the count rules say now.
        const bool listed = std::any_of(candidates.begin(), candidates.end(),
                                        [&](const ValidConfig& v) { return v.config == pb.current[i]; });
        if (!listed) {
          candidates.push_back(ValidConfig{pb.current[i], j.current()->gpus});
          std::sort(candidates.begin(), candidates.end(),
                    [](const ValidConfig& a, const ValidConfig& b) { return a.config < b.config; });
        }
      }
    } else if (!j.preemptible()) {
      pb.forced[i] = 1;
    }
    double current_goodput = 0.0;
    for (const ValidConfig& v : candidates) {
      const Config& c = pb.set.configs[static_cast<std::size_t>(v.config)];
      const auto& type = cluster.types[static_cast<std::size_t>(c.type)];
      const Config asked{c.type, c.nodes, v.gpus};
      const double g = j.goodput(type, asked);
      check_goodput(g, j.id(), type.name(), asked);
      if (v.config == pb.current[i]) current_goodput = g;
      if (!(g > 0.0)) continue;
      triplets.emplace_back(static_cast<int>(i), v.config, g);
      stored[i].push_back(v);
    }
    if (pb.pinned[i] && !(current_goodput > 0.0)) {
      const Config& c = pb.set.configs[static_cast<std::size_t>(pb.current[i])];
      throw InvalidArgument(job_label(j, i) + ": non-preemptible and running on " + std::to_string(c.gpus) +
                            " GPUs of type '" + cluster.types[static_cast<std::size_t>(c.type)].name() +
                            "', but its goodput there is 0");
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
      if (!(it.value() > 0.0) || (pb.pinned[i] && v.config != pb.current[i])) continue;
      pb.valid[i].push_back(Entry{v.config, v.gpus, uit.value()});
    }
  }
  return pb;
}

// Checks capacity of a set of (job -> config) choices against every capacity row.
struct Usage {
  const ConfigurationSet* set;
  std::vector<long long> used;
  explicit Usage(const ConfigurationSet& s) : set(&s), used(s.rows.size(), 0) {}
  [[nodiscard]] bool fits(int c) const {
    const Config& cfg = set->configs[static_cast<std::size_t>(c)];
    for (std::size_t r = 0; r < set->rows.size(); ++r) {
      const int u = set->row_usage(set->rows[r], cfg);
      if (u > 0 && used[r] + u > set->rows[r].capacity) return false;
    }
    return true;
  }
  void add(int c) {
    const Config& cfg = set->configs[static_cast<std::size_t>(c)];
    for (std::size_t r = 0; r < set->rows.size(); ++r) used[r] += set->row_usage(set->rows[r], cfg);
  }
  [[nodiscard]] bool within_capacity() const {
    for (std::size_t r = 0; r < set->rows.size(); ++r)
      if (used[r] > set->rows[r].capacity) return false;
    return true;
  }
};

struct Model {
  MilpModel milp;
  std::vector<std::pair<std::size_t, Entry>> cols;  // column -> (job, entry)
  std::vector<int> capacity_row;                          // ConfigurationSet row -> model row (-1 = none)
};

Model build_model(const Problem& pb, const std::vector<char>& pinned, const std::vector<char>& forced) {
  Model m;
  auto& milp = m.milp;
  const bool maximize = pb.p > 0;
  milp.sense = maximize ? MilpSense::maximize : MilpSense::minimize;
  const double j = static_cast<double>(pb.num_jobs());
  // p > 0: max Σ A(u+λ) − λJ;  p < 0: min Σ A(u−λ) + λJ  (product.md §2 step 4 rewritten).
  milp.obj_offset = maximize ? -pb.lambda * j : pb.lambda * j;
  std::size_t ncols = 0;
  for (const auto& v : pb.valid) ncols += v.size();
  milp.obj.reserve(ncols);
  milp.col_lower.reserve(ncols);
  milp.col_upper.reserve(ncols);
  milp.is_integer.reserve(ncols);
  milp.entries.reserve(ncols * (1 + pb.set.rows.size() / std::max<std::size_t>(1, pb.set.free_gpus.size())));
  m.cols.reserve(ncols);
  for (std::size_t i = 0; i < pb.num_jobs(); ++i) {
    const auto& entries = pb.valid[i];
    const int first = milp.num_cols();
    for (const Entry& v : entries) {
      if (pinned[i] && v.config != pb.current[i]) continue;
      const double u = v.util;
      const double lo = pinned[i] ? 1.0 : 0.0;
      milp.add_col(maximize ? u + pb.lambda : u - pb.lambda, lo, 1.0, true);
      m.cols.emplace_back(i, v);
    }
    const int count = milp.num_cols() - first;
    if (count == 0) continue;
    if (count > 1 || forced[i]) {
      const int row = milp.add_row(forced[i] ? 1.0 : 0.0, 1.0);
      for (int c = first; c < milp.num_cols(); ++c) milp.add_entry(row, c, 1.0);
    }
  }
  m.capacity_row.assign(pb.set.rows.size(), -1);
  for (std::size_t r = 0; r < pb.set.rows.size(); ++r) {
    const auto& row = pb.set.rows[r];
    int model_row = -1;
    for (std::size_t c = 0; c < m.cols.size(); ++c) {
      const int u = pb.set.row_usage(row, pb.set.configs[static_cast<std::size_t>(m.cols[c].second.config)]);
      if (u == 0) continue;
      if (model_row < 0) model_row = milp.add_row(-MilpModel::inf, static_cast<double>(row.capacity));
      milp.add_entry(model_row, static_cast<int>(c), static_cast<double>(u));
    }
    m.capacity_row[r] = model_row;
  }
  return m;
}

// An allocation: per job, index into pb.valid[i] (or -1 = none).
using Choice = std::vector<int>;

int entry_of(const Problem& pb, std::size_t i, int config) {
  const auto& v = pb.valid[i];
  for (std::size_t k = 0; k < v.size(); ++k)
    if (v[k].config == config) return static_cast<int>(k);
  return -1;
}

// Decodes and independently re-checks a backend's solution: at most one configuration per job,
// pins kept, forced jobs served, capacity respected. Returns false when anything is off.
bool decode(const Problem& pb, const Model& m, const std::vector<double>& x, const std::vector<char>& pinned,
            const std::vector<char>& forced, Choice& out) {
  if (x.size() != m.cols.size() || !m.milp.is_feasible(x, 1e-6)) return false;
  out.assign(pb.num_jobs(), -1);
  Usage usage(pb.set);
  for (std::size_t c = 0; c < x.size(); ++c) {
    if (!(x[c] > 0.5)) continue;
    const auto [i, v] = m.cols[c];
    if (out[i] >= 0) return false;
    out[i] = entry_of(pb, i, v.config);
    usage.add(v.config);
  }
  if (!usage.within_capacity()) return false;
  for (std::size_t i = 0; i < pb.num_jobs(); ++i) {
    if (pinned[i] && (out[i] < 0 || pb.valid[i][static_cast<std::size_t>(out[i])].config != pb.current[i]))
      return false;
    if (forced[i] && out[i] < 0) return false;
  }
  return true;
}

// Always-valid greedy allocation: pinned jobs first, then forced ones, then the rest in input
// order, each taking its best configuration that still fits (only when it beats "no GPUs",
// unless the job must run).
Choice greedy(const Problem& pb, const std::vector<char>& pinned, const std::vector<char>& forced) {
  Choice out(pb.num_jobs(), -1);
  Usage usage(pb.set);
  auto pass = [&](auto&& select) {
    for (std::size_t i = 0; i < pb.num_jobs(); ++i) {
      if (out[i] >= 0 || !select(i)) continue;
      int best = -1;
      double best_gain = 0.0;
      for (std::size_t k = 0; k < pb.valid[i].size(); ++k) {
        const int c = pb.valid[i][k].config;
        if (pinned[i] && c != pb.current[i]) continue;
        const double g = pb.gain(pb.valid[i][k]);
        const bool must = pinned[i] || forced[i];
        if (!must && !(g > 0.0)) continue;
        if ((best < 0 || g > best_gain) && usage.fits(c)) {
          best = static_cast<int>(k);
          best_gain = g;
        }
      }
      if (best >= 0) {
        out[i] = best;
        usage.add(pb.valid[i][static_cast<std::size_t>(best)].config);
      }
    }
  };
  pass([&](std::size_t i) { return pinned[i] != 0; });
  pass([&](std::size_t i) { return forced[i] != 0; });
  pass([&](std::size_t) { return true; });
  return out;
}

// Tie-break rule (docs/reliability.md): interchangeable jobs (same usable configurations with
// bit-identical utilities and GPU counts, same current configuration, same pin/requirement) can
// swap configurations without changing the objective, capacity use or constraints, so backends
// pick different permutations. Hand the group's chosen configurations out in a canonical order
// instead: earlier jobs (input order) get fewer GPUs first, then the lower GPU type index, then
// fewer nodes; "no GPUs" goes last. Only permutes within a group: the objective is unchanged.
void canonicalize_ties(const Problem& pb, const std::vector<char>& pinned, const std::vector<char>& forced,
                       Choice& ch) {
  const std::size_t n = pb.num_jobs();
  auto same_entries = [&](std::size_t a, std::size_t b) {
    const auto& x = pb.valid[a];
    const auto& y = pb.valid[b];
    if (x.size() != y.size()) return false;
    for (std::size_t k = 0; k < x.size(); ++k)
      if (x[k].config != y[k].config || x[k].gpus != y[k].gpus || !(x[k].util == y[k].util)) return false;
    return true;
  };
  std::vector<char> done(n, 0);
  std::vector<std::size_t> group;
  std::vector<int> configs;
  for (std::size_t i = 0; i < n; ++i) {
    if (done[i]) continue;
    group.assign(1, i);
    for (std::size_t j = i + 1; j < n; ++j)
      if (!done[j] && pinned[j] == pinned[i] && forced[j] == forced[i] && pb.current[j] == pb.current[i] &&
          same_entries(i, j)) {
        group.push_back(j);
        done[j] = 1;
      }
    if (group.size() < 2) continue;
    configs.clear();
    for (std::size_t j : group)
      configs.push_back(ch[j] < 0 ? -1 : pb.valid[j][static_cast<std::size_t>(ch[j])].config);
    std::sort(configs.begin(), configs.end(), [&](int a, int b) {
      if (a < 0 || b < 0) return a >= 0 && b < 0;
      const Config& x = pb.set.configs[static_cast<std::size_t>(a)];
      const Config& y = pb.set.configs[static_cast<std::size_t>(b)];
      if (x.gpus != y.gpus) return x.gpus < y.gpus;
      if (x.type != y.type) return x.type < y.type;
      if (x.nodes != y.nodes) return x.nodes < y.nodes;
      return a < b;
    });
    for (std::size_t k = 0; k < group.size(); ++k)
      ch[group[k]] = configs[k] < 0 ? -1 : entry_of(pb, group[k], configs[k]);
  }
}

// Second tie-break rule (docs/reliability.md): the status quo wins ties. A running, preemptible
// job k that the solution moves or suspends gets its current configuration back from a job i that
// took that configuration, when the swap (i takes k's new choice instead) leaves the objective no
// worse — with exact ties it is unchanged. Without this rule an exact tie between a running job and
// a waiting one (common with rigid jobs of one model and count) can be broken differently every
// round, restarting both again and again (measured: cifar10 rigid jobs restarting every minute).
// Swapping two jobs' choices keeps the multiset of configurations, so capacity and the placement
// guarantee are untouched. Later jobs (input order) give way first.
void prefer_current_on_ties(const Problem& pb, const std::vector<char>& pinned, const std::vector<char>& forced,
                            Choice& ch) {
  const std::size_t n = pb.num_jobs();
  auto config_of = [&](std::size_t i) { return ch[i] < 0 ? -1 : pb.valid[i][static_cast<std::size_t>(ch[i])].config; };
  // Gain (bigger is better) of job i on configuration c (-1 = no GPUs); nullopt when i may not take it.
  auto gain_on = [&](std::size_t i, int c) -> std::optional<double> {
    if (c < 0) {
      if (forced[i] || pinned[i]) return std::nullopt;
      return 0.0;
    }
    if (pinned[i] && c != pb.current[i]) return std::nullopt;
    const int k = entry_of(pb, i, c);
    if (k < 0) return std::nullopt;
    return pb.gain(pb.valid[i][static_cast<std::size_t>(k)]);
  };
  // Jobs holding each configuration that is not their current one, latest first.
  std::unordered_map<int, std::vector<std::size_t>> holders;
  for (std::size_t i = n; i-- > 0;) {
    const int c = config_of(i);
    if (c >= 0 && c != pb.current[i]) holders[c].push_back(i);
  }
  for (std::size_t k = 0; k < n; ++k) {
    const int cur = pb.current[k];
    if (cur < 0 || pinned[k] || config_of(k) == cur) continue;
    const auto gk_cur = gain_on(k, cur);
    if (!gk_cur) continue;  // the current configuration is no longer usable (e.g. restart factor 0)
    const auto it = holders.find(cur);
    if (it == holders.end()) continue;
    auto& list = it->second;
    const int other = config_of(k);
    for (std::size_t pos = 0; pos < list.size(); ++pos) {
      const std::size_t i = list[pos];
      if (config_of(i) != cur) continue;  // stale: i already gave this configuration away
      const auto gi_other = gain_on(i, other);
      const auto gi_cur = gain_on(i, cur);
      const auto gk_other = gain_on(k, other);
      if (!gi_other || !gi_cur || !gk_other) continue;
      if (!(*gk_cur + *gi_other >= *gi_cur + *gk_other)) continue;
      ch[k] = entry_of(pb, k, cur);
      ch[i] = other < 0 ? -1 : entry_of(pb, i, other);
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(pos));
      if (other >= 0 && other != pb.current[i]) holders[other].push_back(i);
      break;
    }
  }
}

double objective_of(const Problem& pb, const Choice& ch) {
  double obj = 0.0;
  for (std::size_t i = 0; i < pb.num_jobs(); ++i) {
    if (ch[i] < 0) {
      obj += pb.p > 0 ? -pb.lambda : pb.lambda;
    } else {
      obj += pb.valid[i][static_cast<std::size_t>(ch[i])].util;
    }
  }
  return obj;
}

struct SolveOutcome {
  MilpResult result;
  Choice choice;
  bool ok = false;  // choice is a verified solution of this model
};

SolveOutcome solve_once(const Problem& pb, const std::vector<char>& pinned, const std::vector<char>& forced,
                        MilpSolver& solver, const MilpParams& params, double& solve_ms, Model& model_out) {
  SolveOutcome out;
  model_out = build_model(pb, pinned, forced);
  if (model_out.milp.num_cols() == 0) {
    // Nothing to decide: no job has a usable configuration.
    out.result.status = MilpStatus::optimal;
    out.result.objective = model_out.milp.obj_offset;
    out.result.best_bound = model_out.milp.obj_offset;
    out.choice.assign(pb.num_jobs(), -1);
    out.ok = true;
    return out;
  }
  out.result = solver.solve(model_out.milp, params);
  solve_ms += std::chrono::duration<double, std::milli>(out.result.wall_time).count();
  const bool has_solution = out.result.status == MilpStatus::optimal || out.result.status == MilpStatus::feasible;
  if (has_solution) out.ok = decode(pb, model_out, out.result.values, pinned, forced, out.choice);
  return out;
}

std::optional<std::chrono::milliseconds> remaining(const RoundOptions& o, Clock::time_point start) {
  if (!o.time_limit) return std::nullopt;
  const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  return std::max(std::chrono::milliseconds(0), *o.time_limit - spent);
}

RoundResult run_round_impl(const ClusterSpec& cluster, std::span<const JobSpec> jobs, const RoundOptions& options,
                           MilpSolver& solver, Clock::time_point start) {
  validate_options(options);
  const Problem pb = build_problem(cluster, jobs, options);
  const std::size_t n = pb.num_jobs();

  RoundResult res;
  res.backend = std::string(solver.name());
  std::vector<std::string> unmet;

  // Pins that cannot all be honoured (capacity shrank under running non-preemptible jobs): keep
  // them greedily in input order, report the rest.
  std::vector<char> pinned = pb.pinned;
  {
    Usage usage(pb.set);
    for (std::size_t i = 0; i < n; ++i) {
      if (!pinned[i]) continue;
      if (usage.fits(pb.current[i])) {
        usage.add(pb.current[i]);
      } else {
        pinned[i] = 0;
        unmet.push_back(jobs[i].id());
      }
    }
  }
  // Forced jobs with nothing usable cannot be served at all.
  std::vector<char> forced = pb.forced;
  for (std::size_t i = 0; i < n; ++i)
    if (forced[i] && pb.valid[i].empty()) {
      forced[i] = 0;
      unmet.push_back(jobs[i].id());
    }

  MilpParams params;
  params.relative_gap = options.relative_gap;
  params.lp_duals = options.compute_prices;
  params.time_limit = remaining(options, start);
  Model model;
  SolveOutcome out = solve_once(pb, pinned, forced, solver, params, res.solve_ms, model);
  const bool any_forced = std::any_of(forced.begin(), forced.end(), [](char f) { return f != 0; });
  if (out.result.status == MilpStatus::infeasible && any_forced) {
    // The waiting non-preemptible jobs cannot all start: solve without that requirement and
    // report those left without GPUs.
    std::vector<char> none(n, 0);
    params.time_limit = remaining(options, start);
    out = solve_once(pb, pinned, none, solver, params, res.solve_ms, model);
    if (out.ok) {
      for (std::size_t i = 0; i < n; ++i)
        if (forced[i] && out.choice[i] < 0) unmet.push_back(jobs[i].id());
      forced = none;
    }
    // Otherwise keep `forced`: the greedy fallback then serves those jobs first and reports the
    // ones it cannot serve in `unmet` (a backend that wrongly says "infeasible" twice must not
    // silently drop them).
  }

  Choice choice;
  if (out.ok) {
    choice = out.choice;
    canonicalize_ties(pb, pinned, forced, choice);
    prefer_current_on_ties(pb, pinned, forced, choice);
    res.status = out.result.status == MilpStatus::optimal ? RoundStatus::optimal : RoundStatus::feasible;
    if (out.result.status == MilpStatus::feasible) res.message = "backend stopped at a limit: " + out.result.message;
  } else {
    choice = greedy(pb, pinned, forced);
    res.fallback = true;
    const auto st = out.result.status;
    if (st == MilpStatus::no_solution) {
      res.status = RoundStatus::feasible;
      res.message = "backend found no solution within its limits (" + out.result.message +
                    "); greedy fallback allocation";
    } else {
      res.status = RoundStatus::error;
      res.message = std::string("backend ") + res.backend + " returned " + std::string(to_string(st));
      if (st == MilpStatus::optimal || st == MilpStatus::feasible) res.message += " with an invalid solution";
      if (!out.result.message.empty()) res.message += ": " + out.result.message;
      res.message += "; greedy fallback allocation";
    }
    for (std::size_t i = 0; i < n; ++i)
      if (forced[i] && choice[i] < 0) unmet.push_back(jobs[i].id());
  }

  res.objective = objective_of(pb, choice);
  res.best_bound = res.objective;
  if (out.ok && std::isfinite(out.result.best_bound)) res.best_bound = out.result.best_bound;

  // Prices: duals of the capacity rows, as the marginal improvement of the round's objective per
  // extra GPU. MilpResult::row_duals are d(objective)/d(row bound) in the model's own sense, so a
  // minimisation (p < 0) flips the sign.
  if (options.compute_prices && out.ok && !res.fallback &&
      out.result.row_duals.size() == static_cast<std::size_t>(model.milp.num_rows())) {
    res.prices.assign(static_cast<std::size_t>(cluster.num_types()), 0.0);
    const double sign = pb.p > 0 ? 1.0 : -1.0;
    for (std::size_t r = 0; r < pb.set.rows.size(); ++r)
      if (model.capacity_row[r] >= 0)
        res.prices[static_cast<std::size_t>(pb.set.rows[r].type)] +=
            sign * out.result.row_duals[static_cast<std::size_t>(model.capacity_row[r])];
  }

  // Decisions, in input order.
  res.gpus_used.assign(static_cast<std::size_t>(cluster.num_types()), 0);
  res.decisions.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const JobSpec& j = jobs[i];
    JobDecision& d = res.decisions[i];
    d.job = j.id();
    int cfg = -1;
    if (choice[i] >= 0) {
      const Entry& v = pb.valid[i][static_cast<std::size_t>(choice[i])];
      cfg = v.config;
      const Config& c = pb.set.configs[static_cast<std::size_t>(cfg)];
      d.config = c;
      d.gpus = v.gpus;
      res.gpus_used[static_cast<std::size_t>(c.type)] += c.gpus;
      if (j.has_batch_size())
        d.batch = j.batch_size(cluster.types[static_cast<std::size_t>(c.type)], Config{c.type, c.nodes, v.gpus});
    }
    d.changed = cfg != pb.current[i];
  }
  // Placement (placement.hpp): concrete nodes and GPUs, keeping unchanged jobs where they are.
  if (options.place) {
    std::vector<PlacementRequest> preq(n);
    for (std::size_t i = 0; i < n; ++i) {
      preq[i].job = res.decisions[i].job;
      preq[i].config = res.decisions[i].config;
      preq[i].gpus = res.decisions[i].gpus;
      preq[i].current = jobs[i].current();
    }
    PlacementResult placed = place(cluster, preq);
    bool dropped = false;
    for (std::size_t i = 0; i < n; ++i) {
      JobDecision& d = res.decisions[i];
      d.placement = std::move(placed.placements[i]);
      if (placed.status[i] == PlacementStatus::evicted) res.evicted.push_back(d.job);
      if (placed.status[i] == PlacementStatus::dropped) {
        // Only reachable if the allocation exceeded what the cluster can hold (the capacity
        // rows make this impossible); the job is reported evicted and left without GPUs.
        res.gpus_used[static_cast<std::size_t>(d.config->type)] -= d.config->gpus;
        d.config.reset();
        d.gpus = 0;
        d.batch.reset();
        d.changed = pb.current[i] != -1;
        res.evicted.push_back(d.job);
        res.message += (res.message.empty() ? "" : "; ") + std::string("placement dropped job ") + d.job;
        choice[i] = -1;
        dropped = true;
      }
    }
    if (dropped) res.objective = objective_of(pb, choice);
  }

  std::sort(unmet.begin(), unmet.end());
  unmet.erase(std::unique(unmet.begin(), unmet.end()), unmet.end());
  if (!unmet.empty()) {
    res.status = RoundStatus::infeasible;
    std::string msg = "demand of non-preemptible jobs cannot be met:";
    for (const auto& u : unmet) msg += " " + u;
    res.message = res.message.empty() ? msg : msg + "; " + res.message;
  }
  // Keep `unmet` in input order for the caller.
  for (const JobSpec& j : jobs)
    if (std::binary_search(unmet.begin(), unmet.end(), j.id())) res.unmet.push_back(j.id());
  res.total_ms = ms_since(start);
  return res;
}

}  // namespace

RoundResult run_round(const ClusterSpec& cluster, std::span<const JobSpec> jobs, const RoundOptions& options) {
  const auto start = Clock::now();
  validate_options(options);
  auto solver = make_milp_solver(options.backend);
  return run_round_impl(cluster, jobs, options, *solver, start);
}

RoundResult run_round(const ClusterSpec& cluster, std::span<const JobSpec> jobs, const RoundOptions& options,
                      MilpSolver& solver) {
  return run_round_impl(cluster, jobs, options, solver, Clock::now());
}

}  // namespace sia
