// The round's binary program, and the independent check of a backend's answer to it.
#include "core/formulation.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

#include "core/capacity_use.hpp"
#include "core/tenants.hpp"

namespace sia::detail {

namespace {

// objective_exponent() from the largest magnitude of the objective's coefficients and offset.
int exponent_of(double big) noexcept {
  if (!(big > 0.0) || !std::isfinite(big)) return 0;
  const int e = std::ilogb(big);
  return e > 20 || e < -20 ? e : 0;
}

// The arrays of the last formulation recycle() was handed on this thread (recycle()).
struct Spare {
  std::vector<double> obj, col_lower, col_upper;
  std::vector<char> is_integer;
  std::vector<MilpModel::Entry> entries;
  std::vector<Column> cols;
  std::vector<std::pair<int, int>> column_charge, charges;
  std::vector<MilpModel::Entry> charge_entries;
  std::vector<std::array<int, 3>> choice;
  std::vector<int> cap_begin;
};
thread_local Spare spare;

// `to` takes `from`'s storage, emptied: its capacity is all that is reused.
template <class V>
void reuse(V& to, V& from) noexcept {
  to = std::move(from);
  to.clear();
  from = V();
}

// `to` takes `from`'s storage as it is, elements and all (keep()), for a formulate() that resizes
// it to its own size and then writes every element: only the elements past the recycled size are
// value-initialised, not the whole array (a resize from empty zeroes megabytes that are then
// overwritten, every round).
template <class V>
void keep(V& to, V& from) noexcept {
  to = std::move(from);
  from = V();
}

// The capacity charges of formulate()'s columns: (set row, GPUs charged) pairs listed in `charges`,
// a column's a range [first, end) of them. A column only meets the rows of its own GPU type, with
// the charges of its (configuration, GPUs) pair; a whole configuration's charges are worked out
// once (thousands of jobs share each), a rigid job's footprint per column.
class ChargeList {
 public:
  ChargeList(const ConfigurationSet& set, std::vector<std::pair<int, int>>& charges)
      : set_(set), charges_(charges), whole_(set.configs.size(), {-1, -1}), counts_(set.rows.size(), 0) {
    rows_of_type_.resize(set.free_gpus.size());
    for (std::size_t r = 0; r < set.rows.size(); ++r)
      rows_of_type_[static_cast<std::size_t>(set.rows[r].type)].push_back(static_cast<int>(r));
    full_gpus_.reserve(set.configs.size());
    for (const ConfigurationSpec& c : set.configs) full_gpus_.push_back(c.gpus);
  }
  /// The charges of a column on entry `v`.
  std::pair<int, int> of(const Entry& v) {
    const auto cf = static_cast<std::size_t>(v.config);
    const bool full = v.gpus <= 0 || v.gpus >= full_gpus_[cf];
    if (full && whole_[cf].first >= 0) return whole_[cf];
    return list(v, full);
  }
  /// Does some column charge set row r?
  [[nodiscard]] bool counts(std::size_t r) const { return counts_[r] != 0; }
  /// Every charge listed is > 0 (ModelLayout's promise).
  [[nodiscard]] bool positive() const { return positive_; }

