// The JSON request parser and the decision printer (product.md §5; issue 2 "Bad input", issue 4).
#include <sia/error.hpp>
#include <sia/request.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string data(const std::string& name) { return read_file(SIA_SOURCE_DIR "/tests/data/allocate/" + name); }

// A valid request with one job, as a JSON value the tests mutate.
json base_request() {
  return json::parse(R"({
    "cluster": {"gpu_types": [{"name": "A", "nodes": 1, "gpus_per_node": 2},
                              {"name": "B", "nodes": 2, "gpus_per_node": 4}]},
    "jobs": [{"id": "J1", "min_gpus": 1, "max_gpus": 8,
              "goodput": [{"gpu_type": "A", "gpus": 1, "value": 1}, {"gpu_type": "B", "gpus": 4, "value": 3.5},
                          {"gpu_type": "B", "gpus": 8, "value": 6}]}]
  })");
}

// The message of the InvalidArgument thrown by parsing `text`; or else, when a job was rejected,
// the message of the same request with `"options": {"strict": true}` (all or nothing), which must
// end with the first rejected job's "<field>: <reason>"; "" if the request is accepted whole.
std::string error_of(const std::string& text) {
  sia::Request r;
  try {
    r = sia::parse_request(text, "req.json");
  } catch (const sia::InvalidArgument& e) {
    return e.what();
  }
  if (r.rejected.empty()) return "";
  const std::string tail = ": " + r.rejected[0].field + ": " + r.rejected[0].reason;
  json strict = json::parse(text);
  strict["options"] = {{"strict", true}};
  std::string strict_msg;
  try {
    (void)sia::parse_request(strict.dump(), "req.json");
  } catch (const sia::InvalidArgument& e) {
    strict_msg = e.what();
  }
  CHECK_MESSAGE(strict_msg.size() >= tail.size(), strict_msg);
  CHECK_MESSAGE(
      strict_msg.compare(strict_msg.size() - std::min(tail.size(), strict_msg.size()), tail.size(), tail) == 0,
      strict_msg << " does not end with " << tail);
  return strict_msg;
}
std::string error_of(const char* text) { return error_of(std::string(text)); }
std::string error_of(const json& j) { return error_of(j.dump()); }

#define CHECK_REJECTS(input, fragment)                                                          \
  do {                                                                                          \
    const std::string msg_ = error_of(input);                                                   \
    INFO("message: " << msg_);                                                                  \
    CHECK_MESSAGE(msg_.find(fragment) != std::string::npos, "expected '" << (fragment) << "'"); \
  } while (0)

double goodput(const sia::Request& r, std::size_t job, int type, int nodes, int gpus) {
  return r.jobs.at(job).goodput(r.cluster.types.at(static_cast<std::size_t>(type)),
                                sia::ConfigurationSpec{type, nodes, gpus});
}

}  // namespace

TEST_CASE("request.parse.table1") {
  const sia::Request r = sia::parse_request(data("table1_p1.json"), "table1_p1.json");
  REQUIRE(r.cluster.num_types() == 2);
  CHECK(r.cluster.types[0] == sia::GpuTypeSpec("A", 1, 2));
  CHECK(r.cluster.types[1] == sia::GpuTypeSpec("B", 1, 4));
  CHECK(r.cluster.reserved == std::vector<int>{0, 0});
  CHECK(r.options.p == 1.0);
  CHECK(r.options.lambda == doctest::Approx(1.1));
  CHECK(r.options.time_limit == std::chrono::milliseconds(1000));
  CHECK(r.options.relative_gap == doctest::Approx(1e-4));
  CHECK(r.options.backend == "default");
  REQUIRE(r.jobs.size() == 2);
  CHECK(r.jobs[0].id() == "J1");
  CHECK(r.jobs[1].id() == "J2");
  CHECK(r.jobs[0].max_gpus() == 64);
  CHECK(r.jobs[0].kind() == sia::JobKind::adaptive);
  CHECK(r.jobs[0].restart_cost_s() == 30.0);
  CHECK_FALSE(r.jobs[0].current().has_value());
  CHECK_FALSE(r.jobs[0].max_gpus_ever().has_value());
  CHECK(goodput(r, 0, 0, 1, 1) == 1.0);
  CHECK(goodput(r, 0, 1, 1, 4) == 4.0);
  CHECK(goodput(r, 1, 0, 1, 2) == 4.0);
  CHECK(goodput(r, 1, 1, 1, 2) == 2.0);
  CHECK(goodput(r, 1, 1, 1, 3) == 0.0);  // not in the table: not usable
  const sia::Request n = sia::parse_request(data("table1_p_negative.json"), "table1_p_negative.json");
  CHECK(n.options.p == -0.5);
}

TEST_CASE("request.parse.defaults") {
  const sia::Request r = sia::parse_request(base_request().dump(), "");
  const sia::RoundOptions defaults;
  CHECK(r.options.p == defaults.p);
  CHECK(r.options.lambda == defaults.lambda);
  CHECK(r.options.time_limit == defaults.time_limit);
  const sia::JobSpec& j = r.jobs.at(0);
  CHECK(j.preemptible());
  CHECK(j.age_s() == 0.0);
  CHECK(j.restarts() == 0);
  CHECK(j.pipeline_size() == 1);
  CHECK(goodput(r, 0, 1, 2, 8) == 6.0);  // multi-node entry without "nodes": the only (?, 8, B)
  CHECK(r.cluster.down == std::vector<std::vector<int>>{{}, {}});
  CHECK(r.cluster.node_name(1, 1) == "B/1");
}

