// Shockwave (NSDI 2023) on open solvers: the planning MILP through the MILP layer, the dropped-constraints and
// re-ranking solves, greedy fallback, and the simulator policy (see shockwave_policy.hpp).
#include <sia/error.hpp>
#include <sia/milp/factory.hpp>
#include <sia/sim/gavel_policy.hpp>
#include <sia/sim/limits.hpp>
#include <sia/sim/shockwave_policy.hpp>
#include <sia/sim/steps.hpp>
#include <sia/sim/time_sharing.hpp>

#include "sim/policy_solver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <numeric>

namespace sia::sim {

namespace {

void validate(const std::vector<ShockwaveJob>& jobs, int gpus, const ShockwaveOptions& o) {
  if (gpus < 1) throw InvalidArgument("shockwave: the cluster needs at least one GPU, got " + std::to_string(gpus));
  if (!(o.interval_s > 0) || !std::isfinite(o.interval_s))
    throw InvalidArgument("shockwave: interval_s must be positive");
  if (o.window < 1) throw InvalidArgument("shockwave: window must be at least 1 round");
  if (o.time_limit.count() < 0) throw InvalidArgument("shockwave: time_limit must be >= 0 ms");
  if (o.node_limit < 0) throw InvalidArgument("shockwave: node_limit must be >= 0 (0: none)");
  if (!(o.k >= 0) || !std::isfinite(o.k)) throw InvalidArgument("shockwave: k must be finite and >= 0");
  if (!(o.lambda >= 0) || !std::isfinite(o.lambda)) throw InvalidArgument("shockwave: lambda must be finite and >= 0");
  if (!(o.rho_max > 0) || !std::isfinite(o.rho_max)) throw InvalidArgument("shockwave: rho_max must be positive");
  if (!(o.log_origin > 0 && o.log_origin < 1)) throw InvalidArgument("shockwave: log_origin must be in (0, 1)");
  if (!(o.max_weight >= 1) || !std::isfinite(o.max_weight)) throw InvalidArgument("shockwave: max_weight must be >= 1");
  const auto& b = o.breakpoints;
  if (b.size() < 2 || b.front() != 0.0 || b.back() != 1.0 || !std::is_sorted(b.begin(), b.end()) ||
      std::adjacent_find(b.begin(), b.end()) != b.end())
    throw InvalidArgument("shockwave: breakpoints must increase strictly from 0 to 1");
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const auto& q = jobs[j];
    const std::string who = "shockwave: job " + std::to_string(j) + ": ";
    if (q.gpus < 1) throw InvalidArgument(who + "needs at least one GPU");
    if (!(q.step_time_s > 0) || !std::isfinite(q.step_time_s))
      throw InvalidArgument(who + "step_time_s must be positive");
    if (!(q.total_steps > 0) || !std::isfinite(q.total_steps))
      throw InvalidArgument(who + "total_steps must be positive");
    if (!(q.done_steps >= 0) || q.done_steps > q.total_steps)
      throw InvalidArgument(who + "done_steps must lie in [0, total_steps]");
    if (!(q.elapsed_s >= 0) || !std::isfinite(q.elapsed_s))
      throw InvalidArgument(who + "elapsed_s must be finite and >= 0");
    if (!(q.fair_finish_s > 0) || !std::isfinite(q.fair_finish_s))
      throw InvalidArgument(who + "fair_finish_s must be positive");
  }
}

/// Column indices of the planning MILP.
struct PlanCols {
  std::vector<std::vector<int>> x;  ///< jobs × window (the per-round model)
  std::vector<int> n;               ///< jobs: planned rounds (the aggregated model)
};

/// The planning MILP with objective weights `w`; `ftf` adds the finish-time-fairness rows. `aggregated`: one
/// integer n_j ∈ [0, window] per job (its planned rounds) and Σ_j gpus_j·n_j ≤ window·G instead of the binaries
/// x[j][r] and a capacity row per round — a relaxation (see shockwave_plan).
MilpModel plan_model(const std::vector<ShockwaveJob>& jobs, int gpus, const ShockwaveOptions& o,
                     const std::vector<double>& w, bool ftf, bool aggregated, PlanCols& cols) {
  const std::size_t J = jobs.size();
  const int R = o.window;
  const auto K = o.breakpoints.size();
  const double share = std::min(1.0, static_cast<double>(gpus) / static_cast<double>(J));
  const double norm = static_cast<double>(J) * R;
  MilpModel m;
  m.sense = MilpSense::maximize;
  cols.x.assign(J, std::vector<int>(static_cast<std::size_t>(R), -1));
  cols.n.assign(J, -1);
  const int M = m.add_col(-o.k, 0.0, MilpModel::inf, false, "M");
  std::vector<int> cap_rows(aggregated ? 1 : static_cast<std::size_t>(R));
  for (auto& row : cap_rows) row = m.add_row(-MilpModel::inf, aggregated ? static_cast<double>(R) * gpus : gpus);
  for (std::size_t j = 0; j < J; ++j) {
    const auto& q = jobs[j];
    const double left = q.total_steps - q.done_steps;
    const int plan = m.add_row(-MilpModel::inf, 0.0);  // τ p − interval Σ_r x ≤ 0
    if (aggregated) {
      const int c = m.add_col(0.0, 0.0, q.gpus <= gpus ? R : 0.0, true);
      cols.n[j] = c;
      m.add_entry(cap_rows.front(), c, q.gpus);
      m.add_entry(plan, c, -o.interval_s);
    } else {
      for (int r = 0; r < R; ++r) {
        const int c = m.add_col(0.0, 0.0, q.gpus <= gpus ? 1.0 : 0.0, true);
        cols.x[j][static_cast<std::size_t>(r)] = c;
        m.add_entry(cap_rows[static_cast<std::size_t>(r)], c, q.gpus);
        m.add_entry(plan, c, -o.interval_s);
      }
    }
    const int p = m.add_col(0.0, 0.0, left, false);
    m.add_entry(plan, p, q.step_time_s);
    // u_j = (done + p) / total = Σ_k λ_k B_k, Σ λ = 1. Shockwave also keeps λ on one segment (pairwise
    // exclusions; here they were one binary per segment), but they are redundant: log is strictly concave, so
    // its piecewise-linear interpolant on the breakpoints is concave, and for any u the weights that maximise
    // Σ_k λ_k log B_k (w_j > 0) are the two adjacent breakpoints around u — the interpolant itself. Every x has
    // the same objective with or without them, so the optimum and the optimal plans are the same with K − 1
    // fewer binaries per job.
    const int cursor = m.add_row(q.done_steps / q.total_steps, q.done_steps / q.total_steps);
    m.add_entry(cursor, p, -1.0 / q.total_steps);
    const int convex = m.add_row(1.0, 1.0);
    for (std::size_t k = 0; k < K; ++k) {
      const double b = o.breakpoints[k];
      const double logb = std::log(b > 0 ? b : o.log_origin);
      const int lam = m.add_col(w[j] * logb / norm, 0.0, 1.0, false);
      m.add_entry(cursor, lam, b);
      m.add_entry(convex, lam, 1.0);
    }
    // m_j ≥ remaining − τ p (and ≥ 0 by its bound), M ≥ m_j.
    const int mj = m.add_col(0.0, 0.0, MilpModel::inf, false);
    const int rem = m.add_row(q.remaining_s(), MilpModel::inf);
    m.add_entry(rem, mj, 1.0);
    m.add_entry(rem, p, q.step_time_s);
    const int mx = m.add_row(0.0, MilpModel::inf);
    m.add_entry(mx, M, 1.0);
    m.add_entry(mx, mj, -1.0);
    if (ftf) {  // elapsed + window·interval + m_j / share ≤ ρ_max F_j
      const int row =
          m.add_row(-MilpModel::inf, share * (o.rho_max * q.fair_finish_s - q.elapsed_s - R * o.interval_s));
      m.add_entry(row, mj, 1.0);
    }
  }
  return m;
}

std::vector<std::vector<char>> read_plan(const PlanCols& cols, const std::vector<double>& v) {
  std::vector<std::vector<char>> x(cols.x.size());
  for (std::size_t j = 0; j < cols.x.size(); ++j)
    for (int c : cols.x[j]) x[j].push_back(v[static_cast<std::size_t>(c)] > 0.5 ? 1 : 0);
  return x;
}

/// Planned rounds per job (`n`) spread over `window` rounds of `gpus` GPUs, or empty when they do not pack (or
/// the search gave up: `budget` search nodes, a deterministic limit). Depth-first over the jobs, largest first;
/// each job takes n_j rounds with room for it, rounds with the same free GPUs being interchangeable (only one
/// representative choice per multiset of free counts is tried), the roomiest first — so the first leaf is the
/// greedy packing; a branch is cut when the GPUs or the rounds with room left cannot hold the jobs left.
std::vector<std::vector<char>> pack_counts(const std::vector<int>& n, const std::vector<ShockwaveJob>& jobs, int gpus,
                                           int window, long long budget = 200000) {
  const std::size_t R = static_cast<std::size_t>(window);
  std::vector<std::size_t> order;
  for (std::size_t j = 0; j < jobs.size(); ++j)
    if (n[j] > 0) order.push_back(j);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return jobs[a].gpus != jobs[b].gpus ? jobs[a].gpus > jobs[b].gpus : n[a] > n[b];
  });
  std::vector<long long> need_after(order.size() + 1, 0);  // GPU-rounds of order[i..]
  for (std::size_t i = order.size(); i-- > 0;)
    need_after[i] = need_after[i + 1] + static_cast<long long>(jobs[order[i]].gpus) * n[order[i]];
  std::vector<std::vector<char>> x(jobs.size(), std::vector<char>(R, 0));
  std::vector<long long> free(R, gpus);
  long long nodes = 0;
  // Place order[i..]; true when all placed (x filled), false when impossible or over budget.
  auto place = [&](auto& self, std::size_t i) -> bool {
    if (i == order.size()) return true;
    if (++nodes > budget) return false;
    const std::size_t j = order[i];
    const long long g = jobs[j].gpus;
    // Rounds by free GPUs (most first, earliest first on ties), grouped by equal free counts.
    std::vector<std::size_t> rounds;
    long long room = 0;
    for (std::size_t r = 0; r < R; ++r)
      if (free[r] >= g) rounds.push_back(r), room += free[r];
    if (rounds.size() < static_cast<std::size_t>(n[j]) || room < need_after[i]) return false;
    std::stable_sort(rounds.begin(), rounds.end(), [&](std::size_t a, std::size_t b) { return free[a] > free[b]; });
    std::vector<std::pair<std::size_t, std::size_t>> groups;  // [begin, end) in `rounds`
    for (std::size_t k = 0; k < rounds.size(); ++k)
      if (k == 0 || free[rounds[k]] != free[rounds[k - 1]])
        groups.emplace_back(k, k + 1);
      else
        groups.back().second = k + 1;
    // Choose c_v rounds from group v (its first ones), Σ c_v = n_j, more from roomier groups first.
    std::vector<std::size_t> take(groups.size(), 0);
    auto choose = [&](auto& chooser, std::size_t v, int left) -> bool {
      if (left == 0) {
        for (std::size_t u = 0; u < v; ++u)
          for (std::size_t k = 0; k < take[u]; ++k) {
            const std::size_t r = rounds[groups[u].first + k];
            x[j][r] = 1;
            free[r] -= g;
          }
        if (self(self, i + 1)) return true;
        for (std::size_t u = 0; u < v; ++u)
          for (std::size_t k = 0; k < take[u]; ++k) {
            const std::size_t r = rounds[groups[u].first + k];
            x[j][r] = 0;
            free[r] += g;
          }
        return false;
      }
      if (v == groups.size() || nodes > budget) return false;
      const auto size = static_cast<int>(groups[v].second - groups[v].first);
      for (int c = std::min(size, left); c >= 0; --c) {
        take[v] = static_cast<std::size_t>(c);
        if (chooser(chooser, v + 1, left - c)) return true;
      }
      take[v] = 0;
      return false;
    };
    return choose(choose, 0, n[j]);
  };
  if (!place(place, 0)) return {};
  return x;
}

