#include "placement/capacity_model.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <numeric>
#include <span>
#include <tuple>

namespace sia::detail {

namespace {

/// f - f mod h for h = 2^level.
long long floor_to(int f, int level) noexcept { return f <= 0 ? 0 : static_cast<long long>(f) & ~((1LL << level) - 1); }

/// n choose k, saturating at `cap`.
std::size_t choose_saturating(std::size_t n, std::size_t k, std::size_t cap) {
  if (k > n) return 0;
  k = std::min(k, n - k);
  long double r = 1;
  for (std::size_t i = 1; i <= k; ++i) {
    r = r * static_cast<long double>(n - k + i) / static_cast<long double>(i);
    if (r > static_cast<long double>(cap)) return cap + 1;
  }
  return static_cast<std::size_t>(r + 0.5L);
}

}  // namespace

CapacityModel::CapacityModel(int s, const std::vector<int>& node_size, long long reserved)
    : s_(s),
      levels_(s > 0 ? std::countr_zero(static_cast<unsigned>(s)) + 1 : 0),
      free_(node_size),
      dist_(node_size.size(), 0),
      cap_(static_cast<std::size_t>(levels_), 0),
      items_(static_cast<std::size_t>(levels_), 0) {
  recount();
  if (levels_ > 0) items_[0] += reserved;
}

void CapacityModel::recount() {
  std::fill(cap_.begin(), cap_.end(), 0LL);
  eligible_ = 0;
  conflicts_ = 0;
  for (std::size_t i = 0; i < free_.size(); ++i) {
    conflicts_ += std::max(0, dist_[i] - 1);
    if (free_[i] < 0) continue;  // down (or, past a share beyond its size, out of the model as change_free leaves it)
    for (int l = 0; l < levels_; ++l) cap_[static_cast<std::size_t>(l)] += floor_to(free_[i], l);
    if (is_eligible(i)) ++eligible_;
  }
}

void CapacityModel::add_all_kept(std::span<const ModelJob> jobs) {
  // change_free's and change_dist's updates of each node in the same order, their skips included
  // (a node that is down, or whose free count went below 0, takes no further change); the counts
  // that follow from the nodes' state are then worked out once.
  for (const ModelJob& j : jobs)
    for (const auto& [node, gpus] : j.held) {
      int& f = free_[static_cast<std::size_t>(node)];
      if (f < 0) continue;
      f -= gpus;
      if (j.distributed && gpus >= s_ && f >= 0) ++dist_[static_cast<std::size_t>(node)];
    }
  recount();
}

void CapacityModel::change_free(int node, int delta) {
  const auto i = static_cast<std::size_t>(node);
  if (free_[i] < 0 || delta == 0) return;  // down nodes are not part of the model
  const bool was = is_eligible(i);
  for (int l = 0; l < levels_; ++l) cap_[static_cast<std::size_t>(l)] -= floor_to(free_[i], l);
  free_[i] += delta;
  for (int l = 0; l < levels_; ++l) cap_[static_cast<std::size_t>(l)] += floor_to(free_[i], l);
  eligible_ += static_cast<long long>(is_eligible(i)) - static_cast<long long>(was);
}

void CapacityModel::change_dist(int node, int delta) {
  const auto i = static_cast<std::size_t>(node);
  if (free_[i] < 0) return;
  const bool was = is_eligible(i);
  conflicts_ -= std::max(0, dist_[i] - 1);
  dist_[i] += delta;
  conflicts_ += std::max(0, dist_[i] - 1);
  eligible_ += static_cast<long long>(is_eligible(i)) - static_cast<long long>(was);
}

void CapacityModel::add_kept(const ModelJob& j, int sign) {
  for (const auto& [node, gpus] : j.held) {
    change_free(node, -sign * gpus);
    // Only a whole share makes a node a distributed job's; a rigid job's tail is an item.
    if (j.distributed && gpus >= s_) change_dist(node, sign);
  }
}

void CapacityModel::add_demand(const ModelJob& j, int sign) {
  if (j.distributed) shares_ += sign * j.nodes;
  const int slot = j.slot;
  const int used = j.used > 0 ? std::min(j.used, slot) : slot;
  for (int l = 0; l < levels_ && (1 << l) <= slot; ++l)
    items_[static_cast<std::size_t>(l)] += sign * (used + ((slot - used) & ((1 << l) - 1)));
}

void DemandSum::add(const ModelJob& j, int sign) {
  // add_demand's sums for every threshold up to the slot; add_demand(DemandSum) keeps the model's.
  if (j.distributed) shares += sign * j.nodes;
  const int slot = j.slot;
  const int used = j.used > 0 ? std::min(j.used, slot) : slot;
  for (int l = 0; l < static_cast<int>(items.size()) && (1LL << l) <= slot; ++l)
    items[static_cast<std::size_t>(l)] += sign * (used + ((slot - used) & ((1 << l) - 1)));
}

void CapacityModel::add_demand(const DemandSum& d, int sign) {
  shares_ += sign * d.shares;
  for (int l = 0; l < levels_; ++l) items_[static_cast<std::size_t>(l)] += sign * d.items[static_cast<std::size_t>(l)];
}

bool CapacityModel::feasible() const noexcept {
  if (conflicts_ > 0 || eligible_ < shares_) return false;
  const long long taken = static_cast<long long>(s_) * shares_;
  for (int l = 0; l < levels_; ++l)
    if (items_[static_cast<std::size_t>(l)] > cap_[static_cast<std::size_t>(l)] - taken) return false;
  return true;
}

long long CapacityModel::deficit() const noexcept {
  const long long taken = static_cast<long long>(s_) * shares_;
  long long d = conflicts_ * (static_cast<long long>(s_) + 1) * 1024;
  d += std::max(0LL, shares_ - eligible_) * s_;
  for (int l = 0; l < levels_; ++l)
    d += std::max(0LL, items_[static_cast<std::size_t>(l)] - (cap_[static_cast<std::size_t>(l)] - taken));
  return d;
}

int CapacityModel::largest_violated_level() const noexcept {
  const long long taken = static_cast<long long>(s_) * shares_;
  for (int l = levels_ - 1; l >= 0; --l)
    if (items_[static_cast<std::size_t>(l)] > cap_[static_cast<std::size_t>(l)] - taken) return 1 << l;
  return 0;
}

namespace {

int held_total(const ModelJob& j) {
  int t = 0;
  for (const auto& hg : j.held) t += hg.second;
  return t;
}

/// Targeted greedy: repeatedly free, on the node that needs the fewest evictions, what the most
/// pressing condition lacks (conflicts, then an eligible node, then a block of the largest
/// violated threshold). Returns the evicted candidates (applied to `m`), or all of them if the
/// greedy gets stuck. Then prunes: re-keeps every evicted job whose return keeps `m` feasible.
std::vector<int> greedy_evictions(CapacityModel& m, const std::vector<ModelJob>& cand) {
  const int n_nodes = m.num_nodes();
  // Single-node candidates per node, largest holding first: evicting the largest first reaches
  // any amount of freed GPUs with the fewest jobs. Distributed candidates per node in candidate
  // order. Both as compressed rows (node i's are [begin[i], begin[i + 1])): a vector per node cost
  // an allocation per node, thousands per type at 100,000 GPUs.
  const auto nn = static_cast<std::size_t>(n_nodes);
  std::vector<int> singles_begin(nn + 1, 0), dists_begin(nn + 1, 0);
  for (const ModelJob& j : cand)
    for (const auto& hg : j.held)
      ++(j.distributed ? dists_begin : singles_begin)[static_cast<std::size_t>(hg.first) + 1];
  for (std::size_t i = 0; i < nn; ++i) {
    singles_begin[i + 1] += singles_begin[i];
    dists_begin[i + 1] += dists_begin[i];
  }
  // (gpus held on the node, candidate, its footprint): the search below reads the footprint of
  // each job it visits, every round of it; from the candidates it was a cache miss a job.
  struct Single {
    int gpus;
    int c;
    int footprint;
  };
  std::vector<Single> singles_all(static_cast<std::size_t>(singles_begin[nn]));
  std::vector<int> dists_all(static_cast<std::size_t>(dists_begin[nn]));
  {
    std::vector<int> s_fill(singles_begin.begin(), singles_begin.end() - 1);
    std::vector<int> d_fill(dists_begin.begin(), dists_begin.end() - 1);
    for (std::size_t c = 0; c < cand.size(); ++c)
      for (const auto& [node, gpus] : cand[c].held) {
        const auto n = static_cast<std::size_t>(node);
        if (cand[c].distributed)
          dists_all[static_cast<std::size_t>(d_fill[n]++)] = static_cast<int>(c);
        else
          singles_all[static_cast<std::size_t>(s_fill[n]++)] = {gpus, static_cast<int>(c), cand[c].footprint};
      }
  }
  auto singles = [&](int i) {
    const auto n = static_cast<std::size_t>(i);
    return std::span<Single>(singles_all.data() + singles_begin[n],
                             static_cast<std::size_t>(singles_begin[n + 1] - singles_begin[n]));
  };
  auto dists = [&](int i) {
    const auto n = static_cast<std::size_t>(i);
    return std::span<const int>(dists_all.data() + dists_begin[n],
                                static_cast<std::size_t>(dists_begin[n + 1] - dists_begin[n]));
  };
  for (int i = 0; i < n_nodes; ++i) {
    const auto v = singles(i);
    std::sort(v.begin(), v.end(),
              [](const Single& a, const Single& b) { return a.gpus != b.gpus ? a.gpus > b.gpus : a.c < b.c; });
  }

  std::vector<char> out(cand.size(), 0);
  std::vector<int> order;
  auto evict = [&](int c) {
    m.evict(cand[static_cast<std::size_t>(c)]);
    out[static_cast<std::size_t>(c)] = 1;
    order.push_back(c);
  };

  bool stuck = false;
  while (!m.feasible() && !stuck) {
    if (m.conflicts() > 0) {
      for (int i = 0; i < n_nodes; ++i) {
        if (m.kept_distributed(i) <= 1) continue;
        int victim = -1;
        for (int c : dists(i))
          if (!out[static_cast<std::size_t>(c)]) victim = std::max(victim, c);
        evict(victim);
        break;
      }
      continue;
    }
    // Best node: fewest evictions, then fewest GPUs moved, then lowest index.
    std::tuple<int, int, int> best{std::numeric_limits<int>::max(), 0, -1};
    std::vector<int> best_jobs;
    std::vector<int> jobs;
    const bool need_node = m.eligible() < m.distributed_demand();
    const int h = need_node ? 0 : m.largest_violated_level();
    for (int i = 0; i < n_nodes; ++i) {
      if (!m.up(i)) continue;
      const int f = m.free(i);
      int need = 0;
      if (need_node) {
        if (m.kept_distributed(i) > 0 || f >= m.s()) continue;
        need = m.s() - f;
      } else {
        need = (f / h + 1) * h - f;
      }
      jobs.clear();
      int freed = 0;
      for (const Single& x : singles(i)) {
        if (freed >= need) break;
        if (out[static_cast<std::size_t>(x.c)]) continue;
        // A job of footprint >= h brings its own demand for h-blocks: no net gain.
        if (!need_node && x.footprint >= h) continue;
        // One more job than the best node needs: this node cannot win (its key's first part).
        if (static_cast<int>(jobs.size()) >= std::get<0>(best)) break;
        jobs.push_back(x.c);
        freed += x.gpus;
      }
      if (freed < need) continue;
      std::tuple<int, int, int> key{static_cast<int>(jobs.size()), freed, i};
      if (key < best) {
        best = key;
        best_jobs = jobs;
      }
    }
    if (best_jobs.empty()) {
      stuck = true;
      break;
    }
    for (int c : best_jobs) evict(c);
  }
  if (stuck) {
    for (std::size_t c = 0; c < cand.size(); ++c)
      if (!out[c]) evict(static_cast<int>(c));
  }
  // Prune, latest eviction first.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const auto c = static_cast<std::size_t>(*it);
    m.unevict(cand[c]);
    if (m.feasible()) {
      out[c] = 0;
    } else {
      m.evict(cand[c]);
    }
  }
  std::vector<int> result;
  for (std::size_t c = 0; c < cand.size(); ++c)
    if (out[c]) result.push_back(static_cast<int>(c));
  return result;
}

/// Candidates whose eviction can help at all (see the proof sketch in plan_evictions).
std::vector<int> useful_candidates(const CapacityModel& m, const std::vector<ModelJob>& cand) {
  std::vector<int> useful;
  const int h = m.largest_violated_level();
  const bool need_node = m.eligible() < m.distributed_demand();
  for (std::size_t c = 0; c < cand.size(); ++c) {
    const ModelJob& j = cand[c];
    bool ok = m.conflicts() > 0 || (j.distributed && j.slot > 0 && (j.slot < h || need_node));
    if (!ok && !j.distributed) {
      ok = j.footprint < h;
      if (!ok && need_node)
        for (const auto& hg : j.held)
          if (m.kept_distributed(hg.first) == 0 && m.free(hg.first) < m.s()) ok = true;
    }
    if (ok) useful.push_back(static_cast<int>(c));
  }
  return useful;
}

struct ExactSearch {
  CapacityModel& m;
  const std::vector<ModelJob>& cand;
  const std::vector<int>& pool;
  std::vector<int> chosen;
  std::vector<int> best;
  long long best_gpus = std::numeric_limits<long long>::max();

