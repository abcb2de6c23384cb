// The Placer's min-cost flow: the direct answer for uncongested networks (uncongested_flow)
// against Boost's successive shortest paths, on random networks of the Placer's shape.
#include "placement/min_cost_flow.hpp"

#include <doctest/doctest.h>

#include <random>
#include <vector>

using sia::detail::FlowArc;
using sia::detail::min_cost_max_flow;
using sia::detail::uncongested_flow;

namespace {

// source 0, sink 1, `left` jobs (supply 1..3), `right` nodes; each job has 0..3 arcs to nodes,
// costs from a small range (ties) or distinct, node capacities tight or roomy; the bypass.
std::vector<FlowArc> random_network(std::mt19937_64& g, int left, int right, bool roomy, bool distinct, int& vertices) {
  auto uni = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(g); };
  std::vector<FlowArc> arcs;
  std::vector<long> into(static_cast<std::size_t>(right), 0);
  long total = 0;
  for (int j = 0; j < left; ++j) {
    const int supply = uni(1, 3);
    const int k = uni(0, 3);
    int cost = uni(0, 3);
    for (int a = 0; a < k; ++a) {
      const int node = uni(0, right - 1);
      const long cap = uni(1, 2);
      arcs.push_back({2 + j, 2 + left + node, cap, distinct ? cost : uni(0, 3)});
      cost += uni(1, 3);
      into[static_cast<std::size_t>(node)] += std::min<long>(cap, supply);
    }
    if (k > 0) {
      arcs.push_back({0, 2 + j, supply, 0});
      total += supply;
    }
  }
  for (int i = 0; i < right; ++i)
    arcs.push_back({2 + left + i, 1, roomy ? into[static_cast<std::size_t>(i)] + uni(0, 2) : uni(0, 2), 0});
  arcs.push_back({0, 1, total, 4});
  vertices = 2 + left + right;
  return arcs;
}

}  // namespace

TEST_CASE("placement.min_cost_flow.uncongested_as_boost") {
  std::mt19937_64 g(20261129);
  int direct = 0, searched = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    const int left = 1 + static_cast<int>(g() % 12), right = 1 + static_cast<int>(g() % 8);
    const bool roomy = iter % 4 != 0, distinct = iter % 3 != 0;
    int n = 0;
    const std::vector<FlowArc> arcs = random_network(g, left, right, roomy, distinct, n);
    const std::vector<long> boost = min_cost_max_flow(n, arcs, 0, 1, false);
    const std::vector<long> shortcut = uncongested_flow(n, arcs, 0, 1);
    if (!shortcut.empty()) {
      ++direct;
      CHECK(shortcut == boost);
    } else {
      ++searched;
    }
    CHECK(min_cost_max_flow(n, arcs, 0, 1) == boost);
  }
  MESSAGE("answered directly: " << direct << ", searched: " << searched);
  CHECK(direct > 1000);   // the shortcut runs on most uncongested networks
  CHECK(searched > 500);  // and stands aside on congested ones and ties
}

TEST_CASE("placement.min_cost_flow.shortcut_declines") {
  // A node that may receive more than it can take: the search decides.
  const std::vector<FlowArc> congested{{0, 2, 1, 0}, {0, 3, 1, 0}, {2, 4, 1, 1},
                                       {3, 4, 1, 2}, {4, 1, 1, 0}, {0, 1, 2, 5}};
  CHECK(uncongested_flow(5, congested, 0, 1).empty());
  CHECK(min_cost_max_flow(5, congested, 0, 1) == std::vector<long>{1, 0, 1, 0, 1, 2});
  // A job choosing one of two equally cheap nodes: several optima, the search decides.
  const std::vector<FlowArc> tie{{0, 2, 1, 0}, {2, 3, 1, 1}, {2, 4, 1, 1}, {3, 1, 1, 0}, {4, 1, 1, 0}, {0, 1, 1, 5}};
  CHECK(uncongested_flow(5, tie, 0, 1).empty());
  // The same with different costs: the cheaper node, directly.
  const std::vector<FlowArc> cheaper{{0, 2, 1, 0}, {2, 3, 1, 2}, {2, 4, 1, 1},
                                     {3, 1, 1, 0}, {4, 1, 1, 0}, {0, 1, 1, 5}};
  CHECK(uncongested_flow(5, cheaper, 0, 1) == std::vector<long>{1, 0, 1, 0, 1, 1});
  CHECK(min_cost_max_flow(5, cheaper, 0, 1, false) == std::vector<long>{1, 0, 1, 0, 1, 1});
  // Not the Placer's shape (an arc between two nodes): declined.
  const std::vector<FlowArc> odd{{0, 2, 1, 0}, {2, 3, 1, 1}, {3, 4, 1, 0}, {4, 1, 1, 0}};
  CHECK(uncongested_flow(5, odd, 0, 1).empty());
}
