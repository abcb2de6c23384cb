#pragma once
// Private to the round: the always-valid greedy allocation used when the backend gives nothing usable.
#include "core/problem.hpp"

namespace sia::detail {

/**
 * @brief Pinned jobs first, then forced ones, then the rest in input order, each taking its best
 * configuration that still fits (capacity and tenant rows) (only when it beats "no GPUs", unless the job must run). Always
 * within capacity; pinned and forced jobs that do not fit are left without GPUs.
 */
[[nodiscard]] Choice greedy_allocation(const Problem& pb, const Requirements& req);

}  // namespace sia::detail
