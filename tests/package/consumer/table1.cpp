// A consumer of an installed (or add_subdirectory'd) sia: the paper's Table 1 example.
// Usage: table1 [backend...]   Every named backend must be available in this libsia.
// Exit status 0 only when the checks hold (used by .ci/package-tests.sh).
#include <sia/milp/factory.hpp>
#include <sia/milp/model.hpp>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::vector<std::string> backends = sia::available_milp_solvers();
  std::cout << "backends:";
  for (const auto& b : backends) std::cout << ' ' << b;
  std::cout << " (default " << sia::default_milp_solver() << ")\n";
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    if (!sia::has_milp_solver(argv[i])) {
      std::cout << "FAIL: backend '" << argv[i] << "' is not available\n";
      ++failures;
    }
  }

  // Table 1 as a MILP (p = 1): columns x[j][c] over [(1,1,A), (1,2,A), (1,1,B), (1,2,B), (1,4,B)].
  const double goodput[2][5] = {{1, 1, 2, 3, 4}, {2, 4, 1, 2, 3}};
  const int gpus[5] = {1, 2, 1, 2, 4};
  const int type[5] = {0, 0, 1, 1, 1};
  sia::MilpModel m;
  m.sense = sia::MilpSense::maximize;
  for (int j = 0; j < 2; ++j)
    for (int c = 0; c < 5; ++c) m.add_col(goodput[j][c], 0, 1, true);
  for (int j = 0; j < 2; ++j) {
    const int row = m.add_row(-sia::MilpModel::inf, 1);
    for (int c = 0; c < 5; ++c) m.add_entry(row, j * 5 + c, 1);
  }
  const int capacity[2] = {2, 4};
  for (int t = 0; t < 2; ++t) {
    const int row = m.add_row(-sia::MilpModel::inf, capacity[t]);
    for (int j = 0; j < 2; ++j)
      for (int c = 0; c < 5; ++c)
        if (type[c] == t) m.add_entry(row, j * 5 + c, gpus[c]);
  }
  m.validate();
  std::vector<double> x(10, 0.0);
  x[0 * 5 + 4] = 1;  // J1 -> (1,4,B)
  x[1 * 5 + 1] = 1;  // J2 -> (1,2,A)
  const bool ok = m.is_feasible(x) && m.objective_of(x) == 8.0;
  std::cout << (ok ? "PASS" : "FAIL") << ": Table 1 optimum J1 (1,4,B), J2 (1,2,A), objective "
            << m.objective_of(x) << '\n';
  if (!ok) ++failures;
  return failures == 0 ? 0 : 1;
}