TEST_CASE("request.parse.kinds_and_options") {
  json j = base_request();
  j["policy"] = {{"p", 2},
                 {"lambda", 0.5},
                 {"backend", "default"},
                 {"time_limit_ms", nullptr},
                 {"relative_gap", 0},
                 {"place", false},
                 {"round_utilities", true},
                 {"prices", false}};
  j["jobs"][0]["kind"] = "scale-gpus";
  j["jobs"][0]["max_gpus"] = 8.0;  // integral floats are integers
  j["jobs"][0]["preemptible"] = false;
  j["jobs"][0]["max_gpus_ever"] = 2;
  j["jobs"][0]["age_s"] = 12.5;
  j["jobs"].push_back({{"id", "H"},
                       {"kind", "hybrid"},
                       {"pipeline_size", 2},
                       {"goodput", {{{"gpu_type", "B"}, {"gpus", 4}, {"value", 1}}}}});
  j["jobs"].push_back(
      {{"id", "R"}, {"kind", "rigid"}, {"max_gpus", 3}, {"goodput", {{{"gpu_type", "B"}, {"gpus", 3}, {"value", 2}}}}});
  j["jobs"].push_back({{"id", "S"}, {"kind", "strong-scaling"}, {"goodput", json::array()}});
  const sia::Request r = sia::parse_request(j.dump(), "");
  CHECK(r.options.p == 2.0);
  CHECK(r.options.lambda == 0.5);
  CHECK_FALSE(r.options.time_limit.has_value());
  CHECK(r.options.relative_gap == 0.0);
  CHECK_FALSE(r.options.place);
  CHECK(r.options.round_utilities);
  CHECK_FALSE(r.options.compute_prices);
  CHECK(r.jobs[0].kind() == sia::JobKind::strong_scaling);
  CHECK(r.jobs[0].max_gpus() == 8);
  CHECK_FALSE(r.jobs[0].preemptible());
  CHECK(r.jobs[0].max_gpus_ever() == 2);
  CHECK(r.jobs[0].age_s() == 12.5);
  CHECK(r.jobs[1].kind() == sia::JobKind::hybrid);
  CHECK(r.jobs[1].min_gpus() == 2);  // one pipeline
  CHECK(r.jobs[2].kind() == sia::JobKind::rigid);
  CHECK(r.jobs[2].min_gpus() == 3);
  CHECK(r.jobs[2].max_gpus() == 3);
  // A rigid count that is not a configuration size runs on its footprint, (1, 4, B); the round
  // asks its goodput for the count on the footprint's nodes.
  CHECK(goodput(r, 2, 1, 1, 3) == 2.0);
  CHECK(r.jobs[3].kind() == sia::JobKind::strong_scaling);
}

TEST_CASE("request.parse.placement_names_down") {
  const sia::Request r = sia::parse_request(data("placement.json"), "placement.json");
  CHECK(r.cluster.node_name(1, 0) == "b-0");
  CHECK(r.cluster.node_name(0, 1) == "A/1");
  CHECK(r.cluster.is_down(0, 1));
  CHECK_FALSE(r.cluster.is_down(0, 0));
  const auto& cur = r.jobs.at(0).current();
  REQUIRE(cur.has_value());
  CHECK(cur->type == 1);
  CHECK(cur->gpus == 4);
  REQUIRE(cur->placement.size() == 1);
  CHECK(cur->placement[0].node == 0);
  CHECK(cur->placement[0].gpus == 4);
  CHECK(cur->placement[0].gpu_ids == std::vector<int>{0, 1, 2, 3});
  const auto& cur2 = r.jobs.at(1).current();
  REQUIRE(cur2.has_value());
  CHECK(cur2->placement.at(0).node == 1);  // on the failed node: the round re-places it
  CHECK(cur2->placement.at(0).gpu_ids.empty());

  // Reservations shrink with the GPUs that are left when nodes fail.
  json f = base_request();
  f["cluster"]["reserved"] = {{"B", 6}};
  f["cluster"]["down"] = {"B/0"};
  CHECK(sia::parse_request(f.dump(), "").cluster.reserved == std::vector<int>{0, 4});

  // The cluster-level form of node names is equivalent to the per-type one.
  json j = base_request();
  j["cluster"]["node_names"] = {{"B", {"x", "y"}}};
  j["cluster"]["down"] = {"y"};
  j["jobs"][0]["current"] = {{"gpu_type", "B"},
                             {"gpus", 8},
                             {"nodes", 2},
                             {"placement", {{{"node", "x"}, {"gpus", 4}}, {{"node", "y"}, {"gpus", 4}}}}};
  const sia::Request r2 = sia::parse_request(j.dump(), "");
  CHECK(r2.cluster.node_name(1, 1) == "y");
  CHECK(r2.cluster.is_down(1, 1));
  CHECK(r2.jobs[0].current()->nodes == 2);
  CHECK(r2.jobs[0].current()->placement.size() == 2);
}

