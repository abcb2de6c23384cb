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

// The same cluster, `n` adaptive jobs given as a `model` (Pollux's): a fitted model on one type,
// seed models on the others.
json make_model_request(int n, unsigned seed) {
  json request = make_request(0, seed);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  const char* types[] = {"t4", "rtx", "a100"};
  for (int i = 0; i < n; ++i) {
    const std::string fitted = types[i % 3];
    json perf = {{"alpha_c", 0.02 * u(rng)}, {"beta_c", 4e-4 * u(rng)},  {"alpha_n", 0.01 * u(rng)},
                 {"beta_n", 5e-4 * u(rng)},  {"alpha_r", 0.01 * u(rng)}, {"beta_r", 1e-3 * u(rng)},
                 {"gamma", 1.5 + u(rng) / 2}};
    json seeds = json::object(), local = json::object();
    for (const char* t : types) {
      if (t != fitted) seeds[t] = {{"alpha_c", 0.02 * u(rng)}, {"beta_c", 5e-4 * u(rng)}};
      local[t] = {16, 512};
    }
    request["jobs"].push_back({{"id", "m" + std::to_string(i)},
                               {"min_gpus", 1},
                               {"max_gpus", 16},
                               {"kind", "adaptive"},
                               {"restart_cost_s", 30},
                               {"model",
                                {{"init_batch_size", 128},
                                 {"max_batch_size", 4096},
                                 {"grad", {{"sqr", 0.5 * u(rng)}, {"var", 20.0 * u(rng)}}},
                                 {"perf", {{fitted, perf}}},
                                 {"seed", seeds},
                                 {"local_batch", local}}}});
  }
  return request;
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

// Rounds 1 to `rounds` from `text` in one session, each checked bit for bit against the same request
// parsed and run alone; `check(round, request, alone)` looks at the requests before the round,
// `change(round, next)` edits the next round's request (the jobs advanced by this decision, its warm
// start passed on).
template <class Check, class Change>
void check_rounds(std::string text, int rounds, Check check, Change change) {
  sia::JsonSession session;
  for (int round = 1; round <= rounds; ++round) {
    INFO("round " << round);
    const sia::Request alone = sia::parse_request(text, "alone");
    const sia::Request req = session.parse(text, "session");
    if (round >= 2) REQUIRE(req.options.warm_start);
    check(round, req, alone);
    const sia::RoundResult a = sia::run_round(alone.cluster, alone.jobs, alone.options);
    const sia::RoundResult s = session.run(req);
    check_same_round(a, s);
    json next = json::parse(sia::next_request_json(text, sia::decision_to_json(req, s), 360.0));
    change(round, next);
    text = next.dump();
  }
}

}  // namespace

TEST_CASE("io.json_session.rounds_as_alone") {
  std::shared_ptr<const void> kept_model, changed_model;
  const auto check = [&](int round, const sia::Request& req, const sia::Request& alone) {
    if (round == 3) {
      // job0's table is the previous request's: the same object; job5's changed: a new one.
      CHECK(req.jobs[0].goodput_model_identity() == kept_model);
      CHECK(req.jobs[5].goodput_model_identity() != changed_model);
      CHECK(req.jobs[0].goodput_model_identity() != alone.jobs[0].goodput_model_identity());
    }
    kept_model = req.jobs[0].goodput_model_identity();
    changed_model = req.jobs[5].goodput_model_identity();
  };
  // Before round 3, job5's table changes (re-estimated) and job7 leaves.
  check_rounds(make_request(120, 11).dump(), 4, check, [](int round, json& next) {
    if (round != 2) return;
    for (auto& g : next["jobs"][5]["goodput"]) g["value"] = g["value"].get<double>() * 1.25;
    next["jobs"].erase(7);
  });
}

TEST_CASE("io.json_session.model_jobs_kept") {
  // Jobs given as a `model`: an unchanged one keeps its object (and the round its rows), a changed
  // one gets a new one; every round decides what the same request alone decides, bit for bit.
  std::shared_ptr<const void> kept_model, changed_model;
  const auto check = [&](int round, const sia::Request& req, const sia::Request& alone) {
    REQUIRE(req.jobs.size() == 24);
    if (round >= 2) {
      CHECK(req.jobs[0].goodput_model_identity() == kept_model);
      CHECK(req.jobs[0].goodput_model_identity() != alone.jobs[0].goodput_model_identity());
      // Before round 3 job 2's gradient statistics changed.
      CHECK((req.jobs[2].goodput_model_identity() == changed_model) == (round == 2));
    }
    kept_model = req.jobs[0].goodput_model_identity();
    changed_model = req.jobs[2].goodput_model_identity();
  };
  check_rounds(make_model_request(24, 5).dump(), 3, check, [](int round, json& next) {
    if (round == 2)
      next["jobs"][2]["model"]["grad"]["var"] = next["jobs"][2]["model"]["grad"]["var"].get<double>() * 1.5;
  });
}

TEST_CASE("io.json_session.model_compared_bitwise") {
  // The same model written otherwise (1.0 for 1, -0.0 for 0), or for a job of another kind, is
  // not taken for the same: a new object, as a lone parse would build.
  const json base = make_model_request(1, 9);
  sia::JsonSession session;
  const auto identity = [&session](const json& request) {
    return session.parse(request.dump()).jobs.at(0).goodput_model_identity();
  };
  const auto first = identity(base);
  CHECK(identity(base) == first);
  json other = base;
  other["jobs"][0]["model"]["init_batch_size"] = 128.0;
  const auto as_float = identity(other);
  CHECK(as_float != first);
  CHECK(identity(other) == as_float);
  other["jobs"][0]["model"]["grad"]["sqr"] = -0.0;
  const auto negative_zero = identity(other);
  other["jobs"][0]["model"]["grad"]["sqr"] = 0.0;
  CHECK(identity(other) != negative_zero);
  other = base;
  other["jobs"][0]["kind"] = "strong-scaling";
  CHECK(identity(other) != first);
  // A job whose model becomes a table, and back: new objects.
  other = base;
  other["jobs"][0].erase("model");
  other["jobs"][0]["goodput"] = json::array({{{"gpu_type", "t4"}, {"gpus", 1}, {"value", 1.0}}});
  CHECK(identity(other) != first);
  CHECK(identity(base) != first);
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
