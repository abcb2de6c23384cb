// The round's formulation hands the native backend the layout of the model it wrote
// (Formulation::layout, milp/model_layout.hpp), and the backend takes its choice rows and each
// column's capacity entries from it instead of reading them from every entry
// (native::recognise_checked(m, layout)). Checked here: the promise holds on every model formulate()
// writes (read back entry by entry), the Shape read with the layout is the Shape read without it,
// bit for bit, and a layout that does not describe the model, or a model the reading in layout
// would not take, is read as without one.
#include <doctest/doctest.h>

#include <sia/configuration_set.hpp>
#include <sia/error.hpp>
#include <sia/milp/factory.hpp>
#include <sia/round.hpp>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/formulation.hpp"
#include "core/problem.hpp"
#include "milp/native/problem.hpp"
#include "round_instances.hpp"
#include "unit/native_shape_checks.hpp"

namespace {

using sia::test::check_same_shape;
using sia::test::ShapeCheck;

// ModelLayout's promise, read back from the model's entries.
bool layout_holds(const sia::MilpModel& m, const sia::detail::ModelLayout& l) {
  if (!l.describes(m)) return false;
  const auto& e = m.entries;
  std::size_t q = 0;
  for (std::size_t r = 0; r < l.choice.size(); ++r) {
    const auto& [row, first, count] = l.choice[r];
    if (row != static_cast<int>(r)) return false;
    for (int j = first; j < first + count; ++j, ++q)
      if (q >= e.size() || e[q].row != row || e[q].col != j || e[q].value != 1.0) return false;
  }
  const auto R = static_cast<int>(l.choice.size());
  std::vector<char> row_used(static_cast<std::size_t>(m.num_rows()), 0);
  for (std::size_t j = 0; j < l.num_cols; ++j) {
    if (static_cast<std::size_t>(l.cap_begin[j]) != q) return false;
    int last_row = -1;
    for (; q < static_cast<std::size_t>(l.cap_begin[j + 1]); ++q) {
      if (q >= e.size() || e[q].col != static_cast<int>(j) || e[q].row < R || e[q].row <= last_row ||
          e[q].row >= m.num_rows() || !(e[q].value > 0.0) || !std::isfinite(e[q].value))
        return false;
      last_row = e[q].row;
      row_used[static_cast<std::size_t>(e[q].row)] = 1;
    }
  }
  if (q != e.size()) return false;
  for (int i = R; i < m.num_rows(); ++i)
    if (!row_used[static_cast<std::size_t>(i)]) return false;
  // The columns: integer, the pinned ones' bounds [1, 1] (listed ascending), every other's [0, 1].
  std::vector<char> pinned(l.num_cols, 0);
  for (std::size_t k = 0; k < l.pinned.size(); ++k) {
    const int j = l.pinned[k];
    if (j < 0 || static_cast<std::size_t>(j) >= l.num_cols || (k > 0 && j <= l.pinned[k - 1])) return false;
    pinned[static_cast<std::size_t>(j)] = 1;
  }
  for (std::size_t j = 0; j < l.num_cols; ++j)
    if (!m.is_integer[j] || m.col_lower[j] != (pinned[j] ? 1.0 : 0.0) || m.col_upper[j] != 1.0) return false;
  return true;
}

void same_round(const sia::RoundResult& a, const sia::RoundResult& b) {
  CHECK(a.status == b.status);
  CHECK(a.fallback == b.fallback);
  CHECK(std::bit_cast<std::uint64_t>(a.objective) == std::bit_cast<std::uint64_t>(b.objective));
  REQUIRE(a.decisions.size() == b.decisions.size());
  for (std::size_t i = 0; i < a.decisions.size(); ++i) {
    CHECK(a.decisions[i].config == b.decisions[i].config);
    CHECK(a.decisions[i].gpus == b.decisions[i].gpus);
  }
}

sia::detail::native::Shape read_with(const sia::MilpModel& m, const sia::detail::ModelLayout& l) {
  auto shape = sia::detail::native::recognise_checked(m, &l);
  // Without an entry index (a caller that checks the answer itself): the same Shape, the choice
  // rows' members read from the layout's runs where it is taken, and no index kept then.
  const auto lean = sia::detail::native::recognise_checked(m, &l, 1, false);
  check_same_shape(lean, shape, ShapeCheck::and_why);
  CHECK(lean.in_layout == shape.in_layout);
  CHECK(lean.from_layout == shape.from_layout);
  CHECK((lean.from_layout ? lean.entries.empty() : lean.entries.cap_begin == shape.entries.cap_begin));
  // With a start (a column in twelve at 1, one in twenty unknown): the same Shape, and each group's
  // start item native::start_item()'s, found as the items are written.
  const auto words = (static_cast<std::size_t>(m.num_cols()) + 63) / 64;
  std::vector<std::uint64_t> ones(words, 0), unknown(words, 0);
  std::mt19937 rng(static_cast<unsigned>(m.num_cols()));
  for (std::size_t j = 0; j < static_cast<std::size_t>(m.num_cols()); ++j) {
    const auto r = rng() % 240;
    if (r < 20) ones[j >> 6] |= std::uint64_t{1} << (j & 63);
    if (r >= 228) unknown[j >> 6] |= std::uint64_t{1} << (j & 63);
  }
  const sia::detail::native::StartView start{ones.data(), unknown.data()};
  for (const bool index : {false, true})
    for (const int threads : {1, 3}) {
      const auto started = sia::detail::native::recognise_checked(m, &l, threads, index, &start);
      check_same_shape(started, shape, ShapeCheck::and_why);
      if (!started.round_shaped || started.infeasible || !started.in_layout) continue;
      const auto& p = started.problem;
      REQUIRE(started.start_items.size() == static_cast<std::size_t>(p.num_groups()));
      int differ = 0;
      for (int g = 0; g < p.num_groups(); ++g)
        differ += started.start_items[static_cast<std::size_t>(g)] != sia::detail::native::start_item(p, start, g);
      CHECK(differ == 0);
    }
  return shape;
}

}  // namespace

