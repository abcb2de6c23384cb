#pragma once
/// @file goodput_matrix.hpp
/// @brief The goodput matrix of a round (README.md, "What a round does", step 3): normalisation, restart
/// factor and fairness exponent, on Eigen matrices (jobs x configurations).
///
/// A raw goodput of 0 marks a configuration that is not valid for the job. Everything here is
/// pure arithmetic on already-validated matrices except check_goodput() and the input checks of
/// utility_matrix(), which reject values that would put NaN or infinity into an ILP.

#include <sia/configuration.hpp>
#include <sia/error.hpp>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <cmath>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <string_view>

namespace sia {

/// @brief Raw goodputs, normalised goodputs and utilities share this shape: rows = jobs,
/// columns = configurations of the round's ConfigurationSet.
using GoodputMatrix = Eigen::MatrixXd;

/// @brief The same, sparse by rows: only the configurations valid for a job are stored (what the
/// round uses: a job has a handful of valid configurations among thousands on a large cluster).
/// An explicitly stored 0 is an unusable entry, like an absent one.
using SparseGoodputMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor>;

/**
 * @brief Rejects a raw goodput that is NaN, infinite or negative.
 * @throws InvalidArgument naming the job, the GPU type and the configuration.
 */
inline void check_goodput(double value, std::string_view job, std::string_view type_name, const ConfigurationSpec& c) {
  if (std::isfinite(value) && value >= 0.0) return;
  std::ostringstream msg;
  msg << "job '" << job << "': goodput " << value << " on configuration (" << c.nodes << " nodes, " << c.gpus
      << " GPUs, type '" << type_name << "') is "
      << (std::isnan(value) ? "NaN"
          : value < 0       ? "negative"
                            : "infinite")
      << "; goodputs must be finite and >= 0 (0 = not usable)";
  throw InvalidArgument(msg.str());
}

/**
 * @brief Row-minimum normalisation, in place: `G_ij = Nmin_i * g_ij / min_{k: g_ik > 0} g_ik`, so
 * each job's worst valid configuration gets the value Nmin_i (its minimum GPU count). Entries
 * that are 0 stay 0; a row without positive entries stays all 0.
 */
inline void normalize_rows(GoodputMatrix& g, const Eigen::Ref<const Eigen::VectorXd>& nmin) {
  for (Eigen::Index i = 0; i < g.rows(); ++i) {
    double lo = 0.0;
    for (Eigen::Index j = 0; j < g.cols(); ++j)
      if (g(i, j) > 0.0 && (lo == 0.0 || g(i, j) < lo)) lo = g(i, j);
    if (lo > 0.0) g.row(i) *= nmin(i) / lo;
  }
}

/// @brief normalize_rows() for the sparse matrix (same arithmetic over the stored entries).
inline void normalize_rows(SparseGoodputMatrix& g, const Eigen::Ref<const Eigen::VectorXd>& nmin) {
  for (Eigen::Index i = 0; i < g.outerSize(); ++i) {
    double lo = 0.0;
    for (SparseGoodputMatrix::InnerIterator it(g, i); it; ++it)
      if (it.value() > 0.0 && (lo == 0.0 || it.value() < lo)) lo = it.value();
    if (lo > 0.0) {
      const double scale = nmin(i) / lo;
      for (SparseGoodputMatrix::InnerIterator it(g, i); it; ++it) it.valueRef() *= scale;
    }
  }
}

/**
 * @brief The restart factor of paper Eq. 3, clamped:
 * `r = max(0, (T - N*S) / (T + S))`, and `r = 1` while `T < S` (or when T + S = 0).
 * @param age_s T, seconds since the job started (>= 0)
 * @param restarts N, restarts so far (>= 0)
 * @param restart_cost_s S, seconds one restart costs (>= 0)
 */
[[nodiscard]] inline double restart_factor(double age_s, double restarts, double restart_cost_s) noexcept {
  if (age_s < restart_cost_s || age_s + restart_cost_s <= 0.0) return 1.0;
  const double r = (age_s - restarts * restart_cost_s) / (age_s + restart_cost_s);
  return r > 0.0 ? r : 0.0;
}

/// @brief Restart state of one job (row) for apply_restart_factors().
struct RestartInput {
  int current = -1;              ///< column of the job's current configuration; -1 = none (r = 1)
  double age_s = 0.0;            ///< T
  double restarts = 0.0;         ///< N
  double restart_cost_s = 30.0;  ///< S
};

/**
 * @brief Multiplies every entry of row i except its current column by the job's restart factor
 * (README.md, "What a round does", step 3). Rows of jobs without a current configuration are unchanged. An entry
 * that becomes 0 is not usable.
 *
 * utility_matrix() of the result is `(r·G)^p` computed as written (the reference's arithmetic, which the round
 * keeps with RoundOptions::round_utilities); the round itself computes `G^p · r^p`, the same value up to the last
 * bits: utility_matrix(normalised, restarts, p) below gives the round's utilities bit for bit.
 */
inline void apply_restart_factors(GoodputMatrix& g, std::span<const RestartInput> jobs) {
  for (Eigen::Index i = 0; i < g.rows() && static_cast<std::size_t>(i) < jobs.size(); ++i) {
    const auto& s = jobs[static_cast<std::size_t>(i)];
    if (s.current < 0) continue;
    const double r = restart_factor(s.age_s, s.restarts, s.restart_cost_s);
    if (r == 1.0) continue;
    const double keep = s.current < g.cols() ? g(i, s.current) : 0.0;
    g.row(i) *= r;
    if (s.current < g.cols()) g(i, s.current) = keep;
  }
}

/// @brief apply_restart_factors() for the sparse matrix.
inline void apply_restart_factors(SparseGoodputMatrix& g, std::span<const RestartInput> jobs) {
  for (Eigen::Index i = 0; i < g.outerSize() && static_cast<std::size_t>(i) < jobs.size(); ++i) {
    const auto& s = jobs[static_cast<std::size_t>(i)];
    if (s.current < 0) continue;
    const double r = restart_factor(s.age_s, s.restarts, s.restart_cost_s);
    if (r == 1.0) continue;
    for (SparseGoodputMatrix::InnerIterator it(g, i); it; ++it)
      if (it.col() != s.current) it.valueRef() *= r;
  }
}

/// @brief Utilities above this are clipped (p < 0 only): such a configuration is worth less than
/// leaving the job without GPUs for any sensible lambda, and the clip keeps ILP coefficients sane
/// when a restart factor is tiny. (The reference clips at 3000.)
inline constexpr double max_negative_p_utility = 1e6;

/// @brief Rounds to 2 decimals the way the reference does (`numpy.round(x, 2)` = rint(100 x) / 100,
/// ties to even).
[[nodiscard]] inline double round_2_decimals(double x) noexcept { return std::nearbyint(x * 100.0) / 100.0; }

namespace detail {
inline void check_exponent(double p) {
  if (!std::isfinite(p) || p == 0.0)
    throw InvalidArgument("RoundOptions.p: the fairness exponent must be finite and != 0 (got " + std::to_string(p) +
                          ")");
}
// The error of utility_of(), out of line: its message's code would keep utility_of() from being
// inlined into the loops that call it once per entry (240,000 in a large round).
[[noreturn, gnu::noinline, gnu::cold]] inline void utility_overflows(double v, double p, Eigen::Index i, Eigen::Index j,
                                                                     std::span<const std::string> job_ids) {
  std::ostringstream msg;
  if (static_cast<std::size_t>(i) < job_ids.size())
    msg << "job '" << job_ids[static_cast<std::size_t>(i)] << "'";
  else
    msg << "job row " << i;
  msg << ": utility on configuration column " << j << " overflows: normalised goodput " << v
      << " to the power p = " << p << " is not finite";
  throw InvalidArgument(msg.str());
}
// u = G^p for G > 0 (clipped for p < 0, optionally rounded); throws on overflow.
inline double utility_of(double v, double p, bool round, Eigen::Index i, Eigen::Index j,
                         std::span<const std::string> job_ids) {
  double x = std::pow(v, p);
  if (p < 0.0 && !(x <= max_negative_p_utility)) x = max_negative_p_utility;
  if (!std::isfinite(x)) [[unlikely]]
    utility_overflows(v, p, i, j, job_ids);
  return round ? round_2_decimals(x) : x;
}
// r^p, the factor a job's restart factor r puts on its utilities (restarted_utility_of): once per
// job and round. 1 for r = 1; unused for r = 0 (no entry but the current one is usable then).
[[nodiscard]] inline double restart_power(double r, double p) noexcept {
  return r == 1.0 || r == 0.0 ? 1.0 : std::pow(r, p);
}
// The round's utility of normalised goodput `g` > 0 under restart factor `r` (1 on the job's current
// configuration and for a job without one), `(r·g)^p`, computed as `g^p · r^p` from `gp` = pow(g, p)
// (kept with the job's row from round to round: the restart factor of a running job moves every
// round with its age, its goodputs do not) and `rp` = restart_power(r, p). Where that product is not
// a positive finite double (a power over- or underflowed while `(r·g)^p` need not) and with `round`
// (the reference's arithmetic, rounded to cents), `(r·g)^p` is computed as written. Clipped for
// p < 0 and rounded like utility_of(); throws on overflow (naming `r·g`, the goodput raised to p).
// The caller checks that r·g > 0 (an entry is usable).
inline double restarted_utility_of(double g, double gp, double r, double rp, double p, bool round, Eigen::Index i,
                                   Eigen::Index j, std::span<const std::string> job_ids) {
  double x = gp;
  if (r != 1.0) {
    x = gp * rp;
    if (round || !(x > 0.0 && x <= std::numeric_limits<double>::max())) [[unlikely]]
      x = std::pow(g * r, p);
  }
  if (p < 0.0 && !(x <= max_negative_p_utility)) x = max_negative_p_utility;
  if (!std::isfinite(x)) [[unlikely]]
    utility_overflows(g * r, p, i, j, job_ids);
  return round ? round_2_decimals(x) : x;
}
}  // namespace detail

/**
 * @brief Utilities `u_ij = G_ij^p` for entries with `G_ij > 0` (others 0: check G for validity,
 * not u, because a rounded utility may legitimately be 0). With `round` (reference
 * compatibility: the authors' code does) utilities are rounded to 2 decimals.
 * For p < 0, utilities above max_negative_p_utility are clipped to it.
 * @throws InvalidArgument when p is 0 or not finite, or when a utility overflows (names the job,
 *         from `job_ids` when given, else its row).
 */
[[nodiscard]] inline GoodputMatrix utility_matrix(const GoodputMatrix& g, double p, bool round = false,
                                                  std::span<const std::string> job_ids = {}) {
  detail::check_exponent(p);
  GoodputMatrix u = GoodputMatrix::Zero(g.rows(), g.cols());
  for (Eigen::Index i = 0; i < g.rows(); ++i)
    for (Eigen::Index j = 0; j < g.cols(); ++j)
      if (g(i, j) > 0.0) u(i, j) = detail::utility_of(g(i, j), p, round, i, j, job_ids);
  return u;
}

/// @brief utility_matrix() for the sparse matrix: same sparsity pattern as `g` (entries with
/// G <= 0 are stored as 0).
[[nodiscard]] inline SparseGoodputMatrix utility_matrix(const SparseGoodputMatrix& g, double p, bool round = false,
                                                        std::span<const std::string> job_ids = {}) {
  detail::check_exponent(p);
  SparseGoodputMatrix u = g;
  for (Eigen::Index i = 0; i < u.outerSize(); ++i)
    for (SparseGoodputMatrix::InnerIterator it(u, i); it; ++it)
      it.valueRef() = it.value() > 0.0 ? detail::utility_of(it.value(), p, round, i, it.col(), job_ids) : 0.0;
  return u;
}

/**
 * @brief The round's utilities from the normalised goodputs `g` and the jobs' restart states (row i: `jobs[i]`;
 * rows beyond `jobs` have none): `u_ij = G_ij^p · r_i^p` on every column but the job's current one, `G_ij^p`
 * there (README.md, "What a round does", step 3: `(r_i·G_ij)^p`, the same value up to the last bits), bit for bit
 * what run_round computes;
 * with `round` `(r_i·G_ij)^p` as written, rounded to 2 decimals (the reference's arithmetic: equal to
 * utility_matrix() after apply_restart_factors()). Entries with `r_i·G_ij <= 0` are 0 (not usable: with r = 0
 * only the current configuration stays usable). Clipped for p < 0 like utility_matrix().
 * @throws InvalidArgument as utility_matrix().
 */
[[nodiscard]] inline GoodputMatrix utility_matrix(const GoodputMatrix& g, std::span<const RestartInput> jobs, double p,
                                                  bool round = false, std::span<const std::string> job_ids = {}) {
  detail::check_exponent(p);
  GoodputMatrix u = GoodputMatrix::Zero(g.rows(), g.cols());
  for (Eigen::Index i = 0; i < g.rows(); ++i) {
    const RestartInput* s = static_cast<std::size_t>(i) < jobs.size() ? &jobs[static_cast<std::size_t>(i)] : nullptr;
    const int current = s != nullptr ? s->current : -1;
    const double r = current >= 0 ? restart_factor(s->age_s, s->restarts, s->restart_cost_s) : 1.0;
    const double rp = detail::restart_power(r, p);
    for (Eigen::Index j = 0; j < g.cols(); ++j) {
      const double v = g(i, j);
      const double rj = j == current ? 1.0 : r;
      if (v * rj > 0.0)
        u(i, j) = detail::restarted_utility_of(v, std::pow(v, p), rj, j == current ? 1.0 : rp, p, round, i, j, job_ids);
    }
  }
  return u;
}

/// @brief utility_matrix(g, jobs, p) for the sparse matrix: same sparsity pattern as `g` (entries with
/// `r·G <= 0` are stored as 0).
[[nodiscard]] inline SparseGoodputMatrix utility_matrix(const SparseGoodputMatrix& g,
                                                        std::span<const RestartInput> jobs, double p,
                                                        bool round = false, std::span<const std::string> job_ids = {}) {
  detail::check_exponent(p);
  SparseGoodputMatrix u = g;
  for (Eigen::Index i = 0; i < u.outerSize(); ++i) {
    const RestartInput* s = static_cast<std::size_t>(i) < jobs.size() ? &jobs[static_cast<std::size_t>(i)] : nullptr;
    const int current = s != nullptr ? s->current : -1;
    const double r = current >= 0 ? restart_factor(s->age_s, s->restarts, s->restart_cost_s) : 1.0;
    const double rp = detail::restart_power(r, p);
    for (SparseGoodputMatrix::InnerIterator it(u, i); it; ++it) {
      const double v = it.value();
      const double rj = it.col() == current ? 1.0 : r;
      it.valueRef() = v * rj > 0.0 ? detail::restarted_utility_of(v, std::pow(v, p), rj, it.col() == current ? 1.0 : rp,
                                                                  p, round, i, it.col(), job_ids)
                                   : 0.0;
    }
  }
  return u;
}

}  // namespace sia
