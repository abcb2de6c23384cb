#pragma once
// Private to the native backend: LP-based branch and bound for small models that are not
// round-shaped (general bounds, integer or continuous columns, any rows). Depth-first, branching
// on the most fractional integer column; every node rebuilds a dense LP, so it is meant for a few
// dozen columns only: larger non-round models are rejected with a clear message.
#include <sia/milp/model.hpp>
#include <sia/milp/solver.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "milp/native/deadline.hpp"
#include "milp/native/dense_lp.hpp"

namespace sia::detail::native {

inline constexpr int kFallbackMaxCols = 60;
inline constexpr int kFallbackMaxRows = 120;

class FallbackBnb {
 public:
  FallbackBnb(const MilpModel& m, const MilpParams& params) : m_(m), params_(params) {
    sign_ = m.sense == MilpSense::maximize ? 1.0 : -1.0;
    deadline_ = Deadline(
        params.time_limit ? std::optional(std::chrono::steady_clock::now() + *params.time_limit) : std::nullopt,
        params.stop);
  }

  MilpResult run() {
    MilpResult res;
    std::vector<double> lo(m_.col_lower), hi(m_.col_upper);
    for (int j = 0; j < m_.num_cols(); ++j)
      if (m_.is_integer[static_cast<std::size_t>(j)]) {
        lo[static_cast<std::size_t>(j)] = std::ceil(lo[static_cast<std::size_t>(j)] - 1e-9);
        hi[static_cast<std::size_t>(j)] = std::floor(hi[static_cast<std::size_t>(j)] + 1e-9);
      }
    root_unbounded_ = false;
    node(lo, hi, true);
    res.nodes = nodes_;
    if (root_unbounded_) {
      res.status = MilpStatus::unbounded;
      res.message = "LP relaxation is unbounded";
      return res;
    }
    if (!best_x_.empty()) {
      res.values = best_x_;
      res.objective = m_.objective_of(best_x_);
      res.status = aborted_ ? MilpStatus::feasible : MilpStatus::optimal;
      res.best_bound = m_.obj_offset + sign_ * (aborted_ ? root_bound_ : std::max(best_, open_bound_));
    } else {
      res.status = aborted_ ? MilpStatus::no_solution : MilpStatus::infeasible;
    }
    res.message = "solved by the native backend's general LP-based branch and bound (model is not round-shaped)";
    if (aborted_) res.message += "; stopped by a limit";
    return res;
  }

 private:
  // LP relaxation with column bounds [lo, hi]: returns internal max value, or nullopt if infeasible.
  std::optional<std::pair<double, std::vector<double>>> lp(const std::vector<double>& lo, const std::vector<double>& hi,
                                                           bool& unbounded) {
    const int n = m_.num_cols();
    // x_j = base_j + dir_j * y_j (+ second variable for free columns).
    std::vector<double> base(static_cast<std::size_t>(n), 0.0), dir(static_cast<std::size_t>(n), 1.0);
    std::vector<int> var(static_cast<std::size_t>(n)), var2(static_cast<std::size_t>(n), -1);
    int nv = 0;
    for (int j = 0; j < n; ++j) {
      const auto ju = static_cast<std::size_t>(j);
      var[ju] = nv++;
      if (std::isfinite(lo[ju])) {
        base[ju] = lo[ju];
      } else if (std::isfinite(hi[ju])) {
        base[ju] = hi[ju];
        dir[ju] = -1.0;
      } else {
        var2[ju] = nv++;
      }
    }
    std::vector<std::vector<double>> rows;
    std::vector<double> rhs;
    auto add = [&](std::vector<double> r, double b) {
      rows.push_back(std::move(r));
      rhs.push_back(b);
    };
    for (int j = 0; j < n; ++j) {
      const auto ju = static_cast<std::size_t>(j);
      if (std::isfinite(lo[ju]) && std::isfinite(hi[ju])) {
        std::vector<double> r(static_cast<std::size_t>(nv), 0.0);
        r[static_cast<std::size_t>(var[ju])] = 1.0;
        add(std::move(r), hi[ju] - lo[ju]);
      }
    }
    std::vector<std::vector<double>> a(static_cast<std::size_t>(m_.num_rows()),
                                       std::vector<double>(static_cast<std::size_t>(nv), 0.0));
    std::vector<double> shift(static_cast<std::size_t>(m_.num_rows()), 0.0);
    for (const auto& e : m_.entries) {
      const auto ju = static_cast<std::size_t>(e.col);
      auto& r = a[static_cast<std::size_t>(e.row)];
      r[static_cast<std::size_t>(var[ju])] += e.value * dir[ju];
      if (var2[ju] >= 0) r[static_cast<std::size_t>(var2[ju])] -= e.value;
      shift[static_cast<std::size_t>(e.row)] += e.value * base[ju];
    }
    for (int i = 0; i < m_.num_rows(); ++i) {
      const auto iu = static_cast<std::size_t>(i);
      if (std::isfinite(m_.row_upper[iu])) add(a[iu], m_.row_upper[iu] - shift[iu]);
      if (std::isfinite(m_.row_lower[iu])) {
        std::vector<double> r(a[iu]);
        for (double& x : r) x = -x;
        add(std::move(r), shift[iu] - m_.row_lower[iu]);
      }
    }
    std::vector<double> c(static_cast<std::size_t>(nv), 0.0);
    double c0 = 0.0;
    for (int j = 0; j < n; ++j) {
      const auto ju = static_cast<std::size_t>(j);
      const double cj = sign_ * m_.obj[ju];
      c[static_cast<std::size_t>(var[ju])] += cj * dir[ju];
      if (var2[ju] >= 0) c[static_cast<std::size_t>(var2[ju])] -= cj;
      c0 += cj * base[ju];
    }
    const int mm = static_cast<int>(rows.size());
    std::vector<double> flat(static_cast<std::size_t>(mm) * static_cast<std::size_t>(nv));
    for (int i = 0; i < mm; ++i)
      for (int j = 0; j < nv; ++j)
        flat[static_cast<std::size_t>(i * nv + j)] = rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
    // The dense simplex decides the signs of reduced costs with an absolute tolerance: objective
    // coefficients of 1e9 and more (Shockwave-like weights) leave rounding noise above it, and it then
    // reported feasible bounded models as unbounded or infeasible. Scaling the objective by a power of two
    // (exact, the same optimal vertices) to a largest coefficient in [1, 2) keeps the tolerance meaningful.
    double cmax = 0.0;
    for (double v : c) cmax = std::max(cmax, std::abs(v));
    const double cscale = cmax > 0.0 && std::isfinite(cmax) ? std::ldexp(1.0, -std::ilogb(cmax)) : 1.0;
    for (double& v : c) v *= cscale;
    DenseLp solver(mm, nv, flat, rhs, c);
    auto sol = solver.solve();
    sol.value /= cscale;
    if (sol.status == DenseLpStatus::unbounded) {
      unbounded = true;
      return std::nullopt;
    }
    if (sol.status != DenseLpStatus::optimal) return std::nullopt;
    std::vector<double> x(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) {
      const auto ju = static_cast<std::size_t>(j);
      x[ju] = base[ju] + dir[ju] * sol.x[static_cast<std::size_t>(var[ju])];
      if (var2[ju] >= 0) x[ju] -= sol.x[static_cast<std::size_t>(var2[ju])];
    }
    return std::make_pair(sol.value + c0, std::move(x));
  }