TEST_CASE("request.bad.json") {
  // Malformed JSON: position (line:column) and nlohmann's reason.
  CHECK_REJECTS("{\"cluster\": {\n  \"gpu_types\": [tru]}}", "req.json:2:");
  CHECK_REJECTS("{\"cluster\": {\n  \"gpu_types\": [tru]}}", "malformed JSON");
  CHECK_REJECTS("", "req.json:1:1: malformed JSON");
  CHECK_REJECTS("{} {}", "malformed JSON");              // trailing content
  CHECK_REJECTS("{\"a\": \"\x01\"}", "malformed JSON");  // control character in a string
  CHECK_REJECTS("{\"a\": \"\xff\"}", "malformed JSON");  // invalid UTF-8
  CHECK_REJECTS("[1, 2", "malformed JSON");
  // Overflow: 1e999 is not a finite double (NaN and Infinity are not JSON at all).
  json j = base_request();
  std::string text = j.dump();
  const std::string needle = "\"value\":3.5";
  REQUIRE(text.find(needle) != std::string::npos);
  text.replace(text.find(needle), needle.size(), "\"value\":1e999");
  CHECK_REJECTS(text, "jobs[0].goodput[1].value");
  CHECK_REJECTS(text, "overflow");
  CHECK_REJECTS("{\"jobs\": [NaN]}", "malformed JSON");
  CHECK_REJECTS("{\"jobs\": [Infinity]}", "malformed JSON");
  // Not an object; duplicate keys (nlohmann would silently keep the last one).
  CHECK_REJECTS("[]", "must be an object");
  CHECK_REJECTS(
      R"({"cluster": {"gpu_types": [{"name": "A", "name": "B", "nodes": 1, "gpus_per_node": 1}]}, "jobs": []})",
      "cluster.gpu_types[0]: duplicate key \"name\"");
}

TEST_CASE("request.bad.deep_nesting") {
  // Deep nesting is rejected before parsing, with a position; no stack is consumed.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK_REJECTS(deep, "req.json:1:65: JSON nested deeper than 64 levels");
  const std::string deep_obj = [] {
    std::string s;
    for (int i = 0; i < 5000; ++i) s += "{\"a\":";
    return s;
  }();
  CHECK_REJECTS(deep_obj, "nested deeper than 64");
  // Brackets inside strings do not count.
  json j = base_request();
  j["jobs"][0]["id"] = std::string(200, '[') + "\"\\";
  CHECK(error_of(j).empty());
}

TEST_CASE("request.bad.unknown_fields") {
  json j = base_request();
  j["extra"] = 1;
  CHECK_REJECTS(j, "req.json:1:110: extra: unknown field (known fields: cluster, policy, jobs, warm_start, options)");
  j = base_request();
  j["jobs"][0]["goodput"][1]["valeu"] = 1;
  CHECK_REJECTS(j, "jobs[0].goodput[1].valeu: unknown field");
  j = base_request();
  j["cluster"]["gpu_types"][0]["memory"] = 16;
  CHECK_REJECTS(j, "cluster.gpu_types[0].memory: unknown field");
  j = base_request();
  j["policy"] = {{"alpha", 1}};
  CHECK_REJECTS(j, "policy.alpha: unknown field");
  j = base_request();
  j["jobs"][0]["current"] = {{"gpu_type", "B"}, {"gpus", 4}, {"where", "B/0"}};
  CHECK_REJECTS(j, "jobs[0].current.where: unknown field");
  j = base_request();
  j["jobs"][0]["weird key"] = 1;
  CHECK_REJECTS(j, "jobs[0][\"weird key\"]: unknown field");
  j = base_request();
  j["jobs"][0].erase("id");
  CHECK_REJECTS(j, "jobs[0].id: missing required field");
  j = base_request();
  j.erase("cluster");
  CHECK_REJECTS(j, "cluster: missing required field");
}

TEST_CASE("request.bad.types") {
  json j = base_request();
  j["jobs"][0]["min_gpus"] = "1";
  CHECK_REJECTS(j, "jobs[0].min_gpus: must be an integer, got \"1\" (a string)");
  j = base_request();
  j["jobs"][0]["min_gpus"] = 1.5;
  CHECK_REJECTS(j, "jobs[0].min_gpus: must be an integer in [1, 2147483647], got 1.5");
  j = base_request();
  j["jobs"][0]["max_gpus"] = 1e12;
  CHECK_REJECTS(j, "jobs[0].max_gpus: must be an integer in");
  j = base_request();
  j["jobs"][0]["max_gpus"] = 18446744073709551615ULL;
  CHECK_REJECTS(j, "jobs[0].max_gpus: must be an integer in");
  j = base_request();
  j["jobs"][0]["goodput"][0]["value"] = "1";
  CHECK_REJECTS(j, "jobs[0].goodput[0].value: must be a number, got \"1\" (a string)");
  j = base_request();
  j["jobs"][0]["goodput"][0]["value"] = nullptr;
  CHECK_REJECTS(j, "jobs[0].goodput[0].value: must be a number, got null");
  j = base_request();
  j["jobs"][0]["preemptible"] = 1;
  CHECK_REJECTS(j, "jobs[0].preemptible: must be true or false, got 1");
  j = base_request();
  j["jobs"][0]["id"] = 7;
  CHECK_REJECTS(j, "jobs[0].id: must be a string, got 7");
  j = base_request();
  j["jobs"][0]["id"] = "";
  CHECK_REJECTS(j, "jobs[0].id: must not be empty");
  j = base_request();
  j["jobs"] = {{"id", "x"}};
  CHECK_REJECTS(j, "jobs: must be an array, got an object");
  j = base_request();
  j["cluster"]["gpu_types"] = "A";
  CHECK_REJECTS(j, "cluster.gpu_types: must be an array");
  j = base_request();
  j["jobs"][0]["kind"] = "elastic";
  CHECK_REJECTS(j, "jobs[0].kind: unknown job kind \"elastic\"");
}

