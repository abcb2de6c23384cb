#pragma once
// What sia's three command-line programs (sia_allocate, sia_simulate, sia_fit_profiles) share: option
// parsing with CLI11 mapped onto the one exit-status table (<sia/exit_code.hpp>), `--version`, and
// one form of error message, `<program>: <source>:<line>:<column>: <field>: <reason>`.
#include <sia/exit_code.hpp>
#include <sia/version.hpp>

#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <string_view>

namespace sia::programs {

/// `'<text>'`, or its first 32 bytes and its length when longer than 64 bytes: a value given on
/// the command line or read from a file is never echoed in full (a 100 kB option would bury the message).
inline std::string quoted(std::string_view text) {
  constexpr std::size_t max_shown = 64;
  if (text.size() <= max_shown) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, max_shown / 2)) + "...' (" + std::to_string(text.size()) + " bytes)";
}

/// `message` itself, or, when longer than `max_bytes`, its start and its length (CLI11 quotes
/// the values it rejects in full).
inline std::string shortened(std::string_view message, std::size_t max_bytes = 512) {
  if (message.size() <= max_bytes) return std::string(message);
  return std::string(message.substr(0, max_bytes / 2)) + "... (" + std::to_string(message.size()) + " bytes)";
}

/// Adds `--version` (prints "<program> <version>", libsia's own sia::version()) and the exit-status
/// table to the help footer.
inline void add_common_options(CLI::App& app, const std::string& program) {
  app.set_version_flag("--version", program + " " + std::string(sia::version()), "Print the version and exit");
  app.footer(std::string(exit_code_help) + "\n");
}

/// Parses the command line. Returns nothing when the program should go on, else its exit status:
/// 0 after --help or --version, 2 (bad input) after a usage error, which CLI11 prints as
/// "<option>: <reason>" on standard error, prefixed here with the program name.
inline std::optional<int> parse(CLI::App& app, const std::string& program, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's message (shortened) and its hint to run --help.
    std::cerr << program << ": " << shortened(e.what()) << "\nRun with --help for more information.\n";
    return to_int(ExitCode::bad_input);
  }
}

/// What an exception that ended the work says: "out of memory" for std::bad_alloc (whose what() is
/// the standard library's own, e.g. "std::bad_alloc"), what() otherwise. Every message a program
/// prints for an exception, on standard error or in a `--serve` error line, is worded here.
inline std::string error_message(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return "out of memory";
  return e.what();
}

/// Prints `<program>: <error_message(e)>` and returns the exit status of an exception that ended the work.
inline int report(std::string_view program, const std::exception& e) {
  std::cerr << program << ": " << error_message(e) << '\n';
  return to_int(exit_code_for(e));
}

}  // namespace sia::programs
