/// @file goodput/pipeline.cpp
/// @brief Fitting of the GPipe pipeline model.

#include <sia/error.hpp>
#include <sia/goodput/fit.hpp>
#include <sia/goodput/pipeline.hpp>

#include <string>
#include <vector>

namespace sia {

PipelineParams fit_pipeline_params(std::span<const PipelineObservation> obs, int stages, int microbatches) {
  if (stages < 1) throw InvalidArgument("fit_pipeline_params: stages must be >= 1");
  if (microbatches < 1) throw InvalidArgument("fit_pipeline_params: microbatches must be >= 1");
  if (obs.empty()) throw InvalidArgument("fit_pipeline_params: no observations to fit");
  std::vector<PerfObservation> dp;
  dp.reserve(obs.size());
  for (std::size_t i = 0; i < obs.size(); ++i) {
    const auto& o = obs[i];
    const std::string w = "pipeline observations[" + std::to_string(i) + "]";
    if (!(o.fwd_time > 0.0) || !std::isfinite(o.fwd_time))
      throw InvalidArgument(w + ".fwd_time: must be a finite number > 0");
    if (!(o.sync_time >= 0.0) || !std::isfinite(o.sync_time))
      throw InvalidArgument(w + ".sync_time: must be a finite number >= 0");
    // The DP fit's network term is evaluated on GPUs (see pipeline.hpp); compute = fwd, step = fwd + sync.
    dp.push_back(PerfObservation{o.nodes, o.gpus, o.micro_bsz, o.fwd_time + o.sync_time, o.sync_time});
  }
  FitOptions opt;
  opt.fixed_gamma = 1.0;  // the pipeline adds synchronisation after the drain: no overlap
  PipelineParams p;
  p.perf = fit_perf_params(dp, opt);
  p.stages = stages;
  p.microbatches = microbatches;
  return p;
}

}  // namespace sia
