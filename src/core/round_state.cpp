// A job's state between rounds and the one function that advances it (include/sia/round_state.hpp,
// docs/round-state.md). sia_allocate --next-request goes through advance_round_state() too.
#include <sia/error.hpp>
#include <sia/lost_allocations.hpp>
#include <sia/round_state.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace sia {
namespace {

// GPUs per pipeline of `job` on type `t` (1 for jobs that are not hybrid), as valid_configs.hpp counts them.
int pipeline_on(const JobSpec& job, int t) noexcept {
  if (job.kind() != JobKind::hybrid) return 1;
  const auto& sizes = job.pipeline_sizes();
  if (sizes.empty()) return std::max(1, job.pipeline_size());
  return t >= 0 && static_cast<std::size_t>(t) < sizes.size() ? std::max(1, sizes[static_cast<std::size_t>(t)]) : 1;
}

[[noreturn]] void mismatch(std::size_t i, const std::string& what, const std::string& a, const std::string& b) {
  throw InvalidArgument("round state [" + std::to_string(i) + "]: " + what + " '" + a + "' but '" + b + "'");
}

}  // namespace

JobRoundState round_state_of(const JobSpec& job) {
  JobRoundState s;
  s.id = job.id();
  s.current = job.current();
  s.age_s = job.age_s();
  s.restarts = job.restarts();
  s.max_gpus_ever = std::max(0, job.max_gpus_ever().value_or(0));
  if (s.current) s.max_gpus_ever = std::max(s.max_gpus_ever, s.current->gpus);
  // A job that restarted has run, even when the request did not say with what: at least its minimum.
  if (s.restarts > 0) s.max_gpus_ever = std::max(s.max_gpus_ever, std::max(1, job.min_gpus()));
  if (job.kind() == JobKind::hybrid) {
    s.max_pipelines_ever = std::max(0, job.max_pipelines_ever().value_or(0));
    if (s.current)
      s.max_pipelines_ever = std::max(s.max_pipelines_ever, s.current->gpus / pipeline_on(job, s.current->type));
    if (s.has_run()) s.max_pipelines_ever = std::max(s.max_pipelines_ever, 1);
  }
  return s;
}

void apply_round_state(const JobRoundState& state, JobSpec& job) {
  if (state.id != job.id()) mismatch(0, "state of job", state.id, "applied to job " + job.id());
  job.current(state.current).age_s(state.age_s).restarts(state.restarts).max_gpus_ever(state.max_gpus_ever);
  if (job.kind() == JobKind::hybrid) job.max_pipelines_ever(state.max_pipelines_ever);
}

void advance_job_state(JobRoundState& state, const JobDecision& decision, double elapsed_s, int gpus_per_pipeline) {
  if (state.id != decision.job) mismatch(0, "state of job", state.id, "decision for job " + decision.job);
  if (!std::isfinite(elapsed_s) || elapsed_s < 0)
    throw InvalidArgument("round state of job '" + state.id + "': elapsed seconds must be finite and >= 0, got " +
                          std::to_string(elapsed_s));
  state.age_s += elapsed_s;
  if (!decision.config || decision.gpus <= 0) {
    state.current.reset();  // stopped or still waiting: no restart now; the resume counts
    return;
  }
  const ConfigurationSpec& c = *decision.config;
  if (decision.changed && state.has_run()) ++state.restarts;
  CurrentAllocation cur;
  cur.type = c.type;
  cur.gpus = decision.gpus;
  cur.nodes = c.nodes;
  cur.placement = decision.placement;
  state.current = std::move(cur);
  state.max_gpus_ever = std::max(state.max_gpus_ever, decision.gpus);
  state.max_pipelines_ever = std::max(state.max_pipelines_ever, decision.gpus / std::max(1, gpus_per_pipeline));
}

RoundStateChanges advance_round_state(std::span<JobRoundState> states, std::span<const JobSpec> jobs,
                                      const RoundResult& result, double elapsed_s, const ClusterSpec& next_cluster) {
  if (states.size() != jobs.size() || states.size() != result.decisions.size())
    throw InvalidArgument("round state: " + std::to_string(states.size()) + " states, " + std::to_string(jobs.size()) +
                          " jobs and " + std::to_string(result.decisions.size()) +
                          " decisions (one of each per job, in the same order)");
  for (std::size_t i = 0; i < states.size(); ++i) {
    if (states[i].id != jobs[i].id()) mismatch(i, "state of job", states[i].id, "job " + jobs[i].id());
    if (states[i].id != result.decisions[i].job)
      mismatch(i, "state of job", states[i].id, "decision for job " + result.decisions[i].job);
  }
  RoundStateChanges out;
  for (std::size_t i = 0; i < states.size(); ++i) {
    JobRoundState& s = states[i];
    const JobDecision& d = result.decisions[i];
    const bool held = s.current.has_value();
    const bool had_run = s.has_run();
    const int before = s.restarts;
    const int p = d.config ? pipeline_on(jobs[i], d.config->type) : 1;
    advance_job_state(s, d, elapsed_s, p);
    if (s.current && !had_run) out.started.push_back(s.id);
    if (s.restarts > before) out.restarted.push_back(s.id);
    if (held && !s.current) out.stopped.push_back(s.id);
  }
  for (JobRoundState& s : states)
    if (forget_lost_allocation(s, next_cluster)) out.lost.push_back(s.id);
  return out;
}

}  // namespace sia
