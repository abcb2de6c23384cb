#pragma once
// Private to the native backend: the round's ILP seen as a multiple-choice multi-dimensional
// knapsack (MCKP), and its recognition from a generic MilpModel (recognise.cpp).
//
// Internally everything is a maximisation: item value = sign * model cost, sign = -1 for
// minimisation. Every group (one job) owns its items; a group that may stay empty owns an explicit
// "none" item (value 0, no usage, column -1) as its last item, so "at most one" and "exactly one"
// are the same thing for the algorithms: pick exactly one item per group.
//
// Storage is compact (compressed rows, no per-item allocation): a round of 20,000 jobs with 25
// configurations each is 500,000 items of about 40 bytes.
#include <sia/milp/model.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace sia::detail {
struct ModelLayout;
}  // namespace sia::detail

namespace sia::detail::native {

/// std::allocator, except that a value-initialisation (resize(n), emplace_back()) leaves a number
/// unwritten: the reading sizes the item arrays for every column once and writes each place itself
/// (zeroing them first cost about 0.3 ms a round at 20,000 jobs). Anything else is std::allocator's.
template <class T>
struct UnwrittenAllocator : std::allocator<T> {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = UnwrittenAllocator<U>;
  };
  UnwrittenAllocator() = default;
  template <class U>
  explicit UnwrittenAllocator(const UnwrittenAllocator<U>& /*other*/) noexcept {}
  template <class U>
  void construct(U* at) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(at)) U;
  }
  template <class U, class... Args>
  void construct(U* at, Args&&... args) {
    ::new (static_cast<void*>(at)) U(std::forward<Args>(args)...);
  }
};
/// A vector of numbers whose resize() leaves the new places unwritten (UnwrittenAllocator).
template <class T>
using ItemVector = std::vector<T, UnwrittenAllocator<T>>;

struct Problem {
  int num_rows = 0;          ///< K capacity rows
  std::vector<double> cap;   ///< K, remaining after pins
  double fixed_value = 0.0;  ///< internal value of pinned columns
  // Groups: items of group g are [group_begin[g], group_begin[g+1]).
  std::vector<int> group_begin{0};
  std::vector<int> group_row;  ///< model choice row of the group, -1 if none (singleton column)
  // Items.
  ItemVector<double> value;
  ItemVector<int> column;        ///< model column, -1 for the "none" item
  ItemVector<int> use_begin{0};  ///< compressed usage over capacity rows, rows ascending
  ItemVector<int> use_row;
  ItemVector<double> use_val;

  [[nodiscard]] int num_groups() const noexcept { return static_cast<int>(group_begin.size()) - 1; }
  [[nodiscard]] int num_items() const noexcept { return static_cast<int>(value.size()); }
  [[nodiscard]] int begin(int g) const noexcept { return group_begin[static_cast<std::size_t>(g)]; }
  [[nodiscard]] int end(int g) const noexcept { return group_begin[static_cast<std::size_t>(g) + 1]; }
  /// The "none" item is always the last item of its group.
  [[nodiscard]] bool has_none(int g) const noexcept { return column[static_cast<std::size_t>(end(g) - 1)] < 0; }

  void reserve(std::size_t groups, std::size_t items, std::size_t uses) {
    group_begin.reserve(groups + 1);
    group_row.reserve(groups);
    value.reserve(items);
    column.reserve(items);
    use_begin.reserve(items + 1);
    use_row.reserve(uses);
    use_val.reserve(uses);
  }
  /// Appends an item with usage given as (row, amount) pairs sorted by row.
  template <class UseRange>
  int add_item(double v, int col, const UseRange& use) {
    value.push_back(v);
    column.push_back(col);
    for (const auto& [r, a] : use) {
      use_row.push_back(r);
      use_val.push_back(a);
    }
    use_begin.push_back(static_cast<int>(use_row.size()));
    return num_items() - 1;
  }
  int add_none() {
    value.push_back(0.0);
    column.push_back(-1);
    use_begin.push_back(static_cast<int>(use_row.size()));
    return num_items() - 1;
  }
  void close_group(int model_row) {
    group_begin.push_back(num_items());
    group_row.push_back(model_row);
  }
};

/// Where a model read in the round's layout keeps each column's entries (recognise()): a solution
/// is checked against the model's own entries of its chosen columns, without a pass over all.
struct EntryIndex {
  std::vector<int> cap_begin;     ///< per column j (+1): its capacity-part entries [cap_begin[j], cap_begin[j+1])
  std::vector<int> choice_of;     ///< per column: its choice row (model row), -1 none
  std::vector<int> choice_rows;   ///< choice rows (model rows), ascending
  std::vector<int> choice_begin;  ///< per choice row (+1): its entries, columns ascending
  bool bounds_listed = false;     ///< other_bounds lists every column whose bounds are not exactly [0, 1]
  std::vector<int> other_bounds;  ///< those columns, ascending (pins, columns fixed to 0)
  [[nodiscard]] bool empty() const noexcept { return cap_begin.empty(); }
};

/// A start as a bit per column (ReadingSolver::StartBits' arrays, sized for the model's columns):
/// `ones` marks the columns at 1, `unknown` those the start does not know.
struct StartView {
  const std::uint64_t* ones = nullptr;
  const std::uint64_t* unknown = nullptr;
  [[nodiscard]] bool one(std::size_t c) const noexcept { return ((ones[c >> 6] >> (c & 63)) & 1) != 0; }
  [[nodiscard]] bool is_unknown(std::size_t c) const noexcept { return ((unknown[c >> 6] >> (c & 63)) & 1) != 0; }
};

