// Round state between rounds (include/sia/round_state.hpp, docs/round-state.md): restart counting,
// the 2x rule's input, age, lost nodes — and that the C++ state, a request's jobs and
// sia_allocate --next-request follow one rule.
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/lost_allocations.hpp>
#include <sia/request.hpp>
#include <sia/round.hpp>
#include <sia/round_state.hpp>
#include <sia/round_state_json.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

sia::JobDecision on(const std::string& job, int type, int nodes, int gpus, bool changed,
                    std::vector<sia::NodeShare> placement = {}) {
  sia::JobDecision d;
  d.job = job;
  d.config = sia::ConfigurationSpec{type, nodes, gpus};
  d.gpus = gpus;
  d.changed = changed;
  d.placement = std::move(placement);
  return d;
}

sia::JobDecision off(const std::string& job, bool changed) {
  sia::JobDecision d;
  d.job = job;
  d.changed = changed;
  return d;
}

sia::ClusterSpec two_nodes_of_8() {
  sia::ClusterSpec c;
  c.types = {sia::GpuTypeSpec("A", 2, 8)};  // configurations 1, 2, 4, 8, 16
  return c;
}

}  // namespace

TEST_CASE("core.round_state.restarts_age_and_largest_count") {
  sia::JobRoundState s;
  s.id = "j";
  CHECK_FALSE(s.has_run());
  // Waiting: age grows, nothing else.
  sia::advance_job_state(s, off("j", false), 60);
  CHECK(s.age_s == 60);
  CHECK_FALSE(s.current);
  // First start: not a restart.
  sia::advance_job_state(s, on("j", 0, 1, 2, true, {{0, 2, {0, 1}}}), 60);
  CHECK(s.restarts == 0);
  REQUIRE(s.current);
  CHECK(s.current->gpus == 2);
  CHECK(s.current->nodes == 1);
  CHECK(s.current->placement.size() == 1);
  CHECK(s.max_gpus_ever == 2);
  // Unchanged: no restart.
  sia::advance_job_state(s, on("j", 0, 1, 2, false, {{0, 2, {0, 1}}}), 60);
  CHECK(s.restarts == 0);
  // Scaled up: a restart; the largest count grows.
  sia::advance_job_state(s, on("j", 0, 1, 4, true), 60);
  CHECK(s.restarts == 1);
  CHECK(s.max_gpus_ever == 4);
  // Scaled down: a restart; the largest count stays.
  sia::advance_job_state(s, on("j", 0, 1, 1, true), 60);
  CHECK(s.restarts == 2);
  CHECK(s.max_gpus_ever == 4);
  // Stopped: no restart now, current cleared.
  sia::advance_job_state(s, off("j", true), 60);
  CHECK(s.restarts == 2);
  CHECK_FALSE(s.current);
  // Resumed: the restart is counted now.
  sia::advance_job_state(s, on("j", 0, 1, 1, true), 60);
  CHECK(s.restarts == 3);
  // Moved to other GPUs with the same configuration (evicted): `changed`, so a restart.
  sia::advance_job_state(s, on("j", 0, 1, 1, true, {{1, 1, {0}}}), 60);
  CHECK(s.restarts == 4);
  // The age never restarts: 8 rounds of 60 s.
  CHECK(s.age_s == 480);
}

TEST_CASE("core.round_state.bad_input") {
  sia::JobRoundState s;
  s.id = "j";
  CHECK_THROWS_AS(sia::advance_job_state(s, off("k", false), 1), sia::InvalidArgument);
  CHECK_THROWS_AS(sia::advance_job_state(s, off("j", false), -1), sia::InvalidArgument);
  CHECK_THROWS_AS(sia::advance_job_state(s, off("j", false), std::nan("")), sia::InvalidArgument);
  CHECK_THROWS_AS(sia::advance_job_state(s, off("j", false), std::numeric_limits<double>::infinity()),
                  sia::InvalidArgument);
  CHECK(s.age_s == 0);
  std::vector<sia::JobRoundState> states{s};
  std::vector<sia::JobSpec> jobs{sia::JobSpec("j")};
  sia::RoundResult r;
  CHECK_THROWS_WITH_AS(sia::advance_round_state(states, jobs, r, 1, two_nodes_of_8()),
                       doctest::Contains("1 states, 1 jobs and 0 decisions"), sia::InvalidArgument);
  r.decisions = {off("x", false)};
  CHECK_THROWS_WITH_AS(sia::advance_round_state(states, jobs, r, 1, two_nodes_of_8()),
                       doctest::Contains("round state [0]"), sia::InvalidArgument);
  sia::JobSpec other("other");
  CHECK_THROWS_AS(sia::apply_round_state(s, other), sia::InvalidArgument);
}

