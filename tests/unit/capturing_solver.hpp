// A test backend that keeps a copy of every model it is asked to solve, then solves it with the
// native backend, and the rounds that hand it models (shared by the native reading's tests:
// test_native_engine.cpp, test_native_reading_halves.cpp). Register it under a name of the test's own.
#pragma once

#include <sia/milp/factory.hpp>
#include <sia/milp/solver.hpp>
#include <sia/round.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "round_instances.hpp"

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

/// A cold round of the bench's `family` instance on `backend` (no placement, no prices), then its
/// warm successor with 5 % of the jobs changed: the two models a round hands its backend.
inline void round_and_warm_successor(const std::string& family, int gpus, unsigned seed, double p,
                                     const std::string& backend, std::chrono::milliseconds limit) {
  auto in = sia::bench::make_instance(family, gpus, seed);
  sia::RoundOptions o;
  o.backend = backend;
  o.p = p;
  o.place = false;
  o.compute_prices = false;
  o.time_limit = limit;
  auto r = sia::run_round(in.cluster, in.jobs, o);
  std::vector<std::optional<sia::ConfigurationSpec>> given;
  for (const auto& d : r.decisions) given.push_back(d.config);
  in = sia::bench::next_round(in, given, 0.05, 9, gpus);
  o.warm_start = r.warm_start;
  (void)sia::run_round(in.cluster, in.jobs, o);
}

}  // namespace sia::test
