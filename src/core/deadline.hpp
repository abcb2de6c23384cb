#pragma once
// Private to the round: when the whole call must stop (RoundOptions::time_limit from the start of
// the call, or RoundOptions::stop requested from another thread).
#include <algorithm>
#include <chrono>
#include <optional>
#include <stop_token>
#include <utility>

namespace sia::detail {

class RoundDeadline {
 public:
  using Clock = std::chrono::steady_clock;
  RoundDeadline(Clock::time_point start, std::optional<std::chrono::milliseconds> limit, std::stop_token stop)
      : stop_(std::move(stop)) {
    if (limit) {
      at_ = start + *limit;
      reserve_ = *limit / 20;
    }
  }
  /// Has the time limit passed, or was a stop requested?
  [[nodiscard]] bool passed() const noexcept { return stop_.stop_requested() || (at_ && Clock::now() >= *at_); }
  /// Time left for a backend (none = no limit; 0 once passed).
  [[nodiscard]] std::optional<std::chrono::milliseconds> remaining() const {
    if (stop_.stop_requested()) return std::chrono::milliseconds(0);
    if (!at_) return std::nullopt;
    return std::max(std::chrono::milliseconds(0),
                    std::chrono::duration_cast<std::chrono::milliseconds>(*at_ - Clock::now()));
  }
  /// Time left for a backend: remaining() less 5 % of the limit, kept for what follows the solve
  /// (decoding, tie rules, placement) and for the backend's own overshoot of its limit.
  [[nodiscard]] std::optional<std::chrono::milliseconds> for_backend() const {
    const auto left = remaining();
    if (!left) return left;
    return std::max(std::chrono::milliseconds(0), *left - reserve_);
  }
  [[nodiscard]] const std::stop_token& stop() const noexcept { return stop_; }

 private:
  std::optional<Clock::time_point> at_;
  std::chrono::milliseconds reserve_{0};
  std::stop_token stop_;
};

}  // namespace sia::detail
