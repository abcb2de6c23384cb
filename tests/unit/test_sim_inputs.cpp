// Simulator inputs: cluster presets and files, workload CSVs, the synthetic workload, bad input.
#include <doctest/doctest.h>

#include <sia/sim/catalogue.hpp>
#include <sia/sim/cluster.hpp>
#include <sia/sim/simulator.hpp>
#include <sia/sim/workload.hpp>

#include <filesystem>
#include <sstream>

using namespace sia;
using namespace sia::sim;

TEST_CASE("sim.inputs.cluster_presets") {
  const auto h = cluster_preset("paper-heterogeneous");
  REQUIRE(h.types.size() == 3);
  CHECK(h.types[0].name == "aws");
  CHECK(h.types[1].name == "dgx-ext");
  CHECK(h.types[2].name == "rtx");
  CHECK(h.total_gpus() == 64);
  CHECK(h.types[0].max_job_nodes == 16);
  CHECK(cluster_preset("paper-homogeneous").total_gpus() == 64);
  CHECK(cluster_preset("paper-physical").total_gpus() == 44);
  CHECK(cluster_preset("paper-heterogeneous", 32).total_gpus() == 2048);
  CHECK_THROWS_WITH_AS((void)cluster_preset("nope"), doctest::Contains("paper-heterogeneous"), InvalidArgument);
  CHECK_THROWS_AS((void)cluster_preset("paper-homogeneous", 0), InvalidArgument);
}

TEST_CASE("sim.inputs.cluster_json") {
  const auto c = parse_cluster_json(
      R"({"name":"mine","gpu_types":[{"name":"t4","profile":"aws","nodes":2,"gpus_per_node":4},
                                     {"name":"a100","profile":"dgx-ext","nodes":1,"gpus_per_node":8,"max_job_nodes":1}]})",
      "c.json", 2);
  CHECK(c.name == "mine");
  CHECK(c.total_gpus() == 32);
  CHECK(c.types[0].profile == "aws");
  CHECK(c.types[0].max_job_nodes == 16);
  CHECK(c.types[1].max_job_nodes == 1);
  CHECK_THROWS_WITH_AS(
      (void)parse_cluster_json(R"({"gpu_types":[{"name":"x","nodes":0,"gpus_per_node":4}]})", "z.json"),
      doctest::Contains("no GPUs"), InvalidArgument);
  CHECK_THROWS_WITH_AS((void)parse_cluster_json(R"({"gpu_types":[{"name":"x","nodes":1}]})", "z.json"),
                       doctest::Contains("gpus_per_node"), InvalidArgument);
  CHECK_THROWS_WITH_AS((void)parse_cluster_json(R"({"gpu_types":[], "extra": 1})", "z.json"),
                       doctest::Contains("extra"), InvalidArgument);
  CHECK_THROWS_AS((void)parse_cluster_json("{", "z.json"), InvalidArgument);
}

TEST_CASE("sim.inputs.workload_csv") {
  std::istringstream in(
      "name,time,application,num_replicas,batch_size,category\n"
      "cifar10-0,107,cifar10,6,2048,\n"
      "bert-1,110.5,bert,8,384,rigid\n"
      "\n"
      "yolov3-2,200,yolov3,4,64,scale-gpus\n");
  const auto w = parse_workload_csv(in, "dir/workload-9.csv");
  CHECK(w.name == "workload-9");
  REQUIRE(w.jobs.size() == 3);
  CHECK(w.jobs[0].category == JobKind::adaptive);
  CHECK(w.jobs[1].time == doctest::Approx(110.5));
  CHECK(w.jobs[1].category == JobKind::rigid);
  CHECK(w.jobs[2].category == JobKind::strong_scaling);
  CHECK(w.jobs[2].line == 5);
}

