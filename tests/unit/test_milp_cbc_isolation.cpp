// The CBC backend's branch and bound runs in a child process (src/milp/cbc/cbc_solver.cpp, "The search in a
// child process"): a fault of CBC's kills the child, never the host. The faults themselves are injected
// (SIA_CBC_INJECT_FAULT: the child raises SIGSEGV before it searches) so that these tests do not depend on
// which garbage CBC reads; the real input that faulted is tested in tests/unit/test_milp_cbc_ranges.cpp.
#include <doctest/doctest.h>

#include <sia/build_config.hpp>
#include <sia/milp/factory.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "unit/milp_test_support.hpp"

using namespace sia;

#if SIA_HAS_CBC
namespace {

using test::ScopedEnv;

/// A multi-dimensional knapsack of `items` binaries and `rows` capacity rows, random weights: small ones
/// solve at once, large ones keep CBC searching for a long time with no gap allowed.
MilpModel knapsack(int items, int rows, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> weight(1, 1000);
  MilpModel m;
  m.sense = MilpSense::maximize;
  std::vector<std::vector<int>> w(static_cast<std::size_t>(rows), std::vector<int>(static_cast<std::size_t>(items)));
  for (int j = 0; j < items; ++j) {
    double value = 0;
    for (int i = 0; i < rows; ++i) value += w[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = weight(rng);
    m.add_col(value / rows + weight(rng) / 10.0, 0, 1, true);  // values correlated with the weights: hard
  }
  for (int i = 0; i < rows; ++i) {
    double total = 0;
    for (int v : w[static_cast<std::size_t>(i)]) total += v;
    const int row = m.add_row(-MilpModel::inf, std::floor(total / 2));
    for (int j = 0; j < items; ++j) m.add_entry(row, j, w[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)]);
  }
  return m;
}

}  // namespace

TEST_CASE("milp.cbc.isolation.a_fault_is_searched_again") {
  const ScopedEnv isolation("SIA_CBC_ISOLATION", "fork");  // a sanitizer build forks only when asked
  const MilpModel m = knapsack(12, 3, 7);
  const auto optimum = test::brute_force_optimum(m);
  REQUIRE(optimum.has_value());
  const ScopedEnv fault("SIA_CBC_INJECT_FAULT", "first");
  const auto r = make_milp_solver("cbc")->solve(m);
  INFO(r.message);
  REQUIRE(r.status == MilpStatus::optimal);
  CHECK(r.objective == doctest::Approx(*optimum));
  CHECK(m.is_feasible(r.values, 1e-9));
  CHECK(r.message.find("died of SIGSEGV in its child process") != std::string::npos);
  CHECK(r.message.find("searched again") != std::string::npos);
}

TEST_CASE("milp.cbc.isolation.faults_give_a_clear_error_and_the_host_lives_on") {
  const ScopedEnv isolation("SIA_CBC_ISOLATION", "fork");
  const MilpModel m = knapsack(12, 3, 7);
  const ScopedEnv fault("SIA_CBC_INJECT_FAULT", "all");
  auto cbc = make_milp_solver("cbc");
  for (int k = 0; k < 3; ++k) {  // and the same instance goes on solving
    const auto r = cbc->solve(m);
    INFO(r.message);
    CHECK(r.status == MilpStatus::error);
    CHECK(r.values.empty());
    CHECK(r.message.find("SIGSEGV") != std::string::npos);
    CHECK(r.message.find("this process is unharmed") != std::string::npos);
    const auto optimum = test::brute_force_optimum(m);
    REQUIRE(optimum.has_value());
    CHECK(r.best_bound >= *optimum - 1e-9);  // the root LP's bound, still valid (a maximisation)
  }
}

TEST_CASE("milp.cbc.isolation.in_process_when_asked") {
  const MilpModel m = knapsack(12, 3, 7);
  const ScopedEnv fault("SIA_CBC_INJECT_FAULT", "all");  // only children fault
  const ScopedEnv in_process("SIA_CBC_IN_PROCESS", "1");
  const auto r = make_milp_solver("cbc")->solve(m);
  INFO(r.message);
  REQUIRE(r.status == MilpStatus::optimal);
  CHECK(r.objective == doctest::Approx(*test::brute_force_optimum(m)));
}

// The caller's stop token is a copy in the child that no thread of the host can reach: the stop travels through
// the shared mapping. Without that the child would search this knapsack to its end (minutes).
TEST_CASE("milp.cbc.isolation.a_stop_reaches_the_child") {
  // Forced: with the stopper thread below a sanitizer build would otherwise search in process.
  const ScopedEnv isolation("SIA_CBC_ISOLATION", "fork");
  const MilpModel m = knapsack(300, 20, 11);
  std::stop_source source;
  MilpParams p;
  p.relative_gap = 0.0;
  p.stop = source.get_token();
  std::jthread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    source.request_stop();
  });
  const auto r = make_milp_solver("cbc")->solve(m, p);
  INFO(r.message);
  CHECK((r.status == MilpStatus::feasible || r.status == MilpStatus::no_solution));
  if (r.status == MilpStatus::feasible) CHECK(m.is_feasible(r.values, 1e-9));
  CHECK(r.wall_time < std::chrono::seconds(60));  // a hang bound, not a speed claim
}

// A child that hangs (a lock another thread of the host held at fork time, a loop of CBC's) is killed by the
// parent once it outlives its time limit by the grace period (10 s): the solve ends with a clear error.
TEST_CASE("milp.cbc.isolation.a_hanging_child_is_killed") {
  const ScopedEnv isolation("SIA_CBC_ISOLATION", "fork");
  const ScopedEnv fault("SIA_CBC_INJECT_FAULT", "hang");
  const MilpModel m = knapsack(12, 3, 7);
  MilpParams p;
  p.time_limit = std::chrono::milliseconds(200);
  const auto r = make_milp_solver("cbc")->solve(m, p);
  INFO(r.message);
  CHECK(r.status == MilpStatus::error);
  CHECK(r.values.empty());
  CHECK(r.message.find("the child was killed") != std::string::npos);
  CHECK(r.wall_time < std::chrono::seconds(60));  // a hang bound, not a speed claim
  // And the same solver goes on: the next child searches.
  const ScopedEnv no_fault("SIA_CBC_INJECT_FAULT", "none");
  const auto again = make_milp_solver("cbc")->solve(m);
  CHECK(again.status == MilpStatus::optimal);
}

// In a sanitizer build with other threads running, the default keeps the search in process (those runtimes
// deadlock in a child forked while another thread allocates); everywhere else the default forks. Either way
// the answer is CBC's.
TEST_CASE("milp.cbc.isolation.default_with_other_threads") {
  const MilpModel m = knapsack(12, 3, 7);
  std::atomic<bool> quit{false};
  std::jthread busy([&] {
    while (!quit.load()) std::vector<double> churn(1000, 1.0);  // allocates without pause
  });
  const auto r = make_milp_solver("cbc")->solve(m);
  quit = true;
  INFO(r.message);
  REQUIRE(r.status == MilpStatus::optimal);
  CHECK(r.objective == doctest::Approx(*test::brute_force_optimum(m)));
}

#endif
