// The built-in backends print nothing (stdout and stderr) unless MilpParams::verbose, and verbose
// output goes to stderr only.
#include <doctest/doctest.h>

#include <sia/build_config.hpp>
#include <sia/milp/factory.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#if defined(__unix__)
#include <fcntl.h>
#include <unistd.h>
#endif

#include "milp/glpk/glpk_testing.hpp"
#include "unit/milp_test_support.hpp"

using namespace sia;

#if defined(__unix__)
namespace {

/// Redirects file descriptors 1 and 2 to temporary files for its lifetime.
class CaptureStdio {
 public:
  CaptureStdio() {
    std::fflush(nullptr);
    std::cout.flush();
    std::cerr.flush();
    for (int k = 0; k < 2; ++k) {
      std::string templ = (std::filesystem::temp_directory_path() / "sia_milp_outXXXXXX").string();
      std::vector<char> buf(templ.begin(), templ.end());
      buf.push_back('\0');
      const int fd = ::mkstemp(buf.data());
      paths_[k] = buf.data();
      saved_[k] = ::dup(k + 1);
      ::dup2(fd, k + 1);
      ::close(fd);
    }
  }
  CaptureStdio(const CaptureStdio&) = delete;
  CaptureStdio& operator=(const CaptureStdio&) = delete;
  ~CaptureStdio() { restore(); }
  /// Restores stdout/stderr and returns what was written to {stdout, stderr}.
  std::pair<std::string, std::string> restore() {
    if (!restored_) {
      std::fflush(nullptr);
      std::cout.flush();
      std::cerr.flush();
      for (int k = 0; k < 2; ++k) {
        ::dup2(saved_[k], k + 1);
        ::close(saved_[k]);
        std::ifstream in(paths_[k]);
        text_[k].assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        std::remove(paths_[k].c_str());
      }
      restored_ = true;
    }
    return {text_[0], text_[1]};
  }

 private:
  std::string paths_[2];
  int saved_[2] = {-1, -1};
  std::string text_[2];
  bool restored_ = false;
};

std::vector<MilpModel> assorted_models() {
  std::vector<MilpModel> out;
  std::mt19937 rng(99);
  std::uniform_int_distribution<int> c(1, 30);
  {  // multiple choice with capacities (cliques, covers)
    MilpModel m;
    const int cap = m.add_row(-MilpModel::inf, 40);
    for (int j = 0; j < 30; ++j) {
      const int r = m.add_row(-MilpModel::inf, 1);
      for (int k = 0; k < 4; ++k) {
        const int col = m.add_col(c(rng), 0, 1, true);
        m.add_entry(r, col, 1);
        m.add_entry(cap, col, c(rng) % 8 + 1);
      }
    }
    out.push_back(m);
  }
  {  // infeasible
    MilpModel m;
    const int r = m.add_row(1, 1);
    m.add_entry(r, m.add_col(1, 0, 3, true), 2);
    out.push_back(m);
  }
  {  // hard equality knapsack (stopped by the time limit)
    MilpModel m;
    for (int i = 0; i < 3; ++i) {
      double sum = 0;
      std::vector<double> a(30);
      for (auto& v : a) sum += (v = c(rng) * 3);
      const int r = m.add_row(std::floor(sum / 2), std::floor(sum / 2));
      for (int j = 0; j < 30; ++j) {
        if (i == 0) m.add_col(0, 0, 1, true);
        m.add_entry(r, j, a[static_cast<std::size_t>(j)]);
      }
    }
    out.push_back(m);
  }
  return out;
}

}  // namespace

TEST_CASE("milp.output.silent_by_default") {
  const auto backends = sia::test::usable_milp_backends();
  const auto models = assorted_models();
  MilpParams p;
  p.time_limit = std::chrono::milliseconds(100);
  std::vector<MilpStatus> statuses;
  CaptureStdio capture;
  for (const auto& name : backends)
    for (const auto& m : models) statuses.push_back(make_milp_solver(name)->solve(m, p).status);
#if SIA_HAS_GLPK
  statuses.push_back(detail::glpk_solve_provoking_error(models[1]).status);  // GLPK's error text is captured
#endif
  const auto [out, err] = capture.restore();
  CHECK(out.empty());
  CHECK(err.empty());
  if (!out.empty()) MESSAGE("stdout: " << out.substr(0, 2000));
  if (!err.empty()) MESSAGE("stderr: " << err.substr(0, 2000));
  for (auto s : statuses) CHECK(s != MilpStatus::unbounded);
}

TEST_CASE("milp.output.verbose_goes_to_stderr") {
  const auto models = assorted_models();
  MilpParams p;
  p.verbose = true;
  p.time_limit = std::chrono::milliseconds(50);
  for (const std::string name : {"cbc", "glpk"}) {
    if (!has_milp_solver(name)) continue;
    CAPTURE(name);
    CaptureStdio capture;
    (void)make_milp_solver(name)->solve(models[0], p);
    const auto [out, err] = capture.restore();
    CHECK(out.empty());
    if (!out.empty()) MESSAGE("stdout: " << out.substr(0, 2000));
    CHECK(!err.empty());
  }
}
#endif