TEST_CASE("sim.inputs.workload_errors") {
  auto parse = [](const std::string& text) {
    std::istringstream in(text);
    return parse_workload_csv(in, "w.csv");
  };
  const std::string h = "name,time,application,num_replicas,batch_size\n";
  CHECK_THROWS_WITH_AS(parse("name,time,application,batch_size\na,1,cifar10,2\n"),
                       doctest::Contains("missing column 'num_replicas'"), InvalidArgument);
  CHECK_THROWS_WITH_AS(parse(h + "a,-5,cifar10,1,128\n"), doctest::Contains("w.csv:2:2"), InvalidArgument);
  CHECK_THROWS_WITH_AS(parse(h + "a,10,cifar10,1,128\nb,5,cifar10,1,128\n"), doctest::Contains("not sorted"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse(h + "a,x,cifar10,1,128\n"), doctest::Contains("not a number"), InvalidArgument);
  CHECK_THROWS_WITH_AS(parse(h + "a,1,cifar10,0,128\n"), doctest::Contains("w.csv:2:4"), InvalidArgument);
  CHECK_THROWS_WITH_AS(parse(h + "a,1,cifar10,1\n"), doctest::Contains("expected 5 columns"), InvalidArgument);
  CHECK_THROWS_WITH_AS(parse(h + "a,1,cifar10,1,128\na,2,cifar10,1,128\n"), doctest::Contains("duplicate"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(parse("name,time,application,num_replicas,batch_size,category\na,1,c,1,1,elastic\n"),
                       doctest::Contains("unknown category"), InvalidArgument);
  CHECK_THROWS_AS(parse(""), InvalidArgument);
  CHECK_THROWS_AS((void)load_workloads("/nonexistent/workload"), InvalidArgument);
}

TEST_CASE("sim.inputs.synthetic_workload") {
  const auto a = synthetic_philly_workload(7);
  const auto b = synthetic_philly_workload(7);
  REQUIRE(a.jobs.size() == b.jobs.size());
  CHECK(a.jobs.size() > 100);  // ~160 jobs expected (Poisson, 20/h for 8 h)
  CHECK(a.jobs.size() < 230);
  int cifar = 0;
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    CHECK(a.jobs[i].name == b.jobs[i].name);
    if (i) CHECK(a.jobs[i].time >= a.jobs[i - 1].time);
    cifar += a.jobs[i].application == "cifar10";
  }
  CHECK(cifar > static_cast<int>(a.jobs.size()) / 2);
}

TEST_CASE("sim.inputs.catalogue") {
  const auto apps = catalogue_applications(cluster_preset("paper-heterogeneous"));
  CHECK(apps.size() == 5);
  for (const auto& [name, app] : apps) {
    CHECK(app->types.size() == 3);
    CHECK(app->total_progress() > 0);
    CHECK(app->step_time(0, {1}, app->types[0].min_local).step > 0);
  }
  SimCluster odd;
  odd.types = {SimGpuType{"v100", "azure", 1, 8, 5}};
  CHECK_THROWS_WITH_AS((void)catalogue_applications(odd), doctest::Contains("azure"), InvalidArgument);
}

TEST_CASE("sim.inputs.profiles_errors") {
  const std::filesystem::path dir = SIA_SHARED_DIR "/data/sia-artifact/profiles";
  if (!std::filesystem::exists(dir)) {
    MESSAGE("skipping: " << dir.string() << " not found");
    return;
  }
  Workload w;
  w.source = "w.csv";
  WorkloadJob j;
  j.name = "gpt-0";
  j.application = "gpt3";
  j.line = 7;
  w.jobs.push_back(j);
  CHECK_THROWS_WITH_AS((void)load_applications(dir, cluster_preset("paper-heterogeneous"), {w}),
                       doctest::Contains("w.csv:7:3"), InvalidArgument);
  w.jobs[0].application = "cifar10";
  SimCluster c;
  c.name = "c";
  c.types = {SimGpuType{"h100", "h100", 1, 8, 1}};
  CHECK_THROWS_WITH_AS((void)load_applications(dir, c, {w}), doctest::Contains("placements-h100.csv"), InvalidArgument);
}

// Issue 14 §6: a UTF-8 byte-order mark before the header is accepted (it hid the first column).
TEST_CASE("sim.inputs.workload_csv_bom") {
  std::istringstream in(
      "\xEF\xBB\xBFname,time,application,num_replicas,batch_size,category\n"
      "cifar10-0,107,cifar10,6,2048,\n");
  const auto w = parse_workload_csv(in, "bom.csv");
  REQUIRE(w.jobs.size() == 1);
  CHECK(w.jobs[0].time == doctest::Approx(107));
}

// Issue 14 §6: an integer overflow in a cluster file says so (nodes x scale wrapped silently before).
TEST_CASE("sim.inputs.cluster_json_overflow") {
  CHECK_THROWS_WITH_AS(
      (void)parse_cluster_json(R"({"gpu_types":[{"name":"x","nodes":1000000,"gpus_per_node":1}]})", "o.json", 4096),
      doctest::Contains("integer overflow"), InvalidArgument);
  CHECK_THROWS_WITH_AS(
      (void)parse_cluster_json(R"({"gpu_types":[{"name":"x","nodes":1000000,"gpus_per_node":8192}]})", "o.json"),
      doctest::Contains("integer overflow"), InvalidArgument);
}

// Issue 14 part 6: a cluster's GPU count is summed without wrapping, and clusters the rounds
// cannot count (more than INT_MAX GPUs) are refused with "integer overflow" instead of "no GPUs".
TEST_CASE("sim.inputs.cluster_total_gpus_does_not_overflow") {
  SimCluster big;
  for (int t = 0; t < 3; ++t) big.types.push_back({"t" + std::to_string(t), "t", 1 << 24, 64, 1});
  CHECK(big.total_gpus() == 3LL * (1LL << 30));
  // Two types of 2^30 GPUs each: each fits an int, their sum does not.
  const std::string two = R"({"gpu_types":[{"name":"a","nodes":16777216,"gpus_per_node":64},
                                          {"name":"b","nodes":16777216,"gpus_per_node":64}]})";
  CHECK_THROWS_WITH_AS((void)parse_cluster_json(two, "big.json"),
                       "big.json: integer overflow: the cluster has 2147483648 GPUs in all, more than 2147483647",
                       InvalidArgument);
  CHECK_THROWS_WITH_AS((void)cluster_preset("paper-homogeneous", 1 << 26), doctest::Contains("integer overflow"),
                       InvalidArgument);
}

// Issue 14 part 6: a CSV field that is not a number is quoted by its start and its length, not in full.
TEST_CASE("sim.inputs.csv_messages_shorten_long_fields") {
  const auto parse = [](const std::string& text) {
    std::istringstream in(text);
    return parse_workload_csv(in, "w.csv");
  };
  const std::string h = "name,time,application,num_replicas,batch_size\n";
  try {
    (void)parse(h + "a," + std::string(100000, '7') + "x,cifar10,1,128\n");
    FAIL("no error");
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    CHECK(msg.find("w.csv:2:2: column 'time': not a number: '77777") == 0);
    CHECK(msg.find("...' (100001 bytes)") != std::string::npos);
    CHECK(msg.size() < 200);
  }
  CHECK_THROWS_WITH_AS(parse(h + "a,1,cifar10,1.5,128\n"),
                       doctest::Contains("w.csv:2:4: column 'num_replicas': expected an integer in ["),
                       InvalidArgument);
}
