// A test backend that keeps a copy of every model it is asked to solve, then solves it with the
// native backend (shared by the native reading's tests: test_native_engine.cpp,
// test_native_reading_halves.cpp). Register it under a name of the test's own.
#pragma once

#include <sia/milp/factory.hpp>
#include <sia/milp/solver.hpp>

#include <memory>
#include <string_view>
#include <vector>

namespace sia::test {

class CapturingSolver final : public sia::MilpSolver {
 public:
  /// `into` must outlive every solver the registered factory makes (the registry is the process's).
  explicit CapturingSolver(std::vector<sia::MilpModel>* into) : into_(into), inner_(sia::make_milp_solver("native")) {}

 private:
  std::string_view do_name() const noexcept override { return "test-capture"; }
  sia::MilpResult do_solve(const sia::MilpModel& m, const sia::MilpParams& p) override {
    into_->push_back(m);
    return inner_->solve(m, p);
  }
  std::vector<sia::MilpModel>* into_;
  std::unique_ptr<sia::MilpSolver> inner_;
};

}  // namespace sia::test
