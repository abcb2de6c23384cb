// The simulator's policy registry: built-in policies (generated list, see builtin_policies.hpp) plus
// those registered at run time; and the typed readers of policy options.
#include <sia/error.hpp>
#include <sia/sim/policy.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "sim/builtin_policies.hpp"
#include "sim/named_registry.hpp"

namespace sia::sim {

// ---------------------------------------------------------------------------------------------
// PolicyOptions
// ---------------------------------------------------------------------------------------------
PolicyOptions& PolicyOptions::set(std::string key, std::string value) {
  values_[std::move(key)] = std::move(value);
  return *this;
}

bool PolicyOptions::has(std::string_view key) const { return values_.find(key) != values_.end(); }

void PolicyOptions::fail(std::string_view key, std::string_view value, std::string_view expected) const {
  throw InvalidArgument(owner + " option '" + std::string(key) + "': expected " + std::string(expected) + ", got '" +
                        std::string(value) + "'");
}

std::string PolicyOptions::text(std::string_view key, std::string_view fallback) const {
  const auto it = values_.find(key);
  return it == values_.end() ? std::string(fallback) : it->second;
}

std::string PolicyOptions::choice(std::string_view key, std::string_view fallback,
                                  std::initializer_list<std::string_view> choices) const {
  const std::string v = text(key, fallback);
  if (std::find(choices.begin(), choices.end(), v) != choices.end()) return v;
  std::string list;
  for (auto c : choices) list += (list.empty() ? "" : ", ") + std::string(c);
  fail(key, v, "one of " + list);
}

double PolicyOptions::number(std::string_view key, double fallback, double lo, double hi) const {
  const auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  const std::string& s = it->second;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v) || v < lo || v > hi)
    fail(key, s, "a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

long long PolicyOptions::integer(std::string_view key, long long fallback, long long lo, long long hi) const {
  const auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  const std::string& s = it->second;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || v < lo || v > hi)
    fail(key, s, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

bool PolicyOptions::boolean(std::string_view key, bool fallback) const {
  const auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  const std::string& s = it->second;
  if (s == "true" || s == "1" || s == "on" || s == "yes") return true;
  if (s == "false" || s == "0" || s == "off" || s == "no") return false;
  fail(key, s, "true or false");
}

// ---------------------------------------------------------------------------------------------
// Registry
// ---------------------------------------------------------------------------------------------
namespace {

detail::NamedRegistry<PolicyInfo>& registry() {
  static detail::NamedRegistry<PolicyInfo> r(detail::builtin_policies());  // built-in ones first, in build order
  return r;
}

}  // namespace

void register_policy(PolicyInfo info) {
  if (info.name.empty()) throw InvalidArgument("register_policy: empty policy name");
  if (!info.make) throw InvalidArgument("register_policy: policy '" + info.name + "' has no factory");
  registry().add(std::move(info));
}

std::vector<std::string> policy_names() { return registry().names(); }

std::optional<PolicyInfo> find_policy(std::string_view name) { return registry().find(name); }

std::unique_ptr<Policy> make_policy(std::string_view name, const PolicyOptions& options) {
  const auto info = find_policy(name);
  if (!info)
    throw InvalidArgument("policy: unknown policy '" + std::string(name) + "' (known: " + registry().listing() + ")");
  for (const auto& entry : options.values()) {
    const std::string& key = entry.first;  // not a structured binding: clang 14 cannot capture those in lambdas
    const bool declared = std::any_of(info->options.begin(), info->options.end(),
                                      [&](const PolicyOptionInfo& o) { return o.key == key; });
    if (declared) continue;
    std::string list;
    for (const auto& o : info->options) list += (list.empty() ? "" : ", ") + o.key;
    throw InvalidArgument("policy '" + info->name + "': unknown option '" + key +
                          "' (options: " + (list.empty() ? "none" : list) + ")");
  }
  PolicyOptions named = options;
  named.owner = "policy '" + info->name + "'";
  auto p = info->make(named);
  if (!p) throw InvalidArgument("policy '" + info->name + "': the factory made no policy");
  return p;
}

}  // namespace sia::sim
