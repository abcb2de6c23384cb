#pragma once
// Hardening test support (issue 9):
//  - FaultSolver: a MILP backend that misbehaves on purpose (fails, throws, returns garbage, lies
//    about optimality, breaks pins, overruns its time limit, claims infeasibility);
//  - check_round_valid(): an independent checker of everything a round must guarantee whatever
//    the backend did (capacity per ConfigurationSet row, pins, forced jobs, no job twice,
//    placement rules);
//  - random_instance(): random rounds on the paper's heterogeneous cluster scaled up to 2048 GPUs,
//    with every job kind, pins, non-preemptible waiting jobs, reservations, failed nodes and
//    current placements taken from a previous round.
#include <sia/configuration_set.hpp>
#include <sia/milp/factory.hpp>
#include <sia/round.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace sia::test {

/// A backend that fails in one chosen way. Modes that need a "real" answer to corrupt take it
/// from the native backend.
class FaultSolver final : public MilpSolver {
 public:
  enum class Mode {
    status_error,      ///< returns MilpStatus::error
    throw_std,         ///< throws std::runtime_error
    throw_non_std,     ///< throws an int (not a std::exception)
    nan_values,        ///< "optimal" with NaN values
    wrong_length,      ///< "optimal" with one value too few
    fractional,        ///< "optimal" with every value 0.5
    value_two,         ///< "optimal" with every value 2
    over_capacity,     ///< "optimal" with every column at 1 (capacity blown)
    violate_pin,       ///< native's solution with every pinned (lower bound 1) column at 0
    sleep_past_limit,  ///< sleeps 6x its time limit (at least 300 ms), then no_solution
    false_infeasible,  ///< "infeasible" for a feasible model
    pass_through,      ///< no fault: the native backend's answer (used when disarmed)
  };
  static constexpr Mode all_modes[] = {Mode::status_error,     Mode::throw_std,       Mode::throw_non_std,
                                       Mode::nan_values,       Mode::wrong_length,    Mode::fractional,
                                       Mode::value_two,        Mode::over_capacity,   Mode::violate_pin,
                                       Mode::sleep_past_limit, Mode::false_infeasible};

  explicit FaultSolver(Mode m) : mode_(m) {}
  int calls = 0;  ///< number of do_solve calls

  static const char* mode_name(Mode m) {
    switch (m) {
      case Mode::status_error:
        return "status_error";
      case Mode::throw_std:
        return "throw_std";
      case Mode::throw_non_std:
        return "throw_non_std";
      case Mode::nan_values:
        return "nan_values";
      case Mode::wrong_length:
        return "wrong_length";
      case Mode::fractional:
        return "fractional";
      case Mode::value_two:
        return "value_two";
      case Mode::over_capacity:
        return "over_capacity";
      case Mode::violate_pin:
        return "violate_pin";
      case Mode::sleep_past_limit:
        return "sleep_past_limit";
      case Mode::false_infeasible:
        return "false_infeasible";
      case Mode::pass_through:
        return "pass_through";
    }
    return "?";
  }

 private:
  Mode mode_;

  std::string_view do_name() const noexcept override { return "fault"; }
  // Armed, it claims every LP method so that callers asking for one (Gavel's interior-point LP) reach its
  // faults; disarmed it is the native backend, which has none.
  bool do_supports(LpMethod) const noexcept override { return mode_ != Mode::pass_through; }

  static MilpResult claim_optimal(const MilpModel& m, std::vector<double> x) {
    MilpResult r;
    r.status = MilpStatus::optimal;
    r.values = std::move(x);
    r.objective = 1e9;  // a lie: the round must recompute it
    r.best_bound = r.objective;
    (void)m;
    return r;
  }

