/// @file goodput/fit.cpp
/// @brief PerfParams fitting with NLopt's bounded L-BFGS and analytic gradients.

#include <sia/error.hpp>
#include <sia/goodput/fit.hpp>

#include <nlopt.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "goodput/fit_objective.hpp"

namespace sia {
namespace {

constexpr double kLower = 1e-8;
constexpr double kGammaMax = 10.0;

PerfParams from_array(const double* v) { return PerfParams{v[0], v[1], v[2], v[3], v[4], v[5], v[6]}; }

/// Problem data shared with the NLopt callback: which parameters are free and how they map.
struct Problem {
  std::span<const PerfObservation> obs;
  std::array<double, 7> fixed{};     // values of all parameters (free ones overwritten per call)
  std::array<int, 7> free_index{};   // position in the NLopt vector, -1 if pinned
  std::array<int, 7> free_params{};  // parameter index of each NLopt coordinate (the first num_free)
  unsigned num_free = 0;
  bool log_space = true;
  int evaluations = 0;
  const detail::FitObjective* objective = nullptr;  // fit_objective over `obs`, set up once per fit
};

double nlopt_objective(unsigned n, const double* x, double* grad, void* data) {
  auto* pr = static_cast<Problem*>(data);
  ++pr->evaluations;
  std::array<double, 7> v = pr->fixed;
  for (unsigned k = 0; k < n; ++k) {
    const int i = pr->free_params[k];
    v[static_cast<std::size_t>(i)] = (pr->log_space && i < 6) ? std::exp(x[k]) : x[k];
  }
  double g[7] = {0, 0, 0, 0, 0, 0, 0};
  const double f = (*pr->objective)(from_array(v.data()), grad ? g : nullptr);
  if (grad) {
    for (unsigned k = 0; k < n; ++k) {
      const int i = pr->free_params[k];
      // chain rule for x = log(param): d/dx = param * d/dparam
      grad[k] = (pr->log_space && i < 6) ? g[i] * v[static_cast<std::size_t>(i)] : g[i];
      if (!std::isfinite(grad[k])) grad[k] = 0.0;
    }
  }
  return std::isfinite(f) ? f : std::numeric_limits<double>::max();
}

/// Least-squares line through (local_bsz, accum time), clamped to the bounds.
void regress_compute(std::span<const PerfObservation> obs, double& alpha, double& beta) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double m = static_cast<double>(obs.size());
  for (const auto& o : obs) {
    const double y = o.step_time - o.sync_time;
    sx += o.local_bsz;
    sy += y;
    sxx += o.local_bsz * o.local_bsz;
    sxy += o.local_bsz * y;
  }
  const double den = m * sxx - sx * sx;
  beta = den > 0 ? (m * sxy - sx * sy) / den : 0.0;
  beta = std::max(beta, kLower);
  alpha = std::max((sy - beta * sx) / m, kLower);
}

/// The sums both objectives accumulate over the observations, and the objective and gradient made of them:
/// one definition, so the fast `detail::FitObjective` and the reference `fit_objective` do the same
/// floating-point operations in the same order (their bit-identity is a unit test).
struct ObjectiveSums {
  double s1 = 0.0, s2 = 0.0;
  // Accumulated sum(e * de/dparam) for both residual families.
  double g1[7] = {0, 0, 0, 0, 0, 0, 0};
  double g2[7] = {0, 0, 0, 0, 0, 0, 0};

  /// One observation: residuals e1 (compute) and e2 (step) and what their derivatives need.
  void add(double local_bsz, double extra, int net, double a, double n, double la, double ln, double lopt, double wa,
           double wn, double e1, double e2, double gamma, bool grad) {
    s1 += e1 * e1;
    s2 += e2 * e2;
    if (grad) {
      g1[0] += e1 / a;
      g1[1] += e1 * local_bsz / a;
      const double dla = wa / a;  // d lopt / d a
      g2[0] += e2 * dla;
      g2[1] += e2 * dla * local_bsz;
      const double dln = wn / n;  // d lopt / d n
      if (net == 1) {
        g2[2] += e2 * dln;
        g2[3] += e2 * dln * extra;
      } else if (net == 2) {
        g2[4] += e2 * dln;
        g2[5] += e2 * dln * extra;
      }
      g2[6] += e2 * (-lopt + wa * la + wn * ln) / gamma;
    }
  }

