// Run-length knobs of the long test runs (SIA_INVARIANT_ROUNDS, SIA_RECOMPUTE_ROUNDS, ...), read from the environment.
#pragma once

#include <cstdlib>
#include <cstring>

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

// SIA_TEST_SHORT=1: the randomised and repeated tests run fewer instances. scripts/test.sh sets it for the
// sanitizer stage, which looks for memory errors and undefined behaviour on the same code paths as the Release
// stage, where every test runs its full count; under ASan a CBC solve runs 10-35x slower (each of Clp's large
// factorisation arrays is a fresh mapping with its shadow, faulted in and unmapped), so the full counts made that
// stage most of CI's time. SIA_TEST_SHORT=0 (or unset) runs the full counts anywhere.
inline bool short_run() {
  const char* v = std::getenv("SIA_TEST_SHORT");
  return v != nullptr && std::strcmp(v, "0") != 0 && *v != '\0';
}

// A test's count: environment variable `name` when it holds a positive integer, else `shorter` in a short run,
// else `full`.
inline long count(const char* name, long full, long shorter) { return env_long(name, short_run() ? shorter : full); }

// A count with no variable of its own: `shorter` in a short run, else `full`.
inline int count(int full, int shorter) { return short_run() ? shorter : full; }

}  // namespace sia::test
