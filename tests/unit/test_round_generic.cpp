// The generic round over a scheduler's own types (generic_round.hpp).
#include <doctest/doctest.h>

#include <sia/generic_round.hpp>
#include <sia/goodput_table.hpp>

#include <deque>
#include <list>
#include <map>
#include <string>
#include <vector>

namespace {

struct Pool {  // a scheduler's GPU type: not copyable, so the round must only borrow it
  std::string label;
  int machines;
  int per_machine;
  double speed;
  Pool(std::string l, int m, int p, double s) : label(std::move(l)), machines(m), per_machine(p), speed(s) {}
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  const std::string& name() const { return label; }
  int num_nodes() const { return machines; }
  int gpus_per_node() const { return per_machine; }
};

struct MinimalJob {  // required members only
  std::string name;
  std::map<std::pair<std::string, int>, double> table;
  std::string_view id() const { return name; }
  int min_gpus() const { return 1; }
  int max_gpus() const { return 64; }
  sia::JobKind kind() const { return sia::JobKind::adaptive; }
  double goodput(const Pool& p, const sia::ConfigurationSpec& c) const {
    const auto it = table.find({p.label, c.gpus});
    return it == table.end() ? 0.0 : it->second;
  }
};

struct FullJob : MinimalJob {  // every optional member
  bool can_preempt = true;
  std::optional<sia::CurrentAllocation> holds;
  bool preemptible() const { return can_preempt; }
  double age_s() const { return 1000; }
  int restarts() const { return 0; }
  double restart_cost_s() const { return 30; }
  int pipeline_size() const { return 1; }
  std::optional<int> max_gpus_ever() const { return 2; }
  std::optional<sia::CurrentAllocation> current() const { return holds; }
  sia::BatchChoice batch_size(const Pool& p, const sia::ConfigurationSpec& c) const {
    return {static_cast<long long>(c.gpus * 64 * p.speed), 64, 0};
  }
};

std::map<std::pair<std::string, int>, double> j1() {
  return {{{"A", 1}, 1}, {{"A", 2}, 1}, {{"B", 1}, 2}, {{"B", 2}, 3}, {{"B", 4}, 4}};
}
std::map<std::pair<std::string, int>, double> j2() {
  return {{{"A", 1}, 2}, {{"A", 2}, 4}, {{"B", 1}, 1}, {{"B", 2}, 2}, {{"B", 4}, 3}};
}

}  // namespace

TEST_CASE("round.generic.table1") {
  std::list<Pool> pools;
  pools.emplace_back("A", 1, 2, 1.0);
  pools.emplace_back("B", 1, 4, 2.0);
  const std::vector<MinimalJob> jobs = {{"J1", j1()}, {"J2", j2()}};
  for (double p : {1.0, -0.5}) {
    sia::RoundOptions o;
    o.p = p;
    const auto r = sia::run_round(pools, jobs, o);
    CHECK(r.status == sia::RoundStatus::optimal);
    REQUIRE(r.decisions.size() == 2);
    CHECK(r.decisions[0].job == "J1");
    REQUIRE(r.decisions[0].config);
    CHECK(*r.decisions[0].config == sia::ConfigurationSpec{1, 1, 4});
    REQUIRE(r.decisions[1].config);
    CHECK(*r.decisions[1].config == sia::ConfigurationSpec{0, 1, 2});
    CHECK_FALSE(r.decisions[0].batch);  // MinimalJob has no batch_size
  }
}

TEST_CASE("round.generic.optional_members") {
  std::deque<Pool> pools;
  pools.emplace_back("A", 1, 2, 1.0);
  pools.emplace_back("B", 1, 4, 2.0);
  std::vector<FullJob> jobs(2);
  jobs[0].name = "J1";
  jobs[0].table = j1();
  jobs[1].name = "J2";
  jobs[1].table = j2();
  // J1 is non-preemptible on (1,2,B): it must stay. max_gpus_ever = 2 caps J2 at 4 GPUs anyway.
  jobs[0].can_preempt = false;
  jobs[0].holds = sia::CurrentAllocation{1, 2, 1, {}};
  sia::RoundOptions o;
  o.p = 1.0;
  sia::ClusterState state;
  state.reserved = {0, 1};
  const auto r = sia::run_round(pools, jobs, o, state);
  CHECK(r.status == sia::RoundStatus::optimal);
  REQUIRE(r.decisions[0].config);
  CHECK(*r.decisions[0].config == sia::ConfigurationSpec{1, 1, 2});
  CHECK_FALSE(r.decisions[0].changed);
  REQUIRE(r.decisions[0].batch);
  CHECK(r.decisions[0].batch->global_batch == 2 * 64 * 2);
  REQUIRE(r.decisions[1].config);
  CHECK(*r.decisions[1].config == sia::ConfigurationSpec{0, 1, 2});
  CHECK(r.gpus_used == std::vector<int>{2, 2});
}

TEST_CASE("round.generic.same_as_jobspec") {
  // The generic path and the JobSpec path produce the same decisions and objective.
  std::vector<sia::GpuTypeSpec> types = {{"A", 1, 2}, {"B", 1, 4}};
  sia::GoodputTable t1, t2;
  for (auto& [k, v] : j1()) t1.set(k.first, k.second, v);
  for (auto& [k, v] : j2()) t2.set(k.first, k.second, v);
  std::vector<sia::JobSpec> jobs = {sia::JobSpec("J1").goodput_model(t1), sia::JobSpec("J2").goodput_model(t2)};
  sia::ClusterSpec cluster;
  cluster.types = types;
  const auto a = sia::run_round(types, jobs);
  const auto b = sia::run_round(cluster, jobs);
  CHECK(a.objective == doctest::Approx(b.objective));
  REQUIRE(a.decisions.size() == b.decisions.size());
  for (std::size_t i = 0; i < a.decisions.size(); ++i) CHECK(a.decisions[i].config == b.decisions[i].config);
  CHECK_THROWS_AS((void)sia::run_round(std::vector<sia::GpuTypeSpec>{}, jobs), sia::InvalidArgument);
}
