#pragma once
/// @file goodput/pipeline.hpp
/// @brief GPipe model of hybrid-parallel jobs: a P-GPU pipeline replicated by data parallelism
/// (paper §3.4 "Support for other parallelization techniques"; the reference code's PMP model).
///
/// With S stages (= P GPUs per pipeline), M micro-batches of size m per pipeline and step,
/// D data-parallel pipelines on N nodes (G = D * S GPUs):
/// @code
/// fwd(m)  = alpha_c + beta_c * m                              (one micro-batch through one stage)
/// T_iter  = 3 * ((S - 1) + M) * fwd(m) + T_net(N, G)           (GPipe fill/drain + fwd/bwd = 3 fwd)
/// batch   = D * m * M;   throughput = batch / T_iter
/// @endcode
/// T_net is the data-parallel model's network term (throughput_model.hpp) evaluated with the GPU
/// count G. Deviation from the reference, which passes the number of pipelines D: the artifact's
/// gpt_pmp profiles show synchronisation time growing linearly with the GPUs of the placement
/// even for a single pipeline (e.g. rtx `8` -> 0.3275 s, `88` -> 0.435 s), which T_net(N, D=1) = 0
/// cannot represent; with G the model reproduces those profiles exactly.

#include <sia/configuration.hpp>
#include <sia/goodput/efficiency.hpp>
#include <sia/goodput/fit.hpp>
#include <sia/goodput/goodput_function.hpp>
#include <sia/goodput/throughput_model.hpp>

#include <optional>
#include <span>

namespace sia {

/// @brief Pipeline model parameters on one GPU type.
struct PipelineParams {
  PerfParams perf;        ///< alpha_c/beta_c: per-stage forward time of a micro-batch; network terms; gamma unused
  int stages = 1;         ///< GPUs per pipeline (P)
  int microbatches = 48;  ///< micro-batches per pipeline and step (M; the reference uses 48)
};

/// @brief Step time of `pipelines` pipelines on `nodes` nodes with micro-batch `micro_bsz`.
[[nodiscard]] inline double pipeline_step_time(const PipelineParams& p, int nodes, int pipelines,
                                               double micro_bsz) noexcept {
  const double fwd = accum_time(p.perf, micro_bsz);
  const double net = pipelines * p.stages > 1 ? network_time(p.perf, nodes, pipelines * p.stages) : 0.0;
  return 3.0 * ((p.stages - 1) + p.microbatches) * fwd + net;
}

/// @brief Samples per second of `pipelines` pipelines.
[[nodiscard]] inline double pipeline_throughput(const PipelineParams& p, int nodes, int pipelines,
                                                double micro_bsz) noexcept {
  const double t = pipeline_step_time(p, nodes, pipelines, micro_bsz);
  if (!(t > 0.0) || !std::isfinite(t)) return 0.0;
  return static_cast<double>(pipelines) * micro_bsz * p.microbatches / t;
}

/// @brief One measured pipeline placement: per-stage forward time of a micro-batch and the
/// synchronisation time of the step.
struct PipelineObservation {
  int nodes = 1;
  int gpus = 1;       ///< GPUs of the placement (= pipelines * stages)
  int pipelines = 1;  ///< data-parallel pipelines
  double micro_bsz = 1.0;
  double fwd_time = 0.0;   ///< > 0
  double sync_time = 0.0;  ///< >= 0
};

/// @brief The full step time implied by an observation under the model's stages and micro-batches.
[[nodiscard]] inline double pipeline_observed_step_time(const PipelineParams& p,
                                                        const PipelineObservation& o) noexcept {
  return 3.0 * ((p.stages - 1) + p.microbatches) * o.fwd_time + o.sync_time;
}

/// @brief Fits the pipeline model (reference objective and optimiser of fit.hpp with gamma pinned to 1,
/// on compute = fwd and step = fwd + sync). Throws InvalidArgument for empty or invalid input.
[[nodiscard]] PipelineParams fit_pipeline_params(std::span<const PipelineObservation> obs, int stages,
                                                 int microbatches = 48);

/**
 * @brief Goodput of a hybrid job on one GPU type. The micro-batch size is chosen in
 * [lim.min_local, lim.max_local] (integer) to maximise goodput subject to the global batch
 * `pipelines * m * M <= lim.max_batch_size` (with `tune == false`, m is the smallest micro-batch
 * reaching max_batch_size... i.e. the fixed batch must be met exactly or the configuration is
 * unusable). `gpus` must be a multiple of `stages`; otherwise goodput 0.
 * BatchChoice: local_batch = m, accumulation_steps = M - 1.
 */
struct PipelineGoodputFunction {
  PipelineParams params;
  std::optional<GradParams> grad;
  double init_batch_size = 1.0;

  [[nodiscard]] GoodputChoice optimize(int nodes, int gpus, const BatchLimits& lim) const noexcept {
    GoodputChoice best;
    if (nodes < 1 || gpus < 1 || params.stages < 1 || params.microbatches < 1 || gpus % params.stages != 0) return best;
    const int d = gpus / params.stages;
    const int lo = lim.min_local > 0 ? lim.min_local : 1;
    const int hi = lim.max_local > 0 ? lim.max_local : lo;
    const double max_batch = lim.max_batch_size > 0.0 ? lim.max_batch_size : init_batch_size;
    for (int m = lo; m <= hi && m - lo < 4096; ++m) {
      const double global = static_cast<double>(d) * m * params.microbatches;
      if (global > max_batch * (1.0 + 1e-12)) break;
      if (!lim.tune && std::abs(global - max_batch) > 0.5) continue;
      const double xput = pipeline_throughput(params, nodes, d, m);
      const double eff = efficiency_fn(grad, init_batch_size)(global);
      const double g = xput * eff;
      if (std::isfinite(g) && g > best.goodput) {
        best.goodput = g;
        best.throughput = xput;
        best.efficiency = eff;
        best.batch = BatchChoice{static_cast<long long>(global), m, params.microbatches - 1};
      }
    }
    return best;
  }
};

}  // namespace sia
