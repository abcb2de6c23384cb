// Interchangeable groups (classes.hpp): a cheap key per group first, then, among the groups whose
// key another shares, hash their items and compare exactly the groups of equal hashes.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <numeric>

#include "milp/native/classes.hpp"

namespace sia::detail::native {
namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t x) {
  // splitmix64-style combination: cheap and well spread.
  h ^= x + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ULL;
  return h ^ (h >> 29);
}

std::uint64_t bits(double v) {
  std::uint64_t u = 0;
  if (v == 0.0) v = 0.0;  // +0 and -0 are the same value
  std::memcpy(&u, &v, sizeof u);
  return u;
}

// Any hash that equal groups share finds the same classes (equal groups always share a hash, and
// each joins the first equal group of that hash, whatever the hash); collisions only cost
// comparisons. Each item's value and "none" mark are mixed independently of the other items' (a
// sum of products the processor overlaps: a chain of dependent multiplications through every number
// of a round cost about a millisecond), the item's place in its group by a rotation, and one mix per
// group. The usages are left out: groups of the same values but other usages (rare: a value is a
// job's utility of a configuration) only meet in same_items(), and mixing them in was a third of
// this pass's arithmetic.
std::uint64_t group_hash(const Problem& p, int g) {
  constexpr std::uint64_t kOdd = 0x9E3779B97F4A7C15ULL;
  const int b = p.begin(g), e = p.end(g);
  std::uint64_t h = static_cast<std::uint64_t>(e - b) * kOdd;
  for (int it = b; it < e; ++it) {
    const auto iu = static_cast<std::size_t>(it);
    const std::uint64_t x = (bits(p.value[iu]) ^ (p.column[iu] < 0 ? 1u : 2u)) * kOdd;
    h += std::rotl(x ^ (x >> 29), (it - b) & 63);
  }
  return mix(h, 0);
}

bool same_items(const Problem& p, int a, int b) {
  if (p.end(a) - p.begin(a) != p.end(b) - p.begin(b)) return false;
  for (int i = p.begin(a), j = p.begin(b); i < p.end(a); ++i, ++j) {
    const auto iu = static_cast<std::size_t>(i), ju = static_cast<std::size_t>(j);
    if (bits(p.value[iu]) != bits(p.value[ju]) || (p.column[iu] < 0) != (p.column[ju] < 0)) return false;
    const int ni = p.use_begin[iu + 1] - p.use_begin[iu];
    if (ni != p.use_begin[ju + 1] - p.use_begin[ju]) return false;
    for (int q = 0; q < ni; ++q) {
      const auto qi = static_cast<std::size_t>(p.use_begin[iu] + q), qj = static_cast<std::size_t>(p.use_begin[ju] + q);
      if (p.use_row[qi] != p.use_row[qj] || bits(p.use_val[qi]) != bits(p.use_val[qj])) return false;
    }
  }
  return true;
}

}  // namespace

