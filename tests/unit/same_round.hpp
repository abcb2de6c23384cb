// Rounds compared decision by decision (shared by the tests that give the round's backend another
// way to the same answer: test_answer_check.cpp, test_start_bits.cpp), and the allocation a round
// gave, for the next round.
#pragma once

#include <doctest/doctest.h>

#include <sia/round.hpp>

#include <optional>
#include <vector>

namespace sia::test {

/// Each job's configuration in round `r` (none: not running), as bench::next_round() takes it.
inline std::vector<std::optional<ConfigurationSpec>> given_of(const RoundResult& r) {
  std::vector<std::optional<ConfigurationSpec>> g;
  for (const auto& d : r.decisions) g.push_back(d.config);
  return g;
}

/// The same status, fallback, objective and decisions.
inline void same_round(const RoundResult& a, const RoundResult& b) {
  CHECK(a.status == b.status);
  CHECK(a.fallback == b.fallback);
  CHECK(a.objective == b.objective);
  REQUIRE(a.decisions.size() == b.decisions.size());
  for (std::size_t i = 0; i < a.decisions.size(); ++i) {
    CHECK(a.decisions[i].config == b.decisions[i].config);
    CHECK(a.decisions[i].gpus == b.decisions[i].gpus);
  }
}

}  // namespace sia::test
