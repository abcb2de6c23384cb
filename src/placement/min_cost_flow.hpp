#pragma once
/// @file min_cost_flow.hpp
/// @brief A thin wrapper over Boost.Graph's successive-shortest-path min-cost flow, used by the
/// Placer to match jobs to the nodes they held before (maximum-overlap b-matching).

#include <vector>

namespace sia::detail {

/// @brief One arc of a flow network (capacity >= 0, cost >= 0).
struct FlowArc {
  int from = 0;
  int to = 0;
  long capacity = 0;
  long cost = 0;
};

/**
 * @brief Minimum-cost maximum flow from `source` to `sink` on `num_vertices` vertices
 * (Boost `successive_shortest_path_nonnegative_weights`).
 *
 * `shortcut`: a network of the Placer's shape whose minimum-cost maximum flow is unique and needs
 * no search is answered directly (uncongested_flow); the result is the same (tests compare).
 * @return the flow on every arc, in the order of `arcs`. Deterministic for a given input.
 */
[[nodiscard]] std::vector<long> min_cost_max_flow(int num_vertices, const std::vector<FlowArc>& arcs, int source,
                                                  int sink, bool shortcut = true);

/**
 * @brief The flow directly, when the network has the Placer's bipartite shape and no capacity of
 * the right side can bind: arcs source → left vertex (one each: its supply), left → right, right →
 * sink (one each: its capacity, at least the sum of the capacities of the arcs into it), and
 * source → sink; every left vertex's arcs either fit its supply or have pairwise different costs.
 * Then every minimum-cost maximum flow is the same: each left vertex fills its cheapest arcs (all
 * of them when they fit), and the bypass is full. (The Placer's rounds: jobs that change size
 * matched to the node they held, nodes with room for all of them — a Dijkstra per job otherwise,
 * thousands per round at 100,000 GPUs.)
 * @return the flow on every arc, or empty when the network is not of that kind.
 */
[[nodiscard]] std::vector<long> uncongested_flow(int num_vertices, const std::vector<FlowArc>& arcs, int source,
                                                 int sink);

}  // namespace sia::detail
