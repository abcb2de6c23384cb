// The experiments registry (issue 18): names, errors, the Helios workload, and a quick run of table4 and fig8 with
// reduced policies and workloads (the full runs are documented commands, docs/experiments.md).
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/sim/experiment.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

using namespace sia::sim;

namespace {
// A scratch directory of this process: two test processes (the Release and the sanitizer suites, or two
// checkouts on one machine) must not remove each other's outputs.
std::filesystem::path scratch_dir(const std::string& name) {
  return std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
}
}  // namespace

TEST_CASE("sim.experiments.registry") {
  const auto names = experiment_names();
  for (const char* n : {"table3", "fig1", "table4", "fig6", "fig7", "fig8", "fig9", "round-time", "fig10", "fig11",
                        "profiling", "hybrid"})
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
  CHECK_THROWS_WITH_AS((void)run_experiment("table9", {}), doctest::Contains("table4"), sia::InvalidArgument);
  ExperimentOptions bad;
  bad.threads = -1;
  CHECK_THROWS_AS((void)run_experiment("table4", bad), sia::InvalidArgument);
  CHECK_THROWS_AS(register_experiment({"", "x", [](const ExperimentOptions&) { return ExperimentResult{}; }}),
                  sia::InvalidArgument);
  register_experiment({"test-echo", "writes one file", [](const ExperimentOptions& o) {
                         ExperimentResult r;
                         std::ofstream(o.out_dir / "echo.txt") << "ok\n";
                         r.files.push_back(o.out_dir / "echo.txt");
                         return r;
                       }});
  ExperimentOptions o;
  o.out_dir = scratch_dir("sia-test-echo");
  const auto r = run_experiment("test-echo", o);
  REQUIRE(r.files.size() == 1);
  CHECK(std::filesystem::exists(r.files.front()));
  std::filesystem::remove_all(o.out_dir);
  ExperimentOptions missing;
  missing.data_dir = "/nonexistent/sia-data";
  CHECK_THROWS_WITH_AS((void)experiment_data_dir(missing), doctest::Contains("/nonexistent"), sia::InvalidArgument);
}

TEST_CASE("sim.experiments.quick_runs") {
  const std::filesystem::path data = SIA_SHARED_DIR "/data/sia-artifact";
  if (!std::filesystem::exists(data / "profiles")) {
    MESSAGE("skipping: " << (data / "profiles").string() << " not found");
    return;
  }
  // The Helios trace: the 2x-replicated file halved back to 160 jobs in submission order.
  const auto h = helios_workload(data);
  CHECK(h.jobs.size() == 160);
  CHECK(std::is_sorted(h.jobs.begin(), h.jobs.end(), [](const auto& a, const auto& b) { return a.time < b.time; }));

  const auto dir = scratch_dir("sia-test-experiments");
  std::filesystem::remove_all(dir);
  std::ostringstream log;
  ExperimentOptions o;
  o.data_dir = data;
  o.out = &log;
  o.max_workloads = 1;
  o.policies = {"gavel"};
  o.out_dir = dir / "table4";
  const auto t4 = run_experiment("table4", o);
  CHECK(std::filesystem::exists(o.out_dir / "table4.csv"));
  CHECK(std::filesystem::exists(o.out_dir / "workloads-tuned" / "workload-1.csv"));
  CHECK(log.str().find("4.30") != std::string::npos);  // the paper's Gavel avg JCT beside ours
  std::ifstream csv(o.out_dir / "table4.csv");
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  CHECK(row.rfind("gavel,", 0) == 0);
  (void)t4;
  o.out_dir = dir / "fig8";
  o.policies = {"gavel"};
  (void)run_experiment("fig8", o);
  CHECK(std::filesystem::exists(o.out_dir / "fig8.csv"));
  CHECK(std::filesystem::exists(o.out_dir / "fig8_jobs.csv"));
  CHECK(log.str().find("27.8") != std::string::npos);  // the paper's worst Gavel ρ
  std::filesystem::remove_all(dir);
}

TEST_CASE("sim.experiments.issue17_quick_runs") {
  // Smoke runs of issue 17's experiments with one policy and one workload (the full runs are documented commands).
  const std::filesystem::path data = SIA_SHARED_DIR "/data/sia-artifact";
  if (!std::filesystem::exists(data / "profiles")) {
    MESSAGE("skipping: " << (data / "profiles").string() << " not found");
    return;
  }
  const auto dir = scratch_dir("sia-test-experiments-17");
  std::filesystem::remove_all(dir);
  std::ostringstream log;
  ExperimentOptions o;
  o.data_dir = data;
  o.out = &log;
  o.max_workloads = 1;
  o.policies = {"sia"};
  o.out_dir = dir / "hybrid";
  const auto h = run_experiment("hybrid", o);
  CHECK(h.targets_met);  // linear throughput; down under the burst, up after it
  CHECK(std::filesystem::exists(o.out_dir / "hybrid_throughput.csv"));
  CHECK(std::filesystem::exists(o.out_dir / "hybrid_timeline.csv"));
  CHECK(std::filesystem::exists(o.out_dir / "hybrid_timeline.gp"));
  o.out_dir = dir / "table3";
  (void)run_experiment("table3", o);
  CHECK(std::filesystem::exists(o.out_dir / "table3.csv"));
  CHECK(log.str().find("0.60") != std::string::npos);  // the paper's Sia avg JCT beside ours
  std::filesystem::remove_all(dir);
}
