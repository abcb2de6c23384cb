// The GLPK backend: glp_simplex on the LP relaxation (duals, early infeasible/unbounded), then
// glp_intopt from that optimal basis, with a feasibility pump of our own (run_pump: GLPK's runs
// without limits) at the root.
//
// The MIP presolver (iocp.presolve) is OFF by default, deliberately (kUseMipPresolve):
// * GLPK 5.0's MIP preprocessor was caught returning "INTEGER OPTIMAL SOLUTION FOUND BY MIP
//   PREPROCESSOR" with a solution violating a row, and failing with an API error
//   ("glp_add_cols: ncs = 0") when it removes every column (both found by the brute-force
//   conformance test);
// * on round ILPs dumped from the benchmark scenarios it was slower more often than not
//   (Release, 15 s limit, gap 1e-4: 160 jobs optimal in 4.2 s without vs not proven in 10 s with;
//   640 jobs optimal in 8.9 s without vs not proven in 15 s with; 80 jobs 0.14 s without vs
//   0.08 s with; 50/200 jobs equal).
// With kUseMipPresolve = true the code still verifies every presolved answer and retries without
// the presolver (see solve_with_glpk), so both settings are safe.
//
// Pitfalls handled here (see ../shared/docs/dependencies.md §3 GLPK):
// * Debian's GLPK 5.0 keeps its environment in thread-local storage: terminal output, hooks and
//   problem objects are per thread. So every solve re-applies glp_term_out/glp_term_hook/
//   glp_error_hook on the calling thread, a glp_prob never leaves the solve that made it, and a
//   thread_local guard calls glp_free_env() when a thread that used GLPK exits (LSan otherwise
//   reports ~5 KB per worker thread).
// * On API misuse GLPK calls abort(). All indices and bounds are validated in C++ (MilpModel::
//   validate, plus duplicate summing in compress_columns) so this should never happen; as a last
//   resort an error hook longjmp()s back to guarded_run(), frees the (now unusable) environment,
//   and the solve returns MilpStatus::error with GLPK's own message instead of killing the process.
//   Caveat: glp_free_env() frees every GLPK object of the calling thread, so code that keeps its
//   own glp_prob alive on the same thread across a failing solve would lose it (sia has none).
//   Because longjmp skips C++ destructors, everything between setjmp and the GLPK calls
//   (guarded_run and run_glpk) uses trivially destructible locals only: all C++ containers are
//   prepared by the caller beforehand.
// * Output: msg_lev = GLP_MSG_OFF silences the solvers, glp_term_out(GLP_OFF) everything else; the
//   terminal hook additionally captures text (GLPK turns terminal output back on to report an
//   error) so nothing reaches stdout. With MilpParams::verbose the text goes to stderr.
// * tm_lim is an int number of milliseconds: clamped. It reaches every LP of glp_intopt except those
//   of GLPK's feasibility pump, which is therefore off (see fp_heur below; run_pump replaces it).
// * glp_interior (LpMethod::interior, Gavel's LP) has no callback and no time limit. It prints a line
//   per iteration, so the terminal hook checks the deadline and MilpParams::stop and, when due,
//   leaves GLPK by the same longjmp as the error hook (guarded_run frees the environment). Not
//   stoppable inside its setup phases (ordering, symbolic Cholesky), which print nothing: measured
//   on a 200 x 400 LP, a 1 ms limit returned after 11 ms, a 5 ms limit after 23 ms.
#include <sia/error.hpp>
#include <sia/milp/solver.hpp>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <glpk.h>

#include "milp/builtin_backends.hpp"
#include "milp/compressed_matrix.hpp"
#include "milp/glpk/glpk_testing.hpp"

