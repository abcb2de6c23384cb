// sia::retain_freed_memory(): the process's allocator told to keep what a round frees. glibc's malloc through
// mallopt (its trim and mmap thresholds); jemalloc, when a program links it (sia_allocate, sia_simulate: the build
// option SIA_PROGRAM_MALLOC), through mallctl, found at run time so that libsia itself links neither.
#include <sia/error.hpp>
#include <sia/memory.hpp>

#include <sys/types.h>

#include <cerrno>
#include <climits>
#include <string>

#if defined(__GLIBC__)
#include <dlfcn.h>
#include <malloc.h>
#endif

namespace sia {

namespace {

#if defined(__GLIBC__)
// jemalloc's mallctl, when the process's malloc is jemalloc's (a program linked with it, or LD_PRELOAD).
using Mallctl = int (*)(const char*, void*, std::size_t*, void*, std::size_t);
Mallctl jemalloc_mallctl() noexcept {
  // (dlsym returns a data pointer; the function's address is what the loader found.)
  return reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"));
}
#endif

}  // namespace

std::string process_allocator() {
#if defined(__GLIBC__)
  return jemalloc_mallctl() != nullptr ? "jemalloc" : "glibc";
#else
  return "other";
#endif
}

MemoryPolicy retain_freed_memory(std::size_t keep_bytes) {
  if (keep_bytes == 0 || keep_bytes > static_cast<std::size_t>(INT_MAX))
    throw InvalidArgument("retain_freed_memory: keep_bytes " + std::to_string(keep_bytes) + " is outside 1.." +
                          std::to_string(INT_MAX) + " (glibc's mallopt takes an int)");
  MemoryPolicy p;
#if defined(__GLIBC__)
  const Mallctl mallctl = jemalloc_mallctl();  // (looked up once: process_allocator()'s answer too)
  p.allocator = mallctl != nullptr ? "jemalloc" : "glibc";
  if (mallctl != nullptr) {
    // jemalloc returns freed pages to the system after its decay time (10 s by default: between two rounds of a
    // scheduler, which then fault them in again). Decay -1 keeps them: the default of the arenas made later, and
    // each arena there is (its own setting; one not made yet, EFAULT, takes the default when it is). Nothing
    // bounds what is kept but the process's peak (the pages are reused, not piled up): `keep_bytes` has no
    // jemalloc equivalent.
    ssize_t never = -1;
    std::string refused;
    for (const char* name : {"arenas.dirty_decay_ms", "arenas.muzzy_decay_ms"})
      if (mallctl(name, nullptr, nullptr, &never, sizeof never) != 0) refused += std::string(" ") + name;
    unsigned arenas = 0;
    std::size_t size = sizeof arenas;
    if (mallctl("arenas.narenas", &arenas, &size, nullptr, 0) != 0) refused += " arenas.narenas";
    for (unsigned a = 0; a < arenas; ++a)
      for (const char* what : {"dirty", "muzzy"}) {
        const std::string name = "arena." + std::to_string(a) + "." + what + "_decay_ms";
        const int rc = mallctl(name.c_str(), nullptr, nullptr, &never, sizeof never);
        if (rc != 0 && rc != EFAULT) refused += " " + name;
      }
    p.applied = refused.empty();
    if (!p.applied) p.note = "jemalloc's mallctl refused a decay time of -1 for" + refused;
    return p;
  }
  // 32 MiB: glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit systems; mallopt refuses more. Blocks above it (none in
  // a 100,000-GPU round: its largest is about 15 MiB) still get their own mapping.
  constexpr int mmap_threshold = 32 << 20;
  const bool trim = mallopt(M_TRIM_THRESHOLD, static_cast<int>(keep_bytes)) == 1;
  const bool mmap = mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1;
  p.applied = trim && mmap;
  if (trim) p.keep_bytes = keep_bytes;
  if (mmap) p.mmap_threshold = static_cast<std::size_t>(mmap_threshold);
  if (!p.applied)
    p.note =
        std::string("glibc's mallopt refused ") + (trim ? "" : "M_TRIM_THRESHOLD ") + (mmap ? "" : "M_MMAP_THRESHOLD");
#else
  p.allocator = process_allocator();
  p.note = "not glibc: the C library's allocator policy is left as it is";
#endif
  return p;
}

}  // namespace sia
