// Heap accounting for the bench: the bench executable interposes the C allocator (glibc exports
// __libc_malloc and friends, so the replacements forward to them) and counts live bytes with
// malloc_usable_size. Everything a round allocates is seen — sia's own containers, oneTBB, CBC's
// and GLPK's C allocations — so "peak during the round" is the round's whole memory.
#include "heap_tracker.hpp"

#include <malloc.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>

extern "C" {
void* __libc_malloc(std::size_t);
void __libc_free(void*);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
}

namespace {

std::atomic<long long> g_current{0};
std::atomic<long long> g_peak{0};

void added(void* p) {
  if (!p) return;
  const long long now = g_current.fetch_add(static_cast<long long>(malloc_usable_size(p)), std::memory_order_relaxed) +
                        static_cast<long long>(malloc_usable_size(p));
  long long peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

void removed(void* p) {
  if (p) g_current.fetch_sub(static_cast<long long>(malloc_usable_size(p)), std::memory_order_relaxed);
}

}  // namespace

extern "C" {

void* malloc(std::size_t n) {
  void* p = __libc_malloc(n);
  added(p);
  return p;
}

void free(void* p) {
  removed(p);
  __libc_free(p);
}

void* calloc(std::size_t n, std::size_t s) {
  void* p = __libc_calloc(n, s);
  added(p);
  return p;
}

void* realloc(void* old, std::size_t n) {
  const long long before = old ? static_cast<long long>(malloc_usable_size(old)) : 0;
  void* p = __libc_realloc(old, n);
  if (p) {
    g_current.fetch_sub(before, std::memory_order_relaxed);
    added(p);
  } else if (n == 0 && old) {
    g_current.fetch_sub(before, std::memory_order_relaxed);  // realloc(p, 0) freed it
  }
  return p;
}

void* memalign(std::size_t a, std::size_t n) {
  void* p = __libc_memalign(a, n);
  added(p);
  return p;
}

void* aligned_alloc(std::size_t a, std::size_t n) { return memalign(a, n); }

int posix_memalign(void** out, std::size_t a, std::size_t n) {
  void* p = __libc_memalign(a, n);
  if (!p) return ENOMEM;
  added(p);
  *out = p;
  return 0;
}

void* valloc(std::size_t n) { return memalign(4096, n); }

}  // extern "C"

namespace sia::bench {

void heap_reset_peak() { g_peak.store(g_current.load(std::memory_order_relaxed), std::memory_order_relaxed); }
long long heap_current() { return g_current.load(std::memory_order_relaxed); }
long long heap_peak() { return g_peak.load(std::memory_order_relaxed); }

}  // namespace sia::bench
