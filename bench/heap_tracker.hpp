#pragma once
// Heap accounting of the bench executable (heap_tracker.cpp): live bytes of every allocation
// through the C allocator, and their peak since the last reset.
namespace sia::bench {

/// Sets the peak to the current live bytes (call before the measured work).
void heap_reset_peak();
/// Live heap bytes now.
[[nodiscard]] long long heap_current();
/// Highest live heap bytes since the last heap_reset_peak().
[[nodiscard]] long long heap_peak();

}  // namespace sia::bench