namespace sia::detail {
namespace {

constexpr bool kUseMipPresolve = false;

// Tolerances on the objective as GLPK sees it (the round divides it by a power of two so that its
// largest magnitude is near 1). GLPK's defaults (1e-7) let it prune every node whose bound is within
// 1e-7·(1 + |incumbent|) of the incumbent and take reduced costs below 1e-7 for zero: objective
// differences that small (utilities near 1e-9 beside coefficients near 1) were invisible and GLPK
// proved a wrong "optimal" (decision.recompute). The round's own absolute tolerance is 1e-9 of the
// objective's scale (docs/decision.md); the matrix is small integers, so reduced costs carry
// rounding errors near 1e-15 and these tighter values are safe. (The LPs of the branch-and-bound
// nodes keep GLPK's default tolerances: glp_iocp has no setting for them; hence the bound credited
// below.)
constexpr double kObjectiveTolerance = 1e-10;
constexpr double kDualTolerance = 1e-10;

// --- per-thread GLPK environment -----------------------------------------------------------------

/// Frees this thread's GLPK environment when the thread exits.
struct GlpkEnvGuard {
  GlpkEnvGuard() = default;
  GlpkEnvGuard(const GlpkEnvGuard&) = delete;
  GlpkEnvGuard& operator=(const GlpkEnvGuard&) = delete;
  ~GlpkEnvGuard() { glp_free_env(); }
  void touch() noexcept {}
};
thread_local GlpkEnvGuard env_guard;

/// Terminal text of the current solve (trivially destructible: it may be written right before a longjmp).
struct GlpkJob;
struct TermCapture {
  bool to_stderr = false;
  std::size_t len = 0;
  char text[1024] = {};
  // Set while glp_interior runs: the solve whose deadline and stop token the hook checks (below).
  GlpkJob* watch = nullptr;
};
thread_local TermCapture term_capture;

/// Where guarded_run() resumes when GLPK is left by longjmp (an error, or a stop in glp_interior).
thread_local std::jmp_buf guard_jump;

bool stop_due(const GlpkJob& job);

extern "C" int sia_glpk_term_hook(void* /*info*/, const char* s) {
  // glp_interior has no callback and no time limit, but prints a line per iteration (msg_lev
  // GLP_MSG_ON): here it is stopped at the deadline or on request, by leaving GLPK the way its
  // error hook does (guarded_run then frees the thread's GLPK environment, which owns every GLPK
  // allocation of the solve, so nothing leaks). Only trivially destructible frames lie between.
  if (term_capture.watch != nullptr && stop_due(*term_capture.watch)) std::longjmp(guard_jump, 2);
  if (s == nullptr) return 1;
  if (term_capture.to_stderr) {
    std::fputs(s, stderr);
    return 1;
  }
  const std::size_t room = sizeof(term_capture.text) - 1 - term_capture.len;
  const std::size_t add = std::min(room, std::strlen(s));
  std::memcpy(term_capture.text + term_capture.len, s, add);
  term_capture.len += add;
  term_capture.text[term_capture.len] = '\0';
  return 1;  // nonzero: GLPK prints nothing itself
}

extern "C" void sia_glpk_error_hook(void* info) {
  // GLPK is in an unrecoverable state here; leave via longjmp (the default is abort()).
  std::longjmp(*static_cast<std::jmp_buf*>(info), 1);
}

void prepare_environment(bool verbose) {
  env_guard.touch();  // constructs the guard on this thread, so its destructor runs at thread exit
  term_capture.to_stderr = verbose;
  term_capture.len = 0;
  term_capture.text[0] = '\0';
  glp_term_out(verbose ? GLP_ON : GLP_OFF);
  glp_term_hook(sia_glpk_term_hook, nullptr);
}

std::string captured_text() {
  std::string s(term_capture.text, term_capture.len);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  for (auto& c : s)
    if (c == '\n') c = ' ';
  return s;
}

// --- one solve ---------------------------------------------------------------------------------

/// Everything run_glpk needs and produces; trivially destructible (see the file comment).
struct GlpkJob {
  // inputs
  const MilpModel* model = nullptr;
  const MilpParams* params = nullptr;
  int nnz = 0;
  const int* ia = nullptr;  // 1-based triplets, slot 0 unused
  const int* ja = nullptr;
  const double* ar = nullptr;
  std::chrono::steady_clock::time_point start{};
  // outputs
  double* values = nullptr;  // size num_cols
  double* duals = nullptr;   // size num_rows
  bool duals_ok = false;
  int lp_rc = -1, lp_status = 0;
  int mip_rc = -1, mip_status = 0;
  bool mip_run = false;
  int ipt_rc = -1, ipt_status = 0;  // LpMethod::interior on an LP: glp_interior
  bool ipt_run = false;
  bool ipt_stopped = false;  // left at the deadline or on request (the terminal hook)
  double bound = std::nan("");
  long long nodes = 0;
  // The feasibility pump run from the callback (run_pump): scratch of n + 1 entries each, prepared by the
  // caller (nothing may be allocated with C++ between setjmp and GLPK), and whether it has run.
  int* pump_cols = nullptr;
  signed char* pump_round = nullptr;
  int* pump_order = nullptr;
  double* pump_dist = nullptr;
  double* pump_x = nullptr;
  int* pump_ind = nullptr;
  bool pump_done = false;
  int pump_lps = 0, pump_found = 0;  // LPs solved, solutions accepted by GLPK (for verbose output and tests)
  // glp_intopt's MIP presolver (see the file comment); always off for the retries
  bool mip_presolve = kUseMipPresolve;
  // test hook: misuse the API on purpose to exercise the error hook
  bool provoke_error = false;

