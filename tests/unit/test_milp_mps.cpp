// MPS reader/writer, and the CBC regression ILPs of ../shared/data/cbc-regressions on every backend.
#include <doctest/doctest.h>

#include <sia/build_config.hpp>
#include <sia/error.hpp>
#include <sia/milp/factory.hpp>
#include <sia/milp/mps.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>

#include "unit/milp_test_support.hpp"

using namespace sia;

namespace {
MilpModel parse(const std::string& text, MpsFormat format = MpsFormat::free) {
  std::istringstream in(text);
  return parse_mps(in, "test.mps", format);
}

std::string error_of(const std::string& text, MpsFormat format = MpsFormat::free) {
  try {
    (void)parse(text, format);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "no error";
}

void check_same(const MilpModel& a, const MilpModel& b) {
  REQUIRE(a.num_cols() == b.num_cols());
  REQUIRE(a.num_rows() == b.num_rows());
  CHECK(a.sense == b.sense);
  CHECK(a.obj_offset == b.obj_offset);
  CHECK(a.obj == b.obj);
  CHECK(a.col_lower == b.col_lower);
  CHECK(a.col_upper == b.col_upper);
  CHECK(a.is_integer == b.is_integer);
  CHECK(a.row_lower == b.row_lower);
  CHECK(a.row_upper == b.row_upper);
  // Compare matrices densely (entry order and duplicates may differ).
  std::vector<double> da(static_cast<std::size_t>(a.num_rows() * a.num_cols()), 0.0), db(da);
  for (auto& e : a.entries) da[static_cast<std::size_t>(e.row * a.num_cols() + e.col)] += e.value;
  for (auto& e : b.entries) db[static_cast<std::size_t>(e.row * b.num_cols() + e.col)] += e.value;
  CHECK(da == db);
}

const char* kSmall = R"(* a comment
NAME          small
OBJSENSE
    MAX
ROWS
 N  profit
 L  cap
 G  need
 E  link
 N  spare
 L  band
COLUMNS
    MARKER                 'MARKER'                 'INTORG'
    x  profit  3   cap  2
    x  link    1   spare 7
    y  profit  2   cap  1
    y  need    1
    MARKER                 'MARKER'                 'INTEND'
    z  profit  -1  link  -1
    z  band  1
RHS
    RHS  cap  10   need  1
    RHS  profit  -4.5
    RHS  band 4
RANGES
    RNG  band  3   link  2
BOUNDS
 UP BND x 4
 BV BND y
 LO BND z -2.5
 UP BND z 8
ENDATA
)";
}  // namespace

TEST_CASE("milp.mps.parse_free") {
  const auto m = parse(kSmall);
  CHECK(m.sense == MilpSense::maximize);
  REQUIRE(m.num_cols() == 3);
  REQUIRE(m.num_rows() == 4);  // the second N row is dropped
  CHECK(m.obj == std::vector<double>{3, 2, -1});
  CHECK(m.obj_offset == 4.5);
  CHECK(m.is_integer == std::vector<char>{1, 1, 0});
  CHECK(m.col_lower == std::vector<double>{0, 0, -2.5});
  CHECK(m.col_upper == std::vector<double>{4, 1, 8});
  CHECK(m.row_lower[0] == -MilpModel::inf);
  CHECK(m.row_upper[0] == 10);
  CHECK(m.row_lower[1] == 1);
  CHECK(m.row_upper[1] == MilpModel::inf);
  CHECK(m.row_lower[2] == 0);  // E row with range +2: [rhs, rhs + 2]
  CHECK(m.row_upper[2] == 2);
  CHECK(m.row_lower[3] == 1);  // L row with range 3: [4 - 3, 4]
  CHECK(m.row_upper[3] == 4);
  CHECK(m.entries.size() == 6);
  CHECK(m.col_names == std::vector<std::string>{"x", "y", "z"});
  CHECK(m.row_names == std::vector<std::string>{"cap", "need", "link", "band"});
}

