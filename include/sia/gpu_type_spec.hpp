#pragma once
/// @file gpu_type_spec.hpp
/// @brief sia's own model of the GpuType concept, and the cluster description used by a round.

#include <sia/concepts/gpu_type.hpp>

#include <string>
#include <utility>
#include <vector>

namespace sia {

/**
 * @brief A GPU type of the cluster: a name, a node count and the GPUs per node.
 *
 * All nodes of a type have the same size unless `node_sizes` is given explicitly
 * (e.g. after removing failed nodes, or for a type whose nodes differ). Node sizes that are not
 * powers of two are handled as virtual nodes whose sizes are powers of two (paper §3.3); see
 * configuration_set.hpp.
 */
class GpuTypeSpec {
 public:
  GpuTypeSpec() = default;
  GpuTypeSpec(std::string name, int nodes, int gpus_per_node)
      : name_(std::move(name)), nodes_(nodes), gpus_per_node_(gpus_per_node) {}

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] int num_nodes() const noexcept { return nodes_; }
  [[nodiscard]] int gpus_per_node() const noexcept { return gpus_per_node_; }

  friend bool operator==(const GpuTypeSpec&, const GpuTypeSpec&) = default;

 private:
  std::string name_;
  int nodes_ = 0;
  int gpus_per_node_ = 0;
};

static_assert(GpuType<GpuTypeSpec>);

}  // namespace sia