  MilpResult do_solve(const MilpModel& m, const MilpParams& p) override {
    ++calls;
    const auto n = static_cast<std::size_t>(m.num_cols());
    MilpResult r;
    switch (mode_) {
      case Mode::status_error:
        r.status = MilpStatus::error;
        r.message = "injected failure";
        return r;
      case Mode::throw_std:
        throw std::runtime_error("injected std::runtime_error");
      case Mode::throw_non_std:
        throw 42;
      case Mode::nan_values:
        return claim_optimal(m, std::vector<double>(n, std::numeric_limits<double>::quiet_NaN()));
      case Mode::wrong_length:
        return claim_optimal(m, std::vector<double>(n > 0 ? n - 1 : 0, 0.0));
      case Mode::fractional:
        return claim_optimal(m, std::vector<double>(n, 0.5));
      case Mode::value_two:
        return claim_optimal(m, std::vector<double>(n, 2.0));
      case Mode::over_capacity:
        return claim_optimal(m, std::vector<double>(n, 1.0));
      case Mode::violate_pin: {
        auto real = make_milp_solver("native")->solve(m, p);
        if (real.values.size() != n) real.values.assign(n, 0.0);
        for (std::size_t c = 0; c < n; ++c)
          if (m.col_lower[c] > 0.5) real.values[c] = 0.0;
        return claim_optimal(m, std::move(real.values));
      }
      case Mode::sleep_past_limit: {
        const auto limit = p.time_limit.value_or(std::chrono::milliseconds(50));
        std::this_thread::sleep_for(std::max(std::chrono::milliseconds(300), 6 * limit));
        r.status = MilpStatus::no_solution;
        r.message = "injected: time limit exceeded without an incumbent";
        return r;
      }
      case Mode::false_infeasible:
        r.status = MilpStatus::infeasible;
        r.message = "injected: claims infeasible";
        return r;
      case Mode::pass_through:
        return make_milp_solver("native")->solve(m, p);
    }
    return r;
  }
};

/// Mode of the registered "fault" backend; empty = behave exactly like "native". Registration
/// is global and cannot be undone, and other suites (milp.conformance) iterate every registered
/// backend, so the registered instance must be a correct backend whenever no test arms it.
inline std::optional<FaultSolver::Mode>& armed_fault_mode() {
  static std::optional<FaultSolver::Mode> mode;
  return mode;
}

/// Arms the registered "fault" backend with one mode for a scope.
struct ScopedFault {
  explicit ScopedFault(FaultSolver::Mode m) { armed_fault_mode() = m; }
  ~ScopedFault() { armed_fault_mode().reset(); }
  ScopedFault(const ScopedFault&) = delete;
  ScopedFault& operator=(const ScopedFault&) = delete;
};

/// Registers "fault": native unless armed_fault_mode() is set (idempotent).
inline void register_fault_solver() {
  register_milp_solver("fault", []() -> std::unique_ptr<MilpSolver> {
    if (const auto m = armed_fault_mode()) return std::make_unique<FaultSolver>(*m);
    return std::make_unique<FaultSolver>(FaultSolver::Mode::pass_through);
  });
}

/// Is `cur` a configuration of the cluster (the round's identification: type + GPU count)?
inline bool current_is_config(const ConfigurationSet& set, const CurrentAllocation& cur) {
  return std::any_of(set.configs.begin(), set.configs.end(),
                     [&](const ConfigurationSpec& c) { return c.type == cur.type && c.gpus == cur.gpus; });
}

/// Did a job that keeps its configuration move? Compared by (node, GPU count) per node, and GPU ids
/// where the current placement gives them; without placements, only a failed node forces a move.
inline bool moved(const ClusterSpec& cluster, const RoundOptions& opt, const CurrentAllocation& cur,
                  const std::vector<NodeShare>& now) {
  if (cur.placement.empty()) return false;
  if (!opt.place) {
    for (const auto& s : cur.placement)
      if (cluster.is_down(cur.type, s.node)) return true;
    return false;
  }
  std::map<int, std::pair<int, std::vector<int>>> a, b;
  for (const auto& s : cur.placement) {
    auto ids = s.gpu_ids;
    std::sort(ids.begin(), ids.end());
    a[s.node] = {s.gpus, ids};
  }
  for (const auto& s : now) {
    auto ids = s.gpu_ids;
    std::sort(ids.begin(), ids.end());
    b[s.node] = {s.gpus, ids};
  }
  if (a.size() != b.size() || cur.placement.size() != a.size()) return true;
  for (const auto& [node, v] : a) {
    const auto it = b.find(node);
    if (it == b.end() || it->second.first != v.first) return true;
    if (!v.second.empty() && !it->second.second.empty() && v.second != it->second.second) return true;
  }
  return false;
}