  void run(std::size_t start, std::size_t k, long long gpus) {
    if (chosen.size() == k) {
      if (gpus < best_gpus && m.feasible()) {
        best_gpus = gpus;
        best = chosen;
      }
      return;
    }
    const std::size_t remaining = k - chosen.size();
    for (std::size_t i = start; i + remaining <= pool.size(); ++i) {
      const ModelJob& j = cand[static_cast<std::size_t>(pool[i])];
      m.evict(j);
      chosen.push_back(pool[i]);
      run(i + 1, k, gpus + held_total(j));
      chosen.pop_back();
      m.unevict(j);
    }
  }
};

}  // namespace

EvictionPlan plan_evictions(int s, const std::vector<int>& node_size, long long reserved,
                            const std::vector<ModelJob>& candidates, const std::vector<ModelJob>& movers,
                            std::size_t budget) {
  EvictionPlan plan;
  const std::size_t n_cand = candidates.size();

  // 1. Can the allocation fit at all (everyone re-placed from scratch)? If not, drop jobs: the
  // one whose removal shrinks the deficit most, then the larger, then movers before candidates
  // (jobs that keep their configuration are running), then the later one.
  std::vector<char> cand_dropped(n_cand, 0);
  std::vector<char> mover_dropped(movers.size(), 0);
  // The demands summed once each: the whole allocation's model and the kept jobs' below add them.
  DemandSum cand_demand, mover_demand;
  cand_demand.add(candidates);
  mover_demand.add(movers);
  // The empty type, counted once (copied for each model below, not counted again from the nodes).
  const CapacityModel empty(s, node_size, reserved);
  {
    CapacityModel all = empty;
    all.add_demand(cand_demand);
    all.add_demand(mover_demand);
    while (!all.feasible()) {
      std::tuple<long long, int, int, int> best{std::numeric_limits<long long>::max(), 0, 0, 0};
      int best_kind = -1;
      int best_index = -1;
      auto consider = [&](const ModelJob& j, int kind, int index) {
        all.add_demand(j, -1);
        std::tuple<long long, int, int, int> key{all.deficit(), -j.footprint, kind, -index};
        all.add_demand(j, +1);
        if (key < best) {
          best = key;
          best_kind = kind;
          best_index = index;
        }
      };
      for (std::size_t i = 0; i < movers.size(); ++i)
        if (!mover_dropped[i]) consider(movers[i], 0, static_cast<int>(i));
      for (std::size_t i = 0; i < n_cand; ++i)
        if (!cand_dropped[i]) consider(candidates[i], 1, static_cast<int>(i));
      if (best_kind < 0) break;  // nothing left to drop (only reservations remain)
      if (best_kind == 0) {
        mover_dropped[static_cast<std::size_t>(best_index)] = 1;
        all.add_demand(movers[static_cast<std::size_t>(best_index)], -1);
        plan.dropped_movers.push_back(best_index);
      } else {
        cand_dropped[static_cast<std::size_t>(best_index)] = 1;
        all.add_demand(candidates[static_cast<std::size_t>(best_index)], -1);
        plan.dropped_candidates.push_back(best_index);
      }
    }
    std::sort(plan.dropped_movers.begin(), plan.dropped_movers.end());
    std::sort(plan.dropped_candidates.begin(), plan.dropped_candidates.end());
  }

  // 2. The reduced instance: remaining candidates kept, remaining movers to place (the candidates
  // themselves when none was dropped, as in almost every round: no copy of 20,000 jobs' holdings).
  std::vector<ModelJob> reduced;
  std::vector<int> cand_index;
  for (std::size_t i = 0; i < n_cand; ++i)
    if (!cand_dropped[i]) {
      if (!plan.dropped_candidates.empty()) reduced.push_back(candidates[i]);
      cand_index.push_back(static_cast<int>(i));
    }
  const std::vector<ModelJob>& cand = plan.dropped_candidates.empty() ? candidates : reduced;
  CapacityModel m = empty;
  m.add_all_kept(cand);
  m.add_demand(mover_demand);
  for (int i : plan.dropped_movers) m.add_demand(movers[static_cast<std::size_t>(i)], -1);
  if (m.feasible()) return plan;

  // 3. Exact search over the candidates that can help. Evicting a job never lowers a threshold
  // capacity by more than it adds to that threshold's demand at or below its footprint, and only
  // helps thresholds above its footprint or an ineligible node it sits on; so a job whose
  // footprint is >= the largest violated threshold (and that sits on no node that could become
  // eligible) is never needed, and a minimum set never contains one.
  const std::vector<int> pool = useful_candidates(m, cand);

  // 4. Greedy upper bound (on a copy of the model).
  CapacityModel gm = m;
  std::vector<int> greedy = greedy_evictions(gm, cand);

  ExactSearch search{m, cand, pool, {}, {}, std::numeric_limits<long long>::max()};
  std::size_t spent = 0;
  // Sets of the greedy's size are searched too, so that among minimum sets the one moving the
  // fewest GPUs (then the lexicographically first) wins whenever the budget allows.
  for (std::size_t k = 1; k <= greedy.size() && k <= pool.size(); ++k) {
    const std::size_t sets = choose_saturating(pool.size(), k, budget);
    if (spent + sets > budget) break;
    spent += sets;
    search.run(0, k, 0);
    if (!search.best.empty()) {
      greedy = search.best;
      break;
    }
  }
  for (int c : greedy) plan.evicted.push_back(cand_index[static_cast<std::size_t>(c)]);
  std::sort(plan.evicted.begin(), plan.evicted.end());
  return plan;
}

}  // namespace sia::detail
