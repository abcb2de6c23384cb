// The CBC backend's branch and bound runs in a child process (src/milp/cbc/cbc_solver.cpp, "The search in a
// child process"): a fault of CBC's kills the child, never the host. The faults themselves are injected
// (SIA_CBC_INJECT_FAULT: the child raises SIGSEGV before it searches) so that these tests do not depend on
// which garbage CBC reads; the real input that faulted is tests/fuzz/regressions/milp_ranges-cbc-passes-1.bin.
#include <doctest/doctest.h>

#include <sia/build_config.hpp>
#include <sia/milp/factory.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "unit/huge_range_milp.hpp"
#include "unit/milp_test_support.hpp"

using namespace sia;

#if SIA_HAS_CBC
namespace {

/// Sets an environment variable for one scope (the tests run one at a time).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() { ::unsetenv(name_); }

 private:
  const char* name_;
};

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

// An input of fuzz_milp_ranges (CI, 2026-12-02) on which CBC 2.10.8 crashed the process with SIGSEGV in
// CbcNode::chooseDynamicBranch: the node's passes ran out in a pass that took the "free non-integer" fallback,
// and CBC read its candidate list at an uninitialised index (docs/reliability.md). Whether it faults depends on
// the heap's garbage (it did under AddressSanitizer); either way the solve returns, and with a valid solution:
// the second search (without the fallback) when the first died. Solved with the fuzzer's parameters, then with
// no node limit (to its optimum, equal to GLPK's).
TEST_CASE("milp.cbc.huge_objective_range.passes_run_out_leave_the_host_alive") {
  const std::string path = std::string(SIA_SOURCE_DIR) + "/tests/fuzz/regressions/milp_ranges-cbc-passes-1.bin";
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), path);
  const std::vector<char> raw{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::vector<std::uint8_t> bytes(raw.begin(), raw.end());
  const auto m = test::huge_range_model_from_bytes(bytes.data(), bytes.size());
  REQUIRE(m.has_value());
  for (const long long nodes : {300LL, 0LL}) {
    CAPTURE(nodes);
    MilpParams p;
    p.relative_gap = 0.0;
    p.node_limit = nodes;
    p.threads = 1;
    p.time_limit = std::chrono::milliseconds(60000);  // a safety net only
    const auto r = make_milp_solver("cbc")->solve(*m, p);
    INFO(r.message);
    MESSAGE("nodes " << nodes << ": " << (r.message.empty() ? "no message" : r.message));
    REQUIRE((r.status == MilpStatus::optimal || r.status == MilpStatus::feasible));
    REQUIRE(r.values.size() == static_cast<std::size_t>(m->num_cols()));
    CHECK(m->is_feasible(r.values, 1e-6));
    CHECK(r.best_bound >= r.objective);  // maximisation
    if (nodes != 0) continue;
    CHECK(r.status == MilpStatus::optimal);
    const auto backends = test::real_milp_backends();
    if (std::find(backends.begin(), backends.end(), "glpk") == backends.end()) continue;
    const auto glpk = make_milp_solver("glpk")->solve(*m, p);
    REQUIRE(glpk.status == MilpStatus::optimal);
    double largest = 0;
    for (double c : m->obj) largest = std::max(largest, std::abs(c));
    CHECK(std::abs(r.objective - glpk.objective) <= 1e-8 * largest);  // the backends' resolution
  }
}
#endif
