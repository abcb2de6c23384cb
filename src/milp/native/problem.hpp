#pragma once
// Private to the native backend: the round's ILP seen as a multiple-choice multi-dimensional
// knapsack (MCKP), and its recognition from a generic MilpModel.
//
// Internally everything is a maximisation: item value = sign * model cost, sign = -1 for
// minimisation. Every group (one job) owns its items; a group that may stay empty owns an explicit
// "none" item (value 0, no usage, column -1), so "at most one" and "exactly one" are the same
// thing for the algorithms: pick exactly one item per group.
#include <sia/milp/model.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace sia::detail::native {

struct Problem {
  int num_rows = 0;          ///< K capacity rows
  std::vector<double> cap;   ///< K, remaining after pins
  double fixed_value = 0.0;  ///< internal value of pinned columns
  // Groups: items of group g are [group_begin[g], group_begin[g+1]).
  std::vector<int> group_begin{0};
  std::vector<int> group_row;  ///< model choice row of the group, -1 if none (singleton column)
  // Items.
  std::vector<double> value;
  std::vector<int> column;        ///< model column, -1 for the "none" item
  std::vector<int> use_begin{0};  ///< CSR of usage over capacity rows
  std::vector<int> use_row;
  std::vector<double> use_val;

  [[nodiscard]] int num_groups() const noexcept { return static_cast<int>(group_begin.size()) - 1; }
  [[nodiscard]] int num_items() const noexcept { return static_cast<int>(value.size()); }
  [[nodiscard]] bool has_none(int g) const noexcept {
    for (int it = group_begin[static_cast<std::size_t>(g)]; it < group_begin[static_cast<std::size_t>(g) + 1]; ++it)
      if (column[static_cast<std::size_t>(it)] < 0) return true;
    return false;
  }
  int add_item(double v, int col, const std::vector<std::pair<int, double>>& use) {
    value.push_back(v);
    column.push_back(col);
    for (const auto& [r, a] : use) {
      use_row.push_back(r);
      use_val.push_back(a);
    }
    use_begin.push_back(static_cast<int>(use_row.size()));
    return num_items() - 1;
  }
  void close_group(int model_row) {
    group_begin.push_back(num_items());
    group_row.push_back(model_row);
  }
};

/// What recognition found in the model.
struct Shape {
  bool round_shaped = false;
  bool infeasible = false;       ///< proven while reading (pins over capacity, contradictory bounds)
  std::string why;               ///< reason for !round_shaped or infeasible
  double sign = 1.0;             ///< +1 maximise, -1 minimise
  std::vector<int> cap_rows;     ///< model row of each capacity row k
  std::vector<int> pinned_cols;  ///< columns fixed to 1
  Problem problem;
};

/**
 * @brief Recognises the round's structure: binary columns; choice rows (all coefficients 1, upper
 * bound in [1,2), lower bound <= 0 or in (0,1] = forced; each column in at most one); capacity rows
 * (non-negative coefficients, lower bound <= 0, finite upper bound); pins as column bounds.
 * Items dominated within their group (same single capacity row, no more value for more usage, or
 * value <= 0 when the group may stay empty) are dropped: they can never improve a solution.
 */
