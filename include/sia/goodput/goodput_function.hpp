#pragma once
/// @file goodput/goodput_function.hpp
/// @brief Goodput = throughput x statistical efficiency, and the goodput-maximising batch size
/// of a configuration (Pollux, OSDI 2021).
///
/// Usage:
/// @code
/// sia::GoodputFunction f{perf, sia::GradParams{sqr, var}, 128.0};       // init batch 128
/// sia::BatchLimits lim{.max_batch_size = 4096, .min_local = 32, .max_local = 1024};
/// sia::GoodputChoice c = f.optimize(/*nodes=*/2, /*replicas=*/8, lim);
/// // c.goodput (samples/s of useful progress), c.batch.{global_batch, local_batch, accumulation_steps}
/// @endcode

#include <sia/configuration.hpp>
#include <sia/error.hpp>
#include <sia/goodput/efficiency.hpp>
#include <sia/goodput/throughput_model.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

namespace sia {

/**
 * @brief Batch-size limits of a job on one GPU type.
 *
 * `max_batch_size` is the largest global batch the job accepts; with `tune == false`
 * (strong-scaling and rigid jobs) it is the job's fixed global batch. `min_local`/`max_local`
 * bound the per-GPU micro-batch (the GPU type's memory limit); 0 means "no bound" (1 and
 * max_batch_size respectively, as in the reference).
 */
struct BatchLimits {
  double max_batch_size = 0.0;  ///< largest (or, with tune == false, the fixed) global batch; 0 = init batch
  int min_local = 0;            ///< smallest local batch per GPU (0 = 1)
  int max_local = 0;            ///< largest local batch per GPU that fits in memory (0 = max_batch_size)
  bool tune = true;             ///< false: the global batch is fixed to max_batch_size
  bool accumulation = true;     ///< allow gradient accumulation (extra micro-steps)
  int candidates = 50;          ///< geometrically spaced global batch sizes tried (numpy geomspace default)
};

/// @brief Throws InvalidArgument naming `what` when limits are inconsistent (min > max, negative, NaN).
inline void validate(const BatchLimits& l, const std::string& what = "batch limits") {
  if (!std::isfinite(l.max_batch_size) || l.max_batch_size < 0.0 || l.max_batch_size > 1e12)
    throw InvalidArgument(what + ".max_batch_size: must be a finite number in [0, 1e12]");
  if (l.min_local < 0) throw InvalidArgument(what + ".min_local: must be >= 0");
  if (l.max_local < 0) throw InvalidArgument(what + ".max_local: must be >= 0");
  if (l.min_local > 0 && l.max_local > 0 && l.min_local > l.max_local)
    throw InvalidArgument(what + ": local batch range min " + std::to_string(l.min_local) + " > max " +
                          std::to_string(l.max_local));
  if (l.candidates < 1 || l.candidates > 100000) throw InvalidArgument(what + ".candidates: must be in [1, 100000]");
}

/// @brief Result of a batch-size optimisation: goodput 0 and an empty batch when nothing is valid.
struct GoodputChoice {
  double goodput = 0.0;     ///< throughput * efficiency (samples/s of useful progress)
  double throughput = 0.0;  ///< samples/s
  double efficiency = 0.0;  ///< statistical efficiency of the chosen global batch
  BatchChoice batch;        ///< chosen global batch and its split
};

/**
 * @brief Goodput of one job on one GPU type: throughput model + gradient statistics.
 *
 * When `grad` is empty (statistics not known yet) the efficiency is taken as 1 (documented
 * fallback: goodput = throughput), so the result is never NaN.
 */
struct GoodputFunction {
  PerfParams perf;                 ///< throughput model on this GPU type
  std::optional<GradParams> grad;  ///< gradient statistics at init_batch_size (shared across types)
  double init_batch_size = 1.0;    ///< batch size the statistics and progress refer to

