// A consumer of the installed simulator component (sia::sim): links libsia_sim and calls into it.
#include <sia/sim/catalogue.hpp>
#include <sia/sim/workload.hpp>

#include <exception>
#include <iostream>

int main() try {
  const auto models = sia::sim::catalogue_models();
  const auto workload = sia::sim::synthetic_philly_workload(1, 20.0, 1.0);
  std::cout << "sim: " << models.size() << " catalogue models, synthetic workload of " << workload.jobs.size()
            << " jobs\n";
  return models.empty() ? 1 : 0;
} catch (const std::exception& e) {
  std::cerr << "FAIL: " << e.what() << '\n';
  return 1;
}
