// The simulator's default PerfParams fitter: the goodput library's Pollux fit (reference §1.2).
#include <sia/goodput/fit.hpp>
#include <sia/sim/job.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

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
    // The reference's optimiser settings (sia-reference-behaviour.md §1.2: scipy L-BFGS-B, tol=1e-5, its
    // default memory of 10 pairs): the fit stops where the reference's does instead of polishing the last
    // digits of a model fitted to a handful of points (1e-12 spent 30 % of a 936-job simulation in the fit;
    // Philly x 8 gives the same average JCT either way).
    opt.ftol_rel = 1e-5;
    opt.ftol_abs = 1e-5;
    return fit_perf_params(v, opt);
  };
}

PerfFitter memoised_perf_fitter(PerfFitter inner, std::size_t capacity) {
  struct Memo {
    PerfFitter inner;
    std::size_t capacity;
    std::mutex mutex;  // guards `fits`; a fit runs unlocked (two threads may fit one key: the same bits)
    std::unordered_map<std::string, PerfParams> fits;
  };
  auto memo = std::make_shared<Memo>();
  memo->inner = std::move(inner);
  memo->capacity = std::max<std::size_t>(capacity, 1);
  return [memo](const std::vector<StepObservation>& obs) {
    std::string key;
    key.reserve(obs.size() * (3 * sizeof(int) + 2 * sizeof(double)));
    for (const auto& o : obs) {  // exact bits: equal keys mean equal inputs
      const int ints[3] = {o.nodes, o.replicas, o.local_bsz};
      const double reals[2] = {o.step_time, o.sync_time};
      key.append(reinterpret_cast<const char*>(ints), sizeof ints);
      key.append(reinterpret_cast<const char*>(reals), sizeof reals);
    }
    {
      const std::lock_guard<std::mutex> lock(memo->mutex);
      if (const auto it = memo->fits.find(key); it != memo->fits.end()) return it->second;
    }
    const PerfParams p = memo->inner(obs);
    const std::lock_guard<std::mutex> lock(memo->mutex);
    if (memo->fits.size() >= memo->capacity) memo->fits.clear();
    memo->fits.emplace(key, p);
    return p;
  };
}

}  // namespace sia::sim
