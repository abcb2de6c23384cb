// Conformance of every backend with an exhaustive search of the round problem (product.md §2).
//
// The oracle here re-derives everything from the product contract, independently of
// src/core: configuration shapes, per-job count rules, normalisation, restart factor, utilities,
// and capacity as the placeability condition "for every power-of-two threshold h, the items of
// at least h GPUs fit into the virtual nodes of at least h GPUs" (minus reservations). It then
// enumerates every allocation. Heavier variants: SIA_CONFORMANCE_INSTANCES=<n> (default 300);
// SIA_CONFORMANCE_DUMP=<k> prints instance k.
#include <doctest/doctest.h>

#include <sia/configuration_set.hpp>
#include <sia/goodput_table.hpp>
#include <sia/milp/factory.hpp>
#include <sia/round.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "unit/brute_force_solver.hpp"
#include "unit/fault_solver.hpp"
#include "unit/round_oracle.hpp"
#include "unit/test_env.hpp"

namespace {

using namespace sia;
using namespace sia::test;

// Prints an instance, the oracle's view and the brute-force round (SIA_CONFORMANCE_DUMP=<k>).
void dump(const OracleInstance& in, const OracleProblem& pb, double expected) {
  std::ostringstream out;
  for (const auto& t : in.cluster.types)
    out << "type " << t.name() << " " << t.num_nodes() << "x" << t.gpus_per_node() << "\n";
  for (int r : in.cluster.reserved) out << "reserved " << r << "\n";
  for (const auto& d : in.cluster.down)
    for (int x : d) out << "down " << x << "\n";
  out << "p " << in.options.p << " lambda " << in.options.lambda << " round " << in.options.round_utilities << "\n";
  for (std::size_t i = 0; i < in.jobs.size(); ++i) {
    const auto& j = in.jobs[i];
    out << "job " << j.id() << " kind " << static_cast<int>(j.kind()) << " min " << j.min_gpus() << " max "
        << j.max_gpus() << " P " << j.pipeline_size() << " ever " << (j.max_gpus_ever() ? *j.max_gpus_ever() : -1)
        << " preemptible " << j.preemptible() << " current "
        << (j.current() ? std::to_string(j.current()->type) + "/" + std::to_string(j.current()->gpus) : "-") << " age "
        << j.age_s() << " N " << j.restarts() << " S " << j.restart_cost_s() << " pinned " << pb.pinned[i] << " forced "
        << int(pb.forced[i]) << "\n";
    for (const auto& e : pb.entries[i]) {
      const auto& x = pb.configs[static_cast<std::size_t>(e.config)];
      out << "   (" << x.type << "," << x.nodes << "," << x.gpus << ") u " << e.util << "\n";
    }
  }
  RoundOptions o = in.options;
  o.backend = "bruteforce";
  const auto r = run_round(in.cluster, in.jobs, o);
  for (const auto& d : r.decisions)
    out << "decision " << d.job << " "
        << (d.config ? std::to_string(d.config->type) + "," + std::to_string(d.config->nodes) + "," +
                           std::to_string(d.config->gpus)
                     : "-")
        << "\n";
  out << "expected " << expected << " got " << r.objective << " status " << to_string(r.status) << "\n";
  MESSAGE(out.str());
}

std::vector<std::string> real_backends() {
  std::vector<std::string> out;
  for (const auto& name : available_milp_solvers()) {
    if (name == "bruteforce") continue;
    if (name == "native") {
      MilpModel m;
      m.add_col(1.0, 0.0, 1.0, true);
      if (make_milp_solver(name)->solve(m).status != MilpStatus::optimal) continue;  // still a stub
    }
    out.push_back(name);
  }
  return out;
}

int instance_count() { return static_cast<int>(test::count("SIA_CONFORMANCE_INSTANCES", 300, 100)); }

std::vector<OracleConfig> chosen_of(const RoundResult& r) {
  std::vector<OracleConfig> out;
  for (const auto& d : r.decisions)
    if (d.config) out.push_back({d.config->type, d.config->nodes, d.config->gpus, d.gpus});
  return out;
}

}  // namespace

