#pragma once
// Private to the round: checks of the round's input that only the round can make (the policy and
// every job; the cluster is checked by make_configuration_set), with messages naming the job.
#include <sia/job_spec.hpp>
#include <sia/round.hpp>

#include <cstddef>
#include <string>

namespace sia::detail {

/// "job 'J1'" (or "job #3" for an empty id); a pathological id is shortened.
[[nodiscard]] std::string job_label(const JobSpec& j, std::size_t i);

/// @throws InvalidArgument naming the policy field.
void validate_options(const RoundOptions& o);

/// Checks the job's own fields (`cluster_types`: number of GPU types, for `current`).
/// @throws InvalidArgument naming the job and the field.
void validate_job(const JobSpec& j, std::size_t i, int cluster_types);

}  // namespace sia::detail
