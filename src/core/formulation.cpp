// The round's binary program, and the independent check of a backend's answer to it.
#include "core/formulation.hpp"

#include <algorithm>
#include <cmath>

#include "core/capacity_use.hpp"
#include "core/tenants.hpp"

namespace sia::detail {

Formulation formulate(const Problem& pb, const Requirements& req) {
  Formulation m;
  auto& milp = m.milp;
  const bool maximize = pb.p > 0;
  milp.sense = maximize ? MilpSense::maximize : MilpSense::minimize;
  // p > 0: max Σ w·A(u+λ) − λW;  p < 0: min Σ w·A(u−λ) + λW  (product.md §2 step 4 rewritten, with
  // the jobs' weights w and W = Σ w).
  const double lambda = pb.model_lambda;
  milp.obj_offset = maximize ? -lambda * pb.total_weight : lambda * pb.total_weight;
  std::size_t ncols = 0;
  for (const auto& v : pb.valid) ncols += v.size();
  milp.obj.reserve(ncols);
  milp.col_lower.reserve(ncols);
  milp.col_upper.reserve(ncols);
  milp.is_integer.reserve(ncols);
  m.cols.reserve(ncols);
  milp.entries.reserve(ncols);
  // A choice row per job and the capacity rows (tenant rows, when there are any, may grow them).
  milp.row_lower.reserve(pb.num_jobs() + pb.set.rows.size());
  milp.row_upper.reserve(pb.num_jobs() + pb.set.rows.size());
  // Columns and entries are appended to the model's arrays directly (what add_col and add_entry
  // do, without a call and a name per column: a round has hundreds of thousands).
  for (std::size_t i = 0; i < pb.num_jobs(); ++i) {
    const int first = milp.num_cols();
    const bool pinned = req.pinned[i] != 0;
    const double lo = pinned ? 1.0 : 0.0;
    for (const Entry& v : pb.valid[i]) {
      if (pinned && v.config != pb.current[i]) continue;
      milp.obj.push_back(pb.weight[i] * (maximize ? v.util + lambda : v.util - lambda));
      milp.col_lower.push_back(lo);
      milp.col_upper.push_back(1.0);
      milp.is_integer.push_back(1);
      m.cols.emplace_back(i, v);
    }
    const int count = milp.num_cols() - first;
    if (count == 0) continue;
    if (count > 1 || req.forced[i]) {
      const int row = milp.add_row(req.forced[i] ? 1.0 : 0.0, 1.0);
      for (int c = first; c < milp.num_cols(); ++c) milp.entries.push_back({row, c, 1.0});
    }
  }
  // Capacity rows: a column only meets the rows of its own GPU type, with the charges of its
  // (configuration, GPUs) pair; a whole configuration's charges are worked out once per
  // configuration (thousands of jobs share each), a rigid job's footprint per column. Rows are
  // created in the set's order, then filled.
  const auto& rows = pb.set.rows;
  std::vector<std::vector<int>> rows_of_type(pb.set.free_gpus.size());
  for (std::size_t r = 0; r < rows.size(); ++r)
    rows_of_type[static_cast<std::size_t>(rows[r].type)].push_back(static_cast<int>(r));
  std::vector<std::pair<int, int>> charges;               // (set row, GPUs charged), charge != 0
  std::vector<int> whole(pb.set.configs.size() + 1, -1);  // per configuration: its first charge
  std::vector<int> whole_end(pb.set.configs.size(), -1);
  std::vector<std::pair<int, int>> column_charge(m.cols.size());  // per column: [first, end) in charges
  for (std::size_t c = 0; c < m.cols.size(); ++c) {
    const Entry& v = m.cols[c].second;
    const auto k = static_cast<std::size_t>(v.config);
    const ConfigurationSpec& cfg = pb.set.configs[k];
    const bool full = v.gpus <= 0 || v.gpus >= cfg.gpus;
    if (full && whole[k] >= 0) {
      column_charge[c] = {whole[k], whole_end[k]};
      continue;
    }
    const int first = static_cast<int>(charges.size());
    for (int r : rows_of_type[static_cast<std::size_t>(cfg.type)]) {
      // Per entry, not per configuration: a rigid job on its footprint is charged its count.
      const int u = pb.set.row_usage(rows[static_cast<std::size_t>(r)], cfg, v.gpus);
      if (u != 0) charges.emplace_back(r, u);
    }
    column_charge[c] = {first, static_cast<int>(charges.size())};
    if (full) {
      whole[k] = first;
      whole_end[k] = static_cast<int>(charges.size());
    }
  }
  std::vector<char> counts(rows.size(), 0);
  std::size_t nentries = milp.entries.size();
  for (const auto& [first, end] : column_charge) {
    nentries += static_cast<std::size_t>(end - first);
    for (int q = first; q < end; ++q) counts[static_cast<std::size_t>(charges[static_cast<std::size_t>(q)].first)] = 1;
  }
  m.capacity_row.assign(rows.size(), -1);
  for (std::size_t r = 0; r < rows.size(); ++r)
    if (counts[r]) m.capacity_row[r] = milp.add_row(-MilpModel::inf, static_cast<double>(rows[r].capacity));
  milp.entries.reserve(nentries);
  for (std::size_t c = 0; c < m.cols.size(); ++c)
    for (int q = column_charge[c].first; q < column_charge[c].second; ++q) {
      const auto& [r, u] = charges[static_cast<std::size_t>(q)];
      milp.entries.push_back(
          {m.capacity_row[static_cast<std::size_t>(r)], static_cast<int>(c), static_cast<double>(u)});
    }
  // Tenant rows (tenants.hpp) after the capacity rows: caps and guarantees have the capacity rows'
  // shape (non-negative GPU counts, an upper bound), so every backend, the native one included,
  // reads them as more capacity rows.
  m.tenant_rows = tenant_rows(pb, req);
  for (const TenantRow& tr : m.tenant_rows) {
    const int row = milp.add_row(-MilpModel::inf, static_cast<double>(tr.bound));
    m.tenant_row.push_back(row);
    for (std::size_t c = 0; c < m.cols.size(); ++c) {
      const auto& [i, v] = m.cols[c];
      const long long u = tenant_usage(pb, tr, i, v);
      if (u != 0) milp.add_entry(row, static_cast<int>(c), static_cast<double>(u));
    }
  }
  return m;
}

int objective_exponent(const MilpModel& milp) noexcept {
  double big = std::abs(milp.obj_offset);
  for (double c : milp.obj) big = std::max(big, std::abs(c));
  if (!(big > 0.0) || !std::isfinite(big)) return 0;
  const int e = std::ilogb(big);
  return e > 20 || e < -20 ? e : 0;
}

bool decode(const Problem& pb, const Formulation& m, const std::vector<double>& x, const Requirements& req,
            Choice& out) {
  if (x.size() != m.cols.size() || !m.milp.is_feasible(x, 1e-6)) return false;
  out.assign(pb.num_jobs(), -1);
  CapacityUse usage(pb.set);
  TenantUse tenants(pb, m.tenant_rows);
  for (std::size_t c = 0; c < x.size(); ++c) {
    if (!(x[c] > 0.5)) continue;
    const auto [i, v] = m.cols[c];
    if (out[i] >= 0) return false;
    out[i] = pb.entry_of(i, v.config);
    usage.add(v.config, v.gpus);
    tenants.add(i, v);
  }
  if (!usage.within_capacity() || !tenants.within_bounds()) return false;
  for (std::size_t i = 0; i < pb.num_jobs(); ++i) {
    if (req.pinned[i] && pb.config_of(out, i) != pb.current[i]) return false;
    if (req.forced[i] && out[i] < 0) return false;
  }
  return true;
}

}  // namespace sia::detail