  double tolerance(double z) const {
    return std::max(params_.relative_gap * std::abs(m_.obj_offset + sign_ * z), 1e-9 * (1.0 + std::abs(z)));
  }

  void node(std::vector<double>& lo, std::vector<double>& hi, bool root) {
    if (aborted_) return;
    if (++nodes_ > 20000 || deadline_.passed()) {
      aborted_ = true;
      return;
    }
    bool unbounded = false;
    auto r = lp(lo, hi, unbounded);
    if (unbounded && root) root_unbounded_ = true;
    if (!r) return;
    const double bound = r->first;
    if (root) root_bound_ = bound;
    if (!best_x_.empty() && bound <= best_ + tolerance(best_)) {
      open_bound_ = std::max(open_bound_, bound);
      return;
    }
    auto& x = r->second;
    int branch = -1;
    double frac_best = 1e-6;
    for (int j = 0; j < m_.num_cols(); ++j) {
      if (!m_.is_integer[static_cast<std::size_t>(j)]) continue;
      const double f = std::abs(x[static_cast<std::size_t>(j)] - std::round(x[static_cast<std::size_t>(j)]));
      if (f > frac_best) {
        frac_best = f;
        branch = j;
      }
    }
    if (branch < 0) {
      for (int j = 0; j < m_.num_cols(); ++j)
        if (m_.is_integer[static_cast<std::size_t>(j)])
          x[static_cast<std::size_t>(j)] = std::round(x[static_cast<std::size_t>(j)]);
      if (m_.is_feasible(x, 1e-6)) {
        const double v = sign_ * (m_.objective_of(x) - m_.obj_offset);
        if (best_x_.empty() || v > best_) {
          best_ = v;
          best_x_ = x;
        }
      }
      return;
    }
    const auto bu = static_cast<std::size_t>(branch);
    const double xv = x[bu], old_lo = lo[bu], old_hi = hi[bu];
    const bool up_first = xv - std::floor(xv) >= 0.5;
    for (int side = 0; side < 2; ++side) {
      const bool up = (side == 0) == up_first;
      if (up)
        lo[bu] = std::ceil(xv);
      else
        hi[bu] = std::floor(xv);
      if (lo[bu] <= hi[bu]) node(lo, hi, false);
      lo[bu] = old_lo;
      hi[bu] = old_hi;
    }
  }

  const MilpModel& m_;
  const MilpParams& params_;
  double sign_ = 1.0;
  Deadline deadline_;
  long long nodes_ = 0;
  bool aborted_ = false, root_unbounded_ = false;
  double best_ = 0.0, root_bound_ = 0.0, open_bound_ = -std::numeric_limits<double>::infinity();
  std::vector<double> best_x_;
};

}  // namespace sia::detail::native
