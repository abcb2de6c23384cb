// The Placer's capacity model (placement/capacity_model.hpp): add_all_kept, the kept jobs'
// holdings applied at once, against add_kept one job after the other, on random types — nodes up
// and down, single-node and distributed jobs, and holdings beyond a node's size (which take a node
// out of the model) —, compared on every count and after evictions, returns and demands.
#include "placement/capacity_model.hpp"

#include <doctest/doctest.h>

#include <random>
#include <utility>
#include <vector>

using sia::detail::CapacityModel;
using sia::detail::ModelJob;

namespace {

void check_same(const CapacityModel& a, const CapacityModel& b) {
  REQUIRE(a.num_nodes() == b.num_nodes());
  for (int i = 0; i < a.num_nodes(); ++i) {
    CAPTURE(i);
    CHECK(a.free(i) == b.free(i));
    CHECK(a.kept_distributed(i) == b.kept_distributed(i));
  }
  CHECK(a.eligible() == b.eligible());
  CHECK(a.conflicts() == b.conflicts());
  CHECK(a.distributed_demand() == b.distributed_demand());
  CHECK(a.feasible() == b.feasible());
  CHECK(a.deficit() == b.deficit());
  CHECK(a.largest_violated_level() == b.largest_violated_level());
}

}  // namespace

TEST_CASE("placement.capacity_model.all_kept_at_once") {
  std::mt19937_64 g(20261129);
  auto uni = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(g); };
  for (int round = 0; round < 400; ++round) {
    CAPTURE(round);
    const int s = 1 << uni(0, 3);  // largest virtual node: 1..8 GPUs
    const int n = uni(1, 12);
    std::vector<int> size(static_cast<std::size_t>(n));
    for (int& x : size) x = uni(0, 5) == 0 ? -1 : s * uni(1, 2);  // some nodes down
    // Jobs and their holdings, in one array as the Placer keeps them.
    const int jobs = uni(0, 10);
    std::vector<std::vector<std::pair<int, int>>> held(static_cast<std::size_t>(jobs));
    std::vector<ModelJob> kept(static_cast<std::size_t>(jobs));
    for (int j = 0; j < jobs; ++j) {
      ModelJob& m = kept[static_cast<std::size_t>(j)];
      m.distributed = uni(0, 2) == 0;
      m.nodes = m.distributed ? uni(2, 3) : 1;
      m.footprint = m.distributed ? m.nodes * s : 1 << uni(0, 3);
      m.slot = m.distributed ? (uni(0, 1) == 0 ? 0 : s / 2) : m.footprint;
      m.used = m.slot;
      for (int k = uni(1, m.distributed ? 3 : 1); k > 0; --k)
        held[static_cast<std::size_t>(j)].emplace_back(uni(0, n - 1), m.distributed ? s : uni(0, 2 * s));
      m.held = held[static_cast<std::size_t>(j)];
    }
    const long long reserved = uni(0, 3);
    CapacityModel one(s, size, reserved), all(s, size, reserved);
    for (const ModelJob& j : kept) one.add_kept(j);
    all.add_all_kept(kept);
    check_same(one, all);
    // What plan_evictions does next: demands, evictions and returns, on both.
    for (int step = 0; step < 6 && jobs > 0; ++step) {
      const ModelJob& j = kept[static_cast<std::size_t>(uni(0, jobs - 1))];
      switch (uni(0, 2)) {
        case 0:
          one.add_demand(j);
          all.add_demand(j);
          break;
        case 1:
          one.evict(j);
          all.evict(j);
          break;
        default:
          one.unevict(j);
          all.unevict(j);
      }
      check_same(one, all);
    }
  }
}
