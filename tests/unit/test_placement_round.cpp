// The round returns placements with its allocation (RoundOptions::place).
#include <sia/error.hpp>
#include <sia/goodput_table.hpp>
#include <sia/round.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "unit/table1.hpp"

using namespace sia;

namespace {

using test::table1_cluster;
using test::table1_jobs;

CurrentAllocation holding(int type, int node, std::vector<int> ids) {
  CurrentAllocation c;
  c.type = type;
  c.gpus = static_cast<int>(ids.size());
  c.placement = {NodeShare{node, c.gpus, std::move(ids)}};
  return c;
}

}  // namespace

TEST_CASE("placement.round.table1") {
  RoundOptions o;
  o.p = 1.0;
  const auto r = run_round(table1_cluster(), table1_jobs(), o);
  REQUIRE(r.decisions.size() == 2);
  CHECK(r.decisions[0].placement == std::vector<NodeShare>{{0, 4, {0, 1, 2, 3}}});
  CHECK(r.decisions[1].placement == std::vector<NodeShare>{{0, 2, {0, 1}}});
  CHECK(r.evicted.empty());
  o.place = false;
  const auto r2 = run_round(table1_cluster(), table1_jobs(), o);
  CHECK(r2.decisions[0].placement.empty());
  CHECK(r2.decisions[1].placement.empty());
}

TEST_CASE("placement.round.unchanged_jobs_stay") {
  // 2 nodes of B: J1 holds GPUs 1 and 3 of B/1 and gets the same configuration again.
  ClusterSpec c;
  c.types = {GpuTypeSpec("B", 2, 4)};
  GoodputTable g;
  g.set("B", 2, 1);
  auto jobs = std::vector<JobSpec>{
      JobSpec("J1").min_gpus(2).max_gpus(2).goodput_model(g).age_s(1000).current(holding(0, 1, {1, 3}))};
  const auto r = run_round(c, jobs);
  REQUIRE(r.decisions[0].config);
  CHECK(r.decisions[0].placement == std::vector<NodeShare>{{1, 2, {1, 3}}});

  // B/1 fails: the job is re-placed on B/0.
  c.down = {{1}};
  const auto r2 = run_round(c, jobs);
  REQUIRE(r2.decisions[0].config);
  REQUIRE(r2.decisions[0].placement.size() == 1);
  CHECK(r2.decisions[0].placement[0].node == 0);
}

TEST_CASE("placement.round.bad_current_placement") {
  ClusterSpec c;
  c.types = {GpuTypeSpec("B", 1, 4)};
  GoodputTable g;
  g.set("B", 2, 1);
  auto jobs =
      std::vector<JobSpec>{JobSpec("J1").min_gpus(2).max_gpus(2).goodput_model(g).current(holding(0, 3, {0, 1}))};
  try {
    (void)run_round(c, jobs);
    FAIL("expected InvalidArgument");
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    CHECK(msg.find("J1") != std::string::npos);
    CHECK(msg.find("B/3") != std::string::npos);
  }
}

TEST_CASE("placement.round.kept_in_any_order") {
  // A job handed back its placement with the nodes in descending order and its GPU ids unsorted
  // holds the same GPUs: kept, not changed, not evicted — whatever the order, as when sorted.
  ClusterSpec c;
  c.types = {GpuTypeSpec("B", 3, 4)};
  GoodputTable g;
  g.set("B", 2, 8, 1.0);
  CurrentAllocation cur;
  cur.type = 0;
  cur.gpus = 8;
  cur.nodes = 2;
  for (const bool sorted : {false, true}) {
    CAPTURE(sorted);
    cur.placement = sorted ? std::vector<NodeShare>{{0, 4, {0, 1, 2, 3}}, {2, 4, {0, 1, 2, 3}}}
                           : std::vector<NodeShare>{{2, 4, {3, 1, 0, 2}}, {0, 4, {2, 0, 3, 1}}};
    auto jobs = std::vector<JobSpec>{
        JobSpec("J1").min_gpus(8).max_gpus(8).goodput_model(g).age_s(1000).current(cur),
        JobSpec("J2").min_gpus(4).max_gpus(4).goodput_model(GoodputTable().set("B", 4, 1.0)).age_s(1000)};
    const auto r = run_round(c, jobs);
    REQUIRE(r.decisions[0].config);
    CHECK(r.decisions[0].placement == std::vector<NodeShare>{{0, 4, {0, 1, 2, 3}}, {2, 4, {0, 1, 2, 3}}});
    CHECK(r.decisions[0].placement_status == PlacementStatus::kept);
    CHECK_FALSE(r.decisions[0].changed);
    CHECK(r.evicted.empty());
  }
}
