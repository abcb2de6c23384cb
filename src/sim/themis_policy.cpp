// Themis (finish-time fairness) as Gavel formulates it: Newton/cutting-plane LPs on ρ through the MILP layer,
// then Gavel's time-sharing rounds (see themis_policy.hpp).
#include <sia/error.hpp>
#include <sia/milp/factory.hpp>
#include <sia/sim/gavel_policy.hpp>
#include <sia/sim/limits.hpp>
#include <sia/sim/steps.hpp>
#include <sia/sim/themis_policy.hpp>

#include "sim/policy_solver.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sia::sim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void validate(const std::vector<std::vector<double>>& T, const std::vector<int>& gpus, const std::vector<int>& cap,
              const std::vector<ThemisJob>& jobs) {
  const std::size_t nj = T.size();
  if (gpus.size() != nj || jobs.size() != nj)
    throw InvalidArgument("themis: " + std::to_string(nj) + " throughput rows, " + std::to_string(gpus.size()) +
                          " GPU counts and " + std::to_string(jobs.size()) + " jobs: one of each per job expected");
  for (std::size_t j = 0; j < nj; ++j) {
    const std::string who = "themis: job " + std::to_string(j) + ": ";
    if (T[j].size() != cap.size())
      throw InvalidArgument(who + "throughput has " + std::to_string(T[j].size()) + " entries for " +
                            std::to_string(cap.size()) + " GPU types");
    for (double v : T[j])
      if (!std::isfinite(v) || v < 0) throw InvalidArgument(who + "throughput must be finite and non-negative");
    if (gpus[j] < 1) throw InvalidArgument(who + "needs at least one GPU, got " + std::to_string(gpus[j]));
    const auto& q = jobs[j];
    if (!std::isfinite(q.elapsed_s) || q.elapsed_s < 0)
      throw InvalidArgument(who + "elapsed_s must be finite and >= 0");
    if (!std::isfinite(q.remaining_steps) || q.remaining_steps < 0)
      throw InvalidArgument(who + "remaining_steps must be finite and >= 0");
    if (!std::isfinite(q.isolated_time_s) || !(q.isolated_time_s > 0))
      throw InvalidArgument(who + "isolated_time_s must be a positive number");
  }
  for (std::size_t w = 0; w < cap.size(); ++w)
    if (cap[w] < 0) throw InvalidArgument("themis: GPU type " + std::to_string(w) + " has negative capacity");
}

/// Clamps to the bounds and scales rows and columns back into the polytope (LP solutions are feasible only
/// within the backend's tolerance).
void sanitize(std::vector<std::vector<double>>& x, const std::vector<std::vector<double>>& ub,
              const std::vector<int>& gpus, const std::vector<int>& cap) {
  for (std::size_t j = 0; j < x.size(); ++j) {
    double row = 0;
    for (std::size_t w = 0; w < x[j].size(); ++w) {
      double& v = x[j][w];
      v = std::isfinite(v) ? std::clamp(v, 0.0, ub[j][w]) : 0.0;
      row += v;
    }
    if (row > 1)
      for (double& v : x[j]) v /= row;
  }
  for (std::size_t w = 0; w < cap.size(); ++w) {
    double used = 0;
    for (std::size_t j = 0; j < x.size(); ++j) used += gpus[j] * x[j][w];
    if (used > cap[w] && used > 0)
      for (auto& row : x) row[w] *= cap[w] / used;
  }
}

}  // namespace

std::vector<std::vector<double>> themis_isolated_allocation(const std::vector<int>& gpus,
                                                            const std::vector<int>& capacity) {
  const std::size_t m = gpus.size();
  std::vector<std::vector<double>> x(m, std::vector<double>(capacity.size(), 0.0));
  for (std::size_t j = 0; j < m; ++j) {
    double row = 0;
    for (std::size_t w = 0; w < capacity.size(); ++w) {
      x[j][w] = static_cast<double>(capacity[w]) / static_cast<double>(m) / std::max(1, gpus[j]);
      row += x[j][w];
    }
    if (row > 1)
      for (double& v : x[j]) v /= row;
  }
  return x;
}

std::vector<double> themis_rhos(const std::vector<std::vector<double>>& T, const std::vector<ThemisJob>& jobs,
                                const std::vector<std::vector<double>>& x) {
  std::vector<double> rho(jobs.size(), 0.0);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    double thr = 0;
    for (std::size_t w = 0; w < T[j].size() && w < x[j].size(); ++w) thr += T[j][w] * x[j][w];
    const auto& q = jobs[j];
    if (q.remaining_steps <= 0)
      rho[j] = q.elapsed_s / q.isolated_time_s;
    else
      rho[j] = thr > 0 ? (q.elapsed_s + q.remaining_steps / thr) / q.isolated_time_s : kInf;
  }
  return rho;
}

