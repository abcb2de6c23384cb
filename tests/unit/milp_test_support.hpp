#pragma once
// Helpers shared by the MILP and round tests: the lists of usable and of real backends and an
// exhaustive-search reference solver for small integer models.
#include <sia/milp/factory.hpp>
#include <sia/milp/model.hpp>
#include <sia/milp/solver.hpp>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace sia::test {

/// Sets an environment variable for one scope and then puts back what was there (the tests of one process run
/// one at a time). For the CBC backend's switches: SIA_CBC_ISOLATION, SIA_CBC_INJECT_FAULT.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;  // NOLINT(concurrency-mt-unsafe): one thread here
    ::setenv(name, value, 1);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// Backends from available_milp_solvers() that actually solve (skips stubs reporting "not implemented"
/// and the deliberately partial backends that tests register under names starting with "test-").
inline std::vector<std::string> usable_milp_backends() {
  std::vector<std::string> out;
  MilpModel probe;
  probe.add_col(1.0, 0.0, 1.0, true);
  for (const auto& name : available_milp_solvers()) {
    if (name.rfind("test-", 0) == 0) continue;
    auto solver = make_milp_solver(name);
    const auto r = solver->solve(probe);
    if (r.status == MilpStatus::error && r.message.find("not implemented") != std::string::npos) continue;
    out.push_back(name);
  }
  return out;
}

/// The library's own backends built in (native, cbc, glpk), in registration order: never the reference,
/// stub or fault-injecting solvers that tests register in the same process.
inline std::vector<std::string> real_milp_backends() {
  std::vector<std::string> out;
  for (const auto& b : available_milp_solvers())
    if (b == "native" || b == "cbc" || b == "glpk") out.push_back(b);
  return out;
}

/// Best objective over all integer points of a model whose columns are all integer with finite
/// bounds (small!). nullopt when infeasible.
inline std::optional<double> brute_force_optimum(const MilpModel& m) {
  const int n = m.num_cols();
  std::vector<double> x(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) x[static_cast<std::size_t>(j)] = m.col_lower[static_cast<std::size_t>(j)];
  std::optional<double> best;
  const bool max = m.sense == MilpSense::maximize;
  while (true) {
    if (m.is_feasible(x, 1e-9)) {
      const double v = m.objective_of(x);
      if (!best || (max ? v > *best : v < *best)) best = v;
    }
    int j = 0;
    for (; j < n; ++j) {
      auto& xj = x[static_cast<std::size_t>(j)];
      if (xj + 1.0 <= m.col_upper[static_cast<std::size_t>(j)] + 1e-9) {
        xj += 1.0;
        break;
      }
      xj = m.col_lower[static_cast<std::size_t>(j)];
    }
    if (j == n) break;
  }
  return best;
}

}  // namespace sia::test
