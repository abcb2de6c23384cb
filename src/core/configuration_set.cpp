// The configuration set of a cluster (paper §3.3) and its capacity rows.
#include <sia/configuration_set.hpp>
#include <sia/error.hpp>

#include <algorithm>
#include <bit>
#include <climits>
#include <set>
#include <sstream>
#include <string>

namespace sia {
namespace {

// Upper bounds that keep every count in an int and the configuration set of reasonable size.
// 2^20 nodes of up to 2^16 GPUs each is far beyond any real cluster.
constexpr long long max_nodes_per_type = 1LL << 20;
constexpr long long max_gpus_per_node = 1LL << 16;
constexpr long long max_gpus_per_type = 1LL << 26;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Powers of two whose sum is r, largest first (binary decomposition: 6 -> {4, 2}).
std::vector<int> virtual_node_sizes(int r) {
  std::vector<int> sizes;
  for (int bit = 30; bit >= 0; --bit)
    if (r & (1 << bit)) sizes.push_back(1 << bit);
  return sizes;
}

void validate_cluster(const ClusterSpec& cluster) {
  if (cluster.types.empty()) throw InvalidArgument("cluster: no GPU types (empty cluster)");
  const auto ntypes = cluster.types.size();
  if (cluster.reserved.size() > ntypes)
    throw InvalidArgument("cluster.reserved: " + std::to_string(cluster.reserved.size()) + " entries for " +
                          std::to_string(ntypes) + " GPU types");
  if (cluster.down.size() > ntypes)
    throw InvalidArgument("cluster.down: " + std::to_string(cluster.down.size()) + " entries for " +
                          std::to_string(ntypes) + " GPU types");
  if (cluster.node_names.size() > ntypes)
    throw InvalidArgument("cluster.node_names: " + std::to_string(cluster.node_names.size()) + " entries for " +
                          std::to_string(ntypes) + " GPU types");
  std::set<std::string, std::less<>> names;
  long long total = 0;
  for (std::size_t t = 0; t < ntypes; ++t) {
    const auto& g = cluster.types[t];
    // Appended piece by piece: g++ 12 -O2 warns falsely (-Wrestrict) on `"#" + std::to_string(t)`.
    std::string label = "GPU type ";
    if (g.name().empty()) {
      label += '#';
      label += std::to_string(t);
    } else {
      label += quoted(g.name());
    }
    if (g.name().empty()) throw InvalidArgument(label + ": empty name");
    if (!names.insert(g.name()).second) throw InvalidArgument(label + ": duplicate GPU type name");
    if (g.num_nodes() < 0) throw InvalidArgument(label + ": negative node count " + std::to_string(g.num_nodes()));
    if (g.num_nodes() > max_nodes_per_type)
      throw InvalidArgument(label + ": node count " + std::to_string(g.num_nodes()) + " exceeds the limit " +
                            std::to_string(max_nodes_per_type));
    if (g.gpus_per_node() < 1)
      throw InvalidArgument(label + ": gpus_per_node must be >= 1 (got " + std::to_string(g.gpus_per_node()) + ")");
    if (g.gpus_per_node() > max_gpus_per_node)
      throw InvalidArgument(label + ": gpus_per_node " + std::to_string(g.gpus_per_node()) + " exceeds the limit " +
                            std::to_string(max_gpus_per_node));
    const long long gpus = static_cast<long long>(g.num_nodes()) * g.gpus_per_node();
    if (gpus > max_gpus_per_type)
      throw InvalidArgument(label + ": " + std::to_string(gpus) + " GPUs exceed the limit " +
                            std::to_string(max_gpus_per_type));
    total += gpus;
    if (t < cluster.down.size()) {
      std::set<int> seen;
      for (int d : cluster.down[t]) {
        if (d < 0 || d >= g.num_nodes())
          throw InvalidArgument(label + ": down node index " + std::to_string(d) + " is out of range [0, " +
                                std::to_string(g.num_nodes()) + ")");
        if (!seen.insert(d).second)
          throw InvalidArgument(label + ": down node index " + std::to_string(d) + " is listed twice");
      }
    }
    if (t < cluster.reserved.size() && cluster.reserved[t] < 0)
      throw InvalidArgument(label + ": negative reserved GPU count " + std::to_string(cluster.reserved[t]));
  }
  if (total == 0) throw InvalidArgument("cluster: no GPUs (every GPU type has zero nodes)");
}

}  // namespace

namespace {

// Where (nodes, gpus) lies among its type's configurations (virtual nodes of `s` GPUs, `up` nodes up):
// single-node shapes 1, 2, 4, ..., s, then n = 2..up whole virtual nodes; -1 when it is none of them.
int offset_in_type(int s, int up, int nodes, int gpus) noexcept {
  if (s < 1 || nodes < 1 || gpus < 1) return -1;
  if (nodes == 1 && gpus <= s && std::has_single_bit(static_cast<unsigned>(gpus)))
    return std::countr_zero(static_cast<unsigned>(gpus));
  if (nodes >= 2 && nodes <= up && gpus == nodes * s)
    return std::countr_zero(static_cast<unsigned>(s)) + 1 + (nodes - 2);
  return -1;
}

}  // namespace

int largest_virtual_node(int gpus_per_node) noexcept {
  return gpus_per_node > 0 ? static_cast<int>(std::bit_floor(static_cast<unsigned>(gpus_per_node))) : 0;
}

std::optional<ConfigurationSpec> configuration_of_count(int type, int vnode_size, int up_nodes, int gpus,
                                                        CountMatch match) noexcept {
  if (vnode_size < 1 || up_nodes < 1 || gpus < 1) return std::nullopt;
  if (gpus <= vnode_size) {
    const int single = static_cast<int>(std::bit_ceil(static_cast<unsigned>(gpus)));
    if (single != gpus && match == CountMatch::exact) return std::nullopt;
    return ConfigurationSpec{type, 1, single};
  }
  const long long nodes = (static_cast<long long>(gpus) + vnode_size - 1) / vnode_size;
  if (nodes > up_nodes) return std::nullopt;
  if (nodes * vnode_size != gpus && match == CountMatch::exact) return std::nullopt;
  return ConfigurationSpec{type, static_cast<int>(nodes), static_cast<int>(nodes) * vnode_size};
}

std::optional<ConfigurationSpec> held_configuration(int type, int vnode_size, int up_nodes, int gpus,
                                                    std::optional<int> rigid_count) noexcept {
  if (auto c = configuration_of_count(type, vnode_size, up_nodes, gpus, CountMatch::exact)) return c;
  if (rigid_count && *rigid_count == gpus)
    return configuration_of_count(type, vnode_size, up_nodes, gpus, CountMatch::footprint);
  return std::nullopt;
}

std::optional<int> ConfigurationSet::index_of(const ConfigurationSpec& c) const noexcept {
  if (c.type < 0 || c.type >= static_cast<int>(vnode_size.size())) return std::nullopt;
  const auto t = static_cast<std::size_t>(c.type);
  const int offset = offset_in_type(vnode_size[t], up_nodes[t], c.nodes, c.gpus);
  if (offset < 0) return std::nullopt;
  return first_config[t] + offset;
}

std::optional<int> ConfigurationSet::find(int type, int gpus, CountMatch match) const noexcept {
  if (type < 0 || type >= static_cast<int>(vnode_size.size())) return std::nullopt;
  const auto t = static_cast<std::size_t>(type);
  const auto c = configuration_of_count(type, vnode_size[t], up_nodes[t], gpus, match);
  return c ? index_of(*c) : std::nullopt;
}

std::optional<int> ConfigurationSet::find_held(int type, int gpus, std::optional<int> rigid_count) const noexcept {
  if (type < 0 || type >= static_cast<int>(vnode_size.size())) return std::nullopt;
  const auto t = static_cast<std::size_t>(type);
  // A count that is exactly a configuration (held_configuration's first answer, what almost every
  // running job holds) is placed by offset_in_type at once: the chain of std::optional results below
  // cost about 25 ns a job, 0.5 ms of a 20,000-job round.
  const int s = vnode_size[t];
  if (s >= 1 && up_nodes[t] >= 1 && gpus >= 1) {
    const int nodes = gpus <= s ? 1 : (gpus % s == 0 ? gpus / s : 0);
    if (const int offset = nodes > 0 ? offset_in_type(s, up_nodes[t], nodes, gpus) : -1; offset >= 0)
      return first_config[t] + offset;
  }
  const auto c = held_configuration(type, vnode_size[t], up_nodes[t], gpus, rigid_count);
  return c ? index_of(*c) : std::nullopt;
}

int ConfigurationSet::row_usage(const CapacityRow& r, const ConfigurationSpec& c) const noexcept {
  if (c.type != r.type || c.nodes < 1 || c.gpus < 1) return 0;
  // A configuration is `nodes` items of gpus/nodes GPUs each (one item for a single-node shape).
  const int item = c.gpus / c.nodes;
  return item >= r.min_item_gpus ? c.gpus : 0;
}

int ConfigurationSet::row_usage(const CapacityRow& r, const ConfigurationSpec& c, int gpus) const noexcept {
  if (c.type != r.type || c.nodes < 1 || c.gpus < 1) return 0;
  if (gpus <= 0 || gpus >= c.gpus) return row_usage(r, c);
  return rigid_row_usage(r.min_item_gpus, c, gpus, vnode_size[static_cast<std::size_t>(c.type)]);
}

int rigid_row_usage(int h, const ConfigurationSpec& c, int gpus, int vnode_size) noexcept {
  if (c.nodes < 1 || c.gpus < 1 || h < 1) return 0;
  if (gpus <= 0 || gpus >= c.gpus) return c.gpus / c.nodes >= h ? c.gpus : 0;
  // Whole virtual nodes first (a multi-node footprint), then the tail on one node.
  const int whole = c.nodes >= 2 ? std::min(c.nodes - 1, gpus / std::max(1, vnode_size)) : 0;
  const int shares = c.nodes >= 2 ? whole * vnode_size : 0;
  const int tail = gpus - shares;
  int use = vnode_size >= h ? shares : 0;
  if (tail > 0) {
    const int slot = static_cast<int>(std::bit_ceil(static_cast<unsigned>(tail)));
    if (slot >= h) use += tail + ((slot - tail) & (h - 1));
  }
  return use;
}

unsigned rigid_thresholds(const ConfigurationSpec& c, int gpus, int vnode_size) noexcept {
  if (c.nodes < 1 || c.gpus < 1 || gpus <= 0 || gpus >= c.gpus) return 0;
  const int whole = c.nodes >= 2 ? std::min(c.nodes - 1, gpus / std::max(1, vnode_size)) : 0;
  const int tail = gpus - (c.nodes >= 2 ? whole * vnode_size : 0);
  if (tail <= 0) return 0;
  const auto slot = std::bit_ceil(static_cast<unsigned>(tail));
  return (slot - static_cast<unsigned>(tail)) << 1;  // digit b of F - t needs the row h = 2b
}

void ConfigurationSet::add_threshold(int type, int h) {
  if (type < 0 || type >= static_cast<int>(vnode_size.size()) || h < 1 ||
      h > vnode_size[static_cast<std::size_t>(type)])
    return;
  // The type's capacity at threshold h is that of its row with the largest threshold <= h (the
  // set omits a row only when a lower one has the same capacity); rows stay grouped by type, in
  // threshold order.
  std::size_t at = 0;
  const CapacityRow* below = nullptr;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].type != type) continue;
    if (rows[r].min_item_gpus == h) return;
    if (rows[r].min_item_gpus < h) {
      below = &rows[r];
      at = r + 1;  // right after the type's last lower threshold
    }
  }
  if (below == nullptr) return;  // a type with no row has no capacity to add to
  const CapacityRow row{type, h, below->capacity};
  rows.insert(rows.begin() + static_cast<std::ptrdiff_t>(at), row);
}

