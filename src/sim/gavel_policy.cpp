// Gavel baseline (reference §6.5). The LP has many optimal solutions; only an interior-point solution
// (the reference used ECOS) reproduces the paper's schedule (reference §10), so the LP is solved through
// the MILP layer with LpMethod::interior: Clp's barrier in the default build (backend "cbc"), GLPK's
// glp_interior when chosen. Without such a backend a documented fractional greedy stands in.
#include <sia/error.hpp>
#include <sia/goodput/goodput_function.hpp>
#include <sia/milp/factory.hpp>
#include <sia/sim/gavel_policy.hpp>
#include <sia/sim/limits.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sia::sim {

namespace {

/// The max-sum-throughput LP as a MilpModel: column j*nt+k is x[j][k].
MilpModel gavel_model(const std::vector<std::vector<double>>& T, const std::vector<int>& scale,
                      const std::vector<int>& cap) {
  MilpModel m;
  m.sense = MilpSense::maximize;
  const std::size_t nt = cap.size();
  for (std::size_t j = 0; j < T.size(); ++j)
    for (std::size_t k = 0; k < nt; ++k) (void)m.add_col(T[j][k], 0.0, MilpModel::inf, false);
  for (std::size_t j = 0; j < T.size(); ++j) {
    const int row = m.add_row(-MilpModel::inf, 1.0);
    for (std::size_t k = 0; k < nt; ++k) m.add_entry(row, static_cast<int>(j * nt + k), 1.0);
  }
  for (std::size_t k = 0; k < nt; ++k) {
    const int row = m.add_row(-MilpModel::inf, static_cast<double>(cap[k]));
    for (std::size_t j = 0; j < T.size(); ++j)
      m.add_entry(row, static_cast<int>(j * nt + k), static_cast<double>(scale[j]));
  }
  return m;
}

/// Solves the LP with `backend`; false when it reports no optimal solution or its "optimal" values break the
/// LP's own rows (a backend's wrong answer must not reach the time-sharing mechanism as priorities).
bool solve_lp(const std::vector<std::vector<double>>& T, const std::vector<int>& scale, const std::vector<int>& cap,
              MilpSolver& solver, LpMethod method, std::vector<std::vector<double>>& x) {
  MilpParams params;
  params.lp_method = method;
  params.lp_duals = false;
  const MilpResult r = solver.solve(gavel_model(T, scale, cap), params);
  if (r.status != MilpStatus::optimal) return false;
  const std::size_t nt = cap.size();
  constexpr double tol = 1e-6;  // interior-point answers sit slightly outside their rows
  std::vector<double> used(nt, 0.0);
  for (std::size_t j = 0; j < x.size(); ++j) {
    double share = 0.0;
    for (std::size_t k = 0; k < nt; ++k) {
      const double v = r.values[j * nt + k];
      if (!std::isfinite(v) || v < -tol) return false;
      x[j][k] = v;
      share += v;
      used[k] += v * scale[j];
    }
    if (share > 1 + tol) return false;
  }
  for (std::size_t k = 0; k < nt; ++k)
    if (used[k] > cap[k] + tol * std::max(1, cap[k])) return false;
  return true;
}

/// Fractional greedy: pairs by throughput per GPU, each filled as far as the job's and the type's room allow.
void solve_greedy(const std::vector<std::vector<double>>& T, const std::vector<int>& scale, const std::vector<int>& cap,
                  std::vector<std::vector<double>>& x) {
  struct Pair {
    double value;
    std::size_t j, k;
  };
  std::vector<Pair> pairs;
  for (std::size_t j = 0; j < T.size(); ++j)
    for (std::size_t k = 0; k < cap.size(); ++k)
      if (T[j][k] > 0) pairs.push_back({T[j][k] / std::max(1, scale[j]), j, k});
  std::stable_sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) { return a.value > b.value; });
  std::vector<double> job_left(T.size(), 1.0), room(cap.begin(), cap.end());
  for (const auto& p : pairs) {
    const double s = std::max(1, scale[p.j]);
    const double v = std::min(job_left[p.j], room[p.k] / s);
    if (v <= 0) continue;
    x[p.j][p.k] = v;
    job_left[p.j] -= v;
    room[p.k] -= v * s;
  }
}

}  // namespace

