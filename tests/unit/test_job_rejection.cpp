// Issue 15 parts 1-2 (docs/decision.md, "Rejected jobs" and "Reasons"): a job-level error rejects
// that job alone (RoundOptions::strict / `options.strict` restores all-or-nothing), and every job
// without GPUs carries a reason. Known answers on small rounds, for every backend.
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/goodput_table.hpp>
#include <sia/milp/factory.hpp>
#include <sia/request.hpp>
#include <sia/round.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "unit/milp_test_support.hpp"

namespace {

using namespace sia;
using nlohmann::json;

RoundOptions options_for(const std::string& backend) {
  RoundOptions o;
  o.backend = backend;
  o.threads = 1;
  return o;
}

// A job whose goodput on type `type` is `per_gpu` per GPU for the counts given (others unusable).
JobSpec linear_job(const std::string& id, const std::string& type, std::vector<int> counts, double per_gpu = 1.0) {
  GoodputTable t;
  for (int g : counts) t.set(type, g, per_gpu * g);
  return JobSpec(id).goodput_model(t);
}

ClusterSpec cluster_of(std::vector<GpuTypeSpec> types) {
  ClusterSpec c;
  c.types = std::move(types);
  return c;
}

ClusterSpec two_types() { return cluster_of({GpuTypeSpec("A", 1, 2), GpuTypeSpec("B", 1, 4)}); }

const JobDecision& decision_of(const RoundResult& r, const std::string& id) {
  for (const auto& d : r.decisions)
    if (d.job == id) return d;
  FAIL("no decision for " << id);
  return r.decisions.front();
}

// Every job without GPUs has a reason, every job with GPUs none.
void check_reasons_present(const RoundResult& r) {
  for (const auto& d : r.decisions) {
    CAPTURE(d.job);
    if (d.config) {
      CHECK(d.reason == PendingReason::none);
    } else {
      CHECK(d.reason != PendingReason::none);
      CHECK_FALSE(d.detail.empty());
    }
  }
}

}  // namespace

TEST_CASE("rejection.round.one_bad_job_among_valid_ones") {
  const ClusterSpec cluster = two_types();
  JobSpec bad = linear_job("bad", "A", {1, 2});
  bad.min_gpus(0).current(CurrentAllocation{0, 2, 1, {}});  // running on both A GPUs
  const std::vector<JobSpec> jobs = {linear_job("J1", "B", {1, 2, 4}), bad, linear_job("J3", "A", {1, 2})};
  const std::vector<JobSpec> valid = {jobs[0], jobs[2]};
  for (const auto& b : test::real_milp_backends()) {
    CAPTURE(b);
    RoundOptions o = options_for(b);
    const RoundResult r = run_round(cluster, jobs, o);
    const RoundResult alone = run_round(cluster, valid, o);
    REQUIRE(r.rejected.size() == 1);
    CHECK(r.rejected[0].job == "bad");
    CHECK(r.rejected[0].index == 1);
    CHECK(r.rejected[0].field == "min_gpus");
    CHECK(r.rejected[0].reason == "must be >= 1 (got 0)");
    CHECK(r.rejected[0].running);
    // The others are scheduled as if the rejected job were not in the round (it adds nothing,
    // not even lambda, to the objective), and its current GPUs go back to the pool.
    REQUIRE(r.decisions.size() == 3);
    CHECK(r.status == RoundStatus::optimal);
    CHECK(r.objective == alone.objective);
    CHECK(r.decisions[0].config == alone.decisions[0].config);
    CHECK(r.decisions[2].config == alone.decisions[1].config);
    REQUIRE(r.decisions[2].config);
    CHECK(r.decisions[2].config->type == 0);
    CHECK(r.decisions[2].gpus == 2);
    const JobDecision& d = r.decisions[1];
    CHECK(d.job == "bad");
    CHECK_FALSE(d.config);
    CHECK(d.changed);  // a rejected running job stops
    CHECK(d.reason == PendingReason::rejected);
    CHECK(d.detail == "min_gpus: must be >= 1 (got 0)");
    CHECK(r.preempted == std::vector<std::string>{"bad"});
    CHECK(r.unmet.empty());
    check_reasons_present(r);

    // strict: the whole round throws, with the message the rejection was built from.
    o.strict = true;
    try {
      (void)run_round(cluster, jobs, o);
      FAIL("strict round accepted a bad job");
    } catch (const InvalidArgument& e) {
      CHECK(std::string(e.what()) == "job 'bad': min_gpus must be >= 1 (got 0)");
    }
  }
}