  void reset_outputs() {
    duals_ok = false;
    lp_rc = mip_rc = -1;
    lp_status = mip_status = 0;
    mip_run = false;
    ipt_rc = -1;
    ipt_status = 0;
    ipt_run = false;
    ipt_stopped = false;
    bound = std::nan("");
    nodes = 0;
    pump_done = false;
    pump_lps = pump_found = 0;
  }
};

int remaining_ms(const GlpkJob& job) {
  if (!job.params->time_limit) return INT_MAX;
  const auto used = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - job.start);
  const long long left = static_cast<long long>(job.params->time_limit->count()) - used.count();
  return static_cast<int>(std::clamp<long long>(left, 0, INT_MAX - 1));
}

bool stop_due(const GlpkJob& job) { return job.params->stop.stop_requested() || remaining_ms(job) == 0; }

void set_bounds(glp_prob* p, bool row, int k, double lo, double up) {
  int type;
  if (std::isinf(lo) && std::isinf(up)) {
    type = GLP_FR;
  } else if (std::isinf(up)) {
    type = GLP_LO;
  } else if (std::isinf(lo)) {
    type = GLP_UP;
  } else if (lo == up) {
    type = GLP_FX;
  } else {
    type = GLP_DB;
  }
  const double l = std::isinf(lo) ? 0.0 : lo;
  const double u = std::isinf(up) ? 0.0 : up;
  if (row)
    glp_set_row_bnds(p, k, type, l, u);
  else
    glp_set_col_bnds(p, k, type, l, u);
}

// --- feasibility pump with limits --------------------------------------------------------------
// GLPK's own pump (iocp.fp_heur) is off because its LPs run with no limit (see fp_heur below). This one
// follows the same method (Fischetti, Glover and Lodi, "The feasibility pump", Math. Program. 104, 2005):
// round the binaries of the LP optimum, find the LP point nearest to that rounding (L1 distance over the
// binaries), round again, until the LP point is integral; when the rounding stops changing, flip the
// entries farthest from their LP values; after three LPs without progress, perturb the rounding at random
// (a fixed seed: the same model gives the same pump) and start a new pass, at most five. An integral point
// has its binaries fixed and the rest re-optimised on the true objective, and is offered to GLPK
// (glp_ios_heur_sol); then the pump looks for a better one under an objective cutoff. Unlike GLPK's, every
// LP gets the time left and an iteration limit, and the whole pump at most half of the time left.

constexpr int kPumpPasses = 5;
constexpr int kPumpFailures = 3;   // LPs without a shorter distance before a new pass
constexpr int kPumpFlips = 10;     // entries flipped when the rounding stalls
constexpr int kPumpSolutions = 8;  // improving solutions sought
constexpr int kPumpLps = 100;      // distance LPs per solution sought

/// Milliseconds until `end` (0 when past; INT_MAX without a limit).
int ms_until(std::chrono::steady_clock::time_point end, bool limited) {
  if (!limited) return INT_MAX;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<long long>(left.count(), 0, INT_MAX - 1));
}