  /// Samples/s with `replicas` replicas on `nodes` nodes, local batch `local`, `accum` extra micro-steps.
  [[nodiscard]] double throughput(int nodes, int replicas, double local, int accum) const noexcept {
    return sia::throughput(perf, nodes, replicas, local, accum);
  }
  /// Statistical efficiency of global batch `batch` (1 when grad is unknown).
  [[nodiscard]] double efficiency(double batch) const noexcept {
    if (!grad) return 1.0;
    return sia::efficiency(*grad, batch, init_batch_size);
  }
  /// Goodput of (nodes, replicas, local, accum); 0 instead of any non-finite value.
  [[nodiscard]] double evaluate(int nodes, int replicas, double local, int accum) const noexcept {
    const double g =
        throughput(nodes, replicas, local, accum) * efficiency(static_cast<double>(replicas) * local * (accum + 1));
    return std::isfinite(g) && g > 0.0 ? g : 0.0;
  }

  /**
   * @brief The goodput-maximising batch size for (nodes, replicas) within `lim`
   * (see optimize_batch() for the algorithm). Allocation-free.
   */
  [[nodiscard]] GoodputChoice optimize(int nodes, int replicas, const BatchLimits& lim) const noexcept;
};

/**
 * @brief A fast statistical-efficiency functor of the global batch, equal to
 * sia::efficiency(g, batch, init) (1 without statistics): efficiency = (var + sqr) /
 * (var + sqr * batch / init), one division per call, with the same gain-1 fallback.
 */
class EfficiencyFn {
 public:
  EfficiencyFn(const std::optional<GradParams>& g, double init) noexcept : init_(init) {
    if (g && std::isfinite(g->sqr) && std::isfinite(g->var)) {
      known_ = true;
      // Only the ratio var : sqr matters: divide both by the larger so that statistics near the
      // top of the double range (sqr = var = 1e308) do not overflow var + sqr to infinity.
      const double m = std::max(g->var, g->sqr);
      const double unit = m > 0.0 ? m : 1.0;
      var_ = g->var / unit;
      sqr_over_init_ = g->sqr / unit / init;
      num_ = var_ + g->sqr / unit;
    }
  }
  [[nodiscard]] double operator()(double batch) const noexcept {
    if (!known_) return 1.0;
    const double denom = var_ + sqr_over_init_ * batch;  // = scale * (var / scale + sqr)
    if (!(denom > 0.0)) return init_ / batch;            // gain 1 (reference fallback)
    return num_ / denom;
  }