TEST_CASE("round.conformance.exhaustive") {
  std::mt19937 rng(20231023);
  auto backends = real_backends();
  backends.push_back("bruteforce");
  test::register_brute_force_solver();
  const int count = instance_count();
  int infeasible_cases = 0, pinned_cases = 0, forced_cases = 0;
  for (int k = 0; k < count; ++k) {
    OracleInstance in = oracle_instance(rng, 1, 5, 3);
    CAPTURE(k);
    // Oracle configuration set == library configuration set.
    const auto lib = make_configuration_set(in.cluster).configs;
    const auto ora = oracle_configs(in.cluster);
    REQUIRE(lib.size() == ora.size());
    for (std::size_t c = 0; c < lib.size(); ++c)
      REQUIRE((lib[c].type == ora[c].type && lib[c].nodes == ora[c].nodes && lib[c].gpus == ora[c].gpus));

    const auto pb = settled_oracle_problem(in);
    auto expected = oracle_search(in.cluster, pb, true);
    bool forced_ok = expected.has_value();
    for (std::size_t i = 0; i < pb.forced.size(); ++i) forced_ok &= !(pb.forced[i] && pb.entries[i].empty());
    if (!expected) {
      expected = oracle_search(in.cluster, pb, false);
      ++infeasible_cases;
    }
    REQUIRE(expected);
    if (const char* d = std::getenv("SIA_CONFORMANCE_DUMP"); d && std::atoi(d) == k) dump(in, pb, *expected);
    for (char f : pb.forced) forced_cases += f;
    for (int p : pb.pinned) pinned_cases += p >= 0;

    for (const auto& backend : backends) {
      CAPTURE(backend);
      RoundOptions o = in.options;
      o.backend = backend;
      const auto r = run_round(in.cluster, in.jobs, o);
      CHECK_FALSE(r.fallback);
      CAPTURE(r.message);
      CAPTURE(r.objective);
      CAPTURE(r.best_bound);
      CHECK(r.status == (forced_ok ? RoundStatus::optimal : RoundStatus::infeasible));
      CHECK(r.objective == doctest::Approx(*expected).epsilon(1e-6));
      const auto chosen = chosen_of(r);
      CHECK(oracle_fits(in.cluster, chosen));
      bool no_reservations = true;
      for (int x : in.cluster.reserved) no_reservations &= x == 0;
      if (no_reservations) CHECK(ffd_places(in.cluster, chosen));
      std::vector<int> used(in.cluster.types.size(), 0);
      for (const auto& x : chosen) used[static_cast<std::size_t>(x.type)] += x.used > 0 ? x.used : x.gpus;
      CHECK(used == r.gpus_used);
      // Pins kept; reported objective is the §2 step 4 value of the returned allocation.
      double obj = 0;
      for (std::size_t i = 0; i < in.jobs.size(); ++i) {
        const auto& d = r.decisions[i];
        CHECK(d.job == in.jobs[i].id());
        if (pb.pinned[i] >= 0) {
          REQUIRE(d.config);
          CHECK(d.config->gpus == pb.configs[static_cast<std::size_t>(pb.pinned[i])].gpus);
          CHECK_FALSE(d.changed);
        }
        if (!d.config) {
          obj += in.options.p > 0 ? -in.options.lambda : in.options.lambda;
          continue;
        }
        bool found = false;
        for (const auto& e : pb.entries[i]) {
          const auto& x = pb.configs[static_cast<std::size_t>(e.config)];
          if (x.type == d.config->type && x.gpus == d.config->gpus) {
            obj += e.util;
            found = true;
          }
        }
        CHECK_MESSAGE(found, "job " << d.job << " got a configuration that is not valid for it");
      }
      CHECK(obj == doctest::Approx(r.objective).epsilon(1e-9));
    }
  }
  MESSAGE(count << " instances on " << backends.size() << " backends; " << infeasible_cases
                << " with unmet non-preemptible demand, " << pinned_cases << " pinned and " << forced_cases
                << " forced jobs");
}

