// Checks of a round's policy and jobs (the cluster is checked where its configuration set is built).
#include "core/input_checks.hpp"

#include <sia/error.hpp>
#include <sia/lost_allocations.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <utility>

namespace sia::detail {

void fail_job(const JobSpec& j, std::size_t i, std::string field, std::string reason) {
  std::string message = job_label(j, i) + ": " + field + " " + reason;
  throw JobError(i, std::move(field), std::move(reason), message);
}

int current_config_index(const ConfigurationSet& set, const ClusterSpec& cluster, const JobSpec& j, std::size_t i) {
  if (const auto c = current_configuration(set, j)) return *c;
  const auto& cur = *j.current();
  std::ostringstream msg;
  msg << "(" << cur.gpus << " GPUs of type '" << cluster.types[static_cast<std::size_t>(cur.type)].name()
      << "') is not a configuration of the cluster; GPU counts of that type:";
  bool any = false;
  for (const ConfigurationSpec& c : set.configs)
    if (c.type == cur.type) {
      msg << ' ' << c.gpus;
      any = true;
    }
  if (!any) msg << " none (all its nodes are down)";
  msg << " (a job whose GPUs were lost holds nothing: clear its `current`, as sia::advance_round_state and "
         "sia::forget_lost_allocations do)";
  fail_job(j, i, "current", msg.str());
}

std::string job_label(const JobSpec& j, std::size_t i) {
  // Appended piece by piece: g++ 12 -O2 warns falsely (-Wrestrict) on `"job #" + std::to_string(i)`.
  std::string label = "job ";
  if (j.id().empty()) {
    label += '#';
    label += std::to_string(i);
  } else {
    // Ids are quoted in full unless pathological (a multi-megabyte id would swamp the message).
    constexpr std::size_t max_shown = 64;
    label += '\'';
    if (j.id().size() <= max_shown) {
      label += j.id();
      label += '\'';
    } else {
      label.append(j.id(), 0, max_shown / 2);
      label += "...' (";
      label += std::to_string(j.id().size());
      label += " bytes)";
    }
  }
  return label;
}

void validate_options(const RoundOptions& o) {
  if (!std::isfinite(o.p) || o.p == 0.0)
    throw InvalidArgument("RoundOptions.p: the fairness exponent must be finite and != 0 (got " + std::to_string(o.p) +
                          ")");
  if (!std::isfinite(o.lambda) || o.lambda <= 0.0)
    throw InvalidArgument("RoundOptions.lambda: the penalty must be finite and > 0 (got " + std::to_string(o.lambda) +
                          ")");
  if (!(o.relative_gap >= 0.0) || !std::isfinite(o.relative_gap))
    throw InvalidArgument("RoundOptions.relative_gap must be finite and >= 0 (got " + std::to_string(o.relative_gap) +
                          ")");
  if (o.time_limit && o.time_limit->count() < 0)
    throw InvalidArgument("RoundOptions.time_limit must be >= 0 (got " + std::to_string(o.time_limit->count()) + ")");
}

void validate_job(const JobSpec& j, std::size_t i, int cluster_types) {
  auto field = [&](const char* name, const std::string& what) { fail_job(j, i, name, what); };
  if (j.id().empty()) field("id", "is empty");
  if (j.min_gpus() < 1) field("min_gpus", "must be >= 1 (got " + std::to_string(j.min_gpus()) + ")");
  if (j.max_gpus() < j.min_gpus())
    field("min_gpus", "(" + std::to_string(j.min_gpus()) + ") > max_gpus (" + std::to_string(j.max_gpus()) + ")");
  if (j.kind() == JobKind::rigid && j.min_gpus() != j.max_gpus())
    field("min_gpus", "must equal max_gpus for a rigid job (its fixed count); got " + std::to_string(j.min_gpus()) +
                          " and " + std::to_string(j.max_gpus()));
  if (j.pipeline_size() < 1) field("pipeline_size", "must be >= 1 (got " + std::to_string(j.pipeline_size()) + ")");
  if (!j.pipeline_sizes().empty()) {
    if (j.kind() != JobKind::hybrid) field("pipeline_sizes", "are for hybrid jobs only");
    if (static_cast<int>(j.pipeline_sizes().size()) != cluster_types)
      field("pipeline_sizes", "has " + std::to_string(j.pipeline_sizes().size()) + " entries for " +
                                  std::to_string(cluster_types) + " GPU types");
    bool any = false;
    for (std::size_t t = 0; t < j.pipeline_sizes().size(); ++t) {
      const int p = j.pipeline_sizes()[t];
      if (p < 0 || p > (1 << 24))
        field("pipeline_sizes", "[" + std::to_string(t) + "] must be in [0, 16777216] (got " + std::to_string(p) + ")");
      any = any || p > 0;
    }
    if (!any) field("pipeline_sizes", "are all 0: the job can run on no GPU type");
  }
  if (j.max_pipelines_ever() && *j.max_pipelines_ever() < 0)
    field("max_pipelines_ever", "must be >= 0 (got " + std::to_string(*j.max_pipelines_ever()) + ")");
  if (!std::isfinite(j.age_s()) || j.age_s() < 0.0)
    field("age_s", "must be finite and >= 0 (got " + std::to_string(j.age_s()) + ")");
  if (j.restarts() < 0) field("restarts", "must be >= 0 (got " + std::to_string(j.restarts()) + ")");
  if (!std::isfinite(j.weight()) || !(j.weight() > 0.0))
    field("weight", "must be finite and > 0 (got " + std::to_string(j.weight()) + ")");
  if (!std::isfinite(j.restart_cost_s()) || j.restart_cost_s() < 0.0)
    field("restart_cost_s", "must be finite and >= 0 (got " + std::to_string(j.restart_cost_s()) + ")");
  if (j.max_gpus_ever() && *j.max_gpus_ever() < 0)
    field("max_gpus_ever", "must be >= 0 (got " + std::to_string(*j.max_gpus_ever()) + ")");
  if (j.current()) {
    const auto& c = *j.current();
    if (c.type < 0 || c.type >= cluster_types)
      field("current.gpu_type", "index " + std::to_string(c.type) + " is not a GPU type of the cluster (it has " +
                                    std::to_string(cluster_types) + ")");
    if (c.gpus < 1) field("current.gpus", "must be >= 1 (got " + std::to_string(c.gpus) + ")");
    if (c.nodes < 0) field("current.nodes", "must be >= 0 (got " + std::to_string(c.nodes) + ")");
  }
}

}  // namespace sia::detail