/// Checks every guarantee of a round result (doctest CHECKs); independent of round.cpp's code.
inline void check_round_valid(const ClusterSpec& cluster, const std::vector<JobSpec>& jobs, const RoundOptions& opt,
                              const RoundResult& r) {
  REQUIRE(r.decisions.size() == jobs.size());
  auto set = make_configuration_set(cluster);
  // Every threshold row: a rigid job on its footprint is charged its count (rigid_row_usage).
  for (int t = 0; t < cluster.num_types(); ++t) set.add_all_thresholds(t);
  const std::set<std::string> unmet(r.unmet.begin(), r.unmet.end());
  CHECK(unmet.size() == r.unmet.size());
  if (!unmet.empty()) CHECK(r.status == RoundStatus::infeasible);
  if (r.status != RoundStatus::optimal) CHECK_FALSE(r.message.empty());
  CHECK(std::isfinite(r.objective));

  std::set<std::string> seen;
  std::vector<long long> row_use(set.rows.size(), 0);
  std::vector<int> used(cluster.types.size(), 0);
  std::map<std::tuple<int, int, int>, std::string> owner;  // (type, node, gpu) -> job
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto& d = r.decisions[i];
    const auto& job = jobs[i];
    CAPTURE(d.job);
    CHECK(d.job == job.id());
    CHECK(seen.insert(d.job).second);  // no job twice
    if (d.config) {
      const ConfigurationSpec c = *d.config;
      REQUIRE(c.type >= 0);
      REQUIRE(c.type < cluster.num_types());
      CHECK(std::find(set.configs.begin(), set.configs.end(), c) != set.configs.end());
      CHECK(d.gpus >= 1);
      CHECK(d.gpus <= c.gpus);
      CHECK(job.goodput(cluster.types[static_cast<std::size_t>(c.type)], c) > 0.0);
      for (std::size_t k = 0; k < set.rows.size(); ++k) row_use[k] += set.row_usage(set.rows[k], c, d.gpus);
      used[static_cast<std::size_t>(c.type)] += d.gpus;
      if (opt.place && !d.placement.empty()) {
        const int size = cluster.types[static_cast<std::size_t>(c.type)].gpus_per_node();
        int total = 0;
        std::set<int> nodes;
        for (const auto& sh : d.placement) {
          CHECK(sh.node >= 0);
          CHECK(sh.node < cluster.types[static_cast<std::size_t>(c.type)].num_nodes());
          CHECK_FALSE(cluster.is_down(c.type, sh.node));  // nothing on down nodes
          CHECK(nodes.insert(sh.node).second);
          CHECK(sh.gpus == static_cast<int>(sh.gpu_ids.size()));
          for (int id : sh.gpu_ids) {
            CHECK(id >= 0);
            CHECK(id < size);
            const bool fresh = owner.emplace(std::tuple{c.type, sh.node, id}, d.job).second;
            CHECK_MESSAGE(fresh, "GPU used twice: node " << sh.node << " gpu " << id);
          }
          total += sh.gpus;
          // A rigid remainder may join a whole share on nodes larger than s (placement.hpp).
          if (c.nodes >= 2)
            CHECK(sh.gpus <= (d.gpus < c.gpus ? size : set.vnode_size[static_cast<std::size_t>(c.type)]));
        }
        CHECK(total == d.gpus);
        if (c.nodes == 1)
          CHECK(d.placement.size() == 1);  // partial-node jobs on one node
        else
          CHECK((static_cast<int>(d.placement.size()) == c.nodes ||  // whole virtual nodes (+ a remainder)
                 (d.gpus < c.gpus && static_cast<int>(d.placement.size()) == c.nodes - 1)));
      } else if (opt.place) {
        // Only a job that placement had to drop may lack a placement, and the message says so.
        CHECK(r.message.find(d.job) != std::string::npos);
      }
    } else {
      CHECK(d.gpus == 0);
      CHECK(d.placement.empty());
    }
    // Pins: a non-preemptible running job keeps its configuration unless reported unmet.
    // (The generators below only make jobs with goodput > 0 everywhere, so every pin applies.)
    if (!job.preemptible() && job.current() && !unmet.count(d.job)) {
      const auto& cur = *job.current();
      REQUIRE_MESSAGE(d.config, "pinned job lost its GPUs");
      CHECK(d.config->type == cur.type);
      CHECK((d.gpus == cur.gpus || d.config->gpus == cur.gpus));
      // Same configuration: `changed` only when the job moved off a known current placement.
      CHECK(d.changed == moved(cluster, opt, cur, d.placement));
    }
    // A waiting non-preemptible job runs or is reported unmet.
    if (!job.preemptible() && !job.current() && !d.config) CHECK(unmet.count(d.job) == 1);
  }
  for (std::size_t k = 0; k < set.rows.size(); ++k) {
    CAPTURE(k);
    CHECK(row_use[k] <= set.rows[k].capacity);
  }
  if (!r.gpus_used.empty()) CHECK(r.gpus_used == used);
  for (std::size_t t = 0; t < used.size(); ++t) CHECK(used[t] <= set.free_gpus[t]);
}

/// Parameters of a random instance.
struct InstanceShape {
  int scale = 1;  ///< paper heterogeneous cluster × scale (1 = 64 GPUs, 32 = 2048 GPUs)
  int jobs = 8;
};