TEST_CASE("native.model_layout.the_same_shape_as_the_reading") {
  int models = 0, known = 0, taken = 0, pins = 0;
  for (const std::string& family : sia::bench::instance_families())
    for (int gpus : {64, 2048})
      for (unsigned seed = 1; seed <= 2; ++seed)
        for (double p : {-1.0, 0.5}) {
          CAPTURE(family);
          CAPTURE(gpus);
          CAPTURE(seed);
          CAPTURE(p);
          const auto in = sia::bench::make_instance(family, gpus, seed);
          sia::RoundOptions o;
          o.p = p;
          const auto pb = sia::detail::build_problem(sia::make_configuration_set(in.cluster), in.cluster, in.jobs, o);
          const auto f = sia::detail::formulate(pb, pb.required);
          if (f.cols.empty()) continue;
          ++models;
          REQUIRE(f.layout_known);  // (no tenants here)
          ++known;
          const auto layout = f.layout();
          CHECK(layout_holds(f.milp, layout));
          pins += f.pinned_cols.empty() ? 0 : 1;
          const auto with = read_with(f.milp, layout);
          check_same_shape(with, sia::detail::native::recognise_checked(f.milp), ShapeCheck::whole_reading);
          taken += with.from_layout ? 1 : 0;
          // Every job forced (a choice row for every job with a column), and none.
          sia::detail::Requirements forced = pb.required;
          for (std::size_t i = 0; i < forced.forced.size(); ++i) forced.forced[i] = forced.pinned[i] ? 0 : 1;
          const auto ff = sia::detail::formulate(pb, forced);
          REQUIRE(ff.layout_known);
          CHECK(layout_holds(ff.milp, ff.layout()));
          check_same_shape(read_with(ff.milp, ff.layout()), sia::detail::native::recognise_checked(ff.milp),
                           ShapeCheck::whole_reading);
        }
  CHECK(models >= 60);
  CHECK(known == models);
  CHECK(taken >= models * 3 / 4);  // (the others: a capacity row of 1 GPU, which could be a choice row)
  CHECK(pins > 0);
  MESSAGE("models ", models, ", layout taken on ", taken, ", with pinned columns ", pins);
}

