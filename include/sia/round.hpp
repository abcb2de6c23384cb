#pragma once
/// @file round.hpp
/// @brief One Sia scheduling round (README.md, "What a round does"): jobs + cluster in, allocation + placement out.

#include <sia/allocation.hpp>
#include <sia/cluster.hpp>
#include <sia/configuration.hpp>
#include <sia/job_spec.hpp>
#include <sia/milp/solver.hpp>
#include <sia/placement.hpp>
#include <sia/round_log.hpp>
#include <sia/tenant_spec.hpp>
#include <sia/warm_start.hpp>

#include <chrono>
#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

namespace sia {

/// Options of a round (in sia_allocate's JSON request: the `policy` object, examples/requests/README.md).
struct RoundOptions {
  double p = -0.5;                  ///< fairness exponent, != 0
  double lambda = 1.1;              ///< penalty per job left without GPUs, > 0
  std::string backend = "default";  ///< MILP backend name (see milp/factory.hpp)
  /// Wall-clock limit of the whole call (configuration set, goodputs, binary program, solve, tie
  /// rules, placement): the round returns within about 10 % + 100 ms of it. When it is reached the
  /// round returns the best valid allocation it has (a greedy one if the solver had no time:
  /// `fallback`), with status `feasible`. Jobs whose goodputs were not evaluated in time keep
  /// their current configuration when it fits, and waiting ones wait. None = no limit.
  std::optional<std::chrono::milliseconds> time_limit = std::chrono::milliseconds(10000);
  /// Cancellation from another thread: a stop requested on this token ends the round as a reached
  /// time limit does (status `feasible`, a valid allocation). Every built-in backend stops at its
  /// next check (GLPK: between 100 ms slices of its LP relaxation and between branch-and-bound nodes).
  std::stop_token stop;
  double relative_gap = 1e-4;
  bool place = true;  ///< compute placements (placement.hpp)
  /// Reference-compatibility: round utilities to 2 decimals as the authors' code does.
  /// Off by default.
  bool round_utilities = false;
  /// Report RoundResult::prices (docs/decision.md): the capacity-row duals of the round's LP
  /// relaxation, computed by one routine whatever the backend (an extra native LP solve unless the
  /// backend is native, whose own LP is then solved to its optimum: a warm round's native LP starts
  /// from the previous prices and may end at other optimal duals where they are not unique); turn
  /// off when prices are not needed.
  bool compute_prices = true;
  /// Start from a previous round (its RoundResult::warm_start): the backend may begin its search
  /// from that round's prices and allocation. Never changes the answer beyond `relative_gap`.
  std::shared_ptr<const WarmStart> warm_start;
  /// Threads the backend may use: 0 = all cores (default), 1 = the calling thread only. The
  /// native backend's answer is the same whatever the number.
  int threads = 0;
  /// Tenants' caps and guarantees (tenant_spec.hpp), by name: JobSpec::tenant refers to them. A job
  /// naming a tenant not listed here is an error. Empty = no tenant constraints.
  std::vector<TenantSpec> tenants;
  /// Observer of the round (round_log.hpp): one event per phase with its timing, the problem's size,
  /// the backend's status, nodes, objective, bound and gap. Empty (default): no event is built.
  RoundLog log;
  /// All-or-nothing input (docs/decision.md, "Rejected jobs"): when true, a job-level error (a job
  /// field out of range, a `current` allocation that is not a configuration of the cluster, a
  /// goodput that is NaN or negative, ...) throws InvalidArgument for the whole round. When false
  /// (default) that job alone is rejected: it is listed in RoundResult::rejected, gets no GPUs,
  /// and the other jobs are scheduled. Round-level errors (cluster, options, duplicate job ids)
  /// always throw.
  bool strict = false;
};

/// Outcome of a round.
enum class RoundStatus {
  optimal,     ///< solved to the requested gap
  feasible,    ///< a limit was hit; the allocation is valid but maybe not optimal
  infeasible,  ///< hard constraints (non-preemptible jobs) cannot all be met; see `unmet`
  error,       ///< the backend failed; the allocation is a valid greedy fallback
};
[[nodiscard]] std::string_view to_string(RoundStatus s) noexcept;

/// Why a job gets no GPUs this round (docs/decision.md, "Reasons"). One per job without GPUs.
enum class PendingReason {
  none,                    ///< the job has GPUs
  rejected,                ///< its input was rejected (RoundResult::rejected says why)
  not_evaluated,           ///< the round's time limit or a stop came before its configurations were evaluated
  no_valid_configuration,  ///< no configuration of the up cluster is allowed by its limits, has goodput > 0
                           ///< and is worth more than waiting
  unmet,                   ///< non-preemptible, with a usable configuration, but the non-preemptible demand
                           ///< cannot all be met (it is in RoundResult::unmet)
  tenant_cap,              ///< its tenant's GPU cap is reached
  capacity,                ///< none of its usable configurations fits in the up GPUs left after reservations
                           ///< and non-preemptible running jobs: it would run in a larger cluster
  outbid,                  ///< a usable configuration fits, but the allocation gives those GPUs to other jobs
};
[[nodiscard]] std::string_view to_string(PendingReason r) noexcept;

/// A job the round did not consider because its input is invalid (RoundOptions::strict false).
struct RejectedJob {
  std::string job;        ///< its id (may be empty: an id that could not be read)
  std::size_t index = 0;  ///< its position in the input (the jobs span; the request's `jobs` array)
  std::string field;      ///< the offending field (JobSpec member, or JSON path in a request)
  std::string reason;     ///< what is wrong, as the all-or-nothing error would say it
  bool running = false;   ///< it had a current allocation: it is also in RoundResult::preempted
};

/// The decision for one job.
struct JobDecision {
  std::string job;                          ///< job id
  std::optional<ConfigurationSpec> config;  ///< chosen configuration; empty = no GPUs this round
  int gpus = 0;                             ///< GPUs the job uses (rigid jobs may use fewer than config->gpus)
  std::optional<BatchChoice> batch;         ///< when the job's model offers batch sizes
  std::vector<NodeShare> placement;         ///< when RoundOptions::place
  /// The job must (re)start: its configuration differs from `current`, or its configuration is the
  /// same but its placement differs from a known current placement (docs/decision.md).
  bool changed = false;
  /// Why the job gets no GPUs (PendingReason::none when it has some), with a short explanation.
  PendingReason reason = PendingReason::none;
  std::string detail;
  /// How placement treated the job (placement.hpp); empty when placements were not computed.
  std::optional<PlacementStatus> placement_status;
};

/// Result of a round.
struct RoundResult {
  RoundStatus status = RoundStatus::error;
  std::string backend;  ///< backend that produced the allocation
  double objective =
      0.0;  ///< value of the objective (README.md, "What a round does", step 3; λ terms counted) for the returned allocation
  /// Proven bound on the optimal value (lower when p < 0, upper when p > 0); NaN when none is known.
  double best_bound = std::numeric_limits<double>::quiet_NaN();
  double solve_ms = 0.0;               ///< time in the backend
  double total_ms = 0.0;               ///< whole round
  std::vector<JobDecision> decisions;  ///< one per input job, in input order
  std::vector<int> gpus_used;          ///< per type: GPUs the jobs use (JobDecision::gpus summed; a
                                       ///< rigid job counts its count, not its footprint)
  /// Per type: marginal improvement of the round's objective per extra GPU of the type (LP duals
  /// of its capacity rows in the round's LP relaxation, the same routine for every backend;
  /// positive = more GPUs help, for either sign of p). Empty when not asked for, when the LP gave
  /// no duals, or after a fallback.
  std::vector<double> prices;
  /// Jobs that keep their configuration but must move (fragmentation, a failed node, a current
  /// placement that breaks the placement rules), in input order; each also has `changed`.
  std::vector<std::string> evicted;
  /// Non-preemptible jobs (running or waiting) left without GPUs by the returned allocation.
  std::vector<std::string> unmet;
  /// Running jobs (with a `current` allocation) left without GPUs by the returned allocation,
  /// rejected running jobs included.
  std::vector<std::string> preempted;
  /// Jobs left without GPUs because of tenants (RoundOptions::tenants): one of their configurations
  /// fits the GPUs the allocation leaves free, but each such one would break their tenant's cap or
  /// another tenant's guarantee. In input order.
  std::vector<std::string> tenant_capped;
  /// GPUs each tenant's jobs use in the returned allocation (indexed like RoundOptions::tenants).
  std::vector<int> tenant_gpus;
  /// Jobs rejected for invalid input (RoundOptions::strict false), in input order. Each has a
  /// decision without GPUs and PendingReason::rejected; it is not part of the objective.
  std::vector<RejectedJob> rejected;
  bool fallback = false;  ///< allocation came from the greedy fallback
  std::string message;    ///< detail for non-optimal statuses
  /// What the next round can start from (RoundOptions::warm_start): this round's capacity-row
  /// prices (when the backend gave duals) and allocation. Null after a fallback.
  std::shared_ptr<const WarmStart> warm_start;
};

/**
 * @brief Runs one round on sia's own job type.
 *
 * What it does (README.md, "What a round does"): builds the configuration set (configuration_set.hpp), restricts
 * it per job (valid_configs.hpp), asks every job for its raw goodput on each remaining
 * configuration (0 = not usable), normalises, applies restart factors and the exponent p
 * (goodput_matrix.hpp), solves the binary program with the backend, checks the backend's answer
 * independently (one configuration per job, capacity rows, pins) and decodes it.
 *
 * Details callers rely on:
 * - A job's `current()` is identified by its GPU type and GPU count (configurations of one type
 *   have distinct counts; `nodes` is informative). A rigid job may report its count instead of
 *   its footprint. A count that is no configuration of the cluster (e.g. its node failed) is
 *   rejected: clear `current` of a job that lost its GPUs (advance_round_state() in round_state.hpp
 *   does it for a scheduler that keeps its state there).
 * - Rigid jobs: `min_gpus == max_gpus` is their count; JobDecision::gpus is the count and
 *   JobDecision::config the footprint configuration (valid_configs.hpp); the capacity rows charge
 *   the count, not the footprint (rigid_row_usage in configuration_set.hpp).
 * - A non-preemptible running job keeps its configuration (even if its count rules changed),
 *   provided its goodput there is > 0; if running non-preemptible jobs alone exceed the
 *   capacity (a reservation grew), they are kept in input order while they fit and the others
 *   are listed in `unmet`.
 * - A non-preemptible waiting job must get a configuration; if all of them together cannot,
 *   the round is solved again without that requirement and those left without GPUs are listed in
 *   `unmet`. A non-empty `unmet` makes the status `infeasible` (the allocation is still valid).
 * - Backend failure, no solution within the time limit, or an answer that fails the checks give
 *   a greedy allocation that is always valid (`fallback`, status `error` or `feasible`).
 * - `objective` is recomputed from the returned allocation, never copied from the backend.
 * - Ties (allocations of equal objective) are broken the same way for every backend: the status
 *   quo wins (a running job is not moved or suspended in favour of a job of exactly equal value),
 *   and interchangeable jobs get their configurations in input order (docs/reliability.md).
 * - A job whose own input is invalid is rejected alone (RoundResult::rejected; docs/decision.md),
 *   unless `options.strict`. A rejected running job is preempted.
 * - Every job without GPUs has a JobDecision::reason (PendingReason) and `detail`.
 *
 * @throws InvalidArgument on bad input of the round (the cluster, the options, duplicate job ids,
 *         and, with `options.strict`, any job: names the job, type or field); BackendUnavailable for an
 *         unknown `options.backend`. Solver trouble is never thrown: it is reported in
 *         RoundResult::status with a valid allocation.
 */
[[nodiscard]] RoundResult run_round(const ClusterSpec& cluster, std::span<const JobSpec> jobs,
                                    const RoundOptions& options = {});

/// Same, with a caller-owned backend instance (dependency injection; lets a backend keep
/// warm-start state across rounds). `options.backend` is ignored.
[[nodiscard]] RoundResult run_round(const ClusterSpec& cluster, std::span<const JobSpec> jobs,
                                    const RoundOptions& options, MilpSolver& solver);

}  // namespace sia
