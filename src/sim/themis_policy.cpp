// Themis (finish-time fairness) as Gavel formulates it: LPs at points ρ with Lagrangian lower bounds through
// the MILP layer, then Gavel's time-sharing rounds (see themis_policy.hpp).
#include <sia/error.hpp>
#include <sia/milp/factory.hpp>
#include <sia/sim/gavel_policy.hpp>
#include <sia/sim/limits.hpp>
#include <sia/sim/steps.hpp>
#include <sia/sim/themis_policy.hpp>

#include "sim/policy_solver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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

namespace {

/// The LP backend of a solve: a policy keeps one across its rounds (its simplex starts from the last LP's basis).
struct Backend {
  MilpSolver* solver = nullptr;  ///< null: `error` says why
  std::string name, error;
};

/// themis_solve() with the backend given and each job named by `ids[j]` (stable across a policy's rounds,
/// unique), which names its rows and columns: what matches an LP's basis to the next one's.
ThemisSolution solve_impl(const std::vector<std::vector<double>>& T, const std::vector<int>& gpus,
                          const std::vector<int>& cap, const std::vector<ThemisJob>& jobs,
                          const std::vector<std::uint64_t>& ids, const ThemisSolveOptions& options,
                          const Backend& backend) {
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

  if (backend.solver == nullptr) {
    sol.fallback = true;
    sol.message = "themis: no LP backend (" + backend.error + "); isolated allocation used";
    return sol;
  }
  MilpSolver& solver = *backend.solver;
  MilpParams params;
  params.time_limit = options.lp_time_limit;
  params.relative_gap = 1e-9;
  params.lp_duals = true;  // the lower bounds (below)
  // An LP needs no branch and bound: the backend's simplex alone when it has one (CBC: Clp's dual simplex
  // without a CbcModel around it).
  params.lp_method = solver.supports(LpMethod::simplex) ? LpMethod::simplex : LpMethod::automatic;

  // Rows and columns are named after the jobs' ids, the same in every LP of the solve and of the policy's next
  // rounds: a backend that warm-starts by name (CBC's simplex) starts each LP from the last one's basis, a
  // few pivots away (2 on average on the 936-job workload, against 94 from the slack basis).
  std::vector<std::string> tag(nj);
  for (std::size_t j = 0; j < nj; ++j) tag[j] = std::to_string(ids[j]);
  // The columns and the rows every LP has: time fractions, Σ_w x ≤ 1 per job, capacity per type.
  auto polytope = [&](MilpModel& m, std::vector<std::vector<int>>& col) {
    col.assign(nj, std::vector<int>(nt, -1));
    for (std::size_t j = 0; j < nj; ++j)
      for (std::size_t w = 0; w < nt; ++w)
        if (ub[j][w] > 0) col[j][w] = m.add_col(0.0, 0.0, ub[j][w], false, "x" + tag[j] + ":" + std::to_string(w));
    for (std::size_t j = 0; j < nj; ++j) {
      if (!served[j]) continue;
      const int share = m.add_row(-MilpModel::inf, 1.0, "s" + tag[j]);
      for (std::size_t w = 0; w < nt; ++w)
        if (col[j][w] >= 0) m.add_entry(share, col[j][w], 1.0);
    }
    for (std::size_t w = 0; w < nt; ++w) {
      const int row = m.add_row(-MilpModel::inf, static_cast<double>(cap[w]), "k" + std::to_string(w));
      for (std::size_t j = 0; j < nj; ++j)
        if (col[j][w] >= 0) m.add_entry(row, col[j][w], static_cast<double>(gpus[j]));
    }
  };
  auto read_x = [&](const MilpResult& res, const std::vector<std::vector<int>>& col,
                    std::vector<std::vector<double>>& x) {
    for (std::size_t j = 0; j < nj; ++j)
      for (std::size_t w = 0; w < nt; ++w)
        x[j][w] = col[j][w] >= 0 ? res.values[static_cast<std::size_t>(col[j][w])] : 0.0;
    sanitize(x, ub, gpus, cap);
  };
  auto failed = [&](const MilpResult& res) {
    return "themis: " + backend.name + " LP " + std::string(to_string(res.status)) +
           (res.message.empty() ? "" : " (" + res.message + ")");
  };

  // ρ_j(x) ≤ ρ ⇔ Σ_w T_jw x_jw ≥ f_j(ρ) = rem_j / (ρ D_j − t_j) for ρ > τ_j = t_j / D_j (f_j decreasing). The
  // LP at a point ρ, "maximise z s.t. Σ_w T_jw x_jw ≥ z f_j(ρ) for every job, x in the polytope", answers
  // both questions of the search at once:
  // - its x is an allocation (an upper bound max_j ρ_j(x)); with z ≥ 1 it meets every job's need at ρ, and
  //   as z is common to all jobs it spreads the slack over every job rather than leaving it idle (the
  //   allocation returned is that of the last such LP, within the tolerance of the optimum);
  // - its duals give a lower bound (Lagrangian): for any y_j ≥ 0 and any x in the polytope,
  //   Σ_j y_j Σ_w T_jw x_jw / f_j(ρ) ≤ Ψ(y) = max over the polytope, bounded from above by weak duality with
  //   any prices π_w ≥ 0 (capacity) and σ_j ≥ 0 (Σ_w x ≤ 1): Ψ ≤ Σ_w π_w C_w + Σ_j σ_j + Σ_jw (y_j T_jw /
  //   f_j(ρ) − π_w g_j − σ_j)⁺. An allocation achieving ρ' has Σ_w T x ≥ f_j(ρ'), hence
  //   φ(ρ') = Σ_j y_j f_j(ρ') / f_j(ρ) ≤ Ψ; φ decreases, so ρ* ≥ the root of φ = Ψ. This bound holds whatever
  //   y, π, σ ≥ 0 are (the LP's duals make it tight at the optimum: at ρ = ρ*, z = 1 = Σ y and the root is ρ*),
  //   and z < 1 proves ρ itself a lower bound.
  // The next LP is at the new lower bound (Newton-like: the root is where the LP at ρ would have z = 1 were its
  // duals unchanged), or halfway to the upper bound when that does not move. Started from the last round's
  // optimum (the policy's guess), one or two LPs a round.
  // One model for the whole solve: only the coefficients of the need rows change from LP to LP.
  MilpModel model;
  model.sense = MilpSense::maximize;
  std::vector<std::vector<int>> col;
  polytope(model, col);
  constexpr double kZmax = 4.0;
  const int z = model.add_col(1.0, 0.0, kZmax, false, "z");
  std::vector<int> need_row(nj, -1);
  std::vector<std::vector<std::size_t>> need_entry(nj);  // entries of the need rows, per type with a column
  for (std::size_t j = 0; j < nj; ++j) {
    if (!served[j]) continue;
    need_row[j] = model.add_row(0.0, MilpModel::inf, "n" + tag[j]);
    for (std::size_t w = 0; w < nt; ++w)
      if (col[j][w] >= 0) {
        need_entry[j].push_back(model.entries.size());
        model.add_entry(need_row[j], col[j][w], T[j][w]);
      }
    model.add_entry(need_row[j], z, -1.0);
  }
  const double tol = options.relative_tolerance;
  // The largest τ_j of the served jobs: every LP point must be above it (f_j is finite only there).
  double tau_max = 0;
  for (std::size_t j = 0; j < nj; ++j)
    if (served[j]) tau_max = std::max(tau_max, jobs[j].elapsed_s / jobs[j].isolated_time_s);
  auto valid_point = [&](double rho) { return std::isfinite(rho) && rho > tau_max * (1 + 1e-9) + 1e-12; };

  // The LP at `rho`: false when the backend failed (`why` set). On success the allocation is in `x`, z in
  // `zval` and the Lagrangian lower bound (or 0 when the duals give none) in `bound`.
  std::vector<double> need(nj, 0.0);
  auto solve_at = [&](double rho, std::vector<std::vector<double>>& x, double& zval, double& bound, bool& optimal,
                      std::string& why) -> bool {
    for (std::size_t j = 0; j < nj; ++j) {
      if (!served[j]) continue;
      const auto& q = jobs[j];
      need[j] = q.remaining_steps / (rho * q.isolated_time_s - q.elapsed_s);
      std::size_t k = 0;
      for (std::size_t w = 0; w < nt; ++w)
        if (col[j][w] >= 0) model.entries[need_entry[j][k++]].value = T[j][w] / need[j];
    }
    const auto res = solver.solve(model, params);
    ++sol.lp_solves;
    if ((res.status != MilpStatus::optimal && res.status != MilpStatus::feasible) ||
        res.values.size() != static_cast<std::size_t>(model.num_cols())) {
      why = failed(res);
      return false;
    }
    read_x(res, col, x);
    zval = res.values[static_cast<std::size_t>(z)];
    optimal = res.status == MilpStatus::optimal;
    bound = 0;
    if (res.row_duals.size() != static_cast<std::size_t>(model.num_rows())) return true;
    // Prices (clamped to ≥ 0: the bound is valid for any), in the model's own sense: a binding need row
    // (a lower bound) of a maximisation has a dual ≤ 0.
    std::vector<double> y(nj, 0.0), sigma(nj, 0.0), pi(nt, 0.0);
    double psi = 0;
    for (std::size_t j = 0; j < nj; ++j)
      if (served[j]) y[j] = std::max(0.0, -res.row_duals[static_cast<std::size_t>(need_row[j])]);
    // The polytope's rows: the share rows of the served jobs in order, then the capacity rows.
    std::size_t row = 0;
    for (std::size_t j = 0; j < nj; ++j)
      if (served[j]) sigma[j] = std::max(0.0, res.row_duals[row++]), psi += sigma[j];
    for (std::size_t w = 0; w < nt; ++w) pi[w] = std::max(0.0, res.row_duals[row++]), psi += pi[w] * cap[w];
    for (std::size_t j = 0; j < nj; ++j)
      for (std::size_t w = 0; w < nt; ++w)
        if (col[j][w] >= 0) psi += std::max(0.0, y[j] * T[j][w] / need[j] - pi[w] * gpus[j] - sigma[j]) * ub[j][w];
    // φ(ρ') = Σ_j y_j (ρ D_j − t_j) / (ρ' D_j − t_j), decreasing for ρ' above the τ_j of the jobs with y_j > 0.
    double left = 0;  // φ(left) = ∞ or left is no bound
    bool any = false;
    for (std::size_t j = 0; j < nj; ++j)
      if (y[j] > 0) left = std::max(left, jobs[j].elapsed_s / jobs[j].isolated_time_s), any = true;
    if (!any || !(psi > 0)) return true;
    auto phi = [&](double r) {
      double v = 0;
      for (std::size_t j = 0; j < nj; ++j)
        if (y[j] > 0) {
          const auto& q = jobs[j];
          v += y[j] * (rho * q.isolated_time_s - q.elapsed_s) / (r * q.isolated_time_s - q.elapsed_s);
        }
      return v;
    };
    double right = std::max(rho, 2 * left + 1);
    for (int k = 0; k < 200 && phi(right) > psi; ++k) right *= 2;
    if (!(phi(right) <= psi)) return true;
    // Bisection keeps φ(left) > Ψ (left is infeasible: a lower bound) and φ(right) ≤ Ψ.
    for (int k = 0; k < 200 && right - left > 1e-12 * right; ++k) {
      const double mid = 0.5 * (left + right);
      if (!(mid > left && mid < right)) break;
      (phi(mid) > psi ? left : right) = mid;
    }
    bound = left;
    return true;
  };

  std::vector<std::vector<double>> x(nj, std::vector<double>(nt, 0.0));
  bool any_ok = false;
  std::string why;
  // The first point: the caller's guess (the policy passes the last round's optimum, which moves little from
  // round to round), else the isolated allocation's ρ. Only the number of LPs depends on it.
  double at = std::isfinite(options.start_rho) && options.start_rho > lo ? options.start_rho
              : std::isfinite(best_rho)                                  ? best_rho
                                                                         : std::max(2 * lo, lo + 1);
  if (!valid_point(at)) at = std::max(2 * tau_max, tau_max + 1);
  // `best` is the allocation returned: the isolated one until an LP's allocation is at least as good.
  while (!(any_ok && best_rho - lo <= tol * best_rho) && sol.lp_solves < options.max_lp_solves) {
    double zval = 0, bound = 0;
    bool optimal = false;
    if (!solve_at(at, x, zval, bound, optimal, why)) break;
    const double r = max_rho(x);
    if (r <= best_rho) best_rho = r, best = x;
    any_ok = true;
    const double before = lo;
    lo = std::max(lo, bound);
    if (optimal && zval < 1) lo = std::max(lo, at);  // no allocation meets every need at `at`
    if (best_rho - lo <= tol * best_rho) break;
    // Next: the new lower bound when the duals moved it (and it is a valid point), else halfway to the upper
    // bound (a bisection step: z < 1 there raises the lower bound to it, z ≥ 1 lowers the upper bound).
    const double up = best_rho;
    double next = lo > before && lo != at && valid_point(lo) ? lo : 0.5 * (lo + up);
    if (!valid_point(next) || !(next < up)) next = 0.5 * (std::max(lo, tau_max) + up);
    if (!std::isfinite(up)) next = 2 * std::max({at, lo, tau_max, 0.5});  // no upper bound yet: look higher
    at = next;
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

Backend make_backend(const std::string& name, std::unique_ptr<MilpSolver>& owner) {
  auto choice = detail::make_policy_solver(name);
  owner = std::move(choice.solver);
  return Backend{owner.get(), std::move(choice.name), std::move(choice.error)};
}

}  // namespace

ThemisSolution themis_solve(const std::vector<std::vector<double>>& T, const std::vector<int>& gpus,
                            const std::vector<int>& cap, const std::vector<ThemisJob>& jobs,
                            const ThemisSolveOptions& options) {
  std::vector<std::uint64_t> ids(T.size());
  for (std::size_t j = 0; j < ids.size(); ++j) ids[j] = j;
  std::unique_ptr<MilpSolver> owner;
  const Backend backend = make_backend(options.backend, owner);
  return solve_impl(T, gpus, cap, jobs, ids, options, backend);
}

ThemisSolver::ThemisSolver() = default;
ThemisSolver::~ThemisSolver() = default;

ThemisSolution ThemisSolver::solve(const std::vector<std::vector<double>>& T, const std::vector<int>& gpus,
                                   const std::vector<int>& cap, const std::vector<ThemisJob>& jobs,
                                   const std::vector<std::uint64_t>& ids, const ThemisSolveOptions& options) {
  if (ids.size() != T.size())
    throw InvalidArgument("themis: " + std::to_string(ids.size()) + " ids for " + std::to_string(T.size()) + " jobs");
  std::vector<std::uint64_t> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  if (const auto it = std::adjacent_find(sorted.begin(), sorted.end()); it != sorted.end())
    throw InvalidArgument("themis: job id " + std::to_string(*it) + " appears twice");
  if (!made_ || options.backend != requested_) {
    const Backend b = make_backend(options.backend, solver_);
    requested_ = options.backend;
    name_ = b.name;
    error_ = b.error;
    made_ = true;
  }
  return solve_impl(T, gpus, cap, jobs, ids, options, Backend{solver_.get(), name_, error_});
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
  std::map<std::uint64_t, JobState> next;
  std::vector<JobState*> states(nj);
  for (std::size_t j = 0; j < nj; ++j) {
    SimJob& job = *ctx.jobs[j];
    job.kind = JobKind::rigid;  // Themis+TunedJobs: the workload's GPU count and batch size
    gpus[j] = std::max(1, job.target_replicas);
    batch[j] = static_cast<double>(std::max<long long>(job.target_batch_size, 1));
    JobState& st = next[job.uid];
    if (auto it = state_.find(job.uid); it != state_.end()) st = std::move(it->second);
    states[j] = &st;
    // The throughputs and the total steps depend on the job's model, GPU count and batch size only (and the
    // cluster): computed once per job, the same numbers as every round.
    if (st.gpus != gpus[j] || st.batch != batch[j] || st.throughput.size() != nt) {
      st.gpus = gpus[j];
      st.batch = batch[j];
      st.throughput.assign(nt, 0.0);
      for (std::size_t k = 0; k < nt; ++k)
        st.throughput[k] =
            gpus[j] <= cap[k] ? gavel_throughput(*job.app, cluster, static_cast<int>(k), gpus[j], batch[j]) : 0.0;
      st.total_steps = options_.isolated_time == ThemisIsolatedTime::artifact ? total_steps(*job.app, batch[j]) : 0.0;
      st.rem_epoch = -1;
    }
    T[j] = st.throughput;
  }
  const auto x_iso = themis_isolated_allocation(gpus, cap);
  std::vector<ThemisJob> q(nj);
  for (std::size_t j = 0; j < nj; ++j) {
    const SimJob& job = *ctx.jobs[j];
    JobState& st = *states[j];
    double iso = 0;
    for (std::size_t k = 0; k < nt; ++k) iso += T[j][k] * x_iso[j][k];
    // A job that did not run since the last round has the same remaining steps (a sum over its epochs).
    if (job.completed() || st.rem_epoch != job.epoch || !(st.rem_progress == job.progress)) {
      st.rem = remaining_steps(job, batch[j]);
      st.rem_epoch = job.completed() ? -1 : job.epoch;
      st.rem_progress = job.progress;
    }
    const double rem = st.rem;
    q[j].elapsed_s = std::max(0.0, ctx.now - job.submission_time);
    q[j].remaining_steps = std::isfinite(rem) ? rem : 0.0;
    if (st.prev_remaining >= 0 && st.prev_isolated_throughput > 0)
      st.cumulative_isolated_s += std::max(0.0, st.prev_remaining - q[j].remaining_steps) / st.prev_isolated_throughput;
    st.prev_remaining = q[j].remaining_steps;
    st.prev_isolated_throughput = iso;
    const double rest = iso > 0 ? q[j].remaining_steps / iso : 0.0;
    double d = 0;
    switch (options_.isolated_time) {
      case ThemisIsolatedTime::artifact: {
        const double total = st.total_steps;
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
  }
  state_ = std::move(next);
  ThemisSolveOptions solve = options_.solve;
  if (!std::isfinite(solve.start_rho) && std::isfinite(last_.rho) && last_.rho > 0) solve.start_rho = last_.rho;
  std::vector<std::uint64_t> ids(nj);
  for (std::size_t j = 0; j < nj; ++j) ids[j] = ctx.jobs[j]->uid;
  last_ = solver_.solve(T, gpus, cap, q, ids, solve);
  return rounds_.schedule(cluster, ctx.jobs, gpus, last_.x);
}

namespace detail {
PolicyInfo builtin_policy_themis() {
  PolicyInfo info;
  info.name = "themis";
  info.description =
      "Themis (NSDI 2020) + TunedJobs: finish-time fairness (Gavel's formulation, exact by "
      "LPs with Lagrangian bounds) and round-based time sharing";
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
