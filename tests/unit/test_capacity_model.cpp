// The Placer's capacity model (placement/capacity_model.hpp): add_all_kept, the kept jobs'
// holdings applied at once, against add_kept one job after the other, on random types — nodes up
// and down, single-node and distributed jobs, and holdings beyond a node's size (which take a node
// out of the model) —, compared on every count and after evictions, returns and demands.
#include "placement/capacity_model.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
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

// plan_evictions' exact search (sets tested from each job's change alone when their nodes are
// disjoint, on the model when two share a node) against evicting every set on the model, in the
// documented order: by increasing size, then fewest GPUs, then the lexicographically first. Small
// random types whose kept jobs crowd a few nodes (sets sharing nodes are common) and whose
// allocation fits when re-placed whole (no drops), with an unbounded budget.
TEST_CASE("placement.capacity_model.exact_search_as_on_the_model") {
  std::mt19937_64 g(20261130);
  auto uni = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(g); };
  int searched = 0, shared = 0;
  for (int round = 0; round < 4000; ++round) {
    CAPTURE(round);
    const int s = 1 << uni(1, 3);
    const int n = uni(3, 7);
    std::vector<int> size(static_cast<std::size_t>(n));
    for (int& x : size) x = uni(0, 7) == 0 ? -1 : s;
    const int jobs = uni(3, 11);
    std::vector<std::vector<std::pair<int, int>>> held(static_cast<std::size_t>(jobs));
    std::vector<ModelJob> cand;
    std::vector<int> free = size;
    for (int j = 0; j < jobs; ++j) {
      ModelJob m;
      m.distributed = uni(0, 5) == 0;
      m.nodes = m.distributed ? 2 : 1;
      m.footprint = m.distributed ? 2 * s : 1 << uni(0, std::countr_zero(static_cast<unsigned>(s)) - 1);
      m.slot = m.distributed ? 0 : m.footprint;
      m.used = m.slot;
      // Holdings on distinct up nodes with room, as the Placer's validated placements are.
      std::vector<int> nodes;
      for (int i = 0; i < n; ++i)
        if (free[static_cast<std::size_t>(i)] >= (m.distributed ? s : m.footprint)) nodes.push_back(i);
      if (static_cast<int>(nodes.size()) < m.nodes) continue;
      std::shuffle(nodes.begin(), nodes.end(), g);
      auto& h = held[static_cast<std::size_t>(cand.size())];
      for (int k = 0; k < m.nodes; ++k) {
        const int gp = m.distributed ? s : m.footprint;
        h.emplace_back(nodes[static_cast<std::size_t>(k)], gp);
        free[static_cast<std::size_t>(nodes[static_cast<std::size_t>(k)])] -= gp;
      }
      m.held = h;
      cand.push_back(m);
    }
    std::vector<ModelJob> movers;
    for (int k = uni(1, 3); k > 0; --k) {
      ModelJob m;
      m.distributed = uni(0, 2) == 0;
      m.nodes = m.distributed ? 2 : 1;
      m.footprint = m.distributed ? 2 * s : s;  // whole nodes: the kept small jobs must make room
      m.slot = m.distributed ? 0 : m.footprint;
      m.used = m.slot;
      movers.push_back(m);
    }
    const long long reserved = uni(0, 1);
    // Skip allocations that do not fit at all (drops are another part of plan_evictions).
    CapacityModel all(s, size, reserved);
    for (const ModelJob& j : cand) all.add_demand(j);
    for (const ModelJob& j : movers) all.add_demand(j);
    if (!all.feasible()) continue;
    CapacityModel m(s, size, reserved);
    for (const ModelJob& j : cand) m.add_kept(j);
    for (const ModelJob& j : movers) m.add_demand(j);
    // Every set evicted on the model, sizes 0, 1, 2, ...: the first of the fewest GPUs.
    const auto nc = static_cast<int>(cand.size());
    std::vector<int> expected;
    bool found = m.feasible();
    for (int k = 1; k <= nc && !found; ++k) {
      long long best = -1;
      std::vector<int> set(static_cast<std::size_t>(k));
      std::vector<int> idx(static_cast<std::size_t>(k));
      for (int i = 0; i < k; ++i) idx[static_cast<std::size_t>(i)] = i;
      while (true) {
        CapacityModel e = m;
        long long gpus = 0;
        for (int c : idx) {
          e.evict(cand[static_cast<std::size_t>(c)]);
          for (const auto& hg : cand[static_cast<std::size_t>(c)].held) gpus += hg.second;
        }
        if (e.feasible() && (best < 0 || gpus < best)) {
          best = gpus;
          expected = idx;
        }
        int i = k - 1;
        while (i >= 0 && idx[static_cast<std::size_t>(i)] == nc - k + i) --i;
        if (i < 0) break;
        ++idx[static_cast<std::size_t>(i)];
        for (int x = i + 1; x < k; ++x) idx[static_cast<std::size_t>(x)] = idx[static_cast<std::size_t>(x - 1)] + 1;
      }
      found = best >= 0;
    }
    const auto plan = sia::detail::plan_evictions(s, size, reserved, cand, movers, 1000000);
    CHECK(plan.dropped_candidates.empty());
    CHECK(plan.dropped_movers.empty());
    CHECK(plan.evicted == expected);
    if (expected.size() >= 2) {
      ++searched;
      std::vector<int> on(static_cast<std::size_t>(n), 0);
      bool overlap = false;
      for (int c : expected)
        for (const auto& hg : cand[static_cast<std::size_t>(c)].held)
          overlap = overlap || on[static_cast<std::size_t>(hg.first)]++ > 0;
      shared += overlap ? 1 : 0;
    }
  }
  MESSAGE("evictions of two or more jobs: " << searched << ", sharing a node: " << shared);
  CHECK(searched > 50);
  CHECK(shared > 5);
}
