// Google Benchmark's main, then the solver bench's markdown table (bench_solver.cpp) when any
// Solver benchmark ran.
#include <benchmark/benchmark.h>

#include <sia/memory.hpp>

#include <cstdio>

#include "bench_solver.hpp"

int main(int argc, char** argv) {
  // A bench repeats rounds as a scheduler does: memory one frees kept for the next (sia/memory.hpp), for the
  // cold and the warm rounds alike.
  (void)sia::retain_freed_memory();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  sia::bench::print_solver_table(stdout);
  return 0;
}
