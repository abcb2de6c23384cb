#pragma once
/// @file round_log.hpp
/// @brief Observing a round: the events RoundOptions::log receives (phases, timings, sizes, solver
/// progress) and a one-line rendering of each (what `sia_allocate --verbose` prints on standard error).
///
/// A round with no log set pays one test of an empty std::function per phase and builds no event; with
/// one set, each phase's event is built once and handed over synchronously on the round's thread.

#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <string_view>

namespace sia {

/// The phases of a round, in the order they happen (some are skipped: see RoundEvent).
enum class RoundPhase {
  problem,    ///< configuration set built, every job's valid configurations and goodputs evaluated
  solve,      ///< the backend answered (once per solve: a round may solve again, e.g. without a demand)
  fallback,   ///< the backend gave nothing usable: the greedy allocation answers
  prices,     ///< capacity prices computed (only when RoundOptions::compute_prices and a solution)
  placement,  ///< nodes and GPUs chosen (only when RoundOptions::place)
  done,       ///< the round's result is ready
};
[[nodiscard]] std::string_view to_string(RoundPhase p) noexcept;

/// @brief One event of a round. Fields that do not apply to the phase keep their defaults (-1, NaN, empty).
struct RoundEvent {
  RoundEvent() = default;
  explicit RoundEvent(RoundPhase p) : phase(p) {}
  RoundPhase phase = RoundPhase::problem;
  double elapsed_ms = 0.0;  ///< since the round began
  double phase_ms = 0.0;    ///< since the previous event (the phase's own time)
  // problem
  std::ptrdiff_t jobs = -1;            ///< jobs in the round
  std::ptrdiff_t configurations = -1;  ///< configurations of the cluster (configuration_set.hpp)
  std::ptrdiff_t candidates = -1;      ///< (job, configuration) pairs with goodput > 0: the binary variables
  std::ptrdiff_t unevaluated = -1;     ///< jobs not evaluated before the time limit (0 normally)
  // solve
  std::string_view backend;                                      ///< backend name (solve, done)
  std::string_view status;                                       ///< backend status (solve) or round status (done)
  long long nodes = -1;                                          ///< branch-and-bound nodes, when the backend says
  double objective = std::numeric_limits<double>::quiet_NaN();   ///< solve, done
  double best_bound = std::numeric_limits<double>::quiet_NaN();  ///< solve, done
  /// |objective - best_bound| / max(|objective|, 1e-9) (solve, done), NaN without both.
  double gap = std::numeric_limits<double>::quiet_NaN();
  // placement / done
  std::ptrdiff_t allocated = -1;  ///< jobs with GPUs (placement, done)
  std::ptrdiff_t evicted = -1;    ///< jobs that keep their configuration but move (placement, done)
  std::string_view message;       ///< the backend's or the round's message, when any
};

/// Receives a round's events (RoundOptions::log). Called on the round's thread; must not throw.
using RoundLog = std::function<void(const RoundEvent&)>;

/// One line for a human, e.g. `solve 12.3 ms (+11.9): backend native optimal, 42 nodes, objective -3.41,
/// bound -3.41, gap 0`: the phase, the time since the round began, the phase's own time, the fields set.
[[nodiscard]] std::string format(const RoundEvent& e);

}  // namespace sia
