#pragma once
/// @file concepts/tenancy.hpp
/// @brief Optional members of a Job for shared clusters: HasWeight and HasTenant (tenant_spec.hpp).

#include <concepts>
#include <string_view>

namespace sia {

/// A job with a weight: `j.weight()` -> convertible_to<double>, finite and > 0 (default 1). It
/// multiplies the job's whole term of the round's objective.
template <class J>
concept HasWeight = requires(const J& j) {
  { j.weight() } -> std::convertible_to<double>;
};

/// A job that belongs to a tenant: `j.tenant()` -> convertible_to<std::string_view>, the name of
/// one of RoundOptions::tenants (empty = none).
template <class J>
concept HasTenant = requires(const J& j) {
  { j.tenant() } -> std::convertible_to<std::string_view>;
};

}  // namespace sia
