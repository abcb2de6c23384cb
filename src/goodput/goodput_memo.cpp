/// @file goodput/goodput_memo.cpp
/// @brief GoodputMemo (see include/sia/goodput/goodput_memo.hpp).

#include <sia/goodput/goodput_memo.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <mutex>
#include <optional>
#include <vector>

namespace sia {

namespace {

// The key below lists every field of these: a new field must be added to it (a memo that ignored an input would
// answer for other inputs).
static_assert(sizeof(PerfParams) == 7 * sizeof(double), "PerfParams changed: update key_of");
static_assert(sizeof(GradParams) == 2 * sizeof(double), "GradParams changed: update key_of");
static_assert(sizeof(BatchLimits) == sizeof(double) + 4 * sizeof(int), "BatchLimits changed: update key_of");
static_assert(sizeof(GoodputFunction) == sizeof(PerfParams) + sizeof(std::optional<GradParams>) + sizeof(double),
              "GoodputFunction changed: update key_of");

/// Every input of GoodputFunction::optimize, as bits (statistics that are absent are all zero, with a flag: the
/// function ignores their values then).
struct Key {
  std::array<std::uint64_t, 14> w{};
  // Every word at once, without branches or a call (the defaulted operator called memcmp: 3.6 % of the 936-job run).
  friend bool operator==(const Key& a, const Key& b) noexcept {
    std::uint64_t d = 0;
    for (std::size_t i = 0; i < a.w.size(); ++i) d |= a.w[i] ^ b.w[i];
    return d == 0;
  }
};

Key key_of(const GoodputFunction& f, int nodes, int replicas, const BatchLimits& lim) noexcept {
  Key k;
  const PerfParams& p = f.perf;
  k.w[0] = std::bit_cast<std::uint64_t>(p.alpha_c);
  k.w[1] = std::bit_cast<std::uint64_t>(p.beta_c);
  k.w[2] = std::bit_cast<std::uint64_t>(p.alpha_n);
  k.w[3] = std::bit_cast<std::uint64_t>(p.beta_n);
  k.w[4] = std::bit_cast<std::uint64_t>(p.alpha_r);
  k.w[5] = std::bit_cast<std::uint64_t>(p.beta_r);
  k.w[6] = std::bit_cast<std::uint64_t>(p.gamma);
  if (f.grad) {
    k.w[7] = std::bit_cast<std::uint64_t>(f.grad->sqr);
    k.w[8] = std::bit_cast<std::uint64_t>(f.grad->var);
  }
  k.w[9] = std::bit_cast<std::uint64_t>(f.init_batch_size);
  k.w[10] = std::bit_cast<std::uint64_t>(lim.max_batch_size);
  k.w[11] = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(lim.min_local)) << 32) |
            static_cast<std::uint32_t>(lim.max_local);
  k.w[12] = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(lim.candidates)) << 32) |
            (static_cast<std::uint64_t>(lim.tune) << 2) | (static_cast<std::uint64_t>(lim.accumulation) << 1) |
            static_cast<std::uint64_t>(f.grad.has_value());
  k.w[13] =
      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(nodes)) << 32) | static_cast<std::uint32_t>(replicas);
  return k;
}

std::uint64_t hash_of(const Key& k) noexcept {
  // Two independent chains over the even and the odd words (half the latency of one chain over all 14), mixed.
  static_assert(std::tuple_size_v<decltype(k.w)> % 2 == 0);
  std::uint64_t a = 0x9E3779B97F4A7C15ULL, b = 0xC2B2AE3D27D4EB4FULL;
  for (std::size_t i = 0; i < k.w.size(); i += 2) {
    a ^= k.w[i];
    b ^= k.w[i + 1];
    a *= 0xBF58476D1CE4E5B9ULL;
    b *= 0x94D049BB133111EBULL;
    a ^= a >> 31;
    b ^= b >> 29;
  }
  std::uint64_t h = a ^ (b * 0x9E3779B97F4A7C15ULL);
  h ^= h >> 33;  // (a final mix: the low bits pick the slot, the high bits are the tag)
  h *= 0xFF51AFD7ED558CCDULL;
  return h ^ (h >> 33);
}

struct Entry {
  Key key;
  std::uint64_t hash = 0;
  GoodputChoice value;
};

/// One generation: entries in insertion order and an open-addressing index over them, linear probing. A slot holds
/// the entry's hash's high 32 bits and the entry + 1 (0 = empty): a probe reads an entry (another cache line) only
/// when the tags match. Both are sized once: inserting never allocates.
struct Generation {
  std::vector<Entry> entries;
  std::vector<std::uint64_t> index;