/// Runs once, at the root's first GLP_IHEUR callback. Only trivially destructible locals (may be left by
/// longjmp from GLPK's error hook; the thread's GLPK environment, which owns `lp`, is freed then).
void run_pump(glp_tree* tree, GlpkJob& job) {
  glp_prob* mip = glp_ios_get_prob(tree);
  const int n = glp_get_num_cols(mip);
  // Binaries only, as GLPK's pump: any other non-fixed integer column and the pump does not apply.
  int nv = 0;
  for (int j = 1; j <= n; ++j) {
    // (glp_get_col_kind says GLP_BV for an integer column with bounds [0, 1], GLP_IV for other integers)
    if (glp_get_col_kind(mip, j) == GLP_CV || glp_get_col_type(mip, j) == GLP_FX) continue;
    if (glp_get_col_type(mip, j) != GLP_DB || glp_get_col_lb(mip, j) != 0.0 || glp_get_col_ub(mip, j) != 1.0) return;
    job.pump_cols[nv++] = j;
  }
  if (nv == 0 || glp_get_status(mip) != GLP_OPT) return;
  const bool limited = job.params->time_limit.has_value();
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(remaining_ms(job) / 2);
  const bool maximize = glp_get_obj_dir(mip) == GLP_MAX;
  const double root_value = glp_get_obj_val(mip);

  glp_prob* lp = glp_create_prob();
  glp_copy_prob(lp, mip, GLP_OFF);
  glp_smcp smcp;
  glp_init_smcp(&smcp);
  smcp.msg_lev = GLP_MSG_OFF;
  smcp.meth = GLP_PRIMAL;  // each distance LP starts from the last one's (primal feasible) basis
  smcp.it_lim = 4 * (glp_get_num_rows(lp) + n) + 1000;
  std::mt19937_64 rng(0x5eed);
  auto uniform = [&rng] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };  // [0, 1)
  const auto out_of_time = [&] { return stop_due(job) || ms_until(end, limited) == 0; };
  auto solve = [&](glp_prob* q) {
    smcp.tm_lim = std::min(ms_until(end, limited), remaining_ms(job));
    ++job.pump_lps;
    return glp_simplex(q, &smcp) == 0 && glp_get_status(q) == GLP_OPT;
  };
  for (int k = 0; k < nv; ++k) job.pump_round[k] = glp_get_col_prim(mip, job.pump_cols[k]) < 0.5 ? 0 : 1;

  int cutoff_row = 0;
  for (int found = 0; found < kPumpSolutions && !out_of_time();) {
    bool integral = false;
    int lps = 0;
    for (int pass = 0; pass < kPumpPasses && !integral && !out_of_time() && lps < kPumpLps; ++pass) {
      if (pass > 0) {  // perturb the last rounding
        for (int k = 0; k < nv; ++k) {
          const double rho = std::max(0.0, uniform() - 0.3);
          const double x = glp_get_col_prim(lp, job.pump_cols[k]);
          if (std::abs(job.pump_round[k] - x) + rho > 0.5)
            job.pump_round[k] = static_cast<signed char>(1 - job.pump_round[k]);
        }
      }
      double best = std::numeric_limits<double>::infinity();
      for (int failures = 0; failures < kPumpFailures && !out_of_time() && lps++ < kPumpLps;) {
        // minimise the distance to the rounding: Σ x_j over rounded zeros + Σ (1 − x_j) over rounded ones
        glp_set_obj_dir(lp, GLP_MIN);
        for (int j = 0; j <= n; ++j) glp_set_obj_coef(lp, j, 0.0);
        double ones = 0;
        for (int k = 0; k < nv; ++k) {
          glp_set_obj_coef(lp, job.pump_cols[k], job.pump_round[k] != 0 ? -1.0 : 1.0);
          ones += job.pump_round[k];
        }
        glp_set_obj_coef(lp, 0, ones);
        if (!solve(lp)) {
          glp_delete_prob(lp);
          return;
        }
        integral = true;
        for (int k = 0; k < nv && integral; ++k) {
          const double x = glp_get_col_prim(lp, job.pump_cols[k]);
          integral = x <= 1e-6 || x >= 1.0 - 1e-6;
        }
        if (integral) break;
        const double dist = glp_get_obj_val(lp);
        if (dist < best - 1e-6 * (1.0 + best)) {
          best = dist;
          failures = 0;
        } else {
          ++failures;
        }
        bool changed = false;
        for (int k = 0; k < nv; ++k) {
          const double x = glp_get_col_prim(lp, job.pump_cols[k]);
          job.pump_dist[k] = std::abs(x - job.pump_round[k]);
          const signed char r = x < 0.5 ? 0 : 1;
          changed = changed || r != job.pump_round[k];
          job.pump_round[k] = r;
        }
        if (!changed) {  // stalled: flip the entries farthest from the LP point
          for (int k = 0; k < nv; ++k) job.pump_order[k] = k;
          const double* d = job.pump_dist;
          const int flips = std::min(nv, kPumpFlips);
          std::partial_sort(job.pump_order, job.pump_order + flips, job.pump_order + nv,
                            [d](int a, int b) { return d[a] != d[b] ? d[a] > d[b] : a < b; });
          for (int i = 0; i < flips; ++i) {
            const int k = job.pump_order[i];
            job.pump_round[k] = static_cast<signed char>(1 - job.pump_round[k]);
          }
        }
      }
    }
    if (!integral || out_of_time()) break;
    // Fix the binaries where the LP point has them and optimise the true objective over the rest.
    glp_prob* fixed = glp_create_prob();
    glp_copy_prob(fixed, lp, GLP_OFF);
    glp_set_obj_dir(fixed, glp_get_obj_dir(mip));
    for (int j = 0; j <= n; ++j) glp_set_obj_coef(fixed, j, glp_get_obj_coef(mip, j));
    for (int k = 0; k < nv; ++k) {
      const double v = glp_get_col_prim(lp, job.pump_cols[k]) < 0.5 ? 0.0 : 1.0;
      glp_set_col_bnds(fixed, job.pump_cols[k], GLP_FX, v, v);
    }
    const bool ok = solve(fixed);
    if (ok) {
      for (int j = 1; j <= n; ++j) {
        const double x = glp_get_col_prim(fixed, j);
        job.pump_x[j] = glp_get_col_kind(mip, j) != GLP_CV ? std::round(x) : x;
      }
    }
    glp_delete_prob(fixed);
    if (!ok || glp_ios_heur_sol(tree, job.pump_x) != 0) break;
    ++job.pump_found;
    ++found;
    if (glp_ios_mip_gap(tree) <= job.params->relative_gap) break;
    // Look for a better one: the objective at least a tenth of the way from the incumbent to the root bound
    // (as GLPK's pump), a row of the pump's LP (added basic, so the basis stays valid; later only moved).
    if (cutoff_row == 0) {
      cutoff_row = glp_add_rows(lp, 1);
      int len = 0;
      for (int j = 1; j <= n; ++j) {
        const double c = glp_get_obj_coef(mip, j);
        if (c == 0.0) continue;
        ++len;
        job.pump_ind[len] = j;
        job.pump_x[len] = c;
      }
      glp_set_mat_row(lp, cutoff_row, len, job.pump_ind, job.pump_x);
    }
    const double cutoff = 0.1 * root_value + 0.9 * glp_mip_obj_val(mip) - glp_get_obj_coef(mip, 0);
    glp_set_row_bnds(lp, cutoff_row, maximize ? GLP_LO : GLP_UP, cutoff, cutoff);
  }
  glp_delete_prob(lp);
}

