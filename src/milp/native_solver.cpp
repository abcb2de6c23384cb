// The `native` backend: recognises the round's multiple-choice knapsack structure in a generic
// MilpModel and solves it exactly (to the requested relative gap): LP relaxation in price space,
// repair heuristic, core DP, branch and bound over counts of interchangeable jobs
// (milp/native/search.hpp). Reports the proven bound, the nodes, and the duals of the LP
// relaxation: the capacity rows' prices ("marginal value of one more GPU of each type") and the
// choice rows' values. Keeps the last prices and solution to warm-start the next round.
// Small models of another shape go to a general LP-based branch and bound.
#include <sia/error.hpp>
#include <sia/milp/solver.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "milp/builtin_backends.hpp"
#include "milp/native/fallback.hpp"
#include "milp/native/problem.hpp"
#include "milp/native/search.hpp"
#include "milp/reading_solver.hpp"

namespace sia::detail {
namespace {

using native::Clock;
using native::kInf;

class NativeSolver final : public ReadingSolver {
  std::string_view do_name() const noexcept override { return "native"; }
  [[nodiscard]] bool takes_start_bits() const noexcept override { return true; }
  [[nodiscard]] bool gives_ones() const noexcept override { return true; }
  // (Every reading here but the layout's makes a partial model whole first: make_whole().)
  [[nodiscard]] bool takes_partial_models() const noexcept override { return true; }

  // The model's checks and its reading in one (native::recognise_checked), kept for do_solve().
  void read_checked(const MilpModel& model) override {
    read_model_ = nullptr;
    read_.reset();
    read_bits_ = nullptr;
    read_start_ = Clock::now();
    try {
      // (ReadingSolver::CallerHints; no entry index when do_solve() will not check its answer. The
      // start's item of each group found as the reading writes the items, not in a pass of
      // do_solve()'s over them.)
      const StartBits* const bits = hints().start;
      read_bits_ = bits != nullptr && bits->fits(static_cast<std::size_t>(model.num_cols())) ? bits : nullptr;
      const native::StartView start{read_bits_ != nullptr ? read_bits_->ones.data() : nullptr,
                                    read_bits_ != nullptr ? read_bits_->unknown.data() : nullptr};
      read_ = native::recognise_checked(model, layout(), hints().threads, checks_answer(),
                                        read_bits_ != nullptr ? &start : nullptr);
    } catch (const InvalidArgument&) {
      throw;  // (validate()'s, as MilpSolver::solve() would throw it)
    } catch (...) {
      // Anything else (no memory) is do_solve()'s to report: the model is checked, read there again.
      read_.reset();
      make_whole();
      model.validate();
      return;
    }
    read_model_ = &model;
  }

