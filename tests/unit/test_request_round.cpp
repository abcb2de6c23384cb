// Requests through a real round: the paper's Table 1 as JSON, on every backend compiled in.
#include <sia/error.hpp>
#include <sia/milp/factory.hpp>
#include <sia/request.hpp>
#include <sia/round.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nlohmann::json;

sia::Request load(const std::string& name) { return sia::load_request(SIA_SOURCE_DIR "/tests/data/allocate/" + name); }

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

TEST_CASE("request.fuzz.mutations") {
  // Random edits of the example requests: each must either parse or be rejected with
  // InvalidArgument, and a request that parses must run (or be rejected by the round) without
  // any other exception. Cheap enough for every CI run; the sanitizers do the rest.
  std::vector<std::string> corpus;
  for (const char* name : {"table1_p1.json", "placement.json", "bad_goodput_value.json"}) {
    std::ifstream in(std::string(SIA_SOURCE_DIR "/tests/data/allocate/") + name, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    corpus.push_back(s.str());
  }
  std::mt19937 rng(20231023);
  const std::string alphabet = "{}[]\",:0123456789-+.eE tfnul\\/AB\x01\xff";
  int parsed = 0;
  int rejected = 0;
  auto parse_and_run = [&](const std::string& text) {
    sia::Request req;
    try {
      req = sia::parse_request(text, "fuzz");
    } catch (const sia::InvalidArgument&) {
      ++rejected;
      return;
    }
    ++parsed;
    req.options.time_limit = std::chrono::milliseconds(1000);
    try {
      const sia::RoundResult r = sia::run_round(req.cluster, req.jobs, req.options);
      CHECK(json::parse(sia::decision_to_json(req, r)).is_object());
    } catch (const sia::InvalidArgument&) {
      // The round's own checks (e.g. a non-preemptible job whose goodput is 0) may still reject.
    }
  };
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text = corpus[rng() % corpus.size()];
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const std::size_t pos = rng() % text.size();
      switch (rng() % 4) {
        case 0:
          text[pos] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          text.erase(pos, 1 + rng() % 8);
          break;
        case 2:
          text.insert(pos, text.substr(rng() % text.size(), 1 + rng() % 16));
          break;
        default:
          text.resize(pos);
          break;
      }
    }
    parse_and_run(text);
  }
  // Structure-aware edits: replace or delete one value of a valid request.
  const std::vector<json> values = json::parse(
      R"([-1, 0, 1, 2, 3, 4, 8, 16, 1000000000, 0.5, -0.5, "A", "B", "B/0", "A/1", "b-0", "rigid", "hybrid", null,
          true, false, [], {}, {"gpu_type": "B", "gpus": 4}, [{"node": "B/0", "gpus": 2}]])");
  for (int iter = 0; iter < 800; ++iter) {
    json doc = json::parse(corpus[rng() % 2]);
    // Walk down to a random value, then replace or delete it.
    json* parent = nullptr;
    json* node = &doc;
    std::string key;
    std::size_t index = 0;
    while ((node->is_object() || node->is_array()) && !node->empty() && rng() % 5 != 0) {
      parent = node;
      if (node->is_object()) {
        auto it = node->begin();
        std::advance(it, static_cast<long>(rng() % node->size()));
        key = it.key();
        node = &*it;
      } else {
        index = rng() % node->size();
        node = &(*node)[index];
      }
    }
    if (parent != nullptr && rng() % 4 == 0) {
      if (parent->is_object())
        parent->erase(key);
      else
        parent->erase(index);
    } else {
      *node = values[rng() % values.size()];
    }
    parse_and_run(doc.dump());
  }
  MESSAGE("mutated requests: " << parsed << " parsed, " << rejected << " rejected");
  CHECK(parsed > 0);
  CHECK(rejected > 0);
}

TEST_CASE("request.round.model") {
  // Jobs given by goodput models get a batch size with their allocation.
  const sia::Request req = load("model.json");
  const sia::RoundResult r = sia::run_round(req.cluster, req.jobs, req.options);
  REQUIRE(sia::exit_code(r.status) == 0);
  const json d = json::parse(sia::decision_to_json(req, r));
  bool saw_batch = false;
  for (const json& a : d["allocations"]) {
    if (a["job"] == "cifar") CHECK_FALSE(a.contains("batch_size"));
    if (a["job"] == "bert") CHECK(a["batch_size"] == 256);
    if (a.contains("batch_size")) {
      saw_batch = true;
      CHECK(a["batch_size"].get<long long>() > 0);
      CHECK(a["local_batch"].get<int>() > 0);
      CHECK(a["accumulation_steps"].get<int>() >= 0);
    }
  }
  CHECK(saw_batch);
}

TEST_CASE("request.round.failed_node") {
  const sia::Request req = load("failed_node.json");
  const sia::RoundResult r = sia::run_round(req.cluster, req.jobs, req.options);
  REQUIRE(sia::exit_code(r.status) == 0);
  const json d = json::parse(sia::decision_to_json(req, r));
  REQUIRE(d["allocations"].size() == 2);  // the non-preemptible job got GPUs again
  for (const json& a : d["allocations"])
    for (const json& s : a.value("placement", json::array())) CHECK(s["node"] != "A/1");
}
