#pragma once
/// @file concepts/configuration.hpp
/// @brief The Configuration concept: a shape (n nodes, r GPUs, type t) a job can run on.

#include <concepts>

namespace sia {

/**
 * @brief A configuration `(n, r, t)`: n nodes holding r GPUs in total, all of type t (paper §3.3).
 *
 * The type is identified by its index in the cluster's list of GPU types.
 * Satisfied when, for `const C& c`, these are valid:
 * @code
 * c.num_nodes()  -> convertible_to<int>
 * c.num_gpus()   -> convertible_to<int>
 * c.type_index() -> convertible_to<int>
 * @endcode
 */
template <class C>
concept Configuration = std::regular<C> && requires(const C& c) {
  { c.num_nodes() } -> std::convertible_to<int>;
  { c.num_gpus() } -> std::convertible_to<int>;
  { c.type_index() } -> std::convertible_to<int>;
};

}  // namespace sia
