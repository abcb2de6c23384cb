#pragma once
/// @file exit_code.hpp
/// @brief The one exit-status table of sia's programs (`sia_allocate`, `sia_simulate`,
/// `sia_fit_profiles`), so a scheduler or a script reads every program's status the same way.
///
/// | status | meaning |
/// |---|---|
/// | 0 | done: the round is optimal or feasible, the simulation or the fit finished |
/// | 1 | internal error: an unexpected exception, out of memory, the output cannot be written |
/// | 2 | bad input: an option, the request, a cluster, workload or profile file was rejected; the message on standard error reads `<program>: <source>:<line>:<column>: <field>: <reason>` (parts that do not apply are left out) |
/// | 3 | not solved: the input was valid but the round has status `error` or `infeasible` |

#include <sia/error.hpp>

#include <exception>

namespace sia {

/// @brief Exit status of sia's programs (the table above).
enum class ExitCode : int {
  done = 0,            ///< the work was done
  internal_error = 1,  ///< a bug or the machine, not the input
  bad_input = 2,       ///< the input was rejected; standard error names where and why
  not_solved = 3,      ///< a valid round that could not be solved (status `error` or `infeasible`)
};

/// @brief The value to return from main().
[[nodiscard]] constexpr int to_int(ExitCode code) noexcept { return static_cast<int>(code); }

/// @brief The exit status for an exception that ended a program's work: rejected input
/// (InvalidArgument, BackendUnavailable) is `bad_input`, a failing solver `not_solved`, anything
/// else (std::bad_alloc, a bug) `internal_error`.
[[nodiscard]] inline ExitCode exit_code_for(const std::exception& e) noexcept {
  if (dynamic_cast<const InvalidArgument*>(&e) != nullptr || dynamic_cast<const BackendUnavailable*>(&e) != nullptr)
    return ExitCode::bad_input;
  if (dynamic_cast<const SolverFailure*>(&e) != nullptr) return ExitCode::not_solved;
  return ExitCode::internal_error;
}

/// @brief One line for `--help` of every program.
inline constexpr const char* exit_code_help =
    "Exit status: 0 done; 2 bad input (an option, the request or a data file; standard error reads "
    "'<program>: <source>:<line>:<column>: <field>: <reason>'); 3 not solved (a round with status error or "
    "infeasible); 1 internal error.";

}  // namespace sia
