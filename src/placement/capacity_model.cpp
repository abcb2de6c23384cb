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
  if (jobs.empty())
    return;  // (the counts are already those of the nodes' state: no kept job, as without reported placements)
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

void DemandSum::add(std::span<const ModelJob> jobs) {
  // A job whose item uses its whole slot 2^k adds 2^k at every threshold h = 2^l <= 2^k (add()'s
  // term with used = slot): summed per k, then added to every level <= k from the largest k down.
  // Integers: the same sums in any order.
  std::array<long long, 32> whole{};
  for (const ModelJob& j : jobs) {
    const int slot = j.slot;
    if (slot > 0 && (slot & (slot - 1)) == 0 && (j.used <= 0 || j.used >= slot)) {
      if (j.distributed) shares += j.nodes;
      whole[static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(slot)))] += slot;
    } else {
      add(j);
    }
  }
  long long above = 0;
  for (std::size_t l = items.size(); l-- > 0;) {
    above += whole[l];
    items[l] += above;
  }
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

/// The exact search's sets, each tested as evicted on the model. The counts are integers and an
/// eviction changes only its own nodes: for jobs whose nodes are disjoint, the counts after
/// evicting them all are the model's plus each job's change alone (each node changes as it would
/// alone, the sums over nodes add up). So each pool job's change is measured once (evicted and
/// returned on the model), and a set is tested from the sums of its jobs' changes — the same
/// verdict as evicting them, in the same order of sets — unless two of its jobs share a node,
/// which is then tested on the model itself. (Evicting each of ~18,000 sets a round on the model
/// cost a pass over every threshold per node, twice, for each job of the set.)
struct ExactSearch {
  ExactSearch(CapacityModel& model, const std::vector<ModelJob>& candidates, const std::vector<int>& useful)
      : m(model), cand(candidates), pool(useful) {}
  CapacityModel& m;
  const std::vector<ModelJob>& cand;
  const std::vector<int>& pool;
  std::vector<int> chosen;
  std::vector<int> best;
  long long best_gpus = std::numeric_limits<long long>::max();

  // A change as the counts feasible() reads: conflicts, eligible, shares, then C_h and I_h per level.
  int width = 0;
  std::vector<long long> base;      // the model's counts
  std::vector<long long> delta;     // pool job p's change at [p * width, (p + 1) * width)
  std::vector<long long> held;      // pool job p's GPUs (held_total)
  std::vector<long long> acc;       // base plus the changes of the chosen jobs but the last
  std::vector<int> touched;         // chosen jobs on each node
  std::vector<std::size_t> picked;  // pool positions of the chosen jobs
  int overlaps = 0;                 // nodes taken a second time by the chosen jobs

  void counts(std::span<long long> out) const {
    out[0] = m.conflicts();
    out[1] = m.eligible();
    out[2] = m.distributed_demand();
    for (int l = 0; l < m.levels(); ++l) {
      out[3 + 2 * static_cast<std::size_t>(l)] = m.capacity(l);
      out[4 + 2 * static_cast<std::size_t>(l)] = m.items(l);
    }
  }

  void prepare() {
    width = 3 + 2 * m.levels();
    const auto w = static_cast<std::size_t>(width);
    base.assign(w, 0);
    counts(base);
    delta.assign(pool.size() * w, 0);
    held.resize(pool.size());
    std::vector<long long> after(w);
    for (std::size_t p = 0; p < pool.size(); ++p) {
      const ModelJob& j = cand[static_cast<std::size_t>(pool[p])];
      held[p] = held_total(j);
      m.evict(j);
      counts(after);
      m.unevict(j);
      for (std::size_t x = 0; x < w; ++x) delta[p * w + x] = after[x] - base[x];
    }
    acc = base;
    touched.assign(static_cast<std::size_t>(m.num_nodes()), 0);
  }

  /// feasible() of the counts `a` plus pool job p's change.
  [[nodiscard]] bool feasible_with(const long long* a, std::size_t p) const {
    const long long* d = delta.data() + p * static_cast<std::size_t>(width);
    if (a[0] + d[0] > 0) return false;
    const long long shares = a[2] + d[2];
    if (a[1] + d[1] < shares) return false;
    const long long taken = static_cast<long long>(m.s()) * shares;
    for (int x = 3; x < width; x += 2)
      if (a[x + 1] + d[x + 1] > a[x] + d[x] - taken) return false;
    return true;
  }

