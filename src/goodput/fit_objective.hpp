#pragma once
// Private to the goodput fit (and its white-box test): the reference objective of fit_perf_params,
// arranged for the many evaluations of one fit.
#include <sia/goodput/fit.hpp>

#include <span>
#include <vector>

namespace sia::detail {

/**
 * The objective of fit_objective() over one fixed set of observations, for NLopt's evaluations
 * of one fit: the same floating-point operations on the same numbers in the same order, so every
 * value and gradient has the same bits as fit_objective(p, obs, grad) (tests/unit/test_goodput_fit.cpp
 * checks it), with the work that does not change between evaluations done once:
 * - the logs of the observed times, and the log of the fixed network time of 1-GPU observations;
 * - log(alpha_c + beta_c * b) once per distinct local batch b, and the network time and its log once
 *   per distinct (network kind, replicas): a fit's observations repeat both (one placement with
 *   several batch sizes, one batch size on several placements);
 * - exp(0) = 1 exactly is not called: of the two softmax terms one is always exp(0).
 * Evaluations are not thread-safe (scratch arrays); one object per fit.
 */
class FitObjective {
 public:
  explicit FitObjective(std::span<const PerfObservation> obs);
  /// fit_objective(p, obs, grad), bit for bit (grad: 7 entries or null).
  double operator()(const PerfParams& p, double* grad) const;
  /// The number of distinct local batch sizes among the observations.
  [[nodiscard]] std::size_t distinct_batches() const noexcept { return bszs_.size(); }

 private:
  struct Row {
    double local_bsz = 0.0;
    double extra = 0.0;        // max(replicas - 2, 1e-8)
    double log_compute = 0.0;  // log(step - sync)
    double log_step = 0.0;     // log(step)
    double fixed_n = 0.0;      // net 0: the network time 1e-8 + 1e-8 * extra, and its log
    double fixed_ln = 0.0;
    int net = 0;   // 0: none, 1: inter-node, 2: intra-node
    int bsz = 0;   // index of local_bsz in bszs_
    int link = 0;  // net 1 and 2: index in links_
  };
  struct Link {
    int net = 0;
    double extra = 0.0;
  };
  std::vector<Row> rows_;
  std::vector<double> bszs_;
  std::vector<Link> links_;
  // Per evaluation: a and log(a) per distinct batch, n and log(n) per link.
  mutable std::vector<double> a_, la_, n_, ln_;
};

}  // namespace sia::detail