ThemisSolution themis_solve(const std::vector<std::vector<double>>& T, const std::vector<int>& gpus,
                            const std::vector<int>& cap, const std::vector<ThemisJob>& jobs,
                            const ThemisSolveOptions& options) {
  validate(T, gpus, cap, jobs);
  if (!(options.relative_tolerance > 0) || options.max_lp_solves < 1)
    throw InvalidArgument("themis: relative_tolerance must be positive and max_lp_solves at least 1");
  const std::size_t nj = T.size(), nt = cap.size();
  ThemisSolution sol;
  sol.x.assign(nj, std::vector<double>(nt, 0.0));
  if (nj == 0 || nt == 0) return sol;

  // A job never runs on a type with fewer GPUs than it needs (whole-GPU rounds), nor where it has no
  // throughput; a job without remaining steps needs no time at all.
  std::vector<std::vector<double>> ub(nj, std::vector<double>(nt, 0.0));
  std::vector<char> served(nj, 0);
  for (std::size_t j = 0; j < nj; ++j)
    for (std::size_t w = 0; w < nt; ++w)
      if (gpus[j] <= cap[w] && T[j][w] > 0 && jobs[j].remaining_steps > 0) {
        ub[j][w] = 1.0;
        served[j] = 1;
      }
  // Jobs that count towards max ρ: served ones (a job with no throughput anywhere cannot be helped).
  auto counts = [&](std::size_t j) { return served[j] || jobs[j].remaining_steps <= 0; };
  auto max_rho = [&](const std::vector<std::vector<double>>& x) {
    const auto r = themis_rhos(T, jobs, x);
    double m = 0;
    for (std::size_t j = 0; j < nj; ++j)
      if (counts(j)) m = std::max(m, r[j]);
    return m;
  };
  double lo = 0;
  bool any_need = false;
  for (std::size_t j = 0; j < nj; ++j) {
    if (!counts(j)) continue;
    lo = std::max(lo, jobs[j].elapsed_s / jobs[j].isolated_time_s);
    any_need |= served[j] != 0;
  }
  auto best = themis_isolated_allocation(gpus, cap);
  sanitize(best, ub, gpus, cap);
  double best_rho = max_rho(best);
  sol.x = best;
  sol.rho = best_rho;
  sol.rho_lower = lo;
  if (!any_need) {  // nothing to decide: every job is done or cannot run anywhere
    for (auto& row : sol.x) std::fill(row.begin(), row.end(), 0.0);
    sol.rho = max_rho(sol.x);
    return sol;
  }

  auto choice = detail::make_policy_solver(options.backend);
  if (!choice.solver) {
    sol.fallback = true;
    sol.message = "themis: no LP backend (" + choice.error + "); isolated allocation used";
    return sol;
  }
  MilpSolver& solver = *choice.solver;
  const std::string& backend = choice.name;
  MilpParams params;
  params.time_limit = options.lp_time_limit;
  params.relative_gap = 1e-9;
  params.lp_duals = false;
  // An LP needs no branch and bound: the backend's simplex alone when it has one (CBC: Clp's dual simplex
  // without a CbcModel around it).
  params.lp_method = solver.supports(LpMethod::simplex) ? LpMethod::simplex : LpMethod::automatic;

  // ρ_j(x) ≤ ρ ⇔ Σ_w T_jw x_jw ≥ f_j(ρ) = rem_j / (ρ D_j − t_j) for ρ > τ_j = t_j / D_j, and f_j is convex and
  // decreasing there: its tangents are below it. So the LP "minimise ρ s.t. Σ_w T_jw x_jw ≥ every tangent of
  // f_j taken so far, x in the polytope" relaxes the problem: its optimum is a lower bound on the optimum, and
  // its x an allocation, whose max ρ_j(x) is an upper bound. Tangents at the last LP's ρ make this Newton's
  // method on the optimality system (quadratic convergence: the gap after a step of size Δ is O(Δ²)); they are
  // kept (Kelley's cutting planes), so the lower bounds never decrease.
  std::vector<std::vector<double>> cut_at(nj);  // per job, the points of its tangents
  // The first tangents: at the caller's guess (the policy passes the last round's optimum, which moves little
  // from round to round), else at the isolated allocation's ρ. Only the number of LPs depends on it.
  const double rho0 = std::isfinite(options.start_rho) && options.start_rho > lo ? options.start_rho
                      : std::isfinite(best_rho)                                  ? best_rho
                                                                                 : std::max(2 * lo, lo + 1);
  auto add_cuts = [&](double rho, const std::vector<double>& rho_x) {
    for (std::size_t j = 0; j < nj; ++j) {
      if (!served[j]) continue;
      const double tau = jobs[j].elapsed_s / jobs[j].isolated_time_s;
      // Any tangent is valid; f_j has none at or below τ_j. A job whose τ_j is at the LP's ρ (the LP sat on
      // the lower bound of ρ) gets the tangent at its own ρ_j(x) instead, which cuts that LP's answer off;
      // halfway to the first point when it got no throughput.
      double c = rho;
      if (!(c > tau * (1 + 1e-9) + 1e-12))
        c = j < rho_x.size() && std::isfinite(rho_x[j]) ? rho_x[j] : 0.5 * (tau + rho0);
      if (!(c > tau)) continue;
      auto& cs = cut_at[j];
      if (std::find(cs.begin(), cs.end(), c) == cs.end()) cs.push_back(c);
    }
  };

  // The relaxed LP; returns its optimum (a lower bound, negative when the backend failed), the allocation in `x`.
  auto lp = [&](std::vector<std::vector<double>>& x, std::string& why) -> double {
    MilpModel m;
    m.sense = MilpSense::minimize;
    std::vector<std::vector<int>> col(nj, std::vector<int>(nt, -1));
    for (std::size_t j = 0; j < nj; ++j)
      for (std::size_t w = 0; w < nt; ++w)
        if (ub[j][w] > 0) col[j][w] = m.add_col(0.0, 0.0, ub[j][w], false);
    const int r = m.add_col(1.0, lo, MilpModel::inf, false);
    for (std::size_t j = 0; j < nj; ++j) {
      if (!served[j]) continue;
      const auto& q = jobs[j];
      // The tangent at c, times s/rem with s = c D − t:  (s/rem) Σ_w T x + (D/s) ρ ≥ 1 + D c / s.
      for (double c : cut_at[j]) {
        const double s = c * q.isolated_time_s - q.elapsed_s;
        const int row = m.add_row(1.0 + q.isolated_time_s * c / s, MilpModel::inf);
        for (std::size_t w = 0; w < nt; ++w)
          if (col[j][w] >= 0) m.add_entry(row, col[j][w], s / q.remaining_steps * T[j][w]);
        m.add_entry(row, r, q.isolated_time_s / s);
      }
      const int share = m.add_row(-MilpModel::inf, 1.0);
      for (std::size_t w = 0; w < nt; ++w)
        if (col[j][w] >= 0) m.add_entry(share, col[j][w], 1.0);
    }
    for (std::size_t w = 0; w < nt; ++w) {
      const int row = m.add_row(-MilpModel::inf, static_cast<double>(cap[w]));
      for (std::size_t j = 0; j < nj; ++j)
        if (col[j][w] >= 0) m.add_entry(row, col[j][w], static_cast<double>(gpus[j]));
    }
    const auto res = solver.solve(m, params);
    ++sol.lp_solves;
    if (res.status != MilpStatus::optimal || res.values.size() != static_cast<std::size_t>(m.num_cols())) {
      why = "themis: " + backend + " LP " + std::string(to_string(res.status)) +
            (res.message.empty() ? "" : " (" + res.message + ")");
      return -1.0;
    }
    for (std::size_t j = 0; j < nj; ++j)
      for (std::size_t w = 0; w < nt; ++w)
        x[j][w] = col[j][w] >= 0 ? res.values[static_cast<std::size_t>(col[j][w])] : 0.0;
    sanitize(x, ub, gpus, cap);
    return res.values[static_cast<std::size_t>(r)];
  };

  std::vector<std::vector<double>> x(nj, std::vector<double>(nt, 0.0));
  bool any_ok = false;
  std::string why;
  const double tol = options.relative_tolerance;
  double at = rho0;
  std::vector<double> rho_x;
  while (!(best_rho - lo <= tol * best_rho) && sol.lp_solves < options.max_lp_solves) {
    add_cuts(at, rho_x);
    const double bound = lp(x, why);
    if (bound < 0) break;
    any_ok = true;
    lo = std::max(lo, bound);
    rho_x = themis_rhos(T, jobs, x);
    const double r = max_rho(x);
    if (r < best_rho) best_rho = r, best = x;
    at = bound;
  }
  // The allocation: the LPs above end on a vertex of "minimise ρ", which leaves every job that is not a
  // bottleneck exactly at the bound and spare capacity idle. Like the bisection this replaces (and Gavel's
  // convex solve, whose answer is central), the answer is the allocation of one more LP at the converged upper
  // bound ρ̄: maximise a common factor z of the throughput needs at ρ̄ (z ≥ 1 as best achieves ρ̄), which spreads
  // the slack over every job. Kept when its max ρ_j is within the tolerance of ρ̄.
  auto spread = [&](double rho, std::vector<std::vector<double>>& x, std::string& why) -> bool {
    MilpModel m;
    m.sense = MilpSense::maximize;
    std::vector<std::vector<int>> col(nj, std::vector<int>(nt, -1));
    for (std::size_t j = 0; j < nj; ++j)
      for (std::size_t w = 0; w < nt; ++w)
        if (ub[j][w] > 0) col[j][w] = m.add_col(0.0, 0.0, ub[j][w], false);
    constexpr double kZmax = 4.0;
    const int z = m.add_col(1.0, 0.0, kZmax, false);
    for (std::size_t j = 0; j < nj; ++j) {
      if (!served[j]) continue;
      const auto& q = jobs[j];
      const double slack = rho * q.isolated_time_s - q.elapsed_s;
      if (!(slack > 0)) return false;
      const double need = q.remaining_steps / slack;
      const int r = m.add_row(0.0, MilpModel::inf);
      for (std::size_t w = 0; w < nt; ++w)
        if (col[j][w] >= 0) m.add_entry(r, col[j][w], T[j][w] / need);
      m.add_entry(r, z, -1.0);
      const int r1 = m.add_row(-MilpModel::inf, 1.0);
      for (std::size_t w = 0; w < nt; ++w)
        if (col[j][w] >= 0) m.add_entry(r1, col[j][w], 1.0);
    }
    for (std::size_t w = 0; w < nt; ++w) {
      const int r = m.add_row(-MilpModel::inf, static_cast<double>(cap[w]));
      for (std::size_t j = 0; j < nj; ++j)
        if (col[j][w] >= 0) m.add_entry(r, col[j][w], static_cast<double>(gpus[j]));
    }
    const auto res = solver.solve(m, params);
    ++sol.lp_solves;
    if ((res.status != MilpStatus::optimal && res.status != MilpStatus::feasible) ||
        res.values.size() != static_cast<std::size_t>(m.num_cols())) {
      why = "themis: " + backend + " LP " + std::string(to_string(res.status)) +
            (res.message.empty() ? "" : " (" + res.message + ")");
      return false;
    }
    for (std::size_t j = 0; j < nj; ++j)
      for (std::size_t w = 0; w < nt; ++w)
        x[j][w] = col[j][w] >= 0 ? res.values[static_cast<std::size_t>(col[j][w])] : 0.0;
    sanitize(x, ub, gpus, cap);
    return true;
  };
  if (any_ok && std::isfinite(best_rho) && best_rho - lo <= tol * best_rho && spread(best_rho, x, why)) {
    const double r = max_rho(x);
    if (r - lo <= tol * r) best = x;
  }
  sol.x = std::move(best);
  sol.rho = max_rho(sol.x);
  sol.rho_lower = std::min(lo, sol.rho);
  if (!why.empty()) {
    sol.message = why + (any_ok ? "; best allocation found so far used" : "; isolated allocation used");
    sol.fallback = !any_ok;
  } else if (std::isfinite(sol.rho) && sol.rho - sol.rho_lower > options.relative_tolerance * sol.rho) {
    sol.message = "themis: stopped after " + std::to_string(sol.lp_solves) + " LPs before the tolerance";
  }
  return sol;
}

