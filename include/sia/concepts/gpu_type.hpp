#pragma once
/// @file concepts/gpu_type.hpp
/// @brief The GpuType concept: what sia needs to know about a kind of accelerator.

#include <concepts>
#include <string_view>

namespace sia {

/**
 * @brief A kind of accelerator with a name, a node count and a node size.
 *
 * Satisfied when, for `const G& g`, these are valid:
 * @code
 * g.name()          -> convertible_to<std::string_view>   // unique within a cluster, e.g. "a100"
 * g.num_nodes()     -> convertible_to<int>                // N >= 0
 * g.gpus_per_node() -> convertible_to<int>                // R >= 1
 * @endcode
 */
template <class G>
concept GpuType = requires(const G& g) {
  { g.name() } -> std::convertible_to<std::string_view>;
  { g.num_nodes() } -> std::convertible_to<int>;
  { g.gpus_per_node() } -> std::convertible_to<int>;
};

}  // namespace sia
