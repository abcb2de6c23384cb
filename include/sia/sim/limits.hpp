#pragma once
/// @file sim/limits.hpp
/// @brief The documented ranges of the simulator's run parameters, and the checks that refuse a run
/// outside them before it starts, with an estimate of what it would need (issue 19: hostile parameters
/// hung the simulator or ended in bad_alloc).
///
/// | parameter | range | why |
/// |---|---|---|
/// | round length (`--interval`, `interval_s`) | [0.001, 86,400] s, finite | below: rounds without end; above: a day per round is no schedule |
/// | rounds until the last submission | at most 2,000,000 | about an hour of rounds at 2 ms; the run would never end |
/// | submission time of a job | [0, horizon] (90 days by default) | a job after the horizon could never run: an error, not dropped |
/// | synthetic rate (`--rate`) | (0, 1,000,000] jobs/h | |
/// | synthetic arrivals (`--hours`) | (0, horizon] | |
/// | synthetic jobs (`--jobs`, or rate × hours) | at most 2,000,000 | about 4 kB each while simulated |
/// | seeds (`--seed`, `--mix-seed`, `--pollux-seed`) | [0, 2^63 - 1] | a negative seed is a mistake, not a huge one |

#include <sia/sim/workload.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sia::sim {

inline constexpr double kMinIntervalS = 1e-3;             ///< shortest round (s)
inline constexpr double kMaxIntervalS = 86400.0;          ///< longest round (s)
inline constexpr double kMaxRounds = 2e6;                 ///< most rounds a run may need until its last submission
inline constexpr double kDefaultHorizonS = 90.0 * 86400;  ///< SimOptions::horizon_s by default
inline constexpr double kMaxRatePerHour = 1e6;            ///< synthetic arrivals per hour
inline constexpr long long kMaxJobs = 2'000'000;          ///< jobs of one workload
inline constexpr double kBytesPerJob = 4096;              ///< an upper bound of a job's memory while simulated

/// @brief The help text of every policy's `interval_s` option, with the range above: the policies read it with
/// PolicyOptions::number(..., kMinIntervalS, kMaxIntervalS), so the range they declare is the one simulate() checks.
[[nodiscard]] std::string interval_option_help();

/// @brief Throws InvalidArgument("<what>: ...") unless `interval_s` is finite and in [kMinIntervalS, kMaxIntervalS].
void check_interval(double interval_s, std::string_view what = "--interval");

/// @brief Checks a synthetic workload's parameters (`--rate`, `--hours`, `--jobs`) before it is generated:
/// ranges above, and the jobs they would make (rate × hours, or `jobs`) at most kMaxJobs, with an estimate of the
/// memory it would need. With `jobs`, arrivals go on until that many jobs: they must end within the horizon.
void check_synthetic(double rate_per_hour, std::optional<double> hours, std::optional<long long> jobs,
                     double horizon_s = kDefaultHorizonS);

/// @brief What a run of `workload` with rounds of `interval_s` needs at least: the rounds until its last
/// submission, its jobs, and their memory.
struct RunEstimate {
  double rounds_until_last_submission = 0.0;
  double jobs = 0.0;
  double bytes = 0.0;
};
[[nodiscard]] RunEstimate estimate_run(const Workload& workload, double interval_s);

/// @brief Refuses a run before it starts: a job submitted after `horizon_s` (workload source:line), more than
/// kMaxRounds rounds until the last submission, more than kMaxJobs jobs. `what` names the interval's option.
/// With `truncate` (a horizon that cuts the workload short on purpose) later jobs are allowed and left out.
void check_run(const Workload& workload, double interval_s, double horizon_s = kDefaultHorizonS,
               std::string_view what = "--interval", bool truncate = false);

/// @brief A seed given on the command line: [0, 2^63 - 1]. @throws InvalidArgument naming `what`.
[[nodiscard]] std::uint64_t checked_seed(long long value, std::string_view what);

}  // namespace sia::sim
