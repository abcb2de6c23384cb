// libFuzzer target: MILP backends on objectives whose coefficients span many orders of magnitude (the class on
// which CBC 2.10.8 crashed in CbcNode::chooseDynamicBranch; docs/reliability.md). The input picks a generated
// Shockwave-like planning MILP (tests/unit/huge_range_milp.hpp: seed, size, weight range) and then rescales its
// objective coefficients one by one by 10^k, k in [-3, 8]. Every backend built in must return a valid status,
// and any solution it returns must satisfy the model; a crash is a finding.
#include <sia/milp/factory.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "unit/huge_range_milp.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 12) return 0;
  std::uint64_t seed = 0;
  std::memcpy(&seed, data, sizeof seed);
  sia::test::HugeRangeShape shape;
  shape.jobs = 1 + data[8] % 13;
  shape.window = 1 + data[9] % 7;
  shape.gpus = 8 * (1 + data[10] % 8);
  shape.range = std::pow(10.0, data[11] % 13);  // 1 .. 1e12
  sia::MilpModel m = sia::test::huge_range_planning_milp(seed, shape);
  for (std::size_t i = 12, j = 0; i < size && j < m.obj.size(); ++i, ++j)
    m.obj[j] *= std::pow(10.0, static_cast<int>(data[i] % 12) - 3);
  sia::MilpParams params;
  params.relative_gap = 0.0;
  params.node_limit = 300;                              // deterministic and short
  params.time_limit = std::chrono::milliseconds(2000);  // a safety net for backends without a node limit
  params.threads = 1;
  for (const auto& name : sia::available_milp_solvers()) {
    // Not GLPK: on objectives spanning 1e15 and more its simplex (inside glp_intopt) ran for more than 14 s
    // past a 2-s limit under ASan (CI, 2026-11-28) — a finding noted in docs/reliability.md, left for the GLPK
    // backend; this target is about crashes, which a run past the fuzzer's timeout hides.
    if (name == "glpk") continue;
    const sia::MilpResult r = sia::make_milp_solver(name)->solve(m, params);
    if (!r.values.empty() &&
        (r.values.size() != static_cast<std::size_t>(m.num_cols()) || !m.is_feasible(r.values, 1e-5)))
      std::abort();  // a solution that is not one
    if ((r.status == sia::MilpStatus::optimal || r.status == sia::MilpStatus::feasible) && r.values.empty())
      std::abort();  // claims a solution, returns none
  }
  return 0;
}
