// JSON rounds one after another (sia::JsonSession, `sia_allocate --serve`): the same decisions, bit
// for bit, as each request parsed and run on its own, with the unchanged jobs' goodput model objects
// and the previous round's cache reused.
#include <sia/error.hpp>
#include <sia/goodput_table.hpp>
#include <sia/job_spec.hpp>
#include <sia/request.hpp>
#include <sia/round.hpp>
#include <sia/round_state_json.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <tuple>

namespace {

using nlohmann::json;

// A round of `n` adaptive jobs on three GPU types, goodput tables at 1, 2, 4 and 8 GPUs.
json make_request(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> speed(0.5, 3.0), bend(0.6, 0.95);
  json types = json::array();
  for (const auto& [name, nodes, gpus] : {std::tuple{"t4", 6, 4}, std::tuple{"rtx", 3, 8}, std::tuple{"a100", 2, 8}})
    types.push_back({{"name", name}, {"nodes", nodes}, {"gpus_per_node", gpus}});
  json jobs = json::array();
  for (int i = 0; i < n; ++i) {
    json good = json::array();
    for (const char* t : {"t4", "rtx", "a100"}) {
      const double s = speed(rng), b = bend(rng);
      for (int g = 1; g <= 8; g *= 2) good.push_back({{"gpu_type", t}, {"gpus", g}, {"value", s * std::pow(g, b)}});
    }
    jobs.push_back({{"id", "job" + std::to_string(i)},
                    {"min_gpus", 1},
                    {"max_gpus", 8},
                    {"kind", "adaptive"},
                    {"age_s", 0},
                    {"restarts", 0},
                    {"restart_cost_s", 30},
                    {"current", nullptr},
                    {"goodput", good}});
  }
  return {{"cluster", {{"gpu_types", types}}}, {"policy", {{"p", -0.5}, {"lambda", 1.1}}}, {"jobs", jobs}};
}

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

// Every job's configuration, GPUs and placement, the objective, bound and prices: bit for bit.
void check_same_round(const sia::RoundResult& a, const sia::RoundResult& b) {
  CHECK(a.status == b.status);
  CHECK(bits(a.objective) == bits(b.objective));
  CHECK(bits(a.best_bound) == bits(b.best_bound));
  REQUIRE(a.prices.size() == b.prices.size());
  for (std::size_t t = 0; t < a.prices.size(); ++t) CHECK(bits(a.prices[t]) == bits(b.prices[t]));
  REQUIRE(a.decisions.size() == b.decisions.size());
  for (std::size_t i = 0; i < a.decisions.size(); ++i) {
    INFO("job " << a.decisions[i].job);
    CHECK(a.decisions[i].job == b.decisions[i].job);
    CHECK(a.decisions[i].config == b.decisions[i].config);
    CHECK(a.decisions[i].gpus == b.decisions[i].gpus);
    CHECK(a.decisions[i].placement == b.decisions[i].placement);
  }
}

}  // namespace

TEST_CASE("io.json_session.rounds_as_alone") {
  sia::JsonSession session;
  std::string text = make_request(120, 11).dump();
  std::shared_ptr<const void> kept_model, changed_model;
  for (int round = 1; round <= 4; ++round) {
    INFO("round " << round);
    const sia::Request alone = sia::parse_request(text, "alone");
    const sia::Request req = session.parse(text, "session");
    if (round == 3) {
      // job0's table is the previous request's: the same object; job5's changed: a new one.
      CHECK(req.jobs[0].goodput_model_identity() == kept_model);
      CHECK(req.jobs[5].goodput_model_identity() != changed_model);
      CHECK(req.jobs[0].goodput_model_identity() != alone.jobs[0].goodput_model_identity());
    }
    if (round >= 2) REQUIRE(req.options.warm_start);
    const sia::RoundResult a = sia::run_round(alone.cluster, alone.jobs, alone.options);
    const sia::RoundResult s = session.run(req);
    check_same_round(a, s);
    kept_model = req.jobs[0].goodput_model_identity();
    changed_model = req.jobs[5].goodput_model_identity();
    // The next round: the jobs advanced by this decision, its warm start passed on; before round 3,
    // job5's table changes (re-estimated) and job7 leaves.
    json next = json::parse(sia::next_request_json(text, sia::decision_to_json(req, s), 360.0));
    if (round == 2) {
      for (auto& g : next["jobs"][5]["goodput"]) g["value"] = g["value"].get<double>() * 1.25;
      next["jobs"].erase(7);
    }
    text = next.dump();
  }
}

TEST_CASE("io.json_session.a_rejected_request_changes_nothing") {
  sia::JsonSession session;
  const std::string text = make_request(10, 3).dump();
  const sia::Request first = session.parse(text);
  CHECK_THROWS_AS((void)session.parse("{\"cluster\": ", "bad"), sia::InvalidArgument);
  const sia::Request again = session.parse(text);
  for (std::size_t i = 0; i < first.jobs.size(); ++i)
    CHECK(again.jobs[i].goodput_model_identity() == first.jobs[i].goodput_model_identity());
  session.clear();
  const sia::Request cleared = session.parse(text);
  CHECK(cleared.jobs[0].goodput_model_identity() != first.jobs[0].goodput_model_identity());
}

TEST_CASE("goodput_table.equality_is_bitwise") {
  sia::GoodputTable a, b, c;
  a.set("A", 1, 1.0).set("A", 2, 0.0).set("B", 4, 4.0);
  b.set("B", 4, 4.0).set("A", 2, 0.0).set("A", 1, 1.0);  // (the same table, written in another order)
  c.set("A", 1, 1.0).set("A", 2, -0.0).set("B", 4, 4.0);
  CHECK(a == b);
  CHECK_FALSE(a == c);  // (0 and -0: other bits)
  b.set("B", 4, 4.5);
  CHECK_FALSE(a == b);
}

TEST_CASE("job_spec.goodput_model_shared") {
  auto table = std::make_shared<const sia::GoodputTable>(sia::GoodputTable().set("A", 1, 2.0));
  sia::JobSpec x("x"), y("y");
  x.goodput_model(table);
  y.goodput_model(table);
  CHECK(x.goodput_model_identity() == y.goodput_model_identity());
  CHECK(x.goodput_model_identity().get() == table.get());
  CHECK_THROWS_AS(x.goodput_model(std::shared_ptr<const sia::GoodputTable>()), sia::InvalidArgument);
}