TEST_CASE("core.round_state.lost_nodes_one_rule_for_state_and_request") {
  // For every current count and every set of failed nodes, the state and a request's job agree on
  // what is lost (sia_allocate forgets through forget_lost_allocations, schedulers through the state).
  for (int gpus : {1, 2, 4, 6, 8, 16}) {
    for (const std::vector<int>& down :
         {std::vector<int>{}, std::vector<int>{0}, std::vector<int>{1}, std::vector<int>{0, 1}}) {
      const bool rigid = gpus == 6;  // 6 on 8-GPU nodes: a rigid count on its footprint
      sia::ClusterSpec c = two_nodes_of_8();
      c.down = {down};
      sia::JobSpec job("j");
      job.kind(rigid ? sia::JobKind::rigid : sia::JobKind::adaptive).min_gpus(rigid ? 6 : 1).max_gpus(rigid ? 6 : 16);
      job.current(sia::CurrentAllocation{0, gpus, 0, {}});
      sia::JobRoundState s = sia::round_state_of(job);
      std::vector<sia::JobSpec> jobs{job};
      const bool request_forgot = !sia::forget_lost_allocations(c, jobs).empty();
      const bool state_forgot = sia::forget_lost_allocation(s, c);
      INFO("gpus " << gpus << ", down " << down.size());
      CHECK(request_forgot == state_forgot);
      CHECK(state_forgot == !s.current.has_value());
      const int up = 2 - static_cast<int>(down.size());
      CHECK(state_forgot == (gpus > 8 * up));
    }
  }
  // A type the next cluster no longer has is lost as well.
  sia::JobRoundState s;
  s.id = "j";
  s.current = sia::CurrentAllocation{3, 1, 1, {}};
  CHECK(sia::forget_lost_allocation(s, two_nodes_of_8()));
}

TEST_CASE("core.round_state.round_trip_through_run_round") {
  // One job on two 8-GPU nodes grows by the 2x rule; node 1 fails while it holds both nodes. The
  // state path forgets the lost 16-GPU configuration (run_round rejects a current the cluster lost)
  // and the job restarts on the node left.
  sia::ClusterSpec cluster = two_nodes_of_8();
  auto goodput = [](const sia::GpuTypeSpec&, const sia::ConfigurationSpec& c) { return std::sqrt(c.gpus); };
  std::vector<sia::JobSpec> jobs{sia::JobSpec("big").min_gpus(1).max_gpus(16).restart_cost_s(1).goodput_fn(goodput)};
  std::vector<sia::JobRoundState> states{sia::round_state_of(jobs[0])};
  sia::RoundOptions opt;
  opt.backend = "native";
  std::vector<int> gpus;
  std::vector<int> restarts;
  for (int round = 0; round < 8; ++round) {
    sia::apply_round_state(states[0], jobs[0]);
    const sia::RoundResult r = sia::run_round(cluster, jobs, opt);
    REQUIRE(r.decisions.size() == 1);
    gpus.push_back(r.decisions[0].gpus);
    for (const auto& share : r.decisions[0].placement) CHECK_FALSE(cluster.is_down(0, share.node));
    sia::ClusterSpec next = cluster;
    if (round == 4) {
      next.down = {{1}};
      // Without the state's rule the next round has a current the cluster no longer has.
      std::vector<sia::JobSpec> stale = jobs;
      stale[0].current(sia::CurrentAllocation{0, 16, 2, {}});
      sia::RoundOptions strict = opt;
      strict.strict = true;  // not strict, the round rejects that job alone (RoundResult::rejected)
      CHECK_THROWS_AS((void)sia::run_round(next, stale, strict), sia::InvalidArgument);
      CHECK(sia::run_round(next, stale, opt).rejected.size() == 1);
    }
    const auto changes = sia::advance_round_state(states, jobs, r, 60, next);
    CHECK(changes.lost == (round == 4 ? std::vector<std::string>{"big"} : std::vector<std::string>{}));
    CHECK(changes.started == (round == 0 ? std::vector<std::string>{"big"} : std::vector<std::string>{}));
    restarts.push_back(states[0].restarts);
    cluster = next;
  }
  // 1, 2, 4, 8, 16 by the 2x rule, then 8 on the node left.
  CHECK(gpus == std::vector<int>{1, 2, 4, 8, 16, 8, 8, 8});
  // Restarts: none at the first start, one per resize, one when it restarts after the failure.
  CHECK(restarts == std::vector<int>{0, 1, 2, 3, 4, 5, 5, 5});
  CHECK(states[0].max_gpus_ever == 16);
  CHECK(states[0].age_s == 480);
}