TEST_CASE("milp.mps.bounds_conventions") {
  const auto m = parse(R"(NAME t
OBJSENSE MIN
ROWS
 N obj
 L r
COLUMNS
 MARKER 'MARKER' 'INTORG'
 a obj 1 r 1
 MARKER 'MARKER' 'INTEND'
 b obj 1 r 1
 c obj 1
 d obj 1
 e obj 1
 f obj 1
 g obj 1
RHS
 r 5
BOUNDS
 UP BND b -3
 FR BND c
 MI BND d
 UP BND d 2
 FX BND e 1.5
 LO BND f 1
 PL BND f
 LI BND g -1
 UI BND g 3
ENDATA
)");
  CHECK(m.sense == MilpSense::minimize);
  CHECK(m.is_integer == std::vector<char>{1, 0, 0, 0, 0, 0, 1});
  CHECK(m.col_lower[0] == 0);
  CHECK(m.col_upper[0] == MilpModel::inf);  // marker integers: [0, +inf)
  CHECK(m.col_lower[1] == -MilpModel::inf);  // UP < 0 without LO: lower bound -inf
  CHECK(m.col_upper[1] == -3);
  CHECK(m.col_lower[2] == -MilpModel::inf);
  CHECK(m.col_upper[2] == MilpModel::inf);
  CHECK(m.col_lower[3] == -MilpModel::inf);
  CHECK(m.col_upper[3] == 2);
  CHECK(m.col_lower[4] == 1.5);
  CHECK(m.col_upper[4] == 1.5);
  CHECK(m.col_lower[5] == 1);
  CHECK(m.col_upper[5] == MilpModel::inf);
  CHECK(m.col_lower[6] == -1);
  CHECK(m.col_upper[6] == 3);
  CHECK(m.row_upper[0] == 5);  // RHS without a set name
}

TEST_CASE("milp.mps.parse_fixed_names_with_spaces") {
  // Fixed format: fields at columns 2-3, 5-12, 15-22, 25-36, 40-47, 50-61.
  const std::string text =
      "NAME          FIXED\n"
      "ROWS\n"
      " N  COST\n"
      " L  LIM 1\n"
      "COLUMNS\n"
      "    X ONE     COST               1.0   LIM 1                2.0\n"
      "    X TWO     COST               3.0   LIM 1                1.0\n"
      "RHS\n"
      "    RHS       LIM 1                4.0\n"
      "BOUNDS\n"
      " UP BND       X ONE              1.5\n"
      "ENDATA\n";
  const auto m = parse(text, MpsFormat::fixed);
  REQUIRE(m.num_cols() == 2);
  CHECK(m.col_names == std::vector<std::string>{"X ONE", "X TWO"});
  CHECK(m.row_names == std::vector<std::string>{"LIM 1"});
  CHECK(m.obj == std::vector<double>{1, 3});
  CHECK(m.row_upper[0] == 4);
  CHECK(m.col_upper[0] == 1.5);
}

TEST_CASE("milp.mps.errors_name_file_and_line") {
  auto err = error_of("NAME x\nROWS\n N obj\n L r\nCOLUMNS\n x obj 1 q 2\nENDATA\n");
  CHECK(err.find("test.mps:6:") != std::string::npos);
  CHECK(err.find("unknown row 'q'") != std::string::npos);
  err = error_of("NAME x\nROWS\n N obj\n L r\nCOLUMNS\n x obj abc\nENDATA\n");
  CHECK(err.find("test.mps:6:") != std::string::npos);
  CHECK(err.find("'abc' is not a number") != std::string::npos);
  err = error_of("NAME x\nROWS\n N obj\n L r\nCOLUMNS\n x obj nan\nENDATA\n");
  CHECK(err.find("NaN") != std::string::npos);
  err = error_of("NAME x\nROWS\n N obj\n X r\nENDATA\n");
  CHECK(err.find("test.mps:4:") != std::string::npos);
  err = error_of("NAME x\nROWS\n N obj\nCOLUMNS\n x obj 1\nBOUNDS\n UP BND y 1\nENDATA\n");
  CHECK(err.find("unknown column 'y'") != std::string::npos);
  err = error_of("NAME x\nROWS\n N obj\nCOLUMNS\n x obj 1\nBOUNDS\n XX BND x 1\nENDATA\n");
  CHECK(err.find("unknown bound type") != std::string::npos);
  err = error_of("NAME x\nROWS\n N obj\nCOLUMNS\n x obj 1\nBOUNDS\n LO BND x 3\n UP BND x 1\nENDATA\n");
  CHECK(err.find("lower bound") != std::string::npos);
  CHECK(error_of("NAME x\nROWS\n N obj\n").find("missing ENDATA") != std::string::npos);
  CHECK(error_of("NAME x\nSOS\nENDATA\n").find("not supported") != std::string::npos);
  CHECK(error_of("NAME x\nFOO\nENDATA\n").find("unknown section") != std::string::npos);
  CHECK(error_of("NAME x\nROWS\n N obj\n L r\n L r\nENDATA\n").find("twice") != std::string::npos);
  CHECK(error_of("NAME x\nOBJSENSE\n SIDEWAYS\nENDATA\n").find("objective sense") != std::string::npos);
  CHECK_THROWS_AS((void)read_mps("/nonexistent/dir/model.mps"), InvalidArgument);
  try {
    (void)read_mps("/nonexistent/dir/model.mps");
  } catch (const InvalidArgument& e) {
    CHECK(std::string(e.what()).find("/nonexistent/dir/model.mps") != std::string::npos);
  }
}

