// The round checks every backend's answer itself (decode(), against the formulation's arrays), so it
// tells the native backend to leave out its own check of the solution it returns
// (ReadingSolver::set_answers_checked_by_caller). Leaving it out must change no round, every answer
// the round receives must still be a feasible solution of the model, and the setting must hold
// only during the round's own solve calls: any other caller keeps the backend's check.
#include <doctest/doctest.h>

#include <sia/milp/factory.hpp>
#include <sia/round.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "milp/reading_solver.hpp"
#include "round_instances.hpp"
#include "same_round.hpp"

namespace {

// The native backend asked as the round asks it (its own check left out), every answer then checked
// against the model as that check would (MilpModel::is_feasible, the same tolerance). Named
// "native", so that the round treats it as the native backend (its prices included).
class CheckedNative final : public sia::MilpSolver {
 public:
  int answers = 0;
  int infeasible = 0;
  int flag_set_inside = 0;  // calls during which the round had told the inner backend

 private:
  [[nodiscard]] std::string_view do_name() const noexcept override { return "native"; }
  sia::MilpResult do_solve(const sia::MilpModel& model, const sia::MilpParams& params) override {
    auto* reading = dynamic_cast<sia::detail::ReadingSolver*>(inner_.get());
    REQUIRE(reading != nullptr);
    if (reading->answers_checked_by_caller()) ++flag_set_inside;  // (never: the round sets it on *this)
    reading->set_answers_checked_by_caller(true);
    sia::MilpResult r = inner_->solve(model, params);
    reading->set_answers_checked_by_caller(false);
    if (r.status == sia::MilpStatus::optimal || r.status == sia::MilpStatus::feasible) {
      ++answers;
      if (!model.is_feasible(r.values, 1e-6)) ++infeasible;
    }
    return r;
  }
  std::unique_ptr<sia::MilpSolver> inner_ = sia::make_milp_solver("native");
};

using sia::test::given_of;
using sia::test::same_round;

}  // namespace

TEST_CASE("round.answer_check.native_check_left_to_the_round") {
  // Cold and warm rounds of every family: the native answers the round receives without the
  // backend's own check are feasible, and each round is the one the default backend gives.
  int answers = 0;
  for (const auto& family : sia::bench::instance_families()) {
    for (unsigned seed = 1; seed <= 2; ++seed) {
      CAPTURE(family);
      CAPTURE(seed);
      const auto in = sia::bench::make_instance(family, 64, seed);
      sia::RoundOptions o;
      o.place = false;
      CheckedNative checked;
      const auto cold = sia::run_round(in.cluster, in.jobs, o, checked);
      const auto cold_default = sia::run_round(in.cluster, in.jobs, o);
      same_round(cold, cold_default);
      if (!cold.warm_start) continue;
      const auto next = sia::bench::next_round(in, given_of(cold), 0.05, seed + 100, 64);
      sia::RoundOptions w = o;
      w.warm_start = cold.warm_start;
      const auto warm = sia::run_round(next.cluster, next.jobs, w, checked);
      const auto warm_default = sia::run_round(next.cluster, next.jobs, w);
      same_round(warm, warm_default);
      CHECK(checked.infeasible == 0);
      CHECK(checked.flag_set_inside == 0);
      answers += checked.answers;
    }
  }
  CHECK(answers > 0);
}

TEST_CASE("round.answer_check.setting_ends_with_the_round") {
  // A native instance the caller keeps across rounds (as the simulator does) is told only for the
  // round's calls: afterwards a direct solve checks its answer again.
  auto native = sia::make_milp_solver("native");
  auto* reading = dynamic_cast<sia::detail::ReadingSolver*>(native.get());
  REQUIRE(reading != nullptr);
  CHECK_FALSE(reading->answers_checked_by_caller());
  const auto in = sia::bench::make_instance("tables", 64, 3);
  sia::RoundOptions o;
  o.place = false;
  const auto r = sia::run_round(in.cluster, in.jobs, o, *native);
  CHECK(r.status == sia::RoundStatus::optimal);
  CHECK_FALSE(reading->answers_checked_by_caller());
}
