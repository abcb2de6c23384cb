#pragma once
/// @file io/model_json.hpp
/// @brief Parses the `model` form of a job in sia_allocate's JSON request into a JobModel.
///
/// Schema (unknown fields are errors; every error names `<path>.<field>`):
/// @code
/// "model": {
///   "init_batch_size": 128,                      // required, > 0: batch the statistics refer to
///   "max_batch_size": 4096,                      // default init_batch_size; the fixed batch for
///                                                //   strong-scaling / rigid jobs
///   "grad": {"sqr": 0.5, "var": 20.0},           // optional; absent -> efficiency 1
///   "perf": {"<type>": {"alpha_c": .., "beta_c": .., "alpha_n": .., "beta_n": ..,
///                       "alpha_r": .., "beta_r": .., "gamma": ..}},   // fitted models per type
///   "seed": {"<type>": {...same fields...}},     // 1-GPU (seed profile) models per type
///   "local_batch": {"<type>": [min, max]},       // per-type local batch range (memory limit)
///   "xput1": {"<type>": 1458.5},                 // reference variant's 1-GPU throughputs
///   "stages": {"<type>": 2},                     // hybrid: GPUs per pipeline (default pipeline_size)
///   "microbatches": 48,                          // hybrid: micro-batches per step
///   "projection": "paper" | "reference" | "none" | "equal", // unseen types; default "paper" (Eq. 1)
///   "first_placement": "seed" | "tie" | "profiled", // a job with no "perf" yet; default "seed"
///   "known_type": "<type>"                       // type projections borrow from (default: first in "perf")
/// }
/// @endcode
/// In a perf/seed object alpha_c and beta_c are required; the network terms default to 1e-8
/// (the fit's lower bound) and gamma to 1. Type names must be GPU types of the cluster.

#include <sia/cluster.hpp>
#include <sia/concepts/job.hpp>
#include <sia/goodput/job_model.hpp>
#include <sia/job_spec.hpp>

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace sia::detail {

/// @brief Parses `model` (found at `path`, e.g. "jobs[3].model") for a job of `kind` whose pipelines
/// have `pipeline_size` GPUs. Throws InvalidArgument naming `path.<field>`.
[[nodiscard]] JobModel parse_model_json(const nlohmann::json& model, const ClusterSpec& cluster,
                                        const std::string& path, JobKind kind = JobKind::adaptive,
                                        int pipeline_size = 1);

/// @brief Parses `model` with the job's kind and pipeline size and installs it as the job's
/// goodput model (goodput and batch-size query). Set kind and pipeline_size on `job` first.
void apply_model_json(JobSpec& job, const nlohmann::json& model, const ClusterSpec& cluster, const std::string& path);

}  // namespace sia::detail