/// The planning objective of a plan with n_j planned rounds per job (the MILP's, at its best p, λ, m and M for
/// those counts: p_j = min(left, interval·n_j / τ_j), the piecewise-linear log of the progress, k × the largest
/// runtime left).
double counts_objective(const std::vector<ShockwaveJob>& jobs, const std::vector<int>& n, const std::vector<double>& w,
                        const ShockwaveOptions& o) {
  const auto& b = o.breakpoints;
  const double norm = static_cast<double>(jobs.size()) * o.window;
  double sum = 0, worst = 0;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const auto& q = jobs[j];
    const double left = q.total_steps - q.done_steps;
    const double p = std::min(left, o.interval_s * n[j] / q.step_time_s);
    const double u = std::clamp((q.done_steps + p) / q.total_steps, 0.0, 1.0);
    std::size_t k = 0;
    while (k + 2 < b.size() && u > b[k + 1]) ++k;
    auto lg = [&](double v) { return std::log(v > 0 ? v : o.log_origin); };
    const double t = (u - b[k]) / (b[k + 1] - b[k]);
    sum += w[j] * ((1 - t) * lg(b[k]) + t * lg(b[k + 1])) / norm;
    worst = std::max(worst, std::max(0.0, q.remaining_s() - q.step_time_s * p));
  }
  return sum - o.k * worst;
}

