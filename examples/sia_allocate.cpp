// sia_allocate: one Sia scheduling round as JSON (product.md §5).
//
//   sia_allocate [request.json|-] [--backend NAME] [--time-limit-ms N] [--pretty]
//
// Reads the request from the file (standard input when absent or "-"), runs the round and prints
// the decision on standard output. Exit status (<sia/exit_code.hpp>, the same in every sia program):
// 0 optimal or feasible; 2 the request was rejected (the reason, naming the source, line, column and
// field, on standard error); 3 no backend could solve it (status "error" or "infeasible": the
// decision with its fallback allocation is still printed); 1 internal error.
#include <sia/error.hpp>
#include <sia/exit_code.hpp>
#include <sia/milp/factory.hpp>
#include <sia/request.hpp>
#include <sia/round.hpp>

#include <chrono>
#include <cstddef>
#include <exception>
#include <iostream>
#include <optional>
#include <string>

#include "program_cli.hpp"

namespace {

constexpr int exit_rejected = sia::to_int(sia::ExitCode::bad_input);
constexpr int exit_internal = sia::to_int(sia::ExitCode::internal_error);

std::string backend_list() {
  std::string s;
  for (const auto& n : sia::available_milp_solvers()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"One Sia scheduling round as JSON: reads a request (product.md section 5) and prints the decision.",
               "sia_allocate"};
  std::string input = "-";
  std::optional<std::string> backend;
  std::optional<long long> time_limit_ms;
  bool pretty = false;
  app.add_option("request", input, "Request file; '-' or absent reads standard input");
  app.add_option("--backend", backend, "MILP backend, overriding policy.backend (available: " + backend_list() + ")");
  app.add_option("--time-limit-ms", time_limit_ms, "Solver time limit in ms, overriding policy.time_limit_ms")
      ->check(CLI::Range(0LL, 2147483647LL));
  app.add_flag("--pretty", pretty, "Indent the decision JSON");
  std::size_t max_bytes = sia::RequestLimits::max_bytes;
  app.add_option("--max-request-bytes", max_bytes,
                 "Reject a request larger than this, checked while reading (default 128 MiB)")
      ->check(CLI::PositiveNumber);
  sia::programs::add_common_options(app, "sia_allocate");
  if (const auto code = sia::programs::parse(app, "sia_allocate", argc, argv)) return *code;

  sia::Request request;
  try {
    request = sia::load_request(input, max_bytes);
    if (backend) {
      if (!sia::has_milp_solver(*backend)) {
        std::cerr << "sia_allocate: --backend: unknown MILP backend '" << *backend << "' (available: " << backend_list()
                  << ", default)\n";
        return exit_rejected;
      }
      request.options.backend = *backend;
    }
    if (time_limit_ms) request.options.time_limit = std::chrono::milliseconds(*time_limit_ms);
  } catch (const std::exception& e) {  // InvalidArgument naming the field: 2; out of memory: 1
    return sia::programs::report("sia_allocate", e);
  }

  try {
    const sia::RoundResult result = sia::run_round(request.cluster, request.jobs, request.options);
    std::cout << sia::decision_to_json(request, result, pretty) << '\n' << std::flush;
    if (!std::cout) {
      std::cerr << "sia_allocate: cannot write the decision\n";
      return exit_internal;
    }
    const int code = sia::exit_code(result.status);
    if (code != 0)
      std::cerr << "sia_allocate: round status " << sia::to_string(result.status)
                << (result.message.empty() ? "" : ": " + result.message) << '\n';
    return code;
  } catch (const sia::InvalidArgument& e) {  // checks only the round can make (e.g. after --backend)
    std::cerr << "sia_allocate: " << (input == "-" ? "<stdin>" : input) << ": " << e.what() << '\n';
    return exit_rejected;
  } catch (const std::exception& e) {  // BackendUnavailable: 2; SolverFailure: 3; a bug, out of memory: 1
    return sia::programs::report("sia_allocate", e);
  }
}
