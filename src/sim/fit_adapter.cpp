// The simulator's default PerfParams fitter: the goodput library's Pollux fit (reference §1.2).
#include <sia/goodput/fit.hpp>
#include <sia/sim/job.hpp>

#include <algorithm>

namespace sia::sim {

PerfFitter default_perf_fitter() {
  return [](const std::vector<StepObservation>& obs) {
    std::vector<PerfObservation> v;
    v.reserve(obs.size());
    for (const auto& o : obs) {
      PerfObservation p;
      p.nodes = std::max(1, o.nodes);
      p.replicas = std::max(p.nodes, o.replicas);
      p.local_bsz = std::max(1, o.local_bsz);
      p.step_time = o.step_time;
      // The fitter needs sync < step: interpolated ground truth can make them equal.
      p.sync_time = std::clamp(o.sync_time, 0.0, o.step_time * (1.0 - 1e-9));
      v.push_back(p);
    }
    FitOptions opt;
    opt.max_evaluations = 1000;
    return fit_perf_params(v, opt);
  };
}

}  // namespace sia::sim
