// sia::retain_freed_memory(): glibc's mallopt, the one portable-enough knob for its trim and mmap thresholds.
#include <sia/error.hpp>
#include <sia/memory.hpp>

#include <climits>
#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace sia {

MemoryPolicy retain_freed_memory(std::size_t keep_bytes) {
  if (keep_bytes == 0 || keep_bytes > static_cast<std::size_t>(INT_MAX))
    throw InvalidArgument("retain_freed_memory: keep_bytes " + std::to_string(keep_bytes) + " is outside 1.." +
                          std::to_string(INT_MAX) + " (glibc's mallopt takes an int)");
  MemoryPolicy p;
#if defined(__GLIBC__)
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
  p.note = "not glibc: the C library's allocator policy is left as it is";
#endif
  return p;
}

}  // namespace sia
