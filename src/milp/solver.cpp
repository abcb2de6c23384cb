// NVI wrapper of every backend: validate, time, and turn exceptions into MilpStatus::error.
#include <sia/error.hpp>
#include <sia/milp/solver.hpp>

#include <algorithm>
#include <exception>

#include "milp/reading_solver.hpp"

namespace sia {

std::string_view to_string(MilpStatus s) noexcept {
  switch (s) {
    case MilpStatus::optimal:
      return "optimal";
    case MilpStatus::feasible:
      return "feasible";
    case MilpStatus::infeasible:
      return "infeasible";
    case MilpStatus::unbounded:
      return "unbounded";
    case MilpStatus::no_solution:
      return "no_solution";
    case MilpStatus::error:
      return "error";
  }
  return "error";
}

MilpResult MilpSolver::solve(const MilpModel& model, const MilpParams& params) {
  // A backend that reads every number anyway checks them as it reads (reading_solver.hpp); its
  // reading is then part of the solve's wall time, as it was when done in do_solve().
  auto* reading = dynamic_cast<detail::ReadingSolver*>(this);
  const auto read_start = reading ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  if (reading)
    reading->read_checked(model);
  else
    model.validate();
  if (!(params.relative_gap >= 0.0)) throw InvalidArgument("MilpParams.relative_gap must be >= 0");
  if (params.time_limit && params.time_limit->count() < 0)
    throw InvalidArgument("MilpParams.time_limit must be >= 0 ms");
  const auto start = reading ? read_start : std::chrono::steady_clock::now();
  MilpResult result;
  // (A model its writer's layout describes has integer columns only, as the layout promises: its
  // is_integer may not be written yet, ModelLayout::complete.)
  const detail::ModelLayout* const layout = reading != nullptr ? reading->layout() : nullptr;
  const bool lp = layout != nullptr && layout->describes(model) && model.num_cols() > 0
                      ? false
                      : std::none_of(model.is_integer.begin(), model.is_integer.end(), [](auto v) { return v != 0; });
  if (lp && !supports(params.lp_method)) {
    result.status = MilpStatus::error;
    result.message = std::string(name()) + " backend has no " +
                     (params.lp_method == LpMethod::interior ? "interior-point" : "simplex") + " LP method";
    result.wall_time = std::chrono::steady_clock::now() - start;
    return result;
  }
  if (params.stop.stop_requested()) {
    result.status = MilpStatus::no_solution;
    result.message = "stop requested before the solve";
    result.wall_time = std::chrono::steady_clock::now() - start;
    return result;
  }
  try {
    result = do_solve(model, params);
  } catch (const std::exception& e) {
    result = MilpResult{};
    result.status = MilpStatus::error;
    result.message = std::string(name()) + " backend threw: " + e.what();
  } catch (...) {
    result = MilpResult{};
    result.status = MilpStatus::error;
    result.message = std::string(name()) + " backend threw an unknown exception";
  }
  result.wall_time = std::chrono::steady_clock::now() - start;
  // A backend that claims a solution must return one value per column (or none, when it was asked
  // for the columns at 1 instead: ReadingSolver::CallerHints::ones).
  const bool has_solution = result.status == MilpStatus::optimal || result.status == MilpStatus::feasible;
  const bool as_ones =
      reading != nullptr && reading->gives_ones() && reading->hints().ones != nullptr && result.values.empty();
  if (has_solution && !as_ones && result.values.size() != static_cast<std::size_t>(model.num_cols())) {
    result.status = MilpStatus::error;
    result.message = std::string(name()) + " backend returned " + std::to_string(result.values.size()) +
                     " values for " + std::to_string(model.num_cols()) + " columns";
    result.values.clear();
  }
  return result;
}

}  // namespace sia
