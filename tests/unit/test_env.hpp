// Run-length knobs of the long test runs (SIA_INVARIANT_ROUNDS, SIA_RECOMPUTE_ROUNDS, ...), read from the environment.
#pragma once

#include <cstdlib>

namespace sia::test {

// The positive integer in environment variable `name`, or `fallback` when it is unset or not a positive integer.
inline long env_long(const char* name, long fallback) {
  if (const char* v = std::getenv(name)) {
    char* end = nullptr;
    const long x = std::strtol(v, &end, 10);
    if (end != v && x > 0) return x;
  }
  return fallback;
}

}  // namespace sia::test
