// sia_allocate: one Sia scheduling round as JSON (product.md §5).
//
//   sia_allocate [request.json|-] [--backend NAME] [--time-limit-ms N] [--pretty] [--verbose]
//   sia_allocate request.json --next-request decision.json --elapsed SECONDS [--pretty]
//   sia_allocate --serve [--backend NAME] [--time-limit-ms N] [--verbose] [--max-request-bytes N]
//
// Reads the request from the file (standard input when absent or "-"), runs the round and prints
// the decision on standard output. Exit status (<sia/exit_code.hpp>, the same in every sia program):
// 0 optimal or feasible; 2 the request was rejected (the reason, naming the source, line, column and
// field, on standard error); 3 no backend could solve it (status "error" or "infeasible": the
// decision with its fallback allocation is still printed); 1 internal error.
// With --next-request, prints instead the request of the next round: the jobs' current, age_s,
// restarts and max_gpus_ever advanced by the decision and the elapsed seconds (docs/round-state.md).
// With --serve, rounds one after another in one process: a request per line of standard input, a
// decision (or an error) per line of standard output, what each round built kept for the next.
#include <sia/error.hpp>
#include <sia/exit_code.hpp>
#include <sia/memory.hpp>
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
#include <nlohmann/json.hpp>
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

// What the command line overrides in every request (--backend, --time-limit-ms, --verbose).
struct Overrides {
  std::optional<std::string> backend;
  std::optional<long long> time_limit_ms;
  bool verbose = false;
};

// Throws InvalidArgument for an unknown --backend. Checked once per run (before the first line of
// --serve: a backend that is not there is not there for any line either).
void check_backend(const Overrides& o) {
  if (o.backend && !sia::has_milp_solver(*o.backend))
    throw sia::InvalidArgument("--backend: unknown MILP backend " + sia::programs::quoted(*o.backend) +
                               " (available: " + backend_list() + ", default)");
}

// Applies the overrides (check_backend() passed) to a request just read.
void apply(const Overrides& o, sia::Request& request, const std::string& prefix) {
  if (o.backend) request.options.backend = *o.backend;
  if (o.time_limit_ms) request.options.time_limit = std::chrono::milliseconds(*o.time_limit_ms);
  if (o.verbose)
    request.options.log = [prefix](const sia::RoundEvent& e) { std::cerr << prefix << sia::format(e) << '\n'; };
}

// The next line of `in` (without its end) into `line`; false at the end of the input. A line longer
// than `max_bytes` is read to its end but not kept: `too_long` is set and `line` holds its start.
bool next_line(std::istream& in, std::string& line, std::size_t max_bytes, bool& too_long) {
  line.clear();
  too_long = false;
  std::streambuf* const buf = in.rdbuf();
  bool any = false;
  for (int c = buf->sbumpc(); c != std::char_traits<char>::eof(); c = buf->sbumpc()) {
    any = true;
    if (c == '\n') return true;
    if (line.size() < max_bytes)
      line.push_back(static_cast<char>(c));
    else
      too_long = true;
  }
  return any;
}

// --serve: a round per line of standard input, its decision on a line of standard output, in order,
// in one sia::JsonSession: a request carrying a `warm_start` (the previous decision's, as
// --next-request writes it) rebuilds only the jobs that changed, and decides exactly what the
// one-round program decides on the same line. A line that cannot be run gives
// `{"error": {"exit_status": N, "message": "..."}}` instead (N the one-round program's exit status),
// and the next line is read: one bad request never ends the session. Blank lines are skipped.
// Exits 0 at the end of the input, 1 if a line cannot be written (an unknown --backend is found
// before: main exits 2 without reading a line).
int serve(const Overrides& o, std::size_t max_bytes) {
  // A long run of rounds: what one round frees, the next takes again (memory.hpp).
  (void)sia::retain_freed_memory();
  sia::JsonSession session;
  std::string line;
  bool too_long = false;
  for (long long n = 1; next_line(std::cin, line, max_bytes, too_long); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos && !too_long) continue;
    const std::string source = "<stdin>#" + std::to_string(n);
    std::string out;
    try {
      if (too_long)
        throw sia::InvalidArgument(source + ": larger than " + std::to_string(max_bytes) +
                                   " bytes (--max-request-bytes)");
      sia::Request request = session.parse(line, source);
      apply(o, request, "sia_allocate: " + source + ": ");
      out = sia::decision_to_json(request, session.run(request), false);
    } catch (const std::exception& e) {
      std::string message = sia::programs::error_message(e);
      // (Errors the round finds name no source: prefixed as the one-round program does.)
      if (message.rfind(source, 0) != 0) message = source + ": " + message;
      std::cerr << "sia_allocate: " << message << '\n';
      const nlohmann::json error = {{"exit_status", sia::to_int(sia::exit_code_for(e))}, {"message", message}};
      out = nlohmann::json{{"error", error}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    std::cout << out << '\n' << std::flush;
    if (!std::cout) {
      std::cerr << "sia_allocate: cannot write the decision of " << source << '\n';
      return exit_internal;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"One Sia scheduling round as JSON: reads a request (product.md section 5) and prints the decision.",
               "sia_allocate"};
  std::string input = "-";
  Overrides o;
  bool pretty = false;
  app.add_option("request", input, "Request file; '-' or absent reads standard input");
  app.add_option("--backend", o.backend, "MILP backend, overriding policy.backend (available: " + backend_list() + ")");
  app.add_option("--time-limit-ms", o.time_limit_ms, "Solver time limit in ms, overriding policy.time_limit_ms")
      ->check(CLI::Range(0LL, 2147483647LL));
  auto* pretty_opt = app.add_flag("--pretty", pretty, "Indent the decision JSON");
  app.add_flag("-v,--verbose,--log", o.verbose,
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
  bool serve_rounds = false;
  app.add_flag("--serve", serve_rounds,
               "Rounds one after another: a request per line of standard input (compact JSON), its decision per "
               "line of standard output; each round reuses what the previous one built")
      ->excludes(next_opt)
      ->excludes(pretty_opt);
  sia::programs::add_common_options(app, "sia_allocate");
  if (const auto code = sia::programs::parse(app, "sia_allocate", argc, argv)) return *code;
  if (next_request) return print_next_request(input, *next_request, elapsed_s, pretty, max_bytes);
  if (serve_rounds) {
    if (input != "-") {
      std::cerr << "sia_allocate: --serve reads its requests from standard input, not from "
                << sia::programs::quoted(input) << "\nRun with --help for more information.\n";
      return exit_rejected;
    }
    try {
      check_backend(o);
    } catch (const std::exception& e) {  // as the one-round form reports it: 2
      return sia::programs::report("sia_allocate", e);
    }
    return serve(o, max_bytes);
  }

  sia::Request request;
  try {
    request = sia::load_request(input, max_bytes);
    check_backend(o);
    apply(o, request, "sia_allocate: ");
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