/// Whether job j with `n` planned rounds meets its finish-time-fairness row.
bool counts_meet_ftf(const std::vector<ShockwaveJob>& jobs, std::size_t j, int n, double share,
                     const ShockwaveOptions& o) {
  const auto& q = jobs[j];
  const double p = std::min(q.total_steps - q.done_steps, o.interval_s * n / q.step_time_s);
  const double m = std::max(0.0, q.remaining_s() - q.step_time_s * p);
  return m <= share * (o.rho_max * q.fair_finish_s - q.elapsed_s - o.window * o.interval_s) + 1e-9;
}

/// Shockwave's weight ρ^e of a job over its finish-time-fairness bound, numerically bounded: up to `cap` it is
/// ρ^e, beyond it cap·(1 + ln(1 + ln(ρ^e / cap))) — continuous, strictly increasing in ρ (so jobs further behind
/// always weigh more) and within a few times `cap` (6.6·cap for ρ^100 at ρ = 16). A single logarithm,
/// cap·(1 + ln(ρ^e / cap)), reached 7.7e7 on a Table 4 round (ρ^100 of a job about to finish), and CBC 2.10.8
/// crashed on that planning MILP (SIGSEGV in CbcNode::chooseDynamicBranch).
double unfairness_weight(double ratio, double e, double cap) {
  const double lw = e * std::log(ratio), lc = std::log(cap);
  return lw <= lc ? std::exp(lw) : cap * (1.0 + std::log1p(lw - lc));
}

