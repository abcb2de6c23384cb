// sia_allocate: one Sia scheduling round as JSON (product.md §5).
//
//   sia_allocate [request.json|-] [--backend NAME] [--time-limit-ms N] [--pretty]
//
// Reads the request from the file (standard input when absent or "-"), runs the round and prints
// the decision on standard output. Exit status: 0 optimal or feasible; 2 the request was rejected
// (the reason, naming the field, on standard error); 3 no backend could solve it (status "error"
// or "infeasible": the decision with its fallback allocation is still printed).
#include <sia/build_config.hpp>
#include <sia/error.hpp>
#include <sia/milp/factory.hpp>
#include <sia/request.hpp>
#include <sia/round.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <exception>
#include <iostream>
#include <optional>
#include <string>

namespace {

constexpr int exit_rejected = 2;
constexpr int exit_unsolved = 3;

std::string backend_list() {
  std::string s;
  for (const auto& n : sia::available_milp_solvers()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "One Sia scheduling round as JSON: reads a request (product.md section 5) and prints the decision.\n"
      "Exit status: 0 optimal/feasible, 2 rejected request, 3 no backend could solve it.",
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
  app.set_version_flag("--version", std::string("sia_allocate ") + SIA_VERSION_STRING);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help/version (code 0) or the usage error
    return code == 0 ? 0 : exit_rejected;
  }

  sia::Request request;
  try {
    request = sia::load_request(input);
    if (backend) {
      if (!sia::has_milp_solver(*backend)) {
        std::cerr << "sia_allocate: --backend: unknown MILP backend '" << *backend << "' (available: " << backend_list()
                  << ", default)\n";
        return exit_rejected;
      }
      request.options.backend = *backend;
    }
    if (time_limit_ms) request.options.time_limit = std::chrono::milliseconds(*time_limit_ms);
  } catch (const std::exception& e) {  // InvalidArgument naming the field; anything else while reading
    std::cerr << "sia_allocate: " << e.what() << '\n';
    return exit_rejected;
  }

  try {
    const sia::RoundResult result = sia::run_round(request.cluster, request.jobs, request.options);
    std::cout << sia::decision_to_json(request, result, pretty) << '\n' << std::flush;
    if (!std::cout) {
      std::cerr << "sia_allocate: cannot write the decision\n";
      return 1;
    }
    const int code = sia::exit_code(result.status);
    if (code != 0)
      std::cerr << "sia_allocate: round status " << sia::to_string(result.status)
                << (result.message.empty() ? "" : ": " + result.message) << '\n';
    return code;
  } catch (const sia::InvalidArgument& e) {  // checks only the round can make (e.g. after --backend)
    std::cerr << "sia_allocate: " << (input == "-" ? "<stdin>" : input) << ": " << e.what() << '\n';
    return exit_rejected;
  } catch (const sia::BackendUnavailable& e) {
    std::cerr << "sia_allocate: " << e.what() << '\n';
    return exit_rejected;
  } catch (const std::exception& e) {
    std::cerr << "sia_allocate: the round failed: " << e.what() << '\n';
    return exit_unsolved;
  }
}
