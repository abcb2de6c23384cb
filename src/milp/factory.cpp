// Backends by name: the built-in ones (generated list, see builtin_backends.hpp) and registered ones.
#include <sia/error.hpp>
#include <sia/milp/factory.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <sstream>

#include "milp/builtin_backends.hpp"

namespace sia {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

struct Registry {
  std::mutex mutex;
  std::vector<std::pair<std::string, MilpSolverFactory>> entries;  // insertion order = preference
  Registry() {
    for (const auto& b : detail::builtin_milp_backends()) entries.emplace_back(b.name, b.make);
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::vector<std::string> available_milp_solvers() {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (auto& [name, f] : r.entries) names.push_back(name);
  return names;
}

bool has_milp_solver(std::string_view name) noexcept {
  try {
    const auto key = lower(name);
    if (key == "default") return true;
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    return std::any_of(r.entries.begin(), r.entries.end(), [&](auto& e) { return e.first == key; });
  } catch (...) {
    return false;
  }
}

// "default" is the first built-in backend (the first sia_add_milp_backend line: native).
std::string default_milp_solver() {
  const auto names = available_milp_solvers();
  return names.empty() ? std::string{} : names.front();
}

std::unique_ptr<MilpSolver> make_milp_solver(std::string_view name) {
  std::string key = lower(name);
  if (key.empty() || key == "default") key = default_milp_solver();
  MilpSolverFactory factory;
  {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    for (auto& [n, f] : r.entries)
      if (n == key) factory = f;
  }
  if (!factory) {
    std::ostringstream msg;
    msg << "MILP backend '" << name << "' is not available; available:";
    for (auto& n : available_milp_solvers()) msg << ' ' << n;
    throw BackendUnavailable(msg.str());
  }
  auto solver = factory();
  if (!solver) throw BackendUnavailable("MILP backend '" + key + "' factory returned no solver");
  return solver;
}

void register_milp_solver(std::string name, MilpSolverFactory factory) {
  auto key = lower(name);
  if (key.empty() || key == "default")
    throw InvalidArgument("register_milp_solver: invalid backend name '" + name + "'");
  if (!factory) throw InvalidArgument("register_milp_solver: empty factory for backend '" + key + "'");
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  for (auto& e : r.entries)
    if (e.first == key) {
      e.second = std::move(factory);
      return;
    }
  r.entries.emplace_back(std::move(key), std::move(factory));
}

}  // namespace sia