 private:
  [[gnu::noinline]] std::pair<int, int> list(const Entry& v, bool full) {
    const auto cf = static_cast<std::size_t>(v.config);
    const ConfigurationSpec& cfg = set_.configs[cf];
    const int from = static_cast<int>(charges_.size());
    for (int r : rows_of_type_[static_cast<std::size_t>(cfg.type)]) {
      // Per entry, not per configuration: a rigid job on its footprint is charged its count.
      const int u = set_.row_usage(set_.rows[static_cast<std::size_t>(r)], cfg, v.gpus);
      if (u != 0) {
        positive_ = positive_ && u > 0;
        charges_.emplace_back(r, u);
        counts_[static_cast<std::size_t>(r)] = 1;
      }
    }
    const std::pair<int, int> range{from, static_cast<int>(charges_.size())};
    if (full) whole_[cf] = range;
    return range;
  }
  const ConfigurationSet& set_;
  std::vector<std::pair<int, int>>& charges_;
  std::vector<std::pair<int, int>> whole_;  // per configuration: its whole charges ({-1, -1}: not yet)
  std::vector<char> counts_;
  std::vector<std::vector<int>> rows_of_type_;
  std::vector<int> full_gpus_;  // per configuration: its GPUs
  bool positive_ = true;
};

}  // namespace

void recycle(Formulation&& f) noexcept {
  keep(spare.obj, f.milp.obj);
  keep(spare.col_lower, f.milp.col_lower);
  keep(spare.col_upper, f.milp.col_upper);
  keep(spare.is_integer, f.milp.is_integer);
  keep(spare.entries, f.milp.entries);
  keep(spare.cols, f.cols);
  keep(spare.column_charge, f.column_charge);
  reuse(spare.charges, f.charges);
  reuse(spare.charge_entries, f.charge_entries);
  reuse(spare.choice, f.choice);
  keep(spare.cap_begin, f.cap_begin);
}

Formulation formulate(const Problem& pb, const Requirements& req, bool partial) {
  Formulation m;
  auto& milp = m.milp;
  // The recycled arrays as they are (keep): each is resized below and then every element written
  // (the columns' bounds and is_integer by complete(), unless the model is left partial).
  keep(milp.obj, spare.obj);
  keep(milp.col_lower, spare.col_lower);
  keep(milp.col_upper, spare.col_upper);
  keep(milp.is_integer, spare.is_integer);
  keep(milp.entries, spare.entries);
  keep(m.cols, spare.cols);
  keep(m.column_charge, spare.column_charge);
  reuse(m.charges, spare.charges);
  reuse(m.charge_entries, spare.charge_entries);
  reuse(m.choice, spare.choice);
  keep(m.cap_begin, spare.cap_begin);
  const bool maximize = pb.p > 0;
  milp.sense = maximize ? MilpSense::maximize : MilpSense::minimize;
  // p > 0: max Σ w·A(u+λ) − λW;  p < 0: min Σ w·A(u−λ) + λW  (product.md §2 step 4 rewritten, with
  // the jobs' weights w and W = Σ w).
  const double lambda = pb.model_lambda;
  milp.obj_offset = maximize ? -lambda * pb.total_weight : lambda * pb.total_weight;
  double big = std::abs(milp.obj_offset);  // the largest magnitude so far (objective_exponent)
  const std::size_t n = pb.num_jobs();
  // Sizes first, so that every array is sized once and then written through a pointer (no
  // push_back's test and stored end per element: a round has hundreds of thousands of columns).
  // And the choice rows' entries, so that each column's first capacity entry (cap_begin: after every
  // choice row's) is written with the column instead of in a pass of its own. A job has a choice row
  // when it has two columns or more, or one and is forced (both loops ask has_choice_row).
  const auto has_choice_row = [&req](std::size_t count, std::size_t i) {
    return count > 1 || (count == 1 && req.forced[i] != 0);
  };
  std::size_t ncols = 0, choice_entries = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t count = 0;
    if (!req.pinned[i])
      count = pb.valid[i].size();
    else
      for (const Entry& v : pb.valid[i]) count += v.config == pb.current[i] ? 1 : 0;
    ncols += count;
    if (has_choice_row(count, i)) choice_entries += count;
  }
  m.columns_are_entries = pb.valid.begin_of(0) == 0 && ncols == pb.valid.begin_of(n);
  milp.obj.resize(ncols);
  milp.col_lower.resize(ncols);
  milp.col_upper.resize(ncols);
  milp.is_integer.resize(ncols);
  m.cols.resize(ncols);
  // A choice row per job and the capacity rows (tenant rows, when there are any, may grow them).
  milp.row_lower.reserve(n + pb.set.rows.size());
  milp.row_upper.reserve(n + pb.set.rows.size());
  // The charges are listed while the columns are written (one pass over the entries); the
  // capacity rows are created afterwards, in the set's order.
  const auto& rows = pb.set.rows;
  ChargeList charges(pb.set, m.charges);
  m.column_charge.resize(ncols);  // per column: [first, end) in m.charges
  std::size_t capacity_entries = 0;
  // Where each column's capacity entries go (written by complete()).
  m.cap_begin.resize(ncols + 1);
  int* const cap_begin = m.cap_begin.data();
  // Columns are written to the model's arrays directly (what add_col does, without a call and a
  // name per column). The choice rows are numbered here, their entries written below (the same
  // order: every choice row's entries, job by job, before the capacity rows'), once the number of
  // entries is known.
  auto& choice = m.choice;  // per job with a choice row: (the row, its first column, columns)
  m.choice_row.assign(n, -1);
  choice.reserve(n);
  double* const obj = milp.obj.data();
  Column* const cols = m.cols.data();
  std::pair<int, int>* const column_charge = m.column_charge.data();
  const double shift = maximize ? lambda : -lambda;  // u + λ, or u − λ
  std::size_t col = 0;                               // the next column
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t first = col;
    const double w = pb.weight[i];
    const std::span<const Entry> valid = pb.valid[i];
    const bool pinned = req.pinned[i] != 0;
    const int current = pb.current[i];
    for (std::size_t k = 0; k < valid.size(); ++k) {
      const Entry& v = valid[k];
      if (pinned) {
        if (v.config != current) continue;
        m.pinned_cols.push_back(static_cast<int>(col));
      }
      const double c = w * (v.util + shift);
      obj[col] = c;
      big = std::max(big, std::abs(c));  // objective_exponent's fold, in its order
      cols[col] = Column{static_cast<int>(i), static_cast<int>(k)};
      const std::pair<int, int> q = charges.of(v);
      column_charge[col] = q;
      cap_begin[col] = static_cast<int>(choice_entries + capacity_entries);
      capacity_entries += static_cast<std::size_t>(q.second - q.first);
      ++col;
    }
    const int count = static_cast<int>(col - first);
    if (has_choice_row(col - first, i)) {
      // (MilpModel::add_row without a name)
      const int row = static_cast<int>(milp.row_lower.size());
      milp.row_lower.push_back(req.forced[i] ? 1.0 : 0.0);
      milp.row_upper.push_back(1.0);
      choice.push_back({row, static_cast<int>(first), count});
      m.choice_row[i] = row;
    }
  }
  m.exponent = exponent_of(big);
  // The choice rows' entries first, then the capacity entries (both written by complete()).
  milp.entries.resize(choice_entries + capacity_entries);
  m.capacity_row.assign(rows.size(), -1);
  for (std::size_t r = 0; r < rows.size(); ++r)
    if (charges.counts(r)) m.capacity_row[r] = milp.add_row(-MilpModel::inf, static_cast<double>(rows[r].capacity));
  cap_begin[ncols] = static_cast<int>(choice_entries + capacity_entries);
  // Tenant rows (tenants.hpp) after the capacity rows: caps and guarantees have the capacity rows'
  // shape (non-negative GPU counts, an upper bound), so every backend, the native one included,
  // reads them as more capacity rows.
  m.tenant_rows = tenant_rows(pb, req);
  m.layout_known = m.tenant_rows.empty() && charges.positive();
  if (m.layout_known) {
    // The capacity entries as the charges list them (ModelLayout::charge): a reader of the layout
    // reads a few kilobytes shared by many columns instead of an entry per column.
    m.charge_entries.resize(m.charges.size());
    for (std::size_t q = 0; q < m.charges.size(); ++q) {
      const auto& [r, u] = m.charges[q];
      m.charge_entries[q] = {m.capacity_row[static_cast<std::size_t>(r)], -1, static_cast<double>(u)};
    }
  }
  for (const TenantRow& tr : m.tenant_rows) {
    const int row = milp.add_row(-MilpModel::inf, static_cast<double>(tr.bound));
    m.tenant_row.push_back(row);
    for (std::size_t c = 0; c < m.cols.size(); ++c) {
      const long long u = tenant_usage(pb, tr, m.job_of(c), m.entry_of(pb, c));
      if (u != 0) milp.add_entry(row, static_cast<int>(c), static_cast<double>(u));
    }
  }
  // What the layout promises is left out only for a reader of the layout that completes the
  // model when it needs more (ModelLayout::complete): about a third of what this writes.
  m.partial = true;
  if (!partial || !m.layout_known) {
    m.complete();
  } else {
#ifndef NDEBUG
    // (Values no reader takes for a model's: a reader that reads them before complete() fails.)
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    std::fill(milp.col_lower.begin(), milp.col_lower.end(), nan);
    std::fill(milp.col_upper.begin(), milp.col_upper.end(), nan);
    std::fill(milp.is_integer.begin(), milp.is_integer.end(), 0);
    std::fill(milp.entries.begin(),
              milp.entries.begin() + static_cast<std::ptrdiff_t>(choice_entries + capacity_entries),
              MilpModel::Entry{-1, -1, nan});
#endif
  }
  return m;
}

