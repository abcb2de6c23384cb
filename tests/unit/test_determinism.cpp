// Determinism (issue 9 §4): the same request gives byte-identical decisions (timing fields
// removed) across repeated runs, across threads, and across backends on instances full of ties
// (identical jobs, identical goodputs) thanks to the round's tie-break rule (docs/reliability.md).
#include <doctest/doctest.h>

#include <sia/milp/factory.hpp>
#include <sia/request.hpp>
#include <sia/round.hpp>

#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "unit/milp_test_support.hpp"

namespace {

using namespace sia;

/// decision_to_json without timing fields; `cross_backend` also drops what legitimately depends on
/// the backend (its name, its proven bound, LP duals).
std::string canonical(const Request& req, const RoundResult& r, bool cross_backend = false) {
  std::string s = decision_to_json(req, r);
  static const std::regex timing(R"re("(solve_ms|total_ms)":[^,}]*,?)re");
  s = std::regex_replace(s, timing, "");
  if (cross_backend) {
    static const std::regex backend_fields(R"re("(backend|best_bound)":("[^"]*"|[^,}]*),?)re");
    s = std::regex_replace(s, backend_fields, "");
  }
  return s;
}

// `n` identical jobs (same goodput table) on a cluster with two GPU types of identical goodput:
// a huge number of optimal allocations.
std::string tie_request(int n, int nodes_a, int nodes_b, double p, bool with_current) {
  std::ostringstream o;
  o << R"({"cluster": {"gpu_types": [{"name": "A", "nodes": )" << nodes_a
    << R"(, "gpus_per_node": 4}, {"name": "B", "nodes": )" << nodes_b << R"(, "gpus_per_node": 4}]},)"
    << R"("policy": {"p": )" << p << R"(, "prices": false, "time_limit_ms": 20000}, "jobs": [)";
  for (int i = 0; i < n; ++i) {
    if (i) o << ",";
    o << R"({"id": "job)" << i << R"(", "goodput": [)"
      << R"({"gpu_type": "A", "gpus": 1, "value": 1}, {"gpu_type": "A", "gpus": 2, "value": 2},)"
      << R"({"gpu_type": "A", "gpus": 4, "value": 3}, {"gpu_type": "B", "gpus": 1, "value": 1},)"
      << R"({"gpu_type": "B", "gpus": 2, "value": 2}, {"gpu_type": "B", "gpus": 4, "value": 3}])";
    if (with_current && i % 3 == 0) o << R"(, "current": {"gpu_type": "B", "gpus": 1}, "age_s": 100)";
    o << "}";
  }
  o << "]}";
  return o.str();
}

}  // namespace

TEST_CASE("hardening.determinism.repeated_runs") {
  const auto req = parse_request(tie_request(10, 2, 2, -0.5, true), "ties.json");
  for (const auto& b : test::real_milp_backends()) {
    CAPTURE(b);
    auto o = req.options;
    o.backend = b;
    const auto first = canonical(req, run_round(req.cluster, req.jobs, o));
    for (int k = 0; k < 4; ++k) CHECK(canonical(req, run_round(req.cluster, req.jobs, o)) == first);
  }
}

TEST_CASE("hardening.determinism.threads") {
  const auto req = parse_request(tie_request(12, 2, 2, -0.5, true), "ties.json");
  for (const auto& b : test::real_milp_backends()) {
    CAPTURE(b);
    auto o = req.options;
    o.backend = b;
    const auto expected = canonical(req, run_round(req.cluster, req.jobs, o));
    std::vector<std::string> got(4);
    {
      std::vector<std::jthread> pool;
      for (std::size_t t = 0; t < got.size(); ++t)
        pool.emplace_back([&, t] { got[t] = canonical(req, run_round(req.cluster, req.jobs, o)); });
    }
    for (const auto& g : got) CHECK(g == expected);
  }
}

