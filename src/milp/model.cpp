// MilpModel building, validation and evaluation.
#include <sia/error.hpp>
#include <sia/milp/model.hpp>

#include <cmath>
#include <string>

#include "milp/model_checks.hpp"
#include "milp/rounding.hpp"

namespace sia {
namespace {
std::string col_label(const MilpModel& m, int j) {
  std::string s = "column " + std::to_string(j);
  if (static_cast<std::size_t>(j) < m.col_names.size() && !m.col_names[static_cast<std::size_t>(j)].empty())
    s += " ('" + m.col_names[static_cast<std::size_t>(j)] + "')";
  return s;
}
std::string row_label(const MilpModel& m, int i) {
  std::string s = "row " + std::to_string(i);
  if (static_cast<std::size_t>(i) < m.row_names.size() && !m.row_names[static_cast<std::size_t>(i)].empty())
    s += " ('" + m.row_names[static_cast<std::size_t>(i)] + "')";
  return s;
}
}  // namespace

int MilpModel::add_col(double cost, double lower, double upper, bool integer, std::string name) {
  obj.push_back(cost);
  col_lower.push_back(lower);
  col_upper.push_back(upper);
  is_integer.push_back(integer ? 1 : 0);
  if (!name.empty() || !col_names.empty()) {
    col_names.resize(obj.size() - 1);
    col_names.push_back(std::move(name));
  }
  return static_cast<int>(obj.size()) - 1;
}

int MilpModel::add_row(double lower, double upper, std::string name) {
  row_lower.push_back(lower);
  row_upper.push_back(upper);
  if (!name.empty() || !row_names.empty()) {
    row_names.resize(row_lower.size() - 1);
    row_names.push_back(std::move(name));
  }
  return static_cast<int>(row_lower.size()) - 1;
}

void MilpModel::add_entry(int row, int col, double value) { entries.push_back({row, col, value}); }

namespace {

// The checks of MilpModel::validate() after its sizes (model_checks.hpp), accumulated without
// branches; the sizes must already agree.
bool valid_quickly(const MilpModel& m) noexcept {
  bool ok = true;
  for (std::size_t j = 0; j < m.obj.size(); ++j) {
    ok &= detail::cost_valid(m.obj[j]);  // (no branch per value: one flag over all of them)
    ok &= detail::bounds_valid(m.col_lower[j], m.col_upper[j]);
  }
  for (std::size_t i = 0; i < m.row_lower.size(); ++i) ok &= detail::bounds_valid(m.row_lower[i], m.row_upper[i]);
  const auto rows = static_cast<unsigned>(m.num_rows()), cols = static_cast<unsigned>(m.num_cols());
  for (const auto& e : m.entries) ok &= detail::entry_valid(e, rows, cols);
  return ok;
}

}  // namespace

void MilpModel::validate() const {
  const auto n = obj.size();
  if (col_lower.size() != n || col_upper.size() != n || is_integer.size() != n)
    throw InvalidArgument("MilpModel: column arrays have different sizes");
  if (row_upper.size() != row_lower.size()) throw InvalidArgument("MilpModel: row arrays have different sizes");
  if (!col_names.empty() && col_names.size() != n) throw InvalidArgument("MilpModel: col_names size mismatch");
  if (!row_names.empty() && row_names.size() != row_lower.size())
    throw InvalidArgument("MilpModel: row_names size mismatch");
  if (!std::isfinite(obj_offset)) throw InvalidArgument("MilpModel: objective offset is not finite");
  // One branch-free pass first (a round's model has millions of numbers); only a model that fails
  // it is walked again, in order, for the message naming the first offence.
  if (valid_quickly(*this)) return;
  for (std::size_t j = 0; j < n; ++j) {
    const int jj = static_cast<int>(j);
    if (!std::isfinite(obj[j])) throw InvalidArgument("MilpModel: " + col_label(*this, jj) + " has a non-finite cost");
    if (std::isnan(col_lower[j]) || std::isnan(col_upper[j]) || col_lower[j] > col_upper[j] || col_lower[j] == inf ||
        col_upper[j] == -inf)
      throw InvalidArgument("MilpModel: " + col_label(*this, jj) + " has invalid bounds [" +
                            std::to_string(col_lower[j]) + ", " + std::to_string(col_upper[j]) + "]");
  }
  for (std::size_t i = 0; i < row_lower.size(); ++i) {
    if (std::isnan(row_lower[i]) || std::isnan(row_upper[i]) || row_lower[i] > row_upper[i] || row_lower[i] == inf ||
        row_upper[i] == -inf)
      throw InvalidArgument("MilpModel: " + row_label(*this, static_cast<int>(i)) + " has invalid bounds [" +
                            std::to_string(row_lower[i]) + ", " + std::to_string(row_upper[i]) + "]");
  }
  for (const auto& e : entries) {
    if (e.row < 0 || e.row >= num_rows() || e.col < 0 || e.col >= num_cols())
      throw InvalidArgument("MilpModel: coefficient at (" + std::to_string(e.row) + ", " + std::to_string(e.col) +
                            ") is outside the " + std::to_string(num_rows()) + " x " + std::to_string(num_cols()) +
                            " matrix");
    if (!std::isfinite(e.value))
      throw InvalidArgument("MilpModel: coefficient at " + row_label(*this, e.row) + ", " + col_label(*this, e.col) +
                            " is not finite");
  }
}

double MilpModel::objective_of(const std::vector<double>& x) const {
  double v = obj_offset;
  for (std::size_t j = 0; j < obj.size() && j < x.size(); ++j) v += obj[j] * x[j];
  return v;
}

bool MilpModel::is_feasible(const std::vector<double>& x, double tol) const {
  if (x.size() != obj.size()) return false;
  for (std::size_t j = 0; j < x.size(); ++j) {
    if (!std::isfinite(x[j]) || x[j] < col_lower[j] - tol || x[j] > col_upper[j] + tol) return false;
    if (is_integer[j] && std::abs(x[j] - detail::nearest_integer(x[j])) > tol) return false;
  }
  std::vector<double> act(row_lower.size(), 0.0);
  for (const auto& e : entries) act[static_cast<std::size_t>(e.row)] += e.value * x[static_cast<std::size_t>(e.col)];
  for (std::size_t i = 0; i < act.size(); ++i)
    if (act[i] < row_lower[i] - tol || act[i] > row_upper[i] + tol) return false;
  return true;
}

}  // namespace sia