TEST_CASE("native.model_layout.not_taken_where_it_does_not_hold") {
  const auto in = sia::bench::make_instance("tables", 2048, 3);
  sia::RoundOptions o;
  const auto pb = sia::detail::build_problem(sia::make_configuration_set(in.cluster), in.cluster, in.jobs, o);
  const auto f = sia::detail::formulate(pb, pb.required);
  REQUIRE(f.layout_known);
  REQUIRE(f.milp.num_rows() > static_cast<int>(f.choice.size()));
  const auto layout = f.layout();

  // Another model (a copy: another address), and the model with an entry more: not described.
  sia::MilpModel copy = f.milp;
  CHECK_FALSE(layout.describes(copy));
  check_same_shape(read_with(copy, layout), sia::detail::native::recognise_checked(copy), ShapeCheck::whole_reading);
  sia::MilpModel grown = f.milp;
  auto grown_layout = layout;  // (the same layout, of the copy)
  grown_layout.model = &grown;
  CHECK(grown_layout.describes(grown));
  grown.add_entry(static_cast<int>(f.choice.size()), 0, 1.0);
  CHECK_FALSE(grown_layout.describes(grown));
  check_same_shape(read_with(grown, grown_layout), sia::detail::native::recognise_checked(grown),
                   ShapeCheck::whole_reading);

  // Rows the reading in layout would not take as the layout says: a capacity row of capacity 1
  // (it could be a choice row), a capacity row without an upper bound (redundant), a choice row
  // whose bounds are not a choice row's. The layout is given for the model as changed (the same
  // address and sizes): the reading must still be the one without it.
  auto changed = [&](auto&& change) {
    sia::MilpModel x = f.milp;
    change(x);
    auto lx = layout;  // (the same layout, of the changed copy)
    lx.model = &x;
    REQUIRE(lx.describes(x));
    const auto with = read_with(x, lx);
    check_same_shape(with, sia::detail::native::recognise_checked(x), ShapeCheck::whole_reading);
    if (!with.infeasible) check_same_shape(with, sia::detail::native::recognise_by_rows(x), ShapeCheck::knapsack);
    return with.from_layout;
  };
  const auto first_cap = f.choice.size();
  CHECK(changed([](sia::MilpModel&) {}));
  CHECK_FALSE(changed([&](sia::MilpModel& x) { x.row_upper[first_cap] = 1.0; }));
  CHECK_FALSE(changed([&](sia::MilpModel& x) { x.row_upper[first_cap] = sia::MilpModel::inf; }));
  CHECK(changed([&](sia::MilpModel& x) { x.row_upper.back() = 0.0; }));    // (pins may no longer fit)
  CHECK(changed([&](sia::MilpModel& x) { x.row_lower[0] = 1.0; }));        // forced: still a choice row
  CHECK_FALSE(changed([&](sia::MilpModel& x) { x.row_upper[0] = 2.0; }));  // not a choice row
  CHECK(changed([&](sia::MilpModel& x) { x.obj[2] = -x.obj[2]; }));
  // (The columns' bounds are the writer's promise: a model whose bounds differ is not described.)
  // Pins and columns fixed to 0 inside choice rows and out (a pinned job's column is out), read
  // without a layout: the groups' pass in layout against the general reading by rows.
  for (unsigned seed = 1; seed <= 20; ++seed) {
    sia::MilpModel x = f.milp;
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> col(0, x.num_cols() - 1);
    for (unsigned q = 0; q < seed % 4; ++q) x.col_lower[static_cast<std::size_t>(col(rng))] = 1.0;
    for (unsigned q = 0; q < seed % 5; ++q) x.col_upper[static_cast<std::size_t>(col(rng))] = 0.0;
    const auto shape = sia::detail::native::recognise_checked(x);
    CHECK(shape.in_layout);
    if (!shape.infeasible) check_same_shape(shape, sia::detail::native::recognise_by_rows(x), ShapeCheck::knapsack);
  }

  // With tenants the tenant rows' entries come row by row after the capacity rows': no layout.
  auto jobs = in.jobs;
  for (std::size_t i = 0; i < jobs.size(); i += 2) jobs[i].tenant("a");
  sia::RoundOptions ot;
  ot.tenants = {sia::TenantSpec{"a", 64, {}, 0}};
  const auto pt = sia::detail::build_problem(sia::make_configuration_set(in.cluster), in.cluster, jobs, ot);
  const auto ft = sia::detail::formulate(pt, pt.required);
  CHECK_FALSE(ft.layout_known);
}

