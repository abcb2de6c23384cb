#pragma once
/// @file milp/factory.hpp
/// @brief Backends by name: which are available, make one, register your own.

#include <sia/milp/solver.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sia {

using MilpSolverFactory = std::function<std::unique_ptr<MilpSolver>()>;

/// Names of the available backends, built-in ones first (e.g. {"native", "cbc", "glpk"}).
[[nodiscard]] std::vector<std::string> available_milp_solvers();
/// True when `name` (case-insensitive) can be made.
[[nodiscard]] bool has_milp_solver(std::string_view name) noexcept;
/// The backend used for "default".
[[nodiscard]] std::string default_milp_solver();
/// Makes a backend; "default" picks default_milp_solver().
/// @throws BackendUnavailable listing what is available.
[[nodiscard]] std::unique_ptr<MilpSolver> make_milp_solver(std::string_view name = "default");
/// Registers (or replaces) a backend under `name` (lower-cased). Thread-safe.
void register_milp_solver(std::string name, MilpSolverFactory factory);

}  // namespace sia
