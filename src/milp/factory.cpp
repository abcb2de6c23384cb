// The single place that knows which backends were compiled in.
#include <sia/build_config.hpp>
#include <sia/error.hpp>
#include <sia/milp/factory.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <sstream>

#include "milp/backends.hpp"

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
    entries.emplace_back("native", [] { return detail::make_native_solver(); });
#if SIA_HAS_CBC
    entries.emplace_back("cbc", [] { return detail::make_cbc_solver(); });
#endif
#if SIA_HAS_GLPK
    entries.emplace_back("glpk", [] { return detail::make_glpk_solver(); });
#endif
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

// The backend "default" resolves to. Kept in one place so the switch to `native` is one line.
constexpr const char* preferred_default[] = {"native", "cbc", "glpk"};

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

std::string default_milp_solver() {
  const auto names = available_milp_solvers();
  for (const char* p : preferred_default)
    if (std::find(names.begin(), names.end(), p) != names.end()) return p;
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
  if (key.empty() || key == "default") throw InvalidArgument("register_milp_solver: invalid backend name '" + name + "'");
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
