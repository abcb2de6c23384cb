// Placeholder until the native backend (issue 8) lands: reports an error status so the round
// falls back to a valid greedy allocation. Not registered as the default.
#include <sia/milp/solver.hpp>

#include <memory>

#include "milp/backends.hpp"

namespace sia::detail {
namespace {
class NativeSolver final : public MilpSolver {
  std::string_view do_name() const noexcept override { return "native"; }
  MilpResult do_solve(const MilpModel&, const MilpParams&) override {
    MilpResult r;
    r.status = MilpStatus::error;
    r.message = "native backend not implemented yet";
    return r;
  }
};
}  // namespace
std::unique_ptr<MilpSolver> make_native_solver() { return std::make_unique<NativeSolver>(); }
}  // namespace sia::detail