/// The start's item of group g of `p`: its first item whose column the start has at 1 (`at_one(c)`);
/// else, when the start knows a column of one of its items (`known_at(c)`), its "none" item (-1 if
/// it has none); else -1. For any start: bits (StartView), values (> 0.5 and not NaN).
template <class AtOne, class KnownAt>
[[nodiscard]] int start_item(const Problem& p, int g, AtOne&& at_one, KnownAt&& known_at) {
  int none = -1;
  bool known = false;
  for (int it = p.begin(g); it < p.end(g); ++it) {
    const int c = p.column[static_cast<std::size_t>(it)];
    if (c < 0) {
      none = it;
      continue;
    }
    const auto cu = static_cast<std::size_t>(c);
    known = known || known_at(cu);
    if (at_one(cu)) return it;  // (the first such item; "none", the group's last item, is not needed then)
  }
  return known ? none : -1;
}
[[nodiscard]] inline int start_item(const Problem& p, const StartView& start, int g) noexcept {
  return start_item(
      p, g, [&start](std::size_t c) { return start.one(c); }, [&start](std::size_t c) { return !start.is_unknown(c); });
}

/// What recognition found in the model.
struct Shape {
  bool round_shaped = false;
  bool infeasible = false;       ///< proven while reading (pins over capacity, contradictory bounds)
  std::string why;               ///< reason for !round_shaped or infeasible
  double sign = 1.0;             ///< +1 maximise, -1 minimise
  std::vector<int> cap_rows;     ///< model row of each capacity row k
  std::vector<int> pinned_cols;  ///< columns fixed to 1
  bool in_layout = false;        ///< read in place, in the round's layout (recognise())
  bool from_layout = false;      ///< that layout taken from its writer's ModelLayout, not from the entries
  EntryIndex entries;            ///< when read in layout with every row kept, else empty
  Problem problem;
  /// Per group, start_item() of the start given to the reading (recognise_checked()'s `start`),
  /// found as the items are written; empty when none was given or the reading did not find them.
  std::vector<int> start_items;
};

/**
 * @brief Recognises the round's structure: binary columns; choice rows (all coefficients 1, upper
 * bound in [1,2), lower bound <= 0 or in (0,1] = forced; each column in at most one); capacity rows
 * (non-negative coefficients, lower bound <= 0, finite upper bound); pins as column bounds.
 * Items dominated within their group (same single capacity row, no more value for more usage, or
 * value <= 0 when the group may stay empty) are dropped: they can never improve a solution.
 */
[[nodiscard]] Shape recognise(const MilpModel& m);

/// m.validate() and then recognise(m): the same exceptions and the same Shape, for a model not yet
/// validated. A model read in the round's layout has its numbers checked as they are read (a
/// separate pass over them cost about a millisecond at 20,000 jobs); any other calls validate()
/// before reading further.
[[nodiscard]] Shape recognise_checked(const MilpModel& m);

/// recognise_checked(m), the same Shape, taking m's layout from `layout` (its writer's promise,
/// milp/model_layout.hpp) when it describes m instead of reading it from every entry: the entries'
/// numbers are then not checked (the writer vouches for them); the costs, the columns' and the
/// rows' bounds are. Null: recognise_checked(m). `threads` (Parallel's meaning: 0 all cores, 1 the
/// calling thread): a round's groups are then read in two halves side by side; the same Shape.
/// `index` false: no entry index (Shape::entries) is kept where the layout is taken from `layout`,
/// whose runs of columns are then read in place (the same Shape otherwise): for a caller that does
/// not check the solution with solution_feasible().
/// `start` (sized for m's columns): Shape::start_items is filled where the reading in layout writes
/// the items (the same Shape otherwise).
[[nodiscard]] Shape recognise_checked(const MilpModel& m, const ModelLayout* layout, int threads = 1, bool index = true,
                                      const StartView* start = nullptr);

/// MilpModel::is_feasible(x, tol), the same answer, for a model that recognise() read: with an
/// entry index (Shape::entries) and values of 0 and 1, only the entries of the columns at 1 are
/// read (the model's own, found through the index, summed in the model's order), every row's and
/// column's bounds checked; otherwise MilpModel::is_feasible. A pass over all the entries cost
/// 2-3 ms at 20,000 jobs.
[[nodiscard]] bool solution_feasible(const MilpModel& m, const EntryIndex& ix, const std::vector<double>& x,
                                     double tol);

/// solution_feasible(m, ix, x, tol), the same answer, for an x that is 1.0 at the columns `ones`
/// (ascending, each once) and +0.0 elsewhere, as the backend writes its answer: the columns at 1
/// are taken from `ones` instead of a pass over x (a list that is not ascending, or a listed
/// column not at 1, goes to that pass).
[[nodiscard]] bool solution_feasible(const MilpModel& m, const EntryIndex& ix, const std::vector<double>& x,
                                     const std::vector<int>& ones, double tol);

/// recognise() by compressed rows only, whatever the order of the model's entries: the general
/// reading. recognise() reads a model in the round's layout (core/formulation.cpp) in place and
/// finds the same Shape (tested against this).
[[nodiscard]] Shape recognise_by_rows(const MilpModel& m);

}  // namespace sia::detail::native