  /// The objective over m observations (with its regularisers) and, when grad is given, its gradient.
  double finish(const PerfParams& p, double m, double gamma, double* grad) const {
    const double r1 = std::sqrt(s1 / m);
    const double r2 = std::sqrt(s2 / m);
    const double pn = p.beta_n / p.alpha_n;
    const double prr = p.beta_r / p.alpha_r;
    const double f = r1 + r2 + 1e-3 * (gamma - 1.0) * (gamma - 1.0) + 1e-2 * (pn * pn + prr * prr);
    if (grad) {
      // d sqrt(S/m) = (1/(m*r)) * sum(e de); guard r = 0 (perfect fit: the subgradient 0 is valid).
      const double c1 = r1 > 1e-300 ? 1.0 / (m * r1) : 0.0;
      const double c2 = r2 > 1e-300 ? 1.0 / (m * r2) : 0.0;
      for (int i = 0; i < 7; ++i) grad[i] = c1 * g1[i] + c2 * g2[i];
      grad[6] += 2e-3 * (gamma - 1.0);
      grad[3] += 2e-2 * pn / p.alpha_n;
      grad[2] += -2e-2 * pn * pn / p.alpha_n;
      grad[5] += 2e-2 * prr / p.alpha_r;
      grad[4] += -2e-2 * prr * prr / p.alpha_r;
    }
    return f;
  }
};

}  // namespace

void validate(std::span<const PerfObservation> obs, const std::string& what) {
  if (obs.empty()) throw InvalidArgument(what + ": no observations to fit");
  for (std::size_t i = 0; i < obs.size(); ++i) {
    const auto& o = obs[i];
    // The name of the observation is only built for a message (a simulation validates ~40,000 of them).
    const auto w = [&] { return what + "[" + std::to_string(i) + "]"; };
    if (o.nodes < 1 || o.replicas < o.nodes)
      throw InvalidArgument(w() + ": need 1 <= nodes <= replicas, got nodes " + std::to_string(o.nodes) +
                            ", replicas " + std::to_string(o.replicas));
    if (!std::isfinite(o.local_bsz) || !(o.local_bsz > 0.0)) throw InvalidArgument(w() + ".local_bsz: must be > 0");
    if (!std::isfinite(o.step_time) || !(o.step_time > 0.0))
      throw InvalidArgument(w() + ".step_time: must be a finite number > 0");
    if (!std::isfinite(o.sync_time) || o.sync_time < 0.0)
      throw InvalidArgument(w() + ".sync_time: must be a finite number >= 0");
    if (!(o.sync_time < o.step_time))
      throw InvalidArgument(w() + ".sync_time: must be < step_time (compute time must be > 0)");
  }
}

double fit_objective(const PerfParams& p, std::span<const PerfObservation> obs, double* grad) {
  const double m = static_cast<double>(obs.size());
  if (obs.empty()) {
    if (grad) std::fill(grad, grad + 7, 0.0);
    return 0.0;
  }
  const double gamma = p.gamma;
  ObjectiveSums sums;
  for (std::size_t i = 0; i < obs.size(); ++i) {
    const PerfObservation& o = obs[i];
    const double a = p.alpha_c + p.beta_c * o.local_bsz;
    const double extra = std::max(static_cast<double>(o.replicas) - 2.0, 1e-8);
    int net = 0;  // 0: none, 1: inter-node, 2: intra-node
    double n = 0.0;
    if (o.nodes > 1) {
      net = 1;
      n = p.alpha_n + p.beta_n * extra;
    } else if (o.replicas > 1) {
      net = 2;
      n = p.alpha_r + p.beta_r * extra;
    } else {
      n = 1e-8 + 1e-8 * extra;
    }
    const double la = std::log(a);
    const double ln = std::log(n);
    // log(a^g + n^g)/g computed stably (log-sum-exp); wa, wn are the softmax weights.
    const double xa = gamma * la;
    const double xn = gamma * ln;
    const double mx = std::max(xa, xn);
    const double ea = std::exp(xa - mx);
    const double en = std::exp(xn - mx);
    const double lu = mx + std::log(ea + en);
    const double lopt = lu / gamma;
    const double wa = ea / (ea + en);
    const double wn = en / (ea + en);
    const double e1 = la - std::log(o.step_time - o.sync_time);
    const double e2 = lopt - std::log(o.step_time);
    sums.add(o.local_bsz, extra, net, a, n, la, ln, lopt, wa, wn, e1, e2, gamma, grad != nullptr);
  }
  return sums.finish(p, m, gamma, grad);
}

