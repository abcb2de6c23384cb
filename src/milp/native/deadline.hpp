#pragma once
// Private to the native backend: when a search must stop — a wall-clock deadline and/or a stop
// requested from another thread (MilpParams::stop).
#include <chrono>
#include <optional>
#include <stop_token>
#include <utility>

namespace sia::detail::native {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  Deadline() = default;
  Deadline(std::nullopt_t) noexcept {}  // NOLINT(google-explicit-constructor): "no deadline", as before
  Deadline(std::optional<Clock::time_point> at, std::stop_token stop) : at_(at), stop_(std::move(stop)) {}
  /// Has the deadline passed, or was a stop requested?
  [[nodiscard]] bool passed() const noexcept { return stop_.stop_requested() || (at_ && Clock::now() > *at_); }

 private:
  std::optional<Clock::time_point> at_;
  std::stop_token stop_;
};

}  // namespace sia::detail::native