TEST_CASE("request.bad.values") {
  json j = base_request();
  j["jobs"][0]["goodput"][0]["value"] = -1;
  CHECK_REJECTS(j, "req.json:1:163: jobs[0].goodput[0].value: must be finite and >= 0, got -1");
  j = base_request();
  j["jobs"][0]["min_gpus"] = -2;
  CHECK_REJECTS(j, "jobs[0].min_gpus: must be an integer in [1, 2147483647], got -2");
  j = base_request();
  j["jobs"][0]["min_gpus"] = 4;
  j["jobs"][0]["max_gpus"] = 2;
  CHECK_REJECTS(j, "jobs[0].min_gpus: min_gpus 4 exceeds max_gpus 2");
  j = base_request();
  j["jobs"][0]["restarts"] = -1;
  CHECK_REJECTS(j, "jobs[0].restarts: must be an integer in [0,");
  j = base_request();
  j["jobs"][0]["age_s"] = -5;
  CHECK_REJECTS(j, "jobs[0].age_s: must be finite and >= 0, got -5");
  j = base_request();
  j["jobs"][0]["restart_cost_s"] = -0.5;
  CHECK_REJECTS(j, "jobs[0].restart_cost_s: must be finite and >= 0");
  j = base_request();
  j["cluster"]["gpu_types"][0]["nodes"] = -1;
  CHECK_REJECTS(j, "cluster.gpu_types[0].nodes: must be an integer in [0, 100000], got -1");
  j = base_request();
  j["cluster"]["gpu_types"][0]["gpus_per_node"] = 0;
  CHECK_REJECTS(j, "cluster.gpu_types[0].gpus_per_node: must be an integer in [1, 100000], got 0");
  j = base_request();
  j["cluster"]["reserved"] = {{"A", -1}};
  CHECK_REJECTS(j, "cluster.reserved.A: must be an integer in [0, 2], got -1");
  j = base_request();
  j["cluster"]["reserved"] = {{"A", 3}};
  CHECK_REJECTS(j, "cluster.reserved.A: must be an integer in [0, 2], got 3");
  // Policy.
  j = base_request();
  j["policy"] = {{"p", 0}};
  CHECK_REJECTS(j, "policy.p: the fairness exponent must be non-zero");
  j = base_request();
  j["policy"] = {{"lambda", 0}};
  CHECK_REJECTS(j, "policy.lambda: must be > 0, got 0");
  j = base_request();
  j["policy"] = {{"lambda", -1.5}};
  CHECK_REJECTS(j, "policy.lambda: must be > 0, got -1.5");
  j = base_request();
  j["policy"] = {{"relative_gap", 2}};
  CHECK_REJECTS(j, "policy.relative_gap: must be in [0, 1]");
  j = base_request();
  j["policy"] = {{"time_limit_ms", -1}};
  CHECK_REJECTS(j, "policy.time_limit_ms: must be an integer in [0,");
  j = base_request();
  j["policy"] = {{"backend", "gurobi"}};
  CHECK_REJECTS(j, "policy.backend: unknown MILP backend \"gurobi\" (available:");
  // Job kinds.
  j = base_request();
  j["jobs"][0]["pipeline_size"] = 2;
  CHECK_REJECTS(j, "jobs[0].pipeline_size: only hybrid jobs have a pipeline");
  j = base_request();
  j["jobs"][0]["kind"] = "hybrid";
  j["jobs"][0]["pipeline_size"] = 2;
  j["jobs"][0]["min_gpus"] = 3;
  CHECK_REJECTS(j, "jobs[0].min_gpus: must be a multiple of pipeline_size 2");
  j = base_request();
  j["jobs"][0]["kind"] = "rigid";
  j["jobs"][0]["min_gpus"] = 2;
  j["jobs"][0]["max_gpus"] = 4;
  CHECK_REJECTS(j, "jobs[0].max_gpus: a rigid job runs on exactly one count");
}

