#pragma once
// Private: a backend that reads every number of a model anyway (the native one) checks them as it
// reads instead of MilpModel::validate()'s own pass over them before the backend runs.
#include <sia/milp/solver.hpp>

namespace sia::detail {

class ReadingSolver : public MilpSolver {
 public:
  /// Called by MilpSolver::solve() instead of model.validate(): the same checks, the same
  /// exceptions (InvalidArgument, validate()'s message), thrown before anything else is done. What
  /// was read may be kept for the do_solve() of the same call.
  virtual void read_checked(const MilpModel& model) = 0;
};

}  // namespace sia::detail
