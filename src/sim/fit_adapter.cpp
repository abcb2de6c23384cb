// The simulator's default PerfParams fitter: the goodput library's Pollux fit (reference §1.2).
#include <sia/goodput/fit.hpp>
#include <sia/sim/job.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <mutex>
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

namespace {

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

/// The memo's key is the observations themselves, compared bit for bit (equal keys mean equal inputs, as a fit
/// sees them: -0 and +0 or two NaN payloads are different keys). A lookup hashes the caller's vector in place: no
/// key is built per call (most calls are hits: 15,000 of 18,000 on the 936-job trace).
struct ObservationsHash {
  std::size_t operator()(const std::vector<StepObservation>& obs) const noexcept {
    std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ obs.size();
    const auto mix = [&h](std::uint64_t v) {
      h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
      h *= 0xff51afd7ed558ccdULL;
    };
    for (const auto& o : obs) {
      mix((static_cast<std::uint64_t>(static_cast<std::uint32_t>(o.nodes)) << 32) |
          static_cast<std::uint32_t>(o.replicas));
      mix(static_cast<std::uint32_t>(o.local_bsz));
      mix(bits(o.step_time));
      mix(bits(o.sync_time));
    }
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

struct ObservationsEqual {
  bool operator()(const std::vector<StepObservation>& a, const std::vector<StepObservation>& b) const noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const StepObservation& x, const StepObservation& y) {
      return x.nodes == y.nodes && x.replicas == y.replicas && x.local_bsz == y.local_bsz &&
             bits(x.step_time) == bits(y.step_time) && bits(x.sync_time) == bits(y.sync_time);
    });
  }
};

}  // namespace

PerfFitter memoised_perf_fitter(PerfFitter inner, std::size_t capacity) {
  struct Memo {
    PerfFitter inner;
    std::size_t capacity;
    std::mutex mutex;  // guards `fits`; a fit runs unlocked (two threads may fit one key: the same bits)
    std::unordered_map<std::vector<StepObservation>, PerfParams, ObservationsHash, ObservationsEqual> fits;
  };
  auto memo = std::make_shared<Memo>();
  memo->inner = std::move(inner);
  memo->capacity = std::max<std::size_t>(capacity, 1);
  return [memo](const std::vector<StepObservation>& obs) {
    {
      const std::lock_guard<std::mutex> lock(memo->mutex);
      if (const auto it = memo->fits.find(obs); it != memo->fits.end()) return it->second;
    }
    const PerfParams p = memo->inner(obs);
    const std::lock_guard<std::mutex> lock(memo->mutex);
    if (memo->fits.size() >= memo->capacity) memo->fits.clear();
    memo->fits.emplace(obs, p);
    return p;
  };
}

}  // namespace sia::sim