bool usable(const MilpResult& r, const MilpModel& m) {
  return (r.status == MilpStatus::optimal || r.status == MilpStatus::feasible) &&
         r.values.size() == static_cast<std::size_t>(m.num_cols()) && m.is_feasible(r.values, 1e-5);
}

/// Keeps the plan within capacity whatever the solver returned (drops the latest jobs of an over-full round).
void enforce_capacity(std::vector<std::vector<char>>& x, const std::vector<ShockwaveJob>& jobs, int gpus) {
  if (x.empty()) return;
  for (std::size_t r = 0; r < x.front().size(); ++r) {
    long long used = 0;
    for (std::size_t j = 0; j < x.size(); ++j)
      if (x[j][r]) {
        if (used + jobs[j].gpus > gpus)
          x[j][r] = 0;
        else
          used += jobs[j].gpus;
      }
  }
}

/// Shockwave's re-ranking solve: the same number of planned rounds per job, jobs with high weights earlier
/// (minimise Σ_j w_j · mean planned round index of j), within capacity. Keeps the plan when the solve fails.
template <class Record>
void rerank(ShockwavePlan& plan, const std::vector<ShockwaveJob>& jobs, int gpus, MilpSolver& solver,
            const MilpParams& params, const Record& record) {
  const std::size_t J = jobs.size();
  const int R = plan.x.empty() ? 0 : static_cast<int>(plan.x.front().size());
  MilpModel rank;
  rank.sense = MilpSense::minimize;
  std::vector<std::vector<int>> y(J, std::vector<int>(static_cast<std::size_t>(R), -1));
  std::vector<int> cap_rows(static_cast<std::size_t>(R));
  for (int t = 0; t < R; ++t) cap_rows[static_cast<std::size_t>(t)] = rank.add_row(-MilpModel::inf, gpus);
  bool any = false;
  for (std::size_t j = 0; j < J; ++j) {
    const int n = static_cast<int>(std::count(plan.x[j].begin(), plan.x[j].end(), 1));
    if (n == 0) continue;
    any = true;
    const int row = rank.add_row(n, n);
    for (int t = 0; t < R; ++t) {
      const int c = rank.add_col(plan.weights[j] * t / n, 0.0, 1.0, true);
      y[j][static_cast<std::size_t>(t)] = c;
      rank.add_entry(row, c, 1.0);
      rank.add_entry(cap_rows[static_cast<std::size_t>(t)], c, jobs[j].gpus);
    }
  }
  if (!any) return;
  const auto rr = solver.solve(rank, params);
  record("re-ranking", false, rr);
  if (!usable(rr, rank)) {
    plan.message = "shockwave: re-ranking solve " + std::string(to_string(rr.status)) + "; unranked plan kept";
    return;
  }
  for (std::size_t j = 0; j < J; ++j)
    for (int t = 0; t < R; ++t) {
      const int c = y[j][static_cast<std::size_t>(t)];
      plan.x[j][static_cast<std::size_t>(t)] = c >= 0 && rr.values[static_cast<std::size_t>(c)] > 0.5 ? 1 : 0;
    }
  enforce_capacity(plan.x, jobs, gpus);
}

}  // namespace

double shockwave_momentum_average(const std::vector<std::pair<int, double>>& series, int now, double momentum) {
  if (series.empty()) throw InvalidArgument("shockwave: momentum average of an empty series");
  std::vector<double> windows;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const int next = i + 1 < series.size() ? series[i + 1].first : std::max(now, series[i].first);
    windows.push_back(std::max(0, next - series[i].first));
  }
  const double total = std::accumulate(windows.begin(), windows.end(), 0.0);
  double avg = 0.0;
  if (total <= 0) {
    avg = series.front().second;  // every value recorded in the same round: Shockwave weighs only the first
  } else {
    for (std::size_t i = 0; i < series.size(); ++i) avg += windows[i] / total * series[i].second;
  }
  return momentum * avg + (1.0 - momentum) * series.back().second;
}

