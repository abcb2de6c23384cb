#pragma once
/// @file round_state.hpp
/// @brief What a scheduler carries for each job from one round to the next, and the one function
/// that turns a round's decision and the time that passed into the next round's state.
///
/// The rules (docs/round-state.md): `age_s` is the time since submission and never restarts;
/// `restarts` grows when a job that has run before gets GPUs with `changed` (resumed, resized,
/// moved to another type, or moved to other GPUs); stopping costs nothing now (the resume counts);
/// the largest count a job has run with feeds the 2x scale-up rule; an allocation whose
/// configuration failed nodes took away is forgotten (the job restarts like a waiting one). The
/// same function serves C++ schedulers and `sia_allocate --next-request`, so they cannot disagree.

#include <sia/allocation.hpp>
#include <sia/cluster.hpp>
#include <sia/job_spec.hpp>
#include <sia/round.hpp>

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sia {

/// @brief The state of one job between rounds: everything the round needs that the job's own
/// description (bounds, kind, goodput model) does not say.
struct JobRoundState {
  std::string id;  ///< the job's id (matched against the round's decisions)
  /// What the job holds now: GPU type, GPUs it uses (a rigid job: its count), nodes and placement.
  /// Empty = it holds nothing (it never ran, was stopped, or lost its GPUs to failed nodes).
  std::optional<CurrentAllocation> current;
  /// Seconds since the job was submitted. It grows by the elapsed time every round whatever the job
  /// did — a restart does not reset it: the restart factor (README.md, "What a round does", step 3) weighs the time
  /// lost to restarts, `restarts` × restart cost, against this whole age.
  double age_s = 0.0;
  /// How many times the job (re)started after its first start: each round in which it gets GPUs with
  /// `changed` after having run before. Its first start and its stops do not count.
  int restarts = 0;
  /// The largest GPU count the job has run with, on any type; 0 = never ran. The 2x rule: at most
  /// max(2 × this, minimum) GPUs next round; a job that never ran takes only its minimum.
  int max_gpus_ever = 0;
  /// Hybrid jobs: the largest number of pipelines it has run with (the 2x rule in pipelines).
  int max_pipelines_ever = 0;

  /// True once the job has held GPUs in some round.
  [[nodiscard]] bool has_run() const noexcept { return max_gpus_ever > 0; }
};

/// @brief What advance_round_state() changed, by job id in input order.
struct RoundStateChanges {
  std::vector<std::string> started;    ///< got GPUs for the first time (no restart counted)
  std::vector<std::string> restarted;  ///< `restarts` grew: resumed, resized, moved type or GPUs
  std::vector<std::string> stopped;    ///< held GPUs and got none (preempted or suspended)
  /// Their configuration no longer exists in the next round's cluster (its failed nodes): `current`
  /// was cleared and they wait like a job that never ran, restarting when they get GPUs again.
  std::vector<std::string> lost;
};

/**
 * @brief The state a request's job describes: its `current`, `age_s`, `restarts` and
 * `max_gpus_ever` (raised to its current count when smaller; 0 when absent and it holds nothing;
 * a job with `restarts` > 0 has run, so at least its minimum) and, for a hybrid job,
 * `max_pipelines_ever`.
 */
[[nodiscard]] JobRoundState round_state_of(const JobSpec& job);

/**
 * @brief Writes `state` into `job` before a round: `current`, `age_s`, `restarts`, and the 2x rule's
 * input (`max_gpus_ever`, and `max_pipelines_ever` for a hybrid job). The rule is on: a job that
 * never ran may take only its minimum; rigid jobs ignore it. A caller that wants the rule off clears
 * `max_gpus_ever` afterwards.
 * @throws InvalidArgument when the ids differ.
 */
void apply_round_state(const JobRoundState& state, JobSpec& job);

/**
 * @brief Forgets `state.current` when its configuration no longer exists in `cluster` because
 * nodes of its type failed (`ClusterSpec::down`) or the type is gone — the rule
 * forget_lost_allocations() applies to a request's jobs. A job whose configuration still exists keeps
 * it: the round moves it off failed nodes (`evicted`, `changed`).
 * @return true when it was forgotten.
 */
bool forget_lost_allocation(JobRoundState& state, const ClusterSpec& cluster);

/**
 * @brief Applies one job's decision and the time until the next round to its state: `age_s` +=
 * `elapsed_s`; with GPUs, `current` becomes the decision's configuration and placement, the largest
 * counts grow, and `restarts` grows when `changed` and the job has run before; without GPUs,
 * `current` is cleared.
 * @param gpus_per_pipeline  hybrid jobs: GPUs per pipeline on the decision's type (1 otherwise)
 * @throws InvalidArgument when the ids differ or `elapsed_s` is negative or not finite.
 */
void advance_job_state(JobRoundState& state, const JobDecision& decision, double elapsed_s, int gpus_per_pipeline = 1);

/**
 * @brief The one function between two rounds: applies `result` (the round run on `jobs`, built from
 * `states` with apply_round_state()) and `elapsed_s` to every state (advance_job_state()), then
 * forgets the allocations `next_cluster` — the cluster of the next round, with the nodes that failed
 * meanwhile in `down` — no longer has (forget_lost_allocation()).
 *
 * `states`, `jobs` and `result.decisions` are in the same order with the same ids.
 * @throws InvalidArgument naming the index when sizes or ids differ, or for a bad `elapsed_s`.
 */
RoundStateChanges advance_round_state(std::span<JobRoundState> states, std::span<const JobSpec> jobs,
                                      const RoundResult& result, double elapsed_s, const ClusterSpec& next_cluster);

}  // namespace sia
