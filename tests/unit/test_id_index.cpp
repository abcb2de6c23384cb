// The round's index of job ids (core/id_index.hpp): against std::unordered_map on random ids with
// duplicates, growth past the reserved size (probe chains in a half-full table), and the empty id.
#include <doctest/doctest.h>

#include <cstddef>
#include <random>
#include <string>
#include <string_view>
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

// The table under IdIndex and the round cache's index of ids: numbers compared through the caller's
// accessor, hashes given (as the round cache carries them), growth from empty or reserved.
TEST_CASE("round.id_index.table_through_an_accessor") {
  std::mt19937_64 rng(11);
  for (const std::size_t reserved : {std::size_t{0}, std::size_t{3}, std::size_t{2000}}) {
    std::vector<std::string> ids;
    for (int k = 0; k < 1500; ++k) ids.push_back("arrival-" + std::to_string(rng() % 900));
    ids.emplace_back();
    const auto id_of = [&](std::size_t k) { return std::string_view(ids[k]); };
    sia::detail::IdTable table;
    table.reserve(reserved, id_of);
    std::unordered_map<std::string, std::size_t> first;
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const auto [it, added] = first.emplace(ids[k], k);
      CHECK(table.insert(sia::detail::hash_id(ids[k]), k, id_of) == (added ? sia::detail::IdTable::npos : it->second));
    }
    CHECK(table.size() == first.size());
    for (const auto& [id, at] : first) CHECK(table.find(id, sia::detail::hash_id(id), id_of) == at);
    CHECK(table.find("arrival-900", sia::detail::hash_id("arrival-900"), id_of) == sia::detail::IdTable::npos);
  }
  const auto none = [](std::size_t) { return std::string_view(); };
  CHECK(sia::detail::IdTable().find("x", sia::detail::hash_id("x"), none) == sia::detail::IdTable::npos);
}
