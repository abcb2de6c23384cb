#pragma once
// Private: the MILP backend of a simulator policy that builds its own models (Themis, Shockwave).
#include <sia/milp/factory.hpp>

#include <memory>
#include <string>

namespace sia::sim::detail {

/// A backend made by name, or why it could not be made.
struct PolicySolver {
  std::unique_ptr<MilpSolver> solver;  ///< null when `error` is set
  std::string name;                    ///< the resolved name
  std::string error;
};

/// `name`, where "auto" means cbc when built, else glpk, else native. Never throws.
[[nodiscard]] inline PolicySolver make_policy_solver(const std::string& name) {
  PolicySolver out;
  out.name = name;
  if (name == "auto") {
    out.name = "native";
    for (const char* b : {"cbc", "glpk"})
      if (has_milp_solver(b)) {
        out.name = b;
        break;
      }
  }
  try {
    out.solver = make_milp_solver(out.name);
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

}  // namespace sia::sim::detail
