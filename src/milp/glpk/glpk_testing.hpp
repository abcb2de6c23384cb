#pragma once
// Private, for tests only: exercises the GLPK backend's error hook by misusing the GLPK API on
// purpose (an out-of-range row index) while solving `model`. Without the hook GLPK would abort()
// the process; with it the call returns MilpStatus::error carrying GLPK's message.
#include <sia/milp/solver.hpp>

namespace sia::detail {
MilpResult glpk_solve_provoking_error(const MilpModel& model);  // defined only when SIA_HAS_GLPK

/// What the backend's feasibility pump (run_pump in glpk_solver.cpp) did in one solve.
struct GlpkPumpReport {
  bool ran = false;  ///< the pump was started (root node, no incumbent yet, binaries only)
  int lps = 0;       ///< LPs it solved
  int found = 0;     ///< integer solutions it gave GLPK that GLPK accepted
};
/// Solves like the GLPK backend and reports the pump (tests only; defined only when SIA_HAS_GLPK).
MilpResult glpk_solve_reporting_pump(const MilpModel& model, const MilpParams& params, GlpkPumpReport& report);
}  // namespace sia::detail
