// One Sia scheduling round (product.md §2): the driver. It builds the problem (problem.cpp),
// formulates it (formulation.cpp), asks the backend, verifies and decodes its answer, falls back
// to a greedy allocation (greedy.cpp) whenever the backend gives nothing usable, applies the tie
// rules (ties.cpp), and turns the allocation into decisions with placements.
#include <sia/configuration_set.hpp>
#include <sia/error.hpp>
#include <sia/lost_allocations.hpp>
#include <sia/milp/factory.hpp>
#include <sia/placement.hpp>
#include <sia/round.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/capacity_use.hpp"
#include "core/deadline.hpp"
#include "core/formulation.hpp"
#include "core/greedy.hpp"
#include "core/id_index.hpp"
#include "core/input_checks.hpp"
#include "core/prefetch.hpp"
#include "core/problem.hpp"
#include "core/tenants.hpp"
#include "core/ties.hpp"
#include "core/warm_start.hpp"
#include "milp/reading_solver.hpp"
#include "placement/place_held.hpp"

namespace sia {

std::string_view to_string(RoundStatus s) noexcept {
  switch (s) {
    case RoundStatus::optimal:
      return "optimal";
    case RoundStatus::feasible:
      return "feasible";
    case RoundStatus::infeasible:
      return "infeasible";
    case RoundStatus::error:
      return "error";
  }
  return "error";
}

std::string_view to_string(PendingReason r) noexcept {
  switch (r) {
    case PendingReason::none:
      return "none";
    case PendingReason::rejected:
      return "rejected";
    case PendingReason::not_evaluated:
      return "not_evaluated";
    case PendingReason::no_valid_configuration:
      return "no_valid_configuration";
    case PendingReason::unmet:
      return "unmet";
    case PendingReason::tenant_cap:
      return "tenant_cap";
    case PendingReason::capacity:
      return "capacity";
    case PendingReason::outbid:
      return "outbid";
  }
  return "none";
}

namespace {

using namespace detail;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Passes over the jobs read a line or two of each JobSpec (320 bytes), and the chosen entries of
// Problem::valid, scattered over megabytes: each a cache miss, fetched kFetchAhead jobs ahead
// (core/prefetch.hpp).
using detail::fetch;
using detail::fetch_id;
using detail::fetch_job;
using detail::kFetchAhead;

// RoundOptions::log: one event per phase, built only when a log is set (round_log.hpp).
class PhaseLog {
 public:
  PhaseLog(const RoundLog& log, Clock::time_point start) : log_(log), start_(start), last_(start) {}
  explicit operator bool() const noexcept { return static_cast<bool>(log_); }
  /// `now`: when the event happened (the done event passes the instant total_ms was taken, so the
  /// two agree exactly).
  void emit(RoundEvent e, Clock::time_point now = Clock::now()) {
    e.elapsed_ms = std::chrono::duration<double, std::milli>(now - start_).count();
    e.phase_ms = std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
    log_(e);
  }
  static double gap(double objective, double bound) {
    return std::abs(objective - bound) / std::max(std::abs(objective), 1e-9);  // NaN when either is
  }

