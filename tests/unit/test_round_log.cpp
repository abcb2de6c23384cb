// RoundOptions::log (round_log.hpp): the events of a round, in order, with the round's own numbers;
// a log changes nothing in the result; a fallback is reported as such.
#include <doctest/doctest.h>

#include <sia/configuration_set.hpp>
#include <sia/goodput_table.hpp>
#include <sia/round.hpp>
#include <sia/round_log.hpp>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "unit/table1.hpp"

namespace {

using namespace sia;

using test::table1_cluster;
using test::table1_jobs;

// Copies of the events (their string views point into the round's own strings).
struct Seen {
  RoundEvent event;
  std::string status, backend, line;
};

std::vector<Seen> logged_round(const ClusterSpec& cluster, const std::vector<JobSpec>& jobs, RoundOptions o,
                               RoundResult& r) {
  std::vector<Seen> seen;
  o.log = [&seen](const RoundEvent& e) {
    seen.push_back({e, std::string(e.status), std::string(e.backend), format(e)});
  };
  r = run_round(cluster, jobs, o);
  return seen;
}

}  // namespace

TEST_CASE("round_log.phases_in_order_with_the_round_numbers") {
  const auto cluster = table1_cluster();
  const auto jobs = table1_jobs();
  RoundResult r;
  const auto seen = logged_round(cluster, jobs, RoundOptions{}, r);
  REQUIRE(seen.size() == 5);
  const RoundPhase order[] = {RoundPhase::problem, RoundPhase::solve, RoundPhase::prices, RoundPhase::placement,
                              RoundPhase::done};
  for (std::size_t k = 0; k < seen.size(); ++k) {
    CAPTURE(seen[k].line);
    CHECK(seen[k].event.phase == order[k]);
    CHECK(seen[k].event.phase_ms >= 0.0);
    if (k > 0) CHECK(seen[k].event.elapsed_ms >= seen[k - 1].event.elapsed_ms);
    CHECK(seen[k].line.rfind(std::string(to_string(order[k])) + " ", 0) == 0);
  }
  // problem: 2 jobs, the cluster's 5 configurations (A: 1, 2; B: 1, 2, 4), each job usable on all 5.
  const RoundEvent& p = seen[0].event;
  CHECK(p.jobs == 2);
  CHECK(p.configurations == static_cast<std::ptrdiff_t>(make_configuration_set(cluster).configs.size()));
  CHECK(p.configurations == 5);
  CHECK(p.candidates == 10);
  CHECK(p.unevaluated == 0);
  // solve: the backend's answer.
  CHECK(seen[1].backend == r.backend);
  CHECK(seen[1].status == "optimal");
  CHECK(seen[1].event.nodes >= 0);
  CHECK(seen[1].event.gap <= 1e-4);
  // done: the result's own figures.
  const RoundEvent& d = seen[4].event;
  CHECK(seen[4].status == "optimal");
  CHECK(d.objective == doctest::Approx(r.objective));
  CHECK(d.best_bound == doctest::Approx(r.best_bound));
  CHECK(d.allocated == 2);
  CHECK(d.evicted == 0);
  CHECK(seen[4].event.elapsed_ms == r.total_ms);  // one instant: the same figure, not a speed
}

TEST_CASE("round_log.does_not_change_the_result") {
  const auto cluster = table1_cluster();
  const auto jobs = table1_jobs();
  for (const double p : {-0.5, 1.0}) {
    RoundOptions o;
    o.p = p;
    const RoundResult plain = run_round(cluster, jobs, o);
    RoundResult logged;
    (void)logged_round(cluster, jobs, o, logged);
    CHECK(logged.status == plain.status);
    CHECK(logged.objective == plain.objective);
    REQUIRE(logged.decisions.size() == plain.decisions.size());
    for (std::size_t i = 0; i < plain.decisions.size(); ++i) {
      CHECK(logged.decisions[i].config == plain.decisions[i].config);
      CHECK(logged.decisions[i].placement == plain.decisions[i].placement);
    }
    CHECK(logged.prices == plain.prices);
  }
}

TEST_CASE("round_log.fallback_and_options") {
  const auto cluster = table1_cluster();
  const auto jobs = table1_jobs();
  RoundOptions o;
  o.time_limit = std::chrono::milliseconds(0);  // no time for the solver: the greedy allocation answers
  o.place = false;
  RoundResult r;
  const auto seen = logged_round(cluster, jobs, o, r);
  CHECK(r.fallback);
  std::vector<RoundPhase> phases;
  for (const auto& s : seen) phases.push_back(s.event.phase);
  CHECK(phases ==
        std::vector<RoundPhase>{RoundPhase::problem, RoundPhase::solve, RoundPhase::fallback, RoundPhase::done});
  CHECK(seen[1].status == "no_solution");
  CHECK(seen[2].line.find("greedy fallback") != std::string::npos);
  CHECK(seen.back().status == to_string(r.status));
}

TEST_CASE("round_log.format") {
  RoundEvent e(RoundPhase::solve);
  e.backend = "native";
  e.status = "optimal";
  e.elapsed_ms = 12.34;
  e.phase_ms = 1.5;
  e.nodes = 42;
  e.objective = -3.5;
  e.best_bound = -3.5;
  e.gap = 0.0;
  CHECK(format(e) == "solve 12.3 ms (+1.5): backend native, optimal, 42 nodes, objective -3.5, bound -3.5, gap 0");
  CHECK(format(RoundEvent(RoundPhase::prices)) == "prices 0.0 ms (+0.0):");
}