std::string gavel_lp_backend() {
  for (const auto& name : available_milp_solvers())
    if (make_milp_solver(name)->supports(LpMethod::interior)) return name;
  return {};
}

bool gavel_has_lp_solver() noexcept {
  try {
    return !gavel_lp_backend().empty();
  } catch (...) {
    return false;
  }
}

std::vector<std::vector<double>> gavel_solve_lp(const std::vector<std::vector<double>>& T,
                                                const std::vector<int>& scale, const std::vector<int>& cap,
                                                GavelLpMethod method, const std::string& backend) {
  if (scale.size() != T.size())
    throw InvalidArgument("gavel LP: scale has " + std::to_string(scale.size()) + " entries for " +
                          std::to_string(T.size()) + " jobs");
  for (std::size_t j = 0; j < T.size(); ++j) {
    if (T[j].size() != cap.size())
      throw InvalidArgument("gavel LP: throughput row " + std::to_string(j) + " has " + std::to_string(T[j].size()) +
                            " entries for " + std::to_string(cap.size()) + " types");
    for (double v : T[j])
      if (!std::isfinite(v) || v < 0)
        throw InvalidArgument("gavel LP: throughput of job " + std::to_string(j) +
                              " is not a finite non-negative number");
    if (scale[j] < 1) throw InvalidArgument("gavel LP: job " + std::to_string(j) + " needs at least one GPU");
  }
  for (int c : cap)
    if (c < 0) throw InvalidArgument("gavel LP: negative capacity");
  std::vector<std::vector<double>> x(T.size(), std::vector<double>(cap.size(), 0.0));
  if (T.empty() || cap.empty()) return x;
  bool solved = false;
  if (method != GavelLpMethod::greedy) {
    const std::string name = backend.empty() ? gavel_lp_backend() : backend;
    if (!name.empty()) {
      const auto solver = make_milp_solver(name);  // throws BackendUnavailable for an unknown name
      const LpMethod lm = method == GavelLpMethod::interior ? LpMethod::interior : LpMethod::simplex;
      solved = solve_lp(T, scale, cap, *solver, lm, x);
      // Degenerate LPs can stop an interior-point method: a vertex is still an optimum.
      if (!solved && lm == LpMethod::interior) solved = solve_lp(T, scale, cap, *solver, LpMethod::simplex, x);
    }
  }
  if (!solved) {
    for (auto& row : x) std::fill(row.begin(), row.end(), 0.0);
    solve_greedy(T, scale, cap, x);
  }
  for (auto& row : x)
    for (double& v : row) {
      v = std::round(v * 1e5) / 1e5;  // reference: rounded to 5 decimals, clipped to [0, 1]
      v = std::clamp(std::isfinite(v) ? v : 0.0, 0.0, 1.0);
    }
  return x;
}

double gavel_throughput(const Application& app, const SimCluster& cluster, int t, int k, double batch) {
  if (t < 0 || t >= static_cast<int>(cluster.types.size()) || k < 1) return 0.0;
  const auto& type = cluster.types[static_cast<std::size_t>(t)];
  if (k > cluster.type_gpus(t)) return 0.1;  // reference: jobs larger than the type get a token throughput
  std::vector<int> placement;
  for (int left = k; left > 0; left -= type.gpus_per_node) placement.push_back(std::min(left, type.gpus_per_node));
  const auto& tt = app.types[static_cast<std::size_t>(t)];
  if (app.pipeline) {
    // Gavel cannot resize a pipeline job: it runs the workload's GPU count as whole pipelines of the type
    // (none where the model has no profiles or the count is not a multiple of the type's pipeline size).
    if (!app.usable(t, k)) return 0.0;
    const double iter = app.pipeline_step_time(t, placement, std::max(1, tt.min_local));
    const double slow = app.constants.slowdown > 0 ? app.constants.slowdown : 1.0;
    return iter > 0 ? 1.0 / iter / slow : 0.0;
  }
  int max_local = app.max_local_bsz(t, placement);
  if (max_local <= 0) max_local = std::max(1, tt.max_local);
  // The estimator's split; Gavel's reference always accumulates on a single GPU (threshold 0).
  const BatchSplit split = split_batch(batch, k, max_local, 0.0);
  const long long s = split.accumulation_steps;
  double atomic = static_cast<double>(split.local_batch);
  atomic = std::min(atomic, std::floor(app.max_batch_size / (static_cast<double>(k) * static_cast<double>(s + 1))));
  atomic = std::max(atomic, 1.0);
  const StepSync st = app.step_time(t, placement, atomic);
  const double iter = st.step + (st.step - st.sync) * static_cast<double>(s);
  if (!(iter > 0) || !std::isfinite(iter)) return 0.0;
  // The reference multiplies by the model's slowdown calibration: progress runs 1/SLOWDOWN as fast as the
  // profiles say (reference §6.2), so Gavel's iterations/s carry the same factor.
  const double slow = app.constants.slowdown > 0 ? app.constants.slowdown : 1.0;
  return 1.0 / iter / slow;
}