 private:
  const RoundLog& log_;
  Clock::time_point start_, last_;
};

// A round whose backend stopped at a limit (MilpStatus::feasible) says so, with the backend's own
// message; once the round's own bound is known, with the gap between the round's objective and that
// bound (the backend states its gap in the binary program's terms, which differ: see below).
std::string stopped_at_limit(const std::string& backend_message, std::optional<double> round_gap = std::nullopt) {
  if (!round_gap) return "backend stopped at a limit: " + backend_message;
  return "backend stopped at a limit with a proven relative gap of " + std::to_string(*round_gap) +
         " (backend: " + backend_message + ")";
}

struct SolveOutcome {
  MilpResult result;
  Choice choice;
  bool ok = false;          // choice is a verified solution of this model
  bool within_gap = false;  // the backend's bound is within relative_gap of the full objective
};

// `warm`: start the backend from a previous round (its prices and allocation), when given.
SolveOutcome solve_once(const Problem& pb, const Requirements& req, MilpSolver& solver, MilpParams params,
                        double& solve_ms, Formulation& model_out, const WarmStart* warm, const ClusterSpec& cluster,
                        std::span<const JobSpec> jobs) {
  SolveOutcome out;
  const auto* reading = dynamic_cast<const ReadingSolver*>(&solver);
  // A backend that takes a partial model with its layout (the native one) gets it so: what only
  // a reader of the whole model needs is written when something reads it (Formulation::complete).
  model_out = formulate(pb, req, reading != nullptr && reading->takes_partial_models());
  if (params.stop.stop_requested() || (params.time_limit && params.time_limit->count() == 0)) {
    // The round's time is up (or it was cancelled): no solve, the greedy fallback answers.
    out.result.status = MilpStatus::no_solution;
    out.result.message = params.stop.stop_requested() ? "stop requested" : "time limit reached before the solver";
    return out;
  }
  // A backend that takes its start as bits (ReadingSolver::takes_start_bits: the native one) gets
  // it so, instead of a double per column written here and read there again.
  ReadingSolver::StartBits start_bits;
  const bool as_bits = warm != nullptr && reading != nullptr && reading->takes_start_bits();
  // And a backend that gives its answer as the columns at 1 (ReadingSolver::gives_ones) gives it
  // so: decode() then reads those instead of a value per column.
  std::vector<int> answer_ones;
  const bool as_ones = reading != nullptr && reading->gives_ones();
  if (warm) apply_warm_start(*warm, pb, cluster, jobs, model_out, params, as_bits ? &start_bits : nullptr);
  if (model_out.milp.num_cols() == 0) {
    // Nothing to decide: no job has a usable configuration.
    out.result.status = MilpStatus::optimal;
    out.result.objective = model_out.milp.obj_offset;
    out.result.best_bound = model_out.milp.obj_offset;
    out.choice.assign(pb.num_jobs(), -1);
    out.ok = true;
    out.within_gap = true;
    return out;
  }
  // Objective in a range every backend handles (formulation.hpp: objective_exponent); the answer
  // is mapped back exactly (powers of two).
  const int e = model_out.exponent;  // objective_exponent(model_out.milp), worked out by formulate()
  if (e != 0) {
    for (double& c : model_out.milp.obj) c = std::ldexp(c, -e);
    model_out.milp.obj_offset = std::ldexp(model_out.milp.obj_offset, -e);
    for (double& d : params.start_duals) d = std::ldexp(d, -e);
  }
  {
    // Every answer is checked below (decode), against the formulation's own arrays, and the
    // formulation knows where it wrote the model's entries (Formulation::layout): a backend that
    // would check its solution against the model and find the layout by reading every entry (the
    // native one) is told so for this call, and only for it.
    const ModelLayout layout = model_out.reading_layout();
    const ScopedCallerHints hints(solver, {.answers_checked = true,
                                           .layout = model_out.layout_known ? &layout : nullptr,
                                           .threads = params.threads,
                                           .start = as_bits ? &start_bits : nullptr,
                                           .ones = as_ones ? &answer_ones : nullptr});
    out.result = solver.solve(model_out.milp, params);
  }
  if (e != 0) {
    for (double& c : model_out.milp.obj) c = std::ldexp(c, e);
    model_out.milp.obj_offset = std::ldexp(model_out.milp.obj_offset, e);
    out.result.objective = std::ldexp(out.result.objective, e);
    out.result.best_bound = std::ldexp(out.result.best_bound, e);
    for (double& d : out.result.row_duals) d = std::ldexp(d, e);
  }
  solve_ms += std::chrono::duration<double, std::milli>(out.result.wall_time).count();
  const bool has_solution = out.result.status == MilpStatus::optimal || out.result.status == MilpStatus::feasible;
  if (has_solution) {
    if (as_ones && out.result.values.empty()) {
      out.ok = decode(pb, model_out, answer_ones, req, out.choice);
    } else {
      model_out.complete();  // (an answer as values may be checked by MilpModel::is_feasible: the whole model)
      out.ok = decode(pb, model_out, out.result.values, req, out.choice);
    }
  }
  return out;
}

// Is `bound` within `gap` of `objective`, relative to the full objective (constant terms counted)?
// Plus the numerical tolerance every backend works with, 1e-9·(1 + |objective| + λ·J): sums of
// terms of that size carry rounding errors of that order (docs/decision.md).
bool within_gap(double objective, double bound, double gap, double constant) {
  if (!std::isfinite(objective) || !std::isfinite(bound)) return false;
  const double scale = std::max(std::abs(objective), std::abs(bound));
  return std::abs(bound - objective) <= gap * scale + 1e-9 * (1.0 + scale + std::abs(constant));
}

// Backends measure their relative gap on the objective without the model's constant (λ·J), which
// can be many times larger than the full objective: their "optimal" may be outside
// `relative_gap` of the full objective. Checks the answer, and when it is outside, solves once more
// with the gap scaled down by the ratio of the two objectives; what is still outside is reported
// by SolveOutcome::within_gap (the round then says `feasible`).
SolveOutcome ensure_gap(const Problem& pb, const Requirements& req, MilpSolver& solver, MilpParams params,
                        double& solve_ms, Formulation& model, const WarmStart* warm, const ClusterSpec& cluster,
                        std::span<const JobSpec> jobs, SolveOutcome out, const RoundOptions& options,
                        const RoundDeadline& deadline) {
  if (!out.ok || out.result.status != MilpStatus::optimal) return out;
  const double gap = options.relative_gap;
  const double constant = pb.model_lambda * pb.total_weight;  // what the sums hold
  double objective = objective_of(pb, out.choice);
  out.within_gap = within_gap(objective, round_bound(pb, out.result.best_bound), gap, constant);
  if (out.within_gap) return out;
  // The backend's own objective (its λ, without the constant) against the full one.
  const double own = std::isfinite(out.result.objective) ? out.result.objective : objective;
  const double inner = std::max(std::abs(own - model.milp.obj_offset), 1e-300);
  const double full = std::max(std::abs(own), 1e-300);
  const double scaled = 0.5 * gap * full / inner;
  // NaN (an infinite objective from a misbehaving backend: inf/inf) must not reach the backend as
  // its gap; std::clamp would pass it through.
  params.relative_gap = std::isnan(scaled) ? 1e-15 : std::clamp(scaled, 1e-15, gap);
  params.time_limit = deadline.for_backend();
  Formulation again_model;
  SolveOutcome again = solve_once(pb, req, solver, params, solve_ms, again_model, warm, cluster, jobs);
  if (!again.ok || again.result.status != MilpStatus::optimal) return out;
  objective = objective_of(pb, again.choice);
  again.within_gap = within_gap(objective, round_bound(pb, again.result.best_bound), gap, constant);
  model = std::move(again_model);
  return again;
}

// same_gpus() of two placements in node order.
bool same_gpus_sorted(const std::vector<NodeShare>& x, const std::vector<NodeShare>& y) {
  for (std::size_t k = 0; k < x.size(); ++k) {
    if (x[k].node != y[k].node || x[k].gpus != y[k].gpus) return false;
    if (x[k].gpu_ids.empty() || y[k].gpu_ids.empty()) continue;
    const auto& ix = x[k].gpu_ids;
    const auto& iy = y[k].gpu_ids;
    if (std::is_sorted(ix.begin(), ix.end()) && std::is_sorted(iy.begin(), iy.end())) {
      if (ix != iy) return false;
      continue;
    }
    auto sx = ix, sy = iy;
    std::sort(sx.begin(), sx.end());
    std::sort(sy.begin(), sy.end());
    if (sx != sy) return false;
  }
  return true;
}

// Do two placements name the same GPUs? GPU ids count only where both give them. Placements are
// compared by node; those already in strictly ascending order (every placement `place` returns,
// and the current placements a scheduler hands back from it) are compared in place, without the
// sorted copies a round of 20,000 jobs would make twice per job.
bool same_gpus(const std::vector<NodeShare>& a, const std::vector<NodeShare>& b) {
  if (a.size() != b.size()) return false;
  const auto by_node = [](const NodeShare& x, const NodeShare& y) { return x.node < y.node; };
  const auto ascending = [](const auto& v, auto less) {
    return std::adjacent_find(v.begin(), v.end(), [&](const auto& x, const auto& y) { return !less(x, y); }) == v.end();
  };
  if (!ascending(a, by_node) || !ascending(b, by_node)) {
    auto sorted = [&](std::vector<NodeShare> v) {
      std::sort(v.begin(), v.end(), by_node);
      return v;
    };
    return same_gpus_sorted(sorted(a), sorted(b));
  }
  return same_gpus_sorted(a, b);
}

bool on_down_node(const ClusterSpec& cluster, const CurrentAllocation& cur) {
  return std::any_of(cur.placement.begin(), cur.placement.end(),
                     [&](const NodeShare& s) { return cluster.is_down(cur.type, s.node); });
}

// "2 GPUs of type 'A'" (the GPUs the entry's job uses).
std::string describe_entry(const Problem& pb, const ClusterSpec& cluster, const Entry& e) {
  const ConfigurationSpec& c = pb.set.configs[static_cast<std::size_t>(e.config)];
  std::string s =
      std::to_string(e.gpus) + " GPUs of type '" + cluster.types[static_cast<std::size_t>(c.type)].name() + "'";
  if (c.nodes > 1) s += " on " + std::to_string(c.nodes) + " nodes";
  return s;
}

// Why each job of the final allocation `choice` waits (docs/decision.md, "Reasons"), in the order
// of the definitions there: the first that applies.
// `tenant_held`: held_by_tenants() (empty without tenants).
// GPUs left after reservations, failed nodes (both already out of the capacity rows) and the
// non-preemptible running jobs that keep their configuration (`after_pins`); and GPUs left by the
// allocation (`after_all`). Filled by the round as it writes the decisions, where each job's
// chosen entry is read anyway (fill() again after placement dropped a job).
struct PendingUse {
  explicit PendingUse(const Problem& pb) : after_pins(pb.set), after_all(pb.set) {}
  void add(const Problem& pb, std::size_t i, const Entry& e) {
    after_all.add(e.config, e.gpus);
    if (pb.required.pinned[i]) after_pins.add(e.config, e.gpus);
  }
  void fill(const Problem& pb, const Choice& choice) {
    after_pins = CapacityUse(pb.set);
    after_all = CapacityUse(pb.set);
    for (std::size_t i = 0; i < pb.num_jobs(); ++i)
      if (choice[i] >= 0) add(pb, i, pb.valid[i][static_cast<std::size_t>(choice[i])]);
  }
  CapacityUse after_pins, after_all;
};

void explain_pending(const Problem& pb, const ClusterSpec& cluster, std::span<const JobSpec> jobs, const Choice& choice,
                     const std::vector<char>& tenant_held, PendingUse& use, RoundResult& res) {
  const std::size_t n = pb.num_jobs();
  // Only jobs left without GPUs are explained: none in most large rounds, which then build nothing
  // here (the tenants' use below was a vector per job).
  if (std::none_of(choice.begin(), choice.end(), [](int c) { return c < 0; })) return;
  CapacityUse& after_pins = use.after_pins;
  CapacityUse& after_all = use.after_all;
  // The tenants' caps (not their guarantees), filled by the allocation.
  std::vector<TenantRow> caps;
  if (!pb.tenants.empty())
    for (TenantRow& r : tenant_rows(pb, pb.required))
      if (!r.reservation) caps.push_back(std::move(r));
  TenantUse cap_use(pb, caps);
  if (!caps.empty())
    for (std::size_t i = 0; i < n; ++i)
      if (choice[i] >= 0) cap_use.add(i, pb.valid[i][static_cast<std::size_t>(choice[i])]);
  for (std::size_t i = 0; i < n; ++i) {
    // A job has a configuration exactly when the final allocation gives it one (placement's drops
    // included): `choice` says so without reading every decision.
    if (choice[i] >= 0) continue;
    JobDecision& d = res.decisions[i];
    const auto& valid = pb.valid[i];
    if (valid.empty() && i >= n - pb.unevaluated) {
      d.reason = PendingReason::not_evaluated;
      d.detail = "the round's time limit (or a stop) came before its configurations were evaluated";
      continue;
    }
    const Entry* smallest = nullptr;   // a usable configuration worth more than waiting, fewest GPUs
    const Entry* fitting = nullptr;    // one that fits after reservations and pins
    const Entry* free_now = nullptr;   // one that fits in what the allocation leaves free
    const Entry* under_cap = nullptr;  // one that fits after pins and within its tenant's caps
    std::size_t worth = 0;
    for (const Entry& e : valid) {
      if (!(pb.gain(i, e) > 0.0)) continue;
      ++worth;
      if (smallest == nullptr || e.gpus < smallest->gpus) smallest = &e;
      const bool fits = after_pins.fits(e.config, e.gpus);
      if (fitting == nullptr && fits) fitting = &e;
      if (free_now == nullptr && after_all.fits(e.config, e.gpus)) free_now = &e;
      if (under_cap == nullptr && fits && (caps.empty() || cap_use.fits(i, e))) under_cap = &e;
    }
    if (worth == 0) {
      d.reason = PendingReason::no_valid_configuration;
      d.detail = valid.empty()
                     ? "no configuration of the up cluster meets its limits (min_gpus, max_gpus, kind, 2x rule) "
                       "with goodput > 0"
                     : "waiting is worth more than each of its " + std::to_string(valid.size()) +
                           " usable configurations (utility >= lambda: low goodput or a high restart cost)";
      continue;
    }
    if (!jobs[i].preemptible()) {
      d.reason = PendingReason::unmet;
      d.detail = jobs[i].current()
                     ? "non-preemptible and running, but the non-preemptible jobs kept before it fill the capacity "
                       "(reservations or failed nodes)"
                     : "non-preemptible and waiting, but the waiting non-preemptible jobs cannot all start";
      if (fitting == nullptr) d.detail += "; none of its configurations fits beside the running non-preemptible jobs";
      continue;
    }
    if (fitting == nullptr) {
      d.reason = PendingReason::capacity;
      d.detail = "none of its " + std::to_string(worth) +
                 " usable configurations (smallest: " + describe_entry(pb, cluster, *smallest) +
                 ") fits in the up GPUs left after reservations and non-preemptible running jobs";
      continue;
    }
    if (under_cap == nullptr || (!tenant_held.empty() && tenant_held[i])) {
      d.reason = PendingReason::tenant_cap;
      d.detail = under_cap == nullptr
                     ? "it could run on " + describe_entry(pb, cluster, *fitting) + ", but its tenant '" +
                           jobs[i].tenant() + "' would exceed its cap with the GPUs its other jobs get"
                     : "it fits the GPUs left free, but a tenant row refuses it (its tenant's cap or "
                       "another tenant's guarantee)";
      continue;
    }
    d.reason = PendingReason::outbid;
    d.detail = free_now != nullptr ? describe_entry(pb, cluster, *free_now) +
                                         " are free, but the round left it waiting within its relative gap or limits"
                                   : "it could run on " + describe_entry(pb, cluster, *fitting) +
                                         ", but the allocation gives those GPUs to jobs of higher total value";
  }
}

// `set`: the cluster's configuration set.
// `checked`: what run_round_checked checked of every job (null: build_problem checks).
// `built`: set once the problem is built (every job's checks passed when `checked` is null).
RoundResult run_round_impl(ConfigurationSet set, const ClusterSpec& cluster, std::span<const JobSpec> jobs,
                           const RoundOptions& options, MilpSolver& solver, Clock::time_point start,
                           const CheckedJobs* checked = nullptr, bool* built = nullptr) {
  // RoundOptions::time_limit bounds the whole call: building stops enumerating at the deadline,
  // the backend gets what is left, and no time left means the greedy fallback.
  const RoundDeadline deadline(start, options.time_limit, options.stop);
  // The previous round's rows (WarmStart::cache) for the jobs that did not change; this round's
  // for the next.
  const WarmStart* warm = options.warm_start.get();
  std::shared_ptr<RoundCache> next_cache;
  const Problem pb = build_problem(std::move(set), cluster, jobs, options, &deadline,
                                   warm != nullptr ? warm->cache.get() : nullptr, &next_cache, checked);
  if (built != nullptr) *built = true;
  const std::size_t n = pb.num_jobs();

  RoundResult res;
  res.backend = std::string(solver.name());
  PhaseLog log(options.log, start);
  if (log) {
    RoundEvent e(RoundPhase::problem);
    e.jobs = static_cast<std::ptrdiff_t>(n);
    e.configurations = static_cast<std::ptrdiff_t>(pb.set.configs.size());
    e.candidates = 0;
    for (const auto& v : pb.valid) e.candidates += static_cast<std::ptrdiff_t>(v.size());
    e.unevaluated = static_cast<std::ptrdiff_t>(pb.unevaluated);
    log.emit(e);
  }
  const auto log_solve = [&log, &res](const SolveOutcome& o) {
    if (!log) return;
    RoundEvent e(RoundPhase::solve);
    e.backend = res.backend;
    e.status = to_string(o.result.status);
    e.nodes = o.result.nodes;
    e.objective = o.result.objective;
    e.best_bound = o.result.best_bound;
    e.gap = PhaseLog::gap(o.result.objective, o.result.best_bound);
    e.message = o.result.message;
    log.emit(e);
  };

  // Pins that cannot all be honoured (capacity shrank under running non-preemptible jobs): keep
  // them greedily in input order, report the rest.
  Requirements req = pb.required;
  {
    CapacityUse usage(pb.set);
    for (std::size_t i = 0; i < n; ++i) {
      if (!req.pinned[i]) continue;
      const int used = jobs[i].current()->gpus;  // a rigid job on its footprint: its count
      if (usage.fits(pb.current[i], used)) {
        usage.add(pb.current[i], used);
      } else {
        req.pinned[i] = 0;  // left without GPUs: reported in `unmet` (from the final allocation)
      }
    }
  }
  // Forced jobs with nothing usable cannot be served at all.
  for (std::size_t i = 0; i < n; ++i)
    if (req.forced[i] && pb.valid[i].empty()) req.forced[i] = 0;

  MilpParams params;
  params.relative_gap = options.relative_gap;
  params.lp_duals = options.compute_prices;
  params.time_limit = deadline.for_backend();
  params.stop = options.stop;
  params.threads = options.threads;
  Formulation model;
  SolveOutcome out = solve_once(pb, req, solver, params, res.solve_ms, model, warm, cluster, jobs);
  out =
      ensure_gap(pb, req, solver, params, res.solve_ms, model, warm, cluster, jobs, std::move(out), options, deadline);
  log_solve(out);
  const bool any_forced = std::any_of(req.forced.begin(), req.forced.end(), [](char f) { return f != 0; });
  if (out.result.status == MilpStatus::infeasible && any_forced) {
    // The waiting non-preemptible jobs cannot all start: solve without that requirement and
    // report those left without GPUs.
    Requirements relaxed{req.pinned, std::vector<char>(n, 0)};
    params.time_limit = deadline.for_backend();
    out = solve_once(pb, relaxed, solver, params, res.solve_ms, model, warm, cluster, jobs);
    params.time_limit = deadline.for_backend();
    out = ensure_gap(pb, relaxed, solver, params, res.solve_ms, model, warm, cluster, jobs, std::move(out), options,
                     deadline);
    log_solve(out);
    if (out.ok) req = std::move(relaxed);
    // Otherwise keep the requirement: the greedy fallback then serves those jobs first and reports the
    // ones it cannot serve in `unmet` (a backend that wrongly says "infeasible" twice must not
    // silently drop them).
  }

  // The tie rules group and swap jobs by what the jobs ask for (a waiting non-preemptible job is
  // never interchangeable with a preemptible one, even when the round had to relax its demand).
  Requirements asked = req;
  for (std::size_t i = 0; i < n; ++i) asked.forced[i] = pb.required.forced[i] && !pb.valid[i].empty();
  Choice choice;
  if (out.ok) {
    choice = out.choice;
    const TieGroups groups(pb, asked);
    groups.canonicalize(pb, choice);
    prefer_current_on_ties(pb, asked, choice);
    canonicalize_equal_values(pb, asked, choice);
    groups.canonicalize(pb, choice);
    // Rules 1-4 move configurations between jobs of equal utility and only know capacity: with
    // weights or tenants a move may change the objective or break a tenant row. Then the backend's
    // allocation stands as it came, for rule 5.
    if (!pb.tenants.empty() || !pb.uniform_weights()) {
      const double solved = objective_of(pb, out.choice), tied = objective_of(pb, choice);
      const double slack = 1e-12 * (1.0 + std::abs(solved) + pb.lambda * pb.total_weight);
      const bool worse = pb.p > 0 ? tied < solved - slack : tied > solved + slack;
      if (worse || !tenants_respected(pb, req, choice)) choice = out.choice;
    }
    // Rule 5 (docs/decision.md): overrides the rules above when it settles. Its classes count the
    // weighted terms of the objective and its search keeps capacity and the tenant rows.
    (void)canonicalize_exactly(pb, asked, choice);
    res.status = out.result.status == MilpStatus::optimal ? RoundStatus::optimal : RoundStatus::feasible;
    if (out.result.status == MilpStatus::feasible) res.message = stopped_at_limit(out.result.message);
    if (out.result.status == MilpStatus::optimal && !out.within_gap) {
      res.status = RoundStatus::feasible;
      res.message =
          "backend reported optimal, but its bound is not within relative_gap of the objective (constant "
          "terms counted)";
    }
  } else {
    choice = greedy_allocation(pb, req);
    res.fallback = true;
    const auto st = out.result.status;
    if (st == MilpStatus::no_solution) {
      res.status = RoundStatus::feasible;
      res.message =
          "backend found no solution within its limits (" + out.result.message + "); greedy fallback allocation";
    } else {
      res.status = RoundStatus::error;
      res.message = std::string("backend ") + res.backend + " returned " + std::string(to_string(st));
      if (st == MilpStatus::optimal || st == MilpStatus::feasible) res.message += " with an invalid solution";
      if (!out.result.message.empty()) res.message += ": " + out.result.message;
      res.message += "; greedy fallback allocation";
    }
    if (log) {
      RoundEvent e(RoundPhase::fallback);
      e.message = res.message;
      log.emit(e);
    }
  }

  // Prices (docs/decision.md): one definition for every backend — the capacity-row duals of the
  // round's LP relaxation as sia's native backend computes them from a cold start (no warm start,
  // one thread), by the same routine whichever backend chose the allocation. LP duals are not
  // unique when the relaxation is degenerate, so each backend's own duals would differ.
  if (options.compute_prices && out.ok && !res.fallback && model.milp.num_cols() > 0) {
    // A native backend keeps its own duals: they are the routine's numbers for a fresh instance,
    // and a round started warm (RoundOptions::warm_start) or an instance reused across rounds
    // (the simulator's) is not charged a second, cold LP — its LP started from the previous
    // prices, so its duals may differ where the LP's are not unique. (That LP from zero cost a
    // warm round at 100,000 GPUs about 50 ms, more than the warm round itself: with prices asked
    // for, as by default, a warm round was slower than a cold one.)
    // A native answer that did not prove its gap may carry duals of another LP than the cold
    // root's (seen once in 10^4 recompute rounds: λ = 1e100, p = 2), so it is priced again.
    const bool own_duals = solver.name() == "native" && res.status == RoundStatus::optimal;
    if (!own_duals) {
      auto native = make_milp_solver("native");
      MilpParams pp;
      pp.lp_duals = true;
      pp.relative_gap = 1.0;  // only the root relaxation matters here
      pp.threads = 1;
      pp.time_limit = deadline.for_backend();
      pp.stop = options.stop;
      double price_ms = 0.0;
      Formulation price_model;
      const SolveOutcome priced = solve_once(pb, req, *native, pp, price_ms, price_model, nullptr, cluster, jobs);
      out.result.row_duals = priced.result.row_duals;
      if (priced.result.row_duals.size() != static_cast<std::size_t>(model.milp.num_rows()))
        out.result.row_duals.clear();
    }
    for (double& d : out.result.row_duals) d += 0.0;  // -0 prints as 0
  }
  // The next round's warm start: its prices now, each job's allocation with the decisions below.
  std::optional<WarmStartWriter> next_warm;
  if (!res.fallback) next_warm.emplace(pb, cluster, jobs.size(), model, out.result, std::move(next_cache));
  // Prices: the canonical duals of the capacity rows (above), as the marginal improvement of the
  // round's objective per extra GPU. MilpResult::row_duals are d(objective)/d(row bound) in the
  // model's own sense, so a minimisation (p < 0) flips the sign.
  if (options.compute_prices && out.ok && !res.fallback &&
      out.result.row_duals.size() == static_cast<std::size_t>(model.milp.num_rows())) {
    res.prices.assign(static_cast<std::size_t>(cluster.num_types()), 0.0);
    const double sign = pb.p > 0 ? 1.0 : -1.0;
    for (std::size_t r = 0; r < pb.set.rows.size(); ++r)
      if (model.capacity_row[r] >= 0)
        res.prices[static_cast<std::size_t>(pb.set.rows[r].type)] +=
            sign * out.result.row_duals[static_cast<std::size_t>(model.capacity_row[r])];
    for (double& x : res.prices) x += 0.0;
    if (log) log.emit(RoundEvent(RoundPhase::prices));
  }
  recycle(std::move(model));  // (its arrays kept for this thread's next round: formulation.hpp)

  // Decisions, in input order.
  res.gpus_used.assign(static_cast<std::size_t>(cluster.num_types()), 0);
  // Each decision made where it is written (a resize first wrote 3 MB of defaults at 100,000 GPUs,
  // which this pass then wrote again).
  res.decisions.reserve(n);
  // The capacity the allocation uses, for explain_pending, which reads it only for jobs left
  // without GPUs: summed here only when the allocation leaves some job waiting (placement's drops
  // fill it anew). Most large rounds serve every job, and the sum was a call per job.
  PendingUse pending_use(pb);
  const bool any_waiting = std::any_of(choice.begin(), choice.end(), [](int c) { return c < 0; });
  const Entry* const entries = pb.valid.all()->data();
  // The jobs' current allocations by pointer, for placement (place_held), taken here while each
  // JobSpec is in cache (a pass of their own read every JobSpec again, a cache miss per job).
  std::vector<const CurrentAllocation*> held_now(options.place ? n : 0, nullptr);
  // Each job's configuration and GPUs for placement (place_held: no request of 100 bytes per job,
  // with the job's id lent to it and handed back), written here with its decision (a pass of its
  // own read every decision again, a cache miss per job).
  std::vector<detail::PlacementTarget> targets;
  if (options.place) targets.reserve(n);  // (each target written once, not value-initialised first)
  // The objective (objective_of's sum, in its order: the same bits), summed here where each job's
  // chosen entry is read anyway (a pass of its own over them was a cache miss per job).
  double objective = 0.0;
  const double waiting = pb.p > 0 ? -pb.lambda : pb.lambda;
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kFetchAhead < n) {
      const std::size_t a = i + kFetchAhead;
      fetch_job(jobs[a]);
      if (choice[a] >= 0) fetch(entries + pb.valid.begin_of(a) + static_cast<std::size_t>(choice[a]));
    }
    if (i + kFetchAhead / 2 < n) fetch_id(jobs[i + kFetchAhead / 2]);  // (its id copied below)
    const JobSpec& j = jobs[i];
    JobDecision& d = res.decisions.emplace_back();
    d.job = j.id();
    int cfg = -1;
    if (choice[i] < 0) objective += pb.weight[i] * waiting;
    if (choice[i] >= 0) {
      const Entry& v = pb.valid[i][static_cast<std::size_t>(choice[i])];
      objective += pb.weight[i] * v.util;
      if (any_waiting) pending_use.add(pb, i, v);
      cfg = v.config;
      const ConfigurationSpec& c = pb.set.configs[static_cast<std::size_t>(cfg)];
      d.config = c;
      d.gpus = v.gpus;
      res.gpus_used[static_cast<std::size_t>(c.type)] += v.gpus;
      if (j.has_batch_size())
        d.batch =
            j.batch_size(cluster.types[static_cast<std::size_t>(c.type)], ConfigurationSpec{c.type, c.nodes, v.gpus});
    }
    d.changed = cfg != pb.current[i];
    if (next_warm) next_warm->add(d.job, cfg, choice[i]);
    if (options.place) targets.push_back({d.config, d.gpus});
    if (const auto& cur = j.current()) {
      if (options.place) {
        if (!cur->placement.empty()) held_now[i] = &*cur;
      } else if (!d.changed && d.config && on_down_node(cluster, *cur)) {
        // Without placement, a job whose current placement touches a failed node must still move.
        d.changed = true;
        res.evicted.push_back(d.job);
      }
    }
  }
  if (next_warm) res.warm_start = std::move(*next_warm).finish();
  res.objective = objective;
  // A bound only when the backend proved one for this problem (docs/decision.md): never the
  // objective of a fallback (that would claim a zero gap nobody proved).
  res.best_bound = std::numeric_limits<double>::quiet_NaN();
  const bool bound_trusted = out.ok || out.result.status == MilpStatus::no_solution;
  if (bound_trusted && std::isfinite(out.result.best_bound)) {
    const double b = round_bound(pb, out.result.best_bound);
    res.best_bound = pb.p > 0 ? std::max(b, res.objective) : std::min(b, res.objective);
    if (out.ok && out.result.status == MilpStatus::feasible) {
      // The backend states its gap in the binary program's terms (its objective, λ'); the round
      // reports its own objective and bound, which differ from those when λ' is not the round's λ
      // or the tie rules moved the allocation, so the gap it states is restated between them.
      const double gap = std::abs(res.objective - res.best_bound) / std::max(1e-300, std::abs(res.objective));
      res.message = stopped_at_limit(out.result.message, gap);
    }
  }
  if (out.ok && res.status == RoundStatus::optimal && pb.model_lambda != pb.lambda) {
    // The backend proved its gap for the model's λ (Problem::model_lambda); with the round's λ the
    // proof holds only when the bound shows as many waiting jobs as the allocation has.
    // The documented gap (docs/decision.md), the numerical tolerance of the binary program included.
    if (!within_gap(res.objective, res.best_bound, options.relative_gap, pb.model_lambda * pb.total_weight)) {
      res.status = RoundStatus::feasible;
      res.message = "optimal for the binary program, but its bound does not prove the gap with lambda = " +
                    std::to_string(pb.lambda);
    }
  }