void Formulation::complete() {
  if (!partial) return;
  const std::size_t ncols = cols.size();
  milp.col_lower.assign(ncols, 0.0);
  for (const int j : pinned_cols) milp.col_lower[static_cast<std::size_t>(j)] = 1.0;
  milp.col_upper.assign(ncols, 1.0);
  milp.is_integer.assign(ncols, 1);
  // (formulate(): the choice rows' entries, row by row, before every other.)
  MilpModel::Entry* entry = milp.entries.data();
  for (const auto& [row, first, count] : choice)
    for (int c = first; c < first + count; ++c) *entry++ = {row, c, 1.0};
  // Then the capacity entries, column by column, each column's charges in their order (its rows
  // ascending).
  const int* const capacity = capacity_row.data();
  const std::pair<int, int>* const charge = charges.data();
  for (std::size_t c = 0; c < ncols; ++c)
    for (int q = column_charge[c].first; q < column_charge[c].second; ++q) {
      const auto& [r, u] = charge[q];
      *entry++ = {capacity[r], static_cast<int>(c), static_cast<double>(u)};
    }
  partial = false;
}

namespace {
// The layout formulate() wrote, whole or partial (no ModelLayout::complete).
ModelLayout layout_as_written(const Formulation& f) {
  const MilpModel& m = f.milp;
  return ModelLayout{&m,          m.row_lower.size(), m.obj.size(),    m.entries.size(), f.choice,
                     f.cap_begin, f.pinned_cols,      f.column_charge, f.charge_entries, {}};
}
}  // namespace

