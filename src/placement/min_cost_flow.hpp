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
 * @return the flow on every arc, in the order of `arcs`. Deterministic for a given input.
 */
[[nodiscard]] std::vector<long> min_cost_max_flow(int num_vertices, const std::vector<FlowArc>& arcs, int source,
                                                  int sink);

}  // namespace sia::detail