TEST_CASE("request.bad.cluster") {
  json j = base_request();
  j["cluster"]["gpu_types"] = json::array();
  CHECK_REJECTS(j, "cluster.gpu_types: the cluster has no GPU types (empty cluster)");
  j = base_request();
  j["cluster"]["gpu_types"] = {{{"name", "A"}, {"nodes", 0}, {"gpus_per_node", 4}}};
  j["jobs"] = json::array();
  CHECK_REJECTS(j, "cluster.gpu_types: the cluster has no GPUs");
  j = base_request();
  j["cluster"]["gpu_types"][1]["name"] = "A";
  CHECK_REJECTS(j, "cluster.gpu_types[1].name: duplicate GPU type \"A\"");
  j = base_request();
  j["cluster"]["gpu_types"][1]["nodes"] = 50000;
  j["cluster"]["gpu_types"][1]["gpus_per_node"] = 8;
  CHECK_REJECTS(j, "cluster.gpu_types[1]: 50000 nodes x 8 GPUs = 400000 GPUs, more than the limit of 100000");
  j = base_request();
  j["cluster"]["reserved"] = {{"C", 1}};
  CHECK_REJECTS(j, "cluster.reserved.C: unknown GPU type \"C\"");
  j = base_request();
  j["cluster"]["down"] = {"B/2"};
  CHECK_REJECTS(j, "cluster.down[0]: unknown node \"B/2\" (type \"B\" has 2 nodes)");
  j = base_request();
  j["cluster"]["down"] = {"B/01"};
  CHECK_REJECTS(j, "cluster.down[0]: unknown node \"B/01\"");
  j = base_request();
  j["cluster"]["down"] = {"B/1", "B/1"};
  CHECK_REJECTS(j, "cluster.down[1]: node \"B/1\" is listed twice");
  j = base_request();
  j["cluster"]["gpu_types"][1]["node_names"] = {"b0"};
  CHECK_REJECTS(j, "cluster.gpu_types[1].node_names: names 1 nodes, but the type has 2");
  j = base_request();
  j["cluster"]["gpu_types"][1]["node_names"] = {"b0", "b0"};
  CHECK_REJECTS(j, "cluster.gpu_types[1].node_names[1]: node name \"b0\" is already used");
  j = base_request();
  j["cluster"]["gpu_types"][1]["node_names"] = {"A/0", "b1"};
  CHECK_REJECTS(j, "cluster.gpu_types[1].node_names[0]: \"A/0\" is also the default name of node 0 of type \"A\"");
  j = base_request();
  j["cluster"]["gpu_types"][1]["node_names"] = {"b0", "b1"};
  j["cluster"]["node_names"] = {{"B", {"x", "y"}}};
  CHECK_REJECTS(j,
                "cluster.node_names.B: node names of type \"B\" are already given in cluster.gpu_types[1].node_names");
  j = base_request();
  j["cluster"]["gpu_types"][1]["node_names"] = {"b0", "b1"};
  j["cluster"]["down"] = {"B/0"};
  CHECK_REJECTS(j, "cluster.down[0]: unknown node \"B/0\" (type \"B\" names its nodes explicitly, e.g. \"b0\")");
  j = base_request();
  j["cluster"]["node_names"] = {{"Z", {"x"}}};
  CHECK_REJECTS(j, "cluster.node_names.Z: unknown GPU type \"Z\"");
}

TEST_CASE("request.bad.jobs") {
  json j = base_request();
  j["jobs"].push_back(j["jobs"][0]);
  CHECK_REJECTS(j, "jobs[1].id: duplicate job id \"J1\" (also jobs[0])");
  j = base_request();
  j["jobs"][0]["goodput"][0]["gpu_type"] = "V100";
  CHECK_REJECTS(j, "jobs[0].goodput[0].gpu_type: unknown GPU type \"V100\" (cluster types: \"A\", \"B\")");
  j = base_request();
  j["jobs"][0]["goodput"][0]["gpus"] = 3;
  CHECK_REJECTS(j,
                "jobs[0].goodput[0]: (gpu_type \"A\", gpus 3) is not a configuration of the cluster: type \"A\" "
                "has single-node configurations of 1, 2 GPUs");
  j = base_request();
  j["jobs"][0]["goodput"][2]["nodes"] = 1;
  CHECK_REJECTS(j, "jobs[0].goodput[2]: (gpu_type \"B\", gpus 8, nodes 1) is not a configuration");
  j = base_request();
  j["jobs"][0]["goodput"].push_back({{"gpu_type", "B"}, {"gpus", 4}, {"nodes", 1}, {"value", 2}});
  CHECK_REJECTS(j, "jobs[0].goodput[3]: duplicate goodput entry: same configuration as jobs[0].goodput[1]");
  j = base_request();
  j["jobs"][0].erase("goodput");
  CHECK_REJECTS(j, "jobs[0]: job \"J1\" needs a \"goodput\" table or a \"model\"");
  j = base_request();
  j["jobs"][0]["model"] = json::object();
  CHECK_REJECTS(j, "jobs[0].model: give either \"goodput\" or \"model\", not both");
  j = base_request();
  j["jobs"][0]["current"] = {{"gpu_type", "C"}, {"gpus", 1}};
  CHECK_REJECTS(j, "jobs[0].current.gpu_type: unknown GPU type \"C\"");
  j = base_request();
  j["jobs"][0]["current"] = {{"gpu_type", "A"}, {"gpus", 3}};
  CHECK_REJECTS(j, "jobs[0].current.gpus: must be an integer in [1, 2], got 3");
  j = base_request();
  j["jobs"][0]["current"] = {{"gpu_type", "B"}, {"gpus", 3}};
  CHECK_REJECTS(j, "jobs[0].current: (gpu_type \"B\", gpus 3) is not a configuration of the cluster");
  j = base_request();
  j["jobs"][0]["current"] = {{"gpu_type", "B"}, {"gpus", 8}, {"nodes", 1}};
  CHECK_REJECTS(j, "jobs[0].current: (gpu_type \"B\", gpus 8, nodes 1) is not a configuration of the cluster");
  j = base_request();
  j["jobs"][0]["max_gpus_ever"] = -1;
  CHECK_REJECTS(j, "jobs[0].max_gpus_ever: must be an integer in [0,");
}

