// The optional members of a Job (job_members.hpp): one concept each, the compile-time report
// describe_job_type(), and declared members (`sia_members`). The misspelt-member error itself is a
// compile-fail test (tests/static/compile_fail/, ctest static.compile_fail.*).
#include <doctest/doctest.h>

#include <sia/generic_round.hpp>
#include <sia/gpu_type_spec.hpp>
#include <sia/job_members.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "static/archetypes.hpp"

namespace {

using namespace sia;
using namespace sia::archetypes;

// The archetypes: the minimal one provides nothing optional, the full one all it defines.
constexpr JobTypeDescription minimal = describe_job_type<JobArchetype<GpuTypeArchetype>, GpuTypeArchetype>();
constexpr JobTypeDescription full = describe_job_type<FullJobArchetype<GpuTypeArchetype>, GpuTypeArchetype>();
static_assert(minimal.members == std::array<bool, job_member_count>{});
static_assert(full.provides(JobMember::preemptible) && full.provides(JobMember::age_s) &&
              full.provides(JobMember::restarts) && full.provides(JobMember::restart_cost_s) &&
              full.provides(JobMember::pipeline_size) && full.provides(JobMember::max_gpus_ever) &&
              full.provides(JobMember::current) && full.provides(JobMember::batch_size));
static_assert(!full.provides(JobMember::pipeline_sizes) && !full.provides(JobMember::max_pipelines_ever) &&
              !full.provides(JobMember::gpu_limit) && !full.provides(JobMember::weight) &&
              !full.provides(JobMember::tenant));
// sia's own JobSpec provides every member the round reads from it.
static_assert(HasPreemptible<JobSpec> && HasCurrentAllocation<JobSpec> && HasMaxGpusEver<JobSpec> &&
              HasRestarts<JobSpec> && HasAge<JobSpec> && HasWeight<JobSpec> && HasTenant<JobSpec>);

// A near miss: `restart()` and a `current()` returning the wrong type are not the optional members.
struct Misspelt {
  std::string_view id() const { return "m"; }
  int min_gpus() const { return 1; }
  int max_gpus() const { return 1; }
  JobKind kind() const { return JobKind::adaptive; }
  double goodput(const GpuTypeSpec&, const ConfigurationSpec&) const { return 1.0; }
  int restart() const { return 3; }
  int current() const { return 0; }
};
static_assert(Job<Misspelt, GpuTypeSpec, ConfigurationSpec>);  // still a job: the defaults apply silently
static_assert(!HasRestarts<Misspelt> && !HasCurrentAllocation<Misspelt>);
static_assert(!DeclaresJobMembers<Misspelt> && ProvidesDeclaredMembers<Misspelt, GpuTypeSpec>);

// The same job declaring what it means to provide, spelt right.
struct Declared : Misspelt {
  using sia_members = JobMembers<JobMember::restarts, JobMember::preemptible, JobMember::weight>;
  int restarts() const { return 3; }
  bool preemptible() const { return false; }
  double weight() const { return 2.0; }
};
static_assert(DeclaresJobMembers<Declared>);
static_assert(declares<Declared>(JobMember::restarts) && !declares<Declared>(JobMember::current));
static_assert(ProvidesDeclaredMembers<Declared, GpuTypeSpec>);
static_assert(detail::check_declared_members<Declared, GpuTypeSpec>());
// Declared but misspelt: the concept says so (the round's static_assert names it: compile_fail/).
struct DeclaredMisspelt : Misspelt {
  using sia_members = JobMembers<JobMember::restarts>;
};
static_assert(!ProvidesDeclaredMembers<DeclaredMisspelt, GpuTypeSpec>);

}  // namespace

TEST_CASE("static.job_members.report") {
  const std::string text = describe_job_type<Declared, GpuTypeSpec>().to_string();
  CHECK(text.find("  restarts() -> int: provided\n") != std::string::npos);
  CHECK(text.find("  preemptible() -> bool: provided\n") != std::string::npos);
  CHECK(text.find("  age_s() -> double: absent (default: 0)\n") != std::string::npos);
  CHECK(text.find("  weight() -> double: provided\n") != std::string::npos);
  CHECK(text.find("  tenant() -> std::string_view: absent (default: none)\n") != std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') == static_cast<std::ptrdiff_t>(job_member_count));
}

TEST_CASE("static.job_members.declared_members_are_used") {
  // The round reads the declared members: a non-preemptible job with restarts.
  const std::vector<GpuTypeSpec> types{GpuTypeSpec("A", 1, 1)};
  const std::vector<Declared> jobs(1);
  const RoundResult r = run_round(types, jobs, RoundOptions{});
  REQUIRE(r.decisions.size() == 1);
  CHECK(r.decisions[0].gpus == 1);
}
