#pragma once
/// @file sim/random.hpp
/// @brief Portable random numbers for the simulator: the same draws from every standard library and
/// compiler. std::mt19937_64's output is fixed by the C++ standard, but std::uniform_int_distribution,
/// std::exponential_distribution and std::discrete_distribution are not (libstdc++ and libc++ give
/// different sequences), so the synthetic workload and Pollux's genetic search draw through these.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>

namespace sia::sim {

/// @brief High and low 64 bits of a * b, in standard C++ (no 128-bit integer extension).
[[nodiscard]] constexpr std::uint64_t multiply_high(std::uint64_t a, std::uint64_t b, std::uint64_t& low) noexcept {
  const std::uint64_t a_lo = a & 0xffffffffULL, a_hi = a >> 32;
  const std::uint64_t b_lo = b & 0xffffffffULL, b_hi = b >> 32;
  const std::uint64_t p0 = a_lo * b_lo, p1 = a_lo * b_hi, p2 = a_hi * b_lo, p3 = a_hi * b_hi;
  const std::uint64_t mid = (p0 >> 32) + (p1 & 0xffffffffULL) + (p2 & 0xffffffffULL);
  low = (mid << 32) | (p0 & 0xffffffffULL);
  return p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
}

/// @brief Uniform integer in [0, n) (0 when n <= 1): Lemire's multiply-shift with rejection, unbiased.
[[nodiscard]] inline std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n) {
  if (n <= 1) return 0;
  std::uint64_t low = 0;
  std::uint64_t high = multiply_high(rng(), n, low);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) high = multiply_high(rng(), n, low);
  }
  return high;
}

/// @brief Uniform double in [0, 1) with 53 random bits.
[[nodiscard]] inline double uniform_real(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

/// @brief Exponentially distributed with rate `rate` (> 0), by inversion.
[[nodiscard]] inline double exponential(std::mt19937_64& rng, double rate) {
  return -std::log1p(-uniform_real(rng)) / rate;
}

/// @brief Index i with probability weights[i] / sum(weights) (non-negative weights, positive sum),
/// by inversion of the cumulative weights.
[[nodiscard]] inline std::size_t discrete(std::mt19937_64& rng, std::span<const double> weights) {
  double total = 0.0;
  for (double w : weights) total += w;
  const double target = uniform_real(rng) * total;
  double acc = 0.0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    acc += weights[i];
    if (target < acc) return i;
  }
  return weights.empty() ? 0 : weights.size() - 1;
}

}  // namespace sia::sim
