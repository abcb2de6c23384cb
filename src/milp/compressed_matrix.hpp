#pragma once
// Private: the constraint matrix of a MilpModel in compressed-column form, with duplicate
// triplets summed and exact zeros dropped. Both the CBC and the GLPK backend need exactly this
// (GLPK's glp_load_matrix rejects duplicates with an abort(), CoinPackedMatrix would keep them).
#include <sia/milp/model.hpp>
#include <sia/milp/solver.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace sia::detail {

struct CompressedColumns {
  std::vector<int> start;      ///< size num_cols + 1
  std::vector<int> row_index;  ///< row of each nonzero, ascending within a column
  std::vector<double> value;
};

/// Requires a validated model (indices in range).
inline CompressedColumns compress_columns(const MilpModel& m) {
  const auto ncols = static_cast<std::size_t>(m.num_cols());
  std::vector<std::size_t> order(m.entries.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& ea = m.entries[a];
    const auto& eb = m.entries[b];
    return ea.col != eb.col ? ea.col < eb.col : ea.row < eb.row;
  });
  CompressedColumns c;
  c.start.assign(ncols + 1, 0);
  c.row_index.reserve(order.size());
  c.value.reserve(order.size());
  std::vector<int> col_of;  // column of each stored nonzero, to build `start`
  col_of.reserve(order.size());
  for (std::size_t k = 0; k < order.size();) {
    const auto& e = m.entries[order[k]];
    double sum = 0.0;
    std::size_t k2 = k;
    while (k2 < order.size() && m.entries[order[k2]].col == e.col && m.entries[order[k2]].row == e.row)
      sum += m.entries[order[k2++]].value;
    k = k2;
    if (sum == 0.0) continue;
    c.row_index.push_back(e.row);
    c.value.push_back(sum);
    col_of.push_back(e.col);
  }
  for (int col : col_of) ++c.start[static_cast<std::size_t>(col) + 1];
  for (std::size_t j = 0; j < ncols; ++j) c.start[j + 1] += c.start[j];
  return c;
}

/// Solution of a model without columns: optimal (true) when every row admits activity 0.
inline bool empty_model_feasible(const MilpModel& m) {
  for (int i = 0; i < m.num_rows(); ++i)
    if (m.row_lower[static_cast<std::size_t>(i)] > 0.0 || m.row_upper[static_cast<std::size_t>(i)] < 0.0) return false;
  return true;
}

/// The result for a model without columns (the backends have nothing to branch on and some of
/// them reject empty problems): optimal at the offset when every row admits activity 0.
inline MilpResult empty_model_result(const MilpModel& m, const MilpParams& params) {
  MilpResult result;
  if (empty_model_feasible(m)) {
    result.status = MilpStatus::optimal;
    result.objective = result.best_bound = m.obj_offset;
    if (params.lp_duals) result.row_duals.assign(static_cast<std::size_t>(m.num_rows()), 0.0);
  } else {
    result.status = MilpStatus::infeasible;
    result.message = "a row excludes activity 0 and the model has no columns";
  }
  return result;
}

/// Rounds integer columns to the nearest integer and clamps every value into its bounds, so
/// callers get exact 0/1 decisions instead of 0.9999999 from the simplex tolerances.
inline void polish_values(const MilpModel& m, std::vector<double>& x) {
  for (std::size_t j = 0; j < x.size() && j < m.obj.size(); ++j) {
    if (m.is_integer[j]) x[j] = std::round(x[j]);
    x[j] = std::clamp(x[j], m.col_lower[j], m.col_upper[j]);
  }
}

/// True when `x` satisfies the bounds, integrality and rows of `m` up to a tolerance relative to
/// the magnitude of each row (backends' own feasibility checks work with scaled tolerances, so
/// an absolute 1e-6 on large rows would reject their correct answers).
inline bool solution_is_valid(const MilpModel& m, const std::vector<double>& x, double tol = 1e-6) {
  if (x.size() != m.obj.size()) return false;
  for (std::size_t j = 0; j < x.size(); ++j) {
    if (!std::isfinite(x[j])) return false;
    const double scale = std::max(1.0, std::abs(x[j]));
    if (x[j] < m.col_lower[j] - tol * scale || x[j] > m.col_upper[j] + tol * scale) return false;
    if (m.is_integer[j] && std::abs(x[j] - std::round(x[j])) > tol * scale) return false;
  }
  std::vector<double> act(m.row_lower.size(), 0.0), mag(m.row_lower.size(), 0.0);
  for (const auto& e : m.entries) {
    const double t = e.value * x[static_cast<std::size_t>(e.col)];
    act[static_cast<std::size_t>(e.row)] += t;
    mag[static_cast<std::size_t>(e.row)] += std::abs(t);
  }
  for (std::size_t i = 0; i < act.size(); ++i) {
    const double scale = std::max(1.0, mag[i]);
    if (act[i] < m.row_lower[i] - tol * scale || act[i] > m.row_upper[i] + tol * scale) return false;
  }
  return true;
}

/// The result of an LP solved to optimality with `values` (one per column): values polished into their
/// bounds (an interior point may sit a tolerance outside one), checked against the model, objective
/// computed; status `error` naming `who` when they violate the model.
inline MilpResult lp_optimum(const MilpModel& m, std::vector<double> values, const std::string& who) {
  MilpResult result;
  result.values = std::move(values);
  polish_values(m, result.values);
  if (!solution_is_valid(m, result.values)) {
    result.values.clear();
    result.status = MilpStatus::error;
    result.message = who + " returned a solution that violates the model";
    return result;
  }
  result.status = MilpStatus::optimal;
  result.objective = result.best_bound = m.objective_of(result.values);
  return result;
}

}  // namespace sia::detail