  MilpResult do_solve(const MilpModel& model, const MilpParams& params) override {
    MilpResult res;
    const bool have_read = read_model_ == &model && read_.has_value();
    const auto start = have_read ? read_start_ : Clock::now();
    if (!have_read) make_whole();
    native::Shape shape = have_read ? std::move(*read_) : native::recognise(model);
    const StartBits* const read_bits = read_bits_;  // (the start the reading found shape.start_items of)
    read_.reset();
    read_model_ = nullptr;
    read_bits_ = nullptr;
    if (debug_)
      std::fprintf(stderr, "native: recognised %d columns, %d rows in %.3f ms\n", model.num_cols(), model.num_rows(),
                   std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!shape.round_shaped) {
      make_whole();
      if (model.num_cols() <= native::kFallbackMaxCols && model.num_rows() <= native::kFallbackMaxRows)
        return native::FallbackBnb(model, params).run();
      res.status = MilpStatus::error;
      res.message = "model is not a round-shaped MILP (" + shape.why +
                    ") and too large for the native backend's general fallback";
      return res;
    }
    if (shape.infeasible) {
      res.status = MilpStatus::infeasible;
      res.message = shape.why;
      return res;
    }
    const auto& prob = shape.problem;
    const double sign = shape.sign, offset = model.obj_offset, gap = params.relative_gap;
    auto tolerance = [sign, offset, gap](double z) {
      if (!std::isfinite(z)) return 0.0;
      return std::max(gap * std::abs(offset + sign * z), 1e-9 * (1.0 + std::abs(z)));
    };
    native::SearchOptions options;
    options.deadline =
        native::Deadline(params.time_limit ? std::optional(start + *params.time_limit) : std::nullopt, params.stop);
    options.threads = params.threads;
    options.debug = debug_;
    options.exact_prices = params.lp_duals;
    options.use_dp = std::getenv("SIA_NATIVE_NO_DP") == nullptr;
    options.symmetry = std::getenv("SIA_NATIVE_NO_SYMMETRY") == nullptr;

    // Warm start: the caller's (MilpParams::start_duals, start_values or CallerHints::start) first,
    // else what this instance solved last (prices by capacity-row key, solution by column names).
    std::vector<std::string> keys = row_keys(model, shape.cap_rows);
    std::vector<double> warm_prices(static_cast<std::size_t>(prob.num_rows), 0.0);
    bool have_prices = false;
    if (params.start_duals.size() == static_cast<std::size_t>(model.num_rows())) {
      for (std::size_t k = 0; k < shape.cap_rows.size(); ++k)
        warm_prices[k] = std::max(0.0, sign * params.start_duals[static_cast<std::size_t>(shape.cap_rows[k])]);
      have_prices = true;
    } else {
      for (std::size_t k = 0; k < keys.size(); ++k)
        if (auto it = last_prices_.find(keys[k]); it != last_prices_.end()) {
          warm_prices[k] = it->second;
          have_prices = true;
        }
    }
    std::vector<int> warm_choice;
    // The caller's start, column c: at_one(c) is it 1 (> 0.5), known(c) is it not NaN.
    auto start_choice = [&](auto&& at_one, auto&& known_at) {
      // Groups the start gives no column of keep -1: the search completes them.
      warm_choice.assign(static_cast<std::size_t>(prob.num_groups()), -1);
      for (int g = 0; g < prob.num_groups(); ++g)
        warm_choice[static_cast<std::size_t>(g)] = native::start_item(prob, g, at_one, known_at);
    };
    const StartBits* const bits = hints().start;
    if (bits != nullptr && bits->fits(static_cast<std::size_t>(model.num_cols()))) {
      // (CallerHints::start: the same start as bits, 1 for > 0.5 and unknown for NaN.)
      if (have_read && read_bits == bits && shape.start_items.size() == static_cast<std::size_t>(prob.num_groups()))
        warm_choice = std::move(shape.start_items);  // (native::start_item(), the same per group)
      else
        start_choice([bits](std::size_t c) { return bits->one(c); },
                     [bits](std::size_t c) { return !bits->is_unknown(c); });
    } else if (params.start_values.size() == static_cast<std::size_t>(model.num_cols())) {
      const double* const v = params.start_values.data();
      start_choice([v](std::size_t c) { return v[c] > 0.5; }, [v](std::size_t c) { return !std::isnan(v[c]); });
    } else if (!last_ones_.empty() && !model.col_names.empty()) {
      warm_choice.assign(static_cast<std::size_t>(prob.num_groups()), -1);
      for (int g = 0; g < prob.num_groups(); ++g) {
        int none = -1, hit = -1;
        for (int it = prob.group_begin[static_cast<std::size_t>(g)];
             it < prob.group_begin[static_cast<std::size_t>(g) + 1]; ++it) {
          const int c = prob.column[static_cast<std::size_t>(it)];
          if (c < 0)
            none = it;
          else if (hit < 0 && last_ones_.count(model.col_names[static_cast<std::size_t>(c)]))
            hit = it;
        }
        warm_choice[static_cast<std::size_t>(g)] = hit >= 0 ? hit : none;
      }
    }

    const auto sr = native::solve_mckp(prob, tolerance, options, have_prices ? &warm_prices : nullptr,
                                       warm_choice.empty() ? nullptr : &warm_choice);
    res.nodes = sr.nodes;

    if (!sr.feasible) {
      res.status = sr.proven ? MilpStatus::infeasible : MilpStatus::no_solution;
      res.message = sr.proven ? "no allocation satisfies the forced choices within the capacities"
                              : "stopped by the time or node limit before finding a feasible solution";
      return res;
    }
    // The columns set to 1 are marked in a bit per column, which lists them ascending, each once:
    // the answer's check and its objective read those columns instead of every value.
    std::vector<std::uint64_t> at_one((static_cast<std::size_t>(model.num_cols()) + 63) / 64, 0);
    auto set_one = [&](int c) {
      const auto cu = static_cast<std::size_t>(c);
      at_one[cu >> 6] |= std::uint64_t{1} << (cu & 63);
    };
    for (int c : shape.pinned_cols) set_one(c);
    for (int g = 0; g < prob.num_groups(); ++g) {
      const int c = prob.column[static_cast<std::size_t>(sr.choice[static_cast<std::size_t>(g)])];
      if (c >= 0) set_one(c);
    }
    std::vector<int> ones;
    ones.reserve(static_cast<std::size_t>(prob.num_groups()) + shape.pinned_cols.size());
    for (std::size_t w = 0; w < at_one.size(); ++w)
      for (std::uint64_t bits = at_one[w]; bits != 0; bits &= bits - 1)
        ones.push_back(static_cast<int>(64 * w + static_cast<std::size_t>(std::countr_zero(bits))));
    const bool check = checks_answer();
    // The answer as values (1 at `ones`, 0 elsewhere): unless the caller takes `ones` instead
    // (CallerHints::ones) and nothing here reads them.
    std::vector<int>* const ones_out = hints().ones;
    auto values_of_ones = [&] {
      std::vector<double> x(static_cast<std::size_t>(model.num_cols()), 0.0);
      for (int c : ones) x[static_cast<std::size_t>(c)] = 1.0;
      return x;
    };
    if (ones_out == nullptr || check) res.values = values_of_ones();
    bool valid = true;
    if (check) {
      make_whole();  // (the check reads the choice rows' entries and the columns' bounds)
      const auto t_check = Clock::now();
      valid = native::solution_feasible(model, shape.entries, res.values, ones, 1e-6);
      if (debug_)
        std::fprintf(stderr, "native: checked the solution in %.3f ms\n",
                     std::chrono::duration<double, std::milli>(Clock::now() - t_check).count());
    }
    if (!valid) {
      // Never hand out an invalid allocation; this would be a bug in the search.
      res.values.clear();
      res.status = MilpStatus::error;
      res.message = "native backend produced an infeasible solution (internal error)";
      return res;
    }
    // MilpModel::objective_of(res.values), the same bits: the terms of the columns at 0 are +-0,
    // which leave a sum other than 0 as it is, so the columns at 1 in order give the same sum
    // unless it is 0 (then only its sign could differ: the full sum decides).
    // (Summed in a local: the same additions in the same order, without a store to the result
    // after each.)
    double objective = model.obj_offset;
    for (int c : ones) objective += model.obj[static_cast<std::size_t>(c)] * 1.0;
    res.objective = objective != 0.0     ? objective
                    : res.values.empty() ? model.objective_of(values_of_ones())
                                         : model.objective_of(res.values);
    res.best_bound = offset + sign * sr.bound;
    res.status = sr.proven ? MilpStatus::optimal : MilpStatus::feasible;
    if (!sr.proven) {
      res.message =
          "stopped by the time or node limit with a proven relative gap of " +
          std::to_string(std::abs(res.best_bound - res.objective) / std::max(1e-300, std::abs(res.objective)));
    }

    // Duals of the LP relaxation at the root prices, in the model's sense (d objective / d rhs).
    res.row_duals.assign(static_cast<std::size_t>(model.num_rows()), 0.0);
    // Without MilpParams::lp_duals the search may stop before the LP optimum: the prices are then
    // the best it found (still a good warm start for the next solve).
    if (!sr.prices.empty() && (sr.prices_exact || !params.lp_duals)) {
      for (std::size_t k = 0; k < shape.cap_rows.size(); ++k)
        res.row_duals[static_cast<std::size_t>(shape.cap_rows[k])] = sign * sr.prices[k] + 0.0;
      for (int g = 0; g < prob.num_groups(); ++g) {
        const int row = prob.group_row[static_cast<std::size_t>(g)];
        if (row >= 0)
          res.row_duals[static_cast<std::size_t>(row)] = sign * sr.group_duals[static_cast<std::size_t>(g)] + 0.0;
      }
      last_prices_.clear();
      for (std::size_t k = 0; k < keys.size(); ++k) last_prices_[keys[k]] = sr.prices[k];
    }
    last_ones_.clear();
    if (!model.col_names.empty())  // (the columns at 1: `ones`)
      for (int j : ones) last_ones_.insert(model.col_names[static_cast<std::size_t>(j)]);
    if (ones_out != nullptr) {
      *ones_out = std::move(ones);
      res.values.clear();
    }
    return res;
  }