ShockwavePlan shockwave_plan(const std::vector<ShockwaveJob>& jobs, int gpus, const ShockwaveOptions& o) {
  validate(jobs, gpus, o);
  const std::size_t J = jobs.size();
  const int R = o.window;
  ShockwavePlan plan;
  plan.x.assign(J, std::vector<char>(static_cast<std::size_t>(R), 0));
  plan.weights.assign(J, 1.0);
  if (J == 0) return plan;
  const double share = std::min(1.0, static_cast<double>(gpus) / static_cast<double>(J));
  std::vector<double> ratio(J);
  for (std::size_t j = 0; j < J; ++j)
    ratio[j] = (jobs[j].elapsed_s + jobs[j].remaining_s() / share) / jobs[j].fair_finish_s;

  // The greedy plan: jobs by FTF ratio, then by remaining runtime, packed into every round.
  auto greedy = [&](const std::string& why) {
    std::vector<std::size_t> order(J);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      if (ratio[a] != ratio[b]) return ratio[a] > ratio[b];
      return jobs[a].remaining_s() > jobs[b].remaining_s();
    });
    for (auto& row : plan.x) std::fill(row.begin(), row.end(), 0);
    int left = gpus;
    for (std::size_t j : order)
      if (jobs[j].gpus <= left) {
        left -= jobs[j].gpus;
        std::fill(plan.x[j].begin(), plan.x[j].end(), 1);
      }
    plan.fallback = true;
    plan.status = MilpStatus::error;
    plan.objective = 0.0;
    plan.message = why + "; greedy plan used";
    return plan;
  };

  auto choice = detail::make_policy_solver(o.backend);
  if (!choice.solver) return greedy("shockwave: no MILP backend (" + choice.error + ")");
  auto& solver = choice.solver;
  const std::string& backend = choice.name;
  MilpParams params;
  // Node-limited solves (CBC honours MilpParams::node_limit; GLPK and native do not) run without a wall-clock
  // limit, so their plans never depend on the machine's load: the node limit bounds the search, and the wall
  // clock only reports a slow solve. Without a node limit the wall clock is the only bound and stops the solve.
  const bool node_limited = o.node_limit > 0 && backend == "cbc";
  if (!node_limited) params.time_limit = o.time_limit;
  params.node_limit = o.node_limit;
  params.relative_gap = o.relative_gap;
  params.lp_duals = false;
  auto record = [&](const char* model, bool ftf, const MilpResult& r) {
    ShockwaveSolve s;
    s.model = model;
    s.ftf = ftf;
    s.status = r.status;
    s.nodes = r.nodes;
    s.node_limit_reached = node_limited && r.nodes >= o.node_limit;
    s.wall_s = std::chrono::duration<double>(r.wall_time).count();
    s.slow = r.wall_time >= o.time_limit;
    s.stopped_by_wall_clock = s.slow && !node_limited && r.status != MilpStatus::optimal &&
                              r.status != MilpStatus::infeasible && r.status != MilpStatus::unbounded;
    plan.slow_solves += s.slow;
    plan.wall_clock_stopped = plan.wall_clock_stopped || s.stopped_by_wall_clock;
    plan.log.push_back(std::move(s));
    ++plan.solves;
  };
  auto describe = [&](const MilpResult& r) {
    return "shockwave: " + backend + " " + std::string(to_string(r.status)) +
           (r.message.empty() ? "" : " (" + r.message + ")");
  };

  // (1) With the finish-time-fairness constraints, unless one of them is infeasible on its own.
  bool ftf_possible = true;
  for (const auto& q : jobs) {
    const double bound = share * (o.rho_max * q.fair_finish_s - q.elapsed_s - R * o.interval_s);
    const double least = std::max(0.0, q.remaining_s() - R * o.interval_s);
    if (bound < least - 1e-9) ftf_possible = false;
  }
  // Every solve: the objective and the finish-time-fairness rows depend on x only through each job's number of
  // planned rounds n_j, so first the aggregated model (integer n_j, one capacity row Σ gpus·n ≤ window·G: a
  // relaxation, J integers instead of J × window binaries and none of the rounds' symmetry), then its counts
  // packed into rounds. When they pack, that plan is feasible for the per-round model and as good as the
  // relaxation's answer, hence an answer of the per-round model within the same gap; when they do not, the
  // per-round model is solved as before. An infeasible relaxation proves the per-round model infeasible.
  auto solve = [&](bool ftf, MilpResult& out) -> bool {
    PlanCols cols;
    std::vector<std::vector<char>> repaired;  // a packed plan from the relaxation's counts, when one was made
    double repaired_objective = -std::numeric_limits<double>::infinity();
    const auto agg = plan_model(jobs, gpus, o, plan.weights, ftf, true, cols);
    out = solver->solve(agg, params);
    record("aggregated", ftf, out);
    if (out.status == MilpStatus::infeasible) return false;
    if (usable(out, agg)) {
      std::vector<int> n(J);
      for (std::size_t j = 0; j < J; ++j)
        n[j] = static_cast<int>(std::lround(out.values[static_cast<std::size_t>(cols.n[j])]));
      if (auto x = pack_counts(n, jobs, gpus, R); !x.empty()) {
        plan.x = std::move(x);
        return true;
      }
      // The counts do not pack: take planned rounds away, each time the one whose loss of objective is least
      // (never below a job's finish-time-fairness minimum), until they pack. That plan is feasible; when it is
      // within the solve's relative gap of the relaxation's bound it is an answer by the very criterion the
      // solver stops on, and no per-round solve is needed.
      const double bound = std::isfinite(out.best_bound) ? out.best_bound : out.objective;
      std::vector<int> least(J, 0);
      if (ftf)
        for (std::size_t j = 0; j < J; ++j)
          while (least[j] < n[j] && !counts_meet_ftf(jobs, j, least[j], share, o)) ++least[j];
      for (;;) {
        double best_loss = std::numeric_limits<double>::infinity();
        std::size_t drop = J;
        const double now = counts_objective(jobs, n, plan.weights, o);
        for (std::size_t j = 0; j < J; ++j) {
          if (n[j] <= least[j]) continue;
          --n[j];
          const double loss = now - counts_objective(jobs, n, plan.weights, o);
          ++n[j];
          if (loss < best_loss) best_loss = loss, drop = j;
        }
        if (drop == J) break;
        --n[drop];
        repaired = pack_counts(n, jobs, gpus, R);
        if (repaired.empty()) continue;
        repaired_objective = counts_objective(jobs, n, plan.weights, o);
        if (bound - repaired_objective <= params.relative_gap * std::abs(repaired_objective)) {
          plan.x = std::move(repaired);
          out.objective = repaired_objective;
          out.best_bound = bound;
          return true;
        }
        break;
      }
    }
    // The per-round model, within the node limit; the better of its answer and the repaired plan.
    const auto m = plan_model(jobs, gpus, o, plan.weights, ftf, false, cols);
    MilpResult full = solver->solve(m, params);
    record("per-round", ftf, full);
    ++plan.per_round_solves;
    if (usable(full, m) && (repaired.empty() || full.objective >= repaired_objective)) {
      out = std::move(full);
      plan.x = read_plan(cols, out.values);
      enforce_capacity(plan.x, jobs, gpus);
      return true;
    }
    if (repaired.empty()) {
      out = std::move(full);
      return false;
    }
    plan.x = std::move(repaired);
    out.status = MilpStatus::feasible;
    out.objective = repaired_objective;
    return true;
  };
  std::string last_error;
  MilpResult r;
  if (ftf_possible) {
    if (solve(true, r)) {
      plan.status = r.status;
      plan.objective = r.objective;
      return plan;
    }
    if (r.status != MilpStatus::infeasible) last_error = describe(r);
  }
  // (2) Constraints dropped: weights ρ_j^λ for the jobs over ρ_max (ρ^100 when one round would finish them).
  // Beyond max_weight the weights grow with log ρ instead of stopping there: a flat cap gave every job over
  // ρ = max_weight^(1/λ) (3.16 at λ = 12) the same weight, the re-ranking solve then had no reason to run the
  // latest of them first, and as each round's plan is made again from almost the same inputs by a
  // deterministic solver, the same tied job stayed in a later planned round round after round (on Fig. 8's
  // trace a 15-minute job waited 25 rounds while its ρ went from 4 to 14).
  plan.ftf_dropped = true;
  for (std::size_t j = 0; j < J; ++j) {
    if (ratio[j] <= o.rho_max) continue;
    const double e = jobs[j].remaining_s() < o.interval_s ? 100.0 : o.lambda;
    plan.weights[j] = unfairness_weight(ratio[j], e, o.max_weight);
  }
  if (!solve(false, r)) return greedy(describe(r) + (last_error.empty() ? "" : "; " + last_error));
  plan.status = r.status;
  plan.objective = r.objective;
  rerank(plan, jobs, gpus, *solver, params, record);
  return plan;
}

