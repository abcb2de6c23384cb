// Current configurations and allocations lost to failed nodes (core rules sia_allocate relies on).
#include <doctest/doctest.h>

#include <sia/configuration_set.hpp>
#include <sia/job_spec.hpp>
#include <sia/lost_allocations.hpp>

#include <vector>

namespace {
sia::JobSpec running(const char* id, int type, int gpus, sia::JobKind kind = sia::JobKind::adaptive, int count = 1) {
  sia::JobSpec j(id);
  j.kind(kind).min_gpus(count).max_gpus(kind == sia::JobKind::rigid ? count : 64);
  sia::CurrentAllocation cur;
  cur.type = type;
  cur.gpus = gpus;
  j.current(cur);
  return j;
}
}  // namespace

TEST_CASE("core.lost_allocations.current_configuration") {
  sia::ClusterSpec c;
  c.types.emplace_back("A", 2, 8);  // configurations 1, 2, 4, 8, 16
  const auto set = sia::make_configuration_set(c);
  const auto idx = sia::current_configuration(set, running("a", 0, 16));
  REQUIRE(idx.has_value());
  CHECK(set.configs[static_cast<std::size_t>(*idx)].gpus == 16);
  CHECK_FALSE(sia::current_configuration(set, running("b", 0, 6)).has_value());
  // A rigid job of 6 GPUs reports its count: it occupies its footprint, the 8-GPU configuration.
  const auto rigid = sia::current_configuration(set, running("r", 0, 6, sia::JobKind::rigid, 6));
  REQUIRE(rigid.has_value());
  CHECK(set.configs[static_cast<std::size_t>(*rigid)].gpus == 8);
  CHECK_FALSE(sia::current_configuration(set, sia::JobSpec("idle")).has_value());
}

TEST_CASE("core.lost_allocations.forget_after_node_failure") {
  sia::ClusterSpec c;
  c.types.emplace_back("A", 2, 8);
  std::vector<sia::JobSpec> jobs = {running("two-nodes", 0, 16), running("one-node", 0, 8), sia::JobSpec("waiting")};
  // Nothing down: nothing forgotten.
  CHECK(sia::forget_lost_allocations(c, jobs).empty());
  c.down = {{1}};  // node 1 of type A fails: 16 GPUs no longer exist, 8 still do
  const auto forgotten = sia::forget_lost_allocations(c, jobs);
  CHECK(forgotten == std::vector<std::string>{"two-nodes"});
  CHECK_FALSE(jobs[0].current().has_value());
  CHECK(jobs[1].current().has_value());
  CHECK_FALSE(jobs[2].current().has_value());
}