Classes find_classes(const Problem& p, const Parallel& par, bool box) {
  const int G = p.num_groups();
  // What price_box() needs of the items (its own pass over them cost about as much as this one):
  // per block, then combined (largest and least values: exact in any order). With it, per group a
  // cheap key of what equal groups share — their number of items and their first two items' values
  // (+0 = -0) — read in the same pass.
  const auto K = static_cast<std::size_t>(p.num_rows);
  constexpr int kBlock = 1024;
  const auto nb = static_cast<std::size_t>(Parallel::num_blocks(G, kBlock));
  PriceBoxParts parts(box ? nb : 0, K, box ? static_cast<std::size_t>(G) : 0);
  std::vector<std::uint64_t> key(static_cast<std::size_t>(G));
  par.blocks(G, kBlock, [&](int blk, int b, int e) {
    // (The arrays through local pointers: the loop keeps them in registers.)
    const int* gb = p.group_begin.data();
    const double* val = p.value.data();
    for (int g = b; g < e; ++g) {
      const int ib = gb[g], ie = gb[g + 1];
      key[static_cast<std::size_t>(g)] =
          mix(mix(static_cast<std::uint64_t>(ie - ib) * 0x9E3779B97F4A7C15ULL, ib < ie ? bits(val[ib]) : 0),
              ib + 1 < ie ? bits(val[ib + 1]) : 0);
      if (box)
        parts.spread[static_cast<std::size_t>(g)] = gather_group_box(p, g, parts.ratio_of(blk), parts.amin_of(blk));
    }
  });
  // Equal groups share a key, so a group whose key no other group has is a class of its own: most
  // groups of a round (their utilities differ). The keys go into an open-addressing table (the
  // first group of each key); the groups whose key another group shares are hashed in full and
  // classed as below, in index order, the others left alone.
  std::size_t cap = 16;
  while (cap < 2 * static_cast<std::size_t>(G)) cap *= 2;
  std::vector<int> slot(cap, -1);
  std::vector<char> shared(static_cast<std::size_t>(G), 0);
  bool any_shared = false;
  for (int g = 0; g < G; ++g) {
    const std::uint64_t h = key[static_cast<std::size_t>(g)];
    std::size_t pos = static_cast<std::size_t>(h) & (cap - 1);
    while (slot[pos] >= 0 && key[static_cast<std::size_t>(slot[pos])] != h) pos = (pos + 1) & (cap - 1);
    if (slot[pos] < 0) {
      slot[pos] = g;
    } else {
      shared[static_cast<std::size_t>(slot[pos])] = 1;
      shared[static_cast<std::size_t>(g)] = 1;
      any_shared = true;
    }
  }
  Classes c;
  if (!any_shared) {
    // Every group its own class: what the general construction below gives then.
    c = singleton_classes(p);
  } else {
    // Each shared group joins the first earlier group (by index) of its hash that it equals, else
    // heads a class: their hashes in an open-addressing table (the first head of each hash), the
    // later heads of a hash chained in index order. (An equal group is always shared, so the
    // groups left alone head their own classes.)
    std::vector<int> leader(static_cast<std::size_t>(G), -1);
    std::vector<std::uint64_t> hash(static_cast<std::size_t>(G));
    std::fill(slot.begin(), slot.end(), -1);
    std::vector<int> next_head(static_cast<std::size_t>(G), -1);
    int joined = 0;  // groups that joined an earlier one
    for (int g = 0; g < G; ++g) {
      if (!shared[static_cast<std::size_t>(g)]) {
        leader[static_cast<std::size_t>(g)] = g;
        continue;
      }
      const std::uint64_t h = hash[static_cast<std::size_t>(g)] = group_hash(p, g);
      std::size_t pos = static_cast<std::size_t>(h) & (cap - 1);
      while (slot[pos] >= 0 && hash[static_cast<std::size_t>(slot[pos])] != h) pos = (pos + 1) & (cap - 1);
      int head = slot[pos];
      if (head < 0) {
        slot[pos] = g;
        leader[static_cast<std::size_t>(g)] = g;
        continue;
      }
      int found = -1, last = -1;
      for (; head >= 0; last = head, head = next_head[static_cast<std::size_t>(head)])
        if (same_items(p, head, g)) {
          found = head;
          break;
        }
      if (found < 0) {
        next_head[static_cast<std::size_t>(last)] = g;
        found = g;
      }
      leader[static_cast<std::size_t>(g)] = found;
      joined += found != g ? 1 : 0;
    }
    if (joined == 0) {
      // (Keys shared, but no two groups equal: every group its own class.)
      c = singleton_classes(p);
    } else {
      c.class_of.assign(static_cast<std::size_t>(G), -1);
      c.rep.reserve(static_cast<std::size_t>(G));  // (at most a class per group: room for all at once)
      c.mult.reserve(static_cast<std::size_t>(G));
      for (int g = 0; g < G; ++g) {
        const int l = leader[static_cast<std::size_t>(g)];
        if (l == g) {
          c.class_of[static_cast<std::size_t>(g)] = static_cast<int>(c.rep.size());
          c.rep.push_back(g);
          c.mult.push_back(0);
        } else {
          c.class_of[static_cast<std::size_t>(g)] = c.class_of[static_cast<std::size_t>(l)];
        }
        ++c.mult[static_cast<std::size_t>(c.class_of[static_cast<std::size_t>(g)])];
      }
      c.member_begin.assign(c.rep.size() + 1, 0);
      for (std::size_t k = 0; k < c.rep.size(); ++k) c.member_begin[k + 1] = c.member_begin[k] + c.mult[k];
      c.members.resize(static_cast<std::size_t>(G));
      std::vector<int> fill(c.member_begin.begin(), c.member_begin.end() - 1);
      for (int g = 0; g < G; ++g)
        c.members[static_cast<std::size_t>(fill[static_cast<std::size_t>(c.class_of[static_cast<std::size_t>(g)])]++)] =
            g;
    }
  }
  if (box) parts.set_price_box(c);
  return c;
}

void gather_price_box(const Problem& p, Classes& c, const Parallel& par) {
  const int G = p.num_groups();
  constexpr int kBlock = 1024;
  PriceBoxParts parts(static_cast<std::size_t>(Parallel::num_blocks(G, kBlock)), static_cast<std::size_t>(p.num_rows),
                      static_cast<std::size_t>(G));
  par.blocks(G, kBlock, [&](int blk, int b, int e) {
    for (int g = b; g < e; ++g)
      parts.spread[static_cast<std::size_t>(g)] = gather_group_box(p, g, parts.ratio_of(blk), parts.amin_of(blk));
  });
  parts.set_price_box(c);
}

Classes singleton_classes(const Problem& p) {
  const int G = p.num_groups();
  Classes c;
  c.rep.resize(static_cast<std::size_t>(G));
  std::iota(c.rep.begin(), c.rep.end(), 0);
  c.mult.assign(static_cast<std::size_t>(G), 1);
  c.member_begin.resize(static_cast<std::size_t>(G) + 1);
  std::iota(c.member_begin.begin(), c.member_begin.end(), 0);
  c.members = c.rep;
  c.class_of = c.rep;
  return c;
}

}  // namespace sia::detail::native