namespace detail {

FitObjective::FitObjective(std::span<const PerfObservation> obs) {
  rows_.reserve(obs.size());
  for (const PerfObservation& o : obs) {
    Row r;
    r.local_bsz = o.local_bsz;
    r.extra = std::max(static_cast<double>(o.replicas) - 2.0, 1e-8);
    r.log_compute = std::log(o.step_time - o.sync_time);
    r.log_step = std::log(o.step_time);
    r.net = o.nodes > 1 ? 1 : o.replicas > 1 ? 2 : 0;
    if (r.net == 0) {
      r.fixed_n = 1e-8 + 1e-8 * r.extra;
      r.fixed_ln = std::log(r.fixed_n);
    } else {
      std::size_t l = 0;
      while (l < links_.size() && !(links_[l].net == r.net && links_[l].extra == r.extra)) ++l;
      if (l == links_.size()) links_.push_back(Link{r.net, r.extra});
      r.link = static_cast<int>(l);
    }
    std::size_t b = 0;
    while (b < bszs_.size() && bszs_[b] != r.local_bsz) ++b;
    if (b == bszs_.size()) bszs_.push_back(r.local_bsz);
    r.bsz = static_cast<int>(b);
    rows_.push_back(r);
  }
  a_.resize(bszs_.size());
  la_.resize(bszs_.size());
  n_.resize(links_.size());
  ln_.resize(links_.size());
}

double FitObjective::operator()(const PerfParams& p, double* grad) const {
  // fit_objective's loop, with a, n and their logs looked up (the same expressions on the same numbers).
  const double m = static_cast<double>(rows_.size());
  if (rows_.empty()) {
    if (grad) std::fill(grad, grad + 7, 0.0);
    return 0.0;
  }
  for (std::size_t k = 0; k < bszs_.size(); ++k) {
    a_[k] = p.alpha_c + p.beta_c * bszs_[k];
    la_[k] = std::log(a_[k]);
  }
  for (std::size_t k = 0; k < links_.size(); ++k) {
    const double extra = links_[k].extra;
    n_[k] = links_[k].net == 1 ? p.alpha_n + p.beta_n * extra : p.alpha_r + p.beta_r * extra;
    ln_[k] = std::log(n_[k]);
  }
  const double gamma = p.gamma;
  ObjectiveSums sums;
  for (const Row& o : rows_) {
    const auto b = static_cast<std::size_t>(o.bsz);
    const auto l = static_cast<std::size_t>(o.link);
    const double a = a_[b];
    const double extra = o.extra;
    const int net = o.net;
    const double n = net == 0 ? o.fixed_n : n_[l];
    const double la = la_[b];
    const double ln = net == 0 ? o.fixed_ln : ln_[l];
    const double xa = gamma * la;
    const double xn = gamma * ln;
    const double mx = std::max(xa, xn);
    // One of the two is exp(0) = 1 exactly (a NaN difference still goes to exp).
    const double da = xa - mx;
    const double dn = xn - mx;
    const double ea = da == 0.0 ? 1.0 : std::exp(da);
    const double en = dn == 0.0 ? 1.0 : std::exp(dn);
    const double lu = mx + std::log(ea + en);
    const double lopt = lu / gamma;
    const double wa = ea / (ea + en);
    const double wn = en / (ea + en);
    const double e1 = la - o.log_compute;
    const double e2 = lopt - o.log_step;
    sums.add(o.local_bsz, extra, net, a, n, la, ln, lopt, wa, wn, e1, e2, gamma, grad != nullptr);
  }
  return sums.finish(p, m, gamma, grad);
}

}  // namespace detail

