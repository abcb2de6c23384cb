#pragma once
// Private: a backend that reads every number of a model anyway (the native one) checks them as it
// reads instead of MilpModel::validate()'s own pass over them before the backend runs.
#include <sia/milp/solver.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "milp/model_layout.hpp"

namespace sia::detail {

class ReadingSolver : public MilpSolver {
 public:
  /// Called by MilpSolver::solve() instead of model.validate(): the same checks, the same
  /// exceptions (InvalidArgument, validate()'s message), thrown before anything else is done. What
  /// was read may be kept for the do_solve() of the same call.
  virtual void read_checked(const MilpModel& model) = 0;

  /// MilpParams::start_values in short, as bits per column (bit c % 64 of word c / 64): `ones` the
  /// columns at 1, `unknown` the columns at NaN (none in both), every other column at 0. A warm
  /// round's start is a few values at 1 among hundreds of thousands: written and read as doubles,
  /// 1.9 MB at 100,000 GPUs; as bits, 60 KB.
  struct StartBits {
    std::vector<std::uint64_t> ones, unknown;
    /// Sized for `cols` columns, every one at 0.
    void reset(std::size_t cols) {
      ones.assign((cols + 63) / 64, 0);
      unknown.assign(ones.size(), 0);
    }
    void set_one(std::size_t c) noexcept { ones[c >> 6] |= std::uint64_t{1} << (c & 63); }
    void set_unknown(std::size_t c) noexcept { unknown[c >> 6] |= std::uint64_t{1} << (c & 63); }
    [[nodiscard]] bool one(std::size_t c) const noexcept { return ((ones[c >> 6] >> (c & 63)) & 1) != 0; }
    [[nodiscard]] bool is_unknown(std::size_t c) const noexcept { return ((unknown[c >> 6] >> (c & 63)) & 1) != 0; }
    /// Sized for `cols` columns?
    [[nodiscard]] bool fits(std::size_t cols) const noexcept {
      return ones.size() == (cols + 63) / 64 && unknown.size() == ones.size();
    }
  };

  /// Does this backend take its start as CallerHints::start (then the caller leaves
  /// MilpParams::start_values empty)? The same start, the same answers.
  [[nodiscard]] virtual bool takes_start_bits() const noexcept { return false; }
  /// Does this backend answer through CallerHints::ones when it is set (its solutions' values
  /// then left empty)?
  [[nodiscard]] virtual bool gives_ones() const noexcept { return false; }
  /// Does this backend take a partial model with its layout (CallerHints::layout with
  /// ModelLayout::complete set), making it whole before it reads more than the layout's part?
  [[nodiscard]] virtual bool takes_partial_models() const noexcept { return false; }

  /// What a caller that wrote the model (the round) tells the backend about one solve call. Both are
  /// off by default, so that every other caller gets the backend's own reading and check.
  struct CallerHints {
    /// The caller checks every answer against the model itself before using it (the round:
    /// decode() checks each answer with the formulation's own arrays): the backend may leave out
    /// its own check of the solution it returns, the same sums over the same columns a second time.
    /// Builds with assertions (no NDEBUG) check anyway.
    bool answers_checked = false;
    /// The caller knows the model's layout (the round: its formulation): the backend may take it
    /// from here instead of reading it from the model's entries, when layout->describes() the model
    /// it is asked to solve. Null: read as usual. The caller keeps *layout alive and unchanged while
    /// it is set.
    const ModelLayout* layout = nullptr;
    /// Threads the backend may read the model with (MilpParams::threads' meaning: 0 all cores, 1
    /// the calling thread), known before MilpParams reach do_solve(): the caller's own.
    int threads = 1;
    /// The start (MilpParams::start_values' meaning) as bits, for a backend that
    /// takes_start_bits(), when it fits() the model's columns: start_values is then left empty by
    /// the caller. Null: MilpParams::start_values is the start. The caller keeps *start alive and
    /// unchanged while it is set.
    const StartBits* start = nullptr;
    /// Where a backend that gives_ones() puts its answer's columns at 1 (ascending, each once):
    /// MilpResult::values is then left empty, every column not listed being at 0, and the caller
    /// reads the answer from here (a full vector is written and read again only to find a column
    /// in a dozen at 1). Null: MilpResult::values as usual.
    std::vector<int>* ones = nullptr;
  };

  void set_hints(const CallerHints& hints) noexcept { hints_ = hints; }
  [[nodiscard]] const CallerHints& hints() const noexcept { return hints_; }
  void set_answers_checked_by_caller(bool on) noexcept { hints_.answers_checked = on; }
  [[nodiscard]] bool answers_checked_by_caller() const noexcept { return hints_.answers_checked; }
  [[nodiscard]] const ModelLayout* layout() const noexcept { return hints_.layout; }

 private:
  CallerHints hints_;
};

/// Gives `solver`, when it is a ReadingSolver, `hints` for as long as the guard lives (one solve
/// call), then the defaults again, also when the call throws.
class ScopedCallerHints {
 public:
  ScopedCallerHints(MilpSolver& solver, const ReadingSolver::CallerHints& hints)
      : reading_(dynamic_cast<ReadingSolver*>(&solver)) {
    if (reading_ != nullptr) reading_->set_hints(hints);
  }
  ~ScopedCallerHints() {
    if (reading_ != nullptr) reading_->set_hints({});
  }
  ScopedCallerHints(const ScopedCallerHints&) = delete;
  ScopedCallerHints& operator=(const ScopedCallerHints&) = delete;

 private:
  ReadingSolver* reading_;
};

}  // namespace sia::detail
