// Goodput matrix arithmetic (product.md §2 steps 1-3), checked by hand.
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/goodput_matrix.hpp>

#include <cmath>
#include <limits>
#include <vector>

using namespace sia;

TEST_CASE("goodput_matrix.normalize_rows") {
  GoodputMatrix g(3, 4);
  g << 2, 4, 0, 8,  //
      0, 0, 0, 0,   //
      5, 10, 20, 0;
  Eigen::VectorXd nmin(3);
  nmin << 1, 1, 4;
  normalize_rows(g, nmin);
  CHECK(g(0, 0) == doctest::Approx(1));
  CHECK(g(0, 1) == doctest::Approx(2));
  CHECK(g(0, 2) == 0);
  CHECK(g(0, 3) == doctest::Approx(4));
  CHECK(g.row(1).isZero());
  CHECK(g(2, 0) == doctest::Approx(4));  // Nmin = 4 at the worst valid configuration
  CHECK(g(2, 1) == doctest::Approx(8));
  CHECK(g(2, 2) == doctest::Approx(16));
  CHECK(g(2, 3) == 0);
}

TEST_CASE("goodput_matrix.restart_factor") {
  // r = max(0, (T - N S)/(T + S)), r = 1 while T < S.
  CHECK(restart_factor(0, 0, 30) == 1.0);
  CHECK(restart_factor(29.9, 5, 30) == 1.0);
  CHECK(restart_factor(90, 1, 30) == doctest::Approx(60.0 / 120.0));
  CHECK(restart_factor(300, 2, 30) == doctest::Approx(240.0 / 330.0));
  CHECK(restart_factor(60, 5, 30) == 0.0);  // clamped
  CHECK(restart_factor(100, 0, 0) == 1.0);
  CHECK(restart_factor(0, 0, 0) == 1.0);  // no NaN from 0/0
}

TEST_CASE("goodput_matrix.apply_restart_factors") {
  GoodputMatrix g(3, 3);
  g << 1, 2, 3,  //
      1, 2, 3,   //
      1, 2, 3;
  std::vector<RestartInput> s = {{1, 90, 1, 30}, {-1, 90, 1, 30}, {2, 60, 5, 30}};
  apply_restart_factors(g, s);
  CHECK(g(0, 0) == doctest::Approx(0.5));
  CHECK(g(0, 1) == doctest::Approx(2));  // current configuration keeps its value
  CHECK(g(0, 2) == doctest::Approx(1.5));
  CHECK(g(1, 2) == doctest::Approx(3));  // no current allocation: no penalty
  CHECK(g(2, 0) == 0);                   // r = 0: only the current configuration stays usable
  CHECK(g(2, 1) == 0);
  CHECK(g(2, 2) == doctest::Approx(3));
}

TEST_CASE("goodput_matrix.utilities") {
  GoodputMatrix g(1, 4);
  g << 1, 4, 0, 2;
  auto u = utility_matrix(g, -0.5);
  CHECK(u(0, 0) == doctest::Approx(1));
  CHECK(u(0, 1) == doctest::Approx(0.5));
  CHECK(u(0, 2) == 0);  // invalid stays 0 (validity is read from G, not u)
  CHECK(u(0, 3) == doctest::Approx(1 / std::sqrt(2.0)));
  auto r = utility_matrix(g, -0.5, true);
  CHECK(r(0, 3) == doctest::Approx(0.71));
  auto p2 = utility_matrix(g, 2.0);
  CHECK(p2(0, 1) == doctest::Approx(16));
  GoodputMatrix tiny(1, 1);
  tiny << 1e-300;
  CHECK(utility_matrix(tiny, -2.0)(0, 0) == max_negative_p_utility);
  GoodputMatrix huge(1, 1);
  huge << 1e200;
  CHECK_THROWS_AS((void)utility_matrix(huge, 3.0), InvalidArgument);
  CHECK_THROWS_AS((void)utility_matrix(g, 0.0), InvalidArgument);
  CHECK_THROWS_AS((void)utility_matrix(g, std::nan("")), InvalidArgument);
}

TEST_CASE("goodput_matrix.check_goodput") {
  const ConfigurationSpec c{0, 1, 2};
  CHECK_NOTHROW(check_goodput(0.0, "j", "A", c));
  CHECK_NOTHROW(check_goodput(3.5, "j", "A", c));
  CHECK_THROWS_WITH_AS(check_goodput(-1.0, "j7", "A", c), doctest::Contains("j7"), InvalidArgument);
  CHECK_THROWS_WITH_AS(check_goodput(std::nan(""), "j", "A", c), doctest::Contains("NaN"), InvalidArgument);
  CHECK_THROWS_WITH_AS(check_goodput(std::numeric_limits<double>::infinity(), "j", "A", c),
                       doctest::Contains("infinite"), InvalidArgument);
}

TEST_CASE("goodput_matrix.sparse_matches_dense") {
  GoodputMatrix d(3, 5);
  d << 2, 4, 0, 8, 1,  //
      0, 0, 0, 0, 0,   //
      5, 10, 20, 0, 7;
  SparseGoodputMatrix s = d.sparseView();
  Eigen::VectorXd nmin(3);
  nmin << 1, 2, 4;
  std::vector<RestartInput> r = {{1, 90, 1, 30}, {-1, 0, 0, 30}, {2, 60, 5, 30}};
  normalize_rows(d, nmin);
  normalize_rows(s, nmin);
  apply_restart_factors(d, r);
  apply_restart_factors(s, r);
  CHECK((GoodputMatrix(s) - d).cwiseAbs().maxCoeff() < 1e-12);
  for (double p : {-0.5, 1.0, 2.0}) {
    const GoodputMatrix ud = utility_matrix(d, p, true);
    const SparseGoodputMatrix us = utility_matrix(s, p, true);
    CHECK((GoodputMatrix(us) - ud).cwiseAbs().maxCoeff() < 1e-12);
  }
  CHECK(round_2_decimals(0.125) == doctest::Approx(0.12));  // ties to even, like numpy.round
  CHECK(round_2_decimals(0.135) == doctest::Approx(0.14));
}
