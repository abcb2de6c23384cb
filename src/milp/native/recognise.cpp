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

}  // namespace

Shape recognise(const MilpModel& m) {
  Shape s;
  s.sign = m.sense == MilpSense::maximize ? 1.0 : -1.0;
  const int n = m.num_cols(), nr = m.num_rows();
  const auto nu = static_cast<std::size_t>(n);

  // Binary columns with effective bounds.
  std::vector<signed char> lo(nu), hi(nu);
  for (int j = 0; j < n; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    if (!m.is_integer[ju] || m.col_lower[ju] < -kTol || m.col_upper[ju] > 1.0 + kTol) {
      s.why = "column " + std::to_string(j) + " is not binary";
      return s;
    }
    lo[ju] = static_cast<signed char>(std::ceil(m.col_lower[ju] - kTol));
    hi[ju] = static_cast<signed char>(std::floor(m.col_upper[ju] + kTol));
    if (lo[ju] > hi[ju]) {
      s.round_shaped = true;
      s.infeasible = true;
      s.why = "column " + std::to_string(j) + " has no integer value within its bounds";
      return s;
    }
  }

  const RowMatrix a = row_matrix(m);
  auto row_begin = [&](int i) { return static_cast<std::size_t>(a.begin[static_cast<std::size_t>(i)]); };
  auto row_end = [&](int i) { return static_cast<std::size_t>(a.begin[static_cast<std::size_t>(i) + 1]); };

  // Classify rows.
  std::vector<int> choice_of(nu, -1);  // model row
  std::vector<char> forced_row(static_cast<std::size_t>(nr), 0);
  std::vector<int> cap_index(static_cast<std::size_t>(nr), -1);
  std::vector<int> choice_rows;
  for (int i = 0; i < nr; ++i) {
    const auto iu = static_cast<std::size_t>(i);
    const double lo_r = m.row_lower[iu], up_r = m.row_upper[iu];
    if (row_begin(i) == row_end(i)) {
      if (lo_r > kTol || up_r < -kTol) {
        s.round_shaped = true;
        s.infeasible = true;
        s.why = "row " + std::to_string(i) + " has no coefficients and excludes 0";
        return s;
      }
      continue;
    }
    bool ones = true, nonneg = true, free_cols = true;
    for (std::size_t q = row_begin(i); q < row_end(i); ++q) {
      ones = ones && std::abs(a.val[q] - 1.0) <= 1e-12;
      nonneg = nonneg && a.val[q] > 0.0;
      free_cols = free_cols && choice_of[static_cast<std::size_t>(a.col[q])] < 0;
    }
    if (ones && free_cols && up_r >= 1.0 - kTol && up_r < 2.0 - kTol && lo_r <= 1.0 + kTol) {
      for (std::size_t q = row_begin(i); q < row_end(i); ++q) choice_of[static_cast<std::size_t>(a.col[q])] = i;
      forced_row[iu] = lo_r > kTol ? 1 : 0;
      choice_rows.push_back(i);
      continue;
    }
    if (nonneg && lo_r <= kTol) {
      if (up_r == MilpModel::inf) continue;  // redundant
      cap_index[iu] = static_cast<int>(s.cap_rows.size());
      s.cap_rows.push_back(i);
      continue;
    }
    if (ones && !free_cols && lo_r > kTol) {
      s.why = "row " + std::to_string(i) + " forces a choice over columns that already belong to another choice row";
      return s;
    }
    s.why = "row " + std::to_string(i) + " is neither a choice row nor a capacity row";
    return s;
  }
  s.round_shaped = true;

  Problem& p = s.problem;
  const int K = static_cast<int>(s.cap_rows.size());
  p.num_rows = K;
  p.cap.resize(static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k)
    p.cap[static_cast<std::size_t>(k)] = m.row_upper[static_cast<std::size_t>(s.cap_rows[static_cast<std::size_t>(k)])];

  // Usage of each column over capacity rows, compressed by column (rows ascending).
  std::vector<int> ubegin(nu + 1, 0);
  for (int k = 0; k < K; ++k) {
    const int i = s.cap_rows[static_cast<std::size_t>(k)];
    for (std::size_t q = row_begin(i); q < row_end(i); ++q) ++ubegin[static_cast<std::size_t>(a.col[q]) + 1];
  }
  std::partial_sum(ubegin.begin(), ubegin.end(), ubegin.begin());
  std::vector<std::pair<int, double>> uses(static_cast<std::size_t>(ubegin[nu]));
  {
    std::vector<int> fill(ubegin.begin(), ubegin.end() - 1);
    for (int k = 0; k < K; ++k) {
      const int i = s.cap_rows[static_cast<std::size_t>(k)];
      for (std::size_t q = row_begin(i); q < row_end(i); ++q)
        uses[static_cast<std::size_t>(fill[static_cast<std::size_t>(a.col[q])]++)] = {k, a.val[q]};
    }
  }
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
  p.reserve(choice_rows.size() + nu, nu + choice_rows.size(), uses.size());
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

  // Members of each choice row, in column order (the row's entries are sorted by column).
  for (int i : choice_rows) {
    if (pins_in_row[static_cast<std::size_t>(i)] > 0) continue;
    if (!build_group(a.col.data() + row_begin(i), row_end(i) - row_begin(i),
                     forced_row[static_cast<std::size_t>(i)] != 0, i)) {
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

}  // namespace sia::detail::native
