#pragma once
/// @file goodput/efficiency.hpp
/// @brief Statistical efficiency from gradient statistics (Pollux / AdaScale gain).
///
/// Pollux (OSDI 2021) §3.1, as the reference code computes it. With `scale = batch / init_batch_size`:
/// @code
/// gain(batch)       = (var + sqr) / (var / scale + sqr)     (1 when the denominator is not > 0)
/// efficiency(batch) = gain(batch) / scale
/// @endcode
/// `var / sqr` is the gradient noise scale at the initial batch size: the larger it is, the less
/// efficiency a large batch loses.

#include <sia/error.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace sia {

/// @brief Gradient statistics of a job: squared norm of the true gradient and gradient variance,
/// both measured at the initial batch size.
struct GradParams {
  double sqr = 0.0;  ///< estimate of |E[g]|^2 (>= 0)
  double var = 0.0;  ///< estimate of the gradient variance (>= 0)
  friend bool operator==(const GradParams&, const GradParams&) = default;
};

/// @brief Throws InvalidArgument (message starts with `what`) when sqr or var is negative or not finite.
inline void validate(const GradParams& g, const std::string& what = "grad params") {
  if (!std::isfinite(g.sqr) || g.sqr < 0.0)
    throw InvalidArgument(what + ".sqr: must be a finite number >= 0, got " + std::to_string(g.sqr));
  if (!std::isfinite(g.var) || g.var < 0.0)
    throw InvalidArgument(what + ".var: must be a finite number >= 0, got " + std::to_string(g.var));
}

/// @brief AdaScale gain: progress of one step at `batch`, in steps at `init_batch_size`.
///
/// Defensive by design (never NaN): when the statistics are unusable (non-finite or a
/// non-positive denominator, e.g. sqr = var = 0) the gain is 1, as in the reference.
[[nodiscard]] inline double gain(const GradParams& g, double batch, double init_batch_size) noexcept {
  const double scale = batch / init_batch_size;
  // Only the ratio var : sqr matters: divide both by the larger so that statistics near the top of
  // the double range (sqr = var = 1e308) do not overflow var + sqr to infinity.
  const double m = std::max(g.var, g.sqr);
  if (!(m > 0.0) || !std::isfinite(m)) return 1.0;
  const double var = g.var / m;
  const double sqr = g.sqr / m;
  const double denom = var / scale + sqr;
  if (!(denom > 0.0) || !std::isfinite(denom)) return 1.0;
  const double r = (var + sqr) / denom;
  return std::isfinite(r) ? r : 1.0;
}

/// @brief Statistical efficiency at `batch`: gain / scale, in (0, 1] for batch >= init_batch_size.
/// Returns 0 when batch or init_batch_size is not positive.
[[nodiscard]] inline double efficiency(const GradParams& g, double batch, double init_batch_size) noexcept {
  if (!(batch > 0.0) || !(init_batch_size > 0.0)) return 0.0;
  return gain(g, batch, init_batch_size) * init_batch_size / batch;
}

}  // namespace sia