  /// The chosen jobs and pool job p evicted on the model itself, in the search's order.
  [[nodiscard]] bool feasible_on_model(std::size_t p) {
    for (std::size_t q : picked) m.evict(cand[static_cast<std::size_t>(pool[q])]);
    const ModelJob& last = cand[static_cast<std::size_t>(pool[p])];
    m.evict(last);
    const bool ok = m.feasible();
    m.unevict(last);
    for (auto it = picked.rbegin(); it != picked.rend(); ++it) m.unevict(cand[static_cast<std::size_t>(pool[*it])]);
    return ok;
  }

  [[nodiscard]] bool shares_node(std::size_t p) const {
    if (overlaps > 0) return true;
    for (const auto& hg : cand[static_cast<std::size_t>(pool[p])].held)
      if (touched[static_cast<std::size_t>(hg.first)] > 0) return true;
    return false;
  }

  void add(std::size_t p, int sign) {
    const auto w = static_cast<std::size_t>(width);
    for (std::size_t x = 0; x < w; ++x) acc[x] += sign * delta[p * w + x];
    for (const auto& hg : cand[static_cast<std::size_t>(pool[p])].held) {
      int& t = touched[static_cast<std::size_t>(hg.first)];
      if (sign > 0) {
        if (t++ > 0) ++overlaps;
      } else if (--t > 0) {
        --overlaps;
      }
    }
  }

  /// Sets of k pool jobs from `start` on, in the order of choosing them one after the other (the
  /// first set with the fewest GPUs wins), after the chosen ones.
  void run(std::size_t start, std::size_t k, long long gpus) {
    const std::size_t remaining = k - chosen.size();
    if (remaining == 0) return;  // (k = 0: no set)
    for (std::size_t i = start; i + remaining <= pool.size(); ++i) {
      const long long g = gpus + held[i];
      if (remaining == 1) {
        if (g < best_gpus && (shares_node(i) ? feasible_on_model(i) : feasible_with(acc.data(), i))) {
          best_gpus = g;
          best = chosen;
          best.push_back(pool[i]);
        }
        continue;
      }
      add(i, +1);
      chosen.push_back(pool[i]);
      picked.push_back(i);
      run(i + 1, k, g);
      picked.pop_back();
      chosen.pop_back();
      add(i, -1);
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

  // 4. Greedy upper bound (on a copy of the model): the sizes searched go up to its size. Made
  // only once a set of one is not enough: it evicts at least one job whenever there is a
  // candidate (the model is not feasible), so sets of one are searched whatever it finds — and
  // most types of a round whose placements are reported need one eviction at most.
  std::vector<int> greedy;
  bool have_greedy = false;
  auto greedy_bound = [&]() -> std::vector<int>& {
    if (!have_greedy) {
      CapacityModel gm = m;
      greedy = greedy_evictions(gm, cand);
      have_greedy = true;
    }
    return greedy;
  };

  ExactSearch search(m, cand, pool);
  std::size_t spent = 0;
  // Sets of the greedy's size are searched too, so that among minimum sets the one moving the
  // fewest GPUs (then the lexicographically first) wins whenever the budget allows.
  for (std::size_t k = 1; k <= pool.size() && (k == 1 || k <= greedy_bound().size()); ++k) {
    const std::size_t sets = choose_saturating(pool.size(), k, budget);
    if (spent + sets > budget) break;
    spent += sets;
    if (k == 1) search.prepare();
    search.run(0, k, 0);
    if (!search.best.empty()) break;
  }
  if (!search.best.empty()) {
    greedy = search.best;
  } else {
    greedy_bound();
  }
  for (int c : greedy) plan.evicted.push_back(cand_index[static_cast<std::size_t>(c)]);
  std::sort(plan.evicted.begin(), plan.evicted.end());
  return plan;
}

}  // namespace sia::detail