TEST_CASE("request.bad.placement") {
  const auto with_current = [](json current) {
    json j = base_request();
    j["jobs"][0]["current"] = std::move(current);
    return j;
  };
  // A node that does not exist.
  CHECK_REJECTS(with_current({{"gpu_type", "B"}, {"gpus", 4}, {"placement", {{{"node", "B/7"}, {"gpus", 4}}}}}),
                "jobs[0].current.placement[0].node: unknown node \"B/7\"");
  // A node of another type.
  CHECK_REJECTS(
      with_current({{"gpu_type", "B"}, {"gpus", 2}, {"placement", {{{"node", "A/0"}, {"gpus", 2}}}}}),
      "jobs[0].current.placement[0].node: node \"A/0\" is of type \"A\", but the job's current gpu_type is \"B\"");
  // More GPUs than the node has.
  CHECK_REJECTS(with_current({{"gpu_type", "A"}, {"gpus", 2}, {"placement", {{{"node", "A/0"}, {"gpus", 3}}}}}),
                "jobs[0].current.placement[0].gpus: 3 GPUs on node \"A/0\", which has 2");
  // Size disagreeing with the configuration.
  CHECK_REJECTS(with_current({{"gpu_type", "B"}, {"gpus", 8}, {"placement", {{{"node", "B/0"}, {"gpus", 4}}}}}),
                "jobs[0].current.placement: places 4 GPUs, but the job's current configuration has 8");
  // The same node twice; GPU ids out of range, repeated, or not matching the count.
  CHECK_REJECTS(with_current({{"gpu_type", "B"},
                              {"gpus", 4},
                              {"placement", {{{"node", "B/0"}, {"gpus", 2}}, {{"node", "B/0"}, {"gpus", 2}}}}}),
                "jobs[0].current.placement[1].node: node \"B/0\" appears twice in the placement");
  CHECK_REJECTS(
      with_current(
          {{"gpu_type", "B"}, {"gpus", 2}, {"placement", {{{"node", "B/0"}, {"gpus", 2}, {"gpu_ids", {0, 4}}}}}}),
      "jobs[0].current.placement[0].gpu_ids[1]: must be an integer in [0, 3], got 4");
  CHECK_REJECTS(
      with_current(
          {{"gpu_type", "B"}, {"gpus", 2}, {"placement", {{{"node", "B/0"}, {"gpus", 2}, {"gpu_ids", {1, 1}}}}}}),
      "jobs[0].current.placement[0].gpu_ids[1]: GPU 1 of node \"B/0\" is listed twice");
  CHECK_REJECTS(
      with_current({{"gpu_type", "B"}, {"gpus", 2}, {"placement", {{{"node", "B/0"}, {"gpus", 2}, {"gpu_ids", {1}}}}}}),
      "jobs[0].current.placement[0].gpu_ids: lists 1 GPUs, but gpus is 2");

  // Two jobs on the same GPU, and two jobs holding more GPUs than a node has.
  json j = base_request();
  j["jobs"][0]["current"] = {
      {"gpu_type", "B"}, {"gpus", 2}, {"placement", {{{"node", "B/1"}, {"gpus", 2}, {"gpu_ids", {0, 1}}}}}};
  json second = j["jobs"][0];
  second["id"] = "J2";
  second["current"] = {
      {"gpu_type", "B"}, {"gpus", 2}, {"placement", {{{"node", "B/1"}, {"gpus", 2}, {"gpu_ids", {1, 2}}}}}};
  j["jobs"].push_back(second);
  CHECK_REJECTS(j, "jobs[1].current.placement[0].gpu_ids[0]: GPU 1 of node \"B/1\" is also held by job \"J1\"");
  j["jobs"][1]["current"]["gpus"] = 4;
  j["jobs"][1]["current"]["placement"][0] = {{"node", "B/1"}, {"gpus", 4}};
  CHECK_REJECTS(
      j, "jobs[1].current.placement[0].gpus: node \"B/1\" has 4 GPUs, but jobs \"J1\" and \"J2\" hold 6 GPUs on it");
  // Without overlap, both are fine.
  j["jobs"][1]["current"] = {
      {"gpu_type", "B"}, {"gpus", 2}, {"placement", {{{"node", "B/1"}, {"gpus", 2}, {"gpu_ids", {2, 3}}}}}};
  CHECK(error_of(j).empty());
}

// Slow (a 2 MB request, ~3 s in a Debug build): run with `sia_tests -tc=request.bad.limits --no-skip`.
TEST_CASE("request.bad.limits" * doctest::skip()) {
  // More jobs than the limit is rejected by count, before any job is parsed.
  std::string text = R"({"cluster": {"gpu_types": [{"name": "A", "nodes": 1, "gpus_per_node": 1}]}, "jobs": [)";
  const long long n = sia::RequestLimits::max_jobs + 1;
  text.reserve(text.size() + static_cast<std::size_t>(n) * 2 + 4);
  for (long long i = 0; i < n; ++i) text += i == 0 ? "0" : ",0";
  text += "]}";
  CHECK_REJECTS(text, "jobs: has 1000001 elements, more than the limit of 1000000");
}

