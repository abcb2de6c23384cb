// Rigid jobs of any count without waste (issue 14 part 7): a rigid job whose count is no
// configuration size is charged its count, not its footprint, on every backend, and every
// allocation that meets the capacity rows is placed.
//
// Brute force: small random clusters with rigid jobs of odd counts beside power-of-two jobs.
// Every allocation the oracle's rows accept (round_oracle.hpp, derived from the contract) is
// checked placeable by an exhaustive search over physical nodes (any count on one node, a
// distributed rigid job as whole nodes plus its remainder elsewhere), and the round's objective
// equals the oracle's optimum over those allocations, on every backend.
#include <doctest/doctest.h>

#include <sia/configuration_set.hpp>
#include <sia/goodput_table.hpp>
#include <sia/milp/factory.hpp>
#include <sia/request.hpp>
#include <sia/round.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "unit/round_oracle.hpp"

namespace {

using namespace sia;
using namespace sia::test;

ClusterSpec cluster_of(std::vector<GpuTypeSpec> types) {
  ClusterSpec c;
  c.types = std::move(types);
  return c;
}

JobSpec rigid(const std::string& id, int n, const std::string& type) {
  GoodputTable t;
  t.set(type, n, 1.0);
  return JobSpec(id).kind(JobKind::rigid).min_gpus(n).max_gpus(n).goodput_model(t);
}

JobSpec fixed(const std::string& id, int n, const std::string& type) {
  GoodputTable t;
  t.set(type, n, 1.0);
  return JobSpec(id).min_gpus(n).max_gpus(n).goodput_model(t);
}

// The physical check, independent of the rows: per node, the GPUs its pieces take. A chosen
// configuration used whole is `nodes` pieces of gpus/nodes on distinct nodes; a rigid job using
// fewer is nodes − 1 whole virtual nodes on distinct nodes plus its remainder on one more node.
// Exhaustive search over node assignments (small instances only).
bool physically_placeable(const ClusterSpec& c, const std::vector<OracleConfig>& chosen) {
  for (int t = 0; t < c.num_types(); ++t) {
    const auto& g = c.types[static_cast<std::size_t>(t)];
    std::vector<int> room;
    for (int n = 0; n < g.num_nodes(); ++n)
      if (!c.is_down(t, n)) room.push_back(g.gpus_per_node());
    long long reserved = c.reserved_gpus(t);
    // Pieces grouped by job: a job's pieces go to distinct nodes.
    std::vector<std::vector<int>> jobs;
    for (const auto& x : chosen) {
      if (x.type != t) continue;
      const int per = x.gpus / x.nodes;
      std::vector<int> pieces;
      if (x.used <= 0 || x.used >= x.gpus) {
        pieces.assign(static_cast<std::size_t>(x.nodes), per);
      } else {
        const int whole = x.nodes >= 2 ? x.nodes - 1 : 0;
        pieces.assign(static_cast<std::size_t>(whole), per);
        pieces.push_back(x.used - whole * per);
      }
      jobs.push_back(pieces);
    }
    std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.front() > b.front(); });
    std::function<bool(std::size_t, std::size_t, std::vector<char>&)> rec = [&](std::size_t j, std::size_t k,
                                                                                std::vector<char>& taken) {
      if (j == jobs.size()) {
        long long free = 0;
        for (int r : room) free += r;
        return free >= reserved;
      }
      if (k == jobs[j].size()) {
        std::vector<char> fresh(room.size(), 0);
        return rec(j + 1, 0, fresh);
      }
      const int need = jobs[j][k];
      for (std::size_t n = 0; n < room.size(); ++n) {
        if (taken[n] || room[n] < need) continue;
        room[n] -= need;
        taken[n] = 1;
        const bool ok = rec(j, k + 1, taken);
        taken[n] = 0;
        room[n] += need;
        if (ok) return true;
      }
      return false;
    };
    std::vector<char> taken(room.size(), 0);
    if (!rec(0, 0, taken)) return false;
  }
  return true;
}

// Every job's placement is a valid physical placement of what it uses.
void check_placements(const ClusterSpec& c, const RoundResult& r) {
  std::map<std::tuple<int, int, int>, std::string> owner;
  for (const auto& d : r.decisions) {
    if (!d.config) continue;
    int total = 0;
    for (const auto& sh : d.placement) {
      CHECK_FALSE(c.is_down(d.config->type, sh.node));
      for (int id : sh.gpu_ids) CHECK(owner.emplace(std::tuple{d.config->type, sh.node, id}, d.job).second);
      total += sh.gpus;
    }
    CHECK(total == d.gpus);
  }
  CHECK(r.evicted.empty());
}

}  // namespace

