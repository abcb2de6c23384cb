// The simulator's tenants (sia policy option `tenants`, sim/sia_policy.hpp): parsing, the fixed
// job-to-tenant hash, and a congested simulation in which a tenant's cap holds in every round.
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/sim/cluster.hpp>
#include <sia/sim/policy.hpp>
#include <sia/sim/sia_policy.hpp>
#include <sia/sim/simulator.hpp>
#include <sia/sim/workload.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

using namespace sia;

namespace {

const char* const kProfiles = SIA_SHARED_DIR "/data/sia-artifact/profiles";

bool have_profiles() {
  if (std::filesystem::is_directory(kProfiles)) return true;
  MESSAGE("skipped: " << std::string(kProfiles) << " is missing");
  return false;
}

}  // namespace

TEST_CASE("sim.tenants.parse") {
  const auto t = sim::parse_sim_tenants("a:weight=4,max=16;b:guarantee=8");
  REQUIRE(t.size() == 2);
  CHECK(t[0].spec.name == "a");
  CHECK(t[0].weight == 4.0);
  CHECK(*t[0].spec.max_gpus == 16);
  CHECK(t[1].spec.guaranteed_gpus == 8);
  CHECK(t[1].weight == 1.0);
  CHECK_FALSE(t[1].spec.max_gpus);
  CHECK(sim::parse_sim_tenants("a;b", {"A"}).size() == 2);
  CHECK(sim::parse_sim_tenants("a:max_A=3", {"A", "B"})[0].spec.max_gpus_per_type == std::vector<int>{3, -1});
  for (const char* bad : {"", ":weight=1", "a:weight=0", "a:max=1.5", "a:speed=2", "a:max", "a;a", "a:max_A=1"})
    CHECK_THROWS_WITH_AS((void)sim::parse_sim_tenants(bad), doctest::Contains("tenants"), InvalidArgument);
  CHECK_THROWS_WITH_AS((void)sim::make_policy("sia", sim::PolicyOptions{{"tenants", "a:weight=-1"}}),
                       doctest::Contains("weight must be > 0"), InvalidArgument);
  // The assignment is a fixed function of the name (FNV-1a), spread over the tenants.
  CHECK(sim::tenant_index("cifar10-1", 2) == sim::tenant_index("cifar10-1", 2));
  CHECK(sim::tenant_index("anything", 1) == 0);
  CHECK(sim::tenant_index("", 3) == 14695981039346656037ULL % 3);
  int count[2] = {0, 0};
  for (int i = 0; i < 200; ++i) ++count[sim::tenant_index("job-" + std::to_string(i), 2)];
  CHECK(count[0] > 60);
  CHECK(count[1] > 60);
}

TEST_CASE("sim.tenants.cap_holds_every_round") {
  if (!have_profiles()) return;
  const auto cluster = sim::cluster_preset("paper-heterogeneous");
  const auto w = sim::synthetic_philly_workload(15, 60.0, 0.75);
  const auto apps = sim::load_applications(kProfiles, cluster, {w});
  auto p = sim::make_policy("sia", sim::PolicyOptions{{"tenants", "a:max=12;b:weight=2"}});
  sim::SimOptions so;
  so.keep_round_log = true;
  const auto r = sim::simulate(cluster, apps, w, *p, so);
  int peak_a = 0, peak_total = 0;
  for (const auto& round : r.rounds) {
    int a = 0, total = 0;
    for (const auto& al : round.allocations) {
      total += al.gpus;
      if (sim::tenant_index(al.job, 2) == 0) a += al.gpus;
    }
    CHECK(a <= 12);
    peak_a = std::max(peak_a, a);
    peak_total = std::max(peak_total, total);
  }
  CHECK(peak_a == 12);     // the cap binds under this load
  CHECK(peak_total > 12);  // and tenant b uses the rest
}
