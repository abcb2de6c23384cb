#pragma once
/// @file cluster.hpp
/// @brief ClusterSpec: the GPU types of a cluster, reservations and failed nodes.

#include <sia/gpu_type_spec.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace sia {

/**
 * @brief The cluster as one round sees it.
 *
 * `types[t]` describes GPU type t; configurations refer to types by this index.
 * `reserved[t]` GPUs of type t are not available to sia (reservations, GPUs held by jobs sia does
 * not manage); an empty vector means none. `down[t]` lists indices of failed nodes of type t;
 * their GPUs leave the capacity. `node_names[t]`, when non-empty, names every node of type t
 * (default names are "<type>/<index>").
 */
struct ClusterSpec {
  std::vector<GpuTypeSpec> types;
  std::vector<int> reserved;
  std::vector<std::vector<int>> down;
  std::vector<std::vector<std::string>> node_names;

  /// Index of the type called `name`, or -1.
  [[nodiscard]] int type_index(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < types.size(); ++i)
      if (types[i].name() == name) return static_cast<int>(i);
    return -1;
  }
  [[nodiscard]] int num_types() const noexcept { return static_cast<int>(types.size()); }
  [[nodiscard]] int reserved_gpus(int t) const noexcept {
    return t < static_cast<int>(reserved.size()) ? reserved[static_cast<std::size_t>(t)] : 0;
  }
  [[nodiscard]] bool is_down(int t, int node) const noexcept {
    if (t >= static_cast<int>(down.size())) return false;
    for (int d : down[static_cast<std::size_t>(t)])
      if (d == node) return true;
    return false;
  }
  /// Name of node `node` of type `t`: node_names[t][node] if given, else "<type>/<node>".
  [[nodiscard]] std::string node_name(int t, int node) const {
    const auto ti = static_cast<std::size_t>(t);
    if (ti < node_names.size() && static_cast<std::size_t>(node) < node_names[ti].size())
      return node_names[ti][static_cast<std::size_t>(node)];
    return types[ti].name() + "/" + std::to_string(node);
  }
};

}  // namespace sia
