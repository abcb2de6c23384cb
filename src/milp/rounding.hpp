#pragma once
// Private to the MILP layer: rounding to an integer without a call into libm (std::round and
// std::rint are calls on a baseline x86-64, and the checks below run over every column or usage of
// every solve).
#include <cmath>

namespace sia::detail {

/// The integer nearest to `v`, ties to even (std::rint in the default rounding mode); `v` itself
/// when it is not finite or beyond 2^52, where every double is an integer. |v - nearest_integer(v)|
/// is |v - std::round(v)| bit for bit: the two differ only at ties, where both distances are 0.5.
[[nodiscard]] inline double nearest_integer(double v) noexcept {
  constexpr double kTwo52 = 4503599627370496.0;
  const double a = std::abs(v);
  return a < kTwo52 ? std::copysign((a + kTwo52) - kTwo52, v) : v;
}

/// Is `v` an integer? (`v == std::round(v)`: false for NaN, true for infinities.)
[[nodiscard]] inline bool is_integer_value(double v) noexcept { return v == nearest_integer(v); }

}  // namespace sia::detail