  if (pb.unevaluated > 0) {
    // Cut short while building: the allocation is valid, but optimal only for the jobs evaluated.
    if (res.status == RoundStatus::optimal) res.status = RoundStatus::feasible;
    res.best_bound = std::numeric_limits<double>::quiet_NaN();
    res.message = (options.stop.stop_requested() ? std::string("stop requested") : std::string("time limit reached")) +
                  " while building the round: " + std::to_string(pb.unevaluated) +
                  " jobs not evaluated (running ones keep their configuration where it fits, waiting ones wait)" +
                  (res.message.empty() ? "" : "; " + res.message);
  }

  // Placement (placement.hpp): concrete nodes and GPUs, keeping unchanged jobs where they are.
  if (options.place) {
    // Each job's configuration and GPUs (`targets`), its current allocation by pointer (copies in
    // the requests were allocations per job; both taken with the decisions), and its id read from
    // its decision only for an error. An allocation without a placement is none to the Placer, nor
    // compared below: not handed over, so that neither reads the job again (a cache miss per job
    // when no placement is reported).
    const std::vector<const CurrentAllocation*>& held = held_now;
    PlacementResult placed = place_held(cluster, targets, held, [&](std::size_t j) { return res.decisions[j].job; });
    bool dropped = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (i + kFetchAhead < n && held[i + kFetchAhead] != nullptr &&
          placed.status[i + kFetchAhead] != PlacementStatus::kept)
        fetch(held[i + kFetchAhead]);
      JobDecision& d = res.decisions[i];
      d.placement = std::move(placed.placements[i]);
      d.placement_status = placed.status[i];
      // Same configuration on other GPUs (fragmentation, a failed node, a placement that broke the
      // rules) is a restart too: `changed`, and listed in `evicted`. A `kept` placement is the
      // current one (by node, with the ids it named and those resolved for it): the same GPUs,
      // not compared (most jobs of a round whose placements are reported).
      const CurrentAllocation* current = held[i];
      if (placed.status[i] != PlacementStatus::dropped && placed.status[i] != PlacementStatus::kept && !d.changed &&
          d.config && current != nullptr && !current->placement.empty() &&
          !same_gpus(current->placement, d.placement)) {
        d.changed = true;
        res.evicted.push_back(d.job);
      }
      if (placed.status[i] == PlacementStatus::dropped) {
        // Only reachable if the allocation exceeded what the cluster can hold (the capacity
        // rows make this impossible); the job is reported evicted and left without GPUs.
        res.gpus_used[static_cast<std::size_t>(d.config->type)] -= d.gpus;
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
    if (dropped) {
      res.objective = objective_of(pb, choice);
      pending_use.fill(pb, choice);
    }
    if (log) {
      RoundEvent e(RoundPhase::placement);
      e.allocated = std::count_if(res.decisions.begin(), res.decisions.end(),
                                  [](const JobDecision& d) { return d.config.has_value(); });
      e.evicted = static_cast<std::ptrdiff_t>(res.evicted.size());
      log.emit(e);
    }
  }

  // Tenants (docs/decision.md "Tenants"): who waits because of them, and what each tenant holds.
  std::vector<char> held;
  if (!pb.tenants.empty()) {
    held = held_by_tenants(pb, req, choice);
    for (std::size_t i = 0; i < n; ++i)
      if (held[i]) res.tenant_capped.push_back(res.decisions[i].job);
    res.tenant_gpus = tenant_gpus(pb, choice);
  }
  // From the final allocation (after tie rules and placement), in input order. A job has a
  // configuration exactly when `choice` gives it one (placement's drops included): read there, not
  // in every decision (a cache miss per job).
  for (std::size_t i = 0; i < n; ++i) {
    if (choice[i] >= 0) continue;
    const JobDecision& d = res.decisions[i];
    if (!jobs[i].preemptible()) res.unmet.push_back(d.job);
    if (jobs[i].current()) res.preempted.push_back(d.job);
  }
  if (!res.unmet.empty()) {
    // A round cut short while building does not know that the demand cannot be met: it stays
    // `feasible` (time limit or stop), and says so.
    if (pb.unevaluated == 0) res.status = RoundStatus::infeasible;
    std::string msg = pb.unevaluated == 0 ? "demand of non-preemptible jobs cannot be met:"
                                          : "non-preemptible jobs left without GPUs (not all evaluated in time):";
    for (const auto& u : res.unmet) msg += " " + u;
    res.message = res.message.empty() ? msg : msg + "; " + res.message;
  }
  explain_pending(pb, cluster, jobs, choice, held, pending_use, res);
  const auto end = Clock::now();
  res.total_ms = std::chrono::duration<double, std::milli>(end - start).count();
  if (log) {
    RoundEvent e(RoundPhase::done);
    e.backend = res.backend;
    e.status = to_string(res.status);
    e.objective = res.objective;
    e.best_bound = res.best_bound;
    e.gap = PhaseLog::gap(res.objective, res.best_bound);
    e.allocated = std::count_if(res.decisions.begin(), res.decisions.end(),
                                [](const JobDecision& d) { return d.config.has_value(); });
    e.evicted = static_cast<std::ptrdiff_t>(res.evicted.size());
    e.message = res.message;
    log.emit(e, end);
  }
  return res;
}

// A round that rejects invalid jobs alone (RoundOptions::strict false). The checks that need no
// goodput (validate_job, the current configuration) run first, over every job; a job whose goodput
// turns out invalid while the problem is built (NaN, negative, a goodput function that throws
// InvalidArgument) is rejected then, and the round is built again without it (rare: each such
// job costs one more build, and builds past the deadline evaluate nothing). A rejected job is no
// part of the problem: it adds nothing to the objective. Decisions are put back in input order.
//
// Most rounds have no invalid job: the round is first run as a strict one, whose build_problem makes
// the same checks in its own pass over the jobs (a pass of their own read every JobSpec once more,
// a cache miss each: about 0.7 ms at 20,000 jobs). Only if that throws are the checks run first as
// described, from the start; when they find nothing, that first run was the one they would have
// led to (the same problem, built with checks that all passed), so its error is theirs.
RoundResult run_round_checked(const ClusterSpec& cluster, std::span<const JobSpec> jobs, const RoundOptions& options,
                              MilpSolver& solver, Clock::time_point start) {
  ConfigurationSet set = make_configuration_set(cluster);
  if (options.strict) return run_round_impl(std::move(set), cluster, jobs, options, solver, start);
  std::exception_ptr first_error;
  {
    bool built = false;
    try {
      // (The set moved in, not copied: a round without an invalid job needs it no more.)
      return run_round_impl(std::move(set), cluster, jobs, options, solver, start, nullptr, &built);
    } catch (const JobError&) {
      first_error = std::current_exception();
    } catch (...) {
      if (built) throw;  // every check passed: the checks below would find nothing
      first_error = std::current_exception();
    }
  }
  set = make_configuration_set(cluster);  // (the first run took it)
  std::vector<RejectedJob> rejected;
  auto reject = [&](const JobError& e, std::size_t index) {
    RejectedJob r;
    r.job = jobs[index].id();
    r.index = index;
    r.field = e.field();
    r.reason = e.reason();
    r.running = jobs[index].current().has_value();
    rejected.push_back(std::move(r));
  };
  // Per job, its current configuration's index (-1: none), for build_problem: the jobs it is given
  // passed these checks, which it then does not repeat (CheckedJobs).
  std::vector<int> current(jobs.size(), -1);
  {
    // Duplicate ids are a round-level error (a decision must name one job per id), rejected or not.
    IdIndex seen(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (i + kFetchAhead < jobs.size()) fetch_job(jobs[i + kFetchAhead]);
      const JobSpec& j = jobs[i];
      if (!j.id().empty() && seen.insert(j.id(), i) != IdIndex::npos)
        throw InvalidArgument(job_label(j, i) + ": duplicate job id");
      try {
        validate_job(j, i, cluster.num_types());
        if (j.current()) current[i] = current_config_index(set, cluster, j, i);
      } catch (const JobError& e) {
        reject(e, i);
      }
    }
  }
  CheckedJobs checked;
  std::vector<JobSpec> kept;
  std::vector<std::size_t> where;  // input position of each job of the round
  auto keep_all_but_rejected = [&] {
    std::sort(rejected.begin(), rejected.end(),
              [](const RejectedJob& x, const RejectedJob& y) { return x.index < y.index; });
    kept.clear();
    where.clear();
    std::size_t r = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (r < rejected.size() && rejected[r].index == i) {
        ++r;
        continue;
      }
      kept.push_back(jobs[i]);
      where.push_back(i);
    }
  };
  if (rejected.empty()) {
    // Every job passed the checks: the run above was the first attempt below.
    try {
      std::rethrow_exception(first_error);
    } catch (const JobError& e) {
      reject(e, e.index());
    }
  }
  keep_all_but_rejected();
  RoundResult res;
  for (;;) {
    try {
      if (rejected.empty()) {
        checked.current = current;  // (a copy: a job rejected while building starts another attempt)
        res = run_round_impl(set, cluster, jobs, options, solver, start, &checked);
      } else {
        checked.current.clear();
        for (const std::size_t i : where) checked.current.push_back(current[i]);
        res = run_round_impl(set, cluster, kept, options, solver, start, &checked);
      }
      break;
    } catch (const JobError& e) {
      reject(e, rejected.empty() ? e.index() : where[e.index()]);
      keep_all_but_rejected();
    }
  }
  if (rejected.empty()) return res;
  std::vector<JobDecision> all(jobs.size());
  for (std::size_t k = 0; k < kept.size(); ++k) all[where[k]] = std::move(res.decisions[k]);
  for (const RejectedJob& rj : rejected) {
    JobDecision& d = all[rj.index];
    d.job = rj.job;
    d.changed = rj.running;  // a running job that is rejected stops (docs/decision.md)
    d.reason = PendingReason::rejected;
    d.detail = rj.field + ": " + rj.reason;
    if (options.place) d.placement_status = PlacementStatus::unallocated;
  }
  res.decisions = std::move(all);
  // In input order, rejected running jobs included.
  res.preempted.clear();
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (!res.decisions[i].config && jobs[i].current()) res.preempted.push_back(res.decisions[i].job);
  res.rejected = std::move(rejected);
  res.total_ms = ms_since(start);
  return res;
}

}  // namespace

RoundResult run_round(const ClusterSpec& cluster, std::span<const JobSpec> jobs, const RoundOptions& options) {
  const auto start = Clock::now();
  validate_options(options);
  auto solver = make_milp_solver(options.backend);
  return run_round_checked(cluster, jobs, options, *solver, start);
}

RoundResult run_round(const ClusterSpec& cluster, std::span<const JobSpec> jobs, const RoundOptions& options,
                      MilpSolver& solver) {
  const auto start = Clock::now();
  validate_options(options);
  return run_round_checked(cluster, jobs, options, solver, start);
}

}  // namespace sia