  explicit Generation(std::size_t capacity) : index(std::bit_ceil(2 * capacity), 0) { entries.reserve(capacity); }
  [[nodiscard]] bool full() const noexcept { return entries.size() == entries.capacity(); }
  void clear() noexcept {
    entries.clear();
    std::fill(index.begin(), index.end(), std::uint64_t{0});
  }
  /// The slot of `k`: its entry, or the empty slot where it would go.
  [[nodiscard]] std::size_t slot(const Key& k, std::uint64_t h) const noexcept {
    const std::size_t mask = index.size() - 1;
    const std::uint64_t tag = h >> 32;
    std::size_t i = static_cast<std::size_t>(h) & mask;
    while (index[i] != 0) {
      if ((index[i] >> 32) == tag && entries[(index[i] & 0xFFFFFFFFULL) - 1].key == k) return i;
      i = (i + 1) & mask;
    }
    return i;
  }
  /// Asks the cache for the first slot `h` probes (the index is sized once: its address never changes, so this reads
  /// nothing another thread writes).
  void prefetch(std::uint64_t h) const noexcept {
    __builtin_prefetch(index.data() + (static_cast<std::size_t>(h) & (index.size() - 1)));
  }
  [[nodiscard]] const Entry* find(const Key& k, std::uint64_t h) const noexcept {
    const std::uint64_t at = index[slot(k, h)];
    return at == 0 ? nullptr : &entries[(at & 0xFFFFFFFFULL) - 1];
  }
  /// Adds `e` (not present; the generation not full).
  void add(const Entry& e) noexcept {
    entries.push_back(e);
    index[slot(e.key, e.hash)] = (e.hash >> 32 << 32) | static_cast<std::uint64_t>(entries.size());
  }
};

}  // namespace

/// One shard: a mutex, two generations, its counts, on cache lines of its own (the threads that share the memo
/// mostly ask for different keys, so they mostly take different locks).
struct alignas(64) Shard {
  explicit Shard(std::size_t capacity) : gens{Generation(capacity), Generation(capacity)} {}
  std::mutex mutex;
  Generation gens[2];
  int current = 0;  // gens[current] takes the new entries, gens[1 - current] is the older one
  GoodputMemo::Stats stats;

  // Under the lock: adds `e` to the current generation, which replaces the older one when full.
  void add(const Entry& e) noexcept {
    if (gens[current].find(e.key, e.hash) != nullptr) return;  // (another thread added it meanwhile)
    if (gens[current].full()) {
      current = 1 - current;
      gens[current].clear();
    }
    gens[current].add(e);
  }
};

struct GoodputMemo::Impl {
  // 16 shards picked by the hash's bits 24-27 (the slot uses the low bits, the tag the high 32): a lookup holds one
  // shard's lock, so the policy's second thread filling estimates and the round's thread rarely wait for each
  // other (one lock for the whole memo cost the 936-job run 8 % of its wall time at two threads).
  static constexpr std::size_t kShards = 16;
  explicit Impl(std::size_t capacity) {
    const std::size_t per = std::max<std::size_t>(1, (capacity + kShards - 1) / kShards);
    shards.reserve(kShards);
    for (std::size_t i = 0; i < kShards; ++i) shards.push_back(std::make_unique<Shard>(per));
  }
  [[nodiscard]] Shard& shard(std::uint64_t h) const noexcept { return *shards[(h >> 24) & (kShards - 1)]; }
  std::vector<std::unique_ptr<Shard>> shards;
};

GoodputMemo::GoodputMemo(std::size_t capacity)
    : impl_(std::make_unique<Impl>(std::clamp<std::size_t>(capacity, 1, std::size_t{1} << 30))) {}

GoodputMemo::~GoodputMemo() = default;

GoodputChoice GoodputMemo::optimize(const GoodputFunction& f, int nodes, int replicas,
                                    const BatchLimits& lim) noexcept {
  Entry e;
  e.key = key_of(f, nodes, replicas, lim);
  e.hash = hash_of(e.key);
  Shard& m = impl_->shard(e.hash);
  // Both generations' first slots at once: a key missing from the newer one is looked up in the older one next,
  // and the two cache misses overlap instead of following each other.
  m.gens[0].prefetch(e.hash);
  m.gens[1].prefetch(e.hash);
  try {
    {
      const std::lock_guard<std::mutex> lock(m.mutex);
      ++m.stats.lookups;
      if (const Entry* hit = m.gens[m.current].find(e.key, e.hash)) {
        ++m.stats.hits;
        return hit->value;
      }
      if (const Entry* old = m.gens[1 - m.current].find(e.key, e.hash)) {
        ++m.stats.hits;
        e.value = old->value;
        m.add(e);  // kept while in use
        return e.value;
      }
    }
    e.value = f.optimize(nodes, replicas, lim);  // outside the lock: the other threads look up meanwhile
    const std::lock_guard<std::mutex> lock(m.mutex);
    m.add(e);
    return e.value;
  } catch (...) {  // (a lock that fails: the same answer without the memo)
    return f.optimize(nodes, replicas, lim);
  }
}