TEST_CASE("round.conformance.backends_agree") {
  // Larger instances: every real backend (and, where it is fast enough, the brute force) must
  // reach the same objective.
  const auto backends = real_backends();
  if (backends.size() < 2) {
    MESSAGE("fewer than two real MILP backends available (" << backends.size() << "); nothing to compare");
    return;
  }
  std::mt19937 rng(7);
  const int instances = test::count(40, 12);
  for (int k = 0; k < instances; ++k) {
    OracleInstance in = oracle_instance(rng, 8, 30, 6, true);
    in.options.relative_gap = 1e-7;
    CAPTURE(k);
    std::optional<double> first;
    for (const auto& backend : backends) {
      CAPTURE(backend);
      RoundOptions o = in.options;
      o.backend = backend;
      // The default 10-s wall-clock limit is reached on a machine loaded by other work (seen once at 45 s for
      // the case): a limit that stops a solve is not what this test compares, so give it room.
      o.time_limit = std::chrono::milliseconds(600000);
      const auto r = run_round(in.cluster, in.jobs, o);
      CHECK_FALSE(r.fallback);
      CHECK((r.status == RoundStatus::optimal || r.status == RoundStatus::infeasible));
      CHECK(oracle_fits(in.cluster, chosen_of(r)));
      if (!first)
        first = r.objective;
      else
        CHECK(r.objective == doctest::Approx(*first).epsilon(1e-5));
    }
  }
}

TEST_CASE("round.threads.two_rounds_at_once") {
  // Two rounds on two threads at once, on every backend, must give the single-threaded answers.
  test::register_brute_force_solver();
  auto backends = real_backends();
  backends.push_back("bruteforce");
  std::mt19937 rng(99);
  std::vector<OracleInstance> instances;
  for (int k = 0; k < 6; ++k) instances.push_back(oracle_instance(rng, 3, 5, 3));
  for (const auto& backend : backends) {
    CAPTURE(backend);
    std::vector<double> expected;
    for (auto in : instances) {
      in.options.backend = backend;
      expected.push_back(run_round(in.cluster, in.jobs, in.options).objective);
    }
    std::vector<double> got[2];
    auto work = [&](int who) {
      for (int rep = 0; rep < 5; ++rep)
        for (auto in : instances) {
          in.options.backend = backend;
          got[who].push_back(run_round(in.cluster, in.jobs, in.options).objective);
        }
    };
    std::thread a(work, 0), b(work, 1);
    a.join();
    b.join();
    for (int who = 0; who < 2; ++who) {
      REQUIRE(got[who].size() == 5 * instances.size());
      for (std::size_t i = 0; i < got[who].size(); ++i)
        CHECK(got[who][i] == doctest::Approx(expected[i % instances.size()]).epsilon(1e-9));
    }
  }
}

TEST_CASE("round.fallback.random_instances_stay_valid") {
  // The greedy fallback: never over capacity, pins kept, every configuration valid for its job.
  std::mt19937 rng(4242);
  FaultSolver failing(FaultSolver::Mode::status_error);  // every solve fails
  for (int k = 0; k < 300; ++k) {
    const OracleInstance in = oracle_instance(rng, 1, 6, 3);
    CAPTURE(k);
    const auto pb = oracle_problem(in.cluster, in.jobs, in.options);
    const auto r = run_round(in.cluster, in.jobs, in.options, failing);
    if (r.fallback) {
      CHECK((r.status == RoundStatus::error || r.status == RoundStatus::infeasible));
    } else {
      // No job had a usable configuration: nothing was solved.
      for (const auto& d : r.decisions) CHECK_FALSE(d.config);
    }
    CHECK(oracle_fits(in.cluster, chosen_of(r)));
    for (std::size_t i = 0; i < in.jobs.size(); ++i) {
      const auto& d = r.decisions[i];
      if (pb.pinned[i] >= 0) {
        REQUIRE(d.config);
        CHECK(d.config->gpus == pb.configs[static_cast<std::size_t>(pb.pinned[i])].gpus);
      }
      if (pb.forced[i] && !d.config) CHECK(std::find(r.unmet.begin(), r.unmet.end(), d.job) != r.unmet.end());
      if (!d.config) continue;
      CHECK(std::any_of(pb.entries[i].begin(), pb.entries[i].end(), [&](const OracleEntry& e) {
        const auto& x = pb.configs[static_cast<std::size_t>(e.config)];
        return x.type == d.config->type && x.gpus == d.config->gpus;
      }));
    }
  }
}
