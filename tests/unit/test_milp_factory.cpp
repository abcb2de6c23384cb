// Backends by name: case-insensitive lookup, unknown names, user registration, default choice.
#include <doctest/doctest.h>

#include <sia/build_config.hpp>
#include <sia/error.hpp>
#include <sia/milp/factory.hpp>

#include <algorithm>
#include <atomic>
#include <string>

using namespace sia;

namespace {
// A user backend: counts its solves and delegates to the built-in default backend. It stays
// registered for the rest of the test run (there is no unregister), and other tests iterate over
// every registered backend, so it must give correct answers.
std::atomic<int> counted_solves{0};
class CountingSolver final : public MilpSolver {
 public:
  CountingSolver() : inner_(make_milp_solver(default_milp_solver())) {}

 private:
  std::unique_ptr<MilpSolver> inner_;
  std::string_view do_name() const noexcept override { return "test-counting"; }
  MilpResult do_solve(const MilpModel& model, const MilpParams& params) override {
    ++counted_solves;
    return inner_->solve(model, params);
  }
};
}  // namespace

TEST_CASE("milp.factory.builtin_names") {
  const auto names = available_milp_solvers();
  CHECK(std::find(names.begin(), names.end(), "native") != names.end());
#if SIA_HAS_CBC
  CHECK(std::find(names.begin(), names.end(), "cbc") != names.end());
  CHECK(make_milp_solver("CBC")->name() == "cbc");
  CHECK(make_milp_solver("Cbc")->name() == "cbc");
  CHECK(has_milp_solver("cBc"));
#endif
  CHECK(default_milp_solver() == "native");  // preference: native, cbc, glpk
#if SIA_HAS_GLPK
  CHECK(std::find(names.begin(), names.end(), "glpk") != names.end());
  CHECK(make_milp_solver("GLPK")->name() == "glpk");
#endif
  CHECK(make_milp_solver()->name() == default_milp_solver());
  CHECK(make_milp_solver("default")->name() == default_milp_solver());
}

TEST_CASE("milp.factory.unknown_backend") {
  CHECK_FALSE(has_milp_solver("gurobi-ultra"));
  try {
    (void)make_milp_solver("gurobi-ultra");
    FAIL("expected BackendUnavailable");
  } catch (const BackendUnavailable& e) {
    const std::string msg = e.what();
    CHECK(msg.find("gurobi-ultra") != std::string::npos);
    for (const auto& n : available_milp_solvers()) CHECK(msg.find(n) != std::string::npos);
  }
}

TEST_CASE("milp.factory.register_user_backend") {
  register_milp_solver("Test-Counting", [] { return std::make_unique<CountingSolver>(); });
  CHECK(has_milp_solver("test-counting"));
  const auto names = available_milp_solvers();
  CHECK(std::find(names.begin(), names.end(), "test-counting") != names.end());
  auto s = make_milp_solver("TEST-COUNTING");
  CHECK(s->name() == "test-counting");
  MilpModel m;
  m.sense = MilpSense::minimize;
  m.add_col(1.0, 2.0, 5.0, true);
  const int before = counted_solves.load();
  auto r = s->solve(m);
  CHECK(counted_solves.load() == before + 1);
  if (r.status != MilpStatus::error) {  // the default may be a stub while "native" is unfinished
    CHECK(r.status == MilpStatus::optimal);
    CHECK(r.objective == doctest::Approx(2.0));
  }
  // Re-registering replaces the factory instead of adding a second entry.
  register_milp_solver("test-counting", [] { return std::make_unique<CountingSolver>(); });
  const auto again = available_milp_solvers();
  CHECK(std::count(again.begin(), again.end(), "test-counting") == 1);
  CHECK_THROWS_AS(register_milp_solver("", [] { return std::make_unique<CountingSolver>(); }), InvalidArgument);
  CHECK_THROWS_AS(register_milp_solver("x", nullptr), InvalidArgument);
}
