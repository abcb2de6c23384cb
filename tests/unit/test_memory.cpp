// sia::retain_freed_memory (memory.hpp): its bounds, what it reports, and what it is for: a block freed and
// allocated again comes back without taking its pages from the system again.
#include <doctest/doctest.h>

#include <sia/error.hpp>
#include <sia/memory.hpp>

#include <climits>
#include <cstddef>
#include <cstdlib>
#include <string>

#include <sys/resource.h>

namespace {

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Writes one byte a page; returns the minor faults that took.
long touch(char* p, std::size_t n) {
  const long f0 = minor_faults();
  for (std::size_t i = 0; i < n; i += 4096) p[i] = static_cast<char>(i);
  return minor_faults() - f0;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool own_allocator = true;  // AddressSanitizer's malloc, whose mallopt refuses everything
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool own_allocator = true;
#else
constexpr bool own_allocator = false;
#endif
#else
constexpr bool own_allocator = false;
#endif

}  // namespace

TEST_CASE("memory.retain_freed_memory: bounds checked, with the value named") {
  for (std::size_t bad : {std::size_t{0}, static_cast<std::size_t>(INT_MAX) + 1}) {
    try {
      (void)sia::retain_freed_memory(bad);
      FAIL("no error for keep_bytes " << bad);
    } catch (const sia::InvalidArgument& e) {
      CHECK(std::string(e.what()).find("keep_bytes " + std::to_string(bad)) != std::string::npos);
    }
  }
}

TEST_CASE("memory.retain_freed_memory: a freed block comes back without page faults") {
  const sia::MemoryPolicy p = sia::retain_freed_memory(std::size_t{64} << 20);
  CHECK(p.allocator == sia::process_allocator());
#if defined(__GLIBC__)
  if (own_allocator) {  // its mallopt refuses every setting: reported as such, nothing claimed
    CHECK_FALSE(p.applied);
    CHECK(p.note.find("refused") != std::string::npos);
    return;
  }
  REQUIRE_MESSAGE(p.applied, p.note);
#if defined(SIA_TEST_JEMALLOC)
  // (sia_memory_jemalloc_tests: this file linked with jemalloc, as SIA_PROGRAM_MALLOC links the programs)
  REQUIRE(p.allocator == "jemalloc");
#endif
  if (p.allocator == "jemalloc") {  // its decay times: no thresholds
    CHECK(p.keep_bytes == 0);
    CHECK(p.mmap_threshold == 0);
  } else {
    CHECK(p.allocator == "glibc");
    CHECK(p.keep_bytes == (std::size_t{64} << 20));
    CHECK(p.mmap_threshold == (std::size_t{32} << 20));
  }
  CHECK(p.note.empty());
  // 16 MiB: above glibc's default mmap threshold (128 KiB at start), so by default it is mapped for itself and
  // unmapped when freed, and every page faults again on the next allocation.
  constexpr std::size_t n = std::size_t{16} << 20;
  char* a = static_cast<char*>(std::malloc(n));
  REQUIRE(a != nullptr);
  (void)touch(a, n);
  std::free(a);
  char* b = static_cast<char*>(std::malloc(n));
  REQUIRE(b != nullptr);
  const long again = touch(b, n);
  std::free(b);
  CHECK_MESSAGE(again < static_cast<long>(n / 4096 / 10), again << " page faults for pages freed just before");
#else
  CHECK_FALSE(p.applied);
  CHECK_FALSE(p.note.empty());
#endif
}
