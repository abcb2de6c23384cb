#include "placement/min_cost_flow.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/successive_shortest_path_nonnegative_weights.hpp>

#include <cstddef>

namespace sia::detail {

namespace {

using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using Graph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<boost::edge_capacity_t, long,
                    boost::property<boost::edge_residual_capacity_t, long,
                                    boost::property<boost::edge_reverse_t, Traits::edge_descriptor,
                                                    boost::property<boost::edge_weight_t, double>>>>>;

// Costs are doubles although they are small integers: Boost's algorithm adds the Dijkstra
// distance of every vertex to its potential each round, and a vertex that has become unreachable
// has distance "infinity" = the type's max; with a signed integer type the second such addition
// overflows (undefined behaviour, caught by UBSan). In double it saturates to +inf, harmlessly:
// an unreachable vertex stays unreachable, so its potential is never used again. Integer costs
// up to 2^53 are exact in double.

}  // namespace

std::vector<long> min_cost_max_flow(int num_vertices, const std::vector<FlowArc>& arcs, int source, int sink) {
  Graph g(static_cast<std::size_t>(num_vertices));
  auto capacity = boost::get(boost::edge_capacity, g);
  auto reverse = boost::get(boost::edge_reverse, g);
  auto weight = boost::get(boost::edge_weight, g);
  auto residual = boost::get(boost::edge_residual_capacity, g);

  std::vector<Traits::edge_descriptor> forward;
  forward.reserve(arcs.size());
  for (const FlowArc& a : arcs) {
    // Boost's algorithm works on the residual graph and needs every arc paired with a reverse
    // arc of capacity 0 and opposite cost.
    auto e = boost::add_edge(static_cast<std::size_t>(a.from), static_cast<std::size_t>(a.to), g).first;
    auto r = boost::add_edge(static_cast<std::size_t>(a.to), static_cast<std::size_t>(a.from), g).first;
    capacity[e] = a.capacity;
    capacity[r] = 0;
    weight[e] = static_cast<double>(a.cost);
    weight[r] = -static_cast<double>(a.cost);
    reverse[e] = r;
    reverse[r] = e;
    forward.push_back(e);
  }
  boost::successive_shortest_path_nonnegative_weights(g, static_cast<std::size_t>(source),
                                                      static_cast<std::size_t>(sink));
  std::vector<long> flow;
  flow.reserve(forward.size());
  for (auto e : forward) flow.push_back(capacity[e] - residual[e]);
  return flow;
}

}  // namespace sia::detail
