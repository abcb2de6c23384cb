#pragma once
// Private: constructors of the built-in backends. Only factory.cpp calls them; each backend's
// third-party header is included by its own .cpp file only.
#include <sia/milp/solver.hpp>

#include <memory>

namespace sia::detail {
std::unique_ptr<MilpSolver> make_native_solver();
std::unique_ptr<MilpSolver> make_cbc_solver();   // defined only when SIA_HAS_CBC
std::unique_ptr<MilpSolver> make_glpk_solver();  // defined only when SIA_HAS_GLPK
}  // namespace sia::detail