TEST_CASE("rigid_count.ten_and_six_on_two_eight_gpu_nodes") {
  // The example: charged their footprints (16 + 8) they could not both run.
  const ClusterSpec c = cluster_of({GpuTypeSpec("T", 2, 8)});
  const std::vector<JobSpec> jobs{rigid("ten", 10, "T"), rigid("six", 6, "T")};
  for (const auto& backend : available_milp_solvers()) {
    CAPTURE(backend);
    RoundOptions o;
    o.backend = backend;
    const auto r = run_round(c, jobs, o);
    CHECK(r.status == RoundStatus::optimal);
    REQUIRE(r.decisions[0].config);
    REQUIRE(r.decisions[1].config);
    CHECK(r.decisions[0].gpus == 10);
    CHECK(*r.decisions[0].config == ConfigurationSpec{0, 2, 16});  // the configuration it spans
    CHECK(r.decisions[1].gpus == 6);
    CHECK(r.gpus_used == std::vector<int>{16});
    check_placements(c, r);
  }
}

TEST_CASE("rigid_count.six_leaves_room_for_two") {
  // A rigid 6-GPU job on one 8-GPU node is charged 6: a 2-GPU job fits beside it; a 4-GPU job
  // does not (no 4-GPU slot is left on the node), nor does a second rigid 3 + 3.
  const ClusterSpec c = cluster_of({GpuTypeSpec("T", 1, 8)});
  for (const auto& backend : available_milp_solvers()) {
    CAPTURE(backend);
    RoundOptions o;
    o.backend = backend;
    const auto r = run_round(c, std::vector<JobSpec>{rigid("six", 6, "T"), fixed("two", 2, "T")}, o);
    CHECK(r.status == RoundStatus::optimal);
    CHECK(r.decisions[0].config.has_value());
    CHECK(r.decisions[1].config.has_value());
    check_placements(c, r);
    const auto r4 = run_round(c, std::vector<JobSpec>{rigid("six", 6, "T"), fixed("four", 4, "T")}, o);
    CHECK(r4.decisions[0].config.has_value() != r4.decisions[1].config.has_value());
    // Two rigid 3s share the node (two 4-GPU slots) and leave two single GPUs.
    const auto r33 = run_round(
        c, std::vector<JobSpec>{rigid("a", 3, "T"), rigid("b", 3, "T"), fixed("c", 1, "T"), fixed("d", 1, "T")}, o);
    for (const auto& d : r33.decisions) CHECK(d.config.has_value());
    check_placements(c, r33);
  }
}

TEST_CASE("rigid_count.six_six_four_is_refused") {
  // Count rows alone would accept 6 + 6 + 4 = 16 on two 8-GPU nodes; no placement exists.
  const ClusterSpec c = cluster_of({GpuTypeSpec("T", 2, 8)});
  const std::vector<JobSpec> jobs{rigid("a", 6, "T"), rigid("b", 6, "T"), fixed("c", 4, "T")};
  for (const auto& backend : available_milp_solvers()) {
    CAPTURE(backend);
    RoundOptions o;
    o.backend = backend;
    const auto r = run_round(c, jobs, o);
    int served = 0;
    for (const auto& d : r.decisions) served += d.config ? 1 : 0;
    CHECK(served == 2);
    check_placements(c, r);
  }
}