// ---------------------------------------------------------------------------------------------
// The JSON path (sia_allocate --next-request) goes through the same function.

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void check_same_state(const sia::JobSpec& job, const sia::JobRoundState& s) {
  INFO("job " << job.id());
  CHECK(job.id() == s.id);
  CHECK(job.age_s() == s.age_s);
  CHECK(job.restarts() == s.restarts);
  CHECK(job.max_gpus_ever() == std::optional<int>(s.max_gpus_ever));
  REQUIRE(job.current().has_value() == s.current.has_value());
  if (!s.current) return;
  CHECK(job.current()->type == s.current->type);
  CHECK(job.current()->gpus == s.current->gpus);
  CHECK(job.current()->nodes == s.current->nodes);
  CHECK(job.current()->placement == s.current->placement);
}

}  // namespace

TEST_CASE("io.next_request.same_state_as_the_cpp_path") {
  // Three rounds of the 64-GPU example request, once through JSON (decision_to_json, then
  // next_request_json) and once in C++ (advance_round_state): the jobs of each next request carry
  // exactly the C++ states.
  std::string text = read_file(SIA_SOURCE_DIR "/examples/requests/cluster64.json");
  REQUIRE_FALSE(text.empty());
  sia::Request req = sia::parse_request(text);
  std::vector<sia::JobRoundState> states;
  for (const auto& j : req.jobs) states.push_back(sia::round_state_of(j));
  for (int round = 0; round < 3; ++round) {
    req.options.backend = "native";
    req.options.time_limit.reset();
    const sia::RoundResult r = sia::run_round(req.cluster, req.jobs, req.options);
    const std::string decision = sia::decision_to_json(req, r);
    const double elapsed = 60.0 + round;
    const std::string next = sia::next_request_json(text, decision, elapsed);
    (void)sia::advance_round_state(states, req.jobs, r, elapsed, req.cluster);
    sia::Request next_req = sia::parse_request(next, "next");
    REQUIRE(next_req.jobs.size() == states.size());
    for (std::size_t i = 0; i < states.size(); ++i) check_same_state(next_req.jobs[i], states[i]);
    // The decision's warm start is passed on.
    CHECK((next.find("\"warm_start\"") != std::string::npos) == (decision.find("\"warm_start\"") != std::string::npos));
    text = next;
    req = std::move(next_req);
  }
}

