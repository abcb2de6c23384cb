#pragma once
// Private to the round: the round's binary program (product.md §2 step 4) as a solver-neutral
// MilpModel, and the meaning of its columns and rows.
#include <sia/milp/model.hpp>

#include <array>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "core/problem.hpp"
#include "core/tenants.hpp"
#include "milp/model_layout.hpp"

namespace sia::detail {

/// What a column of the model stands for: job `job` on its usable entry
/// Problem::valid[job][entry]. (An index, not a copy of the entry: a round has hundreds of
/// thousands of columns, and the formulation is written and read again once per solve.)
struct Column {
  int job = 0;
  int entry = 0;
};

struct Formulation {
  MilpModel milp;
  std::vector<Column> cols;            ///< column -> (job, entry)
  std::vector<int> capacity_row;       ///< ConfigurationSet row -> model row (-1 = none)
  std::vector<TenantRow> tenant_rows;  ///< tenants' caps and guarantees (tenants.hpp)
  std::vector<int> tenant_row;         ///< tenant_rows[k] -> model row
  /// objective_exponent(milp) of the model as formulate() returns it, worked out while writing the
  /// objective (a pass over hundreds of thousands of coefficients less).
  int exponent = 0;
  /// Where formulate() put each column's entries, for answer_feasible(): per job its choice row
  /// (-1: none); per column its capacity charges, [first, end) in `charges` as (set row, GPUs).
  std::vector<int> choice_row;
  /// The columns of pinned jobs (bounds [1, 1]; every other column's are [0, 1]).
  std::vector<int> pinned_cols;
  std::vector<std::pair<int, int>> column_charge;
  std::vector<std::pair<int, int>> charges;
  /// Every job has a column for each of its usable entries (no pinned job with entries besides its
  /// current one, as the round's requirements always give): column c is then entry c of
  /// Problem::valid's flat array (EntryRows::all()), and job i's columns are
  /// [valid.begin_of(i), valid.begin_of(i + 1)).
  bool columns_are_entries = false;
  /// The model's layout as formulate() wrote it (ModelLayout, for a backend reading the model:
  /// ReadingSolver::CallerHints), when it can promise it — no tenant rows (their entries come row
  /// by row after the capacity rows'), every charge > 0: per choice row (row, first column,
  /// columns), per column (+1) its first capacity entry in milp.entries; the columns' bounds are
  /// pinned_cols' [1, 1] and every other's [0, 1].
  bool layout_known = false;
  std::vector<std::array<int, 3>> choice;
  std::vector<int> cap_begin;
  /// The capacity entries by charge (ModelLayout::charge): charges' (set row, GPUs) as (model row,
  /// -1, GPUs); only when layout_known.
  std::vector<MilpModel::Entry> charge_entries;
  /// formulate(pb, req, true) left out what only a reader of the whole model needs (the choice
  /// rows' and the capacity rows' entries, the columns' bounds and is_integer: sized, holding
  /// anything) — only while
  /// layout_known. complete() writes them; every reader of `milp` but the native backend's reading
  /// with reading_layout() needs them (MilpSolver::solve of any other backend, is_feasible,
  /// validate, a dump).
  bool partial = false;
  /// Writes what formulate() left out (a no-op when `partial` is false): then milp is the whole model.
  void complete();
  /// That layout of the whole `milp` as it is now (describes() it until the model's sizes or address
  /// change); only when layout_known and not partial.
  [[nodiscard]] ModelLayout layout() const;
  /// layout(), for a reader that takes partial models (ModelLayout::complete): when `partial`, with
  /// this formulation's complete() to call before reading more than the layout. `*this` stays where
  /// it is while the layout is used.
  [[nodiscard]] ModelLayout reading_layout();
  /// The job of column `c`, and its entry.
  [[nodiscard]] std::size_t job_of(std::size_t c) const { return static_cast<std::size_t>(cols[c].job); }
  [[nodiscard]] const Entry& entry_of(const Problem& pb, std::size_t c) const {
    const Column& col = cols[c];
    return pb.valid[static_cast<std::size_t>(col.job)][static_cast<std::size_t>(col.entry)];
  }
};

/**
 * @brief One binary column per (job, usable configuration); per job a choice row (at most one, or
 * exactly one when forced); per capacity row of the configuration set a row over the columns it
 * counts (omitted when it counts none); then a row per tenant cap and guarantee (tenants.hpp). A pinned job only has its current configuration, fixed
 * to 1. Objective (the constant part in `obj_offset`):
 *   p > 0: max Σ w·A(u+λ) − λW;   p < 0: min Σ w·A(u−λ) + λW   (w: job weights, W = Σ w).
 */
/// `partial`: the model goes only to a reader that takes partial models (ModelLayout::complete,
/// through reading_layout()): what the layout promises is then left out when the layout is known
/// (Formulation::partial), else written as always.
[[nodiscard]] Formulation formulate(const Problem& pb, const Requirements& req, bool partial = false);

/**
 * @brief Hands a formulation back once the round is done with it: its largest arrays are kept, per
 * thread, for the next formulate() on the thread to write into. A round of 100,000 GPUs writes
 * ~20 MB of them; allocated anew each round, they can land where glibc has just trimmed its heap,
 * and every page is then faulted in again (thousands of page faults per round on some rounds,
 * several ms). The thread keeps at most one formulation's arrays, released when it exits.
 */
void recycle(Formulation&& f) noexcept;

/**
 * @brief The power of two 2^e by which the objective (coefficients and offset) is divided before a
 * backend sees it, so that its largest magnitude lies near 1: backends have absolute tolerances
 * and CBC's Clp aborts on coefficients above ~1e25. Dividing by a power of two is exact. 0 (no
 * scaling) while the largest magnitude is within [2^-20, 2^20].
 */
[[nodiscard]] int objective_exponent(const MilpModel& milp) noexcept;

/**
 * @brief MilpModel::is_feasible(x, 1e-6) of a model formulate() returned (unchanged since but for its
 * objective), the same verdict: when every value is exactly 0 or 1 (and there are no tenant rows)
 * from the pinned columns (the only ones whose bounds are not [0, 1]) and the entries of the
 * columns at 1 — each row's activity is then an exact sum of integers, whatever the order —,
 * otherwise by is_feasible itself.
 */
[[nodiscard]] bool answer_feasible(const Formulation& f, const std::vector<double>& x);

/**
 * @brief Decodes a backend's solution and re-checks it independently of the backend: at most one
 * configuration per job, pins kept, forced jobs served, capacity and tenant rows respected. False when anything
 * is off (then `out` is unspecified).
 */
[[nodiscard]] bool decode(const Problem& pb, const Formulation& f, const std::vector<double>& x,
                          const Requirements& req, Choice& out);

/**
 * @brief decode(pb, f, x, req, out) of the answer x that is 1 at the columns `ones` and 0 at every
 * other: the same verdict and the same choice, without a pass over a value per column. False also
 * when `ones` is not ascending (each column once) or names a column the model does not have.
 */
[[nodiscard]] bool decode(const Problem& pb, const Formulation& f, std::span<const int> ones, const Requirements& req,
                          Choice& out);

}  // namespace sia::detail