TEST_CASE("rejection.round.goodput_errors_and_round_level_errors") {
  const ClusterSpec cluster = two_types();
  JobSpec nan_job("nan");
  nan_job.goodput_fn([](const GpuTypeSpec&, const ConfigurationSpec&) { return std::nan(""); });
  JobSpec pinned_zero = linear_job("pinned-zero", "B", {1});  // non-preemptible, running where its goodput is 0
  pinned_zero.preemptible(false).current(CurrentAllocation{1, 2, 1, {}});
  const std::vector<JobSpec> jobs = {nan_job, linear_job("ok", "A", {1, 2}), pinned_zero};
  const RoundResult r = run_round(cluster, jobs, options_for("native"));
  REQUIRE(r.rejected.size() == 2);
  CHECK(r.rejected[0].job == "nan");
  CHECK(r.rejected[0].field == "goodput");
  CHECK(r.rejected[0].reason.find("NaN") != std::string::npos);
  CHECK_FALSE(r.rejected[0].running);
  CHECK(r.rejected[1].job == "pinned-zero");
  CHECK(r.rejected[1].index == 2);
  CHECK(r.rejected[1].field == "current");
  CHECK(r.rejected[1].reason.find("goodput there is 0") != std::string::npos);
  REQUIRE(r.decisions[1].config);
  // A rejected non-preemptible job is preempted, never `unmet`: the status stays optimal.
  CHECK(r.status == RoundStatus::optimal);
  CHECK(r.unmet.empty());
  CHECK(r.preempted == std::vector<std::string>{"pinned-zero"});
  check_reasons_present(r);

  // Round-level errors throw whatever `strict` says: duplicate ids, options, the cluster.
  const std::vector<JobSpec> twice = {linear_job("x", "A", {1}), linear_job("x", "A", {1})};
  CHECK_THROWS_WITH_AS((void)run_round(cluster, twice, RoundOptions{}), doctest::Contains("duplicate job id"),
                       InvalidArgument);
  RoundOptions bad_p;
  bad_p.p = 0;
  CHECK_THROWS_AS((void)run_round(cluster, jobs, bad_p), InvalidArgument);
  CHECK_THROWS_AS((void)run_round(ClusterSpec{}, jobs, RoundOptions{}), InvalidArgument);
}