FitResult fit_perf_params_detailed(std::span<const PerfObservation> obs, const FitOptions& opt) {
  validate(obs);
  Problem pr;
  pr.obs = obs;
  pr.log_space = opt.log_space;
  const detail::FitObjective objective(obs);
  pr.objective = &objective;
  std::array<double, 7> init = {1e-1, 1e-2, 1e-1, 1e-2, 1e-1, 1e-2, 1.0 + 1e-3};
  std::array<bool, 7> pinned{};
  // Pinning rules of the reference (goodput.py:fit_perf_params).
  bool multi_node = false, single_node_multi = false, more_than_two = false;
  double mean_accum = 0.0;
  for (const auto& o : obs) {
    multi_node = multi_node || o.nodes > 1;
    single_node_multi = single_node_multi || (o.nodes == 1 && o.replicas > 1);
    more_than_two = more_than_two || o.replicas > 2;
    mean_accum += o.step_time - o.sync_time;
  }
  mean_accum /= static_cast<double>(obs.size());
  if (objective.distinct_batches() == 1) {
    init[0] = std::max(mean_accum / 2.0, kLower);
    pinned[0] = true;
  }
  if (!multi_node) {
    init[2] = init[3] = kLower;
    pinned[2] = pinned[3] = true;
  }
  if (!single_node_multi) {
    init[4] = init[5] = kLower;
    pinned[4] = pinned[5] = true;
  }
  if (!more_than_two) {
    init[3] = init[5] = kLower;
    pinned[3] = pinned[5] = true;
  }
  if (!(opt.max_evaluations >= 1)) throw InvalidArgument("fit options: max_evaluations must be >= 1");
  if (!(opt.ftol_rel >= 0.0 && std::isfinite(opt.ftol_rel)))
    throw InvalidArgument("fit options: ftol_rel must be finite and >= 0");
  if (!(opt.ftol_abs >= 0.0 && std::isfinite(opt.ftol_abs)))
    throw InvalidArgument("fit options: ftol_abs must be finite and >= 0");
  if (!(opt.lbfgs_memory >= 1)) throw InvalidArgument("fit options: lbfgs_memory must be >= 1");
  if (opt.fixed_gamma != 0.0) {
    if (!(opt.fixed_gamma >= 1.0 && opt.fixed_gamma <= kGammaMax))
      throw InvalidArgument("fit options: fixed_gamma must be 0 or in [1, 10]");
    init[6] = opt.fixed_gamma;
    pinned[6] = true;
  }
  pr.fixed = init;
  for (int i = 0; i < 7; ++i) {
    pr.free_index[static_cast<std::size_t>(i)] = -1;
    if (!pinned[static_cast<std::size_t>(i)]) {
      pr.free_index[static_cast<std::size_t>(i)] = static_cast<int>(pr.num_free);
      pr.free_params[pr.num_free++] = i;
    }
  }

  // Fixed-size scratch throughout: a simulation runs thousands of these fits.
  std::array<std::array<double, 7>, 2> starts{init, init};
  std::size_t num_starts = 1;
  if (opt.multi_start) {
    std::array<double, 7> s2 = init;
    double a = 0, b = 0;
    regress_compute(obs, a, b);
    if (!pinned[0]) s2[0] = a;
    s2[1] = b;
    // Network guesses from the observed sync times of each kind.
    double sn = 0, cn = 0, sr = 0, cr = 0;
    for (const auto& o : obs) {
      if (o.nodes > 1) {
        sn += o.sync_time;
        cn += 1;
      } else if (o.replicas > 1) {
        sr += o.sync_time;
        cr += 1;
      }
    }
    if (!pinned[2] && cn > 0) s2[2] = std::max(sn / cn, kLower);
    if (!pinned[3]) s2[3] = std::max(s2[2] * 0.05, kLower);
    if (!pinned[4] && cr > 0) s2[4] = std::max(sr / cr, kLower);
    if (!pinned[5]) s2[5] = std::max(s2[4] * 0.05, kLower);
    starts[num_starts++] = s2;
  }

  const unsigned n = pr.num_free;
  std::array<double, 7> best_v = init;
  double best_f = std::numeric_limits<double>::infinity();
  if (n == 0) {
    best_f = fit_objective(from_array(init.data()), obs);
  }
  for (std::size_t si = 0; si < num_starts; ++si) {
    if (n == 0) break;
    const std::array<double, 7>& start = starts[si];
    std::unique_ptr<nlopt_opt_s, decltype(&nlopt_destroy)> o(nlopt_create(NLOPT_LD_LBFGS, n), &nlopt_destroy);
    if (!o) throw SolverFailure("fit_perf_params: nlopt_create failed");
    std::array<double, 7> lb{}, ub{}, x{};
    for (unsigned k = 0; k < n; ++k) {
      const int i = pr.free_params[k];
      const double v = start[static_cast<std::size_t>(i)];
      if (i < 6) {
        lb[k] = opt.log_space ? std::log(kLower) : kLower;
        ub[k] = opt.log_space ? std::log(1e6) : HUGE_VAL;
        x[k] = opt.log_space ? std::log(std::max(v, kLower)) : std::max(v, kLower);
        x[k] = std::min(x[k], ub[k]);
      } else {
        lb[k] = 1.0;
        ub[k] = kGammaMax;
        x[k] = std::clamp(v, 1.0, kGammaMax);
      }
    }
    nlopt_set_lower_bounds(o.get(), lb.data());
    nlopt_set_upper_bounds(o.get(), ub.data());
    nlopt_set_min_objective(o.get(), nlopt_objective, &pr);
    nlopt_set_ftol_rel(o.get(), opt.ftol_rel);
    nlopt_set_ftol_abs(o.get(), opt.ftol_abs);
    nlopt_set_xtol_rel(o.get(), 1e-12);
    nlopt_set_maxeval(o.get(), opt.max_evaluations);
    nlopt_set_vector_storage(o.get(), static_cast<unsigned>(opt.lbfgs_memory));
    double f = 0.0;
    const nlopt_result rc = nlopt_optimize(o.get(), x.data(), &f);
    (void)rc;  // roundoff-limited / maxeval results still hold the best point found
    std::array<double, 7> v = pr.fixed;
    for (unsigned k = 0; k < n; ++k) {
      const int i = pr.free_params[k];
      v[static_cast<std::size_t>(i)] = (opt.log_space && i < 6) ? std::exp(x[k]) : x[k];
    }
    // FitObjective gives fit_objective's bits (tests/unit/test_goodput_fit.cpp), without its per-row logs.
    const double fv = objective(from_array(v.data()), nullptr);
    if (std::isfinite(fv) && fv < best_f) {
      best_f = fv;
      best_v = v;
    }
  }
  FitResult r;
  r.params = from_array(best_v.data());
  r.objective = best_f;
  r.evaluations = pr.evaluations;
  if (opt.apply_priors && !multi_node) {
    r.params.alpha_n = std::max(r.params.alpha_n, 1.1 * r.params.alpha_r);
    r.params.beta_n = std::max(r.params.beta_n, 1.1 * r.params.beta_r);
  }
  return r;
}

PerfParams fit_perf_params(std::span<const PerfObservation> obs, const FitOptions& opt) {
  return fit_perf_params_detailed(obs, opt).params;
}

bool OnlinePerfFitter::observe(const PerfObservation& o) {
  validate(std::span<const PerfObservation>(&o, 1), "observation");
  const auto key = std::make_tuple(o.nodes, o.replicas, o.local_bsz);
  const bool fresh = obs_.find(key) == obs_.end();
  obs_[key] = o;
  if (fresh) refit();
  return fresh;
}

void OnlinePerfFitter::refit() {
  const std::vector<PerfObservation> v = observations();
  if (v.empty()) return;
  params_ = fit_perf_params(v, opt_);
  fitted_ = true;
}

std::vector<PerfObservation> OnlinePerfFitter::observations() const {
  std::vector<PerfObservation> v;
  v.reserve(obs_.size());
  for (const auto& [k, o] : obs_) v.push_back(o);
  return v;
}

}  // namespace sia