TEST_CASE("request.load") {
  const sia::Request r = sia::load_request(SIA_SOURCE_DIR "/tests/data/allocate/table1_p1.json");
  CHECK(r.jobs.size() == 2);
  try {
    (void)sia::load_request("/nonexistent/request.json");
    FAIL("no exception");
  } catch (const sia::InvalidArgument& e) {
    CHECK(std::string(e.what()).find("/nonexistent/request.json: cannot open the request") != std::string::npos);
  }
  try {
    (void)sia::load_request(SIA_SOURCE_DIR "/tests/data/allocate");
    FAIL("no exception");
  } catch (const sia::InvalidArgument& e) {
    CHECK(std::string(e.what()).find("cannot read the request") != std::string::npos);
  }
}

TEST_CASE("request.decision.print") {
  const sia::Request req = sia::parse_request(data("placement.json"), "placement.json");
  sia::RoundResult res;
  res.status = sia::RoundStatus::optimal;
  res.backend = "glpk";
  res.objective = 0.1 + 0.2;  // 0.30000000000000004: must read back bit-exact
  res.best_bound = std::nan("");
  res.solve_ms = 1.0 / 3.0;
  res.total_ms = 1e-300;
  res.decisions.resize(3);
  res.decisions[0].job = "running";
  res.decisions[0].config = sia::ConfigurationSpec{1, 1, 4};
  res.decisions[0].gpus = 4;
  res.decisions[0].placement = {sia::NodeShare{0, 4, {0, 1, 2, 3}}};
  res.decisions[0].batch = sia::BatchChoice{256, 32, 1};
  res.decisions[1].job = "was-on-failed-node";
  res.decisions[1].changed = true;
  res.decisions[2].job = "new";
  res.decisions[2].config = sia::ConfigurationSpec{1, 1, 2};
  res.decisions[2].gpus = 2;
  res.decisions[2].placement = {sia::NodeShare{1, 2, {}}};
  res.decisions[2].changed = true;
  res.prices = {0.5, 1.25};
  res.evicted = {"was-on-failed-node"};
  res.message = "note";
  res.fallback = true;

  const std::string out = sia::decision_to_json(req, res);
  CHECK(out.find('\n') == std::string::npos);
  // Field order of product.md §5.
  CHECK(out.rfind(R"({"status":"optimal","objective":0.30000000000000004,)", 0) == 0);
  const json d = json::parse(out);
  CHECK(d["status"] == "optimal");
  CHECK(d["objective"].get<double>() == 0.1 + 0.2);
  CHECK(d["best_bound"].is_null());
  CHECK(d["solve_ms"] == 1.0 / 3.0);  // doubles survive the JSON round trip bit for bit
  CHECK(d["total_ms"] == 1e-300);
  CHECK(d["backend"] == "glpk");
  REQUIRE(d["allocations"].size() == 2);
  const json& a0 = d["allocations"][0];
  CHECK(a0["job"] == "running");
  CHECK(a0["gpu_type"] == "B");
  CHECK(a0["nodes"] == 1);
  CHECK(a0["gpus"] == 4);
  CHECK(a0["batch_size"] == 256);
  CHECK(a0["local_batch"] == 32);
  CHECK(a0["accumulation_steps"] == 1);
  CHECK(a0["placement"] == json::parse(R"([{"node": "b-0", "gpus": 4, "gpu_ids": [0, 1, 2, 3]}])"));
  CHECK(a0["changed"] == false);
  const json& a1 = d["allocations"][1];
  CHECK(a1["job"] == "new");
  CHECK(a1["placement"] == json::parse(R"([{"node": "b-1", "gpus": 2}])"));
  CHECK_FALSE(a1.contains("batch_size"));
  CHECK(d["unallocated"] == json::parse(R"([{"job": "was-on-failed-node", "reason": "none"}])"));
  CHECK(d["prices"] == json::parse(R"({"A": 0.5, "B": 1.25})"));
  CHECK(d["evicted"] == json::parse(R"(["was-on-failed-node"])"));
  CHECK(d["message"] == "note");
  CHECK(d["fallback"] == true);
  CHECK_FALSE(d.contains("unmet"));

  // Pretty printing is the same document.
  CHECK(json::parse(sia::decision_to_json(req, res, true)) == d);

  // Optional parts are absent when empty; a rigid footprint shows both counts.
  sia::RoundResult bare;
  bare.status = sia::RoundStatus::error;
  bare.decisions.resize(1);
  bare.decisions[0].job = "new";
  bare.decisions[0].config = sia::ConfigurationSpec{1, 1, 4};
  bare.decisions[0].gpus = 3;
  const json b = json::parse(sia::decision_to_json(req, bare));
  CHECK(b["status"] == "error");
  CHECK_FALSE(b.contains("prices"));
  CHECK_FALSE(b.contains("evicted"));
  CHECK_FALSE(b.contains("message"));
  CHECK_FALSE(b.contains("fallback"));
  CHECK(b["allocations"][0]["gpus"] == 3);
  CHECK(b["allocations"][0]["config_gpus"] == 4);
  CHECK_FALSE(b["allocations"][0].contains("placement"));
  CHECK(b["unallocated"] == json::array());
}

