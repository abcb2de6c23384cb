#pragma once
// Private: a backend that reads every number of a model anyway (the native one) checks them as it
// reads instead of MilpModel::validate()'s own pass over them before the backend runs.
#include <sia/milp/solver.hpp>

#include "milp/model_layout.hpp"

namespace sia::detail {

class ReadingSolver : public MilpSolver {
 public:
  /// Called by MilpSolver::solve() instead of model.validate(): the same checks, the same
  /// exceptions (InvalidArgument, validate()'s message), thrown before anything else is done. What
  /// was read may be kept for the do_solve() of the same call.
  virtual void read_checked(const MilpModel& model) = 0;

  /// Set by a caller that checks every answer against the model itself before using it (the round:
  /// decode() checks each answer with the formulation's own arrays): the backend may then leave out
  /// its own check of the solution it returns, the same sums over the same columns a second time.
  /// Off by default, so that every other caller keeps the backend's check; builds with assertions
  /// (no NDEBUG) check anyway.
  void set_answers_checked_by_caller(bool on) noexcept { answers_checked_by_caller_ = on; }
  [[nodiscard]] bool answers_checked_by_caller() const noexcept { return answers_checked_by_caller_; }

  /// Set by a caller that wrote the model and knows its layout (the round: its formulation): the
  /// backend may take it from `layout` instead of reading it from the model's entries, when
  /// layout->describes() the model it is asked to solve. Null (the default): read as usual. The
  /// caller keeps *layout alive and unchanged while it is set.
  void set_layout(const ModelLayout* layout) noexcept { layout_ = layout; }
  [[nodiscard]] const ModelLayout* layout() const noexcept { return layout_; }

 private:
  bool answers_checked_by_caller_ = false;
  const ModelLayout* layout_ = nullptr;
};

}  // namespace sia::detail
