// Empty clusters, handled one way everywhere (README.md, "Ranges of numbers"): a cluster without GPUs — no
// GPU types, or types whose nodes sum to no GPU — is bad input (C++ InvalidArgument, sia_allocate exit 2, the
// simulator's loaders too); a cluster whose GPUs exist but are all failed or reserved is a valid round in which
// every job waits (its capacity is unavailable for now, not absent).
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/generic_round.hpp>
#include <sia/goodput_table.hpp>
#include <sia/request.hpp>
#include <sia/round.hpp>

#include <string>
#include <vector>

namespace {

using namespace sia;

std::vector<JobSpec> two_jobs() {
  GoodputTable g;
  g.set("A", 1, 1).set("A", 2, 2);
  return {JobSpec("J1").goodput_model(g), JobSpec("J2").goodput_model(g)};
}

void check_everyone_waits(const ClusterSpec& cluster) {
  for (const double p : {-0.5, 1.0}) {
    RoundOptions o;
    o.p = p;
    const RoundResult r = run_round(cluster, two_jobs(), o);
    CHECK(r.status == RoundStatus::optimal);
    CHECK_FALSE(r.fallback);
    REQUIRE(r.decisions.size() == 2);
    for (const auto& d : r.decisions) {
      CHECK_FALSE(d.config.has_value());
      CHECK(d.placement.empty());
    }
    CHECK(r.gpus_used == std::vector<int>{0});
  }
}

}  // namespace

TEST_CASE("empty_cluster.no_gpus_is_bad_input") {
  CHECK_THROWS_WITH_AS((void)run_round(ClusterSpec{}, two_jobs()), doctest::Contains("empty cluster"), InvalidArgument);
  CHECK_THROWS_WITH_AS((void)run_round(ClusterSpec{}, std::vector<JobSpec>{}), doctest::Contains("empty cluster"),
                       InvalidArgument);
  // The generic round: the same error.
  const std::vector<GpuTypeSpec> none;
  CHECK_THROWS_WITH_AS((void)run_round(none, two_jobs()), doctest::Contains("empty cluster"), InvalidArgument);
  // Types without nodes: no GPUs at all, the same kind of error.
  ClusterSpec no_nodes;
  no_nodes.types = {GpuTypeSpec("A", 0, 2), GpuTypeSpec("B", 0, 8)};
  CHECK_THROWS_WITH_AS((void)run_round(no_nodes, two_jobs()), doctest::Contains("no GPUs"), InvalidArgument);
  const std::vector<GpuTypeSpec> zero{GpuTypeSpec("A", 0, 2)};
  CHECK_THROWS_WITH_AS((void)run_round(zero, two_jobs()), doctest::Contains("no GPUs"), InvalidArgument);
  // The JSON request: the same rules, naming the field.
  CHECK_THROWS_WITH_AS((void)parse_request(R"({"cluster": {"gpu_types": []}, "jobs": []})"),
                       doctest::Contains("empty cluster"), InvalidArgument);
  CHECK_THROWS_WITH_AS(
      (void)parse_request(R"({"cluster": {"gpu_types": [{"name": "A", "nodes": 0, "gpus_per_node": 2}]}, "jobs": []})"),
      doctest::Contains("no GPUs"), InvalidArgument);
}

TEST_CASE("empty_cluster.no_available_gpu_is_a_round_where_every_job_waits") {
  ClusterSpec all_down;
  all_down.types = {GpuTypeSpec("A", 2, 2)};
  all_down.down = {{0, 1}};
  check_everyone_waits(all_down);
  ClusterSpec all_reserved;
  all_reserved.types = {GpuTypeSpec("A", 2, 2)};
  all_reserved.reserved = {4};
  check_everyone_waits(all_reserved);
  // No jobs either: an empty, optimal round.
  const RoundResult r = run_round(all_down, std::vector<JobSpec>{});
  CHECK(r.status == RoundStatus::optimal);
  CHECK(r.decisions.empty());
}