inline Shape recognise(const MilpModel& m) {
  Shape s;
  s.sign = m.sense == MilpSense::maximize ? 1.0 : -1.0;
  const int n = m.num_cols(), nr = m.num_rows();
  constexpr double tol = 1e-9;

  // Binary columns with effective bounds.
  std::vector<int> lo(static_cast<std::size_t>(n)), hi(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    if (!m.is_integer[ju] || m.col_lower[ju] < -tol || m.col_upper[ju] > 1.0 + tol) {
      s.why = "column " + std::to_string(j) + " is not binary";
      return s;
    }
    lo[ju] = static_cast<int>(std::ceil(m.col_lower[ju] - tol));
    hi[ju] = static_cast<int>(std::floor(m.col_upper[ju] + tol));
    if (lo[ju] > hi[ju]) {
      s.round_shaped = true;
      s.infeasible = true;
      s.why = "column " + std::to_string(j) + " has no integer value within its bounds";
      return s;
    }
  }

  // Rows in CSR form, duplicates summed, zeros dropped.
  std::vector<std::vector<std::pair<int, double>>> rows(static_cast<std::size_t>(nr));
  for (const auto& e : m.entries) rows[static_cast<std::size_t>(e.row)].emplace_back(e.col, e.value);
  for (auto& r : rows) {
    std::sort(r.begin(), r.end());
    std::size_t w = 0;
    for (std::size_t i = 0; i < r.size();) {
      std::size_t k = i;
      double v = 0.0;
      while (k < r.size() && r[k].first == r[i].first) v += r[k++].second;
      if (v != 0.0) r[w++] = {r[i].first, v};
      i = k;
    }
    r.resize(w);
  }

  // Classify rows.
  std::vector<int> choice_of(static_cast<std::size_t>(n), -1);  // model row
  std::vector<char> forced_row(static_cast<std::size_t>(nr), 0);
  std::vector<int> cap_index(static_cast<std::size_t>(nr), -1);
  std::vector<int> choice_rows;
  for (int i = 0; i < nr; ++i) {
    const auto iu = static_cast<std::size_t>(i);
    const auto& r = rows[iu];
    const double lo_r = m.row_lower[iu], up_r = m.row_upper[iu];
    if (r.empty()) {
      if (lo_r > tol || up_r < -tol) {
        s.round_shaped = true;
        s.infeasible = true;
        s.why = "row " + std::to_string(i) + " has no coefficients and excludes 0";
        return s;
      }
      continue;
    }
    bool ones = true, nonneg = true;
    for (const auto& [c, v] : r) {
      ones = ones && std::abs(v - 1.0) <= 1e-12;
      nonneg = nonneg && v > 0.0;
    }
    const bool free_cols = std::all_of(r.begin(), r.end(),
                                       [&](const auto& e) { return choice_of[static_cast<std::size_t>(e.first)] < 0; });
    if (ones && free_cols && up_r >= 1.0 - tol && up_r < 2.0 - tol && lo_r <= 1.0 + tol) {
      for (const auto& e : r) choice_of[static_cast<std::size_t>(e.first)] = i;
      forced_row[iu] = lo_r > tol ? 1 : 0;
      choice_rows.push_back(i);
      continue;
    }
    if (nonneg && lo_r <= tol) {
      if (up_r == MilpModel::inf) continue;  // redundant
      cap_index[iu] = static_cast<int>(s.cap_rows.size());
      s.cap_rows.push_back(i);
      continue;
    }
    if (ones && !free_cols && lo_r > tol) {
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

  // Usage of each column over capacity rows.
  std::vector<std::vector<std::pair<int, double>>> use(static_cast<std::size_t>(n));
  for (int i = 0; i < nr; ++i) {
    const int k = cap_index[static_cast<std::size_t>(i)];
    if (k < 0) continue;
    for (const auto& [c, v] : rows[static_cast<std::size_t>(i)]) use[static_cast<std::size_t>(c)].emplace_back(k, v);
  }

  // Pins.
  std::vector<int> pins_in_row(static_cast<std::size_t>(nr), 0);
  for (int j = 0; j < n; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    if (lo[ju] != 1) continue;
    s.pinned_cols.push_back(j);
    p.fixed_value += s.sign * m.obj[ju];
    for (const auto& [k, v] : use[ju]) p.cap[static_cast<std::size_t>(k)] -= v;
    if (choice_of[ju] >= 0 && ++pins_in_row[static_cast<std::size_t>(choice_of[ju])] > 1) {
      s.infeasible = true;
      s.why = "two columns of choice row " + std::to_string(choice_of[ju]) + " are fixed to 1";
      return s;
    }
  }
  for (int k = 0; k < K; ++k)
    if (p.cap[static_cast<std::size_t>(k)] <
        -1e-9 *
            std::max(1.0, std::abs(m.row_upper[static_cast<std::size_t>(s.cap_rows[static_cast<std::size_t>(k)])]))) {
      s.infeasible = true;
      s.why =
          "columns fixed to 1 exceed the upper bound of row " + std::to_string(s.cap_rows[static_cast<std::size_t>(k)]);
      return s;
    }

  // Groups: one per choice row without a pin, one per free column outside choice rows.
  std::vector<std::vector<int>> members(static_cast<std::size_t>(nr));
  for (int j = 0; j < n; ++j)
    if (choice_of[static_cast<std::size_t>(j)] >= 0)
      members[static_cast<std::size_t>(choice_of[static_cast<std::size_t>(j)])].push_back(j);

  std::vector<int> cand;
  auto build_group = [&](const std::vector<int>& cols, bool forced, int model_row) {
    // Candidates: free columns; drop value <= 0 when the group may stay empty.
    cand.clear();
    for (int j : cols) {
      const auto ju = static_cast<std::size_t>(j);
      if (hi[ju] == 0 || lo[ju] == 1) continue;
      if (!forced && s.sign * m.obj[ju] <= 0.0) continue;
      cand.push_back(j);
    }
    // Single-row dominance: among columns using exactly the same single row (or none), keep only
    // those whose value strictly increases with usage.
    auto key = [&](int j) {
      return use[static_cast<std::size_t>(j)].size() == 1 ? use[static_cast<std::size_t>(j)][0].first
                                                          : (use[static_cast<std::size_t>(j)].empty() ? -1 : -2);
    };
    auto amount = [&](int j) {
      return use[static_cast<std::size_t>(j)].size() == 1 ? use[static_cast<std::size_t>(j)][0].second : 0.0;
    };
    std::stable_sort(cand.begin(), cand.end(), [&](int a, int b) {
      const int ka = key(a), kb = key(b);
      if (ka != kb) return ka < kb;
      if (ka == -2) return false;
      const double ua = amount(a), ub = amount(b);
      if (ua != ub) return ua < ub;
      return s.sign * m.obj[static_cast<std::size_t>(a)] > s.sign * m.obj[static_cast<std::size_t>(b)];
    });
    int last_key = -3;
    double best_val = -MilpModel::inf;
    std::vector<int> kept;
    for (int j : cand) {
      const int kj = key(j);
      const double v = s.sign * m.obj[static_cast<std::size_t>(j)];
      if (kj != last_key) {
        last_key = kj;
        best_val = -MilpModel::inf;
      }
      if (kj == -2) {
        kept.push_back(j);
        continue;
      }
      if (v > best_val) {
        kept.push_back(j);
        best_val = v;
      }
    }
    std::sort(kept.begin(), kept.end());
    if (forced && kept.empty()) return false;
    if (!forced && kept.empty()) return true;  // nothing worth choosing: the group stays empty
    for (int j : kept) p.add_item(s.sign * m.obj[static_cast<std::size_t>(j)], j, use[static_cast<std::size_t>(j)]);
    if (!forced) p.add_item(0.0, -1, {});
    p.close_group(model_row);
    return true;
  };

  std::vector<int> single(1);
  for (int i : choice_rows) {
    if (pins_in_row[static_cast<std::size_t>(i)] > 0) continue;
    if (!build_group(members[static_cast<std::size_t>(i)], forced_row[static_cast<std::size_t>(i)] != 0, i)) {
      s.infeasible = true;
      s.why = "choice row " + std::to_string(i) + " must pick a column but all its columns are fixed to 0";
      return s;
    }
  }
  for (int j = 0; j < n; ++j) {
    if (choice_of[static_cast<std::size_t>(j)] >= 0) continue;
    single[0] = j;
    build_group(single, false, -1);
  }
  return s;
}

}  // namespace sia::detail::native