ModelLayout Formulation::layout() const {
  assert(!partial);
  return layout_as_written(*this);
}

ModelLayout Formulation::reading_layout() {
  ModelLayout l = layout_as_written(*this);
  if (partial) l.complete = [this] { complete(); };
  return l;
}

int objective_exponent(const MilpModel& milp) noexcept {
  double big = std::abs(milp.obj_offset);
  for (double c : milp.obj) big = std::max(big, std::abs(c));
  return exponent_of(big);
}

namespace {

// Can the answer's verdict be taken from its columns at 1 (no tenant rows, the arrays sized)?
bool decided_by_ones(const Formulation& f) noexcept {
  const MilpModel& milp = f.milp;
  const std::size_t ncols = f.cols.size();
  return f.tenant_rows.empty() && f.column_charge.size() == ncols && milp.obj.size() == ncols &&
         milp.col_lower.size() == ncols && milp.col_upper.size() == ncols;
}

// The verdict of an answer whose every value is 0 or 1, from its columns at 1 `at_one` (ascending):
// 1 feasible, 0 not. visit(t, c, f.cols[c]) is called for each (the t-th), whatever the verdict;
// at_zero(j): is pinned column j at 0. `rows`: the problem's entries when the columns are its entries
// (Formulation::columns_are_entries): each column's (job, entry) is then found by walking the jobs'
// offsets along the ascending columns instead of read from f.cols (a cache miss per column at 1).
template <class Visit, class AtZero>
int verdict_of_ones(const Formulation& f, const std::vector<std::size_t>& at_one, Visit&& visit, AtZero&& at_zero,
                    const EntryRows* rows = nullptr) {
  constexpr double tol = 1e-6;
  const MilpModel& milp = f.milp;
  // The columns at 1: 1 in its job's choice row, its charges in the capacity rows (formulate).
  // Every value is an integer and every sum stays far below 2^53: exact in any order, as
  // is_feasible's sum over all entries (the columns at 0 add 0) is.
  std::vector<double> act(milp.row_lower.size(), 0.0);
  std::size_t job = 0;
  constexpr std::size_t ahead = 16;  // (the columns' pairs and charges: cache misses, fetched ahead)
  for (std::size_t t = 0; t < at_one.size(); ++t) {
#if defined(__GNUC__)
    if (t + ahead < at_one.size()) {
      if (rows == nullptr) __builtin_prefetch(f.cols.data() + at_one[t + ahead]);
      __builtin_prefetch(f.column_charge.data() + at_one[t + ahead]);
    }
#endif
    const std::size_t j = at_one[t];
    Column col;
    if (rows != nullptr) {
      while (rows->begin_of(job + 1) <= j) ++job;  // (job: the job of the previous column at 1)
      col = Column{static_cast<int>(job), static_cast<int>(j - rows->begin_of(job))};
    } else {
      col = f.cols[j];
    }
    const int choice = f.choice_row[static_cast<std::size_t>(col.job)];
    if (choice >= 0) act[static_cast<std::size_t>(choice)] += 1.0;
    for (int q = f.column_charge[j].first; q < f.column_charge[j].second; ++q) {
      const auto& [r, u] = f.charges[static_cast<std::size_t>(q)];
      act[static_cast<std::size_t>(f.capacity_row[static_cast<std::size_t>(r)])] += static_cast<double>(u);
    }
    visit(t, j, col);
  }
  for (const int j : f.pinned_cols)
    if (at_zero(static_cast<std::size_t>(j))) return 0;
  for (std::size_t i = 0; i < act.size(); ++i)
    if (act[i] < milp.row_lower[i] - tol || act[i] > milp.row_upper[i] + tol) return 0;
  return 1;
}

// answer_feasible(f, x) from the columns at 1 when every value is 0 or 1 and there are no tenant
// rows: 1 feasible, 0 not; -1 when it cannot tell (then is_feasible answers). `at_one` receives
// the columns at 1, ascending, and visit(t, c, f.cols[c]) is called for each (the t-th), whatever
// the verdict, when it is not -1.
template <class Visit>
int verdict_from_ones(const Formulation& f, const std::vector<double>& x, std::vector<std::size_t>& at_one,
                      Visit&& visit, const EntryRows* rows = nullptr) {
  const std::size_t ncols = f.cols.size();
  if (x.size() != ncols || !decided_by_ones(f)) return -1;
  // First every value, without a branch per value (a column at 1 is one in a dozen, at a place no
  // predictor knows): is each ±0 or 1 — v != 0.0 && v != 1.0 (NaN too) exactly when its bits
  // shifted past the sign are not 0 and its bits are not 1.0's —, and the columns at 1, listed
  // through a block on the stack. is_feasible's column test holds for 0 and 1 within formulate's
  // bounds [0, 1] — integrality too —, but for a pinned column (bounds [1, 1]) at 0: checked
  // by verdict_of_ones, from the few pinned.
  const std::uint64_t one = std::bit_cast<std::uint64_t>(1.0);
  std::uint64_t odd = 0;  // not 0 once a value was neither ±0 nor 1
  const double* const value = x.data();
  constexpr std::size_t block = 256;
  std::array<std::size_t, block> listed_here;
  for (std::size_t from = 0; from < ncols; from += block) {
    const std::size_t to = std::min(ncols, from + block);
    std::size_t n = 0;
    for (std::size_t j = from; j < to; ++j) {
      const auto bits = std::bit_cast<std::uint64_t>(value[j]);
      const bool is_one = bits == one;
      odd |= is_one ? 0 : bits << 1;
      listed_here[n] = j;
      n += is_one ? 1 : 0;
    }
    at_one.insert(at_one.end(), listed_here.begin(), listed_here.begin() + static_cast<std::ptrdiff_t>(n));
  }
  if (odd != 0) return -1;
  return verdict_of_ones(
      f, at_one, visit, [&x](std::size_t j) { return x[j] == 0.0; }, rows);
}

// The problem's entries when they are the formulation's columns (Formulation::columns_are_entries), for
// verdict_of_ones(); else null.
const EntryRows* entry_rows(const Problem& pb, const Formulation& m) {
  return m.columns_are_entries && pb.valid.begin_of(pb.num_jobs()) == m.cols.size() ? &pb.valid : nullptr;
}

// decode()'s choice and checks, from a verdict: verdict(chosen, visit) lists the columns at 1 in
// `chosen` and calls visit(t, c, f.cols[c]) for each as verdict_from_ones() does, and returns its
// verdict; -1 is answered by is_feasible(*x()) and the columns of x() above 0.5.
template <class Verdict, class Values>
bool decode_by(const Problem& pb, const Formulation& m, const Requirements& req, Choice& out, Verdict&& verdict,
               Values&& x) {
  out.assign(pb.num_jobs(), -1);
  CapacityUse usage(pb.set);
  // The chosen columns (one in a dozen or so) and their entries: each entry is a cache miss in an
  // array of megabytes, fetched ahead of use (a hint only) while the ones before are read.
  constexpr std::size_t ahead = 16;
  std::vector<std::size_t> chosen;
  chosen.reserve(pb.num_jobs());
  // When every value is 0 or 1 (and there are no tenant rows) the answer's check lists the columns
  // at 1 and reads each one's (job, entry) for its rows: the choice is taken there, in the same
  // pass (a pass over every value and the columns' pairs less).
  bool once = true;  // no job chosen twice
  auto take = [&](std::size_t i, int k) -> const Entry& {
    const Entry& v = pb.valid[i][static_cast<std::size_t>(k)];
    once = once && out[i] < 0;
    out[i] = k;  // (valid[i] lists each configuration once: entry_of(i, v.config))
    usage.add(v.config, v.gpus);
    return v;
  };
  // (Column c's entry is entry c of the flat array when columns are entries: fetched ahead
  // without reading its pair.)
  const Entry* const flat = m.columns_are_entries ? pb.valid.all()->data() : nullptr;
  const int verdict_is = verdict(chosen, [&](std::size_t t, std::size_t, const Column& col) {
#if defined(__GNUC__)
    if (flat != nullptr && t + ahead < chosen.size()) __builtin_prefetch(flat + chosen[t + ahead]);
#endif
    take(static_cast<std::size_t>(col.job), col.entry);
  });
  if (verdict_is == 0) return false;
  if (verdict_is < 0) {
    assert(!m.partial);  // (no model is left partial but one whose every answer is decided by its ones)
    const std::vector<double>& values = x();
    if (!m.milp.is_feasible(values, 1e-6)) return false;
    chosen.clear();
    for (std::size_t c = 0; c < values.size(); ++c)
      if (values[c] > 0.5) chosen.push_back(c);
    TenantUse tenants(pb, m.tenant_rows);
    for (std::size_t t = 0; t < chosen.size(); ++t) {
#if defined(__GNUC__)
      if (t + ahead < chosen.size()) __builtin_prefetch(&m.entry_of(pb, chosen[t + ahead]));
#endif
      const std::size_t c = chosen[t];
      tenants.add(m.job_of(c), take(m.job_of(c), m.cols[c].entry));
    }
    if (!tenants.within_bounds()) return false;
  }
  if (!once) return false;
  if (!usage.within_capacity()) return false;
  for (std::size_t i = 0; i < pb.num_jobs(); ++i) {
    if (req.pinned[i] && pb.config_of(out, i) != pb.current[i]) return false;
    if (req.forced[i] && out[i] < 0) return false;
  }
  return true;
}

}  // namespace

