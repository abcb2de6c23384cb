// Compile-fail test (tests/static/compile_fail.cmake): a job type that declares `restarts` among its
// optional members but spells it `restart` must not compile with the generic round, and the error must
// name the member. Built once with -DSIA_EXPECT_OK (spelt right: must compile) and once without.
#include <sia/generic_round.hpp>

#include <string_view>
#include <vector>

struct MyJob {
  using sia_members = sia::JobMembers<sia::JobMember::restarts>;
  std::string_view id() const { return "j"; }
  int min_gpus() const { return 1; }
  int max_gpus() const { return 1; }
  sia::JobKind kind() const { return sia::JobKind::adaptive; }
  double goodput(const sia::GpuTypeSpec&, const sia::ConfigurationSpec&) const { return 1.0; }
#ifdef SIA_EXPECT_OK
  int restarts() const { return 1; }
#else
  int restart() const { return 1; }  // misspelt
#endif
};

sia::RoundResult f(const std::vector<sia::GpuTypeSpec>& types, const std::vector<MyJob>& jobs) {
  return sia::run_round(types, jobs);
}