ShockwavePolicy::ShockwavePolicy(ShockwaveOptions options) : options_(std::move(options)) { validate({}, 1, options_); }

void ShockwavePolicy::report_solves(double now) {
  if (options_.log_solves)
    for (const auto& s : last_.log) {
      char line[256];
      std::snprintf(line, sizeof line, "shockwave: round %d t=%.0f s jobs=%zu: %s%s %s, %lld nodes%s, %.3f s%s\n",
                    round_, now, last_.x.size(), s.model.c_str(), s.ftf ? " (ftf)" : "",
                    std::string(to_string(s.status)).c_str(), s.nodes, s.node_limit_reached ? " (node limit)" : "",
                    s.wall_s,
                    s.stopped_by_wall_clock ? " (stopped by the wall clock)"
                    : s.slow                ? " (over the wall-clock safety net)"
                                            : "");
      std::cerr << line;
    }
  const long long stops = std::count_if(last_.log.begin(), last_.log.end(),
                                        [](const ShockwaveSolve& s) { return s.stopped_by_wall_clock; });
  // One warning per policy for each kind: the first slow solve, the first stopped one.
  if (last_.slow_solves > 0 && slow_solves_ == 0) {
    const auto it = std::find_if(last_.log.begin(), last_.log.end(), [](const ShockwaveSolve& s) { return s.slow; });
    std::cerr << "sia: warning: shockwave: a MILP solve (" << it->model << " model) took " << it->wall_s
              << " s of wall clock at t = " << now
              << " s, over the safety net time_limit_ms = " << options_.time_limit.count()
              << (it->stopped_by_wall_clock
                      ? ""
                      : "; not stopped: its node limit bounds it, so the schedule does not depend on the load")
              << "\n";
  }
  if (stops > 0 && wall_clock_stops_ == 0)
    std::cerr << "sia: warning: shockwave: a MILP solve was stopped by the wall clock at t = " << now
              << " s (time_limit_ms = " << options_.time_limit.count() << ", no node limit on backend '"
              << options_.backend << "'): from here the schedule depends on the machine's load\n";
  slow_solves_ += last_.slow_solves;
  wall_clock_stops_ += stops;
}

