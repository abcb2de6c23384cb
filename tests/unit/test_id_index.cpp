// The round's index of job ids (core/id_index.hpp): against std::unordered_map on random ids with
// duplicates, growth past the reserved size (probe chains in a half-full table), and the empty id.
#include <doctest/doctest.h>

#include <cstddef>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/id_index.hpp"

using sia::detail::IdIndex;

TEST_CASE("round.id_index.same_answers_as_a_map") {
  std::mt19937_64 rng(7);
  for (const std::size_t reserved : {std::size_t{0}, std::size_t{5}, std::size_t{400}}) {
    std::vector<std::string> ids;
    for (int k = 0; k < 1000; ++k) ids.push_back("job-" + std::to_string(rng() % 700));  // many repeats
    ids.emplace_back();                                                                  // the empty id
    ids.emplace_back();
    IdIndex index(reserved);
    std::unordered_map<std::string, std::size_t> first;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const auto [it, added] = first.emplace(ids[i], i);
      const std::size_t got = index.insert(ids[i], i);
      CHECK(got == (added ? IdIndex::npos : it->second));
    }
    CHECK(index.size() == first.size());
    for (const auto& [id, at] : first) CHECK(index.find(id) == at);
    CHECK(index.find("job-700") == IdIndex::npos);
    CHECK(index.find("job") == IdIndex::npos);
  }
  CHECK(IdIndex().find("x") == IdIndex::npos);
}
