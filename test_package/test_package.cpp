// Conan test_package: one round of the paper's Table 1 example through the packaged sia::sia.
#include <sia/cluster.hpp>
#include <sia/goodput_table.hpp>
#include <sia/job_spec.hpp>
#include <sia/round.hpp>

#include <iostream>
#include <vector>

int main() {
  sia::ClusterSpec cluster;
  cluster.types = {sia::GpuTypeSpec("A", 1, 2), sia::GpuTypeSpec("B", 1, 4)};
  sia::GoodputTable g1, g2;
  g1.set("A", 1, 1).set("A", 2, 1).set("B", 1, 2).set("B", 2, 3).set("B", 4, 4);
  g2.set("A", 1, 2).set("A", 2, 4).set("B", 1, 1).set("B", 2, 2).set("B", 4, 3);
  const std::vector<sia::JobSpec> jobs = {sia::JobSpec("J1").goodput_model(g1), sia::JobSpec("J2").goodput_model(g2)};

  const sia::RoundResult r = sia::run_round(cluster, jobs);
  std::cout << "sia round (" << r.backend << "): " << sia::to_string(r.status) << '\n';
  const auto& j1 = r.decisions.at(0);
  const bool ok =
      j1.config && cluster.types.at(static_cast<std::size_t>(j1.config->type)).name() == "B" && j1.gpus == 4;
  std::cout << "J1 -> " << j1.gpus << " GPUs" << (ok ? " of type B: ok" : ": expected 4 of type B") << '\n';
  return ok ? 0 : 1;
}
