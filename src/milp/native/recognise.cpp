// Recognition of the round's multiple-choice knapsack structure in a generic MilpModel
// (problem.hpp). Everything is kept in compressed arrays: a model of millions of columns is read
// without one allocation per row or column.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "milp/model_checks.hpp"
#include "milp/model_layout.hpp"
#include "milp/native/parallel.hpp"
#include "milp/native/problem.hpp"

namespace sia::detail::native {
namespace {

constexpr double kTol = 1e-9;
// Choice rows from which a reading with more than one thread reads the groups in two halves side
// by side (fewer: the second thread would cost about what it saves).
constexpr std::size_t kSplitRows = 4096;

// Compressed rows of the model's entries, duplicates summed and zeros dropped, columns ascending.
struct RowMatrix {
  std::vector<int> begin;
  std::vector<int> col;
  std::vector<double> val;
};

RowMatrix row_matrix(const MilpModel& m) {
  const auto nr = static_cast<std::size_t>(m.num_rows());
  RowMatrix a;
  a.begin.assign(nr + 1, 0);
  for (const auto& e : m.entries) ++a.begin[static_cast<std::size_t>(e.row) + 1];
  std::partial_sum(a.begin.begin(), a.begin.end(), a.begin.begin());
  a.col.resize(m.entries.size());
  a.val.resize(m.entries.size());
  std::vector<int> fill(a.begin.begin(), a.begin.end() - 1);
  for (const auto& e : m.entries) {
    const auto at = static_cast<std::size_t>(fill[static_cast<std::size_t>(e.row)]++);
    a.col[at] = e.col;
    a.val[at] = e.value;
  }
  // Sort each row by column (entries usually arrive sorted: check first), merge duplicates.
  std::vector<std::pair<int, double>> tmp;
  std::size_t w = 0;
  for (std::size_t i = 0; i < nr; ++i) {
    const auto b = static_cast<std::size_t>(a.begin[i]), e = static_cast<std::size_t>(a.begin[i + 1]);
    bool sorted = true;
    for (std::size_t q = b + 1; q < e && sorted; ++q) sorted = a.col[q - 1] < a.col[q];
    if (!sorted) {
      tmp.clear();
      for (std::size_t q = b; q < e; ++q) tmp.emplace_back(a.col[q], a.val[q]);
      std::stable_sort(tmp.begin(), tmp.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      for (std::size_t q = b; q < e; ++q) {
        a.col[q] = tmp[q - b].first;
        a.val[q] = tmp[q - b].second;
      }
    }
    a.begin[i] = static_cast<int>(w);
    for (std::size_t q = b; q < e;) {
      std::size_t k = q;
      double v = 0.0;
      while (k < e && a.col[k] == a.col[q]) v += a.val[k++];
      if (v != 0.0) {
        a.col[w] = a.col[q];
        a.val[w] = v;
        ++w;
      }
      q = k;
    }
  }
  a.begin[nr] = static_cast<int>(w);
  a.col.resize(w);
  a.val.resize(w);
  return a;
}

// A column's use of capacity row k. (A plain pair of numbers: its buffers are left unwritten
// until filled, where a vector would write them twice.)
struct Use {
  int k;
  double v;
};

// What the rows are, however they were read: the choice rows with their members (columns
// ascending), and every column's usage of the capacity rows (k ascending).
struct Classified {
  std::vector<int> choice_of;        // per column: its choice row (model row), -1 none
  std::vector<char> forced_row;      // per model row
  std::vector<int> choice_rows;      // model rows, ascending
  std::vector<int> member_begin{0};  // per choice row: its columns in `members`
  std::vector<int> members;
  std::vector<int> ubegin;  // per column j: its usage uses[ubegin[j] .. ubegin[j+1])
  std::unique_ptr<Use[]> uses;
  std::size_t num_uses = 0;
  // Read in layout without a redundant capacity-part row: no `uses` written; the usage is the
  // model's own entries (ubegin indexes them), their rows mapped to k by cap_of_row.
  const MilpModel::Entry* entry_uses = nullptr;
  std::vector<int> cap_of_row;
  // Read in layout with every row kept (no redundant row): uses[q] is the model's entry q, and
  // the members of choice row r are the entries [member_begin[r], member_begin[r+1]).
  bool entries_exact = false;
  // Taken from the writer's layout without an entry index (classify_from_layout(), `index` false):
  // choice row r's members are the columns runs[r][1], runs[r][1] + 1, ... (runs[r][2] of them),
  // the runs ascending and apart, and neither `members` nor `choice_of` is written (each a pass of
  // about a megabyte at 20,000 jobs, read again by nobody but the backend's own answer check).
  std::span<const std::array<int, 3>> runs;
  // Per column j (+1): where its usage begins (ubegin's, or the writer's own array).
  const int* ubegin_at = nullptr;
  // Or per column j its usage [first, second) in entry_uses: the writer's own list of capacity
  // entries (ModelLayout::charge), with Classified::runs only.
  const std::pair<int, int>* urange = nullptr;
  [[nodiscard]] std::size_t num_members() const noexcept { return static_cast<std::size_t>(member_begin.back()); }
  // The choice row (model row) column j belongs to, -1 none.
  [[nodiscard]] int choice_row_of(int j) const {
    if (runs.empty()) return choice_of[static_cast<std::size_t>(j)];
    // (The last run starting at or before j.)
    const auto it = std::upper_bound(runs.begin(), runs.end(), j,
                                     [](int col, const std::array<int, 3>& run) { return col < run[1]; });
    if (it == runs.begin()) return -1;
    const auto& run = *(it - 1);
    return j < run[1] + run[2] ? run[0] : -1;
  }
};

// Binary columns with effective bounds (lo, hi); false (with s filled) when the model is not
// binary or a column has no integer value. lo and hi stay empty while every column is free
// (bounds 0 and 1, as in a round): filled from the first column that is not.
// `other`: the columns whose bounds are not exactly 0 and 1, ascending.
// `check`: also MilpModel::validate()'s tests of every column's cost and bounds; false (s not
// filled) at a column that fails them (the model has not been validated: its bounds may be NaN).
bool read_bounds(const MilpModel& m, Shape& s, std::vector<signed char>& lo, std::vector<signed char>& hi,
                 std::vector<int>& other, bool check) {
  const int n = m.num_cols();
  lo.clear();
  hi.clear();
  other.clear();
  const auto nu = static_cast<std::size_t>(n);
  for (std::size_t b = 0; b < nu; b += 8) {
    // Eight free binary columns at a time (nearly every column of a round), without branches; a
    // block with any other column is read column by column.
    const std::size_t f = std::min(nu, b + 8);
    bool all_free = true;
    for (std::size_t j = b; j < f; ++j) {
      all_free &= m.is_integer[j] != 0;
      all_free &= m.col_lower[j] == 0.0;
      all_free &= m.col_upper[j] == 1.0;
    }
    if (check) {
      // (Bounds 0 and 1 are valid ones: a free column's cost is all there is to check.)
      bool costs = true;
      for (std::size_t j = b; j < f; ++j) costs &= cost_valid(m.obj[j]);
      if (!costs) return false;
    }
    if (all_free) continue;
    for (std::size_t ju = b; ju < f; ++ju) {
      const int j = static_cast<int>(ju);
      if (check && !bounds_valid(m.col_lower[ju], m.col_upper[ju])) return false;
      if (!m.is_integer[ju] || m.col_lower[ju] < -kTol || m.col_upper[ju] > 1.0 + kTol) {
        s.why = "column " + std::to_string(j) + " is not binary";
        return false;
      }
      const double l = m.col_lower[ju], u = m.col_upper[ju];
      if (l == 0.0 && u == 1.0) continue;  // free (lo 0, hi 1), nearly every column
      other.push_back(j);
      const auto lj = static_cast<signed char>(std::ceil(l - kTol));
      const auto hj = static_cast<signed char>(std::floor(u + kTol));
      if (lj > hj) {
        s.round_shaped = true;
        s.infeasible = true;
        s.why = "column " + std::to_string(j) + " has no integer value within its bounds";
        return false;
      }
      if (lo.empty()) {
        lo.assign(static_cast<std::size_t>(n), 0);
        hi.assign(static_cast<std::size_t>(n), 1);
      }
      lo[ju] = lj;
      hi[ju] = hj;
    }
  }
  return true;
}

// Are all the costs finite (cost_valid())? Eight at a time, as read_bounds() tests them.
bool costs_valid(const MilpModel& m) {
  const std::size_t nu = m.obj.size();
  for (std::size_t b = 0; b < nu; b += 8) {
    const std::size_t f = std::min(nu, b + 8);
    bool costs = true;
    for (std::size_t j = b; j < f; ++j) costs &= cost_valid(m.obj[j]);
    if (!costs) return false;
  }
  return true;
}

// read_bounds() from what the model's writer promises of its columns (ModelLayout: all integer,
// the pinned ones' bounds [1, 1], every other's [0, 1]): the same lo, hi and other, without reading
// the model (its costs are checked by the caller: costs_valid(), or finish()'s pass).
void read_bounds_from_layout(const MilpModel& m, const ModelLayout& l, std::vector<signed char>& lo,
                             std::vector<signed char>& hi, std::vector<int>& other) {
  const std::size_t nu = m.obj.size();
  lo.clear();
  hi.clear();
  other.clear();
  if (!l.pinned.empty()) {
    lo.assign(nu, 0);
    hi.assign(nu, 1);
    for (const int j : l.pinned) {
      other.push_back(j);
      lo[static_cast<std::size_t>(j)] = 1;
    }
  }
}

// Is a row of these properties a choice row (all ones over columns of no earlier choice row,
// upper bound in [1, 2), lower bound at most 1) or a capacity row (positive coefficients,
// lower bound <= 0)?
bool is_choice_row(bool ones, bool free_cols, double lo_r, double up_r) {
  return ones && free_cols && up_r >= 1.0 - kTol && up_r < 2.0 - kTol && lo_r <= 1.0 + kTol;
}
bool is_capacity_row(bool nonneg, double lo_r) { return nonneg && lo_r <= kTol; }

// The rows by compressed rows of the model (any order of entries, duplicates summed): the
// general reading. False (with s filled) when the model is not round-shaped or infeasible.
bool classify_by_rows(const MilpModel& m, Shape& s, Classified& c) {
  const int n = m.num_cols(), nr = m.num_rows();
  const auto nu = static_cast<std::size_t>(n);
  const RowMatrix a = row_matrix(m);
  auto row_begin = [&](int i) { return static_cast<std::size_t>(a.begin[static_cast<std::size_t>(i)]); };
  auto row_end = [&](int i) { return static_cast<std::size_t>(a.begin[static_cast<std::size_t>(i) + 1]); };

  // Classify rows.
  c.choice_of.assign(nu, -1);
  c.forced_row.assign(static_cast<std::size_t>(nr), 0);
  for (int i = 0; i < nr; ++i) {
    const auto iu = static_cast<std::size_t>(i);
    const double lo_r = m.row_lower[iu], up_r = m.row_upper[iu];
    if (row_begin(i) == row_end(i)) {
      if (lo_r > kTol || up_r < -kTol) {
        s.round_shaped = true;
        s.infeasible = true;
        s.why = "row " + std::to_string(i) + " has no coefficients and excludes 0";
        return false;
      }
      continue;
    }
    bool ones = true, nonneg = true, free_cols = true;
    for (std::size_t q = row_begin(i); q < row_end(i); ++q) {
      ones = ones && std::abs(a.val[q] - 1.0) <= 1e-12;
      nonneg = nonneg && a.val[q] > 0.0;
      free_cols = free_cols && c.choice_of[static_cast<std::size_t>(a.col[q])] < 0;
    }
    if (is_choice_row(ones, free_cols, lo_r, up_r)) {
      for (std::size_t q = row_begin(i); q < row_end(i); ++q) {
        c.choice_of[static_cast<std::size_t>(a.col[q])] = i;
        c.members.push_back(a.col[q]);
      }
      c.member_begin.push_back(static_cast<int>(c.members.size()));
      c.forced_row[iu] = lo_r > kTol ? 1 : 0;
      c.choice_rows.push_back(i);
      continue;
    }
    if (is_capacity_row(nonneg, lo_r)) {
      if (up_r == MilpModel::inf) continue;  // redundant
      s.cap_rows.push_back(i);
      continue;
    }
    if (ones && !free_cols && lo_r > kTol) {
      s.why = "row " + std::to_string(i) + " forces a choice over columns that already belong to another choice row";
      return false;
    }
    s.why = "row " + std::to_string(i) + " is neither a choice row nor a capacity row";
    return false;
  }

  // Usage of each column over capacity rows, compressed by column (rows ascending).
  const int K = static_cast<int>(s.cap_rows.size());
  c.ubegin.assign(nu + 1, 0);
  for (int k = 0; k < K; ++k) {
    const int i = s.cap_rows[static_cast<std::size_t>(k)];
    for (std::size_t q = row_begin(i); q < row_end(i); ++q) ++c.ubegin[static_cast<std::size_t>(a.col[q]) + 1];
  }
  std::partial_sum(c.ubegin.begin(), c.ubegin.end(), c.ubegin.begin());
  c.num_uses = static_cast<std::size_t>(c.ubegin[nu]);
  c.uses = std::make_unique_for_overwrite<Use[]>(std::max<std::size_t>(c.num_uses, 1));
  std::vector<int> fill(c.ubegin.begin(), c.ubegin.end() - 1);
  for (int k = 0; k < K; ++k) {
    const int i = s.cap_rows[static_cast<std::size_t>(k)];
    for (std::size_t q = row_begin(i); q < row_end(i); ++q)
      c.uses[static_cast<std::size_t>(fill[static_cast<std::size_t>(a.col[q])]++)] = {k, a.val[q]};
  }
  return true;
}

// The rows read in place when the model comes in the round's layout (core/formulation.cpp):
// the choice rows' entries first, row by row with columns ascending, then the capacity rows'
// entries column by column with rows ascending, every row of the first part numbered below every
// row of the second, no entry twice and none zero. Reading it so needs no transposition; it
// finds what classify_by_rows() finds. False when the model is laid out otherwise or anything is
// unusual (a second-part row that would be a choice row, a first-part capacity row, a row that
// is neither, an empty row excluding 0): the general reading then decides, messages included.
// Every entry is read once (the second part backwards from the last entry, as far as it is
// ordered by column and row, then the first part): a round's entries do not fit the caches, and
// each further pass over them cost about as much as the reading itself.
bool classify_in_layout(const MilpModel& m, Shape& s, Classified& c) {
  const int n = m.num_cols(), nr = m.num_rows();
  const auto nu = static_cast<std::size_t>(n);
  const auto nru = static_cast<std::size_t>(nr);
  const auto& e = m.entries;
  const std::size_t ne = e.size();
  // (Inside the matrix, finite — MilpModel::validate()'s test of an entry — and not zero.)
  auto valid = [n, nr](const MilpModel::Entry& x) {
    return entry_valid(x, static_cast<unsigned>(nr), static_cast<unsigned>(n)) & (x.value != 0.0);
  };

  // Second part: the longest suffix ordered by (column, row). Every row's properties (but whether
  // its columns are free, below) and each column's usage by model row (renumbered below).
  std::vector<char> has_entries(nru, 0), ones(nru, 1), nonneg(nru, 1);
  c.ubegin.assign(nu + 1, 0);
  std::size_t split = ne;
  int second_min_row = nr;
  for (; split > 0; --split) {
    const auto& x = e[split - 1];
    if (split < ne) {
      const auto& y = e[split];
      if (!(x.col < y.col || (x.col == y.col && x.row < y.row))) break;  // x is the first part's
    }
    if (!valid(x)) return false;
    const auto iu = static_cast<std::size_t>(x.row);
    second_min_row = std::min(second_min_row, x.row);
    has_entries[iu] = 1;
    ones[iu] &= static_cast<char>(std::abs(x.value - 1.0) <= 1e-12);
    nonneg[iu] &= static_cast<char>(x.value > 0.0);
    ++c.ubegin[static_cast<std::size_t>(x.col) + 1];
  }

  // First part: ordered by (row, column), row ranges in order.
  c.choice_of.assign(nu, -1);
  c.forced_row.assign(nru, 0);
  // (The members written through a pointer into room for every first-part entry: a push_back per
  // entry was a call each, 20 % of this reading's samples.)
  c.members.resize(split);
  int* member_out = c.members.data();
  std::size_t num_members = 0;
  c.member_begin.reserve(nru + 1);  // (a choice row per job: room for all at once)
  c.choice_rows.reserve(nru);
  int first_max_row = -1;
  bool first_redundant = false;
  for (std::size_t q = 0; q < split;) {
    const int i = e[q].row;
    if (i <= first_max_row) return false;
    first_max_row = i;
    std::size_t end = q;
    int last_col = -1;
    bool ones_i = true, nonneg_i = true, free_cols = true;
    for (; end < split && e[end].row == i; ++end) {
      const auto& x = e[end];
      if (!valid(x) || x.col <= last_col) return false;
      last_col = x.col;
      ones_i = ones_i && std::abs(x.value - 1.0) <= 1e-12;
      nonneg_i = nonneg_i && x.value > 0.0;
      free_cols = free_cols && c.choice_of[static_cast<std::size_t>(x.col)] < 0;
    }
    const auto iu = static_cast<std::size_t>(i);
    has_entries[iu] = 1;
    const double lo_r = m.row_lower[iu], up_r = m.row_upper[iu];
    if (!is_choice_row(ones_i, free_cols, lo_r, up_r)) {
      if (is_capacity_row(nonneg_i, lo_r) && up_r == MilpModel::inf) {  // redundant
        q = end;
        first_redundant = true;
        continue;
      }
      return false;
    }
    for (; q < end; ++q) {
      c.choice_of[static_cast<std::size_t>(e[q].col)] = i;
      member_out[num_members++] = e[q].col;
    }
    c.member_begin.push_back(static_cast<int>(num_members));
    c.forced_row[iu] = lo_r > kTol ? 1 : 0;
    c.choice_rows.push_back(i);
  }
  c.members.resize(num_members);
  if (first_max_row >= second_min_row) return false;

  // Second-part rows that would be choice rows if their columns were free (all ones, bounds of a
  // choice row: none in a round): whether they are, in a pass over their entries.
  std::vector<char> free_cols(nru, 1);
  bool maybe_choice = false;
  for (int i = first_max_row + 1; i < nr; ++i) {
    const auto iu = static_cast<std::size_t>(i);
    maybe_choice =
        maybe_choice || (has_entries[iu] && ones[iu] && is_choice_row(true, true, m.row_lower[iu], m.row_upper[iu]));
  }
  if (maybe_choice)
    for (std::size_t q = split; q < ne; ++q)
      free_cols[static_cast<std::size_t>(e[q].row)] &=
          static_cast<char>(c.choice_of[static_cast<std::size_t>(e[q].col)] < 0);

  std::vector<int> cap_index(nru, -1);
  bool redundant = false;  // a second-part row without an upper bound: its entries leave the usage
  for (int i = 0; i < nr; ++i) {
    const auto iu = static_cast<std::size_t>(i);
    const double lo_r = m.row_lower[iu], up_r = m.row_upper[iu];
    if (!has_entries[iu]) {
      if (lo_r > kTol || up_r < -kTol) return false;
      continue;
    }
    if (i <= first_max_row) continue;  // read above
    if (is_choice_row(ones[iu] != 0, free_cols[iu] != 0, lo_r, up_r) || !is_capacity_row(nonneg[iu] != 0, lo_r))
      return false;
    if (up_r == MilpModel::inf) {
      redundant = true;
      continue;
    }
    cap_index[iu] = static_cast<int>(s.cap_rows.size());
    s.cap_rows.push_back(i);
  }
  // The usage: the capacity part's entries themselves, their rows mapped to capacity rows k
  // (ascending with the rows, so still ascending per column); with a redundant row among them,
  // the others copied.
  std::size_t w = ne;
  if (!redundant) {
    c.entry_uses = e.data();
    c.cap_of_row = std::move(cap_index);
  } else {
    c.uses = std::make_unique_for_overwrite<Use[]>(ne);
    std::fill(c.ubegin.begin(), c.ubegin.end(), 0);
    w = split;
    for (std::size_t q = split; q < ne; ++q) {
      const int k = cap_index[static_cast<std::size_t>(e[q].row)];
      if (k < 0) continue;
      ++c.ubegin[static_cast<std::size_t>(e[q].col) + 1];
      c.uses[w++] = {k, e[q].value};
    }
  }
  // (Offsets into the entries, or into `uses`, whose first `split` places are not used.)
  c.ubegin[0] = static_cast<int>(split);
  std::partial_sum(c.ubegin.begin(), c.ubegin.end(), c.ubegin.begin());
  c.num_uses = w - split;
  c.entries_exact = !redundant && !first_redundant;
  return true;
}

// What classify_in_layout() finds, from what the model's writer promises (ModelLayout): no entry is
// read. The rows' bounds are still the model's: false (nothing to undo but what the caller clears)
// when a row is not what the reading in layout would make of it — a choice row that is not one, a
// capacity row that is redundant or could be a choice row (then classify_in_layout() decides).
// `index` false: the choice rows' members and every column's choice row and usage offsets are left
// in the layout (Classified::runs, ubegin_at) where its runs of columns ascend, and no entry index
// can be kept (Shape::entries stays empty).
bool classify_from_layout(const MilpModel& m, const ModelLayout& l, Shape& s, Classified& c, bool index) {
  const int n = m.num_cols(), nr = m.num_rows();
  const auto nu = static_cast<std::size_t>(n);
  const auto nru = static_cast<std::size_t>(nr);
  const std::size_t nchoice = l.choice.size();
  // Every row's bounds first (a few rows), then the columns' arrays.
  std::size_t split = 0;
  for (std::size_t r = 0; r < nchoice; ++r) {
    const auto& [row, first, count] = l.choice[r];
    if (row != static_cast<int>(r) || count < 1 || first < 0 || static_cast<std::size_t>(first) + count > nu ||
        !is_choice_row(true, true, m.row_lower[r], m.row_upper[r]))
      return false;
    split += static_cast<std::size_t>(count);
  }
  const auto& e = m.entries;
  if (nchoice == nru || split == 0 || split >= e.size() || split != static_cast<std::size_t>(l.cap_begin[0]) ||
      static_cast<std::size_t>(l.cap_begin[nu]) != e.size())
    return false;
  // (Where the last choice row's last column comes before the first capacity entry's, the reading
  // in layout would take that row for the capacity part's and hand the model to the general
  // reading: so does this. Both columns — entry split - 1's, and entry split's, the first column
  // with capacity entries — from the layout: a partial model's entries are not written.)
  std::size_t first_used = 0;
  while (l.cap_begin[first_used + 1] == l.cap_begin[first_used]) ++first_used;  // (split < e.size(): one has)
  if (!(l.choice[nchoice - 1][1] + l.choice[nchoice - 1][2] - 1 > static_cast<int>(first_used))) return false;
  for (std::size_t i = nchoice; i < nru; ++i) {
    const double lo_r = m.row_lower[i], up_r = m.row_upper[i];
    if (!is_capacity_row(true, lo_r) || up_r == MilpModel::inf || is_choice_row(true, true, lo_r, up_r)) return false;
    s.cap_rows.push_back(static_cast<int>(i));
  }
  c.forced_row.assign(nru, 0);
  c.member_begin.reserve(nchoice + 1);
  c.choice_rows.reserve(nchoice);
  bool ascending = !index;  // (the runs of columns one after another, apart: no index needed)
  for (std::size_t r = 1; r < nchoice && ascending; ++r)
    ascending = l.choice[r][1] >= l.choice[r - 1][1] + l.choice[r - 1][2];
  if (ascending) {
    int members = 0;
    for (std::size_t r = 0; r < nchoice; ++r) {
      members += l.choice[r][2];
      c.member_begin.push_back(members);
      c.forced_row[r] = m.row_lower[r] > kTol ? 1 : 0;
      c.choice_rows.push_back(l.choice[r][0]);
    }
    c.runs = l.choice;
    c.ubegin_at = l.cap_begin.data();
    if (!l.charge_range.empty()) {
      // The capacity entries from the writer's own list: each column's range in it, a few entries
      // shared by many columns, instead of an entry per column written and read here again.
      c.urange = l.charge_range.data();
      c.entry_uses = l.charge.data();
    }
  } else {
    l.make_whole();  // (the entry index is the model's entries)
    c.choice_of.assign(nu, -1);
    c.members.resize(split);
    int* const choice_of = c.choice_of.data();
    int* member_out = c.members.data();
    for (std::size_t r = 0; r < nchoice; ++r) {
      const auto& [row, first, count] = l.choice[r];
      for (int j = first; j < first + count; ++j) {
        choice_of[j] = row;
        *member_out++ = j;
      }
      c.member_begin.push_back(static_cast<int>(member_out - c.members.data()));
      c.forced_row[r] = m.row_lower[r] > kTol ? 1 : 0;
      c.choice_rows.push_back(row);
    }
    c.ubegin.assign(l.cap_begin.begin(), l.cap_begin.end());
  }
  c.cap_of_row.assign(nru, -1);
  for (std::size_t i = nchoice; i < nru; ++i) c.cap_of_row[i] = static_cast<int>(i - nchoice);
  if (c.entry_uses == nullptr) c.entry_uses = m.entries.data();
  c.num_uses = m.entries.size() - split;
  c.entries_exact = !ascending;  // (the entry index is kept from what was written)
  return true;
}

#ifndef NDEBUG
// The same reading (a check of the writer's promise in builds with assertions).
bool same_classified(const Shape& a, const Classified& x, const Shape& b, const Classified& y) {
  return a.cap_rows == b.cap_rows && x.choice_of == y.choice_of && x.forced_row == y.forced_row &&
         x.choice_rows == y.choice_rows && x.member_begin == y.member_begin && x.members == y.members &&
         x.ubegin == y.ubegin && x.num_uses == y.num_uses && x.entry_uses == y.entry_uses &&
         x.cap_of_row == y.cap_of_row && x.entries_exact == y.entries_exact && !x.uses && !y.uses;
}
#endif

// `costs_finite`: also checks every cost (cost_valid()) in its pass over the columns; true there
// when it read them all and all are finite (false: not all read, or one is not finite).
// `start`: Shape::start_items found as the groups are written.
Shape finish(const MilpModel& m, Shape s, const std::vector<signed char>& lo, const std::vector<signed char>& hi,
             const std::vector<int>& other_bounds, const Classified& c, int threads = 1, bool* costs_finite = nullptr,
             const StartView* start = nullptr);

// Both readings share the bounds and the finish; `in_layout_first` tries the round's own layout before the
// general reading by rows. `check`: the model has not been validated; the reading in layout checks
// every number MilpModel::validate() checks as it reads it (costs and bounds with the bounds — from
// the writer's layout, the costs in finish()'s pass —, the rows' bounds, each entry as the layout is
// read), and any other way through calls validate() first (which throws for an invalid model) —
// before anything reads a number it has not checked (but finish() the costs it checks).
// `layout`: the writer's promise about m's layout (ModelLayout), taken instead of reading the
// layout from the entries (whose numbers it vouches for) when it describes m.
// `index`: keep the entry index (Shape::entries) where the reading can; false: where it is taken
// from the layout, leave the members in the layout instead (no index).
// A partial model (ModelLayout::complete) is made whole before any reading but the layout's.
Shape recognise_with(const MilpModel& m, bool in_layout_first, bool check, const ModelLayout* layout = nullptr,
                     int threads = 1, bool index = true, const StartView* start = nullptr) {
  const bool laid_out = in_layout_first && layout != nullptr && layout->describes(m);
  if (layout != nullptr && !laid_out) layout->make_whole();
  if (check && !model_sizes_valid(m)) {
    if (layout != nullptr) layout->make_whole();
    m.validate();
  }
  Shape s;
  s.sign = m.sense == MilpSense::maximize ? 1.0 : -1.0;
  std::vector<signed char> lo, hi;
  std::vector<int> other_bounds;
#ifndef NDEBUG
  if (laid_out) layout->make_whole();  // (the writer's promise is checked below against the whole model)
#endif
  // Read from the writer's layout, the costs are checked in finish()'s pass over the columns, which
  // reads every cost anyway (a pass of their own before it cost about 0.3 ms at 240,000 columns);
  // a reading that does not get there checks them first, as any other reading does: a cost that is
  // not finite then fails as it did (validate() throws), before the reading goes on.
  bool costs_pending = laid_out && check;
  auto costs_failed = [&] {  // (read_bounds()'s failure: validate() throws)
    layout->make_whole();
    m.validate();
    return recognise_with(m, in_layout_first, false);  // (cannot happen: validate() threw)
  };
  bool bounds_read = true;
  if (laid_out)
    read_bounds_from_layout(m, *layout, lo, hi, other_bounds);
  else
    bounds_read = read_bounds(m, s, lo, hi, other_bounds, check);
#ifndef NDEBUG
  if (laid_out) {  // (the writer's promise, checked in builds with assertions; the costs are not promised)
    Shape s2;
    std::vector<signed char> lo2, hi2;
    std::vector<int> other2;
    assert(read_bounds(m, s2, lo2, hi2, other2, false) && lo2 == lo && hi2 == hi && other2 == other_bounds);
  }
#endif
  if (!bounds_read) {
    if (laid_out) layout->make_whole();
    if (check) {
      m.validate();
      if (s.why.empty()) return recognise_with(m, in_layout_first, false);  // (cannot happen: validate() threw)
    }
    return s;
  }
  if (check) {
    bool rows = true;
    for (std::size_t i = 0; i < m.row_lower.size(); ++i) rows &= bounds_valid(m.row_lower[i], m.row_upper[i]);
    if (!rows) {
      if (laid_out) layout->make_whole();
      m.validate();
    }
  }
  Classified c;
  bool from_layout = false;
  if (laid_out) {
    from_layout = classify_from_layout(m, *layout, s, c, index);
    if (!from_layout) {
      layout->make_whole();  // (the entries are read from here on)
      s.cap_rows.clear();
      c = Classified{};
    }
#ifndef NDEBUG
    if (from_layout && c.runs.empty()) {
      Shape s2;
      Classified c2;
      assert(classify_in_layout(m, s2, c2) && same_classified(s, c, s2, c2));
    }
#endif
  }
  if (costs_pending && !from_layout) {
    if (!costs_valid(m)) return costs_failed();
    costs_pending = false;
  }
  if (in_layout_first) {
    if (from_layout || classify_in_layout(m, s, c)) {
      s.in_layout = true;
      s.from_layout = from_layout;
      bool finite = false;
      Shape out = finish(m, std::move(s), lo, hi, other_bounds, c, threads, costs_pending ? &finite : nullptr, start);
      if (costs_pending && !finite && !costs_valid(m)) return costs_failed();
      if (c.entries_exact && out.round_shaped && !out.infeasible) {
        out.entries.cap_begin = std::move(c.ubegin);
        out.entries.choice_of = std::move(c.choice_of);
        out.entries.choice_rows = std::move(c.choice_rows);
        out.entries.choice_begin = std::move(c.member_begin);
        out.entries.other_bounds = std::move(other_bounds);
        out.entries.bounds_listed = true;
      }
      return out;
    }
    s.cap_rows.clear();
    c = Classified{};
  }
  if (check) m.validate();
  if (!classify_by_rows(m, s, c)) return s;
  return finish(m, std::move(s), lo, hi, other_bounds, c);
}

}  // namespace

Shape recognise(const MilpModel& m) { return recognise_with(m, true, false); }

Shape recognise_checked(const MilpModel& m) { return recognise_with(m, true, true); }

Shape recognise_checked(const MilpModel& m, const ModelLayout* layout, int threads, bool index,
                        const StartView* start) {
  return recognise_with(m, true, true, layout, threads, index, start);
}

Shape recognise_by_rows(const MilpModel& m) { return recognise_with(m, false, false); }

namespace {

Shape finish(const MilpModel& m, Shape s, const std::vector<signed char>& lo, const std::vector<signed char>& hi,
             const std::vector<int>& other_bounds, const Classified& c, int threads, bool* costs_finite,
             const StartView* start) {
  const int n = m.num_cols(), nr = m.num_rows();
  const auto nu = static_cast<std::size_t>(n);
  s.round_shaped = true;
  if (costs_finite != nullptr) *costs_finite = false;

  Problem& p = s.problem;
  const int K = static_cast<int>(s.cap_rows.size());
  p.num_rows = K;
  p.cap.resize(static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k)
    p.cap[static_cast<std::size_t>(k)] = m.row_upper[static_cast<std::size_t>(s.cap_rows[static_cast<std::size_t>(k)])];

  const Use* uses = c.uses.get();
  const MilpModel::Entry* entry_uses = c.entry_uses;
  const int* cap_of_row = c.cap_of_row.data();
  const int* const ubegin = c.ubegin_at != nullptr ? c.ubegin_at : c.ubegin.data();
  const std::pair<int, int>* const urange = c.urange;
  // Column j's usage [first, end): in `uses` or entry_uses, from ubegin or urange.
  auto range_of = [ubegin, urange](std::size_t ju) {
    return urange != nullptr ? std::pair<std::size_t, std::size_t>(urange[ju].first, urange[ju].second)
                             : std::pair<std::size_t, std::size_t>(ubegin[ju], ubegin[ju + 1]);
  };
  // A column's usage, from `uses` or from the model's entries.
  struct UseIter {
    const Use* u;
    const MilpModel::Entry* e;
    const int* kmap;
    Use operator*() const { return e ? Use{kmap[e->row], e->value} : *u; }
    UseIter& operator++() {
      if (e)
        ++e;
      else
        ++u;
      return *this;
    }
    bool operator!=(const UseIter& o) const { return e ? e != o.e : u != o.u; }
  };
  struct Span {
    UseIter b, e;
    std::size_t n;
    [[nodiscard]] UseIter begin() const { return b; }
    [[nodiscard]] UseIter end() const { return e; }
    [[nodiscard]] std::size_t size() const { return n; }
    [[nodiscard]] Use front() const { return *b; }
  };
  auto use_of = [&](int j) {
    const auto ju = static_cast<std::size_t>(j);
    const auto [b, f] = range_of(ju);
    if (entry_uses) return Span{{nullptr, entry_uses + b, cap_of_row}, {nullptr, entry_uses + f, cap_of_row}, f - b};
    return Span{{uses + b, nullptr, nullptr}, {uses + f, nullptr, nullptr}, f - b};
  };

  // Pins.
  std::vector<int> pins_in_row(static_cast<std::size_t>(nr), 0);
  // (No bounds: every column free, none pinned.)
  const bool all_free = lo.empty();
  // Are the columns of every choice row free (bounds 0 and 1), the columns of other bounds (pinned
  // jobs' single columns, in a round) all outside them? Then a choice row's group reads no bounds.
  const bool choice_rows_free =
      std::none_of(other_bounds.begin(), other_bounds.end(), [&](int j) { return c.choice_row_of(j) >= 0; });
  // (A column fixed to 1 has bounds other than [0, 1]: the columns `other_bounds` lists, ascending.)
  for (const int j : all_free ? std::span<const int>() : std::span<const int>(other_bounds)) {
    const auto ju = static_cast<std::size_t>(j);
    if (lo[ju] != 1) continue;
    s.pinned_cols.push_back(j);
    p.fixed_value += s.sign * m.obj[ju];
    for (const auto& [k, v] : use_of(j)) p.cap[static_cast<std::size_t>(k)] -= v;
    if (const int row = c.choice_row_of(j); row >= 0 && ++pins_in_row[static_cast<std::size_t>(row)] > 1) {
      s.infeasible = true;
      s.why = "two columns of choice row " + std::to_string(row) + " are fixed to 1";
      return s;
    }
  }
  for (int k = 0; k < K; ++k) {
    const double up = m.row_upper[static_cast<std::size_t>(s.cap_rows[static_cast<std::size_t>(k)])];
    if (p.cap[static_cast<std::size_t>(k)] < -1e-9 * std::max(1.0, std::abs(up))) {
      s.infeasible = true;
      s.why =
          "columns fixed to 1 exceed the upper bound of row " + std::to_string(s.cap_rows[static_cast<std::size_t>(k)]);
      return s;
    }
  }

  // Groups: one per choice row without a pin, one per free column outside choice rows.
  p.reserve(c.choice_rows.size() + nu, nu + c.choice_rows.size(), c.num_uses);
  // A candidate column: the single capacity row it uses (-1: none, -2: several), its amount
  // there, its internal value.
  struct Cand {
    int j;
    int key;
    double amount;
    double v;
  };
  // Where groups are written: a Problem (the result's, or a part's built beside it), its cursors,
  // and build_group()'s buffers.
  struct Cursors {
    double* value;
    int* column;
    int* use_begin;
    int* use_row;
    double* use_val;
    std::size_t items, uses;
  };
  struct Writer {
    Problem* q;
    std::size_t item_room, use_room;
    Cursors out{};
    std::vector<Cand> cand;
    std::vector<int> kept;
    std::vector<int> run_cols;  // (a Run's columns, for build_group())
    bool costs = true;          // (every cost build_group_direct() read finite)
    std::vector<int> start;     // (per group written, its start item: with `start`)
  };
  // Columns first, first + 1, ...: a choice row's members as the layout gives them (Classified::runs).
  struct Run {
    int first;
    int operator[](std::size_t q) const noexcept { return first + static_cast<int>(q); }
  };
  // Single-row dominance: among columns using exactly the same single row (or none), keep only
  // those whose value strictly increases with usage. Columns of a round come sorted by row and
  // usage already: while they do, each kept column is written as it is read (its cost and usage
  // read once); at the first that does not, what was written is taken back and the candidates are
  // sorted.
  auto before = [](const Cand& x, const Cand& y) {
    if (x.key != y.key) return x.key < y.key;
    if (x.key == -2) return false;
    if (x.amount != y.amount) return x.amount < y.amount;
    return x.v > y.v;
  };
  auto build_group = [&](Writer& w, const int* cols, std::size_t ncols, bool forced, int model_row) {
    Problem& p = *w.q;
    auto& cand = w.cand;
    auto& kept = w.kept;
    // Candidates: free columns; drop value <= 0 when the group may stay empty.
    cand.clear();
    const std::size_t items0 = p.value.size(), uses0 = p.use_row.size();
    bool in_order = true;
    int last_key = -3;
    double best_val = -MilpModel::inf;
    for (std::size_t q = 0; q < ncols; ++q) {
      const int j = cols[q];
      const auto ju = static_cast<std::size_t>(j);
      if (!all_free && (hi[ju] == 0 || lo[ju] == 1)) continue;
      const double v = s.sign * m.obj[ju];
      if (!forced && v <= 0.0) continue;
      const auto u = use_of(j);
      const Use first = u.size() == 1 ? u.front() : Use{u.size() == 0 ? -1 : -2, 0.0};
      const Cand x{j, first.k, first.v, v};
      if (in_order && !cand.empty() && before(x, cand.back())) {  // (std::is_sorted's test)
        in_order = false;
        p.value.resize(items0);
        p.column.resize(items0);
        p.use_begin.resize(items0 + 1);
        p.use_row.resize(uses0);
        p.use_val.resize(uses0);
      }
      cand.push_back(x);
      if (!in_order) continue;
      if (x.key != last_key) {
        last_key = x.key;
        best_val = -MilpModel::inf;
      }
      if (x.key == -2 || x.v > best_val) {
        p.add_item(v, j, u);
        if (x.key != -2) best_val = x.v;
      }
    }
    if (!in_order) {
      std::stable_sort(cand.begin(), cand.end(), before);
      last_key = -3;
      best_val = -MilpModel::inf;
      kept.clear();
      for (const Cand& x : cand) {
        if (x.key != last_key) {
          last_key = x.key;
          best_val = -MilpModel::inf;
        }
        if (x.key == -2 || x.v > best_val) {
          kept.push_back(x.j);
          if (x.key != -2) best_val = x.v;
        }
      }
      // (The kept columns in their order.)
      if (!std::is_sorted(kept.begin(), kept.end())) std::sort(kept.begin(), kept.end());
      for (int j : kept) p.add_item(s.sign * m.obj[static_cast<std::size_t>(j)], j, use_of(j));
    }
    const bool empty = p.value.size() == items0;
    if (forced && empty) return false;
    if (!forced && empty) return true;  // nothing worth choosing: the group stays empty
    if (!forced) p.add_none();
    p.close_group(model_row);
    if (start != nullptr) w.start.push_back(start_item(p, *start, p.num_groups() - 1));
    return true;
  };

  // The usual case, a round read in place (the usage is the model's own entries): build_group()
  // for a group whose candidates come in the dominance's order, each column's usage read straight
  // from the model's entries and the previous candidate kept in registers (no candidate array, no
  // branch per usage on where it lies); at the first candidate out of order what was written is
  // taken back and build_group() reads the group. The same items. They are written through cursors
  // into the item arrays sized once for every column (ItemVector: left unwritten until written
  // here) and cut to what was written at the end: a push_back per array and item stored and
  // reloaded each vector's end and checked its capacity (about a fifth of this reading's time).
  const bool direct = entry_uses != nullptr;
  const bool runs = direct && !c.runs.empty();  // (Classified::runs are read directly only)
  auto open_cursors = [](Writer& w) {
    Problem& q = *w.q;
    w.out.items = q.value.size();
    w.out.uses = q.use_row.size();
    q.value.resize(w.item_room);
    q.column.resize(w.item_room);
    q.use_begin.resize(w.item_room + 1);
    q.use_row.resize(w.use_room);
    q.use_val.resize(w.use_room);
    w.out.value = q.value.data();
    w.out.column = q.column.data();
    w.out.use_begin = q.use_begin.data();
    w.out.use_row = q.use_row.data();
    w.out.use_val = q.use_val.data();
  };
  auto close_cursors = [](Writer& w) {
    Problem& q = *w.q;
    q.value.resize(w.out.items);
    q.column.resize(w.out.items);
    q.use_begin.resize(w.out.items + 1);
    q.use_row.resize(w.out.uses);
    q.use_val.resize(w.out.uses);
  };
  // (`cols`: a pointer to the columns, or a Run of consecutive columns.)
  // (`range`: column j's usage [first, end) in entry_uses, from ubegin or urange: one loop each.)
  auto from_begin = [ubegin](std::size_t ju) { return std::pair<int, int>(ubegin[ju], ubegin[ju + 1]); };
  auto from_range = [urange](std::size_t ju) { return urange[ju]; };
  auto build_group_direct = [&](Writer& w, const auto cols, std::size_t ncols, bool forced, int model_row,
                                const auto range) {
    Cursors o = w.out;
    const std::size_t items0 = o.items, uses0 = o.uses;
    const bool free_cols = all_free || (model_row >= 0 && choice_rows_free);
    const double sign = s.sign;
    const double* obj = m.obj.data();
    // (What the loop reads and writes through, its cursors and the previous candidate in locals:
    // read through the closure's references, and the candidate as a Cand, they were loaded again
    // for every column.)
    const MilpModel::Entry* const eu = entry_uses;
    const int* const kmap = cap_of_row;
    double* const value_out = o.value;
    int* const column_out = o.column;
    int* const use_begin_out = o.use_begin;
    int* const use_row_out = o.use_row;
    double* const use_val_out = o.use_val;
    std::size_t items = o.items, uses = o.uses;
    int last_key = -3, prev_key = -3;  // (-3: no candidate yet, below every key)
    double best_val = -MilpModel::inf, prev_amount = 0.0, prev_v = 0.0;
    bool costs = true;  // (every cost read finite: cost_valid())
    // start_item() of the group, found as its items are written (they are in column order): its
    // first item at 1, and whether the start knows one of its items' columns.
    const std::uint64_t* const start_ones = start != nullptr ? start->ones : nullptr;
    const std::uint64_t* const start_unknown = start != nullptr ? start->unknown : nullptr;
    int start_hit = -1;
    bool start_known = false;
    for (std::size_t q = 0; q < ncols; ++q) {
      const int j = cols[q];
      const auto ju = static_cast<std::size_t>(j);
      const double cost = obj[ju];
      costs &= cost_valid(cost);
      if (!free_cols && (hi[ju] == 0 || lo[ju] == 1)) continue;
      const double v = sign * cost;
      if (!forced && v <= 0.0) continue;
      const auto [b, f] = range(ju);
      int key = f == b ? -1 : -2;
      double amount = 0.0;
      if (f - b == 1) {
        const MilpModel::Entry& en = eu[b];
        key = kmap[en.row];
        amount = en.value;
      }
      // (before(x, prev), x this candidate; false for the first.)
      if (key != prev_key ? key < prev_key : key != -2 && (amount != prev_amount ? amount < prev_amount : v > prev_v)) {
        w.out.items = items0;
        w.out.uses = uses0;
        close_cursors(w);
        for (std::size_t t = q; t < ncols; ++t) costs &= cost_valid(obj[static_cast<std::size_t>(cols[t])]);
        w.costs &= costs;
        bool built = false;
        if constexpr (std::is_pointer_v<decltype(cols)>) {
          built = build_group(w, cols, ncols, forced, model_row);
        } else {
          w.run_cols.resize(ncols);
          for (std::size_t t = 0; t < ncols; ++t) w.run_cols[t] = cols[t];
          built = build_group(w, w.run_cols.data(), ncols, forced, model_row);
        }
        open_cursors(w);
        return built;
      }
      prev_key = key;
      prev_amount = amount;
      prev_v = v;
      if (key != last_key) {
        last_key = key;
        best_val = -MilpModel::inf;
      }
      if (key == -2 || v > best_val) {
        value_out[items] = v;
        column_out[items] = j;
        for (int e = b; e < f; ++e) {
          const MilpModel::Entry& en = eu[e];
          use_row_out[uses] = kmap[en.row];
          use_val_out[uses] = en.value;
          ++uses;
        }
        if (start_ones != nullptr) {
          const std::uint64_t bit = std::uint64_t{1} << (ju & 63);
          if (start_hit < 0 && (start_ones[ju >> 6] & bit) != 0) start_hit = static_cast<int>(items);
          start_known = start_known || (start_unknown[ju >> 6] & bit) == 0;
        }
        use_begin_out[++items] = static_cast<int>(uses);
        if (key != -2) best_val = v;
      }
    }
    o.items = items;
    o.uses = uses;
    w.costs &= costs;
    const bool empty = o.items == items0;
    if (forced && empty) return false;
    if (!forced && empty) return true;  // nothing worth choosing: the group stays empty
    const int none = forced ? -1 : static_cast<int>(o.items);
    if (!forced) {  // (Problem::add_none())
      o.value[o.items] = 0.0;
      o.column[o.items] = -1;
      o.use_begin[++o.items] = static_cast<int>(o.uses);
    }
    if (start_ones != nullptr) w.start.push_back(start_hit >= 0 ? start_hit : start_known ? none : -1);
    w.out = o;
    w.q->group_begin.push_back(static_cast<int>(o.items));  // (Problem::close_group())
    w.q->group_row.push_back(model_row);
    return true;
  };
  // The groups of the choice rows [r0, r1) (members in column order) appended to w's problem, in
  // order; at a forced row with nothing to choose, that row's index (what was written before it
  // kept), else -1.
  auto build_rows = [&](Writer& w, std::size_t r0, std::size_t r1) -> long {
    for (std::size_t r = r0; r < r1; ++r) {
      const int i = c.choice_rows[r];
      const auto b = static_cast<std::size_t>(c.member_begin[r]), e = static_cast<std::size_t>(c.member_begin[r + 1]);
      if (pins_in_row[static_cast<std::size_t>(i)] > 0) {
        // (No group reads this row's columns: their costs checked here.)
        for (std::size_t t = b; t < e; ++t)
          w.costs &= cost_valid(
              m.obj[static_cast<std::size_t>(c.runs.empty() ? c.members[t] : c.runs[r][1] + static_cast<int>(t - b))]);
        continue;
      }
      const bool forced = c.forced_row[static_cast<std::size_t>(i)] != 0;
      if (!(runs && urange != nullptr ? build_group_direct(w, Run{c.runs[r][1]}, e - b, forced, i, from_range)
            : runs                    ? build_group_direct(w, Run{c.runs[r][1]}, e - b, forced, i, from_begin)
            : direct                  ? build_group_direct(w, c.members.data() + b, e - b, forced, i, from_begin)
                                      : build_group(w, c.members.data() + b, e - b, forced, i)))
        return static_cast<long>(r);
    }
    return -1;
  };

  // (Room for every column's item and usage and a "none" item per group: a choice row's, or a
  // column's outside them.)
  const std::size_t nrows = c.choice_rows.size();
  // (A writer into `q` with room for `items` items and `uses` usages; the rest of its members as declared.)
  const auto writer = [](Problem* q, std::size_t items, std::size_t uses) {
    Writer w;
    w.q = q;
    w.item_room = items;
    w.use_room = uses;
    return w;
  };
  Writer main =
      writer(&p, p.value.size() + nu + nrows + (nu - std::min(nu, c.num_members())), p.use_row.size() + c.num_uses);
  if (direct) open_cursors(main);
  long failed = -1;
  // A round's many groups are read in two halves side by side (threads > 1): the second half
  // into a problem of its own, appended to the first's when both are done — the same arrays as
  // one pass in order (on a forced row with nothing to choose, what one pass would have written
  // when it stopped there). The second half goes to whichever comes for it first: another thread
  // that is free, or this one when it is done with the first half before any other took it (on a
  // busy machine the append would only add to one pass).
  const std::size_t half = nrows / 2;
  const Parallel par(threads);
  if (direct && par.threads() > 1 && nrows >= kSplitRows) {
    Problem side_p;
    const auto side_cols = static_cast<std::size_t>(c.member_begin[nrows] - c.member_begin[half]);
    Writer side = writer(&side_p, side_cols + (nrows - half), c.num_uses);
    long side_failed = -1;
    std::atomic<bool> taken{false};
    bool side_read = false;
    par.alongside(
        [&] {
          failed = build_rows(main, 0, half);
          if (failed < 0 && !taken.exchange(true)) failed = build_rows(main, half, nrows);
        },
        [&] {
          if (taken.exchange(true)) return;
          side_read = true;
          side_p.group_begin.reserve(nrows - half + 1);
          side_p.group_row.reserve(nrows - half);
          open_cursors(side);
          side_failed = build_rows(side, half, nrows);
          close_cursors(side);
        });
    if (failed < 0 && side_read) {
      failed = side_failed;
      main.costs &= side.costs;
      // side_p's groups after main's: its items, usage and groups' offsets shifted by main's.
      const std::size_t items0 = main.out.items, uses0 = main.out.uses, n_items = side.out.items,
                        n_uses = side.out.uses;
      Cursors& o = main.out;
      std::copy_n(side_p.value.data(), n_items, o.value + items0);
      std::copy_n(side_p.column.data(), n_items, o.column + items0);
      for (std::size_t t = 1; t <= n_items; ++t)
        o.use_begin[items0 + t] = side_p.use_begin[t] + static_cast<int>(uses0);
      std::copy_n(side_p.use_row.data(), n_uses, o.use_row + uses0);
      std::copy_n(side_p.use_val.data(), n_uses, o.use_val + uses0);
      o.items += n_items;
      o.uses += n_uses;
      for (std::size_t g = 1; g < side_p.group_begin.size(); ++g)
        p.group_begin.push_back(side_p.group_begin[g] + static_cast<int>(items0));
      p.group_row.insert(p.group_row.end(), side_p.group_row.begin(), side_p.group_row.end());
      for (const int it : side.start) main.start.push_back(it >= 0 ? it + static_cast<int>(items0) : it);
    }
  } else {
    failed = build_rows(main, 0, nrows);
  }
  if (failed >= 0) {
    if (direct) close_cursors(main);
    const int i = c.choice_rows[static_cast<std::size_t>(failed)];
    s.infeasible = true;
    s.why = "choice row " + std::to_string(i) + " must pick a column but all its columns are fixed to 0";
    return s;
  }
  // (None when the choice rows hold every column, as in a round.)
  if (c.num_members() < nu) {
    auto single = [&](int j) {
      if (direct)
        urange != nullptr ? build_group_direct(main, &j, 1, false, -1, from_range)
                          : build_group_direct(main, &j, 1, false, -1, from_begin);
      else
        build_group(main, &j, 1, false, -1);
    };
    if (c.runs.empty()) {
      for (int j = 0; j < n; ++j)
        if (c.choice_of[static_cast<std::size_t>(j)] < 0) single(j);
    } else {  // (the columns between the runs, ascending)
      int j = 0;
      for (const auto& run : c.runs) {
        for (; j < run[1]; ++j) single(j);
        j = run[1] + run[2];
      }
      for (; j < n; ++j) single(j);
    }
  }
  if (direct) close_cursors(main);
  // (Every column read by build_group_direct() or above: each choice row's, each outside them.)
  if (costs_finite != nullptr) *costs_finite = direct && main.costs;
  if (start != nullptr && main.start.size() == static_cast<std::size_t>(p.num_groups()))
    s.start_items = std::move(main.start);
  return s;
}

// The rows' activities from the entries of the columns `ones` (ascending; x is 0 elsewhere), their
// bounds checked.
bool rows_feasible(const MilpModel& m, const EntryIndex& ix, const std::vector<double>& x, const std::vector<int>& ones,
                   double tol);

}  // namespace

bool solution_feasible(const MilpModel& m, const EntryIndex& ix, const std::vector<double>& x, double tol) {
  if (ix.empty()) return m.is_feasible(x, tol);
  if (x.size() != m.obj.size() || ix.cap_begin.size() != x.size() + 1) return false;
  std::vector<int> ones;
  const std::size_t n = x.size();
  if (ix.bounds_listed && tol >= 0.0) {
    // A 0 is within the bounds [0, 1] that all but the listed columns have: only the values that
    // are not +0.0 (all bits 0; nearly every value: eight at a time) and the listed columns need a
    // look. (Any bound crossed makes is_feasible() false too, so the order of the looks does not
    // change the verdict.)
    static_assert(sizeof(double) == sizeof(std::uint64_t));
    const double* xv = x.data();
    for (std::size_t b = 0; b < n; b += 8) {
      const std::size_t f = std::min(n, b + 8);
      std::uint64_t any = 0;
      for (std::size_t j = b; j < f; ++j) any |= std::bit_cast<std::uint64_t>(xv[j]);
      if (any == 0) continue;
      for (std::size_t j = b; j < f; ++j) {
        if (xv[j] != 0.0 && xv[j] != 1.0) return m.is_feasible(x, tol);  // (not a 0/1 solution: the general check)
        if (xv[j] < m.col_lower[j] - tol || xv[j] > m.col_upper[j] + tol) return false;
        if (xv[j] != 0.0) ones.push_back(static_cast<int>(j));
      }
    }
    for (int j : ix.other_bounds) {
      const auto ju = static_cast<std::size_t>(j);
      if (x[ju] < m.col_lower[ju] - tol || x[ju] > m.col_upper[ju] + tol) return false;
    }
  } else {
    for (std::size_t j = 0; j < n; ++j) {
      if (x[j] != 0.0 && x[j] != 1.0) return m.is_feasible(x, tol);  // (not a 0/1 solution: the general check)
      if (x[j] < m.col_lower[j] - tol || x[j] > m.col_upper[j] + tol) return false;
      if (x[j] != 0.0) ones.push_back(static_cast<int>(j));
    }
  }
  return rows_feasible(m, ix, x, ones, tol);
}

bool solution_feasible(const MilpModel& m, const EntryIndex& ix, const std::vector<double>& x,
                       const std::vector<int>& ones, double tol) {
  if (ix.empty() || !ix.bounds_listed || !(tol >= 0.0) || x.size() != m.obj.size() ||
      ix.cap_begin.size() != x.size() + 1)
    return solution_feasible(m, ix, x, tol);
  // What the pass over x would find: the columns at 1, ascending (listed otherwise, or not at 1:
  // that pass decides).
  for (std::size_t o = 0; o < ones.size(); ++o) {
    const int j = ones[o];
    if (j < 0 || static_cast<std::size_t>(j) >= x.size() || (o > 0 && j <= ones[o - 1]) ||
        x[static_cast<std::size_t>(j)] != 1.0)
      return solution_feasible(m, ix, x, tol);
  }
  for (int j : ones) {
    const auto ju = static_cast<std::size_t>(j);
    if (x[ju] < m.col_lower[ju] - tol || x[ju] > m.col_upper[ju] + tol) return false;
  }
  // (The columns at 0 are within the bounds [0, 1] that all but the listed columns have.)
  for (int j : ix.other_bounds) {
    const auto ju = static_cast<std::size_t>(j);
    if (x[ju] < m.col_lower[ju] - tol || x[ju] > m.col_upper[ju] + tol) return false;
  }
  return rows_feasible(m, ix, x, ones, tol);
}

namespace {

bool rows_feasible(const MilpModel& m, const EntryIndex& ix, const std::vector<double>& x, const std::vector<int>& ones,
                   double tol) {
  const auto nr = static_cast<std::size_t>(m.num_rows());
  std::vector<double> act(nr, 0.0);
  std::vector<int> choice_index(nr, -1);
  for (std::size_t r = 0; r < ix.choice_rows.size(); ++r)
    choice_index[static_cast<std::size_t>(ix.choice_rows[r])] = static_cast<int>(r);
  const auto& e = m.entries;
  // (Each column's entries lie apart in the model: a cache miss per column at 1, fetched a few
  // columns ahead.)
  constexpr std::size_t kAhead = 8;
  for (std::size_t o = 0; o < ones.size(); ++o) {
    if (o + kAhead < ones.size()) {
      const auto ja = static_cast<std::size_t>(ones[o + kAhead]);
      __builtin_prefetch(e.data() + ix.cap_begin[ja]);
    }
    const int j = ones[o];
    const auto ju = static_cast<std::size_t>(j);
    if (const int row = ix.choice_of[ju]; row >= 0) {
      const int r = choice_index[static_cast<std::size_t>(row)];
      const auto b = e.begin() + ix.choice_begin[static_cast<std::size_t>(r)];
      const auto f = e.begin() + ix.choice_begin[static_cast<std::size_t>(r) + 1];
      // (A row's columns ascend, each once: where its columns are consecutive, as in a round's
      // choice rows, column j is the entry j - first column; else the search finds it.)
      const long off = b < f ? static_cast<long>(j) - b->col : -1;
      const auto it = off >= 0 && off < f - b && (b + off)->col == j
                          ? b + off
                          : std::lower_bound(b, f, j, [](const MilpModel::Entry& a, int col) { return a.col < col; });
      if (it == f || it->col != j || it->row != row) return false;  // (the index does not describe the model)
      act[static_cast<std::size_t>(row)] += it->value * x[ju];
    }
    for (int q = ix.cap_begin[ju]; q < ix.cap_begin[ju + 1]; ++q) {
      const auto& en = e[static_cast<std::size_t>(q)];
      if (en.col != j) return false;
      act[static_cast<std::size_t>(en.row)] += en.value * x[ju];
    }
  }
  for (std::size_t i = 0; i < nr; ++i)
    if (act[i] < m.row_lower[i] - tol || act[i] > m.row_upper[i] + tol) return false;
  return true;
}

}  // namespace

}  // namespace sia::detail::native
