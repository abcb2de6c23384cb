// A warm round hands the native backend its start as bits per column (ReadingSolver::StartBits,
// CallerHints::start) instead of MilpParams::start_values, and takes its answer as the columns at 1
// (CallerHints::ones) instead of MilpResult::values: the same start and the same answer, so the same
// rounds, whichever way each goes, and whichever path of apply_warm_start() wrote the start (the
// round cache's, the jobs' ids', the jobs' current configurations).
#include <doctest/doctest.h>

#include <sia/milp/factory.hpp>
#include <sia/round.hpp>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "milp/reading_solver.hpp"
#include "round_instances.hpp"
#include "same_round.hpp"

namespace {

// The native backend behind a ReadingSolver that takes its start as bits or not (`bits`) and gives
// its answer as the columns at 1 or not (`ones`), the round's hints passed on: counts the calls
// that came with each kind of start and answer. Named "native", so that the round treats it as the
// native backend.
class StartSeen final : public sia::detail::ReadingSolver {
 public:
  StartSeen(bool bits, bool ones) : bits_(bits), ones_(ones) {}
  int with_bits = 0, with_values = 0, answers_by_ones = 0, answers_by_values = 0;

 private:
  [[nodiscard]] std::string_view do_name() const noexcept override { return "native"; }
  [[nodiscard]] bool takes_start_bits() const noexcept override { return bits_; }
  [[nodiscard]] bool gives_ones() const noexcept override { return ones_; }
  void read_checked(const sia::MilpModel& model) override { model.validate(); }
  sia::MilpResult do_solve(const sia::MilpModel& model, const sia::MilpParams& params) override {
    if (hints().start != nullptr) ++with_bits;
    if (!params.start_values.empty()) ++with_values;
    const sia::detail::ScopedCallerHints passed(*inner_, hints());
    sia::MilpResult r = inner_->solve(model, params);
    if (r.status == sia::MilpStatus::optimal || r.status == sia::MilpStatus::feasible)
      ++(r.values.empty() ? answers_by_ones : answers_by_values);
    return r;
  }
  bool bits_, ones_;
  std::unique_ptr<sia::MilpSolver> inner_ = sia::make_milp_solver("native");
};

// The same round, bit for bit: status, objective, decisions (sia::test::same_round), bound, prices,
// the next warm start's prices.
void same_round_and_prices(const sia::RoundResult& a, const sia::RoundResult& b) {
  sia::test::same_round(a, b);
  CHECK((a.best_bound == b.best_bound || (std::isnan(a.best_bound) && std::isnan(b.best_bound))));
  CHECK(a.prices == b.prices);
  REQUIRE(static_cast<bool>(a.warm_start) == static_cast<bool>(b.warm_start));
  if (!a.warm_start) return;
  REQUIRE(a.warm_start->prices.size() == b.warm_start->prices.size());
  for (std::size_t k = 0; k < a.warm_start->prices.size(); ++k)
    CHECK(a.warm_start->prices[k].price == b.warm_start->prices[k].price);
}

}  // namespace

TEST_CASE("round.start_bits.same_rounds_as_start_values_and_values") {
  for (const std::string family : {"tables", "pinned", "helios"})
    for (const int gpus : {64, 2048}) {
      CAPTURE(family);
      CAPTURE(gpus);
      const auto base = sia::bench::make_instance(family, gpus, 3);
      sia::RoundOptions o;
      o.place = false;
      o.time_limit = std::chrono::milliseconds(30000);
      const auto r0 = sia::run_round(base.cluster, base.jobs, o);
      REQUIRE(r0.warm_start);
      const auto next = sia::bench::next_round(base, sia::test::given_of(r0), 0.05, 11, gpus);
      // The warm start as the round left it (its cache: by position), a copy of it (by the jobs'
      // ids), and its prices alone (the jobs' current configurations).
      auto copied = std::make_shared<sia::WarmStart>(*r0.warm_start);
      copied->cache = nullptr;
      auto prices_only = std::make_shared<sia::WarmStart>(*r0.warm_start);
      prices_only->allocations.clear();
      for (const auto& warm : {r0.warm_start, std::shared_ptr<const sia::WarmStart>(copied),
                               std::shared_ptr<const sia::WarmStart>(prices_only)}) {
        sia::RoundOptions w = o;
        w.warm_start = warm;
        StartSeen as_bits(true, false), as_values(false, false), by_ones(false, true);
        const auto by_bits = sia::run_round(next.cluster, next.jobs, w, as_bits);
        const auto by_values = sia::run_round(next.cluster, next.jobs, w, as_values);
        const auto answered_by_ones = sia::run_round(next.cluster, next.jobs, w, by_ones);
        CHECK(as_bits.with_bits > 0);
        CHECK(as_bits.with_values == 0);
        CHECK(as_values.with_bits == 0);
        CHECK(as_values.with_values > 0);
        CHECK(as_values.answers_by_values > 0);
        CHECK(as_values.answers_by_ones == 0);
        CHECK(by_ones.answers_by_ones > 0);
        CHECK(by_ones.answers_by_values == 0);
        same_round_and_prices(by_bits, by_values);
        same_round_and_prices(by_bits, answered_by_ones);
        auto native = sia::make_milp_solver("native");  // (the round's own backend: bits and ones)
        same_round_and_prices(by_bits, sia::run_round(next.cluster, next.jobs, w, *native));
      }
    }
}