TEST_CASE("reasons.round.each_reason") {
  for (const auto& b : test::real_milp_backends()) {
    CAPTURE(b);
    const RoundOptions o = options_for(b);
    // Type A: one node of 2 GPUs; type B: one node of 4 GPUs.
    const ClusterSpec cluster = two_types();
    // `pin` (non-preemptible, running) keeps 2 GPUs of B; `big` needs all 4 GPUs of B: capacity.
    JobSpec pin = linear_job("pin", "B", {2});
    pin.preemptible(false).current(CurrentAllocation{1, 2, 1, {}});
    JobSpec big = linear_job("big", "B", {4});
    big.min_gpus(4);
    // `winner` and `loser` both want both GPUs of A (min 2): one of them is outbid; `winner` is
    // worth more (its restart factor is 1: it runs there now).
    JobSpec winner = linear_job("winner", "A", {2});
    winner.min_gpus(2).current(CurrentAllocation{0, 2, 1, {}}).age_s(100).restart_cost_s(30);
    JobSpec loser = linear_job("loser", "A", {2});
    loser.min_gpus(2);
    // More GPUs than any configuration: no valid configuration.
    JobSpec huge = linear_job("huge", "B", {4});
    huge.min_gpus(8);
    JobSpec bad = linear_job("bad", "A", {1});
    bad.restarts(-1);
    const std::vector<JobSpec> jobs = {pin, big, winner, loser, huge, bad};
    const RoundResult r = run_round(cluster, jobs, o);
    CHECK(r.status == RoundStatus::optimal);
    CHECK(decision_of(r, "pin").config);
    CHECK(decision_of(r, "winner").config);
    CHECK(decision_of(r, "big").reason == PendingReason::capacity);
    CHECK(decision_of(r, "loser").reason == PendingReason::outbid);
    CHECK(decision_of(r, "huge").reason == PendingReason::no_valid_configuration);
    CHECK(decision_of(r, "bad").reason == PendingReason::rejected);
    CHECK(decision_of(r, "big").detail.find("4 GPUs of type 'B'") != std::string::npos);
    CHECK(decision_of(r, "loser").detail.find("2 GPUs of type 'A'") != std::string::npos);
    check_reasons_present(r);

    // Without the pin, `big` fits the cluster: it is outbid by nothing and runs.
    const std::vector<JobSpec> unpinned = {big, winner, loser};
    const RoundResult u = run_round(cluster, unpinned, o);
    CHECK(decision_of(u, "big").config);

    // Waiting non-preemptible jobs that cannot all start: unmet (status infeasible).
    JobSpec np1 = linear_job("np1", "A", {2});
    np1.min_gpus(2).preemptible(false);
    JobSpec np2 = linear_job("np2", "A", {2});
    np2.min_gpus(2).preemptible(false);
    const std::vector<JobSpec> both = {np1, np2};
    const RoundResult n = run_round(cluster, both, o);
    CHECK(n.status == RoundStatus::infeasible);
    REQUIRE(n.unmet.size() == 1);
    CHECK(decision_of(n, n.unmet[0]).reason == PendingReason::unmet);
    check_reasons_present(n);

    // A restart cost that makes every configuration worth less than waiting (p < 0: utility >= lambda).
    JobSpec costly = linear_job("costly", "A", {1, 2});
    // Running on B (where its goodput is 0); restart factor on A: (100 - 9*10) / (100 + 10) = 0.09.
    costly.current(CurrentAllocation{1, 1, 1, {}}).age_s(100).restart_cost_s(10).restarts(9);
    JobSpec zero_b = linear_job("costly-b", "B", {1}, 0.0);  // goodput 0 everywhere
    const std::vector<JobSpec> costly_jobs = {costly, zero_b};
    const RoundResult c = run_round(cluster, costly_jobs, o);
    CHECK(decision_of(c, "costly").reason == PendingReason::no_valid_configuration);
    CHECK(decision_of(c, "costly").detail.find("waiting is worth more") != std::string::npos);
    CHECK(decision_of(c, "costly-b").reason == PendingReason::no_valid_configuration);
  }
}

TEST_CASE("reasons.round.tenant_cap") {
  // Tenant "t" may hold 2 GPUs: its second job waits for the cap, not for capacity or a better job.
  const ClusterSpec cluster = two_types();
  for (const auto& b : test::real_milp_backends()) {
    CAPTURE(b);
    RoundOptions o = options_for(b);
    TenantSpec t;
    t.name = "t";
    t.max_gpus = 2;
    o.tenants = {t};
    JobSpec first = linear_job("first", "B", {2});
    first.min_gpus(2).tenant("t");
    JobSpec second = linear_job("second", "B", {2});
    second.min_gpus(2).tenant("t");
    JobSpec other = linear_job("other", "A", {2});
    other.min_gpus(2);
    JobSpec stranger = linear_job("stranger", "A", {1, 2});
    stranger.tenant("nobody");  // an unknown tenant is a job-level error
    const std::vector<JobSpec> jobs = {first, second, other, stranger};
    const RoundResult r = run_round(cluster, jobs, o);
    CHECK(r.status == RoundStatus::optimal);
    // One of the two equal jobs of "t" runs (which one is a tie), the other waits for the cap.
    REQUIRE(static_cast<bool>(r.decisions[0].config) != static_cast<bool>(r.decisions[1].config));
    const JobDecision& waiting = r.decisions[0].config ? r.decisions[1] : r.decisions[0];
    CHECK(waiting.reason == PendingReason::tenant_cap);
    CHECK(waiting.detail.find("tenant 't'") != std::string::npos);
    CHECK(r.decisions[2].config);
    REQUIRE(r.rejected.size() == 1);
    CHECK(r.rejected[0].job == "stranger");
    CHECK(r.rejected[0].field == "tenant");
    CHECK(r.decisions[3].reason == PendingReason::rejected);
    check_reasons_present(r);
  }
}

