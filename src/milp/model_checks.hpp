#pragma once
// Private: MilpModel::validate()'s tests of its numbers, one definition for validate() and for a
// backend that checks the numbers as it reads them (reading_solver.hpp). Branch-free: NaN fails
// every comparison, and x - x is 0 only for a finite x.
#include <sia/milp/model.hpp>

namespace sia::detail {

/// validate()'s tests before the numbers: the arrays' sizes agree and the offset is finite.
[[nodiscard]] inline bool model_sizes_valid(const MilpModel& m) noexcept {
  const auto n = m.obj.size();
  return m.col_lower.size() == n && m.col_upper.size() == n && m.is_integer.size() == n &&
         m.row_upper.size() == m.row_lower.size() && (m.col_names.empty() || m.col_names.size() == n) &&
         (m.row_names.empty() || m.row_names.size() == m.row_lower.size()) && m.obj_offset - m.obj_offset == 0.0;
}
/// A finite cost.
[[nodiscard]] inline bool cost_valid(double c) noexcept { return c - c == 0.0; }
/// Bounds of a column or a row: neither NaN, lower <= upper, lower not +inf, upper not -inf.
[[nodiscard]] inline bool bounds_valid(double lo, double up) noexcept {
  return (lo <= up) & (lo != MilpModel::inf) & (up != -MilpModel::inf);
}
/// An entry inside the rows x cols matrix with a finite value.
[[nodiscard]] inline bool entry_valid(const MilpModel::Entry& e, unsigned rows, unsigned cols) noexcept {
  return (static_cast<unsigned>(e.row) < rows) & (static_cast<unsigned>(e.col) < cols) & (e.value - e.value == 0.0);
}

}  // namespace sia::detail
