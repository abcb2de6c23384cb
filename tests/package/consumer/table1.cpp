// A consumer of an installed (or add_subdirectory'd) sia: one round on the paper's Table 1 example.
// Usage: table1 [backend...]   (default: the "default" backend). Runs the round with every named
// backend and checks the paper's optimum: J1 gets (1,4,B), J2 gets (1,2,A).
// Exit status 0 only when every check holds (used by .ci/package-tests.sh).
#include <sia/cluster.hpp>
#include <sia/goodput_table.hpp>
#include <sia/job_spec.hpp>
#include <sia/milp/factory.hpp>
#include <sia/round.hpp>

#include <exception>
#include <iostream>
#include <string>
#include <vector>

namespace {

// Checks one decision: `gpus` GPUs of type `type`.
bool expect(const sia::ClusterSpec& cluster, const sia::JobDecision& d, const std::string& type, int gpus) {
  const bool ok = d.config && cluster.types[static_cast<std::size_t>(d.config->type)].name() == type &&
                  d.config->gpus == gpus && d.gpus == gpus;
  std::cout << "  " << d.job << ": ";
  if (d.config)
    std::cout << d.config->gpus << " GPUs of type " << cluster.types[static_cast<std::size_t>(d.config->type)].name();
  else
    std::cout << "no GPUs";
  std::cout << (ok ? "" : "  <-- expected " + std::to_string(gpus) + " of type " + type) << '\n';
  return ok;
}

}  // namespace

int main(int argc, char** argv) try {
  std::cout << "backends:";
  for (const auto& b : sia::available_milp_solvers()) std::cout << ' ' << b;
  std::cout << " (default " << sia::default_milp_solver() << ")\n";

  // One 2-GPU node of type A, one 4-GPU node of type B; goodputs over
  // [(1,1,A), (1,2,A), (1,1,B), (1,2,B), (1,4,B)] as in the paper's Table 1.
  sia::ClusterSpec cluster;
  cluster.types = {sia::GpuTypeSpec("A", 1, 2), sia::GpuTypeSpec("B", 1, 4)};
  sia::GoodputTable g1, g2;
  g1.set("A", 1, 1).set("A", 2, 1).set("B", 1, 2).set("B", 2, 3).set("B", 4, 4);
  g2.set("A", 1, 2).set("A", 2, 4).set("B", 1, 1).set("B", 2, 2).set("B", 4, 3);
  const std::vector<sia::JobSpec> jobs = {sia::JobSpec("J1").goodput_model(g1), sia::JobSpec("J2").goodput_model(g2)};

  std::vector<std::string> backends;
  for (int i = 1; i < argc; ++i) backends.emplace_back(argv[i]);
  if (backends.empty()) backends.emplace_back("default");
  int failures = 0;
  for (const auto& backend : backends) {
    sia::RoundOptions options;
    options.backend = backend;
    const sia::RoundResult r = sia::run_round(cluster, jobs, options);
    std::cout << "round with backend '" << backend << "' (" << r.backend << "): status " << sia::to_string(r.status)
              << ", objective " << r.objective << '\n';
    bool ok = r.status == sia::RoundStatus::optimal && r.decisions.size() == 2;
    if (r.decisions.size() == 2) {
      ok = expect(cluster, r.decisions[0], "B", 4) && ok;
      ok = expect(cluster, r.decisions[1], "A", 2) && ok;
    }
    std::cout << (ok ? "PASS" : "FAIL") << ": Table 1 with backend " << backend << '\n';
    if (!ok) ++failures;
  }
  return failures == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "FAIL: " << e.what() << '\n';
  return 1;
}
