#include "placement/min_cost_flow.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/successive_shortest_path_nonnegative_weights.hpp>

#include <algorithm>
#include <cstddef>
#include <span>

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

std::vector<long> uncongested_flow(int num_vertices, const std::vector<FlowArc>& arcs, int source, int sink) {
  const auto nv = static_cast<std::size_t>(num_vertices);
  if (source < 0 || sink < 0 || source >= num_vertices || sink >= num_vertices || source == sink) return {};
  // Roles: 1 = left (fed by the source), 2 = right (feeds the sink); each vertex's one arc there.
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::vector<char> role(nv, 0);
  std::vector<std::size_t> own(nv, none);  // source → left, or right → sink
  for (std::size_t a = 0; a < arcs.size(); ++a) {
    const FlowArc& x = arcs[a];
    if (x.from < 0 || x.to < 0 || x.from >= num_vertices || x.to >= num_vertices || x.capacity < 0 || x.cost < 0)
      return {};
    if (x.from == source && x.to == sink) continue;  // the bypass
    const bool in = x.from == source, out = x.to == sink;
    if (in == out) continue;  // (a middle arc, or one into the source or out of the sink: below)
    const auto v = static_cast<std::size_t>(in ? x.to : x.from);
    const char r = in ? 1 : 2;
    if (role[v] != 0 || own[v] != none) return {};  // a vertex with two such arcs, or both roles
    role[v] = r;
    own[v] = a;
  }
  // Middle arcs: left → right only; the capacity each right vertex may receive.
  std::vector<long> into(nv, 0);
  std::vector<std::size_t> out_count(nv, 0);
  for (const FlowArc& x : arcs) {
    if ((x.from == source && x.to == sink) || x.from == source || x.to == sink) continue;
    const auto f = static_cast<std::size_t>(x.from), t = static_cast<std::size_t>(x.to);
    if (role[f] != 1 || role[t] != 2) return {};
    into[t] += std::min(x.capacity, arcs[own[f]].capacity);
    ++out_count[f];
  }
  for (std::size_t v = 0; v < nv; ++v)
    if (role[v] == 2 && into[v] > arcs[own[v]].capacity) return {};  // may bind: the search decides
  // Each left vertex's arcs, cheapest first; filled up to its supply.
  std::vector<std::size_t> begin(nv + 1, 0);
  for (std::size_t v = 0; v < nv; ++v) begin[v + 1] = begin[v] + out_count[v];
  std::vector<std::size_t> middle(begin[nv]);
  {
    std::vector<std::size_t> fill(begin.begin(), begin.end() - 1);
    for (std::size_t a = 0; a < arcs.size(); ++a) {
      const FlowArc& x = arcs[a];
      if (x.from == source || x.to == sink) continue;
      middle[fill[static_cast<std::size_t>(x.from)]++] = a;
    }
  }
  std::vector<long> flow(arcs.size(), 0);
  std::vector<long> at(nv, 0);  // flow into each right vertex
  for (std::size_t v = 0; v < nv; ++v) {
    if (role[v] != 1) continue;
    const std::span<std::size_t> mine(middle.data() + begin[v], begin[v + 1] - begin[v]);
    const long supply = arcs[own[v]].capacity;
    long room = 0;
    for (std::size_t a : mine) room += arcs[a].capacity;
    if (room > supply) {
      // A choice among the arcs: unique only when their costs differ pairwise.
      std::stable_sort(mine.begin(), mine.end(),
                       [&](std::size_t a, std::size_t b) { return arcs[a].cost < arcs[b].cost; });
      for (std::size_t k = 1; k < mine.size(); ++k)
        if (arcs[mine[k]].cost == arcs[mine[k - 1]].cost) return {};
    }
    long left = supply;
    for (std::size_t a : mine) {
      const long f = std::min(left, arcs[a].capacity);
      flow[a] = f;
      left -= f;
      at[static_cast<std::size_t>(arcs[a].to)] += f;
    }
    flow[own[v]] = supply - left;
  }
  for (std::size_t v = 0; v < nv; ++v)
    if (role[v] == 2) flow[own[v]] = at[v];
  for (std::size_t a = 0; a < arcs.size(); ++a)
    if (arcs[a].from == source && arcs[a].to == sink) flow[a] = arcs[a].capacity;
  return flow;
}

std::vector<long> min_cost_max_flow(int num_vertices, const std::vector<FlowArc>& arcs, int source, int sink,
                                    bool shortcut) {
  if (shortcut)
    if (std::vector<long> direct = uncongested_flow(num_vertices, arcs, source, sink); !direct.empty() || arcs.empty())
      return direct;
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
