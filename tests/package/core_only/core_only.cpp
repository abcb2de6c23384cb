// Header-only use of sia: a goodput table queried through the concepts, no libsia.
#include <sia/configuration.hpp>
#include <sia/goodput_table.hpp>
#include <sia/gpu_type_spec.hpp>

#include <iostream>

int main() {
  sia::GoodputTable table;
  table.set("B", 4, 4.0).set("A", 2, 1.0);
  const sia::GpuTypeSpec b("B", 1, 4);
  const double g = table.goodput(b, sia::ConfigurationSpec{1, 1, 4});
  std::cout << "goodput of (1,4,B): " << g << '\n';
  return g == 4.0 ? 0 : 1;
}