extern "C" void sia_glpk_mip_callback(glp_tree* tree, void* info) {
  auto* job = static_cast<GlpkJob*>(info);
  if (glp_ios_reason(tree) == GLP_IHEUR && !job->pump_done && glp_ios_node_level(tree, glp_ios_curr_node(tree)) == 0 &&
      glp_mip_status(glp_ios_get_prob(tree)) != GLP_FEAS && remaining_ms(*job) > 0 &&
      !job->params->stop.stop_requested()) {
    job->pump_done = true;
    run_pump(tree, *job);
  }
  const int best = glp_ios_best_node(tree);
  if (best != 0) job->bound = glp_ios_node_bound(tree, best);
  int active = 0, current = 0, total = 0;
  glp_ios_tree_size(tree, &active, &current, &total);
  job->nodes = total;
  // Cancellation (MilpParams::stop), and the time limit at every callback too: GLPK checks its own
  // tm_lim only between nodes, and its root cut and heuristic passes on a 20,000-job round ran
  // 250 ms past a 1 s limit.
  if (job->params->stop.stop_requested() || remaining_ms(*job) == 0) glp_ios_terminate(tree);
}

/// All GLPK calls of one solve. Only trivially destructible locals (may be left by longjmp).
void run_glpk(GlpkJob& job, glp_prob* p) {
  const MilpModel& m = *job.model;
  const int n = m.num_cols();
  const int rows = m.num_rows();
  glp_set_obj_dir(p, m.sense == MilpSense::maximize ? GLP_MAX : GLP_MIN);
  if (rows > 0) glp_add_rows(p, rows);
  glp_add_cols(p, n);
  for (int i = 0; i < rows; ++i)
    set_bounds(p, true, i + 1, m.row_lower[static_cast<std::size_t>(i)], m.row_upper[static_cast<std::size_t>(i)]);
  for (int j = 0; j < n; ++j) {
    const auto js = static_cast<std::size_t>(j);
    set_bounds(p, false, j + 1, m.col_lower[js], m.col_upper[js]);
    glp_set_obj_coef(p, j + 1, m.obj[js]);
    if (m.is_integer[js]) glp_set_col_kind(p, j + 1, GLP_IV);
  }
  if (job.nnz > 0) glp_load_matrix(p, job.nnz, job.ia, job.ja, job.ar);
  if (job.provoke_error) glp_set_row_bnds(p, rows + 5, GLP_FX, 0.0, 0.0);  // invalid row on purpose

  // An LP asked to be solved by interior point: glp_interior, whose solution is not a vertex.
  const bool lp = std::none_of(m.is_integer.begin(), m.is_integer.end(), [](char v) { return v != 0; });
  if (lp && job.params->lp_method == LpMethod::interior) {
    glp_iptcp iptcp;
    glp_init_iptcp(&iptcp);
    // Messages on (captured by the terminal hook, shown only when verbose): the hook is where the
    // deadline and the stop token are checked, once per iteration.
    iptcp.msg_lev = GLP_MSG_ON;
    job.ipt_run = true;
    if (stop_due(job)) {
      job.ipt_stopped = true;
      return;
    }
    glp_term_out(GLP_ON);
    term_capture.watch = &job;
    job.ipt_rc = glp_interior(p, &iptcp);
    term_capture.watch = nullptr;
    glp_term_out(job.params->verbose ? GLP_ON : GLP_OFF);
    job.ipt_status = glp_ipt_status(p);
    if (job.ipt_rc == 0 && job.ipt_status == GLP_OPT) {
      for (int j = 0; j < n; ++j) job.values[j] = glp_ipt_col_prim(p, j + 1);
      if (job.params->lp_duals) {
        for (int i = 0; i < rows; ++i) job.duals[i] = glp_ipt_row_dual(p, i + 1);
        job.duals_ok = true;
      }
    }
    return;
  }

  // Without the MIP presolver glp_intopt needs an optimal LP basis first.
  if (job.params->lp_duals || !job.mip_presolve) {
    glp_smcp smcp;
    glp_init_smcp(&smcp);
    smcp.msg_lev = job.params->verbose ? GLP_MSG_ON : GLP_MSG_OFF;
    smcp.presolve = job.mip_presolve ? GLP_ON : GLP_OFF;
    smcp.tol_dj = kDualTolerance;
    // In slices of at most 100 ms, resumed from the basis reached: glp_simplex has no callback, so
    // a stop requested from another thread (MilpParams::stop) is seen between slices (a 20,000-job
    // relaxation ran 12 minutes before a stop could be noticed).
    const auto slice = [&job] { return std::min(remaining_ms(job), 100); };
    smcp.tm_lim = slice();
    job.lp_rc = glp_simplex(p, &smcp);
    while (job.lp_rc == GLP_ETMLIM && !job.params->stop.stop_requested() && remaining_ms(job) > 0) {
      smcp.tm_lim = slice();
      job.lp_rc = glp_simplex(p, &smcp);
    }
    job.lp_status = glp_get_status(p);
    if (job.lp_rc == 0 && job.lp_status == GLP_OPT && job.params->lp_duals) {
      // GLPK's row dual is d(objective)/d(row activity bound) in the problem's own direction.
      for (int i = 0; i < rows; ++i) job.duals[i] = glp_get_row_dual(p, i + 1);
      job.duals_ok = true;
    }
    // Infeasible or unbounded relaxations are final; a time limit leaves nothing for intopt.
    if (job.lp_rc == GLP_ENOPFS || job.lp_rc == GLP_ENODFS || job.lp_rc == GLP_ETMLIM) return;
    if (job.lp_rc == 0 && (job.lp_status == GLP_NOFEAS || job.lp_status == GLP_UNBND)) return;
  }

  glp_iocp iocp;
  glp_init_iocp(&iocp);
  iocp.msg_lev = job.params->verbose ? GLP_MSG_ON : GLP_MSG_OFF;
  iocp.presolve = job.mip_presolve ? GLP_ON : GLP_OFF;
  iocp.mip_gap = job.params->relative_gap;
  iocp.tol_obj = kObjectiveTolerance;
  iocp.tm_lim = remaining_ms(job);
  iocp.gmi_cuts = GLP_ON;
  iocp.mir_cuts = GLP_ON;
  iocp.cov_cuts = GLP_ON;
  iocp.clq_cuts = GLP_ON;
  // GLPK's feasibility pump stays off: it is the one part of glp_intopt that no limit reaches. GLPK 5.0's
  // src/intopt/fpump.c (unchanged since 4.65) solves its LPs with glp_simplex under glp_init_smcp's defaults
  // (no tm_lim, no it_lim; the node LPs of src/draft/glpios01.c get the remaining tm_lim) and calls no
  // callback meanwhile; its primal simplex cycled there for millions of iterations on planning MILPs whose
  // objective coefficients span 1e14 and more (tests/unit/test_milp_glpk_ranges.cpp): 6 of 300 generated
  // models ran past 3 s on a 200 ms limit, and in CI one ran 14 s past a 2-s limit. Without it none of 3,000
  // overran by more than 50 ms (docs/reliability.md, "GLPK on huge objective ranges").
  iocp.fp_heur = GLP_OFF;  // run_pump instead, from the callback
  iocp.cb_func = sia_glpk_mip_callback;
  iocp.cb_info = &job;
  job.mip_run = true;
  job.mip_rc = glp_intopt(p, &iocp);
  job.mip_status = glp_mip_status(p);
  if (job.mip_status == GLP_OPT || job.mip_status == GLP_FEAS)
    for (int j = 0; j < n; ++j) job.values[j] = glp_mip_col_val(p, j + 1);
}