TEST_CASE("hardening.determinism.backends_agree_on_ties") {
  struct Case {
    int jobs, a, b;
    double p;
    bool current;
  };
  // Ties between permutations of interchangeable jobs, and between different multisets of
  // configurations of equal value reachable by moving up to three jobs at once (A:1+A:1 vs B:1+B:1
  // when both types score the same) are canonicalised by the round (docs/decision.md, "Ties").
  // {10, 2, 2, -0.5, true} and {8, 2, 1, 1.0, false} disagreed between backends before the rule
  // (canonicalize_equal_values); moves of four or more jobs are settled by canonicalize_exactly
  // (decision.recompute.tie_regressions).
  for (const Case c : {Case{6, 1, 1, -0.5, false}, Case{16, 1, 2, -0.5, false}, Case{5, 2, 2, 1.0, true},
                       Case{10, 2, 2, -0.5, true}, Case{8, 2, 1, 1.0, false}}) {
    CAPTURE(c.jobs);
    CAPTURE(c.p);
    CAPTURE(c.current);
    const auto req = parse_request(tie_request(c.jobs, c.a, c.b, c.p, c.current), "ties.json");
    std::string reference, reference_backend;
    for (const auto& b : test::real_milp_backends()) {
      auto o = req.options;
      o.backend = b;
      const auto r = run_round(req.cluster, req.jobs, o);
      REQUIRE(r.status == RoundStatus::optimal);
      const auto s = canonical(req, r, true);
      if (reference.empty()) {
        reference = s;
        reference_backend = b;
      } else {
        CAPTURE(reference_backend);
        CAPTURE(b);
        CHECK(s == reference);
      }
    }
  }
}

// Second tie-break rule: the status quo wins exact ties. Rigid jobs of one model and count have
// bit-identical utilities; with room for only some of them, the running ones keep their GPUs on
// every backend and every round (before the rule, a waiting job and a running one could swap every
// round, restarting both: cifar10 rigid jobs restarted every minute in the simulator).
TEST_CASE("hardening.determinism.status_quo_wins_ties") {
  for (const double p : {-0.5, 0.5}) {
    for (const auto& b : test::real_milp_backends()) {
      CAPTURE(p);
      CAPTURE(b);
      // Two 8-GPU nodes of type A, one of B; five rigid 8-GPU jobs with identical goodputs; the
      // jobs listed last (job3, job4) are the running ones.
      std::ostringstream o;
      o << R"({"cluster": {"gpu_types": [{"name": "A", "nodes": 2, "gpus_per_node": 8},)"
        << R"({"name": "B", "nodes": 1, "gpus_per_node": 8}]}, "policy": {"p": )" << p
        << R"(, "prices": false}, "jobs": [)";
      for (int i = 0; i < 5; ++i) {
        if (i) o << ",";
        o << R"({"id": "job)" << i << R"(", "kind": "rigid", "min_gpus": 8, "max_gpus": 8, "goodput": [)"
          << R"({"gpu_type": "A", "gpus": 8, "value": 8}, {"gpu_type": "B", "gpus": 8, "value": 8}], "age_s": 1000)";
        if (i == 3) o << R"(, "current": {"gpu_type": "A", "gpus": 8, "nodes": 1})";
        if (i == 4) o << R"(, "current": {"gpu_type": "B", "gpus": 8, "nodes": 1})";
        o << "}";
      }
      o << "]}";
      const auto req = parse_request(o.str(), "status_quo.json");
      auto opt = req.options;
      opt.backend = b;
      const auto r = run_round(req.cluster, req.jobs, opt);
      REQUIRE(r.status == RoundStatus::optimal);
      REQUIRE(r.decisions.size() == 5);
      // Three of the five run; the two running jobs keep their configurations...
      CHECK(r.decisions[3].config.has_value());
      CHECK_FALSE(r.decisions[3].changed);
      CHECK(r.decisions[4].config.has_value());
      CHECK_FALSE(r.decisions[4].changed);
      // ...and the free A node goes to the earliest waiting job (the interchangeable-jobs rule).
      CHECK(r.decisions[0].config.has_value());
      CHECK_FALSE(r.decisions[1].config.has_value());
      CHECK_FALSE(r.decisions[2].config.has_value());
    }
  }
}