 private:
  bool known_ = false;
  double init_ = 1.0;
  double var_ = 0.0;
  double sqr_over_init_ = 0.0;
  double num_ = 0.0;
};

/// @brief EfficiencyFn for statistics `g` at initial batch `init`.
[[nodiscard]] inline EfficiencyFn efficiency_fn(const std::optional<GradParams>& g, double init) noexcept {
  return EfficiencyFn(g, init);
}

namespace detail {
/// static_cast<long long>(std::ceil(x)) without a call into libm where the conversion is exact (|x| < 2^52: the
/// truncation, plus one when it is below x); the library's ceil elsewhere. (-0 and +0 both give 0.)
[[nodiscard]] inline long long ceil_to_ll(double x) noexcept {
  constexpr double kExact = 4503599627370496.0;  // 2^52
  if (x > -kExact && x < kExact) {
    const auto t = static_cast<long long>(x);
    return static_cast<double>(t) < x ? t + 1 : t;
  }
  return static_cast<long long>(std::ceil(x));
}
}  // namespace detail

/// @brief How a global batch runs on a number of GPUs: local ("atomic") batch per GPU and extra
/// accumulation micro-steps. Wide integers: split_batch() does not clip.
struct BatchSplit {
  long long local_batch = 0;
  long long accumulation_steps = 0;
};

/**
 * @brief The split of global batch `global_batch` over `replicas` GPUs (reference
 * `goodput.py`): local = global/replicas; with `accumulation`, s = ceil(local/max_local) - 1 extra
 * micro-steps (>= 0; at least 1 on a single GPU when local exceeds `single_gpu_threshold`, Pollux's
 * rule with the initial batch size as threshold); local batch = ceil(local/(s+1)). The one rule
 * the estimator (optimize_batch), the simulator's executor and its Gavel and FTF oracles share.
 * `max_local` <= 0 means no memory limit.
 */
[[nodiscard]] inline BatchSplit split_batch(double global_batch, int replicas, double max_local,
                                            double single_gpu_threshold, bool accumulation = true) noexcept {
  BatchSplit out;
  if (replicas < 1 || !(global_batch > 0.0)) return out;
  const double local = global_batch / replicas;
  long long s = 0;
  // local <= max_local makes local / max_local <= 1 (a rounded division is monotone), so the ceiling below is at
  // most 1 and s is 0: the common case skips a division and a ceiling (optimize_batch splits 50 batches per
  // configuration). The results are the formula's, bit for bit.
  if (accumulation && max_local > 0.0 && !(local <= max_local)) {
    s = detail::ceil_to_ll(local / max_local - 1e-8) - 1;
    if (s < 0) s = 0;
  }
  if (accumulation && replicas == 1 && local > single_gpu_threshold + 1e-8 && s < 1) s = 1;
  out.accumulation_steps = s;
  // (local / 1 is local exactly.)
  out.local_batch = detail::ceil_to_ll((s == 0 ? local : local / static_cast<double>(s + 1)) - 1e-8);
  return out;
}

/// @brief "No lower bound" on the step time: optimize_batch evaluates every candidate.
struct NoStepTimeBound {
  [[nodiscard]] double operator()(double, int) const noexcept { return 0.0; }
};

namespace detail {

/// A valid, distinct split of optimize_batch's pass 1: local batch, extra micro-steps, global batch.
struct BatchCandidate {
  double atomic = 0.0;
  double global = 0.0;
  int s = 0;
};

/// optimize_batch buffers at most this many candidates (more: its pass 1 evaluates as it goes).
inline constexpr int kMaxBufferedCandidates = 128;

/// The geometric candidates' valid, distinct splits, in order (optimize_batch's pass 1): calls
/// `f(k, atomic, s, global)` for each, k the candidate's index, `atomic` its local batch, `s` its extra
/// micro-steps, `global` its global batch. None when no batch is within the limits.
template <class F>
inline void for_each_valid_split(int replicas, double init_batch_size, const BatchLimits& lim, F&& f) noexcept {
  if (replicas < 1 || !(init_batch_size > 0.0)) return;
  const double max_batch = lim.max_batch_size > 0.0 ? lim.max_batch_size : init_batch_size;
  const double min_atomic = lim.min_local > 0 ? lim.min_local : 1.0;
  const double max_atomic = lim.max_local > 0 ? lim.max_local : max_batch;
  const double r = replicas;
  double min_batch = max_batch;
  if (lim.tune) {
    min_batch = std::max(init_batch_size, min_atomic * r);
    if (min_batch > max_batch * (1.0 + 1e-12)) return;
  }
  const int n = lim.tune ? std::max(lim.candidates, 1) : 1;
  // Geometric candidates by a running product (one pow instead of one exp per candidate); the
  // last one is set exactly to max_batch like numpy.geomspace.
  const double ratio = n > 1 ? std::pow(max_batch / min_batch, 1.0 / (n - 1)) : 1.0;
  long long last_atomic = -1;
  long long last_s = -1;
  double next = min_batch;
  for (int k = 0; k < n; ++k) {
    const double batch = k == n - 1 ? max_batch : next;
    next *= ratio;
    const BatchSplit split = split_batch(batch, replicas, max_atomic, init_batch_size, lim.accumulation);
    const long long s = split.accumulation_steps;
    const long long atomic = split.local_batch;
    if (atomic == last_atomic && s == last_s) continue;  // same split as the previous candidate
    last_atomic = atomic;
    last_s = s;
    if (atomic > 2147483647LL || s > 2147483646LL) continue;  // not representable in BatchChoice
    if (static_cast<double>(atomic) < min_atomic || static_cast<double>(atomic) > max_atomic) continue;
    const double a = static_cast<double>(atomic);
    f(k, a, static_cast<int>(s), r * a * static_cast<double>(s + 1));
  }
}

/// optimize_batch's pass 1 when `lim.candidates` <= kMaxBufferedCandidates: writes the valid, distinct splits of the
/// geometric candidates to `out` in order and returns their count (0: none, or no batch within the limits). A pure
/// function of (replicas, init_batch_size, lim).
[[nodiscard]] inline int valid_splits(int replicas, double init_batch_size, const BatchLimits& lim,
                                      BatchCandidate* out) noexcept {
  int m = 0;
  for_each_valid_split(replicas, init_batch_size, lim, [&](int, double atomic, int s, double global) {
    BatchCandidate& c = out[m++];
    c.atomic = atomic;
    c.s = s;
    c.global = global;
  });
  return m;
}

/// valid_splits(replicas, init_batch_size, lim) from a memo of the calling thread (goodput_memo.cpp): the splits
/// depend on the job's batch limits and the GPU count only, not on the model or the statistics, so a simulation
/// asks for the same few hundred lists throughout (149 distinct ones in the 158,091 searches of the 936-job run).
/// Sets `count`; the pointer stays valid until the thread's next call. Requires lim.candidates <=
/// kMaxBufferedCandidates.
[[nodiscard]] const BatchCandidate* memoised_valid_splits(int replicas, double init_batch_size, const BatchLimits& lim,
                                                          int& count) noexcept;

/// optimize_batch's pass 2 over the splits of pass 1 (`splits[0..m)`, m <= kMaxBufferedCandidates).
template <class StepTime, class Efficiency, class LowerBound>
[[nodiscard]] GoodputChoice best_of_splits(const BatchCandidate* splits, int m, StepTime&& step_time,
                                           Efficiency&& efficiency, LowerBound&& lower_bound) noexcept {
  GoodputChoice best;
  if (m <= 0) return best;
  int best_index = -1;
  auto consider = [&](const BatchCandidate& c, double eff, int index) {
    const double t = step_time(c.atomic, c.s);
    if (!(t > 0.0) || !std::isfinite(t)) return;
    const double xput = c.global / t;
    const double g = xput * eff;
    if (!std::isfinite(g) || !(g > 0.0)) return;
    if (g > best.goodput || (g == best.goodput && index < best_index)) {
      best.goodput = g;
      best.throughput = xput;
      best.efficiency = eff;
      best.batch.global_batch = static_cast<long long>(c.global);
      best.batch.local_batch = static_cast<int>(c.atomic);
      best.batch.accumulation_steps = c.s;
      best_index = index;
    }
  };
  // The efficiencies and bounds apart from pass 1 (the same operations on the same numbers): a loop without
  // branches on the splits, whose two divisions per candidate overlap from one candidate to the next.
  double eff[kMaxBufferedCandidates];
  double bound[kMaxBufferedCandidates];
  for (int i = 0; i < m; ++i) {
    const BatchCandidate& c = splits[i];
    eff[i] = efficiency(c.global);
    const double lb = lower_bound(c.atomic, c.s);
    bound[i] = lb > 0.0 ? c.global * eff[i] / lb : HUGE_VAL;
    if (!(bound[i] >= 0.0)) bound[i] = HUGE_VAL;  // NaN bound: evaluate
  }
  int first = 0;
  for (int i = 1; i < m; ++i)
    if (bound[i] > bound[first]) first = i;
  consider(splits[first], eff[first], first);
  for (int i = 0; i < m; ++i) {
    if (i == first) continue;
    // 1e-12 slack: the exact goodput may exceed a tight bound by rounding.
    if (bound[i] * (1.0 + 1e-12) < best.goodput) continue;
    consider(splits[i], eff[i], i);
  }
  return best;
}

}  // namespace detail

/**
 * @brief Batch-size optimisation over any step-time model.
 *
 * `step_time(atomic, s)` returns the seconds of one optimiser step of `replicas` replicas with
 * local batch `atomic` and `s` extra accumulation micro-steps (<= 0 or non-finite = unusable);
 * `efficiency(global)` the statistical efficiency of a global batch.
 *
 * Reference algorithm (`goodput.py:GoodputFunction.optimize`): `lim.candidates` global batch
 * sizes spaced geometrically in [max(init, min_local*R), max_batch] (just max_batch when
 * `tune` is false); each is split by split_batch() (threshold: the initial batch); candidates
 * whose atomic batch leaves [min_local, max_local] are invalid.
 * The first best candidate wins. Deviation: when max(init, min_local*R) > max_batch no batch
 * satisfies the limits and the result is goodput 0 (the reference would evaluate the
 * out-of-range batch min_local*R). Consecutive candidates with the same split are evaluated once.
 *
 * Optional `lower_bound(atomic, s)`: a cheap lower bound on step_time (0 = none). Candidates whose
 * resulting goodput bound cannot beat the best one found are skipped, without changing the result.
 */
template <class StepTime, class Efficiency, class LowerBound = NoStepTimeBound>
[[nodiscard]] GoodputChoice optimize_batch(int replicas, double init_batch_size, const BatchLimits& lim,
                                           StepTime&& step_time, Efficiency&& efficiency,
                                           LowerBound&& lower_bound = LowerBound{}) noexcept {
  const int n = lim.tune ? std::max(lim.candidates, 1) : 1;
  if (n <= detail::kMaxBufferedCandidates) {
    // Pass 1: the valid, distinct splits. Pass 2 bounds their goodput (from the cheap step-time lower bound),
    // evaluates the most promising split exactly, then only the splits whose bound can still beat it — same argmax
    // (first best index) as evaluating all.
    detail::BatchCandidate splits[detail::kMaxBufferedCandidates];
    const int m = detail::valid_splits(replicas, init_batch_size, lim, splits);
    return detail::best_of_splits(splits, m, step_time, efficiency, lower_bound);
  }
  // More candidates than the buffer holds: each valid split evaluated as pass 1 finds it.
  GoodputChoice best;
  int best_index = -1;
  detail::for_each_valid_split(replicas, init_batch_size, lim, [&](int k, double c_atomic, int s, double global) {
    const double eff = efficiency(global);
    const double t = step_time(c_atomic, s);
    if (!(t > 0.0) || !std::isfinite(t)) return;
    const double xput = global / t;
    const double g = xput * eff;
    if (!std::isfinite(g) || !(g > 0.0)) return;
    if (g > best.goodput || (g == best.goodput && k < best_index)) {
      best.goodput = g;
      best.throughput = xput;
      best.efficiency = eff;
      best.batch.global_batch = static_cast<long long>(global);
      best.batch.local_batch = static_cast<int>(c_atomic);
      best.batch.accumulation_steps = s;
      best_index = k;
    }
  });
  return best;
}

inline GoodputChoice GoodputFunction::optimize(int nodes, int replicas, const BatchLimits& lim) const noexcept {
  if (nodes < 1 || replicas < 1) return GoodputChoice{};
  // Constant parts of the step time for this (nodes, replicas), hoisted out of the loop.
  const double tn = network_time(perf, nodes, replicas);
  const bool linear = perf.gamma == 1.0;
  const double tn_pow = linear ? tn : std::pow(tn, perf.gamma);
  const double inv_gamma = 1.0 / perf.gamma;
  // 2^(1/g - 1), a little below it (a bound must not exceed the step time): 0 when g < 1 or not a number.
  const double mean_scale = linear ? 1.0 : perf.gamma > 1.0 ? std::exp2(inv_gamma - 1.0) * (1.0 - 1e-14) : 0.0;
  const PerfParams& p = perf;
  // The splits from the thread's memo of them (the same list optimize_batch's pass 1 makes).
  const int n = lim.tune ? std::max(lim.candidates, 1) : 1;
  const bool memoised = n <= detail::kMaxBufferedCandidates;
  int m = 0;
  const detail::BatchCandidate* splits =
      memoised ? detail::memoised_valid_splits(replicas, init_batch_size, lim, m) : nullptr;
  auto search = [&](auto&& step_time, auto&& efficiency, auto&& lower_bound) {
    return memoised ? detail::best_of_splits(splits, m, step_time, efficiency, lower_bound)
                    : optimize_batch(replicas, init_batch_size, lim, step_time, efficiency, lower_bound);
  };
  return search(
      [&](double b, int s) {
        const double ta = p.alpha_c + p.beta_c * b;
        const double to = linear ? ta + tn : std::pow(std::pow(ta, p.gamma) + tn_pow, inv_gamma);
        return static_cast<double>(s) * ta + to;
      },
      efficiency_fn(grad, init_batch_size),
      // (ta^g + tn^g)^(1/g) >= max(ta, tn), and >= 2^(1/g - 1) (ta + tn) for g >= 1 (the power mean of order g is
      // at least the arithmetic mean): the second is the tighter one where ta and tn are alike, and lets the search
      // skip more candidates (the bound only skips what cannot win: the same choice, bit for bit).
      [&](double b, int s) {
        const double ta = p.alpha_c + p.beta_c * b;
        return static_cast<double>(s) * ta + std::max(std::max(ta, tn), mean_scale * (ta + tn));
      });
}

}  // namespace sia
