// The simulator's policy registry: built-in policies by name, options, a policy added from outside.
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/sim/catalogue.hpp>
#include <sia/sim/limits.hpp>
#include <sia/sim/policy.hpp>
#include <sia/sim/simulator.hpp>

#include "unit/fifo_policy.hpp"

#include <algorithm>
#include <string>

using namespace sia::sim;

TEST_CASE("sim.policy_registry.builtin_policies_in_build_order") {
  const auto names = policy_names();
  REQUIRE(names.size() >= 3);
  CHECK(names[0] == "sia");
  CHECK(names[1] == "gavel");
  CHECK(names[2] == "pollux");
  for (const auto& n : {"sia", "gavel", "pollux"}) {
    const auto info = find_policy(n);
    REQUIRE(info.has_value());
    CHECK(!info->description.empty());
    CHECK(!info->options.empty());
    auto p = make_policy(n);
    REQUIRE(p != nullptr);
    CHECK(p->name() == n);
  }
  CHECK_FALSE(find_policy("no-such-policy").has_value());
}

TEST_CASE("sim.policy_registry.options") {
  auto gavel = make_policy("gavel", PolicyOptions{{"interval_s", "120"}});
  CHECK(gavel->default_interval_s() == 120.0);
  auto sia_policy = make_policy("sia", PolicyOptions{{"interval_s", "30"}, {"first_placement", "profiled"}});
  CHECK(sia_policy->default_interval_s() == 30.0);
  CHECK(make_policy("pollux")->heterogeneity_unaware());
  // Errors name the policy, the option and the value.
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const sia::InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string unknown = message([] { (void)make_policy("gavel", PolicyOptions{{"lp_method", "x"}}); });
  CHECK(unknown.find("policy 'gavel'") != std::string::npos);
  CHECK(unknown.find("'lp_method'") != std::string::npos);
  CHECK(unknown.find("interval_s") != std::string::npos);  // lists the declared options
  const std::string bad = message([] { (void)make_policy("gavel", PolicyOptions{{"lp", "barrier?"}}); });
  CHECK(bad.find("option 'lp'") != std::string::npos);
  CHECK(bad.find("barrier?") != std::string::npos);
  CHECK(!message([] { (void)make_policy("pollux", PolicyOptions{{"seed", "-3"}}); }).empty());
  CHECK(!message([] { (void)make_policy("sia", PolicyOptions{{"interval_s", "nan"}}); }).empty());
  CHECK(!message([] { (void)make_policy("sia", PolicyOptions{{"round_utilities", "maybe"}}); }).empty());
  const std::string name = message([] { (void)make_policy("nope"); });
  CHECK(name.find("known: sia, gavel, pollux") != std::string::npos);
}

TEST_CASE("sim.policy_registry.interval_range_is_the_simulators") {
  // Every built-in policy declares and checks the round length simulate() accepts (sim/limits.hpp): a policy
  // that took 1e9 s would only be refused later by the run.
  for (const char* n : {"sia", "gavel", "pollux", "shockwave", "themis"}) {
    CAPTURE(n);
    const auto info = find_policy(n);
    REQUIRE(info.has_value());
    const auto opt = std::find_if(info->options.begin(), info->options.end(),
                                  [](const PolicyOptionInfo& o) { return o.key == "interval_s"; });
    REQUIRE(opt != info->options.end());
    CHECK(opt->help == interval_option_help());
    CHECK(opt->help.find("[0.001, 86400]") != std::string::npos);
    CHECK(make_policy(n, PolicyOptions{{"interval_s", "86400"}})->default_interval_s() == kMaxIntervalS);
    CHECK(make_policy(n, PolicyOptions{{"interval_s", "0.001"}})->default_interval_s() == kMinIntervalS);
    for (const char* bad : {"86400.5", "1e9", "0.0009", "0", "-60", "inf"})
      CHECK_THROWS_AS((void)make_policy(n, PolicyOptions{{"interval_s", bad}}), sia::InvalidArgument);
  }
}

TEST_CASE("sim.policy_registry.a_policy_from_outside") {
  // One file (unit/fifo_policy.hpp) plus one register_policy call make a policy the simulator runs.
  register_policy(sia::test::fifo_policy_info());
  const auto names = policy_names();
  CHECK(std::find(names.begin(), names.end(), "fifo") != names.end());
  CHECK_THROWS_AS(register_policy(PolicyInfo{"", "x", {}, sia::test::fifo_policy_info().make}), sia::InvalidArgument);
  CHECK_THROWS_AS(register_policy(PolicyInfo{"empty", "x", {}, nullptr}), sia::InvalidArgument);

  const auto cluster = cluster_preset("paper-heterogeneous");
  const auto apps = catalogue_applications(cluster);
  auto w = synthetic_philly_workload(3, 6.0, 1.0);
  if (w.jobs.size() > 5) w.jobs.resize(5);
  auto policy = make_policy("fifo", PolicyOptions{{"max_gpus", "8"}});
  const auto r = simulate(cluster, apps, w, *policy);
  CHECK(r.policy == "fifo");
  REQUIRE(r.jobs.size() == w.jobs.size());
  for (const auto& j : r.jobs) CHECK(j.completion_time.has_value());
}
