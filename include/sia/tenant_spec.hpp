#pragma once
/// @file tenant_spec.hpp
/// @brief TenantSpec: a tenant's quota (caps and guarantee) for one round (docs/decision.md, "Tenants").

#include <optional>
#include <string>
#include <vector>

namespace sia {

/**
 * @brief A tenant's constraints on the round. Jobs name their tenant (JobSpec::tenant); a job
 * naming no tenant is bound by no cap and holds no guarantee.
 *
 * - `max_gpus`: the tenant's jobs together use at most this many GPUs (all types); none = no cap.
 * - `max_gpus_per_type[t]`: at most this many GPUs of type t (indexed like ClusterSpec::types;
 *   -1 = no cap on that type; empty = none).
 * - `guaranteed_gpus` M: GPUs reserved for the tenant while it has demand. With D the tenant's
 *   demand (the sum over its jobs of the most GPUs each can use this round, capped by its caps and
 *   by the free GPUs of the types its jobs can use), the other tenants' preemptible jobs together
 *   leave at least min(M, D) GPUs of those types free (beyond what non-preemptible jobs hold).
 *   A guarantee only restricts other tenants' preemptible jobs, so it never makes a round
 *   infeasible; it is exact on counts, not on node shapes (docs/decision.md).
 *
 * Caps are hard: a running non-preemptible job keeps its GPUs even above its tenant's cap (the cap
 * then admits nothing more), and a waiting non-preemptible job that does not fit under the cap waits.
 */
struct TenantSpec {
  std::string name;
  std::optional<int> max_gpus;
  std::vector<int> max_gpus_per_type;
  int guaranteed_gpus = 0;
};

}  // namespace sia
