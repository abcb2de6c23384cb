// The native reading of a round's groups in two halves side by side (threads > 1): the same Shape
// as one pass in order, on every thread count, also where a half's groups come out of the
// dominance's order or a forced row has nothing to choose.
#include <doctest/doctest.h>

#include <sia/milp/factory.hpp>
#include <sia/round.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "milp/native/problem.hpp"
#include "round_instances.hpp"
#include "unit/capturing_solver.hpp"
#include "unit/native_shape_checks.hpp"

namespace {

using sia::test::CapturingSolver;

std::vector<sia::MilpModel>& kept_models() {
  static std::vector<sia::MilpModel> models;
  return models;
}

// A cold round of `family` and its warm successor, their models kept.
void cold_and_warm(const std::string& family, int gpus, unsigned seed) {
  sia::test::round_and_warm_successor(family, gpus, seed, sia::RoundOptions{}.p, "test-keep-halves",
                                      std::chrono::milliseconds(5000));
}

// The choice rows of a round's model (upper bound 1, every entry 1) that hold no pinned column:
// each row's index and columns.
struct ChoiceRow {
  int row;
  std::vector<int> cols;
};
std::vector<ChoiceRow> choice_rows(const sia::MilpModel& m) {
  const auto nr = static_cast<std::size_t>(m.num_rows());
  std::vector<std::vector<int>> cols(nr);
  std::vector<char> ones(nr, 1);
  for (const auto& e : m.entries) {
    cols[static_cast<std::size_t>(e.row)].push_back(e.col);
    ones[static_cast<std::size_t>(e.row)] &= static_cast<char>(e.value == 1.0);
  }
  std::vector<ChoiceRow> rows;
  for (std::size_t i = 0; i < nr; ++i) {
    const bool pinned = std::any_of(cols[i].begin(), cols[i].end(),
                                    [&](int j) { return m.col_lower[static_cast<std::size_t>(j)] > 0.0; });
    if (ones[i] && m.row_upper[i] == 1.0 && cols[i].size() >= 2 && !pinned)
      rows.push_back({static_cast<int>(i), std::move(cols[i])});
  }
  return rows;
}

// A start for m's columns as bits: about one column in twelve at 1, one in twenty unknown, and
// now and then 64 columns unknown at once (groups none of whose columns the start knows).
struct StartBits {
  std::vector<std::uint64_t> ones, unknown;
};
StartBits random_start(const sia::MilpModel& m, std::mt19937& rng) {
  const auto words = (static_cast<std::size_t>(m.num_cols()) + 63) / 64;
  StartBits s{std::vector<std::uint64_t>(words, 0), std::vector<std::uint64_t>(words, 0)};
  for (std::size_t j = 0; j < static_cast<std::size_t>(m.num_cols()); ++j) {
    const auto r = rng() % 240;
    if (r < 20) s.ones[j >> 6] |= std::uint64_t{1} << (j & 63);
    if (r >= 228) s.unknown[j >> 6] |= std::uint64_t{1} << (j & 63);
  }
  for (auto& w : s.unknown)
    if (rng() % 40 == 0) w = ~std::uint64_t{0};
  return s;
}

void check_every_thread_count(const sia::MilpModel& m) {
  const auto one = sia::detail::native::recognise_checked(m, nullptr, 1);
  for (int threads : {0, 2, 3, 8}) {
    CAPTURE(threads);
    sia::test::check_same_shape(one, sia::detail::native::recognise_checked(m, nullptr, threads),
                                sia::test::ShapeCheck::whole_reading);
  }
  // With a start: the same Shape, and each group's start item as native::start_item() finds it in
  // the items read (of every kind: a group -1, its "none", an item).
  static std::mt19937 rng(31);
  const StartBits bits = random_start(m, rng);
  const sia::detail::native::StartView start{bits.ones.data(), bits.unknown.data()};
  for (int threads : {1, 0, 3}) {
    CAPTURE(threads);
    const auto shape = sia::detail::native::recognise_checked(m, nullptr, threads, true, &start);
    sia::test::check_same_shape(one, shape, sia::test::ShapeCheck::whole_reading);
    if (!one.round_shaped || one.infeasible) continue;
    const auto& p = shape.problem;
    REQUIRE(shape.start_items.size() == static_cast<std::size_t>(p.num_groups()));
    int differ = 0, kinds[3] = {0, 0, 0};
    for (int g = 0; g < p.num_groups(); ++g) {
      const int it = sia::detail::native::start_item(p, start, g);
      differ += shape.start_items[static_cast<std::size_t>(g)] != it ? 1 : 0;
      ++kinds[it < 0 ? 0 : p.column[static_cast<std::size_t>(it)] < 0 ? 1 : 2];
    }
    CHECK(differ == 0);
    CHECK(kinds[0] > 0);
    CHECK(kinds[1] > 0);
    CHECK(kinds[2] > 0);
  }
}

}  // namespace

