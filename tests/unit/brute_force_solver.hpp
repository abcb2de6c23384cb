#pragma once
// Test-only exact MILP backend: depth-first enumeration of integer columns with bound
// propagation on the rows and an objective bound. Exponential, so only for small models (the
// round's models of a few jobs on small clusters). Register it with register_brute_force_solver()
// to run rounds with backend "bruteforce".
#include <sia/milp/factory.hpp>
#include <sia/milp/solver.hpp>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace sia::test {

class BruteForceSolver final : public MilpSolver {
 public:
  /// Nodes explored before giving up (status feasible with the incumbent, or no_solution).
  explicit BruteForceSolver(long long node_limit = 20'000'000) : node_limit_(node_limit) {}

 private:
  std::string_view do_name() const noexcept override { return "bruteforce"; }

  MilpResult do_solve(const MilpModel& m, const MilpParams&) override {
    MilpResult res;
    const int n = m.num_cols();
    const int rows = m.num_rows();
    for (int j = 0; j < n; ++j) {
      const auto jj = static_cast<std::size_t>(j);
      if (!m.is_integer[jj] || !std::isfinite(m.col_lower[jj]) || !std::isfinite(m.col_upper[jj]) ||
          m.col_upper[jj] - m.col_lower[jj] > 64) {
        res.status = MilpStatus::error;
        res.message = "bruteforce: only bounded integer columns are supported";
        return res;
      }
    }
    sign_ = m.sense == MilpSense::maximize ? 1.0 : -1.0;  // internally maximise sign*obj
    model_ = &m;
    lo_.resize(static_cast<std::size_t>(n));
    hi_.resize(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) {
      lo_[static_cast<std::size_t>(j)] = std::ceil(m.col_lower[static_cast<std::size_t>(j)] - 1e-9);
      hi_[static_cast<std::size_t>(j)] = std::floor(m.col_upper[static_cast<std::size_t>(j)] + 1e-9);
    }
    // Column-wise coefficients and, per row, the min/max activity the columns j.. can still add.
    cols_.assign(static_cast<std::size_t>(n), {});
    for (const auto& e : m.entries) cols_[static_cast<std::size_t>(e.col)].push_back({e.row, e.value});
    rest_min_.assign(static_cast<std::size_t>(n + 1), std::vector<double>(static_cast<std::size_t>(rows), 0.0));
    rest_max_ = rest_min_;
    obj_rest_.assign(static_cast<std::size_t>(n + 1), 0.0);
    for (int j = n - 1; j >= 0; --j) {
      const auto jj = static_cast<std::size_t>(j);
      rest_min_[jj] = rest_min_[jj + 1];
      rest_max_[jj] = rest_max_[jj + 1];
      for (auto [r, a] : cols_[jj]) {
        rest_min_[jj][static_cast<std::size_t>(r)] += std::min(a * lo_[jj], a * hi_[jj]);
        rest_max_[jj][static_cast<std::size_t>(r)] += std::max(a * lo_[jj], a * hi_[jj]);
      }
      const double c = sign_ * m.obj[jj];
      obj_rest_[jj] = obj_rest_[jj + 1] + std::max(c * lo_[jj], c * hi_[jj]);
    }
    act_.assign(static_cast<std::size_t>(rows), 0.0);
    x_.assign(static_cast<std::size_t>(n), 0.0);
    best_.clear();
    best_val_ = -std::numeric_limits<double>::infinity();
    nodes_ = 0;
    aborted_ = false;
    dfs(0, 0.0);
    res.nodes = nodes_;
    if (best_.empty()) {
      res.status = aborted_ ? MilpStatus::no_solution : MilpStatus::infeasible;
      return res;
    }
    res.status = aborted_ ? MilpStatus::feasible : MilpStatus::optimal;
    res.values = best_;
    res.objective = m.objective_of(best_);
    res.best_bound = aborted_ ? std::numeric_limits<double>::quiet_NaN() : res.objective;
    return res;
  }

  bool rows_possible(std::size_t next) const {
    const auto& m = *model_;
    for (std::size_t r = 0; r < act_.size(); ++r) {
      if (act_[r] + rest_max_[next][r] < m.row_lower[r] - 1e-9) return false;
      if (act_[r] + rest_min_[next][r] > m.row_upper[r] + 1e-9) return false;
    }
    return true;
  }

  void dfs(int j, double val) {
    if (aborted_) return;
    if (++nodes_ > node_limit_) {
      aborted_ = true;
      return;
    }
    const auto jj = static_cast<std::size_t>(j);
    if (!rows_possible(jj)) return;
    if (val + obj_rest_[jj] <= best_val_ + 1e-12) return;
    if (j == model_->num_cols()) {
      best_val_ = val;
      best_ = x_;
      return;
    }
    // Try the better objective direction first so good incumbents come early.
    const double c = sign_ * model_->obj[jj];
    const int count = static_cast<int>(hi_[jj] - lo_[jj]) + 1;
    for (int k = 0; k < count; ++k) {
      const double v = c > 0 ? hi_[jj] - k : lo_[jj] + k;
      x_[jj] = v;
      for (auto [r, a] : cols_[jj]) act_[static_cast<std::size_t>(r)] += a * v;
      dfs(j + 1, val + c * v);
      for (auto [r, a] : cols_[jj]) act_[static_cast<std::size_t>(r)] -= a * v;
    }
    x_[jj] = 0.0;
  }

  long long node_limit_;
  const MilpModel* model_ = nullptr;
  double sign_ = 1.0;
  std::vector<double> lo_, hi_, act_, x_, best_, obj_rest_;
  std::vector<std::vector<std::pair<int, double>>> cols_;
  std::vector<std::vector<double>> rest_min_, rest_max_;
  double best_val_ = 0.0;
  long long nodes_ = 0;
  bool aborted_ = false;
};

/// Registers BruteForceSolver as backend "bruteforce" (idempotent).
inline void register_brute_force_solver() {
  register_milp_solver("bruteforce", [] { return std::make_unique<BruteForceSolver>(); });
}

}  // namespace sia::test
