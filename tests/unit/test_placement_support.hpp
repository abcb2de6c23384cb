#pragma once
// Helpers of the placement tests: cluster builders, an independent checker of the placement
// rules, and an exhaustive (exponential, small instances only) placeability test used to verify
// that evictions are necessary and minimal.
#include <sia/cluster.hpp>
#include <sia/placement.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace sia::test {

inline ClusterSpec cluster_of(std::vector<std::tuple<std::string, int, int>> types) {
  ClusterSpec c;
  for (auto& [name, nodes, size] : types) c.types.emplace_back(name, nodes, size);
  return c;
}

inline int largest_vnode(const ClusterSpec& c, int t) {
  const int r = c.types[static_cast<std::size_t>(t)].gpus_per_node();
  return r > 0 ? static_cast<int>(std::bit_floor(static_cast<unsigned>(r))) : 0;
}

inline PlacementRequest request(std::string job, std::optional<ConfigurationSpec> cfg, int gpus = 0,
                                std::optional<CurrentAllocation> cur = std::nullopt) {
  PlacementRequest r;
  r.job = std::move(job);
  r.config = cfg;
  r.gpus = gpus;
  r.current = std::move(cur);
  return r;
}

inline int used_gpus(const PlacementRequest& r) { return r.gpus == 0 && r.config ? r.config->gpus : r.gpus; }

/// May the request keep its GPUs (same rule as the Placer, restated independently)?
inline bool keepable(const ClusterSpec& c, const PlacementRequest& r) {
  if (!r.config || !r.current || r.current->placement.empty()) return false;
  const auto& cur = *r.current;
  if (cur.type != r.config->type || cur.gpus != used_gpus(r)) return false;
  for (const auto& sh : cur.placement)
    if (c.is_down(cur.type, sh.node)) return false;
  if (r.config->nodes == 1) return cur.placement.size() == 1;
  // A rigid remainder that joined a whole share: n − 1 nodes.
  if (used_gpus(r) < r.config->gpus && static_cast<int>(cur.placement.size()) == r.config->nodes - 1) return true;
  if (static_cast<int>(cur.placement.size()) != r.config->nodes) return false;
  for (const auto& sh : cur.placement)
    if (sh.gpus > largest_vnode(c, cur.type)) return false;
  return true;
}