TEST_CASE("reasons.round.not_evaluated_and_names") {
  const ClusterSpec cluster = two_types();
  RoundOptions o;
  o.time_limit = std::chrono::milliseconds(0);  // the deadline has passed before the first job
  const std::vector<JobSpec> jobs = {linear_job("w", "A", {1})};
  const RoundResult r = run_round(cluster, jobs, o);
  CHECK(r.status == RoundStatus::feasible);
  CHECK(r.decisions[0].reason == PendingReason::not_evaluated);

  CHECK(to_string(PendingReason::none) == "none");
  CHECK(to_string(PendingReason::rejected) == "rejected");
  CHECK(to_string(PendingReason::not_evaluated) == "not_evaluated");
  CHECK(to_string(PendingReason::no_valid_configuration) == "no_valid_configuration");
  CHECK(to_string(PendingReason::unmet) == "unmet");
  CHECK(to_string(PendingReason::tenant_cap) == "tenant_cap");
  CHECK(to_string(PendingReason::capacity) == "capacity");
  CHECK(to_string(PendingReason::outbid) == "outbid");
}

// On random small rounds, for every backend: every job without GPUs has a reason, and the reasons
// agree with the definitions checked independently: `capacity` means no usable configuration of
// the job fits even in an empty cluster beside the non-preemptible running jobs (brute force: the
// job alone with those jobs gets no GPUs), `outbid` means it does get GPUs in that round.
TEST_CASE("reasons.round.random_rounds_against_definitions") {
  std::mt19937 rng(15);
  const ClusterSpec cluster = cluster_of({GpuTypeSpec("A", 2, 2), GpuTypeSpec("B", 1, 4)});
  for (int round = 0; round < 40; ++round) {
    std::vector<JobSpec> jobs;
    const int n = 2 + static_cast<int>(rng() % 6);
    for (int i = 0; i < n; ++i) {
      GoodputTable t;
      for (const char* type : {"A", "B"})
        for (int g : {1, 2, 4})
          if (rng() % 3 != 0) t.set(type, g, 0.5 + static_cast<double>(rng() % 100) / 25.0 * g);
      JobSpec j("j" + std::to_string(i));
      j.goodput_model(t).min_gpus(1 + static_cast<int>(rng() % 3));
      if (rng() % 5 == 0) j.preemptible(false);
      if (rng() % 4 == 0) j.current(CurrentAllocation{0, 1, 1, {}});
      jobs.push_back(std::move(j));
    }
    for (const auto& b : test::real_milp_backends()) {
      CAPTURE(round);
      CAPTURE(b);
      RoundOptions o = options_for(b);
      o.place = false;  // random currents may overlap; placement is not what is tested here
      const RoundResult r = run_round(cluster, jobs, o);
      check_reasons_present(r);
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        const JobDecision& d = r.decisions[i];
        if (d.reason != PendingReason::capacity && d.reason != PendingReason::outbid) continue;
        // The job alone beside the non-preemptible running jobs that kept their GPUs.
        std::vector<JobSpec> alone;
        for (std::size_t k = 0; k < jobs.size(); ++k)
          if (k != i && !jobs[k].preemptible() && jobs[k].current() && r.decisions[k].config) alone.push_back(jobs[k]);
        alone.push_back(jobs[i]);
        const RoundResult a = run_round(cluster, alone, o);
        CAPTURE(d.job);
        CAPTURE(d.detail);
        CHECK(static_cast<bool>(a.decisions.back().config) == (d.reason == PendingReason::outbid));
      }
    }
  }
}

