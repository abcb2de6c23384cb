// One Sia scheduling round (product.md §2): the driver. It builds the problem (problem.cpp),
// formulates it (formulation.cpp), asks the backend, verifies and decodes its answer, falls back
// to a greedy allocation (greedy.cpp) whenever the backend gives nothing usable, applies the tie
// rules (ties.cpp), and turns the allocation into decisions with placements.
#include <sia/configuration_set.hpp>
#include <sia/error.hpp>
#include <sia/milp/factory.hpp>
#include <sia/placement.hpp>
#include <sia/round.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/capacity_use.hpp"
#include "core/formulation.hpp"
#include "core/greedy.hpp"
#include "core/input_checks.hpp"
#include "core/problem.hpp"
#include "core/ties.hpp"
#include "core/warm_start.hpp"

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

namespace {

using namespace detail;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct SolveOutcome {
  MilpResult result;
  Choice choice;
  bool ok = false;  // choice is a verified solution of this model
};

// `warm`: start the backend from a previous round (its prices and allocation), when given.
SolveOutcome solve_once(const Problem& pb, const Requirements& req, MilpSolver& solver, MilpParams params,
                        double& solve_ms, Formulation& model_out, const WarmStart* warm, const ClusterSpec& cluster,
                        std::span<const JobSpec> jobs) {
  SolveOutcome out;
  model_out = formulate(pb, req);
  if (warm) apply_warm_start(*warm, pb, cluster, jobs, model_out, params);
  if (model_out.milp.num_cols() == 0) {
    // Nothing to decide: no job has a usable configuration.
    out.result.status = MilpStatus::optimal;
    out.result.objective = model_out.milp.obj_offset;
    out.result.best_bound = model_out.milp.obj_offset;
    out.choice.assign(pb.num_jobs(), -1);
    out.ok = true;
    return out;
  }
  // Objective in a range every backend handles (formulation.hpp: objective_exponent); the answer
  // is mapped back exactly (powers of two).
  const int e = objective_exponent(model_out.milp);
  if (e != 0) {
    for (double& c : model_out.milp.obj) c = std::ldexp(c, -e);
    model_out.milp.obj_offset = std::ldexp(model_out.milp.obj_offset, -e);
    for (double& d : params.start_duals) d = std::ldexp(d, -e);
  }
  out.result = solver.solve(model_out.milp, params);
  if (e != 0) {
    for (double& c : model_out.milp.obj) c = std::ldexp(c, e);
    model_out.milp.obj_offset = std::ldexp(model_out.milp.obj_offset, e);
    out.result.objective = std::ldexp(out.result.objective, e);
    out.result.best_bound = std::ldexp(out.result.best_bound, e);
    for (double& d : out.result.row_duals) d = std::ldexp(d, e);
  }
  solve_ms += std::chrono::duration<double, std::milli>(out.result.wall_time).count();
  const bool has_solution = out.result.status == MilpStatus::optimal || out.result.status == MilpStatus::feasible;
  if (has_solution) out.ok = decode(pb, model_out, out.result.values, req, out.choice);
  return out;
}

std::optional<std::chrono::milliseconds> remaining(const RoundOptions& o, Clock::time_point start) {
  if (!o.time_limit) return std::nullopt;
  const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  return std::max(std::chrono::milliseconds(0), *o.time_limit - spent);
}

RoundResult run_round_impl(const ClusterSpec& cluster, std::span<const JobSpec> jobs, const RoundOptions& options,
                           MilpSolver& solver, Clock::time_point start) {
  const Problem pb = build_problem(make_configuration_set(cluster), cluster, jobs, options);
  const std::size_t n = pb.num_jobs();

  RoundResult res;
  res.backend = std::string(solver.name());
  std::vector<std::string> unmet;

  // Pins that cannot all be honoured (capacity shrank under running non-preemptible jobs): keep
  // them greedily in input order, report the rest.
  Requirements req = pb.required;
  {
    CapacityUse usage(pb.set);
    for (std::size_t i = 0; i < n; ++i) {
      if (!req.pinned[i]) continue;
      if (usage.fits(pb.current[i])) {
        usage.add(pb.current[i]);
      } else {
        req.pinned[i] = 0;
        unmet.push_back(jobs[i].id());
      }
    }
  }
  // Forced jobs with nothing usable cannot be served at all.
  for (std::size_t i = 0; i < n; ++i)
    if (req.forced[i] && pb.valid[i].empty()) {
      req.forced[i] = 0;
      unmet.push_back(jobs[i].id());
    }

  MilpParams params;
  params.relative_gap = options.relative_gap;
  params.lp_duals = options.compute_prices;
  params.time_limit = remaining(options, start);
  params.threads = options.threads;
  const WarmStart* warm = options.warm_start.get();
  Formulation model;
  SolveOutcome out = solve_once(pb, req, solver, params, res.solve_ms, model, warm, cluster, jobs);
  const bool any_forced = std::any_of(req.forced.begin(), req.forced.end(), [](char f) { return f != 0; });
  if (out.result.status == MilpStatus::infeasible && any_forced) {
    // The waiting non-preemptible jobs cannot all start: solve without that requirement and
    // report those left without GPUs.
    Requirements relaxed{req.pinned, std::vector<char>(n, 0)};
    params.time_limit = remaining(options, start);
    out = solve_once(pb, relaxed, solver, params, res.solve_ms, model, warm, cluster, jobs);
    if (out.ok) {
      for (std::size_t i = 0; i < n; ++i)
        if (req.forced[i] && out.choice[i] < 0) unmet.push_back(jobs[i].id());
      req = std::move(relaxed);
    }
    // Otherwise keep the requirement: the greedy fallback then serves those jobs first and reports the
    // ones it cannot serve in `unmet` (a backend that wrongly says "infeasible" twice must not
    // silently drop them).
  }

  Choice choice;
  if (out.ok) {
    choice = out.choice;
    canonicalize_ties(pb, req, choice);
    prefer_current_on_ties(pb, req, choice);
    res.status = out.result.status == MilpStatus::optimal ? RoundStatus::optimal : RoundStatus::feasible;
    if (out.result.status == MilpStatus::feasible) res.message = "backend stopped at a limit: " + out.result.message;
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
    for (std::size_t i = 0; i < n; ++i)
      if (req.forced[i] && choice[i] < 0) unmet.push_back(jobs[i].id());
  }

  if (!res.fallback) res.warm_start = next_warm_start(pb, cluster, jobs, model, out.result, choice);
  res.objective = objective_of(pb, choice);
  res.best_bound = res.objective;
  if (out.ok && std::isfinite(out.result.best_bound)) res.best_bound = round_bound(pb, out.result.best_bound);
  if (out.ok && res.status == RoundStatus::optimal && pb.model_lambda != pb.lambda) {
    // The backend proved its gap for the model's λ (Problem::model_lambda); with the round's λ the
    // proof holds only when the bound shows as many waiting jobs as the allocation has.
    const double gap = std::abs(res.objective - res.best_bound);
    if (!(gap <= options.relative_gap * std::max(std::abs(res.objective), 1e-9) * (1.0 + 1e-9) + 1e-9)) {
      res.status = RoundStatus::feasible;
      res.message = "optimal for the binary program, but its bound does not prove the gap with lambda = " +
                    std::to_string(pb.lambda);
    }
  }

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
      const ConfigurationSpec& c = pb.set.configs[static_cast<std::size_t>(cfg)];
      d.config = c;
      d.gpus = v.gpus;
      res.gpus_used[static_cast<std::size_t>(c.type)] += c.gpus;
      if (j.has_batch_size())
        d.batch =
            j.batch_size(cluster.types[static_cast<std::size_t>(c.type)], ConfigurationSpec{c.type, c.nodes, v.gpus});
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
  const auto start = Clock::now();
  validate_options(options);
  return run_round_impl(cluster, jobs, options, solver, start);
}

}  // namespace sia