TEST_CASE("native.model_layout.partial_models") {
  // formulate(pb, req, true) leaves out what the layout promises (Formulation::partial) when the
  // layout is known; the reading with reading_layout() gives the Shape of the whole model, and
  // makes the model whole when it reads more than the layout (then, and only then); complete()
  // writes the whole model formulate(pb, req) writes, bit for bit.
  auto same_model = [](const sia::MilpModel& a, const sia::MilpModel& b) {
    CHECK(a.sense == b.sense);
    CHECK(std::bit_cast<std::uint64_t>(a.obj_offset) == std::bit_cast<std::uint64_t>(b.obj_offset));
    CHECK(a.obj == b.obj);
    CHECK(a.col_lower == b.col_lower);
    CHECK(a.col_upper == b.col_upper);
    CHECK(a.is_integer == b.is_integer);
    CHECK(a.row_lower == b.row_lower);
    CHECK(a.row_upper == b.row_upper);
    REQUIRE(a.entries.size() == b.entries.size());
    bool entries = true;
    for (std::size_t q = 0; q < a.entries.size(); ++q)
      entries = entries && a.entries[q].row == b.entries[q].row && a.entries[q].col == b.entries[q].col &&
                a.entries[q].value == b.entries[q].value;
    CHECK(entries);
  };
  int partial = 0, read_partial = 0;
  for (const std::string& family : sia::bench::instance_families())
    for (int gpus : {64, 2048}) {
      CAPTURE(family);
      CAPTURE(gpus);
      const auto in = sia::bench::make_instance(family, gpus, 2);
      sia::RoundOptions o;
      const auto pb = sia::detail::build_problem(sia::make_configuration_set(in.cluster), in.cluster, in.jobs, o);
      const auto whole = sia::detail::formulate(pb, pb.required);
      CHECK_FALSE(whole.partial);
      if (whole.cols.empty()) continue;
      for (const bool index : {true, false}) {
        auto f = sia::detail::formulate(pb, pb.required, true);
        CHECK(f.partial == f.layout_known);
        partial += f.partial ? 1 : 0;
        const auto l = f.reading_layout();
        CHECK(static_cast<bool>(l.complete) == f.partial);
        const auto shape = sia::detail::native::recognise_checked(f.milp, &l, 1, index);
        const auto whole_layout = whole.layout();
        check_same_shape(shape, sia::detail::native::recognise_checked(whole.milp, &whole_layout, 1, index),
                         ShapeCheck::whole_reading);
        check_same_shape(shape, sia::detail::native::recognise_checked(whole.milp), ShapeCheck::and_why);
#ifdef NDEBUG
        // (Builds with assertions check the reading against the whole model: made whole first. So
        // does a reading that keeps an entry index.)
        CHECK(f.partial == (!index && shape.from_layout && l.describes(f.milp)));
#endif
        read_partial += f.partial ? 1 : 0;
        f.complete();
        CHECK_FALSE(f.partial);
        same_model(f.milp, whole.milp);
        CHECK(layout_holds(f.milp, f.layout()));
      }
    }
  CHECK(partial > 0);
  MESSAGE("partial models ", partial, ", still partial after the reading ", read_partial);
  // A model the reading from the layout does not take (a capacity row of 1 GPU, which could be a
  // choice row): made whole before it is read otherwise, the same Shape as the whole model's.
  const auto in = sia::bench::make_instance("tables", 2048, 3);
  const auto pb = sia::detail::build_problem(sia::make_configuration_set(in.cluster), in.cluster, in.jobs, {});
  auto whole = sia::detail::formulate(pb, pb.required);
  auto f = sia::detail::formulate(pb, pb.required, true);
  REQUIRE(f.partial);
  const auto first_cap = f.choice.size();
  whole.milp.row_upper[first_cap] = 1.0;
  f.milp.row_upper[first_cap] = 1.0;
  const auto l = f.reading_layout();
  const auto shape = sia::detail::native::recognise_checked(f.milp, &l, 1, false);
  CHECK_FALSE(shape.from_layout);
  CHECK_FALSE(f.partial);
  check_same_shape(shape, sia::detail::native::recognise_checked(whole.milp), ShapeCheck::whole_reading);
  same_model(f.milp, whole.milp);
}