GavelPolicy::GavelPolicy(GavelPolicyOptions options) : options_(options), rounds_(options.interval_s) {
  if (!(options_.interval_s > 0)) throw InvalidArgument("gavel: interval_s must be positive");
}

std::vector<SimAllocation> GavelPolicy::allocate(const PolicyContext& ctx) {
  const SimCluster& cluster = *ctx.cluster;
  const std::size_t nt = cluster.types.size();
  const std::size_t nj = ctx.jobs.size();
  // Gavel+TunedJobs: the workload's GPU count and batch size, no batch-size tuning.
  for (SimJob* job : ctx.jobs) job->kind = JobKind::rigid;

  std::vector<std::vector<double>> T(nj, std::vector<double>(nt, 0.0));
  std::vector<int> scale(nj, 1), cap(nt, 0);
  for (std::size_t k = 0; k < nt; ++k) cap[k] = cluster.type_gpus(static_cast<int>(k));
  for (std::size_t j = 0; j < nj; ++j) {
    const SimJob& job = *ctx.jobs[j];
    scale[j] = std::max(1, job.target_replicas);
    const double batch = static_cast<double>(std::max<long long>(job.target_batch_size, 1));
    for (std::size_t k = 0; k < nt; ++k)
      T[j][k] = gavel_throughput(*job.app, cluster, static_cast<int>(k), scale[j], batch);
  }
  // Same LP as the last round (bit for bit): same answer without a solve (gavel_solve_lp is deterministic: a fresh
  // solver per call, no time limit). Between arrivals and completions most rounds ask the previous LP again.
  if (!have_last_ || T != last_T_ || scale != last_scale_ || cap != last_cap_) {
    last_x_ = gavel_solve_lp(T, scale, cap, options_.lp, options_.lp_backend);
    last_T_ = std::move(T);
    last_scale_ = scale;
    last_cap_ = cap;
    have_last_ = true;
  }
  return rounds_.schedule(cluster, ctx.jobs, scale, last_x_);
}

namespace detail {
PolicyInfo builtin_policy_gavel() {
  PolicyInfo info;
  info.name = "gavel";
  info.description = "Gavel (OSDI 2020) + TunedJobs: max-sum-throughput LP and round-based time sharing";
  info.options = {
      {"lp", "interior", "LP method: interior (interior point, the paper's schedule), simplex, or greedy (no LP)"},
      {"lp_backend", "",
       "MILP backend solving the LP (default: the first with an interior-point method: cbc = Clp's "
       "barrier, glpk)"},
      {"interval_s", "360", interval_option_help()},
  };
  info.make = [](const PolicyOptions& o) {
    GavelPolicyOptions go;
    const std::string lp = o.choice("lp", "interior", {"interior", "simplex", "greedy"});
    go.lp = lp == "interior"  ? GavelLpMethod::interior
            : lp == "simplex" ? GavelLpMethod::simplex
                              : GavelLpMethod::greedy;
    go.lp_backend = o.text("lp_backend", "");
    if (!go.lp_backend.empty() && !has_milp_solver(go.lp_backend))
      throw InvalidArgument("policy 'gavel' option 'lp_backend': no MILP backend '" + go.lp_backend + "'");
    go.interval_s = o.number("interval_s", go.interval_s, kMinIntervalS, kMaxIntervalS);
    return std::unique_ptr<Policy>(std::make_unique<GavelPolicy>(go));
  };
  return info;
}
}  // namespace detail

}  // namespace sia::sim
