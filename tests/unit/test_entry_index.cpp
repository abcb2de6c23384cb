// detail::entry_index (warm_start.hpp): the branch-free search the warm start uses to find a job's
// entry of a configuration is Problem::entry_of's binary search.
#include <doctest/doctest.h>

#include <sia/configuration_set.hpp>
#include <sia/round.hpp>

#include <random>
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "core/warm_start.hpp"
#include "round_instances.hpp"

TEST_CASE("warm_start.entry_index_is_entry_of") {
  // Random sorted lists of distinct configurations (0 to 40 entries), every configuration from
  // below the first to beyond the last.
  std::mt19937 rng(29);
  std::size_t found = 0, absent = 0;
  for (int t = 0; t < 3000; ++t) {
    const int n = std::uniform_int_distribution<int>(0, 40)(rng);
    std::vector<sia::detail::Entry> v;
    int config = std::uniform_int_distribution<int>(-3, 5)(rng);
    for (int k = 0; k < n; ++k) {
      config += std::uniform_int_distribution<int>(1, 4)(rng);
      v.push_back({config, k + 1, 0.5});
    }
    for (int c = -6; c <= config + 3; ++c) {
      int expected = -1;
      for (int k = 0; k < n; ++k)
        if (v[static_cast<std::size_t>(k)].config == c) expected = k;
      const int got = sia::detail::entry_index(v, c);
      REQUIRE(got == expected);
      (got >= 0 ? found : absent) += 1;
    }
  }
  CHECK(found > 10000);
  CHECK(absent > 10000);
  // The rounds' own lists: every job's entries against Problem::entry_of.
  sia::RoundOptions options;
  for (const std::string& family : sia::bench::instance_families()) {
    const auto in = sia::bench::make_instance(family, 512, 7);
    const auto pb = sia::detail::build_problem(sia::make_configuration_set(in.cluster), in.cluster, in.jobs, options);
    for (std::size_t i = 0; i < pb.num_jobs(); ++i)
      for (int c = -1; c <= static_cast<int>(pb.set.configs.size()); ++c)
        REQUIRE(sia::detail::entry_index(pb.valid[i], c) == pb.entry_of(i, c));
  }
}