TEST_CASE("reasons.request.json") {
  const std::string text = R"({
    "cluster": {"gpu_types": [{"name": "A", "nodes": 1, "gpus_per_node": 2}, {"name": "B", "nodes": 1, "gpus_per_node": 4}]},
    "jobs": [
      {"id": "pin", "preemptible": false, "current": {"gpu_type": "B", "gpus": 2},
       "goodput": [{"gpu_type": "B", "gpus": 2, "value": 2}]},
      {"id": "big", "min_gpus": 4, "goodput": [{"gpu_type": "B", "gpus": 4, "value": 4}]},
      {"id": "winner", "min_gpus": 2, "current": {"gpu_type": "A", "gpus": 2}, "age_s": 100,
       "goodput": [{"gpu_type": "A", "gpus": 2, "value": 2}]},
      {"id": "loser", "min_gpus": 2, "goodput": [{"gpu_type": "A", "gpus": 2, "value": 2}]},
      {"id": "huge", "min_gpus": 8, "goodput": [{"gpu_type": "B", "gpus": 4, "value": 4}]},
      {"id": "typo", "kind": "rigd", "goodput": [{"gpu_type": "A", "gpus": 1, "value": 1}]},
      {"goodput": []}
    ]})";
  const Request req = parse_request(text, "reasons.json");
  REQUIRE(req.jobs.size() == 5);
  REQUIRE(req.rejected.size() == 2);
  const RoundResult r = run_round(req.cluster, req.jobs, req.options);
  const json d = json::parse(decision_to_json(req, r));
  CHECK(d["status"] == "optimal");
  const json& u = d["unallocated"];
  REQUIRE(u.size() == 5);
  CHECK(u[0]["job"] == "big");
  CHECK(u[0]["reason"] == "capacity");
  CHECK(u[1]["job"] == "loser");
  CHECK(u[1]["reason"] == "outbid");
  CHECK(u[2]["job"] == "huge");
  CHECK(u[2]["reason"] == "no_valid_configuration");
  CHECK(u[3]["job"] == "typo");
  CHECK(u[3]["reason"] == "rejected");
  CHECK(u[3]["detail"].get<std::string>().rfind("jobs[5].kind: unknown job kind \"rigd\"", 0) == 0);
  CHECK(u[4]["job"].is_null());
  CHECK(u[4]["reason"] == "rejected");
  for (const auto& e : u) CHECK(e["detail"].is_string());
  const json& rej = d["rejected"];
  REQUIRE(rej.size() == 2);
  CHECK(rej[0] == json::parse(R"J({"job": "typo", "field": "jobs[5].kind",
      "reason": "unknown job kind \"rigd\" (known: adaptive, strong-scaling, scale-gpus, rigid, hybrid)"})J"));
  CHECK(rej[1]["job"].is_null());
  CHECK(rej[1]["field"] == "jobs[6].id");
  CHECK(rej[1]["reason"] == "missing required field");
  // Placement status per allocation: `pin` and `winner` keep their GPUs... or are placed when the
  // request gave no placement: never evicted here.
  for (const auto& a : d["allocations"]) CHECK((a["placement_status"] == "kept" || a["placement_status"] == "placed"));
  CHECK_FALSE(d.contains("preempted"));
}

TEST_CASE("rejection.request.strict_and_duplicates") {
  const std::string jobs = R"("jobs": [{"id": "J1", "goodput": [{"gpu_type": "A", "gpus": 1, "value": 1}]},
      {"id": "J2", "max_gpus": 0, "current": {"gpu_type": "A", "gpus": 1},
       "goodput": [{"gpu_type": "A", "gpus": 1, "value": 1}]}])";
  const std::string cluster = R"("cluster": {"gpu_types": [{"name": "A", "nodes": 1, "gpus_per_node": 2}]})";
  const Request req = parse_request("{" + cluster + ", " + jobs + "}", "r.json");
  REQUIRE(req.rejected.size() == 1);
  CHECK(req.rejected[0].job == "J2");
  CHECK(req.rejected[0].index == 1);
  CHECK(req.rejected[0].field == "jobs[1].max_gpus");
  CHECK(req.rejected[0].running);
  const RoundResult r = run_round(req.cluster, req.jobs, req.options);
  const json d = json::parse(decision_to_json(req, r));
  CHECK(d["preempted"] == json::parse(R"(["J2"])"));
  CHECK(d["allocations"][0]["job"] == "J1");
  // strict: the same error for the whole request.
  try {
    (void)parse_request("{" + cluster + R"(, "options": {"strict": true}, )" + jobs + "}", "r.json");
    FAIL("strict request accepted");
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    const std::string tail = ": jobs[1].max_gpus: " + req.rejected[0].reason;  // after "r.json:<line>:<column>"
    CHECK(what.rfind("r.json:", 0) == 0);
    REQUIRE(what.size() > tail.size());
    CHECK(what.substr(what.size() - tail.size()) == tail);
  }
  // Request-level errors: options, and duplicate ids even when one of the two is invalid.
  CHECK_THROWS_WITH_AS((void)parse_request("{" + cluster + R"(, "options": {"strict": 1}, )" + jobs + "}", "r.json"),
                       doctest::Contains("options.strict"), InvalidArgument);
  CHECK_THROWS_WITH_AS(
      (void)parse_request("{" + cluster + R"(, "jobs": [{"id": "J1", "goodput": []}, {"id": "J1", "kind": "x"}]})",
                          "r.json"),
      doctest::Contains("jobs[1].id: duplicate job id \"J1\""), InvalidArgument);
}