/// The paper's heterogeneous 64-GPU cluster × scale: aws 6s×4, rtx 3s×8, dgx-ext 2s×8.
inline ClusterSpec hetero_cluster(int scale) {
  ClusterSpec c;
  c.types = {GpuTypeSpec("aws", 6 * scale, 4), GpuTypeSpec("rtx", 3 * scale, 8), GpuTypeSpec("dgx-ext", 2 * scale, 8)};
  return c;
}

/// A job whose goodput is a smooth deterministic function of (seed, type, config). `quantum` > 0
/// rounds goodputs to that grid (creates ties).
inline JobSpec synthetic_job(std::string id, std::uint64_t seed, JobKind kind, int max_gpus, double quantum = 0.0) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double base[3] = {0.5 + u(g), 0.5 + u(g), 0.5 + 2 * u(g)};
  const double alpha = 0.3 + 0.65 * u(g);  // scaling exponent
  const double net = 0.5 + 0.45 * u(g);    // multi-node penalty
  const int pipeline = kind == JobKind::hybrid ? 2 : 1;
  JobSpec j(std::move(id));
  j.kind(kind);
  if (kind == JobKind::rigid) {
    const int n = 1 + static_cast<int>(g() % 6);
    j.min_gpus(n).max_gpus(n);
  } else if (kind == JobKind::hybrid) {
    j.pipeline_size(pipeline).min_gpus(pipeline).max_gpus(std::max(pipeline, max_gpus - max_gpus % pipeline));
  } else {
    j.min_gpus(1).max_gpus(max_gpus);
  }
  j.goodput_fn([=](const GpuTypeSpec& t, const ConfigurationSpec& c) {
    const double b = t.name() == "aws" ? base[0] : t.name() == "rtx" ? base[1] : base[2];
    double v = b * std::pow(static_cast<double>(c.gpus), alpha) * (c.nodes > 1 ? net : 1.0);
    if (quantum > 0) v = std::max(quantum, std::round(v / quantum) * quantum);
    return v;
  });
  return j;
}

/// A random round: a first round places the jobs, the second one (returned) starts from those
/// placements with pins, non-preemptible waiting jobs, reservations, failed nodes and new jobs.
struct Instance {
  ClusterSpec cluster;
  std::vector<JobSpec> jobs;
};

inline Instance random_instance(std::mt19937_64& rng, InstanceShape shape, double quantum = 0.0) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const JobKind kinds[] = {JobKind::adaptive, JobKind::strong_scaling, JobKind::rigid, JobKind::hybrid};
  Instance in;
  in.cluster = hetero_cluster(shape.scale);
  std::vector<JobSpec> first;
  for (int i = 0; i < shape.jobs; ++i)
    first.push_back(synthetic_job("j" + std::to_string(i), rng(), kinds[pick(0, 3)], 1 << pick(0, 6), quantum));
  RoundOptions o;
  o.backend = "native";
  o.compute_prices = false;
  o.time_limit = std::chrono::milliseconds(2000);
  const auto r0 = run_round(in.cluster, first, o);
  // Second round: failures and reservations appear, some jobs become non-preemptible.
  for (std::size_t t = 0; t < in.cluster.types.size(); ++t) {
    std::vector<int> down;
    const int nodes = in.cluster.types[t].num_nodes();
    for (int k = pick(0, 2); k > 0; --k) down.push_back(pick(0, nodes - 1));
    std::sort(down.begin(), down.end());
    down.erase(std::unique(down.begin(), down.end()), down.end());
    in.cluster.down.push_back(down);
    const int up = (nodes - static_cast<int>(down.size())) * in.cluster.types[t].gpus_per_node();
    in.cluster.reserved.push_back(pick(0, 3) == 0 ? std::min(up, pick(0, in.cluster.types[t].gpus_per_node())) : 0);
  }
  const auto set = make_configuration_set(in.cluster);
  for (std::size_t i = 0; i < first.size(); ++i) {
    JobSpec j = first[i];
    const auto& d = r0.decisions[i];
    if (d.config && pick(0, 9) != 0) {
      CurrentAllocation cur{d.config->type, d.config->gpus, d.config->nodes, d.placement};
      if (current_is_config(set, cur)) {
        cur.gpus = d.gpus;  // a rigid job reports its count
        j.current(cur).age_s(pick(0, 5000)).restarts(pick(0, 3));
        if (pick(0, 4) == 0) j.preemptible(false);
      }
    } else if (pick(0, 9) == 0) {
      j.preemptible(false);  // waiting, must start
    }
    in.jobs.push_back(std::move(j));
  }
  for (int k = pick(0, std::max(1, shape.jobs / 4)); k > 0; --k)
    in.jobs.push_back(synthetic_job("n" + std::to_string(k), rng(), kinds[pick(0, 3)], 1 << pick(0, 6), quantum));
  return in;
}

}  // namespace sia::test
