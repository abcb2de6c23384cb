// Unit tests of the Placer: paper rules on hand-made clusters, stability, failed nodes,
// reservations, evictions and bad input.
#include <sia/error.hpp>
#include <sia/placement.hpp>

#include "unit/test_placement_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

using namespace sia;
using sia::test::check_rules;
using sia::test::cluster_of;
using sia::test::request;

namespace {

CurrentAllocation on(int type, std::vector<NodeShare> shares, int nodes = 0) {
  CurrentAllocation c;
  c.type = type;
  c.nodes = nodes;
  for (const auto& s : shares) c.gpus += s.gpus;
  c.placement = std::move(shares);
  return c;
}

PlacementResult place_v(const ClusterSpec& c, const std::vector<PlacementRequest>& reqs) {
  auto res = place(c, reqs);
  check_rules(c, reqs, res);
  return res;
}

std::string error_of(const ClusterSpec& c, const std::vector<PlacementRequest>& reqs) {
  try {
    (void)place(c, reqs);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

// An error message that names every part (what, where, which value).
void has(const std::string& msg, std::initializer_list<const char*> parts) {
  bool all = !msg.empty();
  for (const char* p : parts) all = all && msg.find(p) != std::string::npos;
  CHECK_MESSAGE(all, msg);
}

}  // namespace

TEST_CASE("placement.table1") {
  // The paper's Table 1 cluster: one 2-GPU node of A, one 4-GPU node of B.
  const auto c = cluster_of({{"A", 1, 2}, {"B", 1, 4}});
  const std::vector<PlacementRequest> reqs{request("J1", ConfigurationSpec{1, 1, 4}),
                                           request("J2", ConfigurationSpec{0, 1, 2})};
  const auto res = place_v(c, reqs);
  CHECK(res.placements[0] == std::vector<NodeShare>{{0, 4, {0, 1, 2, 3}}});
  CHECK(res.placements[1] == std::vector<NodeShare>{{0, 2, {0, 1}}});
  CHECK(res.status[0] == PlacementStatus::placed);
  CHECK(res.evicted.empty());
  CHECK(res.dropped.empty());
}

TEST_CASE("placement.rules.partial_and_whole_nodes") {
  // Two 8-GPU nodes: a (2, 16) job takes both nodes whole; afterwards nothing else fits.
  const auto c = cluster_of({{"T", 3, 8}});
  const std::vector<PlacementRequest> reqs{
      request("small1", ConfigurationSpec{0, 1, 2}), request("big", ConfigurationSpec{0, 2, 16}),
      request("small2", ConfigurationSpec{0, 1, 4}), request("small3", ConfigurationSpec{0, 1, 2})};
  const auto res = place_v(c, reqs);
  REQUIRE(res.placements[1].size() == 2);
  for (const auto& sh : res.placements[1]) CHECK(sh.gpus == 8);
  // The three small jobs share the remaining node (4 + 2 + 2 = 8), each within it.
  const int other = 3 - res.placements[1][0].node - res.placements[1][1].node;
  for (int j : {0, 2, 3}) {
    REQUIRE(res.placements[static_cast<std::size_t>(j)].size() == 1);
    CHECK(res.placements[static_cast<std::size_t>(j)][0].node == other);
  }
}

TEST_CASE("placement.rules.non_power_of_two_nodes") {
  // 6-GPU nodes are 4 + 2 virtual nodes: (n, 4n) multi-node shapes, singles up to 4.
  const auto c = cluster_of({{"S", 3, 6}});
  const std::vector<PlacementRequest> reqs{
      request("d", ConfigurationSpec{0, 3, 12}), request("a", ConfigurationSpec{0, 1, 2}),
      request("b", ConfigurationSpec{0, 1, 2}), request("e", ConfigurationSpec{0, 1, 1}),
      request("f", ConfigurationSpec{0, 1, 1})};
  const auto res = place_v(c, reqs);
  REQUIRE(res.placements[0].size() == 3);
  for (const auto& sh : res.placements[0]) CHECK(sh.gpu_ids == std::vector<int>{0, 1, 2, 3});
  CHECK(res.dropped.empty());
  // Too much: a second 3-node job cannot share nodes with the first one.
  std::vector<PlacementRequest> more = reqs;
  more.push_back(request("d2", ConfigurationSpec{0, 2, 8}));
  const auto res2 = place_v(c, more);
  CHECK(res2.dropped.size() == 1);
}

TEST_CASE("placement.rigid_uses_fewer_gpus") {
  const auto c = cluster_of({{"T", 3, 8}});
  // Rigid 12 GPUs on footprint (2, 16): fills the first node, 4 on the second.
  const std::vector<PlacementRequest> reqs{request("r", ConfigurationSpec{0, 2, 16}, 12),
                                           request("q", ConfigurationSpec{0, 1, 4}, 3)};
  const auto res = place_v(c, reqs);
  REQUIRE(res.placements[0].size() == 2);
  CHECK(res.placements[0][0].gpus == 8);
  CHECK(res.placements[0][1].gpus == 4);
  CHECK(res.placements[1].empty() == false);
  CHECK(res.placements[1][0].gpus == 3);
}

TEST_CASE("placement.stability.unchanged_jobs_keep_gpus") {
  const auto c = cluster_of({{"T", 2, 8}});
  // Jobs hold scattered GPUs; unchanged ones keep exactly them.
  const std::vector<PlacementRequest> reqs{
      request("a", ConfigurationSpec{0, 1, 2}, 0, on(0, {{1, 2, {5, 7}}})),
      request("b", ConfigurationSpec{0, 1, 4}, 0, on(0, {{0, 4, {1, 2, 3, 6}}})),
      request("c", ConfigurationSpec{0, 1, 1}, 0, on(0, {{0, 1, {}}})),  // ids unknown: lowest unnamed = 0
      request("d", ConfigurationSpec{0, 1, 1}, 0, on(0, {{1, 1, {0}}})),
  };
  const auto res = place_v(c, reqs);
  for (std::size_t j = 0; j < reqs.size(); ++j) CHECK(res.status[j] == PlacementStatus::kept);
  CHECK(res.placements[0] == std::vector<NodeShare>{{1, 2, {5, 7}}});
  CHECK(res.placements[1] == std::vector<NodeShare>{{0, 4, {1, 2, 3, 6}}});
  CHECK(res.placements[2] == std::vector<NodeShare>{{0, 1, {0}}});
  // A new 8-GPU job needs a whole node: not available without moving someone. Node 1 holds a
  // and d (3 GPUs), node 0 holds b and c (5 GPUs): two jobs move either way, a and d are fewer GPUs.
  auto more = reqs;
  more.push_back(request("new", ConfigurationSpec{0, 1, 8}));
  const auto res2 = place_v(c, more);
  CHECK(res2.evicted == std::vector<std::size_t>{0, 3});
  CHECK(res2.placements[4] == std::vector<NodeShare>{{1, 8, {0, 1, 2, 3, 4, 5, 6, 7}}});
}

TEST_CASE("placement.stability.resized_job_prefers_its_node") {
  const auto c = cluster_of({{"T", 5, 8}});
  // Job grows from 2 to 4 GPUs: its node has room, so it stays there and keeps its 2 GPUs.
  const std::vector<PlacementRequest> reqs{
      request("grow", ConfigurationSpec{0, 1, 4}, 0, on(0, {{2, 2, {4, 5}}})),
      request("shrink", ConfigurationSpec{0, 1, 2}, 0, on(0, {{3, 8, {0, 1, 2, 3, 4, 5, 6, 7}}})),
      request("dist", ConfigurationSpec{0, 3, 24}, 0, on(0, {{0, 8, {}}, {1, 8, {}}})),  // grows 2 -> 3 nodes
  };
  const auto res = place_v(c, reqs);
  REQUIRE(res.placements[0].size() == 1);
  CHECK(res.placements[0][0].node == 2);
  const auto& ids = res.placements[0][0].gpu_ids;
  CHECK(std::count(ids.begin(), ids.end(), 4) == 1);
  CHECK(std::count(ids.begin(), ids.end(), 5) == 1);
  REQUIRE(res.placements[1].size() == 1);
  CHECK(res.placements[1][0].node == 3);
  // The distributed job keeps nodes 0 and 1 and takes the node nobody had.
  REQUIRE(res.placements[2].size() == 3);
  CHECK(res.placements[2][0].node == 0);
  CHECK(res.placements[2][1].node == 1);
  CHECK(res.placements[2][2].node == 4);
}

TEST_CASE("placement.stability.resized_distributed_keeps_nodes") {
  const auto c = cluster_of({{"T", 6, 4}});
  const std::vector<PlacementRequest> reqs{
      request("d", ConfigurationSpec{0, 2, 8}, 0, on(0, {{1, 4, {}}, {3, 4, {}}, {5, 4, {}}})),  // shrinks 3 -> 2 nodes
      request("e", ConfigurationSpec{0, 3, 12}, 0, on(0, {{0, 4, {}}, {2, 4, {}}})),             // grows 2 -> 3 nodes
  };
  const auto res = place_v(c, reqs);
  std::set<int> d, e;
  for (const auto& sh : res.placements[0]) d.insert(sh.node);
  for (const auto& sh : res.placements[1]) e.insert(sh.node);
  CHECK(std::includes(std::set<int>{1, 3, 5}.begin(), std::set<int>{1, 3, 5}.end(), d.begin(), d.end()));
  CHECK(e.count(0) == 1);
  CHECK(e.count(2) == 1);
}

TEST_CASE("placement.down_nodes") {
  auto c = cluster_of({{"T", 3, 4}});
  c.down = {{1}};
  const std::vector<PlacementRequest> reqs{
      request("on_down", ConfigurationSpec{0, 1, 4}, 0, on(0, {{1, 4, {}}})),
      request("fine", ConfigurationSpec{0, 1, 2}, 0, on(0, {{0, 2, {}}})),
      request("new", ConfigurationSpec{0, 1, 2}),
  };
  const auto res = place_v(c, reqs);
  CHECK(res.status[0] == PlacementStatus::placed);
  REQUIRE(res.placements[0].size() == 1);
  CHECK(res.placements[0][0].node == 2);
  CHECK(res.status[1] == PlacementStatus::kept);
  CHECK(res.placements[2][0].node == 0);
}

TEST_CASE("placement.reserved_take_smallest_holes") {
  auto c = cluster_of({{"T", 3, 4}});
  c.reserved = {3};
  const std::vector<PlacementRequest> reqs{request("a", ConfigurationSpec{0, 1, 2}),
                                           request("b", ConfigurationSpec{0, 1, 1})};
  const auto res = place_v(c, reqs);
  // a and b share node 0 (best fit), leaving 1 GPU there; reservations fill it, then 2 more on
  // node 1; node 2 stays whole.
  CHECK(res.placements[0][0].node == 0);
  CHECK(res.placements[1][0].node == 0);
  REQUIRE(res.reserved[0].size() == 2);
  CHECK(res.reserved[0][0].node == 0);
  CHECK(res.reserved[0][0].gpus == 1);
  CHECK(res.reserved[0][1].node == 1);
  CHECK(res.reserved[0][1].gpus == 2);
}

TEST_CASE("placement.eviction.minimal_and_reported") {
  // Four 4-GPU nodes each hold one 1-GPU job; a new 4-GPU job needs a whole node: exactly one
  // job moves, and it moves into another node's free GPUs.
  const auto c = cluster_of({{"T", 4, 4}});
  std::vector<PlacementRequest> reqs;
  for (int i = 0; i < 4; ++i)
    reqs.push_back(request("s" + std::to_string(i), ConfigurationSpec{0, 1, 1}, 0, on(0, {{i, 1, {i}}})));
  reqs.push_back(request("big", ConfigurationSpec{0, 1, 4}));
  reqs.push_back(request("b2", ConfigurationSpec{0, 1, 2}));
  reqs.push_back(request("b3", ConfigurationSpec{0, 1, 2}));
  reqs.push_back(request("b4", ConfigurationSpec{0, 1, 2}));
  const auto res = place_v(c, reqs);
  CHECK(res.evicted.size() == 1);
  CHECK(res.dropped.empty());
  // Deterministic: the same input gives the same output.
  const auto again = place(c, reqs);
  CHECK(again.placements == res.placements);
  CHECK(again.evicted == res.evicted);
}

TEST_CASE("placement.rigid_tails_share_a_node") {
  // Two rigid distributed jobs (5 GPUs on a (2, 8) footprint: a whole node and a 1-GPU remainder)
  // whose remainders share node 1: remainders are single-node items, so both stay.
  const auto c = cluster_of({{"T", 4, 4}});
  const std::vector<PlacementRequest> reqs{
      request("d1", ConfigurationSpec{0, 2, 8}, 5, on(0, {{0, 4, {}}, {1, 1, {}}})),
      request("d2", ConfigurationSpec{0, 2, 8}, 5, on(0, {{1, 1, {}}, {2, 4, {}}})),
  };
  const auto res = place_v(c, reqs);
  CHECK(res.evicted.empty());
  CHECK(res.status[0] == PlacementStatus::kept);
  CHECK(res.status[1] == PlacementStatus::kept);
}

TEST_CASE("placement.rigid_remainder_beside_a_rigid_job") {
  // The example: a rigid 10-GPU job (whole node + 2) and a rigid 6-GPU job on two 8-GPU
  // nodes. The 6 is placed in an 8-GPU slot first; its 2 free GPUs take the 10's remainder.
  const auto c = cluster_of({{"T", 2, 8}});
  const std::vector<PlacementRequest> reqs{
      request("ten", ConfigurationSpec{0, 2, 16}, 10, std::nullopt),
      request("six", ConfigurationSpec{0, 1, 8}, 6, std::nullopt),
  };
  const auto res = place_v(c, reqs);
  CHECK(res.dropped.empty());
  REQUIRE(res.placements[0].size() == 2);
  CHECK(res.placements[0][0].gpus + res.placements[0][1].gpus == 10);
  REQUIRE(res.placements[1].size() == 1);
  CHECK(res.placements[1][0].gpus == 6);
  const auto& ten = res.placements[0];
  const int tail_node = ten[0].gpus == 2 ? ten[0].node : ten[1].node;
  CHECK(res.placements[1][0].node == tail_node);
}

TEST_CASE("placement.stale_placement_is_replaced") {
  // d1's placement holds 6 GPUs but it now uses 8: its configuration changed, it is re-placed.
  const auto c = cluster_of({{"T", 4, 4}});
  const std::vector<PlacementRequest> reqs{
      request("d1", ConfigurationSpec{0, 2, 8}, 0, on(0, {{0, 4, {}}, {1, 2, {0, 1}}})),
  };
  const auto res = place_v(c, reqs);
  CHECK(res.status[0] == PlacementStatus::placed);
  CHECK(res.placements[0][0].node == 0);
  CHECK(res.placements[0][1].node == 1);
}

TEST_CASE("placement.dropped_when_over_capacity") {
  const auto c = cluster_of({{"T", 1, 4}});
  const std::vector<PlacementRequest> reqs{request("a", ConfigurationSpec{0, 1, 4}),
                                           request("b", ConfigurationSpec{0, 1, 2}),
                                           request("c", ConfigurationSpec{0, 1, 2})};
  const auto res = place_v(c, reqs);
  // 8 GPUs asked on a 4-GPU cluster: dropping the 4-GPU job is the fewest drops.
  CHECK(res.dropped == std::vector<std::size_t>{0});
}

TEST_CASE("placement.bad_input") {
  const auto c = cluster_of({{"A", 2, 4}, {"B", 1, 8}});
  using V = std::vector<PlacementRequest>;
  has(error_of(c, V{request("j1", ConfigurationSpec{0, 1, 2}, 0, on(0, {{2, 2, {}}}))}),
      {"j1", "A/2", "does not exist"});
  has(error_of(c, V{request("j2", ConfigurationSpec{0, 1, 4}, 0, on(0, {{0, 5, {}}}))}), {"j2", "A/0", "5 GPUs"});
  has(error_of(c, V{request("j3", ConfigurationSpec{0, 1, 2}, 0, on(0, {{0, 2, {0, 1}}})),
                    request("j4", ConfigurationSpec{0, 1, 2}, 0, on(0, {{0, 2, {1, 2}}}))}),
      {"j3", "j4", "GPU 1", "A/0"});
  has(error_of(c, V{request("j5", ConfigurationSpec{0, 1, 4}, 0, on(0, {{0, 3, {}}})),
                    request("j6", ConfigurationSpec{0, 1, 2}, 0, on(0, {{0, 2, {}}}))}),
      {"j6", "A/0", "over-subscribed"});
  {
    auto cur = on(1, {{0, 4, {}}});
    cur.gpus = 8;  // says 8, placement holds 4
    has(error_of(c, V{request("j7", ConfigurationSpec{1, 1, 8}, 0, cur)}), {"j7", "B/0", "holds 4"});
  }
  has(error_of(c, V{request("j8", ConfigurationSpec{0, 1, 2}, 0, on(0, {{0, 2, {0, 4}}}))}), {"j8", "GPU 4", "A/0"});
  has(error_of(c, V{request("j9", ConfigurationSpec{0, 1, 3})}), {"j9", "configuration set"});
  has(error_of(c, V{request("j10", ConfigurationSpec{0, 2, 6})}), {"j10", "configuration set"});
  has(error_of(c, V{request("j11", ConfigurationSpec{0, 1, 4}, 5)}), {"j11", "uses 5"});
  has(error_of(c, V{request("j12", ConfigurationSpec{0, 1, 2}, 0, on(0, {{0, 1, {}}, {0, 1, {}}}))}),
      {"j12", "A/0", "twice"});
  has(error_of(c, V{request("j13", ConfigurationSpec{0, 1, 2}, 0, on(0, {{0, 2, {1}}}))}), {"j13", "A/0", "1 GPU ids"});
  {
    auto cur = on(0, {{0, 2, {}}});
    cur.nodes = 2;
    has(error_of(c, V{request("j14", ConfigurationSpec{0, 1, 2}, 0, cur)}), {"j14", "spans 1 nodes", "A/0"});
  }
  has(error_of(c, V{request("j15", ConfigurationSpec{5, 1, 2})}), {"j15", "type index 5"});
  {
    auto named = c;
    named.node_names = {{"alpha", "beta"}};
    has(error_of(named, V{request("j16", ConfigurationSpec{0, 1, 4}, 0, on(0, {{1, 6, {}}}))}), {"j16", "beta"});
  }
  // A placement on a node of another type is checked against that type.
  has(error_of(c, V{request("j17", ConfigurationSpec{0, 1, 2}, 0, on(1, {{1, 2, {}}}))}), {"j17", "B/1"});
}

TEST_CASE("placement.bad_input_gpu_ids") {
  // A node's GPU ids are checked in the order given, on nodes of up to 64 GPUs and larger ones:
  // an id outside the node, or one listed twice, whichever comes first.
  const auto c = cluster_of({{"A", 2, 8}, {"C", 1, 128}});
  using V = std::vector<PlacementRequest>;
  has(error_of(c, V{request("j1", ConfigurationSpec{0, 1, 2}, 0, on(0, {{1, 2, {5, 5}}}))}),
      {"j1", "GPU 5", "A/1", "listed twice"});
  has(error_of(c, V{request("j2", ConfigurationSpec{0, 1, 4}, 0, on(0, {{0, 4, {3, 3, 9, 1}}}))}),
      {"j2", "GPU 3", "listed twice"});
  has(error_of(c, V{request("j3", ConfigurationSpec{0, 1, 4}, 0, on(0, {{0, 4, {9, 3, 3, 1}}}))}),
      {"j3", "GPU 9", "does not exist"});
  has(error_of(c, V{request("j4", ConfigurationSpec{1, 1, 4}, 0, on(1, {{0, 4, {127, 70, 3, 70}}}))}),
      {"j4", "GPU 70", "C/0", "listed twice"});
  has(error_of(c, V{request("j5", ConfigurationSpec{1, 1, 4}, 0, on(1, {{0, 4, {127, 70, 128, 70}}}))}),
      {"j5", "GPU 128", "does not exist"});
  has(error_of(c, V{request("j6", ConfigurationSpec{0, 1, 2}, 0, on(0, {{1, 1, {0}}, {0, 1, {0}}, {1, 1, {2}}}))}),
      {"j6", "A/1", "twice"});
  // Valid ids in any order, on both sizes: kept as they are (sorted).
  const auto res = place_v(c, V{request("k1", ConfigurationSpec{0, 1, 4}, 0, on(0, {{1, 4, {7, 0, 5, 2}}})),
                                request("k2", ConfigurationSpec{1, 1, 4}, 0, on(1, {{0, 4, {127, 64, 63, 0}}}))});
  CHECK(res.status[0] == PlacementStatus::kept);
  CHECK(res.placements[0] == std::vector<NodeShare>{{1, 4, {0, 2, 5, 7}}});
  CHECK(res.status[1] == PlacementStatus::kept);
  CHECK(res.placements[1] == std::vector<NodeShare>{{0, 4, {0, 63, 64, 127}}});
}

TEST_CASE("placement.empty_and_unallocated") {
  const auto c = cluster_of({{"A", 2, 4}});
  const auto none = place(c, std::vector<PlacementRequest>{});
  CHECK(none.placements.empty());
  const std::vector<PlacementRequest> reqs{request("idle", std::nullopt, 0, on(0, {{0, 2, {}}})),
                                           request("x", ConfigurationSpec{0, 1, 4})};
  const auto res = place_v(c, reqs);
  CHECK(res.status[0] == PlacementStatus::unallocated);
  // The idle job's GPUs are released; x takes a whole node, best fit = node 0 (both empty).
  CHECK(res.placements[1][0].node == 0);
}
