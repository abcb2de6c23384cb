#pragma once
/// @file memory.hpp
/// @brief The process's allocator policy for a long run of rounds: memory a round frees kept for the next one.
///
/// A round allocates and frees tens of megabytes at 100,000 GPUs (the problem's rows, the backend's arrays, the
/// result). With glibc's default policy, freed blocks above a size that adapts to the program are returned to the
/// system (munmap, or trimming the heap's top), and the next round takes them back page by page. Each such page
/// costs a page fault: about 0.5-1 us on bare metal, but 10.7 us on the virtual machines this project's
/// measurements ran on (docs/performance.md), where a round after a trim took 105-200 ms instead of 20-30.
///
/// retain_freed_memory() tells the C library to keep up to `keep_bytes` of freed memory in the process and to
/// serve every block below 32 MiB from the heap, so that a scheduler's rounds reuse the same pages. The setting is
/// **process-wide** (it changes malloc for every thread and library of the process), so sia never applies it by
/// itself: a scheduler calls it once at start-up if it wants it. `sia_allocate --serve` and the
/// benches call it. The cost is memory: up to `keep_bytes` more resident between rounds.
///
/// **The allocator itself, over a long run.** glibc's malloc also slows a long run of rounds down: a round's result
/// holds tens of thousands of small blocks (each decision's id, placement and GPU ids), freed when the next result
/// replaces it, among the scheduler's own; glibc's free lists fragment, and consolidating and sorting them costs
/// more round after round. Measured (docs/performance.md, "2026-12-03, fifteenth session"): a scheduler's warm
/// round at 100,000 GPUs grows from 29-30 ms in its first 32 rounds to 48-50 ms after a hundred, and freeing a
/// result from 4 to 10 ms; with jemalloc 38-40 ms and 2 ms. So a long-running program links jemalloc (or
/// tcmalloc): `sia_allocate` and `sia_simulate` do when it is installed (the build option SIA_PROGRAM_MALLOC).
/// With jemalloc as the process's malloc, retain_freed_memory() sets its decay times to -1 (freed pages kept;
/// by default it returns them after 10 s, between two rounds) through mallctl, found at run time.

#include <cstddef>
#include <string>

namespace sia {

/// What retain_freed_memory() did.
struct MemoryPolicy {
  bool applied = false;            ///< the allocator took the setting
  std::size_t keep_bytes = 0;      ///< glibc: freed memory kept in the process (the heap is not trimmed below it);
                                   ///< 0 with jemalloc, which keeps every freed page (bounded by the peak only)
  std::size_t mmap_threshold = 0;  ///< glibc: smallest block given its own mapping (returned to the system when freed)
  std::string allocator;           ///< the process's malloc, as process_allocator() names it
  std::string note;                ///< why it was not applied (another C library, or the allocator refused)
};

/// The process's malloc: "jemalloc" (linked into the program or preloaded: its mallctl is found), "glibc" (glibc's
/// own), or "other" (not a glibc system).
[[nodiscard]] std::string process_allocator();

/// Default of retain_freed_memory(): 256 MiB, a few rounds' worth at 100,000 GPUs and 20,000 jobs.
inline constexpr std::size_t default_kept_memory = std::size_t{256} << 20;

/// @brief Keeps up to `keep_bytes` of freed memory in the process for the next round (see the file's comment).
///
/// On glibc: malloc's trim threshold becomes `keep_bytes` and its mmap threshold 32 MiB (the largest glibc
/// accepts), which also stops glibc's dynamic adjustment of both. With jemalloc as the process's malloc: its dirty
/// and muzzy decay times become -1 for every arena (`keep_bytes` checked but not used). On another C library
/// nothing changes and the result says why. Safe to call from any thread, more than once (the last call wins).
/// @throws InvalidArgument when `keep_bytes` is 0 or above 2 GiB - 1 (glibc takes an int).
MemoryPolicy retain_freed_memory(std::size_t keep_bytes = default_kept_memory);

}  // namespace sia
