#pragma once
// Private: the layout of a model as the code that wrote it knows it (the round's formulation,
// core/formulation.cpp), for a backend that reads models (the native one, through
// ReadingSolver::CallerHints) instead of finding the layout by reading every entry.
#include <sia/milp/model.hpp>

#include <array>
#include <cstddef>
#include <functional>
#include <span>
#include <utility>

namespace sia::detail {

/// What a model's writer promises about it, for `model` as it was written (its objective aside):
///  - rows [0, R), R = choice.size(), are choice rows: row r's entries are the model's next
///    choice[r][2] entries (row r, columns choice[r][1], choice[r][1] + 1, ..., value 1.0), the rows'
///    entries one row after another from the model's first entry (choice[r][0] == r);
///  - every other entry is a capacity entry: column by column, ascending, each column's rows
///    ascending, all of them rows >= R; column j's are the entries [cap_begin[j], cap_begin[j + 1]),
///    finite and > 0; every row >= R has at least one;
///  - every entry lies inside the matrix and appears once;
///  - every column is integer, with bounds [1, 1] for the columns listed in `pinned` (ascending) and
///    [0, 1] for every other.
/// The rows' bounds and the costs are not promised: the reader checks them as usual.
///
/// A model may come partial (`complete` set): what the layout promises of the choice rows' entries
/// (their places in `entries`; with `charge`, of the capacity entries too), of the columns' bounds
/// and of is_integer is then not written yet —
/// those arrays have their sizes but hold anything. A reader that takes the layout reads only the
/// rest (the costs, the rows' bounds, the capacity entries); before it reads anything else of the
/// model, by whatever path, it calls complete(), which writes what is promised (the writer's own
/// code, idempotent). A round with the native backend so writes a quarter less of its model.
struct ModelLayout {
  const MilpModel* model = nullptr;                         ///< the model described (by address)
  std::size_t num_rows = 0, num_cols = 0, num_entries = 0;  ///< its sizes when written (a guard)
  std::span<const std::array<int, 3>> choice;               ///< per choice row: (row, first column, columns)
  std::span<const int> cap_begin;                           ///< per column (+1): its capacity entries
  std::span<const int> pinned;                              ///< the columns fixed to 1, ascending
  /// Optional (empty: not given): the capacity entries as their writer keeps them, column j's the
  /// entries charge[q], q in [charge_range[j].first, charge_range[j].second) — the rows and values
  /// of the model's entries [cap_begin[j], cap_begin[j + 1]), in their order (their `col` not kept).
  /// A partial model's capacity entries are then not written either.
  std::span<const std::pair<int, int>> charge_range;
  std::span<const MilpModel::Entry> charge;
  /// Set while the model is partial: writes the rest (see above). Empty: the model is whole.
  std::function<void()> complete;

  /// Makes the model whole (a no-op when it is): before anything but the layout's own reading.
  void make_whole() const {
    if (complete) complete();
  }

  /// Does this describe `m` (the same object, of the sizes written)?
  [[nodiscard]] bool describes(const MilpModel& m) const noexcept {
    return model == &m && num_rows == m.row_lower.size() && num_rows == m.row_upper.size() &&
           num_cols == m.obj.size() && num_entries == m.entries.size() && cap_begin.size() == num_cols + 1 &&
           choice.size() <= num_rows && (charge_range.empty() || charge_range.size() == num_cols);
  }
};

}  // namespace sia::detail
