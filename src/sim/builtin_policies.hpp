#pragma once
// Private: the built-in policies. The build generates the definition of builtin_policies() from the
// `sia_add_policy(<name> <source>)` lines of CMakeLists.txt (cmake/SiaRegistry.cmake): each source
// defines `PolicyInfo builtin_policy_<name>()`, and the generated file calls them in build order.
#include <sia/sim/policy.hpp>

#include <vector>

namespace sia::sim::detail {
[[nodiscard]] std::vector<PolicyInfo> builtin_policies();
}  // namespace sia::sim::detail
