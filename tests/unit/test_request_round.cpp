// Requests through a real round: the paper's Table 1 as JSON, on every backend compiled in.
#include <sia/milp/factory.hpp>
#include <sia/request.hpp>
#include <sia/round.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>

namespace {

using nlohmann::json;

sia::Request load(const std::string& name) {
  return sia::load_request(SIA_SOURCE_DIR "/tests/data/allocate/" + name);
}

// J1 -> (1, 4, B) and J2 -> (1, 2, A), as the decision JSON says it.
void check_table1(const sia::Request& req, const std::string& backend) {
  sia::RoundOptions o = req.options;
  o.backend = backend;
  const sia::RoundResult r = sia::run_round(req.cluster, req.jobs, o);
  INFO("backend " << backend << ", p = " << o.p);
  REQUIRE(r.status == sia::RoundStatus::optimal);
  const json d = json::parse(sia::decision_to_json(req, r));
  CHECK(d["status"] == "optimal");
  REQUIRE(d["allocations"].size() == 2);
  CHECK(d["allocations"][0]["job"] == "J1");
  CHECK(d["allocations"][0]["gpu_type"] == "B");
  CHECK(d["allocations"][0]["nodes"] == 1);
  CHECK(d["allocations"][0]["gpus"] == 4);
  CHECK(d["allocations"][1]["job"] == "J2");
  CHECK(d["allocations"][1]["gpu_type"] == "A");
  CHECK(d["allocations"][1]["nodes"] == 1);
  CHECK(d["allocations"][1]["gpus"] == 2);
  CHECK(d["unallocated"] == json::array());
  CHECK(d["objective"].get<double>() == r.objective);
  if (o.p > 0) CHECK(r.objective == doctest::Approx(8.0));  // 4 + 4, nobody left out
  CHECK(sia::exit_code(r.status) == 0);
}

}  // namespace

TEST_CASE("request.round.table1") {
  const sia::Request p1 = load("table1_p1.json");
  const sia::Request pn = load("table1_p_negative.json");
  for (const std::string& backend : sia::available_milp_solvers()) {
    check_table1(p1, backend);
    check_table1(pn, backend);
  }
}

TEST_CASE("request.round.placement_request") {
  // Named nodes, a failed node and current placements go through a real round.
  const sia::Request req = load("placement.json");
  const sia::RoundResult r = sia::run_round(req.cluster, req.jobs, req.options);
  CHECK(sia::exit_code(r.status) == 0);
  const json d = json::parse(sia::decision_to_json(req, r));
  REQUIRE(d["allocations"].size() + d["unallocated"].size() == 3);
  for (const json& a : d["allocations"]) {
    CHECK(a["gpu_type"].is_string());
    if (a.contains("placement"))
      for (const json& s : a["placement"]) CHECK(s["node"] != "A/1");  // A/1 is down
  }
}
