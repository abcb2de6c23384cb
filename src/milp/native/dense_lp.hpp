#pragma once
// Private to the native backend: a small dense two-phase simplex, used for the Kelley master
// problems (K+1 variables, a few hundred cuts) and for the LP-based fallback on small models that
// are not round-shaped. Not meant for large LPs: every pivot touches the whole tableau.
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace sia::detail::native {

enum class DenseLpStatus { optimal, infeasible, unbounded, iteration_limit };

struct DenseLpResult {
  DenseLpStatus status = DenseLpStatus::infeasible;
  double value = 0.0;
  std::vector<double> x;
  std::vector<double> y;  ///< optimal duals of the rows (>= 0, y·A >= c, y·b = value)
};

/**
 * @brief Solves `max c·x  s.t.  A x <= b, x >= 0` (A is m x n, row-major; b of any sign).
 *
 * Dictionary simplex with Dantzig pricing and index tie-breaking, phase 1 through one auxiliary
 * variable. Tolerance `eps` decides signs of reduced costs and pivot elements.
 */
class DenseLp {
 public:
  DenseLp(int m, int n, const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& c,
          double eps = 1e-9) {
    load(m, n, a, b, c, eps);
  }
  /// An empty LP, for load(): one object solves LP after LP in the same storage.
  DenseLp() = default;

  /// The LP `max c·x  s.t.  A x <= b, x >= 0` in place of the one before (its storage reused).
  void load(int m, int n, const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& c,
            double eps = 1e-9) {
    m_ = m;
    n_ = n;
    eps_ = eps;
    basis_.resize(static_cast<std::size_t>(m));
    nonbasis_.resize(static_cast<std::size_t>(n) + 1);
    d_.assign(static_cast<std::size_t>(m + 2) * static_cast<std::size_t>(n + 2), 0.0);
    for (int i = 0; i < m_; ++i) {
      for (int j = 0; j < n_; ++j)
        at(i, j) = a[static_cast<std::size_t>(i) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(j)];
      basis_[static_cast<std::size_t>(i)] = n_ + i;
      at(i, n_) = -1.0;
      at(i, n_ + 1) = b[static_cast<std::size_t>(i)];
    }
    for (int j = 0; j < n_; ++j) {
      nonbasis_[static_cast<std::size_t>(j)] = j;
      at(m_, j) = -c[static_cast<std::size_t>(j)];
    }
    nonbasis_[static_cast<std::size_t>(n_)] = -1;
    at(m_ + 1, n_) = 1.0;
  }

  DenseLpResult solve(long max_pivots = 100000) {
    DenseLpResult res;
    solve(res, max_pivots);
    return res;
  }

  /// solve() into `res` (its vectors' storage reused).
  void solve(DenseLpResult& res, long max_pivots = 100000) {
    res.status = DenseLpStatus::infeasible;
    res.value = 0.0;
    res.x.clear();
    res.y.clear();
    pivots_left_ = max_pivots;
    int r = 0;
    for (int i = 1; i < m_; ++i)
      if (at(i, n_ + 1) < at(r, n_ + 1)) r = i;
    if (m_ > 0 && at(r, n_ + 1) < -eps_) {
      pivot(r, n_);
      const int ph1 = simplex(1);
      if (ph1 == 2) {
        res.status = DenseLpStatus::iteration_limit;
        return;
      }
      if (ph1 == 1 || at(m_ + 1, n_ + 1) < -eps_) {
        res.status = DenseLpStatus::infeasible;
        return;
      }
      for (int i = 0; i < m_; ++i)
        if (basis_[static_cast<std::size_t>(i)] == -1) {
          int s = -1;
          for (int j = 0; j <= n_; ++j)
            if (s == -1 || at(i, j) < at(i, s) ||
                (at(i, j) == at(i, s) &&
                 nonbasis_[static_cast<std::size_t>(j)] < nonbasis_[static_cast<std::size_t>(s)]))
              s = j;
          pivot(i, s);
        }
    }
    const int ph2 = simplex(2);
    if (ph2 == 2) {
      res.status = DenseLpStatus::iteration_limit;
      return;
    }
    if (ph2 == 1) {
      res.status = DenseLpStatus::unbounded;
      return;
    }
    res.status = DenseLpStatus::optimal;
    res.x.assign(static_cast<std::size_t>(n_), 0.0);
    for (int i = 0; i < m_; ++i)
      if (basis_[static_cast<std::size_t>(i)] >= 0 && basis_[static_cast<std::size_t>(i)] < n_)
        res.x[static_cast<std::size_t>(basis_[static_cast<std::size_t>(i)])] = at(i, n_ + 1);
    res.value = at(m_, n_ + 1);
    // Duals: the objective row's entry of each nonbasic slack; basic slacks have dual 0.
    res.y.assign(static_cast<std::size_t>(m_), 0.0);
    for (int j = 0; j <= n_; ++j) {
      const int v = nonbasis_[static_cast<std::size_t>(j)];
      if (v >= n_) res.y[static_cast<std::size_t>(v - n_)] = at(m_, j);
    }
    return;
  }

 private:
  double& at(int i, int j) {
    return d_[static_cast<std::size_t>(i) * static_cast<std::size_t>(n_ + 2) + static_cast<std::size_t>(j)];
  }

  void pivot(int r, int s) {
    const double inv = 1.0 / at(r, s);
    // The Kelley masters have K + 3 columns: rows of a width known when compiling (unrolled, in vector
    // registers: the same operations on each entry, so the same numbers).
    switch (n_ + 2) {
      case 4:
        eliminate<4>(r, s, inv);
        break;
      case 5:
        eliminate<5>(r, s, inv);
        break;
      case 6:
        eliminate<6>(r, s, inv);
        break;
      case 7:
        eliminate<7>(r, s, inv);
        break;
      case 8:
        eliminate<8>(r, s, inv);
        break;
      default:
        eliminate<0>(r, s, inv);
        break;
    }
    const int w = n_ + 2;
    double* row_r = &d_[static_cast<std::size_t>(r) * static_cast<std::size_t>(w)];
    for (int j = 0; j < w; ++j)
      if (j != s) row_r[j] *= inv;
    at(r, s) = inv;
    std::swap(basis_[static_cast<std::size_t>(r)], nonbasis_[static_cast<std::size_t>(s)]);
  }

  // Every row but r: row_i -= row_r * (row_i[s] / pivot) off column s, and row_i[s] *= -1 / pivot.
  // The loop covers column s too (no test per entry), whose entry is then overwritten. W = 0: any width.
  template <int W>
  void eliminate(int r, int s, double inv) {
    const int w = W > 0 ? W : n_ + 2;
    const double* row_r = &d_[static_cast<std::size_t>(r) * static_cast<std::size_t>(w)];
    double* row_i = d_.data();
    for (int i = 0; i < m_ + 2; ++i, row_i += w) {
      if (i == r) continue;
      const double keep = row_i[s];
      const double f = keep * inv;
      if (f != 0.0)
        for (int j = 0; j < w; ++j) row_i[j] -= row_r[j] * f;
      row_i[s] = keep * -inv;
    }
  }

  // 0 = optimal, 1 = unbounded, 2 = pivot limit.
  int simplex(int phase) {
    const int x = phase == 1 ? m_ + 1 : m_;
    for (;;) {
      if (pivots_left_-- <= 0) return 2;
      int s = -1;
      for (int j = 0; j <= n_; ++j) {
        if (phase == 2 && nonbasis_[static_cast<std::size_t>(j)] == -1) continue;
        if (s == -1 || at(x, j) < at(x, s) ||
            (at(x, j) == at(x, s) && nonbasis_[static_cast<std::size_t>(j)] < nonbasis_[static_cast<std::size_t>(s)]))
          s = j;
      }
      if (s == -1 || at(x, s) > -eps_) return 0;
      int r = -1;
      double rr = 0.0;  // row r's ratio
      for (int i = 0; i < m_; ++i) {
        if (at(i, s) < eps_) continue;
        const double ri = at(i, n_ + 1) / at(i, s);
        if (r == -1 || ri < rr ||
            (ri == rr && basis_[static_cast<std::size_t>(i)] < basis_[static_cast<std::size_t>(r)])) {
          r = i;
          rr = ri;
        }
      }
      if (r == -1) return 1;
      pivot(r, s);
    }
  }

  int m_ = 0, n_ = 0;
  double eps_ = 1e-9;
  long pivots_left_ = 0;
  std::vector<int> basis_, nonbasis_;
  std::vector<double> d_;
};

}  // namespace sia::detail::native
