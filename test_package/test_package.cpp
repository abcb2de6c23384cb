// Conan test_package: links sia::sia and lists the MILP backends compiled into it.
#include <sia/milp/factory.hpp>

#include <iostream>

int main() {
  const auto backends = sia::available_milp_solvers();
  std::cout << "sia backends:";
  for (const auto& b : backends) std::cout << ' ' << b;
  std::cout << " (default " << sia::default_milp_solver() << ")\n";
  return backends.empty() ? 1 : 0;
}
