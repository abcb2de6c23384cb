// Backends by name: case-insensitive lookup, unknown names, user registration, default choice.
#include <doctest/doctest.h>

#include <sia/build_config.hpp>
#include <sia/error.hpp>
#include <sia/milp/factory.hpp>

#include <algorithm>
#include <string>

using namespace sia;

namespace {
/// A user backend: sets every column to its lower bound (valid for the model below).
class LowerBoundSolver final : public MilpSolver {
  std::string_view do_name() const noexcept override { return "test-lowerbound"; }
  MilpResult do_solve(const MilpModel& model, const MilpParams&) override {
    MilpResult r;
    r.values = model.col_lower;
    r.objective = model.objective_of(r.values);
    r.status = model.is_feasible(r.values) ? MilpStatus::feasible : MilpStatus::no_solution;
    return r;
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
  CHECK(default_milp_solver() == "cbc");  // preference: cbc, glpk, native
#elif SIA_HAS_GLPK
  CHECK(default_milp_solver() == "glpk");
#endif
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
  register_milp_solver("Test-LowerBound", [] { return std::make_unique<LowerBoundSolver>(); });
  CHECK(has_milp_solver("test-lowerbound"));
  const auto names = available_milp_solvers();
  CHECK(std::find(names.begin(), names.end(), "test-lowerbound") != names.end());
  auto s = make_milp_solver("TEST-LOWERBOUND");
  CHECK(s->name() == "test-lowerbound");
  MilpModel m;
  m.add_col(1.0, 2.0, 5.0, true);
  auto r = s->solve(m);
  CHECK(r.status == MilpStatus::feasible);
  CHECK(r.objective == doctest::Approx(2.0));
  CHECK_THROWS_AS(register_milp_solver("", [] { return std::make_unique<LowerBoundSolver>(); }), InvalidArgument);
  CHECK_THROWS_AS(register_milp_solver("x", nullptr), InvalidArgument);
}