  // Does do_solve() check its answer? Left to a caller that checks it itself
  // (ReadingSolver::answers_checked_by_caller), but in builds with assertions.
  [[nodiscard]] bool checks_answer() const noexcept {
#ifdef NDEBUG
    return !answers_checked_by_caller();
#else
    return true;
#endif
  }

  // A partial model (ModelLayout::complete, from the caller's layout) made whole: before anything
  // but the reading in layout reads it.
  void make_whole() const {
    if (const ModelLayout* l = layout(); l != nullptr) l->make_whole();
  }

  // A capacity row is recognised across rounds by its name, else by its index and the row count.
  static std::vector<std::string> row_keys(const MilpModel& m, const std::vector<int>& rows) {
    std::vector<std::string> keys;
    for (int r : rows) {
      const auto ru = static_cast<std::size_t>(r);
      if (ru < m.row_names.size() && !m.row_names[ru].empty())
        keys.push_back("n:" + m.row_names[ru]);
      else
        keys.push_back("i:" + std::to_string(r) + "/" + std::to_string(m.num_rows()));
    }
    return keys;
  }

  bool debug_ = std::getenv("SIA_NATIVE_DEBUG") != nullptr;
  // What read_checked() read of the model solve() is solving, and when it started.
  std::optional<native::Shape> read_;
  const MilpModel* read_model_ = nullptr;
  const StartBits* read_bits_ = nullptr;  // the start given to that reading (CallerHints::start)
  Clock::time_point read_start_{};
  std::unordered_map<std::string, double> last_prices_;
  std::unordered_set<std::string> last_ones_;
};

}  // namespace

std::unique_ptr<MilpSolver> make_native_solver() { return std::make_unique<NativeSolver>(); }

}  // namespace sia::detail