ThemisPolicy::ThemisPolicy(ThemisPolicyOptions options) : options_(std::move(options)), rounds_(options_.interval_s) {
  if (!(options_.interval_s > 0)) throw InvalidArgument("themis: interval_s must be positive");
}

std::vector<SimAllocation> ThemisPolicy::allocate(const PolicyContext& ctx) {
  const SimCluster& cluster = *ctx.cluster;
  const std::size_t nt = cluster.types.size();
  const std::size_t nj = ctx.jobs.size();
  const double interval = options_.interval_s;
  std::vector<std::vector<double>> T(nj, std::vector<double>(nt, 0.0));
  std::vector<int> gpus(nj, 1), cap(nt, 0);
  for (std::size_t k = 0; k < nt; ++k) cap[k] = cluster.type_gpus(static_cast<int>(k));
  std::vector<double> batch(nj, 1.0);
  for (std::size_t j = 0; j < nj; ++j) {
    SimJob& job = *ctx.jobs[j];
    job.kind = JobKind::rigid;  // Themis+TunedJobs: the workload's GPU count and batch size
    gpus[j] = std::max(1, job.target_replicas);
    batch[j] = static_cast<double>(std::max<long long>(job.target_batch_size, 1));
    for (std::size_t k = 0; k < nt; ++k)
      T[j][k] = gpus[j] <= cap[k] ? gavel_throughput(*job.app, cluster, static_cast<int>(k), gpus[j], batch[j]) : 0.0;
  }
  const auto x_iso = themis_isolated_allocation(gpus, cap);
  std::vector<ThemisJob> q(nj);
  std::map<std::uint64_t, JobState> next;
  for (std::size_t j = 0; j < nj; ++j) {
    const SimJob& job = *ctx.jobs[j];
    double iso = 0;
    for (std::size_t k = 0; k < nt; ++k) iso += T[j][k] * x_iso[j][k];
    const double rem = remaining_steps(job, batch[j]);
    q[j].elapsed_s = std::max(0.0, ctx.now - job.submission_time);
    q[j].remaining_steps = std::isfinite(rem) ? rem : 0.0;
    JobState st;
    if (auto it = state_.find(job.uid); it != state_.end()) st = it->second;
    if (st.prev_remaining >= 0 && st.prev_isolated_throughput > 0)
      st.cumulative_isolated_s += std::max(0.0, st.prev_remaining - q[j].remaining_steps) / st.prev_isolated_throughput;
    st.prev_remaining = q[j].remaining_steps;
    st.prev_isolated_throughput = iso;
    const double rest = iso > 0 ? q[j].remaining_steps / iso : 0.0;
    double d = 0;
    switch (options_.isolated_time) {
      case ThemisIsolatedTime::artifact: {
        const double total = total_steps(*job.app, batch[j]);
        const double prestart = interval - std::fmod(job.submission_time, interval) + job.app->constants.rescale_time_s;
        d = prestart + (iso > 0 && std::isfinite(total) ? total / iso : 0.0);
        break;
      }
      case ThemisIsolatedTime::gavel:
        d = st.cumulative_isolated_s + rest;
        break;
      case ThemisIsolatedTime::elapsed:
        d = q[j].elapsed_s + rest;
        break;
    }
    q[j].isolated_time_s = d > 0 && std::isfinite(d) ? d : 1.0;
    next[job.uid] = st;
  }
  state_ = std::move(next);
  ThemisSolveOptions solve = options_.solve;
  if (!std::isfinite(solve.start_rho) && std::isfinite(last_.rho) && last_.rho > 0) solve.start_rho = last_.rho;
  last_ = themis_solve(T, gpus, cap, q, solve);
  return rounds_.schedule(cluster, ctx.jobs, gpus, last_.x);
}

