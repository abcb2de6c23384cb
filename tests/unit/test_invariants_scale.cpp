// Invariants at scale (issue 9 §3): random rounds on the paper's heterogeneous cluster scaled up
// to 2048 GPUs (aws 192x4, rtx 96x8, dgx-ext 64x8) with every job kind, pins, non-preemptible
// waiting jobs, reservations, failed nodes and current placements. Every round is checked by
// test::check_round_valid (capacity per ConfigurationSet row, pins, placement rules), and small
// rounds are solved by every backend, whose objectives must agree within the gap.
//
// CI runs a reduced count. The full run (docs/reliability.md records its result):
//   SIA_INVARIANT_ROUNDS=10000 [SIA_INVARIANT_SEED=1] sia_tests -tc='hardening.invariants*'
#include <doctest/doctest.h>

#include <sia/milp/factory.hpp>
#include <sia/round.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>

#include <random>
#include <string>
#include <vector>
#include "test_env.hpp"

#include "unit/fault_solver.hpp"

namespace {

using namespace sia;

using sia::test::env_long;

}  // namespace

TEST_CASE("hardening.invariants.random_rounds") {
  const long rounds = sia::test::count("SIA_INVARIANT_ROUNDS", 60, 20);
  const auto seed = static_cast<std::uint64_t>(env_long("SIA_INVARIANT_SEED", 1));
  std::mt19937_64 rng(seed);
  std::vector<std::string> others;
  for (const auto& b : available_milp_solvers())
    if (b == "cbc" || b == "glpk") others.push_back(b);
  long checked = 0, compared = 0, max_gpus = 0;
  const int scales[] = {1, 1, 1, 2, 2, 4, 8, 16, 32};
  for (long k = 0; k < rounds; ++k) {
    // Every 20th round is a full 2048-GPU one; the others are mostly small.
    const int scale = k % 20 == 19 ? 32 : scales[rng() % std::size(scales)];
    const int jobs = 2 + static_cast<int>(rng() % static_cast<std::uint64_t>(8 * scale));
    const auto in = test::random_instance(rng, {scale, jobs});
    CAPTURE(k);
    CAPTURE(seed);
    CAPTURE(scale);
    CAPTURE(jobs);
    RoundOptions o;
    o.backend = "native";
    o.p = rng() % 4 == 0 ? 1.0 : -0.5;
    o.time_limit = std::chrono::milliseconds(5000);
    const auto r = run_round(in.cluster, in.jobs, o);
    test::check_round_valid(in.cluster, in.jobs, o, r);
    CHECK_FALSE(r.fallback);
    ++checked;
    max_gpus = std::max<long>(max_gpus, 64L * scale);
    // Backend agreement on instances small enough for CBC and GLPK to prove optimality quickly.
    if (scale == 1 && in.jobs.size() <= 10 && r.status == RoundStatus::optimal) {
      for (const auto& b : others) {
        CAPTURE(b);
        auto ob = o;
        ob.backend = b;
        const auto rb = run_round(in.cluster, in.jobs, ob);
        test::check_round_valid(in.cluster, in.jobs, ob, rb);
        if (rb.status != RoundStatus::optimal) continue;  // a limit: nothing to compare
        const double tol = 2 * o.relative_gap * std::max(std::abs(r.objective), std::abs(rb.objective)) + 1e-6;
        CHECK_MESSAGE(std::abs(r.objective - rb.objective) <= tol,
                      "native " << r.objective << " vs " << b << " " << rb.objective);
        ++compared;
      }
    }
  }
  MESSAGE("invariants: " << checked << " rounds checked (largest " << max_gpus << " GPUs), " << compared
                         << " backend comparisons, seed " << seed);
}