TEST_CASE("io.next_request.lost_node_restarts_the_job") {
  // A 2-node job holds both nodes; node A/1 fails. The next request lists it in cluster.down: the
  // reader forgets the lost 8-GPU configuration, the round restarts the job on the node left, and
  // --next-request counts that restart.
  const std::string r1 = R"({"cluster": {"gpu_types": [{"name": "A", "nodes": 2, "gpus_per_node": 4}]%DOWN%},
    "policy": {"backend": "native"},
    "jobs": [{"id": "wide", "min_gpus": 1, "max_gpus": 8, "age_s": 600, "restarts": 0, "max_gpus_ever": 8,
              "current": {"gpu_type": "A", "gpus": 8, "placement": [{"node": "A/0", "gpus": 4}, {"node": "A/1", "gpus": 4}]},
              "goodput": [{"gpu_type": "A", "gpus": 1, "value": 1}, {"gpu_type": "A", "gpus": 2, "value": 2},
                          {"gpu_type": "A", "gpus": 4, "value": 4}, {"gpu_type": "A", "gpus": 8, "value": 8}]}]})";
  auto with_down = [&](const std::string& down) {
    std::string s = r1;
    s.replace(s.find("%DOWN%"), 6, down);
    return s;
  };
  const std::string request = with_down(R"(, "down": ["A/1"])");
  const sia::Request req = sia::parse_request(request);
  CHECK_FALSE(req.jobs[0].current().has_value());  // forgotten by the reader
  const sia::RoundResult r = sia::run_round(req.cluster, req.jobs, req.options);
  REQUIRE(r.decisions[0].gpus == 4);
  CHECK(r.decisions[0].changed);
  const sia::Request next = sia::parse_request(sia::next_request_json(request, sia::decision_to_json(req, r), 30));
  CHECK(next.jobs[0].restarts() == 1);
  CHECK(next.jobs[0].age_s() == 630);
  CHECK(next.jobs[0].max_gpus_ever() == std::optional<int>(8));
  REQUIRE(next.jobs[0].current().has_value());
  CHECK(next.jobs[0].current()->gpus == 4);
  for (const auto& share : next.jobs[0].current()->placement) CHECK(share.node == 0);
  // Without the failure the job keeps both nodes: no restart.
  const std::string healthy = with_down("");
  const sia::Request hreq = sia::parse_request(healthy);
  const sia::RoundResult hr = sia::run_round(hreq.cluster, hreq.jobs, hreq.options);
  const sia::Request hnext = sia::parse_request(sia::next_request_json(healthy, sia::decision_to_json(hreq, hr), 30));
  CHECK(hnext.jobs[0].restarts() == 0);
  CHECK(hnext.jobs[0].current()->gpus == 8);
}

TEST_CASE("io.next_request.bad_input") {
  const std::string request = read_file(SIA_SOURCE_DIR "/examples/requests/table1.json");
  const sia::Request req = sia::parse_request(request);
  const std::string ok = sia::decision_to_json(req, sia::run_round(req.cluster, req.jobs, req.options));
  CHECK_NOTHROW((void)sia::next_request_json(request, ok, 0));
  auto fails = [&](const std::string& decision, const char* what, double elapsed = 1) {
    CAPTURE(decision);
    CHECK_THROWS_WITH_AS((void)sia::next_request_json(request, decision, elapsed), doctest::Contains(what),
                         sia::InvalidArgument);
  };
  fails(ok, "elapsed seconds", -1);
  fails(ok, "elapsed seconds", std::nan(""));
  fails("{", "decision:");
  fails("[]", "must be a JSON object");
  fails(R"({"allocations": [], "unallocated": ["J1"]})", "job \"J2\" of the request is neither");
  fails(R"({"allocations": [], "unallocated": ["J1", "J2", "J3"]})", "job \"J3\" is not in the request");
  fails(R"({"allocations": [{"job": "J1", "gpu_type": "C", "nodes": 1, "gpus": 1}], "unallocated": ["J2"]})",
        "allocations[0].gpu_type: unknown GPU type \"C\"");
  fails(R"({"allocations": [{"job": "J1", "gpu_type": "A", "nodes": 1, "gpus": 1,
            "placement": [{"node": "B/0", "gpus": 1}]}], "unallocated": ["J2"]})",
        "allocations[0].placement[0].node: unknown node \"B/0\" of GPU type \"A\"");
  fails(R"({"allocations": [{"job": "J1", "gpu_type": "A", "gpus": 1}], "unallocated": ["J2"]})",
        "allocations[0].nodes: missing field");
  fails(R"({"allocations": [{"job": "J1", "gpu_type": "A", "nodes": 1, "gpus": 1},
                            {"job": "J1", "gpu_type": "A", "nodes": 1, "gpus": 1}], "unallocated": ["J2"]})",
        "appears twice");
  // A job listed in `rejected` that the request reader set aside is skipped, not an error.
  CHECK_NOTHROW((void)sia::next_request_json(
      request, R"({"allocations": [], "unallocated": ["J1", "J2", "bad"], "rejected": [{"job": "bad"}]})", 1));
  // Unallocated entries may be objects with a reason (and a decision may carry fields this reader does not know).
  CHECK_NOTHROW((void)sia::next_request_json(
      request, R"({"allocations": [], "unallocated": [{"job": "J1", "reason": "capacity"}, "J2"], "new": 1})", 1));
}
