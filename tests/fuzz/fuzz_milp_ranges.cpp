// libFuzzer target: MILP backends on objectives whose coefficients span many orders of magnitude (the class on
// which CBC 2.10.8 crashed in CbcNode::chooseDynamicBranch, and on which GLPK 5.0's feasibility pump ran with
// no time limit; docs/reliability.md). The input picks a generated Shockwave-like planning MILP
// (tests/unit/huge_range_milp.hpp, huge_range_model_from_bytes: seed, size, weight range) and then rescales its
// objective coefficients one by one by 10^k, k in [-3, 8]. Every backend built in must return a valid status,
// and any solution it returns must satisfy the model; a crash is a finding, and so is a solve that overruns
// its time limit (libFuzzer's -timeout, 10 s in .ci/fuzz.sh, against a 2-s limit).
#include <sia/milp/factory.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>

#include "unit/huge_range_milp.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto m = sia::test::huge_range_model_from_bytes(data, size);
  if (!m) return 0;
  sia::MilpParams params;
  params.relative_gap = 0.0;
  params.node_limit = 300;                              // deterministic and short
  params.time_limit = std::chrono::milliseconds(2000);  // a safety net for backends without a node limit
  params.threads = 1;
  for (const auto& name : sia::available_milp_solvers()) {
    const sia::MilpResult r = sia::make_milp_solver(name)->solve(*m, params);
    if (!r.values.empty() &&
        (r.values.size() != static_cast<std::size_t>(m->num_cols()) || !m->is_feasible(r.values, 1e-5)))
      std::abort();  // a solution that is not one
    if ((r.status == sia::MilpStatus::optimal || r.status == sia::MilpStatus::feasible) && r.values.empty())
      std::abort();  // claims a solution, returns none
  }
  return 0;
}
