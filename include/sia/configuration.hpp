#pragma once
/// @file configuration.hpp
/// @brief sia::ConfigurationSpec, the library's model of the Configuration concept, and BatchChoice.

#include <sia/concepts/configuration.hpp>

namespace sia {

/// @brief A configuration (nodes, gpus, type index). Model of Configuration.
struct ConfigurationSpec {
  int type = 0;   ///< index of the GPU type in the cluster
  int nodes = 0;  ///< number of (virtual) nodes
  int gpus = 0;   ///< total GPUs

  [[nodiscard]] constexpr int num_nodes() const noexcept { return nodes; }
  [[nodiscard]] constexpr int num_gpus() const noexcept { return gpus; }
  [[nodiscard]] constexpr int type_index() const noexcept { return type; }
  friend constexpr bool operator==(const ConfigurationSpec&, const ConfigurationSpec&) = default;
};

static_assert(Configuration<ConfigurationSpec>);

/// @brief A batch-size decision for a configuration: global batch = gpus/P * local * (accum+1).
struct BatchChoice {
  long long global_batch = 0;  ///< samples per optimiser step
  int local_batch = 0;         ///< samples per GPU per micro-step (the "atomic" batch)
  int accumulation_steps = 0;  ///< extra micro-steps without synchronisation (0 = none)
};

/// @brief A batch choice of any type with the three members (a model's own struct, HasBatchSize).
template <class B>
[[nodiscard]] constexpr BatchChoice to_batch_choice(const B& b) {
  return BatchChoice{static_cast<long long>(b.global_batch), static_cast<int>(b.local_batch),
                     static_cast<int>(b.accumulation_steps)};
}

}  // namespace sia
