#pragma once
// Private: the built-in MILP backends. The build generates builtin_milp_backends() from the
// `sia_add_milp_backend(<name> ...)` lines of CMakeLists.txt (cmake/SiaRegistry.cmake): each
// backend's source defines `std::unique_ptr<MilpSolver> make_<name>_solver()`, and the list is in
// the order of those lines (the first is what "default" resolves to). Each backend's third-party
// header is included by its own .cpp file only.
#include <sia/milp/solver.hpp>

#include <memory>
#include <vector>

namespace sia::detail {

struct BuiltinMilpBackend {
  const char* name;
  std::unique_ptr<MilpSolver> (*make)();
};

[[nodiscard]] std::vector<BuiltinMilpBackend> builtin_milp_backends();

}  // namespace sia::detail
