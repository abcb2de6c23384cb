// Ranges of the simulator's run parameters and the checks before a run (sim/limits.hpp).
#include <sia/error.hpp>
#include <sia/sim/limits.hpp>

#include <cmath>
#include <cstdio>

namespace sia::sim {
namespace {

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string memory(double bytes) {
  if (bytes >= 1e12) return num(bytes / 1e12) + " TB";
  if (bytes >= 1e9) return num(bytes / 1e9) + " GB";
  return num(bytes / 1e6) + " MB";
}

}  // namespace

std::string interval_option_help() {
  return "round length (s), in [" + num(kMinIntervalS) + ", " + num(kMaxIntervalS) + "]";
}

void check_interval(double s, std::string_view what) {
  if (!std::isfinite(s) || s < kMinIntervalS || s > kMaxIntervalS)
    throw InvalidArgument(std::string(what) + ": " + num(s) + " s is outside the range [" + num(kMinIntervalS) + ", " +
                          num(kMaxIntervalS) + "] s of a round's length");
}

void check_synthetic(double rate, std::optional<double> hours, std::optional<long long> jobs, double horizon_s) {
  const double horizon_h = horizon_s / 3600.0;
  // What rate x hours would make, for the messages: the memory such a run would need.
  const auto estimate = [&](double r, double h) {
    const double n = r * h;
    return std::isfinite(n) && n > 0 ? " (" + num(h) + " h at " + num(r) + " jobs/h: about " + num(n) +
                                           " jobs, about " + memory(n * kBytesPerJob) + " of memory)"
                                     : std::string();
  };
  if (!std::isfinite(rate) || !(rate > 0) || rate > kMaxRatePerHour)
    throw InvalidArgument("--rate: " + num(rate) + " jobs/h is outside the range (0, " + num(kMaxRatePerHour) + "]" +
                          (hours ? estimate(rate, *hours) : std::string()));
  if (hours && (!std::isfinite(*hours) || !(*hours > 0) || *hours > horizon_h))
    throw InvalidArgument("--hours: " + num(*hours) + " h is outside the range (0, " + num(horizon_h) +
                          "]: arrivals after the simulation's horizon of " + num(horizon_h / 24) +
                          " days could never run" + estimate(rate, *hours));
  if (jobs) {
    if (*jobs < 1 || *jobs > kMaxJobs)
      throw InvalidArgument("--jobs: " + std::to_string(*jobs) + " is outside the range [1, " +
                            std::to_string(kMaxJobs) + "]");
    const double need_h = static_cast<double>(*jobs) / rate;
    if (need_h > horizon_h)
      throw InvalidArgument("--jobs: " + std::to_string(*jobs) + " jobs at " + num(rate) +
                            " jobs/h arrive over about " + num(need_h) + " h, beyond the simulation's horizon of " +
                            num(horizon_h) + " h; raise --rate");
    return;
  }
  const double expected = rate * (hours ? *hours : 0.0);
  if (expected > static_cast<double>(kMaxJobs))
    throw InvalidArgument("--rate/--hours: " + num(rate) + " jobs/h for " + num(hours ? *hours : 0.0) + " h is about " +
                          num(expected) + " jobs, needing about " + memory(expected * kBytesPerJob) +
                          " of memory; at most " + std::to_string(kMaxJobs) +
                          " jobs (use --jobs, a lower --rate or fewer --hours)");
}

RunEstimate estimate_run(const Workload& w, double interval_s) {
  RunEstimate e;
  e.jobs = static_cast<double>(w.jobs.size());
  e.bytes = e.jobs * kBytesPerJob;
  const double last = w.jobs.empty() ? 0.0 : w.jobs.back().time;
  e.rounds_until_last_submission = interval_s > 0 ? std::ceil(last / interval_s) : HUGE_VAL;
  return e;
}

void check_run(const Workload& w, double interval_s, double horizon_s, std::string_view what, bool truncate) {
  check_interval(interval_s, what);
  for (const auto& j : w.jobs)
    if (!std::isfinite(j.time) || j.time < 0 || (!truncate && j.time > horizon_s))
      throw InvalidArgument(w.source + ":" + std::to_string(j.line) + ": job '" + j.name + "': submitted at " +
                            num(j.time) + " s, outside the simulation's horizon [0, " + num(horizon_s) + "] s (" +
                            num(horizon_s / 86400) + " days): it could never run");
  if (static_cast<double>(w.jobs.size()) > static_cast<double>(kMaxJobs))
    throw InvalidArgument(w.source + ": " + std::to_string(w.jobs.size()) + " jobs, more than " +
                          std::to_string(kMaxJobs) + " (about " + memory(kBytesPerJob * w.jobs.size()) + ")");
  const RunEstimate e = estimate_run(w, interval_s);
  if (e.rounds_until_last_submission > kMaxRounds && !(truncate && horizon_s / interval_s <= kMaxRounds))
    throw InvalidArgument(std::string(what) + ": " + num(interval_s) + " s rounds until the last submission of '" +
                          w.name + "' at " + num(w.jobs.back().time / 3600) + " h are " +
                          num(e.rounds_until_last_submission) + " rounds, more than " + num(kMaxRounds) +
                          " (hours of rounds at the least); use rounds of at least " +
                          num(std::ceil(w.jobs.back().time / kMaxRounds * 1000) / 1000) + " s");
}

std::uint64_t checked_seed(long long value, std::string_view what) {
  if (value < 0)
    throw InvalidArgument(std::string(what) + ": " + std::to_string(value) +
                          " is outside the range [0, 9223372036854775807]");
  return static_cast<std::uint64_t>(value);
}

}  // namespace sia::sim
