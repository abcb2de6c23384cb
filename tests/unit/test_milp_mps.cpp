// The CBC regression ILPs of ../shared/data/cbc-regressions on every backend, read with CoinMpsIO.
#include <doctest/doctest.h>

#include <sia/build_config.hpp>
#include <sia/milp/factory.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "unit/milp_test_support.hpp"
#if SIA_HAS_CBC
#include "unit/coin_mps.hpp"
#endif

using namespace sia;

#if SIA_HAS_CBC
TEST_CASE("milp.mps.coin_reader_conventions") {
  // Ranges, bounds, integer markers and the objective constant as the tests' adapter maps them.
  const std::string path = (std::filesystem::temp_directory_path() / "sia_coin_mps_test.mps").string();
  {
    std::ofstream out(path);
    out << "NAME small\nROWS\n N obj\n L cap\n G need\n E link\nCOLUMNS\n"
           "    MARKER 'MARKER' 'INTORG'\n    x obj 3 cap 2\n    x link 1\n    y obj 2 cap 1\n    y need 1\n"
           "    MARKER 'MARKER' 'INTEND'\n    z obj -1 link -1\nRHS\n    RHS cap 10 need 1\n    RHS obj 4.5\n"
           "RANGES\n    RNG link 2\nBOUNDS\n UP BND x 4\n BV BND y\n LO BND z -2.5\n UP BND z 8\nENDATA\n";
  }
  const MilpModel m = test::read_mps_with_coin(path);
  std::remove(path.c_str());
  REQUIRE(m.num_cols() == 3);
  REQUIRE(m.num_rows() == 3);
  CHECK(m.sense == MilpSense::minimize);
  CHECK(m.obj == std::vector<double>{3, 2, -1});
  CHECK(m.obj_offset == doctest::Approx(-4.5));
  CHECK(m.is_integer == std::vector<char>{1, 1, 0});
  CHECK(m.col_upper[0] == 4);
  CHECK(m.col_upper[1] == 1);
  CHECK(m.col_lower[2] == -2.5);
  CHECK(m.row_upper[0] == 10);
  CHECK(m.row_lower[0] == -MilpModel::inf);
  CHECK(m.row_lower[1] == 1);
  CHECK(m.row_lower[2] == 0);  // E row with range 2: [0, 2]
  CHECK(m.row_upper[2] == 2);
  CHECK_NOTHROW(m.validate());
  CHECK_THROWS_AS((void)test::read_mps_with_coin("/nonexistent/file.mps"), InvalidArgument);
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
    const auto model = test::read_mps_with_coin(dir + "/" + file);
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
#else
TEST_CASE("milp.cbc_regressions.solve_in_process") {
  MESSAGE("skipped: the MPS files are read with CoinMpsIO, which comes with CBC (not built)");
}
#endif
