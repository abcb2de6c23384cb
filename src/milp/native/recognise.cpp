// Recognition of the round's multiple-choice knapsack structure in a generic MilpModel
// (problem.hpp). Everything is kept in compressed arrays: a model of millions of columns is read
// without one allocation per row or column.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "milp/native/problem.hpp"

namespace sia::detail::native {
namespace {

constexpr double kTol = 1e-9;

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

// What the rows are, however they were read: the choice rows with their members (columns
// ascending), and every column's usage of the capacity rows (k ascending).
struct Classified {
  std::vector<int> choice_of;        // per column: its choice row (model row), -1 none
  std::vector<char> forced_row;      // per model row
  std::vector<int> choice_rows;      // model rows, ascending
  std::vector<int> member_begin{0};  // per choice row: its columns in `members`
  std::vector<int> members;
  std::vector<int> ubegin;  // per column: its usage in `uses`
  std::vector<std::pair<int, double>> uses;
};

// Binary columns with effective bounds (lo, hi); false (with s filled) when the model is not
// binary or a column has no integer value.
bool read_bounds(const MilpModel& m, Shape& s, std::vector<signed char>& lo, std::vector<signed char>& hi) {
  const int n = m.num_cols();
  lo.resize(static_cast<std::size_t>(n));
  hi.resize(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    if (!m.is_integer[ju] || m.col_lower[ju] < -kTol || m.col_upper[ju] > 1.0 + kTol) {
      s.why = "column " + std::to_string(j) + " is not binary";
      return false;
    }
    lo[ju] = static_cast<signed char>(std::ceil(m.col_lower[ju] - kTol));
    hi[ju] = static_cast<signed char>(std::floor(m.col_upper[ju] + kTol));
    if (lo[ju] > hi[ju]) {
      s.round_shaped = true;
      s.infeasible = true;
      s.why = "column " + std::to_string(j) + " has no integer value within its bounds";
      return false;
    }
  }
  return true;
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
  c.uses.resize(static_cast<std::size_t>(c.ubegin[nu]));
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
bool classify_in_layout(const MilpModel& m, Shape& s, Classified& c) {
  const int n = m.num_cols(), nr = m.num_rows();
  const auto nu = static_cast<std::size_t>(n);
  const auto& e = m.entries;
  const std::size_t ne = e.size();
  // The second part: the longest suffix ordered by (column, row).
  std::size_t split = ne;
  while (split > 0) {
    if (split < ne) {
      const auto& x = e[split - 1];
      const auto& y = e[split];
      if (!(x.col < y.col || (x.col == y.col && x.row < y.row))) break;
    }
    --split;
  }
  // The first part: ordered by (row, column); its rows below the second part's.
  int first_max_row = -1, second_min_row = nr;
  for (std::size_t q = 0; q < ne; ++q) {
    const auto& x = e[q];
    if (x.row < 0 || x.row >= nr || x.col < 0 || x.col >= n || x.value == 0.0) return false;
    if (q < split) {
      if (q > 0 && !(e[q - 1].row < x.row || (e[q - 1].row == x.row && e[q - 1].col < x.col))) return false;
      first_max_row = x.row;
    } else {
      second_min_row = std::min(second_min_row, x.row);
    }
  }
  if (first_max_row >= second_min_row) return false;

  // First part: row ranges in order.
  c.choice_of.assign(nu, -1);
  c.forced_row.assign(static_cast<std::size_t>(nr), 0);
  std::vector<char> has_entries(static_cast<std::size_t>(nr), 0);
  c.members.reserve(split);
  c.member_begin.reserve(static_cast<std::size_t>(nr) + 1);  // (a choice row per job: room for all at once)
  c.choice_rows.reserve(static_cast<std::size_t>(nr));
  for (std::size_t q = 0; q < split;) {
    const int i = e[q].row;
    const auto iu = static_cast<std::size_t>(i);
    std::size_t end = q;
    bool ones = true, nonneg = true, free_cols = true;
    for (; end < split && e[end].row == i; ++end) {
      ones = ones && std::abs(e[end].value - 1.0) <= 1e-12;
      nonneg = nonneg && e[end].value > 0.0;
      free_cols = free_cols && c.choice_of[static_cast<std::size_t>(e[end].col)] < 0;
    }
    has_entries[iu] = 1;
    const double lo_r = m.row_lower[iu], up_r = m.row_upper[iu];
    if (!is_choice_row(ones, free_cols, lo_r, up_r)) {
      if (is_capacity_row(nonneg, lo_r) && up_r == MilpModel::inf) {  // redundant
        q = end;
        continue;
      }
      return false;
    }
    for (; q < end; ++q) {
      c.choice_of[static_cast<std::size_t>(e[q].col)] = i;
      c.members.push_back(e[q].col);
    }
    c.member_begin.push_back(static_cast<int>(c.members.size()));
    c.forced_row[iu] = lo_r > kTol ? 1 : 0;
    c.choice_rows.push_back(i);
  }
  // Second part: every row's properties in one pass over the columns.
  std::vector<char> ones(static_cast<std::size_t>(nr), 1), nonneg(static_cast<std::size_t>(nr), 1),
      free_cols(static_cast<std::size_t>(nr), 1);
  for (std::size_t q = split; q < ne; ++q) {
    const auto iu = static_cast<std::size_t>(e[q].row);
    has_entries[iu] = 1;
    ones[iu] &= static_cast<char>(std::abs(e[q].value - 1.0) <= 1e-12);
    nonneg[iu] &= static_cast<char>(e[q].value > 0.0);
    free_cols[iu] &= static_cast<char>(c.choice_of[static_cast<std::size_t>(e[q].col)] < 0);
  }
  std::vector<int> cap_index(static_cast<std::size_t>(nr), -1);
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
    if (up_r == MilpModel::inf) continue;  // redundant
    cap_index[iu] = static_cast<int>(s.cap_rows.size());
    s.cap_rows.push_back(i);
  }
  // Usage of each column over capacity rows: the second part is already by column, rows
  // ascending (so k ascending).
  c.ubegin.assign(nu + 1, 0);
  c.uses.reserve(ne - split);
  for (std::size_t q = split; q < ne; ++q) {
    const int k = cap_index[static_cast<std::size_t>(e[q].row)];
    if (k < 0) continue;
    ++c.ubegin[static_cast<std::size_t>(e[q].col) + 1];
    c.uses.emplace_back(k, e[q].value);
  }
  std::partial_sum(c.ubegin.begin(), c.ubegin.end(), c.ubegin.begin());
  return true;
}

Shape finish(const MilpModel& m, Shape s, const std::vector<signed char>& lo, const std::vector<signed char>& hi,
             const Classified& c);

// Both readings share the bounds and the finish; `in_layout_first` tries the round's own layout before the
// general reading by rows.
Shape recognise_with(const MilpModel& m, bool in_layout_first) {
  Shape s;
  s.sign = m.sense == MilpSense::maximize ? 1.0 : -1.0;
  std::vector<signed char> lo, hi;
  if (!read_bounds(m, s, lo, hi)) return s;
  Classified c;
  if (in_layout_first) {
    if (classify_in_layout(m, s, c)) {
      s.in_layout = true;
      return finish(m, std::move(s), lo, hi, c);
    }
    s.cap_rows.clear();
    c = Classified{};
  }
  if (!classify_by_rows(m, s, c)) return s;
  return finish(m, std::move(s), lo, hi, c);
}

}  // namespace

Shape recognise(const MilpModel& m) { return recognise_with(m, true); }

Shape recognise_by_rows(const MilpModel& m) { return recognise_with(m, false); }

namespace {

Shape finish(const MilpModel& m, Shape s, const std::vector<signed char>& lo, const std::vector<signed char>& hi,
             const Classified& c) {
  const int n = m.num_cols(), nr = m.num_rows();
  const auto nu = static_cast<std::size_t>(n);
  s.round_shaped = true;

  Problem& p = s.problem;
  const int K = static_cast<int>(s.cap_rows.size());
  p.num_rows = K;
  p.cap.resize(static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k)
    p.cap[static_cast<std::size_t>(k)] = m.row_upper[static_cast<std::size_t>(s.cap_rows[static_cast<std::size_t>(k)])];

  const auto& uses = c.uses;
  const auto& ubegin = c.ubegin;
  const auto& choice_of = c.choice_of;
  auto use_of = [&](int j) {
    struct Span {
      const std::pair<int, double>* b;
      const std::pair<int, double>* e;
      [[nodiscard]] const std::pair<int, double>* begin() const { return b; }
      [[nodiscard]] const std::pair<int, double>* end() const { return e; }
      [[nodiscard]] std::size_t size() const { return static_cast<std::size_t>(e - b); }
    };
    const auto ju = static_cast<std::size_t>(j);
    return Span{uses.data() + ubegin[ju], uses.data() + ubegin[ju + 1]};
  };

  // Pins.
  std::vector<int> pins_in_row(static_cast<std::size_t>(nr), 0);
  for (int j = 0; j < n; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    if (lo[ju] != 1) continue;
    s.pinned_cols.push_back(j);
    p.fixed_value += s.sign * m.obj[ju];
    for (const auto& [k, v] : use_of(j)) p.cap[static_cast<std::size_t>(k)] -= v;
    if (choice_of[ju] >= 0 && ++pins_in_row[static_cast<std::size_t>(choice_of[ju])] > 1) {
      s.infeasible = true;
      s.why = "two columns of choice row " + std::to_string(choice_of[ju]) + " are fixed to 1";
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
  p.reserve(c.choice_rows.size() + nu, nu + c.choice_rows.size(), uses.size());
  // Per column: the single capacity row it uses (-1: none, -2: several) and the amount there.
  std::vector<int> key_of(nu);
  std::vector<double> amount_of(nu);
  for (int j = 0; j < n; ++j) {
    const auto u = use_of(j);
    key_of[static_cast<std::size_t>(j)] = u.size() == 1 ? u.begin()->first : (u.size() == 0 ? -1 : -2);
    amount_of[static_cast<std::size_t>(j)] = u.size() == 1 ? u.begin()->second : 0.0;
  }
  std::vector<int> cand, kept;
  auto build_group = [&](const int* cols, std::size_t ncols, bool forced, int model_row) {
    // Candidates: free columns; drop value <= 0 when the group may stay empty.
    cand.clear();
    for (std::size_t q = 0; q < ncols; ++q) {
      const int j = cols[q];
      const auto ju = static_cast<std::size_t>(j);
      if (hi[ju] == 0 || lo[ju] == 1) continue;
      if (!forced && s.sign * m.obj[ju] <= 0.0) continue;
      cand.push_back(j);
    }
    // Single-row dominance: among columns using exactly the same single row (or none), keep only
    // those whose value strictly increases with usage. Columns of a round come sorted by row and
    // usage already; sort only when they do not.
    auto before = [&](int x, int y) {
      const int kx = key_of[static_cast<std::size_t>(x)], ky = key_of[static_cast<std::size_t>(y)];
      if (kx != ky) return kx < ky;
      if (kx == -2) return false;
      const double ux = amount_of[static_cast<std::size_t>(x)], uy = amount_of[static_cast<std::size_t>(y)];
      if (ux != uy) return ux < uy;
      return s.sign * m.obj[static_cast<std::size_t>(x)] > s.sign * m.obj[static_cast<std::size_t>(y)];
    };
    if (!std::is_sorted(cand.begin(), cand.end(), before)) std::stable_sort(cand.begin(), cand.end(), before);
    int last_key = -3;
    double best_val = -MilpModel::inf;
    kept.clear();
    for (int j : cand) {
      const int kj = key_of[static_cast<std::size_t>(j)];
      const double v = s.sign * m.obj[static_cast<std::size_t>(j)];
      if (kj != last_key) {
        last_key = kj;
        best_val = -MilpModel::inf;
      }
      if (kj == -2 || v > best_val) {
        kept.push_back(j);
        if (kj != -2) best_val = v;
      }
    }
    if (!std::is_sorted(kept.begin(), kept.end())) std::sort(kept.begin(), kept.end());
    if (forced && kept.empty()) return false;
    if (!forced && kept.empty()) return true;  // nothing worth choosing: the group stays empty
    for (int j : kept) p.add_item(s.sign * m.obj[static_cast<std::size_t>(j)], j, use_of(j));
    if (!forced) p.add_none();
    p.close_group(model_row);
    return true;
  };

  // Members of each choice row, in column order.
  for (std::size_t r = 0; r < c.choice_rows.size(); ++r) {
    const int i = c.choice_rows[r];
    if (pins_in_row[static_cast<std::size_t>(i)] > 0) continue;
    const auto b = static_cast<std::size_t>(c.member_begin[r]), e = static_cast<std::size_t>(c.member_begin[r + 1]);
    if (!build_group(c.members.data() + b, e - b, c.forced_row[static_cast<std::size_t>(i)] != 0, i)) {
      s.infeasible = true;
      s.why = "choice row " + std::to_string(i) + " must pick a column but all its columns are fixed to 0";
      return s;
    }
  }
  for (int j = 0; j < n; ++j) {
    if (choice_of[static_cast<std::size_t>(j)] >= 0) continue;
    build_group(&j, 1, false, -1);
  }
  return s;
}

}  // namespace
}  // namespace sia::detail::native
