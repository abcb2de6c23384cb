#pragma once
/// @file milp/model.hpp
/// @brief MilpModel: a solver-neutral mixed-integer linear program, built fresh each round.

#include <limits>
#include <string>
#include <vector>

namespace sia {

/// Optimisation direction.
enum class MilpSense { maximize, minimize };

/**
 * @brief `opt  obj·x + obj_offset  s.t.  row_lower <= A x <= row_upper,  col_lower <= x <= col_upper`,
 * with `x_j` integer where `is_integer[j]`. A is given as (row, col, value) triplets; duplicates
 * are summed. Infinite bounds use `MilpModel::inf`.
 */
struct MilpModel {
  static constexpr double inf = std::numeric_limits<double>::infinity();
  struct Entry {
    int row = 0;
    int col = 0;
    double value = 0.0;
  };

  MilpSense sense = MilpSense::maximize;
  double obj_offset = 0.0;
  std::vector<double> obj, col_lower, col_upper;
  std::vector<char> is_integer;
  std::vector<double> row_lower, row_upper;
  std::vector<Entry> entries;
  std::vector<std::string> col_names, row_names;  ///< optional; empty or one per column/row

  /// Adds a column; returns its index.
  int add_col(double cost, double lower, double upper, bool integer, std::string name = {});
  /// Adds a row `lower <= a·x <= upper`; returns its index.
  int add_row(double lower, double upper, std::string name = {});
  /// Adds coefficient `value` at (row, col).
  void add_entry(int row, int col, double value);

  [[nodiscard]] int num_cols() const noexcept { return static_cast<int>(obj.size()); }
  [[nodiscard]] int num_rows() const noexcept { return static_cast<int>(row_lower.size()); }

  /// Checks sizes, indices, bounds and finiteness. @throws InvalidArgument naming the row/column.
  void validate() const;
  /// Objective value (including obj_offset) of `x`.
  [[nodiscard]] double objective_of(const std::vector<double>& x) const;
  /// True when `x` satisfies bounds, integrality and rows within `tol`.
  [[nodiscard]] bool is_feasible(const std::vector<double>& x, double tol = 1e-6) const;
};

}  // namespace sia