namespace detail {

namespace {

/// One thread's memo of valid_splits(): the lists of the last distinct (replicas, initial batch, limits) asked, in
/// a direct-mapped table keyed by their exact bits (a hit returns the list valid_splits() would make). Emptied when
/// it holds kMaxLists lists (no simulation measured asks for that many: 149 on the 936-job run).
class SplitMemo {
 public:
  const BatchCandidate* find(int replicas, double init_batch_size, const BatchLimits& lim, int& count) {
    const Key k = key_of(replicas, init_batch_size, lim);
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = static_cast<std::size_t>(hash_of(k)) & mask;
    while (slots_[i] != 0) {
      const List& l = lists_[slots_[i] - 1];
      if (l.key == k) {
        count = l.count;
        return candidates_.data() + l.first;
      }
      i = (i + 1) & mask;
    }
    if (lists_.size() == kMaxLists) {  // start over (rare: the table and the storage keep their size)
      lists_.clear();
      candidates_.clear();
      std::fill(slots_.begin(), slots_.end(), std::uint32_t{0});
      return find(replicas, init_batch_size, lim, count);
    }
    BatchCandidate buffer[kMaxBufferedCandidates];
    count = valid_splits(replicas, init_batch_size, lim, buffer);
    lists_.push_back(List{k, candidates_.size(), count});
    candidates_.insert(candidates_.end(), buffer, buffer + count);
    slots_[i] = static_cast<std::uint32_t>(lists_.size());
    return candidates_.data() + lists_.back().first;
  }

 private:
  static constexpr std::size_t kMaxLists = 4096;
  struct Key {
    std::array<std::uint64_t, 5> w{};
    friend bool operator==(const Key& a, const Key& b) noexcept {
      std::uint64_t d = 0;
      for (std::size_t i = 0; i < a.w.size(); ++i) d |= a.w[i] ^ b.w[i];
      return d == 0;
    }
  };
  // Every input of valid_splits() (BatchLimits: checked by the static_assert above key_of).
  static Key key_of(int replicas, double init_batch_size, const BatchLimits& lim) noexcept {
    Key k;
    k.w[0] = std::bit_cast<std::uint64_t>(init_batch_size);
    k.w[1] = std::bit_cast<std::uint64_t>(lim.max_batch_size);
    k.w[2] = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(lim.min_local)) << 32) |
             static_cast<std::uint32_t>(lim.max_local);
    k.w[3] = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(lim.candidates)) << 32) |
             (static_cast<std::uint64_t>(lim.tune) << 1) | static_cast<std::uint64_t>(lim.accumulation);
    k.w[4] = static_cast<std::uint32_t>(replicas);
    return k;
  }
  static std::uint64_t hash_of(const Key& k) noexcept {
    std::uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (const std::uint64_t w : k.w) {
      h ^= w;
      h *= 0xBF58476D1CE4E5B9ULL;
      h ^= h >> 31;
    }
    return h;
  }
  struct List {
    Key key;
    std::size_t first = 0;  // in candidates_
    int count = 0;
  };
  // (the table has twice as many slots as lists: a probe ends at an empty slot)
  std::vector<std::uint32_t> slots_ = std::vector<std::uint32_t>(2 * kMaxLists, 0);
  std::vector<List> lists_;
  std::vector<BatchCandidate> candidates_;
};

}  // namespace

const BatchCandidate* memoised_valid_splits(int replicas, double init_batch_size, const BatchLimits& lim,
                                            int& count) noexcept {
  thread_local SplitMemo memo;
  try {
    return memo.find(replicas, init_batch_size, lim, count);
  } catch (...) {  // (out of memory: the same list, made again in a buffer of the thread's)
    thread_local BatchCandidate buffer[kMaxBufferedCandidates];
    count = valid_splits(replicas, init_batch_size, lim, buffer);
    return buffer;
  }
}

}  // namespace detail

GoodputMemo::Stats GoodputMemo::stats() const noexcept {
  Stats sum;
  try {
    for (const auto& s : impl_->shards) {
      const std::lock_guard<std::mutex> lock(s->mutex);
      sum.lookups += s->stats.lookups;
      sum.hits += s->stats.hits;
    }
    return sum;
  } catch (...) {
    return Stats{};
  }
}

}  // namespace sia