TEST_CASE("rigid_count.charges_of_the_rows") {
  // rigid_row_usage: the count in row 1; the slot where nothing of its leftover can serve.
  const ConfigurationSpec slot8{0, 1, 8};
  CHECK(rigid_row_usage(1, slot8, 6, 8) == 6);
  CHECK(rigid_row_usage(2, slot8, 6, 8) == 6);  // the 2 left serve 2-GPU items
  CHECK(rigid_row_usage(4, slot8, 6, 8) == 8);
  CHECK(rigid_row_usage(8, slot8, 6, 8) == 8);
  CHECK(rigid_row_usage(2, slot8, 5, 8) == 6);  // 3 left = 2 + 1: the 1 serves no 2-GPU item
  const ConfigurationSpec two_nodes{0, 2, 16};
  CHECK(rigid_row_usage(1, two_nodes, 10, 8) == 10);  // a whole node and 2
  CHECK(rigid_row_usage(4, two_nodes, 10, 8) == 8);
  CHECK(rigid_row_usage(8, two_nodes, 13, 8) == 16);  // a whole node and 5 in an 8-GPU slot
  CHECK(rigid_row_usage(4, slot8, 8, 8) == 8);        // a count that is the configuration's size
  // The set adds every threshold of a type only when asked (a rigid remainder on it).
  auto set = make_configuration_set(cluster_of({GpuTypeSpec("T", 2, 8), GpuTypeSpec("U", 1, 6)}));
  CHECK(set.rows.size() == 3);  // T: h = 1; U (4 + 2): h = 1, 4
  set.add_all_thresholds(0);
  set.add_all_thresholds(1);
  std::vector<std::pair<int, int>> rows;
  for (const auto& r : set.rows) rows.emplace_back(r.type, r.min_item_gpus);
  CHECK(rows == std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {0, 4}, {0, 8}, {1, 1}, {1, 2}, {1, 4}});
  CHECK(set.rows[5].capacity == 6);  // U, h = 2: both of its virtual nodes
  CHECK(set.rows[6].capacity == 4);
}

TEST_CASE("rigid_count.brute_force") {
  // Random small clusters (node sizes 2..8, up to 3 nodes, failed nodes, reservations), rigid
  // jobs of any count beside jobs of fixed power-of-two counts; every backend.
  std::mt19937 rng(20261125);
  auto uni = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(rng); };
  int rounds = 0, beats_footprint = 0;
  for (int k = 0; k < 300; ++k) {
    CAPTURE(k);
    ClusterSpec c;
    const int ntypes = uni(1, 2);
    for (int t = 0; t < ntypes; ++t) c.types.push_back(GpuTypeSpec("T" + std::to_string(t), uni(1, 3), uni(2, 8)));
    if (uni(0, 4) == 0) c.reserved = {uni(0, 2)};
    if (c.types[0].num_nodes() > 1 && uni(0, 5) == 0) c.down = {{0}};
    std::vector<JobSpec> jobs;
    const int njobs = uni(2, 5);
    for (int i = 0; i < njobs; ++i) {
      const std::string type = "T" + std::to_string(uni(0, ntypes - 1));
      GoodputTable t;
      const double v = 1.0 + uni(0, 8) * 0.25;
      if (uni(0, 2) > 0) {
        const int n = uni(1, 13);
        for (int tt = 0; tt < ntypes; ++tt) t.set("T" + std::to_string(tt), n, v + tt);
        jobs.push_back(JobSpec("r" + std::to_string(i)).kind(JobKind::rigid).min_gpus(n).max_gpus(n).goodput_model(t));
      } else {
        const int n = 1 << uni(0, 3);
        t.set(type, n, v);
        jobs.push_back(JobSpec("f" + std::to_string(i)).min_gpus(n).max_gpus(n).goodput_model(t));
      }
    }
    RoundOptions base;
    base.p = uni(0, 1) ? -0.5 : 0.5;
    const OracleProblem pb = oracle_problem(c, jobs, base);
    // Every allocation the rows accept is physically placeable.
    const std::size_t n = pb.entries.size();
    std::vector<OracleConfig> chosen;
    std::function<void(std::size_t)> all = [&](std::size_t i) {
      if (i == n) return;
      all(i + 1);
      for (const auto& e : pb.entries[i]) {
        chosen.push_back(pb.configs[static_cast<std::size_t>(e.config)]);
        chosen.back().used = e.used;
        if (oracle_fits(c, chosen)) {
          CHECK(physically_placeable(c, chosen));
          all(i + 1);
        }
        chosen.pop_back();
      }
    };
    all(0);
    const auto best = oracle_search(c, pb, true);
    REQUIRE(best);
    // The footprint rule's optimum (every job charged its whole configuration) is never better.
    OracleProblem fp = pb;
    for (auto& es : fp.entries)
      for (auto& e : es) e.used = 0;
    const auto old = oracle_search(c, fp, true);
    REQUIRE(old);
    CHECK((base.p > 0 ? *best >= *old - 1e-9 : *best <= *old + 1e-9));
    if (std::abs(*best - *old) > 1e-9) ++beats_footprint;
    std::vector<std::vector<std::string>> decisions;
    for (const auto& backend : available_milp_solvers()) {
      CAPTURE(backend);
      RoundOptions o = base;
      o.backend = backend;
      const auto r = run_round(c, jobs, o);
      CHECK(r.status == RoundStatus::optimal);
      CHECK(r.objective == doctest::Approx(*best).epsilon(1e-9));
      check_placements(c, r);
      std::vector<OracleConfig> got;
      std::vector<std::string> d;
      for (const auto& x : r.decisions) {
        if (x.config) got.push_back({x.config->type, x.config->nodes, x.config->gpus, x.gpus});
        d.push_back(x.config ? std::to_string(x.config->type) + "/" + std::to_string(x.gpus) : "-");
      }
      CHECK(oracle_fits(c, got));
      decisions.push_back(d);
      ++rounds;
    }
    for (const auto& d : decisions) CHECK(d == decisions.front());  // identical on every backend
  }
  CHECK(beats_footprint > 0);
  MESSAGE(rounds << " rounds; " << beats_footprint << " of 300 instances better than the footprint rule");
}

