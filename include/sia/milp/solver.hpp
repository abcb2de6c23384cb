#pragma once
/// @file milp/solver.hpp
/// @brief The abstract MILP backend (non-virtual interface) and its parameters and results.

#include <sia/milp/model.hpp>

#include <chrono>
#include <limits>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

namespace sia {

/**
 * @brief Outcome of a solve. Errors of the backend are reported as `error` by MilpSolver::solve()
 * (the NVI wrapper catches exceptions from do_solve), never thrown past the round.
 */
enum class MilpStatus {
  optimal,      ///< optimal within the requested relative gap
  feasible,     ///< stopped by a limit with an incumbent
  infeasible,   ///< proven infeasible
  unbounded,    ///< proven unbounded
  no_solution,  ///< stopped by a limit without an incumbent
  error,        ///< the backend failed; `message` says why
};

/// Lower-case name of a status ("optimal", ...).
[[nodiscard]] std::string_view to_string(MilpStatus s) noexcept;

/// How a model without integer columns (a linear program) is solved.
enum class LpMethod {
  automatic,  ///< the backend's choice (every backend)
  simplex,    ///< a simplex method: an optimal vertex
  /// An interior-point method without crossover: on an LP with many optima, a point near the
  /// analytic centre of the optimal face rather than a vertex (Gavel's schedule depends on it).
  interior,
};

/// Parameters of one solve.
struct MilpParams {
  std::optional<std::chrono::milliseconds> time_limit;  ///< wall clock; none = no limit
  /// Cancellation: a stop requested on this token (from any thread) ends the solve as the time
  /// limit does (`feasible` with the incumbent, or `no_solution`). Built-in backends check it at
  /// entry and while they search (GLPK: between 100 ms slices of the root LP and between nodes; not
  /// inside glp_interior).
  std::stop_token stop;
  double relative_gap = 1e-4;  ///< stop when |bound-incumbent| <= gap*|incumbent|
  int threads = 0;             ///< 0: all cores; 1: the calling thread (a hint: only native uses threads)
  /// Branch-and-bound nodes at most (0: no limit). Unlike the time limit a node limit is deterministic: the
  /// same model gives the same answer however loaded the machine is. Ends the solve as the time limit does
  /// (`feasible` with the incumbent, or `no_solution`). The CBC backend honours it; others may ignore it.
  long long node_limit = 0;
  bool verbose = false;  ///< solver output on stderr when true
  /// Fill MilpResult::row_duals from the root LP relaxation (costs one extra LP solve in some
  /// backends; the built-in CBC and GLPK backends honour it, others may ignore it).
  bool lp_duals = true;
  /// Method for models without integer columns; ignored for MILPs. A backend asked for a method
  /// it does not have (MilpSolver::supports) returns MilpStatus::error naming it.
  LpMethod lp_method = LpMethod::automatic;
  /// Warm start (optional; backends may ignore it): a solution to try first, one value per column
  /// (e.g. the previous round's allocation: it need not be feasible for this model; NaN = no
  /// start value for that column), and dual values to start the LP from, one per row, in the sign
  /// convention of MilpResult::row_duals. Empty, or of the wrong size: not used. The native backend uses both; without them it starts
  /// from what the same instance solved last (rows and columns matched by name). CBC ignores both; a linear
  /// program it solves by simplex whose rows and columns all have names starts from the final basis of the
  /// last such LP the same instance solved, matched by name (another optimal vertex may come out among ties).
  std::vector<double> start_values;
  std::vector<double> start_duals;
};

/// Result of one solve. Owns its data.
struct MilpResult {
  MilpStatus status = MilpStatus::no_solution;
  double objective = std::numeric_limits<double>::quiet_NaN();   ///< of `values`, incl. offset
  double best_bound = std::numeric_limits<double>::quiet_NaN();  ///< proven bound, when known
  std::vector<double> values;                                    ///< one per column; empty without a solution
  /**
   * Optional (empty when not computed or the LP relaxation was not solved to optimality): duals of
   * the LP relaxation (all integrality dropped) at its optimum, one per row. Sign convention: in
   * the model's own sense, i.e. `row_duals[i]` = d(optimal LP objective)/d(bound of row i that is
   * active). For a maximisation a binding `a·x <= cap` row has a dual >= 0 (the value of one more
   * unit of capacity, e.g. a "GPU-type price"); for a minimisation a binding `a·x >= b` row has a
   * dual >= 0. Rows that are not binding have dual 0.
   * When MilpParams::lp_duals is false a backend may leave them empty or give the best duals it
   * found without proving them optimal (the native backend does: a warm start for the next solve).
   */
  std::vector<double> row_duals;
  std::chrono::nanoseconds wall_time{};
  long long nodes = 0;  ///< branch-and-bound nodes, when known
  std::string message;  ///< human-readable detail (errors, limits)
};

/**
 * @brief Abstract MILP backend. Obtain one with make_milp_solver() (factory.hpp) or implement
 * do_name()/do_solve() to plug in your own. An instance is not shared between threads; two
 * instances (of any backend) may solve concurrently on two threads.
 */
class MilpSolver {
 public:
  virtual ~MilpSolver() = default;
  MilpSolver(const MilpSolver&) = delete;
  MilpSolver& operator=(const MilpSolver&) = delete;

  [[nodiscard]] std::string_view name() const noexcept { return do_name(); }
  /// True when the backend solves linear programs with `method` (automatic: always).
  [[nodiscard]] bool supports(LpMethod method) const noexcept {
    return method == LpMethod::automatic || do_supports(method);
  }

  /// Validates `model` (throws InvalidArgument), then solves it. Exceptions thrown by the
  /// backend are caught and returned as MilpStatus::error; wall_time is measured here.
  [[nodiscard]] MilpResult solve(const MilpModel& model, const MilpParams& params = {});

 protected:
  MilpSolver() = default;

 private:
  [[nodiscard]] virtual std::string_view do_name() const noexcept = 0;
  /// May assume `model` is valid, and that an LP's `params.lp_method` is supported.
  virtual MilpResult do_solve(const MilpModel& model, const MilpParams& params) = 0;
  /// LP methods beyond `automatic` the backend honours (none unless overridden).
  [[nodiscard]] virtual bool do_supports(LpMethod) const noexcept { return false; }
};

}  // namespace sia