namespace detail {
PolicyInfo builtin_policy_themis() {
  PolicyInfo info;
  info.name = "themis";
  info.description =
      "Themis (NSDI 2020) + TunedJobs: finish-time fairness (Gavel's formulation, exact by "
      "Newton/cutting-plane LPs) and round-based time sharing";
  info.options = {
      {"isolated_time", "artifact",
       "denominator of rho: artifact (the Sia artifact's), gavel (Gavel's code) or elapsed"},
      {"lp_backend", "auto", "MILP backend of the LPs (auto: cbc, else glpk, else native)"},
      {"tolerance", "1e-6", "relative tolerance on the optimal rho"},
      {"lp_time_limit_ms", "5000", "time limit per LP (ms)"},
      {"interval_s", "360", interval_option_help()},
  };
  info.make = [](const PolicyOptions& o) {
    ThemisPolicyOptions to;
    const std::string it = o.choice("isolated_time", "artifact", {"artifact", "gavel", "elapsed"});
    to.isolated_time = it == "gavel"     ? ThemisIsolatedTime::gavel
                       : it == "elapsed" ? ThemisIsolatedTime::elapsed
                                         : ThemisIsolatedTime::artifact;
    to.solve.backend = o.text("lp_backend", "auto");
    to.solve.relative_tolerance = o.number("tolerance", to.solve.relative_tolerance, 1e-12, 0.5);
    to.solve.lp_time_limit =
        std::chrono::milliseconds(o.integer("lp_time_limit_ms", to.solve.lp_time_limit.count(), 1, 86400000));
    to.interval_s = o.number("interval_s", to.interval_s, kMinIntervalS, kMaxIntervalS);
    return std::unique_ptr<Policy>(std::make_unique<ThemisPolicy>(to));
  };
  return info;
}
}  // namespace detail

}  // namespace sia::sim
