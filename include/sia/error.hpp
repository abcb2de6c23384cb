#pragma once
/// @file error.hpp
/// @brief The exception hierarchy of sia. Every exception sia throws derives from sia::Error.
///
/// Errors are exceptions; solver outcomes (infeasible, time limit, no solution) are data
/// (see MilpStatus and RoundStatus). Messages always name the offending object: the job id,
/// the GPU type, the JSON field, or the file, line and column.

#include <stdexcept>
#include <string>

namespace sia {

/// Root of every exception thrown by sia, so callers can catch everything from sia at once.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad input: NaN goodput, unknown GPU type, min > max, malformed file or JSON, ...
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

/// An MILP backend that is unknown or was not compiled in. The message lists the available ones.
class BackendUnavailable : public Error {
 public:
  using Error::Error;
};

/// A backend failed abnormally (error code, exception from the solver library).
class SolverFailure : public Error {
 public:
  using Error::Error;
};

}  // namespace sia