/// Checks every rule on a result (doctest CHECKs).
inline void check_rules(const ClusterSpec& c, const std::vector<PlacementRequest>& reqs, const PlacementResult& res) {
  REQUIRE(res.placements.size() == reqs.size());
  REQUIRE(res.status.size() == reqs.size());
  REQUIRE(res.reserved.size() == c.types.size());
  // owner[(type, node, gpu)] = job index or -2 (reserved)
  std::map<std::tuple<int, int, int>, int> owner;
  std::map<std::pair<int, int>, int> dist_on_node;
  for (std::size_t j = 0; j < reqs.size(); ++j) {
    const auto& r = reqs[j];
    const auto& pl = res.placements[j];
    const auto st = res.status[j];
    if (!r.config) {
      CHECK(st == PlacementStatus::unallocated);
      CHECK(pl.empty());
      continue;
    }
    if (st == PlacementStatus::dropped) {
      CHECK(pl.empty());
      continue;
    }
    CHECK(st != PlacementStatus::unallocated);
    const ConfigurationSpec& cfg = *r.config;
    const int t = cfg.type;
    const int size = c.types[static_cast<std::size_t>(t)].gpus_per_node();
    const int s = largest_vnode(c, t);
    int total = 0;
    int prev_node = -1;
    for (const auto& sh : pl) {
      CHECK(sh.node > prev_node);  // sorted, distinct
      prev_node = sh.node;
      CHECK(sh.node >= 0);
      CHECK(sh.node < c.types[static_cast<std::size_t>(t)].num_nodes());
      CHECK_FALSE(c.is_down(t, sh.node));
      CHECK(sh.gpus == static_cast<int>(sh.gpu_ids.size()));
      CHECK(std::is_sorted(sh.gpu_ids.begin(), sh.gpu_ids.end()));
      for (int id : sh.gpu_ids) {
        CHECK(id >= 0);
        CHECK(id < size);
        const bool fresh = owner.emplace(std::tuple{t, sh.node, id}, static_cast<int>(j)).second;
        CHECK_MESSAGE(fresh, "GPU used twice: job " << r.job << " node " << sh.node << " gpu " << id);
      }
      total += sh.gpus;
      if (cfg.nodes >= 2) {
        // A rigid remainder may join a whole share on nodes larger than s (placement.hpp).
        CHECK(sh.gpus <= (used_gpus(r) < cfg.gpus ? size : s));
        // Whole shares never meet on a node; a rigid job's remainder is a single-node item.
        const int n = sh.gpus == s ? ++dist_on_node[{t, sh.node}] : 1;
        CHECK_MESSAGE(n == 1, "two distributed jobs share node " << sh.node);
      }
    }
    CHECK(total == used_gpus(r));
    CHECK((static_cast<int>(pl.size()) == cfg.nodes ||
           (used_gpus(r) < cfg.gpus && static_cast<int>(pl.size()) == cfg.nodes - 1)));
    if (st == PlacementStatus::kept) {
      // Exactly its old GPUs (ids compared when the request named them).
      REQUIRE(r.current);
      CHECK(r.current->placement.size() == pl.size());
      for (std::size_t k = 0; k < pl.size() && k < r.current->placement.size(); ++k) {
        auto cur = r.current->placement;
        std::sort(cur.begin(), cur.end(), [](const NodeShare& a, const NodeShare& b) { return a.node < b.node; });
        CHECK(cur[k].node == pl[k].node);
        CHECK(cur[k].gpus == pl[k].gpus);
        if (!cur[k].gpu_ids.empty()) {
          auto ids = cur[k].gpu_ids;
          std::sort(ids.begin(), ids.end());
          CHECK(ids == pl[k].gpu_ids);
        }
      }
    }
    // An unchanged job with a valid placement never moves unless reported evicted.
    if (keepable(c, r)) {
      CHECK((st == PlacementStatus::kept || st == PlacementStatus::evicted || st == PlacementStatus::dropped));
    } else {
      CHECK(st == PlacementStatus::placed);
    }
  }
  for (std::size_t t = 0; t < c.types.size(); ++t) {
    int up = 0;
    for (int i = 0; i < c.types[t].num_nodes(); ++i)
      if (!c.is_down(static_cast<int>(t), i)) up += c.types[t].gpus_per_node();
    const int want = std::clamp(c.reserved_gpus(static_cast<int>(t)), 0, up);
    int got = 0;
    for (const auto& sh : res.reserved[t]) {
      CHECK_FALSE(c.is_down(static_cast<int>(t), sh.node));
      CHECK(sh.gpus == static_cast<int>(sh.gpu_ids.size()));
      for (int id : sh.gpu_ids) {
        const bool fresh = owner.emplace(std::tuple{static_cast<int>(t), sh.node, id}, -2).second;
        CHECK_MESSAGE(fresh, "reserved GPU also used by a job: node " << sh.node << " gpu " << id);
      }
      got += sh.gpus;
    }
    CHECK(got == want);
  }
  // Status lists agree with the per-request status.
  std::vector<std::size_t> ev, dr;
  for (std::size_t j = 0; j < reqs.size(); ++j) {
    if (res.status[j] == PlacementStatus::evicted) ev.push_back(j);
    if (res.status[j] == PlacementStatus::dropped) dr.push_back(j);
  }
  CHECK(ev == res.evicted);
  CHECK(dr == res.dropped);
}

/// Exhaustive placeability of one type's movers around kept jobs (counts only: a node is a
/// number of free GPUs; single-node items need g free on one node, distributed jobs s free on
/// n distinct nodes without another distributed job; reserved GPUs need any free GPUs).
struct BruteType {
  int s = 0;
  std::vector<int> free;  // -1 = down
  std::vector<char> has_dist;
  std::vector<int> singles;  // footprints
  std::vector<int> dists;    // node counts
  int reserved = 0;

  bool place_dist(std::size_t k) {
    if (k == dists.size()) return place_single(0);
    return choose_nodes(k, 0, dists[k]);
  }
  bool choose_nodes(std::size_t k, std::size_t from, int left) {
    if (left == 0) return place_dist(k + 1);
    for (std::size_t i = from; i < free.size(); ++i) {
      if (free[i] < s || has_dist[i]) continue;
      free[i] -= s;
      has_dist[i] = 1;
      const bool ok = choose_nodes(k, i + 1, left - 1);
      free[i] += s;
      has_dist[i] = 0;
      if (ok) return true;
    }
    return false;
  }
  bool place_single(std::size_t k) {
    if (k == singles.size()) {
      long long total = 0;
      for (int f : free) total += std::max(f, 0);
      return total >= reserved;
    }
    std::set<int> tried;  // nodes with equal free space are interchangeable for counts
    for (std::size_t i = 0; i < free.size(); ++i) {
      if (free[i] < singles[k] || !tried.insert(free[i]).second) continue;
      free[i] -= singles[k];
      const bool ok = place_single(k + 1);
      free[i] += singles[k];
      if (ok) return true;
    }
    return false;
  }
  bool feasible() {
    std::sort(singles.begin(), singles.end(), std::greater<>());
    return place_dist(0);
  }
};

}  // namespace sia::test
