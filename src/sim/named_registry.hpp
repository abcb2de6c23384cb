#pragma once
// Private: a thread-safe list of named entries (built-in ones first, then those registered at run time),
// shared by the policy and experiment registries. `Info` has a `std::string name`.
#include <sia/error.hpp>

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sia::sim::detail {

template <class Info>
class NamedRegistry {
 public:
  explicit NamedRegistry(std::vector<Info> builtin) : entries_(std::move(builtin)) {}

  /// Adds `info`, or replaces the entry of the same name.
  void add(Info info) {
    std::lock_guard lock(mutex_);
    for (auto& e : entries_)
      if (e.name == info.name) {
        e = std::move(info);
        return;
      }
    entries_.push_back(std::move(info));
  }
  [[nodiscard]] std::vector<std::string> names() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& e : entries_) out.push_back(e.name);
    return out;
  }
  [[nodiscard]] std::optional<Info> find(std::string_view name) const {
    std::lock_guard lock(mutex_);
    for (const auto& e : entries_)
      if (e.name == name) return e;
    return std::nullopt;
  }
  /// "a, b, c": the names for error messages.
  [[nodiscard]] std::string listing() const {
    std::string out;
    for (const auto& n : names()) out += (out.empty() ? "" : ", ") + n;
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<Info> entries_;
};

}  // namespace sia::sim::detail
