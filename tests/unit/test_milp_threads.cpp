// Two (or more) backend instances solving concurrently on different threads give the sequential answers.
#include <doctest/doctest.h>

#include <sia/build_config.hpp>
#include <sia/milp/factory.hpp>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "milp/glpk/glpk_testing.hpp"
#include "unit/milp_test_support.hpp"

using namespace sia;

namespace {
/// A small round-like model: `jobs` jobs choose at most one of 3 GPU counts, 2 GPU types with capacity.
MilpModel round_like(unsigned seed, int jobs) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.2, 1.0);
  MilpModel m;
  const int cap0 = m.add_row(-MilpModel::inf, 8), cap1 = m.add_row(-MilpModel::inf, 6);
  const double gpus[3] = {1, 2, 4};
  for (int j = 0; j < jobs; ++j) {
    const int row = m.add_row(-MilpModel::inf, 1);
    for (int t = 0; t < 2; ++t)
      for (double g : gpus) {
        const int c = m.add_col(u(rng) * std::sqrt(g) * (t == 0 ? 1.0 : 1.4), 0, 1, true);
        m.add_entry(row, c, 1);
        m.add_entry(t == 0 ? cap0 : cap1, c, g);
      }
  }
  return m;
}

void concurrent_solves(const std::vector<std::string>& names, int threads, int per_thread) {
  std::vector<MilpModel> models;
  for (unsigned s = 0; s < 5; ++s) models.push_back(round_like(100 + s, 10));
  // Sequential reference answers per backend.
  std::vector<std::vector<double>> expected(names.size());
  MilpParams p;
  p.relative_gap = 0.0;
  for (std::size_t b = 0; b < names.size(); ++b)
    for (auto& m : models) {
      auto r = make_milp_solver(names[b])->solve(m, p);
      REQUIRE(r.status == MilpStatus::optimal);
      expected[b].push_back(r.objective);
    }
  std::atomic<int> wrong{0}, done{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const auto b = static_cast<std::size_t>(t) % names.size();  // mixes backends across threads
      auto solver = make_milp_solver(names[b]);
      for (int k = 0; k < per_thread; ++k) {
        const auto i = static_cast<std::size_t>(k + t) % models.size();
        auto r = solver->solve(models[i], p);
        if (r.status != MilpStatus::optimal || std::abs(r.objective - expected[b][i]) > 1e-6 ||
            !models[i].is_feasible(r.values))
          ++wrong;
        ++done;
      }
    });
  for (auto& th : pool) th.join();
  CHECK(done.load() == threads * per_thread);
  CHECK(wrong.load() == 0);
}
}  // namespace

TEST_CASE("milp.threads.each_backend_concurrently") {
  for (const auto& name : sia::test::usable_milp_backends()) {
    CAPTURE(name);
    concurrent_solves({name}, 4, 50);
  }
}

// Heavy variant (not run by default): SIA_MILP_STRESS=1 sia_tests -tc='milp.threads.stress'
TEST_CASE("milp.threads.stress" * doctest::skip(std::getenv("SIA_MILP_STRESS") == nullptr)) {
  for (const auto& name : sia::test::usable_milp_backends()) {
    CAPTURE(name);
    concurrent_solves({name}, 8, 200);
  }
  concurrent_solves(sia::test::usable_milp_backends(), 8, 100);
}

TEST_CASE("milp.threads.backends_mixed") {
  const auto names = sia::test::usable_milp_backends();
  if (names.size() < 2) {
    MESSAGE("fewer than two usable backends; mixed test skipped");
    return;
  }
  concurrent_solves(names, 4, 20);
}

#if SIA_HAS_GLPK
TEST_CASE("milp.glpk.error_hook_prevents_abort") {
  // A deliberate GLPK API misuse inside a solve returns an error instead of abort()ing the process,
  // and GLPK keeps working on this thread and on others afterwards.
  MilpModel m;
  const int r = m.add_row(-MilpModel::inf, 3);
  m.add_entry(r, m.add_col(1, 0, 5, true), 1);
  auto res = detail::glpk_solve_provoking_error(m);
  CHECK(res.status == MilpStatus::error);
  CHECK(res.message.find("GLPK error") != std::string::npos);
  MESSAGE("GLPK said: " << res.message);
  auto ok = make_milp_solver("glpk")->solve(m);
  CHECK(ok.status == MilpStatus::optimal);
  CHECK(ok.objective == doctest::Approx(3.0));
  std::thread worker([&] {
    auto e = detail::glpk_solve_provoking_error(m);
    CHECK(e.status == MilpStatus::error);
    CHECK(make_milp_solver("glpk")->solve(m).status == MilpStatus::optimal);
  });
  worker.join();
}
#endif
