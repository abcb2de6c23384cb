#pragma once
// Private to the round: job ids by position in one flat open-addressing table. A round checks every
// job's id for duplicates and looks ids up across rounds; a node-based std::unordered_set or map
// allocates once per job, which a round with thousands of queued jobs pays every call (measured:
// the duplicate-id set alone was 4 % of a simulation of 2,000 jobs queued at once on 64 GPUs, its
// allocations more). The ids are not copied: the index holds views of strings that must outlive it.
#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

namespace sia::detail {

class IdIndex {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  IdIndex() = default;
  /// Room for `count` ids without growing.
  explicit IdIndex(std::size_t count) { reserve(count); }

  void reserve(std::size_t count) {
    std::size_t want = 16;
    while (want < 2 * count) want *= 2;  // at most half full: short probe sequences
    if (want > slots_.size()) rehash(want);
  }

  /// Adds `id` at `position` unless an equal id is already there: returns npos when added, else
  /// the position of the id added first (which stays).
  std::size_t insert(std::string_view id, std::size_t position) {
    if (2 * (size_ + 1) > slots_.size()) rehash(slots_.empty() ? 16 : 2 * slots_.size());
    const std::size_t h = std::hash<std::string_view>{}(id);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t k = h & mask;; k = (k + 1) & mask) {
      Slot& s = slots_[k];
      if (s.position == npos) {
        s = Slot{h, id, position};
        ++size_;
        return npos;
      }
      if (s.hash == h && s.id == id) return s.position;
    }
  }

  /// Position of `id`, or npos.
  [[nodiscard]] std::size_t find(std::string_view id) const {
    if (slots_.empty()) return npos;
    const std::size_t h = std::hash<std::string_view>{}(id);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t k = h & mask;; k = (k + 1) & mask) {
      const Slot& s = slots_[k];
      if (s.position == npos) return npos;
      if (s.hash == h && s.id == id) return s.position;
    }
  }

  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::size_t hash = 0;
    std::string_view id;
    std::size_t position = npos;  // npos: empty
  };

  void rehash(std::size_t slots) {
    std::vector<Slot> old(slots);
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.position == npos) continue;
      std::size_t k = s.hash & mask;
      while (slots_[k].position != npos) k = (k + 1) & mask;
      slots_[k] = s;
    }
  }

  std::vector<Slot> slots_;  // a power of two in size, or empty
  std::size_t size_ = 0;
};

}  // namespace sia::detail
