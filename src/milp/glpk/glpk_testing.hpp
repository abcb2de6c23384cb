#pragma once
// Private, for tests only: exercises the GLPK backend's error hook by misusing the GLPK API on
// purpose (an out-of-range row index) while solving `model`. Without the hook GLPK would abort()
// the process; with it the call returns MilpStatus::error carrying GLPK's message.
#include <sia/milp/solver.hpp>

namespace sia::detail {
MilpResult glpk_solve_provoking_error(const MilpModel& model);  // defined only when SIA_HAS_GLPK
}  // namespace sia::detail
