// Prints the synthetic workload of seed 1 and a run of the portable draws (sia/sim/random.hpp), so
// that builds with two standard libraries can be compared (tests/portability/compare.cmake).
#include <sia/sim/random.hpp>
#include <sia/sim/workload.hpp>

#include <cstdio>
#include <random>
#include <vector>

int main() {
  const auto w = sia::sim::synthetic_philly_workload(1, 20.0, 8.0);
  for (const auto& j : w.jobs)
    std::printf("%s,%.17g,%s,%d,%lld\n", j.name.c_str(), j.time, j.application.c_str(), j.num_replicas, j.batch_size);
  std::mt19937_64 rng(7);
  const std::vector<double> weights = {1.0, 2.5, 0.5};
  for (int i = 0; i < 1000; ++i) {
    // One draw per statement: the order of evaluation of function arguments differs between compilers.
    const auto u = static_cast<unsigned long long>(sia::sim::uniform_below(rng, 1000003));
    const double r = sia::sim::uniform_real(rng);
    const double e = sia::sim::exponential(rng, 0.25);
    const std::size_t d = sia::sim::discrete(rng, weights);
    std::printf("%llu %.17g %.17g %zu\n", u, r, e, d);
  }
  return 0;
}
