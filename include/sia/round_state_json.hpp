#pragma once
/// @file round_state_json.hpp
/// @brief The next `sia_allocate` request from a request, its decision and the seconds until the
/// next round: round_state.hpp's rules on JSON (`sia_allocate --next-request`).

#include <string>
#include <string_view>

namespace sia {

/// @brief Where the two documents of next_request_json() come from (error-message prefixes) and how
/// to print the result.
struct NextRequestOptions {
  std::string request_source = "request";
  std::string decision_source = "decision";
  bool pretty = false;  ///< indent with two spaces instead of printing one line
};

/**
 * @brief The request of the next round: `request_json` with each job's `current`, `age_s`,
 * `restarts` and `max_gpus_ever` advanced by advance_round_state() (docs/round-state.md) from
 * `decision_json`, the decision `sia_allocate` printed for that request, and `elapsed_s`.
 *
 * Everything else is kept as written (field order included). The decision's `warm_start`, when it
 * has one, becomes the next request's `warm_start`; a stale one is dropped. Failed nodes learnt
 * meanwhile go into the next request's `cluster.down`: sia_allocate then forgets the allocations
 * they took away (the same rule), and the following --next-request counts the restart.
 *
 * @throws InvalidArgument naming the source and field: a request `sia_allocate` would reject, a
 *         decision that is not JSON, names a job, GPU type or node the request does not have, or
 *         misses a job of the request, or a negative or non-finite `elapsed_s`.
 */
[[nodiscard]] std::string next_request_json(std::string_view request_json, std::string_view decision_json,
                                            double elapsed_s, const NextRequestOptions& options = {});

}  // namespace sia