TEST_CASE("request.exit_code") {
  CHECK(sia::exit_code(sia::RoundStatus::optimal) == 0);
  CHECK(sia::exit_code(sia::RoundStatus::feasible) == 0);
  CHECK(sia::exit_code(sia::RoundStatus::infeasible) == 3);
  CHECK(sia::exit_code(sia::RoundStatus::error) == 3);
}

TEST_CASE("request.parse.model") {
  // The `model` form (issue 3): Pollux's parameters per GPU type; goodputs and batch sizes come
  // from the model.
  const sia::Request r = sia::parse_request(data("model.json"), "model.json");
  REQUIRE(r.jobs.size() == 3);
  const sia::JobSpec& imagenet = r.jobs[0];
  CHECK(imagenet.has_goodput());
  CHECK(imagenet.has_batch_size());
  CHECK(goodput(r, 0, 2, 1, 8) > goodput(r, 0, 2, 1, 1));  // scales on a100
  CHECK(goodput(r, 0, 0, 1, 1) > 0.0);                     // t4 bootstrapped from its seed model
  const sia::BatchChoice b = imagenet.batch_size(r.cluster.types[2], sia::ConfigurationSpec{2, 1, 8});
  CHECK(b.global_batch > 0);
  CHECK(b.local_batch >= 32);
  const sia::JobSpec& bert = r.jobs[1];
  CHECK(bert.kind() == sia::JobKind::strong_scaling);
  CHECK(bert.batch_size(r.cluster.types[1], sia::ConfigurationSpec{1, 1, 4}).global_batch == 256);  // fixed batch
  CHECK_FALSE(r.jobs[2].has_batch_size());

  // Errors inside the model name the field and the source.
  json j = json::parse(data("model.json"));
  j["jobs"][0]["model"]["colour"] = 1;
  CHECK_REJECTS(j, "jobs[0].model.colour: unknown field");
  j = json::parse(data("model.json"));
  j["jobs"][1]["model"]["perf"]["v100"] = j["jobs"][1]["model"]["perf"]["rtx"];
  CHECK_REJECTS(j, "jobs[1].model.perf.v100: unknown GPU type");
  j = json::parse(data("model.json"));
  j["jobs"][1]["model"]["perf"]["rtx"]["alpha_c"] = "fast";
  CHECK_REJECTS(j, "jobs[1].model.perf.rtx.alpha_c: must be a number");
  j = json::parse(data("model.json"));
  j["jobs"][0]["model"] = 3;
  CHECK_REJECTS(j, "jobs[0].model: must be an object");
}

TEST_CASE("request.parse.lost_allocation") {
  // A 2-node job one of whose nodes is down has lost its configuration: it waits like a new job
  // (and, being non-preemptible, must get GPUs again) instead of the request being rejected.
  const sia::Request r = sia::parse_request(data("failed_node.json"), "failed_node.json");
  CHECK_FALSE(r.jobs.at(0).current().has_value());
  CHECK_FALSE(r.jobs.at(0).preemptible());
  REQUIRE(r.jobs.at(1).current().has_value());  // on a healthy node: kept
  CHECK(r.jobs.at(1).current()->placement.at(0).gpu_ids == std::vector<int>{3});
  // Without the failure, the configuration exists and the job keeps it.
  json j = json::parse(data("failed_node.json"));
  j["cluster"].erase("down");
  CHECK(sia::parse_request(j.dump(), "").jobs.at(0).current().has_value());
}

// Issue 14 §6: a UTF-8 byte-order mark is accepted; a huge duplicate key is not echoed in full.
TEST_CASE("request: a UTF-8 BOM is accepted and a 4 MB duplicate key is shortened in the message") {
  const std::string body =
      R"({"cluster": {"gpu_types": [{"name": "A", "nodes": 1, "gpus_per_node": 2}]},
          "jobs": [{"id": "j", "goodput": [{"gpu_type": "A", "gpus": 1, "value": 1}]}]})";
  const sia::Request r = sia::parse_request("\xEF\xBB\xBF" + body, "bom.json");
  CHECK(r.jobs.size() == 1);
  const std::string key(4u << 20, 'k');
  const std::string dup = R"({")" + key + R"(": 1, ")" + key + R"(": 2})";
  try {
    (void)sia::parse_request(dup, "dup.json");
    FAIL("a duplicate key was accepted");
  } catch (const sia::InvalidArgument& e) {
    const std::string what = e.what();
    CHECK(what.find("duplicate key") != std::string::npos);
    CHECK(what.find("4194304 bytes") != std::string::npos);
    CHECK(what.size() < 400);
  }
}

// Issue 14 §6: the JSON library's "last read" token of a malformed request is shortened (a 1 MB
// unterminated string was echoed in full).
TEST_CASE("request: a huge malformed token is not echoed in full") {
  const std::string text = "{\"cluster\": \"" + std::string(1'000'000, 'x') + "\n\"}";
  try {
    (void)sia::parse_request(text, "big.json");
    FAIL("malformed JSON was accepted");
  } catch (const sia::InvalidArgument& e) {
    const std::string what = e.what();
    CHECK(what.find("big.json:") == 0);
    CHECK(what.find("malformed JSON") != std::string::npos);
    CHECK(what.size() < 400);
  }
}
