#pragma once
// The solver bench's summary (bench_solver.cpp), printed by the bench's main after the run.
#include <cstdio>
#include <string>

namespace sia::bench {

/// One Solver/<family>/<gpus>/<backend> benchmark's results.
struct SolverRow {
  std::string family, backend;
  int gpus = 0, jobs = 0, rounds = 0, optimal = 0, fallback = 0, limit_ms = 0;
  int unbounded = 0;  ///< rounds stopped by the limit without a proven bound
  double median_ms = 0.0, p95_ms = 0.0, max_ms = 0.0, peak_mb = 0.0;
  double cpu_ms = 0.0;    ///< median CPU time of the process per round (all threads)
  double solve_ms = 0.0;  ///< median time in the backend (RoundResult::solve_ms), wall
  double max_gap = -1.0;  ///< largest proven relative gap; -1 when no round proved a bound
};

/// One Warm/<family>/<gpus> benchmark's medians.
struct WarmRow {
  std::string family;
  int gpus = 0;
  double cold_solve_ms = 0.0, warm_solve_ms = 0.0, cold_round_ms = 0.0, warm_round_ms = 0.0;
  double cold_cpu_ms = 0.0, warm_cpu_ms = 0.0;  ///< whole round, CPU of the process (all threads)
  int rounds = 0;
  /// Warm rounds whose decision (every job's configuration, GPUs and placement) equals the cold
  /// round's: the backend's warm start may end at another allocation within the relative gap.
  int same_as_cold = 0;
  /// What the warm round changed, per round (medians): jobs new or re-estimated (the bench's
  /// "5 %"), running jobs whose restart factor moved (all their utilities but the current
  /// configuration's change), and those among them whose factor went to 0 or away from it (their
  /// usable configurations change: a factor of 0 leaves only the current one).
  double jobs = 0.0, changed_jobs = 0.0, new_restart = 0.0, restart_zero_flips = 0.0;
  /// The jobs reported the GPUs they were placed on (WarmPlaced rows), as a scheduler that applied
  /// the decision does; otherwise placements are unknown and every round places every job anew.
  bool placed = false;
  /// The rounds computed prices (WarmPrices rows), as RoundOptions does by default.
  bool prices = false;
};

/// Markdown tables of every Warm and Solver benchmark that ran (nothing when none did).
void print_solver_table(std::FILE* out);

}  // namespace sia::bench