TEST_CASE("native.reading.halves_side_by_side_same_shape") {
  sia::register_milp_solver("test-keep-halves", [] { return std::make_unique<CapturingSolver>(&kept_models()); });
  auto& models = kept_models();
  models.clear();
  for (const std::string family : {"tables", "helios"}) cold_and_warm(family, 16384, 2);
  REQUIRE(models.size() >= 4);
  std::mt19937 rng(29);
  int split = 0, shuffled = 0, infeasible = 0;
  for (std::size_t k = 0; k < models.size(); ++k) {
    CAPTURE(k);
    const sia::MilpModel& m = models[k];
    const auto rows = choice_rows(m);
    split += rows.size() >= 4096 ? 1 : 0;  // (recognise.cpp's kSplitRows: both halves read)
    check_every_thread_count(m);
    {  // The costs of a third of the choice rows' columns shuffled: groups out of the dominance's order.
      sia::MilpModel x = m;
      for (const auto& [row, c] : rows) {
        if (rng() % 3 != 0) continue;
        std::vector<double> costs;
        for (int j : c) costs.push_back(x.obj[static_cast<std::size_t>(j)]);
        std::shuffle(costs.begin(), costs.end(), rng);
        for (std::size_t q = 0; q < c.size(); ++q) x.obj[static_cast<std::size_t>(c[q])] = costs[q];
        ++shuffled;
      }
      check_every_thread_count(x);
    }
    // A forced row whose columns are all fixed to 0, in the first half, the second, both: the
    // first such row is reported, and what was read before it is the same.
    const std::size_t n = rows.size();
    for (const auto& where : std::vector<std::vector<std::size_t>>{{n / 4}, {3 * n / 4}, {n / 4, 3 * n / 4}, {n - 1}}) {
      sia::MilpModel x = m;
      for (const std::size_t r : where) {
        for (int j : rows[r].cols) x.col_upper[static_cast<std::size_t>(j)] = 0.0;
        x.row_lower[static_cast<std::size_t>(rows[r].row)] = 1.0;
      }
      const auto shape = sia::detail::native::recognise_checked(x, nullptr, 1);
      CHECK(shape.infeasible);
      infeasible += shape.infeasible ? 1 : 0;
      check_every_thread_count(x);
    }
  }
  // Columns outside every choice row (each its own group, read after the choice rows': a single
  // item and a "none"), appended in the layout's order (their capacity entries last, rows
  // ascending): the reading in place, on any thread count, is the general reading by rows.
  int singles_read = 0;
  for (const sia::MilpModel& m : models) {
    sia::MilpModel x = m;
    const int first_cap = static_cast<int>(choice_rows(m).size());
    for (int q = 0; q < 3; ++q) {
      const int j = x.add_col(x.sense == sia::MilpSense::maximize ? 1.5 + q : -1.5 - q, 0.0, 1.0, true);
      for (int r = first_cap; r < x.num_rows(); r += 1 + q) x.add_entry(r, j, 1.0 + q);
    }
    const auto shape = sia::detail::native::recognise(x);
    CHECK(shape.in_layout);
    singles_read += shape.problem.num_groups() > 0 && shape.problem.group_row.back() < 0 ? 1 : 0;
    sia::test::check_same_shape(shape, sia::detail::native::recognise_by_rows(x));
    check_every_thread_count(x);
  }
  CHECK(singles_read == static_cast<int>(models.size()));
  CHECK(split == static_cast<int>(models.size()));
  CHECK(shuffled > 1000);
  CHECK(infeasible == 4 * static_cast<int>(models.size()));
}