std::vector<SimAllocation> ShockwavePolicy::allocate(const PolicyContext& ctx) {
  const SimCluster& cluster = *ctx.cluster;
  const std::size_t nt = cluster.types.size();
  const std::size_t nj = ctx.jobs.size();
  ++round_;
  const int G = static_cast<int>(cluster.total_gpus());  // at most INT_MAX: the cluster loaders check
  std::vector<SimAllocation> out(nj);
  if (nj == 0 || G <= 0) return out;
  const double share = std::min(1.0, static_cast<double>(G) / static_cast<double>(nj));
  std::vector<ShockwaveJob> q(nj);
  std::map<std::uint64_t, JobState> next;
  for (std::size_t j = 0; j < nj; ++j) {
    SimJob& job = *ctx.jobs[j];
    job.kind = JobKind::rigid;  // Shockwave+TunedJobs: the workload's GPU count and batch size
    const int gpus = std::max(1, job.target_replicas);
    const double batch = static_cast<double>(std::max<long long>(job.target_batch_size, 1));
    // Seconds per step: Gavel's oracle averaged over the types the job fits on (the Sia port's
    // predict_iter_time_avg_cluster).
    double tau = 0;
    int fits = 0;
    for (std::size_t k = 0; k < nt; ++k) {
      if (gpus > cluster.type_gpus(static_cast<int>(k))) continue;
      const double thr = gavel_throughput(*job.app, cluster, static_cast<int>(k), gpus, batch);
      if (thr > 0) tau += 1.0 / thr, ++fits;
    }
    const double total = total_steps(*job.app, batch);
    const double rem = remaining_steps(job, batch);
    q[j].gpus = gpus;
    q[j].step_time_s = fits > 0 ? tau / fits : 1e9;  // a job that fits nowhere can never be planned usefully
    q[j].total_steps = std::isfinite(total) && total > 0 ? total : 1.0;
    q[j].done_steps = std::clamp(q[j].total_steps - (std::isfinite(rem) ? rem : 0.0), 0.0, q[j].total_steps);
    q[j].elapsed_s = std::max(0.0, ctx.now - job.submission_time);
    JobState& st = next[job.uid];
    if (auto it = state_.find(job.uid); it != state_.end()) st = std::move(it->second);
    st.fair_finish.emplace_back(round_, q[j].step_time_s * q[j].total_steps / share);
    q[j].fair_finish_s = std::max(1e-9, shockwave_momentum_average(st.fair_finish, round_));
  }
  state_ = std::move(next);
  last_ = shockwave_plan(q, G, options_);
  report_solves(ctx.now);

  // This round: the plan's first round, then work conservation (longest remaining runtime first).
  std::vector<char> run(nj, 0);
  int left = G;
  for (std::size_t j = 0; j < nj; ++j)
    if (!last_.x[j].empty() && last_.x[j][0] && q[j].gpus <= left) run[j] = 1, left -= q[j].gpus;
  std::vector<std::size_t> rest;
  for (std::size_t j = 0; j < nj; ++j)
    if (!run[j]) rest.push_back(j);
  std::stable_sort(rest.begin(), rest.end(),
                   [&](std::size_t a, std::size_t b) { return q[a].remaining_s() > q[b].remaining_s(); });
  for (std::size_t j : rest)
    if (q[j].gpus <= left) run[j] = 1, left -= q[j].gpus;

  // Placement: previous nodes kept when free, else one GPU type node by node in cluster order.
  std::vector<std::vector<int>> free_gpus(nt);
  for (std::size_t k = 0; k < nt; ++k)
    free_gpus[k].assign(static_cast<std::size_t>(cluster.types[k].nodes), cluster.types[k].gpus_per_node);
  std::vector<std::size_t> order;
  for (std::size_t j = 0; j < nj; ++j)
    if (run[j]) order.push_back(j);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return q[a].gpus > q[b].gpus; });
  std::vector<char> placed(nj, 0);
  auto keep_previous = [&](std::size_t j) {
    auto& st = state_.at(ctx.jobs[j]->uid);
    if (st.type < 0 || st.nodes.empty()) return;
    int prev = 0;
    for (const auto& [n, g] : st.nodes) prev += g;
    if (prev != q[j].gpus) return;
    auto got = place_whole_gpus(free_gpus[static_cast<std::size_t>(st.type)], q[j].gpus, st.nodes);
    if (got != st.nodes) {  // not all previous nodes free: undo
      for (const auto& [n, g] : got) free_gpus[static_cast<std::size_t>(st.type)][static_cast<std::size_t>(n)] += g;
      return;
    }
    placed[j] = 1;
    out[j] = SimAllocation{st.type, static_cast<int>(st.nodes.size()), q[j].gpus};
  };
  auto place_new = [&](std::size_t j) {
    if (placed[j]) return;
    auto& st = state_.at(ctx.jobs[j]->uid);
    for (std::size_t k = 0; k < nt && !placed[j]; ++k) {
      auto got = place_whole_gpus(free_gpus[k], q[j].gpus, {});
      if (got.empty()) continue;
      st.type = static_cast<int>(k);
      st.nodes = std::move(got);
      placed[j] = 1;
      out[j] = SimAllocation{st.type, static_cast<int>(st.nodes.size()), q[j].gpus};
    }
  };
  // By GPU count, largest first (the Sia port's order): a count's jobs keep their previous nodes when free, then
  // the rest of them are placed, before any smaller job keeps its nodes — so a small job's old nodes never keep
  // a large job from the only type it fits on.
  for (std::size_t i = 0; i < order.size();) {
    std::size_t end = i;
    while (end < order.size() && q[order[end]].gpus == q[order[i]].gpus) ++end;
    for (std::size_t t = i; t < end; ++t) keep_previous(order[t]);
    for (std::size_t t = i; t < end; ++t) place_new(order[t]);
    i = end;
  }
  // A chosen job that fits on no GPU type (the plan counts the cluster's GPUs, not its types: no type may have
  // its GPUs free) leaves them idle; they go to the jobs left out, most unfair first (the plan's weights, then
  // ρ, then the longest remaining runtime, as work conservation). On Fig. 8's trace a 16-GPU job chosen in 23
  // rounds could not be placed in any of them, and its GPUs stayed idle while the plan waited for it.
  std::vector<std::size_t> backfill;
  for (std::size_t j = 0; j < nj; ++j)
    if (!run[j]) backfill.push_back(j);
  std::vector<double> ratio(nj);
  for (std::size_t j = 0; j < nj; ++j) ratio[j] = (q[j].elapsed_s + q[j].remaining_s() / share) / q[j].fair_finish_s;
  std::stable_sort(backfill.begin(), backfill.end(), [&](std::size_t a, std::size_t b) {
    if (last_.weights[a] != last_.weights[b]) return last_.weights[a] > last_.weights[b];
    if (ratio[a] != ratio[b]) return ratio[a] > ratio[b];
    return q[a].remaining_s() > q[b].remaining_s();
  });
  for (std::size_t j : backfill) {
    auto& st = state_.at(ctx.jobs[j]->uid);
    for (std::size_t k = 0; k < nt && !placed[j]; ++k) {
      auto got = place_whole_gpus(free_gpus[k], q[j].gpus,
                                  st.type == static_cast<int>(k) ? st.nodes : std::vector<std::pair<int, int>>{});
      if (got.empty()) continue;
      st.type = static_cast<int>(k);
      st.nodes = std::move(got);
      placed[j] = 1;
      out[j] = SimAllocation{st.type, static_cast<int>(st.nodes.size()), q[j].gpus};
    }
  }
  for (std::size_t j = 0; j < nj; ++j)
    if (!placed[j]) {
      auto& st = state_.at(ctx.jobs[j]->uid);
      st.type = -1;
      st.nodes.clear();
    }
  return out;
}