TEST_CASE("native.model_layout.rounds_alike") {
  // Whole rounds, cold and warm: the round hands the layout to the native backend it is given; the
  // same rounds as with a native backend behind a wrapper, which the round cannot hand it to (the
  // wrapper is named "native", so the round treats it alike otherwise).
  class Wrapped final : public sia::MilpSolver {
    [[nodiscard]] std::string_view do_name() const noexcept override { return "native"; }
    sia::MilpResult do_solve(const sia::MilpModel& m, const sia::MilpParams& params) override {
      return inner_->solve(m, params);
    }
    std::unique_ptr<sia::MilpSolver> inner_ = sia::make_milp_solver("native");
  };
  for (const std::string& family : sia::bench::instance_families())
    for (int gpus : {64, 512}) {
      CAPTURE(family);
      CAPTURE(gpus);
      const auto in = sia::bench::make_instance(family, gpus, 5);
      sia::RoundOptions o;
      o.place = false;
      o.time_limit = std::chrono::milliseconds(5000);
      Wrapped wrapped;
      auto native = sia::make_milp_solver("native");
      const auto a = sia::run_round(in.cluster, in.jobs, o, *native);
      const auto b = sia::run_round(in.cluster, in.jobs, o, wrapped);
      if (a.status != sia::RoundStatus::optimal || b.status != sia::RoundStatus::optimal) continue;  // (limits: timing)
      same_round(a, b);
      if (!a.warm_start || !b.warm_start) continue;
      std::vector<std::optional<sia::ConfigurationSpec>> given;
      for (const auto& d : a.decisions) given.push_back(d.config);
      const auto next = sia::bench::next_round(in, given, 0.05, 55, gpus);
      sia::RoundOptions wa = o, wb = o;
      wa.warm_start = a.warm_start;
      wb.warm_start = b.warm_start;
      same_round(sia::run_round(next.cluster, next.jobs, wa, *native),
                 sia::run_round(next.cluster, next.jobs, wb, wrapped));
    }
}

TEST_CASE("native.model_layout.costs_checked_without_an_index") {
  // Read from the layout without an index (the choice rows' runs read in place), a cost that is not
  // finite anywhere (a choice row's column, a pinned or a lone column, a row's first or last) still
  // throws validate()'s exception, on one thread and on several.
  for (const char* family : {"tables", "pinned"}) {
    CAPTURE(family);
    const auto in = sia::bench::make_instance(family, 2048, 3);
    sia::RoundOptions o;
    const auto pb = sia::detail::build_problem(sia::make_configuration_set(in.cluster), in.cluster, in.jobs, o);
    auto f = sia::detail::formulate(pb, pb.required);
    REQUIRE(f.layout_known);
    const auto layout = f.layout();
    sia::MilpModel& m = f.milp;
    std::vector<int> cols = {0, m.num_cols() / 2, m.num_cols() - 1};
    for (const int j : f.pinned_cols) cols.push_back(j);
    for (const auto& [row, first, count] : f.choice) {
      cols.push_back(first);
      cols.push_back(first + count - 1);
      if (cols.size() > 40) break;
    }
    int checked = 0;
    for (const int j : cols)
      for (const double bad : {std::nan(""), sia::MilpModel::inf, -sia::MilpModel::inf}) {
        CAPTURE(j);
        const double keep = m.obj[static_cast<std::size_t>(j)];
        m.obj[static_cast<std::size_t>(j)] = bad;
        std::string expected;
        try {
          m.validate();
        } catch (const sia::InvalidArgument& e) {
          expected = e.what();
        }
        REQUIRE_FALSE(expected.empty());
        for (int threads : {1, 3}) {
          std::string got;
          try {
            (void)sia::detail::native::recognise_checked(m, &layout, threads, false);
          } catch (const sia::InvalidArgument& e) {
            got = e.what();
          }
          CHECK(got == expected);
        }
        m.obj[static_cast<std::size_t>(j)] = keep;
        ++checked;
      }
    CHECK(checked >= 9);
    // And the model as written reads as with an index.
    check_same_shape(sia::detail::native::recognise_checked(m, &layout, 1, false),
                     sia::detail::native::recognise_checked(m, &layout), ShapeCheck::and_why);
  }
}
