#pragma once
// Private to the round: checks of the round's input that only the round can make (the policy and
// every job; the cluster is checked by make_configuration_set), with messages naming the job.
#include <sia/job_spec.hpp>
#include <sia/round.hpp>

#include <sia/cluster.hpp>
#include <sia/configuration_set.hpp>
#include <sia/error.hpp>

#include <cstddef>
#include <string>
#include <utility>

namespace sia::detail {

/// A job-level input error: its message is the all-or-nothing error ("job 'J1': min_gpus must
/// be >= 1 (got 0)"); the parts let a round that is not strict reject that job alone.
class JobError : public InvalidArgument {
 public:
  /// `message`: the whole error, e.g. job_label() + ": " + field + " " + reason.
  JobError(std::size_t index, std::string field, std::string reason, const std::string& message)
      : InvalidArgument(message), index_(index), field_(std::move(field)), reason_(std::move(reason)) {}
  [[nodiscard]] std::size_t index() const noexcept { return index_; }
  [[nodiscard]] const std::string& field() const noexcept { return field_; }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

 private:
  std::size_t index_;
  std::string field_;
  std::string reason_;
};

/// "job 'J1'" (or "job #3" for an empty id); a pathological id is shortened.
[[nodiscard]] std::string job_label(const JobSpec& j, std::size_t i);

/// @throws InvalidArgument naming the policy field.
void validate_options(const RoundOptions& o);

/// Throws JobError "<job label>: <field> <reason>".
[[noreturn]] void fail_job(const JobSpec& j, std::size_t i, std::string field, std::string reason);

/// Index in `set` of the configuration job `j` (input position `i`) currently holds
/// (lost_allocations.hpp: current_configuration).
/// @throws JobError (field `current`) when it is no configuration of the cluster, listing the counts of its type.
[[nodiscard]] int current_config_index(const ConfigurationSet& set, const ClusterSpec& cluster, const JobSpec& j,
                                       std::size_t i);

/// Checks the job's own fields (`cluster_types`: number of GPU types, for `current`).
/// @throws JobError naming the job and the field.
void validate_job(const JobSpec& j, std::size_t i, int cluster_types);

}  // namespace sia::detail