// A round that is not strict first runs as a strict one (build_problem making the checks in its own
// pass over the jobs) and runs the checks first only when that throws: the errors, the rejected jobs
// and their order must be those of the checks made first, whatever each attempt meets first.
TEST_CASE("rejection.round.checks_in_the_build_as_before") {
  const ClusterSpec cluster = two_types();
  JobSpec bad = linear_job("bad", "A", {1, 2});
  bad.min_gpus(0);
  JobSpec nan_job("nan");
  nan_job.goodput_fn([](const GpuTypeSpec&, const ConfigurationSpec&) { return std::nan(""); });
  JobSpec odd("odd");  // a goodput that throws what is no InvalidArgument: never a rejection
  odd.goodput_fn([](const GpuTypeSpec&, const ConfigurationSpec&) -> double { throw std::runtime_error("odd"); });
  const JobSpec x = linear_job("x", "A", {1, 2});
  const JobSpec y = linear_job("y", "B", {1, 2});
  RoundOptions o = options_for("native");
  // A duplicate after an invalid job (the strict run meets the invalid one first), with and
  // without a warm start that knows the duplicated id.
  const std::vector<JobSpec> dup_after_bad = {y, bad, x, x};
  CHECK_THROWS_WITH_AS((void)run_round(cluster, dup_after_bad, o), "job 'x': duplicate job id", InvalidArgument);
  RoundOptions warm = o;
  warm.warm_start = run_round(cluster, std::vector<JobSpec>{x, y}, o).warm_start;
  REQUIRE(warm.warm_start);
  CHECK_THROWS_WITH_AS((void)run_round(cluster, dup_after_bad, warm), "job 'x': duplicate job id", InvalidArgument);
  // A duplicate after a goodput error, and after an invalid tenant list (both met first when strict).
  CHECK_THROWS_WITH_AS((void)run_round(cluster, std::vector<JobSpec>{nan_job, x, x}, warm), "job 'x': duplicate job id",
                       InvalidArgument);
  RoundOptions tenants = warm;
  tenants.tenants = {TenantSpec{"", std::nullopt, {}, 0}};
  CHECK_THROWS_WITH_AS((void)run_round(cluster, std::vector<JobSpec>{x, x}, tenants), "job 'x': duplicate job id",
                       InvalidArgument);
  // An invalid tenant list with an invalid job: the job rejected, then the list's error.
  try {
    (void)run_round(cluster, std::vector<JobSpec>{bad, x}, tenants);
    FAIL("an invalid tenant list was accepted");
  } catch (const InvalidArgument& e) {
    CHECK(std::string(e.what()).find("empty name") != std::string::npos);
  }
  // Rejections in input order whichever is met first: a goodput error before an invalid job and
  // after one, with and without the warm start.
  for (const RoundOptions& with : {o, warm}) {
    for (const auto& jobs : {std::vector<JobSpec>{nan_job, bad, y, x}, std::vector<JobSpec>{bad, x, nan_job, y}}) {
      const RoundResult r = run_round(cluster, jobs, with);
      REQUIRE(r.rejected.size() == 2);
      CHECK(r.rejected[0].index < r.rejected[1].index);
      for (const RejectedJob& rj : r.rejected)
        CHECK(rj.field == (rj.job == "bad" ? std::string("min_gpus") : std::string("goodput")));
      REQUIRE(r.decisions.size() == 4);
      const RoundResult alone = run_round(cluster, std::vector<JobSpec>{x, y}, o);
      CHECK(r.objective == alone.objective);
      check_reasons_present(r);
    }
  }
  // An error that is no rejection propagates, with or without invalid jobs before it.
  CHECK_THROWS_WITH_AS((void)run_round(cluster, std::vector<JobSpec>{x, odd}, o), "odd", std::runtime_error);
  CHECK_THROWS_WITH_AS((void)run_round(cluster, std::vector<JobSpec>{bad, nan_job, odd, y}, warm), "odd",
                       std::runtime_error);
  // Valid rounds: the same result as a strict round.
  RoundOptions strict = warm;
  strict.strict = true;
  const RoundResult loose = run_round(cluster, std::vector<JobSpec>{x, y}, warm);
  const RoundResult tight = run_round(cluster, std::vector<JobSpec>{x, y}, strict);
  CHECK(loose.objective == tight.objective);
  CHECK(loose.rejected.empty());
  REQUIRE(loose.decisions.size() == tight.decisions.size());
  for (std::size_t i = 0; i < loose.decisions.size(); ++i)
    CHECK(loose.decisions[i].config == tight.decisions[i].config);
}