void ConfigurationSet::add_all_thresholds(int type) {
  if (type < 0 || type >= static_cast<int>(vnode_size.size())) return;
  for (int h = 2; h <= vnode_size[static_cast<std::size_t>(type)]; h *= 2) add_threshold(type, h);
}

ConfigurationSet make_configuration_set(const ClusterSpec& cluster) {
  validate_cluster(cluster);
  ConfigurationSet set;
  const int ntypes = cluster.num_types();
  set.free_gpus.assign(static_cast<std::size_t>(ntypes), 0);
  set.vnode_size.assign(static_cast<std::size_t>(ntypes), 0);
  set.up_nodes.assign(static_cast<std::size_t>(ntypes), 0);
  set.first_config.assign(static_cast<std::size_t>(ntypes) + 1, 0);
  for (int t = 0; t < ntypes; ++t) {
    const auto& g = cluster.types[static_cast<std::size_t>(t)];
    const int down = t < static_cast<int>(cluster.down.size())
                         ? static_cast<int>(cluster.down[static_cast<std::size_t>(t)].size())
                         : 0;
    const int up_nodes = g.num_nodes() - down;
    const int up_gpus = up_nodes * g.gpus_per_node();
    const int reserved = cluster.reserved_gpus(t);
    if (reserved > up_gpus) {
      std::ostringstream msg;
      msg << "GPU type '" << g.name() << "': " << reserved << " reserved GPUs exceed the " << up_gpus
          << " GPUs available on its " << up_nodes << " up nodes";
      throw InvalidArgument(msg.str());
    }
    set.free_gpus[static_cast<std::size_t>(t)] = up_gpus - reserved;

    // Every node of the type is split into the same power-of-two virtual nodes (6 = 4 + 2); the
    // largest one (s) appears exactly once per node, so whole-node shapes are multiples of s.
    const auto sizes = virtual_node_sizes(g.gpus_per_node());
    const int s = up_nodes > 0 ? sizes.front() : 0;
    set.vnode_size[static_cast<std::size_t>(t)] = s;
    set.up_nodes[static_cast<std::size_t>(t)] = up_nodes;
    set.first_config[static_cast<std::size_t>(t)] = static_cast<int>(set.configs.size());
    if (up_nodes > 0) {
      for (int k = 1; k <= s; k *= 2) set.configs.push_back(ConfigurationSpec{t, 1, k});
      for (int n = 2; n <= up_nodes; ++n) set.configs.push_back(ConfigurationSpec{t, n, n * s});
    }

    // Capacity rows. Items are powers of two no larger than s, bins are the virtual nodes. For a
    // threshold h, items >= h must fit into bins >= h; between two consecutive virtual-node sizes
    // v_next < v the bin capacity is constant, so the binding threshold is the smallest item size
    // above v_next, 2 * v_next. Threshold 1 (all items, all bins) is the plain GPU count. A row
    // whose capacity equals that of a lower threshold is implied by it and omitted.
    int last_capacity = -1;
    auto add_row = [&](int h) {
      int bins = 0;
      for (int v : sizes)
        if (v >= h) bins += v;
      const int capacity = std::max(0, up_nodes * bins - reserved);
      if (capacity == last_capacity) return;
      last_capacity = capacity;
      set.rows.push_back(CapacityRow{t, h, capacity});
    };
    add_row(1);
    for (std::size_t k = sizes.size(); k-- > 1;) add_row(2 * sizes[k]);
  }
  set.first_config[static_cast<std::size_t>(ntypes)] = static_cast<int>(set.configs.size());
  return set;
}

}  // namespace sia