TEST_CASE("milp.mps.write_read_round_trip") {
  const auto a = parse(kSmall);
  std::ostringstream out;
  write_mps(out, a, "small");
  const auto b = parse(out.str());
  check_same(a, b);
  CHECK(b.col_names == a.col_names);
  CHECK(b.row_names == a.row_names);

  // Unnamed model with every kind of bound, a free row, an offset and a minimisation.
  MilpModel m;
  m.sense = MilpSense::minimize;
  m.obj_offset = -2.25;
  m.add_col(0.1, -MilpModel::inf, MilpModel::inf, false);
  m.add_col(1.0 / 3.0, -MilpModel::inf, 4, false);
  m.add_col(-2, 1, MilpModel::inf, true);
  m.add_col(0, -5, -1, true);
  m.add_col(7, 2, 2, false);
  m.add_col(0, 0, 1, true);
  const int r0 = m.add_row(-MilpModel::inf, MilpModel::inf);
  const int r1 = m.add_row(-1, 1);
  const int r2 = m.add_row(3, 3);
  const int r3 = m.add_row(-0.5, MilpModel::inf);
  m.add_entry(r0, 0, 1);
  m.add_entry(r1, 1, 2.5);
  m.add_entry(r2, 2, -1e-7);
  m.add_entry(r3, 3, 123456.789);
  m.add_entry(r3, 0, 1);
  std::ostringstream out2;
  write_mps(out2, m);
  const auto back = parse(out2.str());
  check_same(m, back);

  // Through a file, too.
  const auto path = std::filesystem::temp_directory_path() / "sia_test_milp_roundtrip.mps";
  write_mps(path, m);
  check_same(m, read_mps(path));
  std::filesystem::remove(path);
}

TEST_CASE("milp.mps.random_round_trip_solves_the_same") {
  std::mt19937 rng(4242);
  const auto backends = sia::test::usable_milp_backends();
  if (backends.empty()) return;
  for (int t = 0; t < 10; ++t) {
    MilpModel m;
    m.sense = t % 2 ? MilpSense::maximize : MilpSense::minimize;
    std::uniform_int_distribution<int> c(-5, 9);
    for (int j = 0; j < 6; ++j) m.add_col(c(rng), 0, 1 + t % 3, true);
    for (int i = 0; i < 3; ++i) {
      const int r = m.add_row(-MilpModel::inf, 4 + i);
      for (int j = 0; j < 6; ++j) m.add_entry(r, j, std::abs(c(rng)));
    }
    std::ostringstream out;
    write_mps(out, m);
    const auto back = parse(out.str());
    auto solver = make_milp_solver(backends.front());
    const auto r1 = solver->solve(m), r2 = solver->solve(back);
    REQUIRE(r1.status == MilpStatus::optimal);
    REQUIRE(r2.status == MilpStatus::optimal);
    CHECK(r1.objective == doctest::Approx(r2.objective));
  }
}

// Debian's CBC 2.10.8 aborts (SIGABRT in CLP) on these with its default preprocessing; every backend
// must solve them in-process. Optima from ../shared/data/cbc-regressions/README.md.
TEST_CASE("milp.cbc_regressions.solve_in_process") {
  const std::string dir = SIA_SHARED_DIR "/data/cbc-regressions";
  if (!std::filesystem::exists(dir)) {
    MESSAGE("skipped: " << dir << " is missing");
    return;
  }
  const std::pair<const char*, double> cases[] = {
      {"sia-round-a.mps", -8.16}, {"sia-round-b.mps", -5.20}, {"sia-round-c.mps", -6.60}};
  const auto backends = sia::test::usable_milp_backends();
  for (const auto& [file_name, optimum] : cases) {
    const std::string file = file_name;
    CAPTURE(file);
    const auto model = read_mps(dir + "/" + file);
    CHECK(model.sense == MilpSense::minimize);
    CHECK(model.num_cols() > 100);
    for (const auto& name : backends) {
      CAPTURE(name);
      MilpParams p;
      p.relative_gap = 0.0;
      p.time_limit = std::chrono::milliseconds(30000);  // a safety net only: each takes milliseconds
      const auto r = make_milp_solver(name)->solve(model, p);
      INFO(r.message);
      if (name != "cbc" && name != "glpk" && r.status != MilpStatus::optimal) {
        // These files are about CBC; other backends must only not crash and not claim wrong optima.
        MESSAGE("backend " << name << " on " << file << ": " << to_string(r.status) << " (" << r.message << ")");
        CHECK(r.status != MilpStatus::feasible);
        continue;
      }
      REQUIRE(r.status == MilpStatus::optimal);
      CHECK(model.is_feasible(r.values));
      CHECK(r.objective == doctest::Approx(optimum).epsilon(1e-6));
    }
  }
}
