#pragma once
// Private to the round: job ids by position in one flat open-addressing table. A round checks every
// job's id for duplicates and looks ids up across rounds; a node-based std::unordered_set or map
// allocates once per job, which a round with thousands of queued jobs pays every call (measured:
// the duplicate-id set alone was 4 % of a simulation of 2,000 jobs queued at once on 64 GPUs, its
// allocations more). The ids are not copied: the index holds views of strings that must outlive it.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace sia::detail {

/// An id's hash as the id tables take it (the round cache keeps it from round to round).
[[nodiscard]] inline std::size_t hash_id(std::string_view id) noexcept { return std::hash<std::string_view>{}(id); }

/**
 * @brief The table of IdIndex and of the round cache's ids (RoundCache::find): per slot (a power of
 * two of them, at most half used) 32 bits of an id's hash and the number of the id + 1 (0: empty),
 * 8 bytes a slot. The ids are read through the caller's `id_of(number) -> std::string_view`, and
 * only when the 32 bits match (about never for two different ids): the table holds no id, and a
 * caller that kept its ids' hashes fills it without hashing them again. (Slots of hash, view and
 * position, 32 bytes, made a table of 20,000 ids 2 MB: a cache miss per probe.)
 */
class IdTable {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  /// Room for `count` ids without growing (growing hashes every id held again, through `id_of`).
  template <class IdOf>
  void reserve(std::size_t count, const IdOf& id_of) {
    std::size_t want = 16;
    while (want < 2 * count) want *= 2;  // at most half full: short probe sequences
    if (want > slots_.size()) rehash(want, id_of);
  }

  /// Adds number `k` (below 2^32 - 1), whose id `id_of(k)` hashes to `hash` (hash_id), unless an
  /// equal id is held: returns npos when added, else the number of the id added first (which stays).
  template <class IdOf>
  std::size_t insert(std::size_t hash, std::size_t k, const IdOf& id_of) {
    if (2 * (size_ + 1) > slots_.size()) [[unlikely]]
      rehash(slots_.empty() ? 16 : 2 * slots_.size(), id_of);
    const std::size_t mask = slots_.size() - 1;
    const auto tag = static_cast<std::uint32_t>(hash >> 32);
    for (std::size_t s = hash & mask;; s = (s + 1) & mask) {
      Slot& slot = slots_[s];
      if (slot.number == 0) {
        slot = Slot{tag, static_cast<std::uint32_t>(k + 1)};
        ++size_;
        return npos;
      }
      if (slot.tag == tag && id_of(std::size_t{slot.number} - 1) == id_of(k)) return slot.number - 1;
    }
  }

  /// Number of the id `id` (whose hash is `hash`), or npos.
  template <class IdOf>
  [[nodiscard]] std::size_t find(std::string_view id, std::size_t hash, const IdOf& id_of) const {
    if (slots_.empty()) return npos;
    const std::size_t mask = slots_.size() - 1;
    const auto tag = static_cast<std::uint32_t>(hash >> 32);
    for (std::size_t s = hash & mask;; s = (s + 1) & mask) {
      const Slot& slot = slots_[s];
      if (slot.number == 0) return npos;
      if (slot.tag == tag && id_of(std::size_t{slot.number} - 1) == id) return slot.number - 1;
    }
  }

  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::uint32_t tag = 0;     // the hash's upper 32 bits
    std::uint32_t number = 0;  // the id's number + 1; 0: empty
  };

  // (Out of line: insert() stays small enough to be inlined into its callers' loops.)
  template <class IdOf>
  [[gnu::noinline]] void rehash(std::size_t slots, const IdOf& id_of) {
    std::vector<Slot> old(slots);
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.number == 0) continue;
      std::size_t k = hash_id(id_of(std::size_t{s.number} - 1)) & mask;
      while (slots_[k].number != 0) k = (k + 1) & mask;
      slots_[k] = s;
    }
  }

  std::vector<Slot> slots_;  // a power of two in size, or empty
  std::size_t size_ = 0;
};

/// Ids and their positions: an IdTable over views of the ids, kept in insertion order.
class IdIndex {
 public:
  static constexpr std::size_t npos = IdTable::npos;

  IdIndex() = default;
  /// Room for `count` ids without growing.
  explicit IdIndex(std::size_t count) { reserve(count); }

  void reserve(std::size_t count) {
    ids_.reserve(count);
    table_.reserve(count, id_of());
  }

  /// Adds `id` at `position` unless an equal id is already there: returns npos when added, else
  /// the position of the id added first (which stays).
  std::size_t insert(std::string_view id, std::size_t position) { return insert(id, position, hash_id(id)); }
  /// The same, for an id whose hash_id() the caller has (`hash`).
  std::size_t insert(std::string_view id, std::size_t position, std::size_t hash) {
    ids_.push_back(Item{id, position});
    const std::size_t first = table_.insert(hash, ids_.size() - 1, id_of());
    if (first == npos) return npos;
    ids_.pop_back();
    return ids_[first].position;
  }

  /// Position of `id`, or npos.
  [[nodiscard]] std::size_t find(std::string_view id) const {
    if (ids_.empty()) return npos;
    const std::size_t k = table_.find(id, hash_id(id), id_of());
    return k == npos ? npos : ids_[k].position;
  }

  [[nodiscard]] std::size_t size() const { return ids_.size(); }

 private:
  struct Item {
    std::string_view id;
    std::size_t position = 0;
  };
  struct IdOf {
    const std::vector<Item>* ids;
    std::string_view operator()(std::size_t k) const { return (*ids)[k].id; }
  };
  [[nodiscard]] IdOf id_of() const { return IdOf{&ids_}; }

  std::vector<Item> ids_;  // in insertion order; the table numbers them
  IdTable table_;
};

}  // namespace sia::detail