bool answer_feasible(const Formulation& f, const std::vector<double>& x) {
  std::vector<std::size_t> at_one;
  const int verdict = verdict_from_ones(f, x, at_one, [](std::size_t, std::size_t, const Column&) {});
  assert(verdict >= 0 || !f.partial);
  return verdict < 0 ? f.milp.is_feasible(x, 1e-6) : verdict == 1;
}

bool decode(const Problem& pb, const Formulation& m, const std::vector<double>& x, const Requirements& req,
            Choice& out) {
  if (x.size() != m.cols.size()) return false;
  return decode_by(
      pb, m, req, out,
      [&](std::vector<std::size_t>& chosen, auto&& visit) {
        return verdict_from_ones(m, x, chosen, visit, entry_rows(pb, m));
      },
      [&]() -> const std::vector<double>& { return x; });
}

bool decode(const Problem& pb, const Formulation& m, std::span<const int> ones, const Requirements& req, Choice& out) {
  const std::size_t ncols = m.cols.size();
  for (std::size_t t = 0; t < ones.size(); ++t)
    if (ones[t] < 0 || static_cast<std::size_t>(ones[t]) >= ncols || (t > 0 && ones[t] <= ones[t - 1])) return false;
  // Every value is 0 or 1: verdict_from_ones() decides (no -1) unless there are tenant rows (the
  // values written out then, for is_feasible).
  std::vector<double> x;
  return decode_by(
      pb, m, req, out,
      [&](std::vector<std::size_t>& chosen, auto&& visit) {
        if (!decided_by_ones(m)) return -1;
        chosen.assign(ones.begin(), ones.end());
        // A pinned column at 0: not listed.
        return verdict_of_ones(
            m, chosen, visit,
            [ones](std::size_t j) { return !std::binary_search(ones.begin(), ones.end(), static_cast<int>(j)); },
            entry_rows(pb, m));
      },
      [&]() -> const std::vector<double>& {
        x.assign(ncols, 0.0);
        for (const int c : ones) x[static_cast<std::size_t>(c)] = 1.0;
        return x;
      });
}

}  // namespace sia::detail