/// Runs run_glpk with GLPK's error hook pointing here. Returns false when GLPK raised an error,
/// true when it finished or glp_interior was stopped (GlpkJob::ipt_stopped); after an error or a
/// stop the thread's GLPK environment (and with it the problem object) has been freed.
bool guarded_run(GlpkJob& job) {
  glp_prob* volatile prob = nullptr;
  switch (setjmp(guard_jump)) {  // (setjmp's value may only be compared, not stored)
    case 0:
      break;
    case 2:  // stopped in glp_interior by the terminal hook
      job.ipt_stopped = true;
      [[fallthrough]];
    default:
      term_capture.watch = nullptr;
      glp_error_hook(nullptr, nullptr);
      glp_free_env();  // the documented way out after an error; frees every GLPK object of this thread
      return job.ipt_stopped;
  }
  glp_error_hook(sia_glpk_error_hook, &guard_jump);
  prob = glp_create_prob();
  run_glpk(job, prob);
  glp_delete_prob(prob);
  glp_error_hook(nullptr, nullptr);
  return true;
}

MilpResult solve_with_glpk(const MilpModel& model, const MilpParams& params, bool provoke_error,
                           GlpkPumpReport* pump = nullptr) {
  MilpResult result;
  const int n = model.num_cols();
  const int m = model.num_rows();
  const bool maximize = model.sense == MilpSense::maximize;
  if (n == 0 && !provoke_error) return empty_model_result(model, params);  // nothing for GLPK to do

  const auto csc = compress_columns(model);
  const auto nnz = csc.value.size();
  std::vector<int> ia(nnz + 1, 0), ja(nnz + 1, 0);
  std::vector<double> ar(nnz + 1, 0.0);
  for (std::size_t j = 0; j + 1 < csc.start.size(); ++j)
    for (auto k = static_cast<std::size_t>(csc.start[j]); k < static_cast<std::size_t>(csc.start[j + 1]); ++k) {
      ia[k + 1] = csc.row_index[k] + 1;
      ja[k + 1] = static_cast<int>(j) + 1;
      ar[k + 1] = csc.value[k];
    }
  std::vector<double> values(static_cast<std::size_t>(n), 0.0), duals(static_cast<std::size_t>(m), 0.0);
  const auto slots = static_cast<std::size_t>(n) + 1;  // the pump's scratch (run_pump)
  std::vector<int> pump_cols(slots), pump_order(slots), pump_ind(slots);
  std::vector<signed char> pump_round(slots);
  std::vector<double> pump_dist(slots), pump_x(slots);

  GlpkJob job;
  job.model = &model;
  job.params = &params;
  job.nnz = static_cast<int>(nnz);
  job.ia = ia.data();
  job.ja = ja.data();
  job.ar = ar.data();
  job.start = std::chrono::steady_clock::now();
  job.values = values.data();
  job.duals = duals.data();
  job.provoke_error = provoke_error;
  job.pump_cols = pump_cols.data();
  job.pump_round = pump_round.data();
  job.pump_order = pump_order.data();
  job.pump_dist = pump_dist.data();
  job.pump_x = pump_x.data();
  job.pump_ind = pump_ind.data();

  // Leave this thread's GLPK terminal settings as we found them (other code may use GLPK too).
  struct TerminalRestore {
    int previous;
    explicit TerminalRestore(int p) : previous(p) {}
    TerminalRestore(const TerminalRestore&) = delete;
    TerminalRestore& operator=(const TerminalRestore&) = delete;
    ~TerminalRestore() {
      glp_term_hook(nullptr, nullptr);
      glp_term_out(previous);
    }
  } restore{glp_term_out(GLP_OFF)};
  prepare_environment(params.verbose);
  if (!guarded_run(job)) {
    const std::string first = captured_text();
    // GLPK 5.0's MIP presolver fails with an API error ("glp_add_cols: ncs = 0") when it removes
    // every column; retry once with the presolvers off (plain simplex, then branch and bound).
    bool recovered = false;
    if (!provoke_error) {
      job.reset_outputs();
      job.mip_presolve = false;
      prepare_environment(params.verbose);
      recovered = guarded_run(job);
    }
    if (!recovered) {
      result.status = MilpStatus::error;
      result.message = "GLPK error: " + first;
      return result;
    }
  } else if (job.mip_run && job.mip_presolve) {
    // GLPK 5.0's MIP preprocessor has been seen to report "INTEGER OPTIMAL SOLUTION FOUND BY MIP
    // PREPROCESSOR" with a solution violating a row (integer columns with negative lower bounds;
    // found by the brute-force conformance test). Check every answer of the presolved run, and
    // confirm infeasibility claims, with the presolver off.
    const bool claims_solution = job.mip_status == GLP_OPT || job.mip_status == GLP_FEAS;
    std::vector<double> check(values);
    polish_values(model, check);
    const bool suspicious = claims_solution
                                ? !solution_is_valid(model, check)
                                : (job.mip_rc == GLP_ENOPFS || (job.mip_rc == 0 && job.mip_status == GLP_NOFEAS));
    if (suspicious) {
      job.reset_outputs();
      job.mip_presolve = false;
      std::fill(values.begin(), values.end(), 0.0);
      prepare_environment(params.verbose);
      if (!guarded_run(job)) {
        result.status = MilpStatus::error;
        result.message = "GLPK error: " + captured_text();
        return result;
      }
    }
  }

  if (pump != nullptr) *pump = GlpkPumpReport{job.pump_done, job.pump_lps, job.pump_found};
  if (job.duals_ok) result.row_duals = std::move(duals);
  result.nodes = job.nodes;
  if (job.ipt_run) {
    if (job.ipt_stopped) {
      result.status = MilpStatus::no_solution;
      result.message = params.stop.stop_requested() ? "stop requested in GLPK's interior-point LP"
                                                    : "time limit reached in GLPK's interior-point LP";
    } else if (job.ipt_rc == 0 && job.ipt_status == GLP_OPT) {
      std::vector<double> duals_kept = std::move(result.row_duals);
      result = lp_optimum(model, std::move(values), "GLPK's interior point");
      if (result.status == MilpStatus::optimal) result.row_duals = std::move(duals_kept);
    } else if (job.ipt_rc == 0 && job.ipt_status == GLP_NOFEAS) {
      result.status = MilpStatus::infeasible;
      result.message = "the LP is infeasible";
    } else {
      result.status = MilpStatus::error;
      result.message = "glp_interior failed with code " + std::to_string(job.ipt_rc) + " (status " +
                       std::to_string(job.ipt_status) + ")";
    }
    return result;
  }
  auto set_solution = [&] {
    result.values = std::move(values);
    polish_values(model, result.values);
    result.objective = model.objective_of(result.values);
  };
  if ((job.mip_status == GLP_OPT || job.mip_status == GLP_FEAS)) {
    std::vector<double> check(values);
    polish_values(model, check);
    if (!solution_is_valid(model, check)) {
      result.status = MilpStatus::error;
      result.message = "GLPK returned a solution that violates the model";
      return result;
    }
  }

  // The LP relaxation alone can settle the outcome.
  if (job.lp_rc == GLP_ENOPFS || (job.lp_rc == 0 && job.lp_status == GLP_NOFEAS)) {
    result.status = MilpStatus::infeasible;
    result.message = "the LP relaxation is infeasible";
    return result;
  }
  if (job.lp_rc == GLP_ENODFS || (job.lp_rc == 0 && job.lp_status == GLP_UNBND)) {
    result.status = MilpStatus::unbounded;
    result.message = "the LP relaxation is unbounded (or has no dual feasible solution)";
    return result;
  }
  if (!job.mip_run) {
    result.status = job.lp_rc == GLP_ETMLIM ? MilpStatus::no_solution : MilpStatus::error;
    result.message = job.lp_rc == GLP_ETMLIM ? "time limit reached in the LP relaxation"
                                             : "glp_simplex failed with code " + std::to_string(job.lp_rc);
    return result;
  }

  const bool has_solution = job.mip_status == GLP_OPT || job.mip_status == GLP_FEAS;
  switch (job.mip_rc) {
    case 0:
    case GLP_EMIPGAP:  // stopped within the requested relative gap: optimal by our definition
      if (has_solution) {
        set_solution();
        result.status = MilpStatus::optimal;
      } else if (job.mip_status == GLP_NOFEAS) {
        result.status = MilpStatus::infeasible;
        result.message = "no integer solution exists";
      } else {
        result.status = MilpStatus::error;
        result.message = "glp_intopt finished with undefined solution status";
      }
      break;
    case GLP_ETMLIM:
    case GLP_ESTOP:  // stopped by the callback: stop requested or time limit
      if (has_solution) {
        set_solution();
        result.status = MilpStatus::feasible;
        result.message = job.params->stop.stop_requested() ? "stop requested" : "time limit reached";
      } else {
        result.status = MilpStatus::no_solution;
        result.message = job.params->stop.stop_requested() ? "stop requested without an integer solution"
                                                           : "time limit reached without an integer solution";
      }
      break;
    case GLP_ENOPFS:
      result.status = MilpStatus::infeasible;
      result.message = "the LP relaxation is infeasible";
      break;
    case GLP_ENODFS:
      result.status = MilpStatus::unbounded;
      result.message = "the LP relaxation is unbounded (or has no dual feasible solution)";
      break;
    default:
      if (has_solution) {
        set_solution();
        result.status = MilpStatus::feasible;
      } else {
        result.status = MilpStatus::error;
      }
      result.message = "glp_intopt failed with code " + std::to_string(job.mip_rc);
      break;
  }

  if (result.status == MilpStatus::optimal) {
    // What GLPK proves when it says optimal: the incumbent is within mip_gap of the optimum,
    // measured on its own objective (without the model's constant), and no node within
    // tol_obj·(1 + |incumbent|) of the incumbent was explored. The node bounds the callback saw are
    // not credited when tighter: they come from LPs solved to GLPK's tolerances, and on objectives
    // whose differences lie below them (a coefficient of 1e75 beside utilities near 1) they were
    // the incumbent itself, far above the optimum (decision.recompute).
    const double inner = std::abs(result.objective - model.obj_offset);
    const double slack = std::max(job.params->relative_gap * (inner + std::numeric_limits<double>::epsilon()),
                                  kObjectiveTolerance * (1.0 + std::abs(result.objective)));
    result.best_bound = maximize ? result.objective + slack : result.objective - slack;
  } else if (result.status == MilpStatus::feasible && std::isfinite(job.bound)) {
    const double b = job.bound + model.obj_offset;
    result.best_bound = maximize ? std::max(b, result.objective) : std::min(b, result.objective);
  }
  return result;
}

class GlpkSolver final : public MilpSolver {
  std::string_view do_name() const noexcept override { return "glpk"; }
  bool do_supports(LpMethod) const noexcept override { return true; }
  MilpResult do_solve(const MilpModel& model, const MilpParams& params) override {
    return solve_with_glpk(model, params, false);
  }
};

}  // namespace

std::unique_ptr<MilpSolver> make_glpk_solver() { return std::make_unique<GlpkSolver>(); }

MilpResult glpk_solve_provoking_error(const MilpModel& model) {
  model.validate();
  return solve_with_glpk(model, MilpParams{}, true);
}

MilpResult glpk_solve_reporting_pump(const MilpModel& model, const MilpParams& params, GlpkPumpReport& report) {
  model.validate();
  return solve_with_glpk(model, params, false, &report);
}

}  // namespace sia::detail
