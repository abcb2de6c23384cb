// sia_allocate: one Sia scheduling round as JSON (product.md §5).
//
//   sia_allocate [request.json|-] [--backend NAME] [--time-limit-ms N] [--pretty] [--verbose]
//   sia_allocate request.json --next-request decision.json --elapsed SECONDS [--pretty]
//
// Reads the request from the file (standard input when absent or "-"), runs the round and prints
// the decision on standard output. Exit status (<sia/exit_code.hpp>, the same in every sia program):
// 0 optimal or feasible; 2 the request was rejected (the reason, naming the source, line, column and
// field, on standard error); 3 no backend could solve it (status "error" or "infeasible": the
// decision with its fallback allocation is still printed); 1 internal error.
// With --next-request, prints instead the request of the next round: the jobs' current, age_s,
// restarts and max_gpus_ever advanced by the decision and the elapsed seconds (docs/round-state.md).
#include <sia/error.hpp>
#include <sia/exit_code.hpp>
#include <sia/milp/factory.hpp>
#include <sia/request.hpp>
#include <sia/round.hpp>
#include <sia/round_log.hpp>
#include <sia/round_state_json.hpp>

#include <chrono>
#include <cstddef>
#include <exception>
#include <fstream>
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

std::string read_text(const std::string& file, std::size_t max_bytes) {
  std::ifstream f_in;
  std::istream* in = &std::cin;
  if (file != "-") {
    f_in.open(file, std::ios::binary);
    if (!f_in) throw sia::InvalidArgument(file + ": cannot open");
    in = &f_in;
  }
  std::string text;
  char buf[1 << 16];
  while (*in) {
    in->read(buf, sizeof buf);
    text.append(buf, static_cast<std::size_t>(in->gcount()));
    if (text.size() > max_bytes)
      throw sia::InvalidArgument((file == "-" ? "<stdin>" : file) + ": larger than " + std::to_string(max_bytes) +
                                 " bytes (--max-request-bytes)");
  }
  return text;
}

// --next-request: the request of the next round (sia::next_request_json, round_state_json.hpp).
int print_next_request(const std::string& input, const std::string& decision, double elapsed_s, bool pretty,
                       std::size_t max_bytes) {
  try {
    sia::NextRequestOptions o;
    o.request_source = input == "-" ? "<stdin>" : input;
    o.decision_source = decision == "-" ? "<stdin>" : decision;
    o.pretty = pretty;
    const std::string next =
        sia::next_request_json(read_text(input, max_bytes), read_text(decision, max_bytes), elapsed_s, o);
    std::cout << next << '\n' << std::flush;
    if (!std::cout) {
      std::cerr << "sia_allocate: cannot write the next request\n";
      return exit_internal;
    }
    return 0;
  } catch (const std::exception& e) {  // InvalidArgument naming the file and field: 2; out of memory: 1
    return sia::programs::report("sia_allocate", e);
  }
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
  bool verbose = false;
  app.add_flag("-v,--verbose,--log", verbose,
               "Print the round's phases on standard error (timings, sizes, backend status, nodes, gap)");
  std::size_t max_bytes = sia::RequestLimits::max_bytes;
  app.add_option("--max-request-bytes", max_bytes,
                 "Reject a request larger than this, checked while reading (default 128 MiB)")
      ->check(CLI::PositiveNumber);
  std::optional<std::string> next_request;
  double elapsed_s = 0;
  auto* next_opt = app.add_option("--next-request", next_request,
                                  "Print the next round's request instead: the request advanced by this decision "
                                  "file (docs/round-state.md)");
  auto* elapsed_opt = app.add_option("--elapsed", elapsed_s, "With --next-request: seconds until the next round")
                          ->check(CLI::NonNegativeNumber)
                          ->needs(next_opt);
  next_opt->needs(elapsed_opt);  // no silent default: the state's ages depend on it
  sia::programs::add_common_options(app, "sia_allocate");
  if (const auto code = sia::programs::parse(app, "sia_allocate", argc, argv)) return *code;
  if (next_request) return print_next_request(input, *next_request, elapsed_s, pretty, max_bytes);

  sia::Request request;
  try {
    request = sia::load_request(input, max_bytes);
    if (backend) {
      if (!sia::has_milp_solver(*backend)) {
        std::cerr << "sia_allocate: --backend: unknown MILP backend " << sia::programs::quoted(*backend)
                  << " (available: " << backend_list() << ", default)\n";
        return exit_rejected;
      }
      request.options.backend = *backend;
    }
    if (time_limit_ms) request.options.time_limit = std::chrono::milliseconds(*time_limit_ms);
    if (verbose)
      request.options.log = [](const sia::RoundEvent& e) { std::cerr << "sia_allocate: " << sia::format(e) << '\n'; };
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