namespace detail {
PolicyInfo builtin_policy_shockwave() {
  PolicyInfo info;
  info.name = "shockwave";
  info.description =
      "Shockwave (NSDI 2023) + TunedJobs: MILP plans over a window of rounds (open solvers), "
      "finish-time-fairness constraints, re-planned every round";
  const ShockwaveOptions d;
  info.options = {
      {"window", std::to_string(d.window), "planned rounds"},
      {"k", "1e-9", "weight of the largest remaining runtime (per second)"},
      {"lambda", "12", "exponent of the FTF-ratio weights when the constraints are dropped"},
      {"rho_max", "1", "finish-time-fairness bound"},
      {"backend", "auto", "MILP backend (auto: cbc, else glpk, else native)"},
      {"node_limit", std::to_string(d.node_limit),
       "branch-and-bound nodes per MILP solve (0: none), the deterministic limit (CBC)"},
      {"time_limit_ms", std::to_string(d.time_limit.count()),
       "wall-clock safety net per MILP solve (ms): a node-limited solve over it is only reported (a warning); "
       "without a node limit (glpk, native, node_limit=0) it stops the solve, and the results depend on the load"},
      {"log_solves", "false", "one line per MILP solve on standard error (model, status, nodes, wall time)"},
      {"gap", "1e-3", "relative gap of the MILP solves"},
      {"interval_s", "360", interval_option_help()},
  };
  info.make = [](const PolicyOptions& o) {
    ShockwaveOptions so;
    so.window = static_cast<int>(o.integer("window", so.window, 1, 1000));
    so.k = o.number("k", so.k, 0.0, 1e12);
    so.lambda = o.number("lambda", so.lambda, 0.0, 1000.0);
    so.rho_max = o.number("rho_max", so.rho_max, 1e-6, 1e6);
    so.backend = o.text("backend", "auto");
    so.time_limit = std::chrono::milliseconds(o.integer("time_limit_ms", so.time_limit.count(), 1, 86400000));
    so.node_limit = o.integer("node_limit", so.node_limit, 0, 1000000000);
    so.log_solves = o.boolean("log_solves", so.log_solves);
    so.relative_gap = o.number("gap", so.relative_gap, 0.0, 1.0);
    so.interval_s = o.number("interval_s", so.interval_s, kMinIntervalS, kMaxIntervalS);
    return std::unique_ptr<Policy>(std::make_unique<ShockwavePolicy>(so));
  };
  return info;
}
}  // namespace detail

}  // namespace sia::sim