TEST_CASE("rigid_count.only_needed_thresholds") {
  // 6 in an 8-GPU slot frees 2: its charge grows from 6 (h = 2) to 8 (h = 4) -> row 4 only.
  CHECK(rigid_thresholds(ConfigurationSpec{0, 1, 8}, 6, 8) == 4u);
  CHECK(rigid_thresholds(ConfigurationSpec{0, 1, 8}, 5, 8) == 6u);    // frees 2 + 1: rows 2 and 4
  CHECK(rigid_thresholds(ConfigurationSpec{0, 2, 16}, 10, 8) == 0u);  // 8 + 2: a power-of-two remainder
  CHECK(rigid_thresholds(ConfigurationSpec{0, 2, 16}, 13, 8) == 6u);  // 8 + 5
  CHECK(rigid_thresholds(ConfigurationSpec{0, 1, 8}, 8, 8) == 0u);
  // A round with a rigid 6 on 8-GPU nodes: its type gets the h = 4 row; the charge there is 8.
  const ClusterSpec c = cluster_of({GpuTypeSpec("T", 2, 8)});
  for (const auto& backend : available_milp_solvers()) {
    CAPTURE(backend);
    RoundOptions o;
    o.backend = backend;
    // 6 + 6 + 2 + 2 fit (two 8-GPU slots, each with 2 free); a third 2 does not.
    const auto r = run_round(
        c, std::vector<JobSpec>{rigid("a", 6, "T"), rigid("b", 6, "T"), fixed("c", 2, "T"), fixed("d", 2, "T")}, o);
    for (const auto& d : r.decisions) CHECK(d.config.has_value());
    check_placements(c, r);
  }
}

TEST_CASE("rigid_count.json_form") {
  // The same example through the JSON request and decision (sia_allocate's form), every backend.
  for (const auto& backend : available_milp_solvers()) {
    CAPTURE(backend);
    const nlohmann::json in = {{"cluster", {{"gpu_types", {{{"name", "T"}, {"nodes", 2}, {"gpus_per_node", 8}}}}}},
                               {"policy", {{"backend", backend}}},
                               {"jobs",
                                {{{"id", "ten"},
                                  {"kind", "rigid"},
                                  {"min_gpus", 10},
                                  {"max_gpus", 10},
                                  {"goodput", {{{"gpu_type", "T"}, {"gpus", 10}, {"value", 1}}}}},
                                 {{"id", "six"},
                                  {"kind", "rigid"},
                                  {"min_gpus", 6},
                                  {"max_gpus", 6},
                                  {"goodput", {{{"gpu_type", "T"}, {"gpus", 6}, {"value", 1}}}}}}}};
    const Request req = parse_request(in.dump(), "rigid.json");
    const RoundResult r = run_round(req.cluster, req.jobs, req.options);
    const auto out = nlohmann::json::parse(decision_to_json(req, r));
    CHECK(out["status"] == "optimal");
    REQUIRE(out["allocations"].size() == 2);
    CHECK(out["allocations"][0]["job"] == "ten");
    CHECK(out["allocations"][0]["gpus"] == 10);
    CHECK(out["allocations"][0]["config_gpus"] == 16);
    CHECK(out["allocations"][1]["gpus"] == 6);
    CHECK(out["allocations"][1]["config_gpus"] == 8);
    CHECK((!out.contains("unallocated") || out["unallocated"].empty()));
  }
}
