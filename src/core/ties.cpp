// Tie rules of the round (docs/reliability.md).
#include "core/ties.hpp"

#include <map>
#include <set>
#include <tuple>

#include "core/capacity_use.hpp"
#include "core/tenants.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sia::detail {

TieGroups::TieGroups(const Problem& pb, const Requirements& req) {
  const std::size_t n = pb.num_jobs();
  auto same_entries = [&](std::size_t a, std::size_t b) {
    const auto& x = pb.valid[a];
    const auto& y = pb.valid[b];
    if (x.size() != y.size()) return false;
    for (std::size_t k = 0; k < x.size(); ++k)
      if (x[k].config != y[k].config || x[k].gpus != y[k].gpus || !(x[k].util == y[k].util)) return false;
    return true;
  };
  auto same_job = [&](std::size_t a, std::size_t b) {
    return req.pinned[a] == req.pinned[b] && req.forced[a] == req.forced[b] && pb.current[a] == pb.current[b] &&
           pb.weight[a] == pb.weight[b] && pb.tenant[a] == pb.tenant[b] && same_entries(a, b);
  };
  // Groups of interchangeable jobs, found through a hash of what makes jobs interchangeable
  // (jobs chained by equal hashes, then compared exactly within each chain): the same groups as
  // comparing every pair, in O(n) instead of O(n^2) for rounds of thousands of jobs. The groups do
  // not depend on the hash — equal jobs hash alike whatever it is, and jobs of equal hashes are
  // compared exactly — only how many are compared.
  auto mix = [](std::uint64_t x) {  // a 64-bit finaliser (splitmix64)
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
  };
  auto entry_hash = [](const Entry& e) {
    const double u = e.util == 0.0 ? 0.0 : e.util;  // -0 == +0
    std::uint64_t bits = 0;
    std::memcpy(&bits, &u, sizeof bits);
    const std::uint64_t where =
        (static_cast<std::uint64_t>(static_cast<std::uint32_t>(e.config)) << 32) | static_cast<std::uint32_t>(e.gpus);
    // A light mix per entry (a multiply, a shift-xor and a multiply; a finaliser once per job).
    const std::uint64_t x = where * 0x9E3779B97F4A7C15ULL ^ bits;
    return (x ^ (x >> 29)) * 0xBF58476D1CE4E5B9ULL;
  };
  auto job_key = [&](std::size_t i) {
    return (static_cast<std::uint64_t>(req.pinned[i]) * 2 + static_cast<std::uint64_t>(req.forced[i])) ^
           (static_cast<std::uint64_t>(static_cast<std::int64_t>(pb.current[i])) << 2);
  };
  // First a hash of each job's requirement, current configuration, number of entries and first and
  // last entries: most jobs of a large round differ there already (their utilities carry their
  // restart factors), and reading two entries per job instead of all of them (330,000 at 20,000
  // jobs) was most of this. Only jobs that share that hash are hashed in full (below).
  // The loop is bound by the loads of the entries (3.9 MB at 20,000 jobs, rarely in cache after the
  // backend): each job's first and last entries are fetched a few jobs ahead (no effect on the result).
  constexpr std::size_t kAhead = 16;
  std::vector<std::uint64_t> hash(n);
  for (std::size_t i = 0; i < n; ++i) {
#if defined(__GNUC__)
    if (i + kAhead < n) {
      const auto w = pb.valid[i + kAhead];
      if (!w.empty()) {
        __builtin_prefetch(w.data());
        __builtin_prefetch(w.data() + (w.size() - 1));
      }
    }
#endif
    const auto v = pb.valid[i];
    std::uint64_t h = mix(job_key(i)) + v.size() * 0xD6E8FEB86659FD93ULL;
    if (!v.empty()) h += entry_hash(v.front()) + mix(entry_hash(v.back()));
    hash[i] = mix(h);
  }
  // A job's entries name distinct configurations, so the set of its (configuration, GPUs,
  // utility) triples is its list: their hashes are summed (independent of one another, which
  // keeps the multiplications of a job's entries in flight together instead of chained).
  auto full_hash = [&](std::size_t i) {
    std::uint64_t h = mix(job_key(i));
    for (const Entry& e : pb.valid[i]) h += entry_hash(e);
    return mix(h);
  };
  // Chains of jobs with equal hashes, each in input order, through an open-addressing table of
  // the distinct hashes. (The order of the groups is immaterial: they are disjoint, and
  // canonicalize() treats each alone.)
  // Jobs numbered in 32 bits and a slot's chain head and tail side by side: the table (2n slots or
  // more) is written in full every round, and a probe reads one line of it; with two arrays of
  // 64-bit numbers it was 1.1 MB at 20,000 jobs (its filling about a fifth of this pass).
  // (A round's jobs number far fewer than 2^32 - 1: each has its own inputs and entries.)
  using Job = std::uint32_t;
  constexpr Job none = static_cast<Job>(-1);
  struct Chain {
    Job head, tail;
  };
  // Most jobs share their hash with no other. A bit per bucket of the hashes' top bits, set when a
  // job falls in it and, in a second bitmap, when one did before, finds the jobs whose bucket holds
  // two or more (about 1,500 of 20,000 at 100,000 GPUs, mostly by chance; 64 KB of bitmaps instead
  // of a 512 KB table written in full): only those go into the table. Jobs of equal hashes share
  // their bucket, so the chains (and their heads, in input order) are the same.
  const int bucket_bits = std::max(6, static_cast<int>(std::bit_width(8 * n + 8)));
  const std::size_t buckets = std::size_t{1} << bucket_bits;
  std::vector<std::uint64_t> seen(buckets / 64, 0), twice(buckets / 64, 0);
  auto bucket_of = [&](std::size_t i) { return static_cast<std::size_t>(hash[i] >> (64 - bucket_bits)); };
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t b = bucket_of(i);
    const std::uint64_t bit = std::uint64_t{1} << (b & 63);
    twice[b >> 6] |= seen[b >> 6] & bit;
    seen[b >> 6] |= bit;
  }
  std::vector<std::size_t> candidates;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t b = bucket_of(i);
    if ((twice[b >> 6] >> (b & 63)) & 1U) candidates.push_back(i);
  }
  const std::size_t slots = std::bit_ceil(2 * candidates.size() + 2);
  std::vector<Chain> table(slots, Chain{none, none});
  std::vector<Job> next(n, none);
  std::vector<std::size_t> chained;  // the heads of chains of two jobs or more, in input order of their heads
  for (const std::size_t i : candidates) {
    std::size_t h = static_cast<std::size_t>(hash[i]) & (slots - 1);
    while (table[h].head != none && hash[table[h].head] != hash[i]) h = (h + 1) & (slots - 1);
    Chain& c = table[h];
    if (c.head == none) {
      c.head = c.tail = static_cast<Job>(i);
      continue;
    }
    if (next[c.head] == none) chained.push_back(c.head);
    next[c.tail] = static_cast<Job>(i);
    c.tail = static_cast<Job>(i);
  }
  std::vector<char> done(n, 0);
  std::vector<std::size_t> group, members;
  std::vector<std::pair<std::uint64_t, std::size_t>> by_full;
  begin_.assign(1, 0);
  // The groups among `members` (in input order): each job with the later ones equal to it.
  auto group_among = [&](const std::vector<std::size_t>& list) {
    for (std::size_t a = 0; a < list.size(); ++a) {
      const std::size_t i = list[a];
      if (done[i]) continue;
      group.assign(1, i);
      for (std::size_t b = a + 1; b < list.size(); ++b) {
        const std::size_t j = list[b];
        if (!done[j] && same_job(i, j)) {
          group.push_back(j);
          done[j] = 1;
        }
      }
      if (group.size() < 2) continue;
      jobs_.insert(jobs_.end(), group.begin(), group.end());
      begin_.push_back(jobs_.size());
    }
  };
  constexpr std::size_t kShortChain = 8;  // compared pairwise as they are; longer ones split first
  for (const std::size_t first : chained) {
    members.clear();
    for (std::size_t i = first; i != none; i = next[i]) members.push_back(i);
    if (members.size() <= kShortChain) {
      group_among(members);
      continue;
    }
    // A long chain: split by the full hash (stable: each part in input order), each part compared.
    by_full.clear();
    for (const std::size_t i : members) by_full.emplace_back(full_hash(i), i);
    std::sort(by_full.begin(), by_full.end());
    for (std::size_t a = 0; a < by_full.size();) {
      std::size_t b = a;
      members.clear();
      for (; b < by_full.size() && by_full[b].first == by_full[a].first; ++b) members.push_back(by_full[b].second);
      group_among(members);
      a = b;
    }
  }
}

void TieGroups::canonicalize(const Problem& pb, Choice& ch) const {
  std::vector<int> configs;
  for (std::size_t g = 0; g + 1 < begin_.size(); ++g) {
    const std::size_t* const group = jobs_.data() + begin_[g];
    const std::size_t size = begin_[g + 1] - begin_[g];
    configs.clear();
    for (std::size_t k = 0; k < size; ++k) configs.push_back(pb.config_of(ch, group[k]));
    std::sort(configs.begin(), configs.end(), [&](int x, int y) {
      if (x < 0 || y < 0) return x >= 0 && y < 0;
      const ConfigurationSpec& cx = pb.set.configs[static_cast<std::size_t>(x)];
      const ConfigurationSpec& cy = pb.set.configs[static_cast<std::size_t>(y)];
      if (cx.gpus != cy.gpus) return cx.gpus < cy.gpus;
      if (cx.type != cy.type) return cx.type < cy.type;
      if (cx.nodes != cy.nodes) return cx.nodes < cy.nodes;
      return x < y;
    });
    for (std::size_t k = 0; k < size; ++k) ch[group[k]] = configs[k] < 0 ? -1 : pb.entry_of(group[k], configs[k]);
  }
}

void canonicalize_ties(const Problem& pb, const Requirements& req, Choice& ch) {
  TieGroups(pb, req).canonicalize(pb, ch);
}

void prefer_current_on_ties(const Problem& pb, const Requirements& req, Choice& ch) {
  const std::size_t n = pb.num_jobs();
  // Gain (bigger is better) of job i on configuration c (-1 = no GPUs); nullopt when i may not take it.
  auto gain_on = [&](std::size_t i, int c) -> std::optional<double> {
    if (c < 0) {
      if (req.forced[i] || req.pinned[i]) return std::nullopt;
      return 0.0;
    }
    if (req.pinned[i] && c != pb.current[i]) return std::nullopt;
    const int k = pb.entry_of(i, c);
    if (k < 0) return std::nullopt;
    return pb.gain(i, pb.valid[i][static_cast<std::size_t>(k)]);
  };
  auto gpus_on = [&](std::size_t i, int c) { return pb.valid[i][static_cast<std::size_t>(pb.entry_of(i, c))].gpus; };
  // Per job its configuration in `ch` (kept up to date by the swaps below: one read of each job's
  // entry instead of one per pass), and the jobs holding each configuration that is not their
  // current one, latest first. Only the jobs off their current configuration (on none or another;
  // `off_current`, in input order) hold one or move: a swap puts k on its current configuration and
  // i, one of them, on another, so no other job ever qualifies. The loop below visits them (about
  // 600 of 20,000 jobs in a warm round at 100,000 GPUs) instead of every job, in the same order,
  // with the same tests.
  std::vector<int> config(n);
  std::vector<std::size_t> off_current;
  for (std::size_t i = 0; i < n; ++i) {
    config[i] = pb.config_of(ch, i);
    if (config[i] != pb.current[i]) off_current.push_back(i);
  }
  std::unordered_map<int, std::vector<std::size_t>> holders;
  for (std::size_t a = off_current.size(); a-- > 0;) {
    const std::size_t i = off_current[a];
    if (config[i] >= 0) holders[config[i]].push_back(i);
  }
  // A swap with holder i helps k when gk_cur + gi_other >= gi_cur + gk_other, i.e. when
  // gi_other - gi_cur reaches gk_other - gk_cur. Per (cur, other), an upper bound of
  // gi_other - gi_cur over holders[cur] lets a job skip a scan that cannot succeed (with a margin far
  // above rounding, so a skipped scan is one where the exact test fails for every holder): on large
  // rounds, where exact ties are rare, this turns the quadratic scan into a lookup.
  auto key_of = [](int cur, int other) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(cur)) << 32) | static_cast<std::uint32_t>(other);
  };
  std::unordered_map<std::uint64_t, double> bound;         // (cur, other) -> max over holders of gi_other - gi_cur
  std::unordered_map<int, std::vector<int>> bound_others;  // cur -> others with a cached bound
  auto diff = [&](std::size_t i, int cur, int other) -> std::optional<double> {
    const auto go = gain_on(i, other);
    const auto gc = gain_on(i, cur);
    if (!go || !gc) return std::nullopt;
    return *go - *gc;
  };
  auto bound_of = [&](int cur, int other, const std::vector<std::size_t>& list) {
    const auto key = key_of(cur, other);
    if (const auto it = bound.find(key); it != bound.end()) return it->second;
    double b = -std::numeric_limits<double>::infinity();
    for (std::size_t i : list)
      if (const auto d = diff(i, cur, other)) b = std::max(b, *d);
    bound.emplace(key, b);
    bound_others[cur].push_back(other);
    return b;
  };
  for (const std::size_t k : off_current) {
    const int cur = pb.current[k];
    if (cur < 0 || req.pinned[k] || config[k] == cur) continue;
    // No job holds k's current configuration (most moved jobs': the configurations are thousands at
    // 100,000 GPUs): nothing to swap with, known before k's entries are searched.
    const auto it = holders.find(cur);
    if (it == holders.end()) continue;
    const auto gk_cur = gain_on(k, cur);
    if (!gk_cur) continue;  // the current configuration is no longer usable (e.g. restart factor 0)
    auto& list = it->second;
    const int other = config[k];
    const auto gk_other = gain_on(k, other);
    if (!gk_other) continue;  // k cannot take its own choice: impossible, but then no swap helps
    const double need = *gk_other - *gk_cur;
    const double b = bound_of(cur, other, list);
    if (b < need - 1e-9 * (1.0 + std::abs(*gk_other) + std::abs(*gk_cur) + std::abs(b))) continue;
    for (std::size_t pos = 0; pos < list.size(); ++pos) {
      const std::size_t i = list[pos];
      if (config[i] != cur) continue;  // stale: i already gave this configuration away
      const auto gi_other = gain_on(i, other);
      const auto gi_cur = gain_on(i, cur);
      if (!gi_other || !gi_cur) continue;
      if (!(*gk_cur + *gi_other >= *gi_cur + *gk_other)) continue;
      // The swap keeps the capacity rows only when both jobs use as many GPUs on each
      // configuration (a rigid job on its footprint is charged its count, not the footprint).
      if (gpus_on(k, cur) != gpus_on(i, cur) || (other >= 0 && gpus_on(i, other) != gpus_on(k, other))) continue;
      ch[k] = pb.entry_of(k, cur);
      ch[i] = other < 0 ? -1 : pb.entry_of(i, other);
      config[k] = cur;
      config[i] = other;
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(pos));
      if (other >= 0 && other != pb.current[i]) {
        holders[other].push_back(i);
        // Keep the cached bounds of holders[other] upper bounds.
        if (const auto bo = bound_others.find(other); bo != bound_others.end())
          for (int o : bo->second)
            if (const auto d = diff(i, other, o)) {
              double& v = bound[key_of(other, o)];
              v = std::max(v, *d);
            }
      }
      break;
    }
  }
}

void canonicalize_equal_values(const Problem& pb, const Requirements& req, Choice& ch) {
  const std::size_t n = pb.num_jobs();
  auto rank = [&](std::size_t i, int c) {
    const ConfigurationSpec& x = pb.set.configs[static_cast<std::size_t>(c)];
    return std::tuple{c == pb.current[i] ? 0 : 1, x.gpus, x.type, x.nodes, c};
  };
  auto same_bits = [](double a, double b) {
    if (a == 0.0 && b == 0.0) return true;
    std::uint64_t x = 0, y = 0;
    std::memcpy(&x, &a, sizeof x);
    std::memcpy(&y, &b, sizeof y);
    return x == y;
  };
  auto bits_of = [](double u) {
    if (u == 0.0) u = 0.0;  // -0 == +0
    std::uint64_t x = 0;
    std::memcpy(&x, &u, sizeof x);
    return x;
  };
  // GPUs job `job` uses on configuration `config` (a rigid job on its footprint: its count): what
  // the capacity rows charge it there (CapacityUse).
  auto gpus_of = [&](std::size_t job, int config) {
    return pb.valid[job][static_cast<std::size_t>(pb.entry_of(job, config))].gpus;
  };
  // The allocation's capacity use. Like `holders` below, only a move reads or changes it: built
  // from the allocation just before its first use.
  CapacityUse usage(pb.set);
  bool usage_built = false;
  auto build_usage = [&] {
    if (usage_built) return;
    usage_built = true;
    for (std::size_t i = 0; i < n; ++i)
      if (ch[i] >= 0) {
        const Entry& e = pb.valid[i][static_cast<std::size_t>(ch[i])];  // (gpus_of(i, e.config))
        usage.add(e.config, e.gpus);
      }
  };
  // Configuration -> jobs holding it. Only a move reads or changes it, and most rounds have none
  // (a job whose configuration some other of bit-identical utility outranks is rare): it is built
  // from the allocation just before its first use, as it would stand had it been kept all along.
  std::map<int, std::set<std::size_t>> holders;
  bool holders_built = false;
  auto build_holders = [&] {
    if (holders_built) return;
    holders_built = true;
    for (std::size_t i = 0; i < n; ++i)
      if (ch[i] >= 0) holders[pb.config_of(ch, i)].insert(i);
  };
  std::vector<int> better;
  // Work bound for the searches over pairs of jobs (rounds of thousands of jobs): past it, the
  // decision is still valid and of equal value, only maybe not the canonical one.
  long long budget = 2'000'000;
  std::tuple<int, std::size_t, int> pending{};
  std::tuple<int, std::size_t, int> third_move{-1, 0, -1};
  for (int pass = 0; pass < 64; ++pass) {
    bool moved = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (ch[i] < 0 || req.pinned[i]) continue;
      const int a = pb.config_of(ch, i);
      if (a == pb.current[i]) continue;  // the status quo never moves
      const double ua = pb.valid[i][static_cast<std::size_t>(ch[i])].util;
      better.clear();
      for (const Entry& e : pb.valid[i])
        if (e.config != a && same_bits(e.util, ua) && rank(i, e.config) < rank(i, a)) better.push_back(e.config);
      std::sort(better.begin(), better.end(), [&](int x, int y) { return rank(i, x) < rank(i, y); });
      if (!better.empty()) {
        build_holders();
        build_usage();
      }
      for (const int b : better) {
        usage.remove(a, gpus_of(i, a));
        if (usage.fits(b, gpus_of(i, b))) {
          usage.add(b, gpus_of(i, b));
          ch[i] = pb.entry_of(i, b);
          holders[a].erase(i);
          holders[b].insert(i);
          moved = true;
          break;
        }
        usage.add(a, gpus_of(i, a));
        bool swapped = false;
        for (const std::size_t k : holders[b]) {
          if (req.pinned[k] || pb.current[k] == b) continue;
          const int ka = pb.entry_of(k, a);
          if (ka < 0) continue;
          const double kb_util = pb.valid[k][static_cast<std::size_t>(ch[k])].util;
          if (!same_bits(pb.valid[k][static_cast<std::size_t>(ka)].util, kb_util)) continue;
          if (k < i && !(rank(k, a) < rank(k, b))) continue;
          // A swap keeps the capacity rows only when both jobs are charged alike on both
          // configurations (a rigid job on its footprint is charged its count).
          if (gpus_of(i, b) != gpus_of(k, b) || pb.valid[k][static_cast<std::size_t>(ka)].gpus != gpus_of(i, a))
            continue;
          ch[i] = pb.entry_of(i, b);
          ch[k] = ka;
          holders[a].erase(i);
          holders[b].erase(k);
          holders[a].insert(k);
          holders[b].insert(i);
          swapped = true;
          break;
        }
        if (swapped) {
          moved = true;
          break;
        }
        // Both move: k leaves its configuration c for another d it values bit-identically, which
        // makes room for b (e.g. i on B:1 and k on A:2 against i on A:1 and k on B:2).
        usage.remove(a, gpus_of(i, a));
        third_move = {-1, 0, -1};
        for (auto it = holders.begin(); !swapped && it != holders.end(); ++it) {
          const int c = it->first;
          if (pb.set.configs[static_cast<std::size_t>(c)].type != pb.set.configs[static_cast<std::size_t>(b)].type)
            continue;
          for (const std::size_t k : it->second) {
            if (k == i || req.pinned[k] || pb.current[k] == c) continue;
            if (budget-- <= 0) break;
            const double uc = pb.valid[k][static_cast<std::size_t>(ch[k])].util;
            usage.remove(c, gpus_of(k, c));
            for (const Entry& e : pb.valid[k]) {
              const int d = e.config;
              if (d == c || !same_bits(e.util, uc)) continue;
              if (k < i && !(rank(k, d) < rank(k, c))) continue;
              if (!usage.fits(b, gpus_of(i, b))) break;
              usage.add(b, gpus_of(i, b));
              if (usage.fits(d, gpus_of(k, d))) {
                usage.add(d, gpus_of(k, d));
                ch[i] = pb.entry_of(i, b);
                ch[k] = pb.entry_of(k, d);
                holders[a].erase(i);
                holders[b].insert(i);
                pending = {c, k, d};
                swapped = true;
                break;
              }
              // Three move: a third job l leaves a configuration x of d's type for another y it
              // values alike (e.g. eight identical jobs moving between two types that score alike).
              bool third = false;
              for (auto lt = holders.begin(); !third && lt != holders.end(); ++lt) {
                const int x = lt->first;
                if (pb.set.configs[static_cast<std::size_t>(x)].type !=
                    pb.set.configs[static_cast<std::size_t>(d)].type)
                  continue;
                for (const std::size_t l : lt->second) {
                  if (l == i || l == k || req.pinned[l] || pb.current[l] == x) continue;
                  if (budget-- <= 0) break;
                  const double ux = pb.valid[l][static_cast<std::size_t>(ch[l])].util;
                  usage.remove(x, gpus_of(l, x));
                  if (usage.fits(d, gpus_of(k, d))) {
                    usage.add(d, gpus_of(k, d));
                    for (const Entry& f : pb.valid[l]) {
                      const int y = f.config;
                      if (y == x || !same_bits(f.util, ux)) continue;
                      if (l < i && !(rank(l, y) < rank(l, x))) continue;
                      if (usage.fits(y, gpus_of(l, y))) {
                        usage.add(y, gpus_of(l, y));
                        third_move = {x, l, y};
                        third = true;
                        break;
                      }
                    }
                    if (!third) usage.remove(d, gpus_of(k, d));
                  }
                  if (third) break;
                  usage.add(x, gpus_of(l, x));
                }
              }
              if (third) {
                ch[i] = pb.entry_of(i, b);
                ch[k] = pb.entry_of(k, d);
                ch[std::get<1>(third_move)] = pb.entry_of(std::get<1>(third_move), std::get<2>(third_move));
                holders[a].erase(i);
                holders[b].insert(i);
                pending = {c, k, d};
                swapped = true;
                break;
              }
              usage.remove(b, gpus_of(i, b));
            }
            if (swapped) break;
            usage.add(c, gpus_of(k, c));
          }
        }
        if (swapped) {
          // holders[c] was being iterated: update it now.
          const auto [c, k, d] = pending;
          holders[c].erase(k);
          holders[d].insert(k);
          if (const auto [x, l, y] = third_move; x >= 0) {
            holders[x].erase(l);
            holders[y].insert(l);
          }
          moved = true;
          break;
        }
        usage.add(a, gpus_of(i, a));
      }
    }
    // Who is served, among jobs of bit-identical value: an earlier job without GPUs takes the place
    // of a later one (not running there, not required to run) when it values some configuration
    // exactly as the later job values its own and that configuration fits in its place.
    // Candidates are found by utility (bits), so a round of thousands of jobs does not scan every pair.
    // Built when the first job without GPUs is met (most large rounds have none): no move happens
    // before it, so it is the map as it would stand had it been built first.
    std::unordered_map<std::uint64_t, std::set<std::size_t>> served_by_util;
    bool served_built = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (ch[i] >= 0) continue;
      if (!served_built) {
        served_built = true;
        for (std::size_t k = 0; k < n; ++k)
          if (ch[k] >= 0 && !req.pinned[k] && !req.forced[k] && pb.config_of(ch, k) != pb.current[k])
            served_by_util[bits_of(pb.valid[k][static_cast<std::size_t>(ch[k])].util)].insert(k);
      }
      bool served = false;
      // Latest candidate first: the last job of identical value gives way.
      std::size_t best_k = 0;
      bool found = false;
      for (const Entry& e : pb.valid[i]) {
        const auto it = served_by_util.find(bits_of(e.util));
        if (it == served_by_util.end() || it->second.empty()) continue;
        const std::size_t k = *it->second.rbegin();
        // Equal weights too: otherwise the two jobs' terms of the weighted objective differ.
        if (k > i && pb.weight[k] == pb.weight[i] && (!found || k > best_k)) {
          best_k = k;
          found = true;
        }
      }
      if (found && budget-- > 0) {
        const std::size_t k = best_k;
        const int c = pb.config_of(ch, k);
        const double uc = pb.valid[k][static_cast<std::size_t>(ch[k])].util;
        better.clear();
        for (const Entry& e : pb.valid[i])
          if (same_bits(e.util, uc)) better.push_back(e.config);
        std::sort(better.begin(), better.end(), [&](int x, int y) { return rank(i, x) < rank(i, y); });
        build_usage();
        usage.remove(c, gpus_of(k, c));
        for (const int d : better)
          if (usage.fits(d, gpus_of(i, d))) {
            usage.add(d, gpus_of(i, d));
            build_holders();  // from the allocation before this move
            ch[i] = pb.entry_of(i, d);
            ch[k] = -1;
            holders[c].erase(k);
            holders[d].insert(i);
            auto& list = served_by_util[bits_of(uc)];
            list.erase(k);
            if (!req.pinned[i] && !req.forced[i] && d != pb.current[i]) list.insert(i);
            served = true;
            break;
          }
        if (!served) usage.add(c, gpus_of(k, c));
      }
      moved = moved || served;
    }
    if (!moved) break;
  }
}

}  // namespace sia::detail

namespace sia::detail {

// --- the canonical decision, computed directly (issue 14 part 5) ---------------------------------
//
// The local rules above reach the canonical decision by moves of up to three jobs; equal-valued
// allocations further apart (four or more jobs moving at once) stayed backend-dependent. This
// searches a whole class of equal-valued allocations instead and returns its first member in a
// fixed order (depth-first search), so every backend's answer of the class ends in the same
// decision. The search depends only on the problem and on what defines the class, never on the
// allocation it starts from. Two classes, tried in turn:
//  1. every valid allocation whose objective (objective_of's sum of weighted terms, with the binary
//     program's λ when λ is capped) equals the given one's up to rounding (tolerance_: sums of the
//     same terms in another order, or of terms equal as real numbers, round differently);
//     exhaustive, so only for rounds small enough to settle within a share of the budget;
//  2. every valid allocation whose per-job weighted terms of the objective (weight times a utility,
//     or times the λ term of a job without GPUs) are, as bits, a permutation of the given
//     allocation's (then the objective is the same sum, up to the order of addition); the search
//     only follows terms of the multiset, so it settles rounds of thousands of jobs.
// "Valid": capacity, pins, and the tenants' rows (caps, guarantees) when the round has tenants.
namespace {

// The search's step loop takes and gives back options millions of times: GCC does not inline that
// lambda by itself (it is called from three places), which cost about 10 % of the search.
#if defined(__GNUC__)
#define SIA_TIES_INLINE __attribute__((always_inline))
#else
#define SIA_TIES_INLINE
#endif

std::uint64_t term_bits(double u) {
  if (u == 0.0) u = 0.0;  // -0 == +0
  std::uint64_t x = 0;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// dead_subtree_steps' states of one depth: each a short list of ints with its number of paths (capped).
// One array of every state's ints and an open-addressing table of them: a std::map of vectors cost a
// node and a vector per state and most of the count's time (about 0.25 ms of class 2's skip test per
// round of 20,000 jobs). The count does not depend on the order the states are visited in (its sums
// are capped sums of nonnegative numbers), only on which states are equal.
// Written here rather than taken from Boost: boost::unordered_flat_map needs Boost 1.81, Debian 12
// has 1.74, and std::unordered_map is the node-per-entry layout this replaces.
class StateSet {
 public:
  [[nodiscard]] std::size_t size() const { return paths_.size(); }
  [[nodiscard]] std::span<const int> state(std::size_t s) const {
    return {ints_.data() + begin_[s], ints_.data() + begin_[s + 1]};
  }
  [[nodiscard]] long long paths(std::size_t s) const { return paths_[s]; }
  /// Adds `paths` to state `key`'s (0 when new), capped at `cap`.
  void add(std::span<const int> key, long long paths, long long cap) {
    if (2 * (size() + 1) > table_.size()) grow();
    const std::uint64_t h = hash_of(key);
    const std::size_t mask = table_.size() - 1;
    for (std::size_t at = static_cast<std::size_t>(h) & mask;; at = (at + 1) & mask) {
      const int s = table_[at];
      if (s < 0) {
        table_[at] = static_cast<int>(size());
        ints_.insert(ints_.end(), key.begin(), key.end());
        begin_.push_back(ints_.size());
        paths_.push_back(std::min(cap, paths));
        slot_of_.push_back(at);
        hashes_.push_back(h);
        return;
      }
      if (hashes_[static_cast<std::size_t>(s)] == h && std::ranges::equal(state(static_cast<std::size_t>(s)), key)) {
        long long& p = paths_[static_cast<std::size_t>(s)];
        p = std::min(cap, p + paths);
        return;
      }
    }
  }
  /// No state (the table's slots emptied one by one: only those taken).
  void clear() {
    for (const std::size_t at : slot_of_) table_[at] = -1;
    ints_.clear();
    begin_.assign(1, 0);
    paths_.clear();
    slot_of_.clear();
    hashes_.clear();
  }

 private:
  static std::uint64_t hash_of(std::span<const int> key) {
    std::uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (const int x : key) h = (h ^ static_cast<std::uint32_t>(x)) * 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 29);
  }
  void grow() {
    table_.assign(std::max<std::size_t>(64, 2 * table_.size()), -1);
    const std::size_t mask = table_.size() - 1;
    for (std::size_t s = 0; s < size(); ++s) {
      std::size_t at = static_cast<std::size_t>(hashes_[s]) & mask;
      while (table_[at] >= 0) at = (at + 1) & mask;
      table_[at] = static_cast<int>(s);
      slot_of_[s] = at;
    }
  }
  std::vector<int> ints_;              // every state's ints, one after the other
  std::vector<std::size_t> begin_{0};  // per state: its first int (+ one past the end)
  std::vector<long long> paths_;       // per state: its paths
  std::vector<std::size_t> slot_of_;   // per state: its slot in table_
  std::vector<std::uint64_t> hashes_;  // per state: its hash
  std::vector<int> table_;             // slot -> state, -1: empty
};

class CanonicalSearch {
 public:
  CanonicalSearch(const Problem& pb, const Requirements& req, const Choice& given)
      : pb_(pb),
        req_(req),
        n_(pb.num_jobs()),
        waiting_(pb.p > 0 ? -pb.lambda : pb.lambda),
        usage_(pb.set),
        tenant_rows_(tenant_rows(pb, req)) {
    // Each job's entry in the given allocation, read once here (fetched a few jobs ahead): the
    // objective, the given terms (number_given) and class 1's first path (by_sum_out_of_reach) read
    // it again, and each read was a cache miss (the entries, 3.9 MB at 20,000 jobs, are rarely in
    // cache after the backend). The same values: the same result. In the same pass: the forced jobs
    // without GPUs, value_of(given) (its sum in its order: the same bits) and the decision order.
    // Decision order: running jobs first (the status quo wins ties: a waiting job never displaces a
    // running one that could stay), each group in input order (the waiting ones kept aside first).
    held_.resize(n_);
    order_.reserve(n_);
    std::vector<std::size_t> waiting_jobs;
    double v = 0.0;
    constexpr std::size_t kAhead = 8;
    for (std::size_t i = 0; i < n_; ++i) {
#if defined(__GNUC__)
      if (i + kAhead < n_ && given[i + kAhead] >= 0)
        __builtin_prefetch(pb.valid[i + kAhead].data() + given[i + kAhead]);
#endif
      if (given[i] < 0) {
        held_[i] = Entry{-1, 0, 0.0};
        forced_waiting_ += req.forced[i] ? 1 : 0;
        v += value_term(i, -1);
      } else {
        held_[i] = pb.valid[i][static_cast<std::size_t>(given[i])];
        v += pb.weight[i] * held_[i].util;
      }
      (pb.current[i] >= 0 ? order_ : waiting_jobs).push_back(i);
    }
    target_ = v;
    order_.insert(order_.end(), waiting_jobs.begin(), waiting_jobs.end());
    given_ = given;
  }

  [[nodiscard]] int forced_waiting() const { return forced_waiting_; }
  /// Count class 2's dead ends instead of walking them (the same result); false walks them.
  void count_dead_ends(bool on) { count_dead_ends_ = on; }
  [[nodiscard]] const ExactSearchStats& stats() const { return stats_; }
  void note_out_of_budget() { stats_.out_of_budget = true; }

  /// Is class 1's search (run(true, forced_limit, ...)) certain to end without an answer within
  /// `steps`? It spends a step on every option it tries and completes an allocation only at the
  /// last job, so it needs at least one step per job, and one more for each option it refuses on
  /// the way: with `steps` below the number of jobs it cannot complete one, and with exactly that
  /// many only along the path that takes every job's first option — its first steps. This walks
  /// that path with the search's own checks (forced jobs without GPUs, capacity and tenant rows,
  /// the objective's reachable range), without building every option's charges: a refusal (or a
  /// job without options) settles it. False: the search has to run.
  ///
  /// A refusal anywhere on the path settles it: the path (each job's first option, the rows' use,
  /// the forced jobs without GPUs, the prefix sums) does not depend on the tests before it. So the
  /// path is walked first with the tests that need nothing of the other jobs (an option at all,
  /// forced jobs without GPUs, capacity and tenant rows), then, only when none refuses, with the
  /// objective's window, which needs the range of every job's options (build_low_high) and the
  /// class's slack, 4(n + 1)·ε times a sum of every option's |term| taken in the jobs' rank order
  /// (build_ranges), which ranking every job's entries costs. The window is tested first with
  /// bounds of that slack, from the same sum taken in entry order: sums of the same N nonnegative
  /// numbers in two orders differ by a relative 2(N − 1)·2^-53 at most (far below the bounds'
  /// 10^-6 while N ≤ 2^30), and the window's tests are monotone in the slack (rounding is), so a
  /// test refused with the larger bound is refused with the slack, and one passed with the smaller
  /// is passed with it; only when a test falls between the bounds and none refuses for certain is
  /// the slack itself computed.
  bool by_sum_out_of_reach(int forced_limit, long long steps, double margin) {
    if (static_cast<long long>(n_) > steps) return true;
    if (static_cast<long long>(n_) < steps) return false;
    prepare_ranks();
    // The path, and its tests that need nothing of the other jobs.
    const std::size_t capacity_rows = pb_.set.rows.size();
    std::vector<long long> bound, used;
    for (const CapacityRow& r : pb_.set.rows) bound.push_back(r.capacity);
    for (const TenantRow& r : tenant_rows_) bound.push_back(r.bound);
    used.assign(bound.size(), 0);
    std::vector<std::pair<int, int>> charges;
    std::vector<double> value(n_);  // per depth: its first option's value
    int forced_now = 0;
    for (std::size_t d = 0; d < n_; ++d) {
      const std::size_t i = order_[d];
      int first = 0;
      if (!first_option(i, first)) return true;  // no option at this depth: nothing completes
      if (first < 0) {
        if (req_.forced[i] && forced_now + 1 > forced_limit) return true;
        forced_now += req_.forced[i] ? 1 : 0;
      } else {
        const Entry& e = first == given_[i] ? held_[i] : pb_.valid[i][static_cast<std::size_t>(first)];
        charges.clear();
        // (usage_'s handle looked up directly: one per job, not worth charge()'s table.)
        for (const auto& c : usage_.charges(usage_.handle(e.config, e.gpus))) charges.push_back(c);
        for (std::size_t r = 0; r < tenant_rows_.size(); ++r)
          if (const long long u = tenant_usage(pb_, tenant_rows_[r], i, e); u > 0)
            charges.emplace_back(static_cast<int>(capacity_rows + r), static_cast<int>(u));
        for (const auto& [row, g] : charges)
          if (g > 0 && used[static_cast<std::size_t>(row)] + g > bound[static_cast<std::size_t>(row)]) return true;
        for (const auto& [row, g] : charges) used[static_cast<std::size_t>(row)] += g;
      }
      value[d] = first >= 0 && first == given_[i] ? pb_.weight[i] * held_[i].util : value_term(i, first);
    }
    // The objective's window along it.
    build_low_high();
    if (!tolerance_built_ && (approx_terms_ > (std::size_t{1} << 30) || !std::isfinite(approx_magnitude_)))
      build_ranges();
    while (true) {
      const double below = tolerance_built_ ? slack_ : slack_of(approx_magnitude_ * (1.0 - margin));
      const double above = tolerance_built_ ? slack_ : slack_of(approx_magnitude_ * (1.0 + margin));
      bool unsure = false;
      double prefix = 0.0;
      for (std::size_t d = 0; d < n_; ++d) {
        const double sum = prefix + value[d];
        auto out = [&](double slack) {
          return sum + low_[d + 1] > target_ + slack || sum + high_[d + 1] < target_ - slack;
        };
        if (out(above)) return true;
        if (out(below)) unsure = true;  // refused or not, depending on where the slack lies
        prefix = sum;
      }
      if (!unsure) return false;
      ++stats_.windows_unsure;
      build_ranges();  // the slack itself: below == above
    }
  }

  /// Is class 2's search (run(false, forced_limit, ...) with `steps`) certain to run out of its
  /// steps? On rounds of thousands of jobs it mostly does, at its first dead end (dead_subtree_steps):
  /// a term that the jobs still to decide need more often than it is left. Its preparation — every
  /// option's term numbered, every depth's options and charges, the depths needing each term — is
  /// then most of its cost, and it would find that dead end after a few hundred depths. This follows
  /// the search's first path (each depth's first option it would take) building those depths only,
  /// and at each depth whose options carry several terms checks whether the term taken is now left
  /// fewer times than the depths below need it — depths whose every option carries it, which can only
  /// be among the jobs holding it in the given allocation (a job's own option is always one of its
  /// options), so only those are looked at. Such a subtree completes nothing, and the search walks
  /// (or counts) all of it: its steps, counted as dead_subtree_steps counts them over the depths
  /// built so far (a lower bound), exceeding the steps left proves the search runs out. True only
  /// then; false when it cannot tell (the path backtracks or completes, the dead end's count stays
  /// within the steps): the search runs, reusing what this built. Only the search's first run (the
  /// given allocation's limit of forced jobs without GPUs) asks: running out ends class 2 there.
  bool by_terms_out_of_reach(int forced_limit, long long steps, std::size_t first_window) {
    extend_terms_options(0);
    // Per term, the depths of the jobs holding it in the given allocation, in order.
    std::vector<int> holder_begin(multiset_.size() + 1, 0);
    for (std::size_t t = 0; t < multiset_.size(); ++t)
      holder_begin[t + 1] = holder_begin[t] + static_cast<int>(multiset_[t]);
    std::vector<std::size_t> holders(n_);
    {
      std::vector<int> at(holder_begin.begin(), holder_begin.end() - 1);
      for (std::size_t d = 0; d < n_; ++d)
        holders[static_cast<std::size_t>(at[static_cast<std::size_t>(given_id_[order_[d]])]++)] = d;
    }
    // Per term looked at: the depths needing it (their options all carry it), found once (needing_of).
    std::vector<int> needing_at(multiset_.size(), -1);
    std::vector<std::vector<std::size_t>> needing;
    auto needing_of = [&](int t, std::size_t from) -> const std::vector<std::size_t>& {
      int& slot = needing_at[static_cast<std::size_t>(t)];
      if (slot < 0) {
        slot = static_cast<int>(needing.size());
        std::vector<std::size_t> depths;
        const std::size_t* const first = holders.data() + holder_begin[static_cast<std::size_t>(t)];
        const std::size_t* const end = holders.data() + holder_begin[static_cast<std::size_t>(t) + 1];
        // Only the depths below `from` matter now and later (the path only goes deeper).
        for (const std::size_t* h = std::upper_bound(first, end, from); h != end; ++h)
          if (sole_term_of(order_[*h]) == t) depths.push_back(*h);
        needing.push_back(std::move(depths));
      }
      return needing[static_cast<std::size_t>(slot)];
    };
    left_ = multiset_;
    std::fill(row_used_.begin(), row_used_.end(), 0LL);
    int forced_now = 0;
    for (std::size_t d = 0; d < n_; ++d) {
      extend_terms_options(d + 1);
      const std::size_t first = depth_begin_[d], end = depth_begin_[d + 1];
      const std::size_t job = order_[d];
      // The search's first option here: a step per option tried, as run() tests them.
      std::size_t at = first;
      for (; at < end; ++at) {
        if (--steps < 0) {
          ++stats_.terms_out_of_reach;
          return true;  // out of steps on the way
        }
        const Option& o = opts_[at];
        if (left_[static_cast<std::size_t>(o.term)] == 0) continue;
        if (o.k < 0 ? req_.forced[job] && forced_now + 1 > forced_limit : !fits_all(at)) continue;
        break;
      }
      if (at == end) return false;  // the search backtracks here: not followed
      const Option& o = opts_[at];
      const auto t = static_cast<std::size_t>(o.term);
      --left_[t];
      for (int q = o.first; q < o.end; ++q)
        row_used_[static_cast<std::size_t>(charges_[static_cast<std::size_t>(q)].first)] +=
            charges_[static_cast<std::size_t>(q)].second;
      if (o.k < 0 && req_.forced[job]) ++forced_now;
      // A depth whose options all carry one term leaves each term as much beyond the depths needing it.
      bool several = false;
      for (std::size_t a = first; a < end; ++a) several = several || opts_[a].term != o.term;
      if (!several) continue;
      // Fewer copies of t left than holders of t below: its needs may exceed what is left.
      const auto below_from =
          std::upper_bound(holders.data() + holder_begin[t], holders.data() + holder_begin[t + 1], d);
      if (left_[t] >= holders.data() + holder_begin[t + 1] - below_from) continue;
      const std::vector<std::size_t>& needs = needing_of(o.term, d);
      const auto need = needs.end() - std::upper_bound(needs.begin(), needs.end(), d);
      if (left_[t] >= need) continue;
      // A dead end below d: count its steps over a window of depths, widened until they exceed the
      // steps left or it reaches every depth. The counts together look at kProbeWork options at most
      // (each widening counts again from d: without a bound, rounds whose counts stay within the
      // steps would pay for every window).
      long long work_left = kProbeWork;
      for (std::size_t horizon = std::min(n_, d + 1 + std::max<std::size_t>(first_window, 1));;
           horizon = std::min(n_, 2 * horizon - d - 1)) {
        extend_terms_options(horizon);
        last_depth_.assign(multiset_.size(), 0);
        for (std::size_t e = d + 1; e < horizon; ++e)
          for (std::size_t a = depth_begin_[e]; a < depth_begin_[e + 1]; ++a)
            last_depth_[static_cast<std::size_t>(opts_[a].term)] = e;
        bool truncated = false;
        const long long cost =
            dead_subtree_steps(d + 1, forced_now, forced_limit, steps, horizon, work_left, &truncated);
        if (cost > steps) {
          ++stats_.terms_out_of_reach;
          return true;  // the search runs out of steps in there
        }
        // Widened only while the window stays within a quarter of the round: beyond that the search's
        // own preparation is mostly built anyway (rounds of a few thousand jobs), and each count costs.
        if (!truncated || horizon == n_ || work_left <= 0 || 2 * (horizon - d - 1) > n_ / 4) return false;
      }
    }
    return false;  // the first path completes: the search settles
  }

  /// Class 1 (same objective) when `by_sum`, else class 2 (same multiset of terms); at most
  /// `forced_limit` forced jobs without GPUs.
  std::optional<Choice> run(bool by_sum, int forced_limit, long long& budget) {
    by_sum_ = by_sum;
    if (!by_sum) number_terms();
    left_ = multiset_;
    build_options();
    if (!by_sum) {
      slack_left_.resize(multiset_.size());
      for (std::size_t t = 0; t < multiset_.size(); ++t) slack_left_[t] = multiset_[t] - need_total_[t];
    }
    return by_sum ? walk<true>(forced_limit, budget) : walk<false>(forced_limit, budget);
  }

 private:
  // run()'s depth-first search, one instance per class: the class's tests are known when compiling (the loop
  // runs up to 10^6 steps).
  template <bool kBySum>
  std::optional<Choice> walk(int forced_limit, long long& budget) {
    // Dead ends it may still fail to count (dead_subtree_steps() = -1) before it walks them all.
    int dead_tries = count_dead_ends_ ? kDeadTries : 0;
    std::fill(row_used_.begin(), row_used_.end(), 0LL);
    Choice chosen(n_, -1);
    std::vector<std::size_t> next(n_, 0);     // per depth: the next of its options to try
    std::vector<std::size_t> pick(n_, 0);     // per depth: the option taken (index in opts_)
    std::vector<double> prefix(n_ + 1, 0.0);  // class 1: sum of the terms decided, in decision order
    int forced_now = 0;
    std::size_t d = 0;
    // At hand in locals: the loop below runs up to the whole budget (10^6 steps) on large rounds.
    constexpr bool by_sum_now = kBySum;
    const double above = target_ + slack_, below = target_ - slack_;  // class 1's window, as the test computes it
    const Option* const opts = opts_.data();
    const std::size_t* const depth_begin = depth_begin_.data();
    long* const left = left_.data();
    const std::size_t* const order = order_.data();
    const std::pair<int, int>* const charges = charges_.data();
    long long* const used = row_used_.data();
    const long long* const bound = row_bound_.data();
    const unsigned char* const watch = watch_.data();
    long* const slack = slack_left_.data();
    long long steps = budget;  // written back to `budget` however the search ends
    struct WriteBack {
      long long& to;
      const long long& from;
      ~WriteBack() { to = from; }
    } write_back{budget, steps};
    // Would option `o` keep every row (capacity, tenants) within its bound? (Only positive charges
    // can break one: a rigid remainder's row may be charged negatively, GPUs it leaves free.)
    auto fits = [&](const Option& o) {
      for (const std::pair<int, int>* q = charges + o.first; q != charges + o.end; ++q)
        if (q->second > 0 && used[q->first] + q->second > bound[q->first]) return false;
      return true;
    };
    // Takes (sign +1) or gives back (-1) option `opts[at]` at depth `depth`.
    auto take = [&](std::size_t depth, std::size_t at, int sign) SIA_TIES_INLINE {
      const Option& o = opts[at];
      if (!by_sum_now) {
        left[static_cast<std::size_t>(o.term)] -= sign;
        if (watch[at]) slack[static_cast<std::size_t>(o.term)] -= sign;
      }
      if (o.k >= 0) {
        for (const std::pair<int, int>* q = charges + o.first; q != charges + o.end; ++q)
          used[q->first] += sign * q->second;
      } else if (req_.forced[order[depth]]) {
        forced_now += sign;
      }
    };
    // Class 1 with at most 64 options per depth: a node's options tested at once (node_mask), the
    // same steps and answer as testing them one by one (which `count_dead_ends_` false keeps, for
    // the tests that compare the two).
    const bool masks = kBySum && masks_ok_ && count_dead_ends_;
    std::vector<std::uint64_t> mask(masks ? n_ : 0, 0);
    while (true) {
      if (d == n_) {
        // Class 1: the objective, summed as objective_of sums it, within the class's tolerance.
        if (!by_sum_now || std::abs(value_of(chosen) - target_) <= tolerance_) return chosen;
        --d;
        take(d, pick[d], -1);
        continue;
      }
      const std::size_t job = order[d];
      const std::size_t first = depth_begin[d], count = depth_begin[d + 1] - first;
      bool placed = false;
      if constexpr (kBySum) {
        if (masks) {
          // The options this node takes, as bits (computed as it is entered: its state is the same
          // whenever the search comes back to it), and its steps counted by the options in between.
          if (next[d] == 0) mask[d] = node_mask(d, forced_now, forced_limit, prefix[d], above, below);
          const std::uint64_t rest = next[d] < 64 ? mask[d] >> next[d] : 0;
          const std::size_t to = rest == 0 ? count : next[d] + static_cast<std::size_t>(std::countr_zero(rest)) + 1;
          const auto tried = static_cast<long long>(to - next[d]);
          if (tried > steps) {
            steps = -1;
            return std::nullopt;  // too large to settle: the local rules' answer stands
          }
          steps -= tried;
          next[d] = to;
          if (rest != 0) {
            const std::size_t at = first + to - 1;
            const Option& o = opts[at];
            prefix[d + 1] = prefix[d] + o.value;
            take(d, at, +1);
            chosen[job] = o.k;
            pick[d] = at;
            if (++d < n_) next[d] = 0;
            continue;
          }
          if (d == 0) return std::nullopt;  // the class has no member within forced_limit
          --d;
          take(d, pick[d], -1);
          continue;
        }
      }
      while (next[d] < count) {
        const std::size_t at = first + next[d]++;
        const Option& o = opts[at];
        if (--steps < 0) return std::nullopt;  // too large to settle: the local rules' answer stands
        if (!by_sum_now && left[static_cast<std::size_t>(o.term)] == 0) continue;
        if (o.k < 0) {
          if (req_.forced[job] && forced_now + 1 > forced_limit) continue;
        } else if (!fits(o)) {
          continue;
        }
        if (by_sum_now) {
          // The objective must stay reachable: the terms still to decide span [low, high].
          const double sum = prefix[d] + o.value;
          if (sum + low_[d + 1] > above || sum + high_[d + 1] < below) continue;
          prefix[d + 1] = sum;
        }
        take(d, at, +1);
        // Class 2: a term that the jobs still to decide need more often than it is left (each of
        // them has only options of that term) makes the whole subtree below a dead end, which the
        // search would walk in full, a step per option tried: its steps are counted instead
        // (dead_subtree_steps), the same count, so the search ends exactly as it would have.
        if (!by_sum_now && watch[at] && slack[static_cast<std::size_t>(o.term)] < 0 && dead_tries > 0 &&
            dead_work_left_ > 0 && d + 1 < n_) {
          const long long cost =
              dead_subtree_steps(d + 1, forced_now, forced_limit, steps, n_, dead_work_left_, nullptr);
          if (cost > steps) {
            ++stats_.dead_ends_counted;
            ++stats_.dead_ends_out_of_budget;
            steps = -1;
            return std::nullopt;  // the search would run out of steps in there
          }
          if (cost >= 0) {
            ++stats_.dead_ends_counted;
            steps -= cost;
            take(d, at, -1);
            continue;  // the subtree failed: the next option at this depth
          }
          --dead_tries;  // not countable here: walked as before
          ++stats_.dead_ends_walked;
        }
        chosen[job] = o.k;
        pick[d] = at;
        placed = true;
        break;
      }
      if (placed) {
        if (++d < n_) next[d] = 0;
        continue;
      }
      if (d == 0) return std::nullopt;  // the class has no member within forced_limit
      --d;
      take(d, pick[d], -1);
    }
  }

  // Class 1: which of depth d's options (bit j: its j-th) the step loop would take in this state —
  // forced jobs without GPUs within `forced_limit`, every row within its bound, the objective still
  // reachable — each tested as the loop tests it, without a branch per option.
  std::uint64_t node_mask(std::size_t d, int forced_now, int forced_limit, double prefix, double above,
                          double below) const {
    const std::size_t first = depth_begin_[d], count = depth_begin_[d + 1] - first;
    const double low = low_[d + 1], high = high_[d + 1];
    // No option at all when the depth's least value already overshoots the window, or its largest
    // falls short of it (sums round monotonically: every other option's test fails too).
    if (count == 0 || (prefix + least_[d]) + low > above || (prefix + most_[d]) + high < below) return 0;
    const bool waiting_ok = !(req_.forced[order_[d]] && forced_now + 1 > forced_limit);
    const long long* const used = row_used_.data();
    const long long* const bound = row_bound_.data();
    // The objective's window, two options at a time where SSE2 is at hand (the same additions and
    // comparisons per option as one at a time: the same bits).
    const double* const value = mask_value_.data() + first;
    std::uint64_t window = 0;
    std::size_t j = 0;
#if defined(__SSE2__)
    const __m128d p2 = _mm_set1_pd(prefix), low2 = _mm_set1_pd(low), high2 = _mm_set1_pd(high);
    const __m128d above2 = _mm_set1_pd(above), below2 = _mm_set1_pd(below);
    for (; j + 2 <= count; j += 2) {
      const __m128d sum = _mm_add_pd(p2, _mm_loadu_pd(value + j));
      const __m128d out =
          _mm_or_pd(_mm_cmpgt_pd(_mm_add_pd(sum, low2), above2), _mm_cmplt_pd(_mm_add_pd(sum, high2), below2));
      window |= static_cast<std::uint64_t>(~_mm_movemask_pd(out) & 3) << j;
    }
#endif
    for (; j < count; ++j) {
      const double sum = prefix + value[j];
      window |= static_cast<std::uint64_t>(!(sum + low > above) & !(sum + high < below)) << j;
    }
    std::uint64_t m = 0;
    for (j = 0; j < count; ++j) {
      const std::size_t at = first + j;
      const OneCharge& c = one_charge_[at];
      bool ok =
          c.row >= 0 ? used[c.row] + c.gpus <= bound[c.row] : c.row == kNoCharge || (c.row == kWaiting && waiting_ok);
      if (c.row == kSeveral) ok = fits_all(at);
      m |= static_cast<std::uint64_t>(ok) << j;
    }
    return m & window;
  }
  bool fits_all(std::size_t at) const {
    for (int q = opts_[at].first; q < opts_[at].end; ++q) {
      const auto& [row, g] = charges_[static_cast<std::size_t>(q)];
      if (g > 0 && row_used_[static_cast<std::size_t>(row)] + g > row_bound_[static_cast<std::size_t>(row)])
        return false;
    }
    return true;
  }

  // Job i's term of the objective on option k (-1: no GPUs), weighted: what class 2 permutes.
  // (A weight of 1 multiplies exactly: unweighted rounds compare the same bits as before.)
  double term(std::size_t i, int k) const {
    return pb_.weight[i] * (k < 0 ? waiting_ : pb_.valid[i][static_cast<std::size_t>(k)].util);
  }
  int tid(std::size_t i, int k) const {
    const GivenTerms& g = given_terms_[i];
    if (g.only != kSeveralGiven) return k == g.only ? g.id : absent_id_;
    return term_id_[static_cast<std::size_t>(g.id) + static_cast<std::size_t>(k + 1)];
  }
  // usage_'s handle on job i's option k (k >= 0), found on the first visit (one array for every
  // job's entries, in the jobs' order: ranked_begin_ numbers them).
  // (The handles are written only where charge_known_ says so: a search reads a few percent of
  // them, and filling an array of every entry cost more.)
  int charge(std::size_t i, int k) {
    if (!charge_) {
      charge_ = std::make_unique_for_overwrite<int[]>(ranked_begin_[n_]);
      charge_known_.assign(ranked_begin_[n_] / 64 + 1, 0);
    }
    const std::size_t at = ranked_begin_[i] + static_cast<std::size_t>(k);
    std::uint64_t& known = charge_known_[at >> 6];
    const std::uint64_t bit = std::uint64_t{1} << (at & 63);
    if ((known & bit) == 0) {
      const Entry& e = pb_.valid[i][static_cast<std::size_t>(k)];
      charge_[at] = usage_.handle(e.config, e.gpus);
      known |= bit;
    }
    return charge_[at];
  }
  // Class 2 counts terms by a dense id (bits compared exactly) in arrays, not by bits in a hash
  // map on every step: the given allocation's terms are numbered (in order of first appearance, by
  // their bits in one table: TermTable), every other term shares one id whose count stays 0.
  void number_terms() {
    number_given();
    if (numbered_all_) return;
    numbered_all_ = true;
    for (std::size_t i = 0; i < n_; ++i)
      if (!numbered_[i]) number_job(i);
  }
  // number_terms() in two parts, so that class 2's skip test (by_terms_out_of_reach) numbers only the
  // jobs it looks at and the search the others: the given terms' ids (number_given), then per job
  // its options' (number_job; the same ids in any order of the jobs).
  void number_given() {
    if (!given_id_.empty() || n_ == 0) return;
    const std::size_t slots = std::bit_ceil(2 * n_ + 2);
    terms_.slots = slots;
    terms_.shift = 64 - std::countr_zero(slots);
    terms_.table = std::make_unique_for_overwrite<TermSlot[]>(slots);
    terms_.taken.assign((slots + 63) / 64, 0);
    terms_.tags.assign(slots, 0);
    const std::size_t filter_bits = std::bit_ceil(16 * n_ + 64);
    terms_.filter_shift = 64 - std::countr_zero(filter_bits);
    terms_.filter.assign(filter_bits / 64, 0);
    int absent = 0;  // the number of distinct given terms so far; at the end, the other terms' id
    given_id_.resize(n_);
    // The terms first, then into the table with each job's first slot and tag fetched a few jobs
    // ahead: the slots are spread over a megabyte at 20,000 jobs, a cache miss each otherwise.
    std::vector<std::uint64_t> given_bits(n_);
    for (std::size_t i = 0; i < n_; ++i)  // term(i, given_[i])
      given_bits[i] = term_bits(pb_.weight[i] * (given_[i] < 0 ? waiting_ : held_[i].util));
    constexpr std::size_t kAhead = 8;
    for (std::size_t i = 0; i < n_; ++i) {
#if defined(__GNUC__)
      if (i + kAhead < n_) {
        const std::size_t next = terms_.start_of(TermTable::hash_of(given_bits[i + kAhead]));
        __builtin_prefetch(&terms_.table[next], 1);
        __builtin_prefetch(&terms_.tags[next], 1);
      }
#endif
      const std::uint64_t b = given_bits[i];
      const std::uint64_t hash = TermTable::hash_of(b);
      std::size_t h = terms_.start_of(hash);
      while (terms_.is_taken(h) && terms_.table[h].bits != b) h = (h + 1) & (slots - 1);
      if (!terms_.is_taken(h)) {
        terms_.table[h] = TermSlot{b, absent++};
        terms_.taken[h >> 6] |= std::uint64_t{1} << (h & 63);
        terms_.tags[h] = terms_.tag_of(hash);
        const auto f = static_cast<std::size_t>(hash >> terms_.filter_shift);
        terms_.filter[f >> 6] |= std::uint64_t{1} << (f & 63);
      }
      given_id_[i] = terms_.table[h].id;
    }
    absent_id_ = absent;
    multiset_.assign(static_cast<std::size_t>(absent) + 1, 0);
    for (std::size_t i = 0; i < n_; ++i) ++multiset_[static_cast<std::size_t>(given_id_[i])];
    given_terms_.resize(n_);
    term_id_.clear();
    numbered_.assign(n_, 0);
  }
  // Most jobs have one option of a given term (their own): given_terms_ holds it and its id; the
  // ids of every option are kept only for the others. A job's options' filter bits are read
  // first, without a branch between them (their loads overlap); the table is searched only for
  // the options whose bit is set other than the job's own (whose term is a given one).
  void number_job(std::size_t i) {
    numbered_[i] = 1;
    const auto v = pb_.valid[i];
    const double weight = pb_.weight[i];
    const std::size_t m = v.size() + 1;  // option k at k + 1 (-1: no GPUs)
    if (job_bits_.size() < m) {
      job_bits_.resize(m);
      job_hit_.resize(m);
    }
    std::uint64_t* const bits = job_bits_.data();
    unsigned char* const hit = job_hit_.data();
    std::size_t hits = 0;
    for (std::size_t at = 0; at < m; ++at) {
      const std::uint64_t b = term_bits(weight * (at == 0 ? waiting_ : v[at - 1].util));  // term(i, at - 1)
      const auto f = static_cast<std::size_t>(TermTable::hash_of(b) >> terms_.filter_shift);
      const auto bit = static_cast<unsigned char>((terms_.filter[f >> 6] >> (f & 63)) & 1U);
      bits[at] = b;
      hit[at] = bit;
      hits += bit;
    }
    const int own = given_[i];  // its id is known, and its bit is set
    if (hits == 1) {
      given_terms_[i] = GivenTerms{own, given_id_[i]};
      return;
    }
    ids_.assign(m, absent_id_);
    int given_terms = 0, last = 0;
    for (std::size_t at = 0; at < m; ++at) {
      if (!hit[at]) continue;
      const int k = static_cast<int>(at) - 1;
      ids_[at] = k == own ? given_id_[i] : terms_.id_of(bits[at], absent_id_);
      if (ids_[at] != absent_id_) {
        ++given_terms;
        last = k;
      }
    }
    if (given_terms == 1) {
      given_terms_[i] = GivenTerms{last, ids_[static_cast<std::size_t>(last + 1)]};
    } else {
      given_terms_[i] = GivenTerms{kSeveralGiven, static_cast<int>(term_id_.size())};
      term_id_.insert(term_id_.end(), ids_.begin(), ids_.end());
    }
  }
  // The one term of job i's class-2 options (for_each_option(i, false)'s), -1 when they carry
  // several or none.
  int sole_term_of(std::size_t i) {
    if (!numbered_[i]) number_job(i);
    const bool pinned = req_.pinned[i] != 0;
    const int current = pb_.current[i];
    const GivenTerms& g = given_terms_[i];
    if (g.only != kSeveralGiven) {
      const int k = g.only;
      const bool kept = k >= 0 ? !pinned || pb_.valid[i][static_cast<std::size_t>(k)].config == current : !pinned;
      return kept ? g.id : -1;
    }
    const int* const ids = term_id_.data() + g.id;  // option k at k + 1
    const auto v = pb_.valid[i];
    int t = -1;
    auto see = [&](int id) {
      if (id == absent_id_) return true;
      if (t >= 0 && id != t) return false;
      t = id;
      return true;
    };
    for (std::size_t k = 0; k < v.size(); ++k)
      if ((!pinned || v[k].config == current) && !see(ids[k + 1])) return -1;
    if (!pinned && !see(ids[0])) return -1;
    return t;
  }
  // Class 1 compares the objective as objective_of sums it (input order), with the binary
  // program's λ (Problem::model_lambda): the round's objective itself unless λ is capped, when it
  // would round the utilities away (at λ = 1e16 allocations of lower utility would count as equal).
  double value_term(std::size_t i, int k) const {
    if (k >= 0) return pb_.weight[i] * pb_.valid[i][static_cast<std::size_t>(k)].util;
    return pb_.weight[i] * (pb_.p > 0 ? -pb_.model_lambda : pb_.model_lambda);
  }
  double value_of(const Choice& ch) const {
    double v = 0.0;
    for (std::size_t i = 0; i < n_; ++i) v += value_term(i, ch[i]);
    return v;
  }
  // Each job's entries in rank order — its current configuration, then fewer GPUs, lower type
  // index, fewer nodes, lower configuration index — sorted by one integer per entry (rank_key):
  // the current-configuration bit, then the configuration's place in the set sorted by (GPUs,
  // type, nodes, index), then the entry. A job's entries name distinct configurations, so this is
  // rank's strict order. A job is ranked when its order is first asked for (ranked_of): class 2
  // walks the ranked entries of only the jobs with several options of a given term (about 1,600 of
  // 20,000 at 100,000 GPUs), and class 1's skip test needs each job's first option only, its least
  // key; class 1's search ranks every job.
  void prepare_ranks() {
    if (!ranked_begin_.empty()) return;
    const auto& configs = pb_.set.configs;
    // A configuration's place in the order (GPUs, type, nodes, index): when the first three fit in
    // 39 bits, they themselves, packed into one integer — nothing to sort (thousands of
    // configurations at 100,000 GPUs; sorting them cost more than ranking 20,000 jobs' entries).
    // Two configurations of one triple then share a place, and the entry number that ends each key
    // orders them by index (a job's entries are sorted by configuration index). Otherwise the
    // configuration's rank in that order.
    place_.resize(configs.size());
    unsigned gpu_bits = 0, type_bits = 0, node_bits = 0;
    bool packable = true;
    for (const ConfigurationSpec& c : configs) {
      packable = packable && c.gpus >= 0 && c.type >= 0 && c.nodes >= 0;
      gpu_bits = std::max<unsigned>(gpu_bits, std::bit_width(static_cast<unsigned>(std::max(c.gpus, 0))));
      type_bits = std::max<unsigned>(type_bits, std::bit_width(static_cast<unsigned>(std::max(c.type, 0))));
      node_bits = std::max<unsigned>(node_bits, std::bit_width(static_cast<unsigned>(std::max(c.nodes, 0))));
    }
    if (packable && gpu_bits + type_bits + node_bits <= 39) {
      for (std::size_t x = 0; x < configs.size(); ++x) {
        const ConfigurationSpec& c = configs[x];
        std::uint64_t key = static_cast<std::uint64_t>(c.gpus);
        key = (key << type_bits) | static_cast<std::uint64_t>(c.type);
        place_[x] = (key << node_bits) | static_cast<std::uint64_t>(c.nodes);
      }
    } else {
      std::vector<int> by_rank(configs.size());
      std::iota(by_rank.begin(), by_rank.end(), 0);
      std::sort(by_rank.begin(), by_rank.end(), [&](int x, int y) {
        const ConfigurationSpec& a = configs[static_cast<std::size_t>(x)];
        const ConfigurationSpec& b = configs[static_cast<std::size_t>(y)];
        return std::tuple{a.gpus, a.type, a.nodes, x} < std::tuple{b.gpus, b.type, b.nodes, y};
      });
      for (std::size_t r = 0; r < by_rank.size(); ++r) place_[static_cast<std::size_t>(by_rank[r])] = r;
    }
    ranked_begin_.assign(n_ + 1, 0);
    for (std::size_t i = 0; i < n_; ++i) ranked_begin_[i + 1] = ranked_begin_[i] + pb_.valid[i].size();
    ranked_ = std::make_unique_for_overwrite<int[]>(ranked_begin_[n_]);  // written by ranked_of before it is read
    ranked_done_.assign(n_, 0);
  }
  // Job i's entry k's key: sorted ascending, the rank order (prepare_ranks).
  std::uint64_t rank_key(std::size_t i, const Entry& e, std::size_t k) const {
    const std::uint64_t other = e.config == pb_.current[i] ? 0 : 1;
    return (other << 63) | (place_[static_cast<std::size_t>(e.config)] << 24) | k;  // k < 2^24, places < 2^39
  }
  // Job i's entries in rank order (ranked_begin_[i + 1] - ranked_begin_[i] of them), ranked now if not yet.
  const int* ranked_of(std::size_t i) {
    int* const out = ranked_.get() + ranked_begin_[i];
    if (!ranked_done_[i]) {
      ranked_done_[i] = 1;
      const auto v = pb_.valid[i];
      keys_.resize(v.size());
      for (std::size_t k = 0; k < v.size(); ++k) keys_[k] = rank_key(i, v[k], k);
      std::sort(keys_.begin(), keys_.end());
      for (std::size_t k = 0; k < v.size(); ++k) out[k] = static_cast<int>(keys_[k] & ((std::uint64_t{1} << 24) - 1));
    }
    return out;
  }
  // Job i's first option of class 1 (for_each_option(i, true)'s first) without ranking its entries:
  // its entry of least key (a pinned job: the entry of its current configuration), else no GPUs
  // (not for a pinned job). False: no option.
  bool first_option(std::size_t i, int& first) const {
    // The current configuration's entry ranks first (entries are sorted by configuration; a job
    // that keeps its configuration holds that entry in the given allocation).
    const int current = pb_.current[i], held = given_[i];
    const int own = current < 0 ? -1 : held >= 0 && held_[i].config == current ? held : pb_.entry_of(i, current);
    if (own >= 0 || req_.pinned[i]) {
      first = own;
      return own >= 0;
    }
    const auto v = pb_.valid[i];
    if (v.empty()) {
      first = -1;
      return true;
    }
    std::uint64_t least = rank_key(i, v[0], 0);
    for (std::size_t k = 1; k < v.size(); ++k) least = std::min(least, rank_key(i, v[k], k));
    first = static_cast<int>(least & ((std::uint64_t{1} << 24) - 1));
    return true;
  }
  // Options per job, best first: its current configuration, then fewer GPUs, lower type index,
  // fewer nodes; no GPUs last. Class 2 keeps only terms of the multiset.
  // They depend only on the class, not on the limit of forced jobs without GPUs: built once per
  // class for all the runs of its bisection.
  void build_options() {
    if (options_class_ == (by_sum_ ? 1 : 2)) return;
    if (!by_sum_) {
      // Class 2: from where by_terms_out_of_reach left its options, if it built some.
      extend_terms_options(n_);
      options_class_ = 2;
      build_needs();
      return;
    }
    options_class_ = 1;
    prepare_ranks();
    // In decision order and in one array: what a step needs of an option.
    opts_.clear();
    opts_.reserve(ranked_begin_[n_] + n_);
    depth_begin_.assign(1, 0);
    for (std::size_t d = 0; d < n_; ++d) {
      const std::size_t i = order_[d];
      for_each_option(i, true, [&](int k) {
        opts_.push_back(Option{k, -1, 0, 0, value_term(i, k)});
        return true;
      });
      depth_begin_.push_back(opts_.size());
    }
    build_charges();
    build_ranges();
  }
  // Class 2's options and their charges for the depths up to `depths` (built in decision order, the
  // same arrays as built at once; class 2 compares terms by id: its options' values are not read).
  void extend_terms_options(std::size_t depths) {
    if (options_class_ != 3 && options_class_ != 2) {
      options_class_ = 3;
      number_given();
      prepare_ranks();
      opts_.clear();
      opts_.reserve(2 * n_);  // mostly one option of a given term per job
      depth_begin_.assign(1, 0);
      reset_rows();
      charges_.clear();
      charges_.reserve(2 * n_);  // and each charged in one row, mostly
    }
    for (std::size_t d = depth_begin_.size() - 1; d < depths; ++d) {
      const std::size_t i = order_[d];
      if (!numbered_[i]) number_job(i);
      for_each_option(i, false, [&](int k) {
        opts_.push_back(Option{k, tid(i, k), 0, 0, 0.0});
        return true;
      });
      depth_begin_.push_back(opts_.size());
      append_charges(d);
    }
  }

  // Class 2's dead ends. A depth whose options all carry one term t (a pinned job on its current
  // configuration, say) needs a t to complete any allocation: need_total_[t] such depths. An
  // option of term t elsewhere competes with them (watch_): once the terms t left fall below the
  // depths still to decide that need one (slack_left_ < 0), nothing below completes. last_depth_:
  // the deepest depth with an option of each term.
  void build_needs() {
    need_total_.assign(multiset_.size(), 0);
    last_depth_.assign(multiset_.size(), 0);
    sole_term_.assign(n_, -1);
    for (std::size_t d = 0; d < n_; ++d) {
      const std::size_t first = depth_begin_[d], end = depth_begin_[d + 1];
      if (first == end) continue;
      int t = opts_[first].term;
      for (std::size_t at = first; at < end; ++at) {
        if (opts_[at].term != t) t = -1;
        last_depth_[static_cast<std::size_t>(opts_[at].term)] = d;
      }
      sole_term_[d] = t;
      if (t >= 0) ++need_total_[static_cast<std::size_t>(t)];
    }
    watch_.assign(opts_.size(), 0);
    for (std::size_t d = 0; d < n_; ++d)
      for (std::size_t at = depth_begin_[d]; at < depth_begin_[d + 1]; ++at) {
        const int t = opts_[at].term;
        watch_[at] = need_total_[static_cast<std::size_t>(t)] > 0 && sole_term_[d] != t;
      }
  }

  // The steps the search spends in the subtree below depth `s` (the state of run() at that point:
  // left_, row_used_, `forced_now`) when that subtree is a dead end (slack_left_ < 0 for some
  // term): it tries every option of every node, one step each, and completes nothing. Counted by
  // depth over the nodes' distinct states instead of node by node: what decides whether a node's
  // option is taken is the term left (left_ minus the copies the path took, kept per term while a
  // deeper depth still has an option of it), the forced jobs without GPUs, and capacity and tenant
  // rows — counted only as far as no row can refuse an option (the rows' use at `s` plus, per
  // depth, the largest charge any option there could add, within every bound), so the count is the
  // search's own. Returns the count, or as soon as it exceeds `steps`, a count above `steps` (the
  // search would run out in there); -1 when it cannot count (a row could refuse, too many states,
  // more work than dead_work_left_, or a path completes: the subtree is walked as before).
  //
  // `horizon` < n_ (class 2's skip test, by_terms_out_of_reach): only the depths before it are
  // counted, and a term no depth before it offers leaves the states; then, and wherever the count
  // would give up (a row could refuse, too many states or too much work), it stops and returns what
  // it counted so far, with `truncated` set: fewer steps than the search spends in there, never more
  // (every node it counted is one the search visits, with all of its options).
  long long dead_subtree_steps(std::size_t s, int forced_now, int forced_limit, long long steps, std::size_t horizon,
                               long long& work_left, bool* truncated) {
    constexpr long long kCap = 1LL << 60;
    constexpr std::size_t kMaxStates = 4096;
    // A state: the forced jobs without GPUs, then (term, copies taken) pairs by term.
    using State = std::vector<int>;
    StateSet& now = states_now_;
    StateSet& next = states_next_;
    now.clear();
    next.clear();
    now.add(std::span<const int>(&forced_now, 1), 1, kCap);
    std::vector<long long> upper(row_used_.begin(), row_used_.end()), largest(row_used_.size(), 0);
    long long total = 0, work = 0;
    struct Spend {
      long long& left;
      const long long& work;
      ~Spend() { left -= std::min(left, work); }
    } spend{work_left, work};
    State child;
    for (std::size_t e = s; now.size() != 0; ++e) {
      if (e == horizon) {
        if (horizon == n_) return -1;  // a path completed: not a dead end after all
        *truncated = true;
        return total;
      }
      const std::size_t first = depth_begin_[e], end = depth_begin_[e + 1];
      const std::size_t job = order_[e];
      // Can a row refuse an option at this depth? Not while its use stays within its bound.
      for (std::size_t at = first; at < end; ++at)
        for (int q = opts_[at].first; q < opts_[at].end; ++q) {
          const auto& [row, g] = charges_[static_cast<std::size_t>(q)];
          largest[static_cast<std::size_t>(row)] = std::max<long long>(largest[static_cast<std::size_t>(row)], g);
        }
      bool bounded = true;
      for (std::size_t r = 0; r < upper.size(); ++r) {
        upper[r] += largest[r];
        largest[r] = 0;
        bounded = bounded && upper[r] <= row_bound_[r];
      }
      if (!bounded) {
        if (truncated) {
          *truncated = true;
          return total;
        }
        return total > steps ? total : -1;
      }
      const auto options = static_cast<long long>(end - first);
      for (std::size_t si = 0; si < now.size(); ++si) {
        const std::span<const int> state = now.state(si);
        const long long paths = now.paths(si);
        total = paths > (kCap - total) / std::max(options, 1LL) ? kCap : total + paths * options;
        work += options;
        for (std::size_t at = first; at < end; ++at) {
          const Option& o = opts_[at];
          const int t = o.term;
          // The copies of t this path took: a (term, count) pair of the state, if any.
          int taken = 0;
          std::size_t pos = 1;
          while (pos < state.size() && state[pos] < t) pos += 2;
          if (pos < state.size() && state[pos] == t) taken = state[pos + 1];
          if (left_[static_cast<std::size_t>(t)] - taken <= 0) continue;
          const bool forced_out = o.k < 0 && req_.forced[job];
          if (forced_out && state[0] + 1 > forced_limit) continue;
          // Taken: the child's state, keeping only terms that a deeper depth still offers.
          child.clear();
          child.push_back(state[0] + (forced_out ? 1 : 0));
          bool placed_t = false;
          for (std::size_t p = 1; p < state.size(); p += 2) {
            if (!placed_t && state[p] >= t) {
              if (state[p] > t && last_depth_[static_cast<std::size_t>(t)] > e) child.insert(child.end(), {t, 1});
              placed_t = true;
            }
            const int c = state[p] == t ? state[p + 1] + 1 : state[p + 1];
            if (last_depth_[static_cast<std::size_t>(state[p])] > e) child.insert(child.end(), {state[p], c});
          }
          if (!placed_t && last_depth_[static_cast<std::size_t>(t)] > e) child.insert(child.end(), {t, 1});
          next.add(child, paths, kCap);
        }
      }
      if (total > steps) return total;
      if (next.size() > kMaxStates || work > work_left) {
        if (!truncated) return -1;
        *truncated = true;
        return total;
      }
      std::swap(now, next);
      next.clear();
    }
    return total;
  }

  // Job i's options in the class's order, best first, to f(k) until it returns false: its entries
  // in rank order (a pinned job: only its current configuration), then no GPUs (not for a pinned
  // job); class 2 keeps only terms of the multiset.
  template <class F>
  void for_each_option(std::size_t i, bool by_sum, F&& f) {
    const bool pinned = req_.pinned[i] != 0;
    if (!by_sum && !given_terms_.empty() && given_terms_[i].only != kSeveralGiven) {
      // Class 2 and a job with one option of a given term (its own, mostly): that option alone,
      // under the loop's conditions, without walking its ranked entries.
      const int k = given_terms_[i].only;
      if (k >= 0 ? !pinned || pb_.valid[i][static_cast<std::size_t>(k)].config == pb_.current[i] : !pinned) (void)f(k);
      return;
    }
    if (!by_sum && !given_terms_.empty()) {
      // Class 2 and a job with several options of a given term: those options (a term is given
      // exactly when its id is not the absent one) in rank order, without ranking the others.
      const int* const ids = term_id_.data() + given_terms_[i].id;  // option k at k + 1
      const auto v = pb_.valid[i];
      keys_.clear();
      for (std::size_t k = 0; k < v.size(); ++k)
        if (ids[k + 1] != absent_id_ && (!pinned || v[k].config == pb_.current[i]))
          keys_.push_back(rank_key(i, v[k], k));
      std::sort(keys_.begin(), keys_.end());
      for (const std::uint64_t key : keys_)
        if (!f(static_cast<int>(key & ((std::uint64_t{1} << 24) - 1)))) return;
      if (!pinned && ids[0] != absent_id_) (void)f(-1);
      return;
    }
    const int* const ranked = ranked_of(i);
    for (std::size_t r = 0; r < ranked_begin_[i + 1] - ranked_begin_[i]; ++r) {
      const int k = ranked[r];
      if (pinned && pb_.valid[i][static_cast<std::size_t>(k)].config != pb_.current[i]) continue;
      if ((by_sum || multiset_[static_cast<std::size_t>(tid(i, k))] != 0) && !f(k)) return;
    }
    if (!pinned && (by_sum || multiset_[static_cast<std::size_t>(tid(i, -1))] != 0)) (void)f(-1);
  }

  // Class 1: the range of the terms still to decide after each depth; the class's tolerance and,
  // twice as wide, the pruning's slack (so the search's sums, taken in decision order, never prune
  // a member of the class, whose objective is summed in input order). Once per search.
  // The ranges are least and largest values (build_low_high: the same in any order of a job's
  // options); the tolerance is a sum, taken in the jobs' rank order (build_ranges).
  void build_low_high() {
    if (!low_.empty()) return;
    low_.assign(n_ + 1, 0.0);
    high_.assign(n_ + 1, 0.0);
    // By the way, the magnitude the tolerance sums, in another order (by_sum_out_of_reach's bounds):
    // per job, then over the jobs.
    double magnitude = std::abs(target_);
    std::size_t terms = 1;
    for (std::size_t d = n_; d-- > 0;) {
      const std::size_t i = order_[d];
      double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0.0;
      bool any = false;
      auto add = [&](double v) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        sum += std::abs(v);
        any = true;
      };
      // for_each_option(i, true)'s options in entry order: a pinned job's current configuration,
      // else every entry, then no GPUs. (Minima and maxima do not depend on the order: a -0 or +0
      // taken in another order adds to the sums below, which start at +0, alike.)
      const auto v = pb_.valid[i];
      const bool pinned = req_.pinned[i] != 0;
      for (std::size_t k = 0; k < v.size(); ++k)
        if (!pinned || v[k].config == pb_.current[i]) add(value_term(i, static_cast<int>(k)));
      if (!pinned) add(value_term(i, -1));
      magnitude += sum;
      terms += v.size() + 1;
      if (!any) lo = hi = 0.0;  // (a pin that no longer fits: no option at all)
      low_[d] = low_[d + 1] + lo;
      high_[d] = high_[d + 1] + hi;
    }
    approx_magnitude_ = magnitude;
    approx_terms_ = terms;
  }
  void build_ranges() {
    if (tolerance_built_) return;
    tolerance_built_ = true;
    build_low_high();
    double magnitude = std::abs(target_);
    for (std::size_t d = n_; d-- > 0;) {
      const std::size_t i = order_[d];
      for_each_option(i, true, [&](int k) {
        magnitude += std::abs(value_term(i, k));
        return true;
      });
    }
    slack_ = slack_of(magnitude);
    tolerance_ = slack_ / 2.0;
  }
  double slack_of(double magnitude) const {
    return 4.0 * static_cast<double>(n_ + 1) * std::numeric_limits<double>::epsilon() * magnitude;
  }

  // Per option of opts_, its charges in one array: the capacity rows (CapacityUse's, as handles
  // give them) and then the tenant rows it is a member of (tenants.hpp's rows for these
  // requirements: caps of the job's tenant, guarantees of other tenants), numbered after the
  // capacity rows. One loop over them checks both kinds, with no test per step for whether the
  // round has tenants.
  void reset_rows() {
    row_bound_.clear();
    for (const CapacityRow& r : pb_.set.rows) row_bound_.push_back(r.capacity);
    for (const TenantRow& r : tenant_rows_) row_bound_.push_back(r.bound);
    row_used_.assign(row_bound_.size(), 0);
  }
  // Depth d's options' charges, after those of the depths before it.
  void append_charges(std::size_t d) {
    const std::size_t capacity_rows = pb_.set.rows.size();
    const std::size_t i = order_[d];
    for (std::size_t at = depth_begin_[d]; at < depth_begin_[d + 1]; ++at) {
      Option& o = opts_[at];
      o.first = static_cast<int>(charges_.size());
      if (o.k >= 0) {
        const Entry& e = pb_.valid[i][static_cast<std::size_t>(o.k)];
        for (const auto& c : usage_.charges(charge(i, o.k))) charges_.push_back(c);
        for (std::size_t r = 0; r < tenant_rows_.size(); ++r)
          if (const long long u = tenant_usage(pb_, tenant_rows_[r], i, e); u > 0)
            charges_.emplace_back(static_cast<int>(capacity_rows + r), static_cast<int>(u));
      }
      o.end = static_cast<int>(charges_.size());
    }
  }
  void build_charges() {
    reset_rows();
    charges_.clear();
    charges_.reserve(opts_.size());
    for (std::size_t d = 0; d < n_; ++d) append_charges(d);
    // The rest is class 1's (node_mask).
    least_.assign(n_, std::numeric_limits<double>::infinity());
    most_.assign(n_, -std::numeric_limits<double>::infinity());
    for (std::size_t d = 0; d < n_; ++d)
      for (std::size_t at = depth_begin_[d]; at < depth_begin_[d + 1]; ++at) {
        least_[d] = std::min(least_[d], opts_[at].value);
        most_[d] = std::max(most_[d], opts_[at].value);
      }
    mask_value_.resize(opts_.size());
    for (std::size_t at = 0; at < opts_.size(); ++at) mask_value_[at] = opts_[at].value;
    one_charge_.assign(opts_.size(), OneCharge{kNoCharge, 0});
    masks_ok_ = true;
    for (std::size_t d = 0; d < n_; ++d) masks_ok_ = masks_ok_ && depth_begin_[d + 1] - depth_begin_[d] <= 64;
    for (std::size_t at = 0; at < opts_.size(); ++at) {
      const Option& o = opts_[at];
      if (o.k < 0) {
        one_charge_[at].row = kWaiting;
        continue;
      }
      int positive = 0;
      for (int q = o.first; q < o.end; ++q) {
        const auto& [row, g] = charges_[static_cast<std::size_t>(q)];
        if (g <= 0) continue;
        ++positive;
        one_charge_[at] = OneCharge{row, g};
      }
      if (positive > 1) one_charge_[at] = OneCharge{kSeveral, 0};
    }
  }

  const Problem& pb_;
  const Requirements& req_;
  std::size_t n_;
  double waiting_;
  double target_ = 0.0;
  int forced_waiting_ = 0;
  bool by_sum_ = false;
  bool count_dead_ends_ = true;
  ExactSearchStats stats_;
  std::vector<std::size_t> order_;
  Choice given_;
  std::vector<Entry> held_;  // per job: its entry in given_ (config -1: no GPUs)
  CapacityUse usage_;
  std::unique_ptr<int[]> charge_;            // per entry (ranked_begin_'s numbering): usage_'s handle,
  std::vector<std::uint64_t> charge_known_;  // where a bit is set
  // Per job with several options of a given term: term(i, k)'s id at term_id_[given_terms_[i].id + k + 1].
  std::vector<int> term_id_;
  // Per job: its one option k (-1: no GPUs) whose term is a given one and the term's id, or
  // kSeveralGiven (two or more: class 2 walks its ranked entries) and where its ids lie in term_id_.
  static constexpr int kSeveralGiven = -2;
  struct GivenTerms {
    int only;
    int id;
  };
  std::vector<GivenTerms> given_terms_;
  // The given terms' ids (number_given): the given allocation's terms in order of first appearance,
  // found by their bits in one open-addressing table (at most n_ terms in twice as many slots or more;
  // every job's every option is looked up: hundreds of thousands at 20,000 jobs, where a node-based
  // map's lookups took most of this). A slot's term bits and id side by side, a bitmap of the slots
  // taken, small enough to stay in the first-level cache, and per slot a 16-bit tag of its term from
  // other bits of the hash: most options' terms are not among the given ones (at 20,000 jobs about
  // 240,000 of 261,000 lookups), and their lookups end at the bitmap (two in three) or at a tag (the
  // rest but one in 65,536) without reading the table, a megabyte there. Before it, a filter of 16
  // bits per job (the top bits of the hash, refining a slot's), set for every given term, so a clear
  // bit proves a term absent — for all but about one in sixteen absent terms here, with a branch that
  // is nearly always taken the same way.
  struct TermSlot {  // read only where `taken` says it was written
    std::uint64_t bits;
    int id;
  };
  struct TermTable {
    std::size_t slots = 0;
    int shift = 0, filter_shift = 0;
    std::unique_ptr<TermSlot[]> table;
    std::vector<std::uint64_t> taken, filter;
    std::vector<std::uint16_t> tags;
    static std::uint64_t hash_of(std::uint64_t b) { return b * 0x9E3779B97F4A7C15ULL; }
    [[nodiscard]] std::size_t start_of(std::uint64_t h) const { return static_cast<std::size_t>(h >> shift); }
    [[nodiscard]] std::uint16_t tag_of(std::uint64_t h) const {
      return static_cast<std::uint16_t>(h >> (shift - 16));  // below the slot's
    }
    [[nodiscard]] bool is_taken(std::size_t h) const { return ((taken[h >> 6] >> (h & 63)) & 1U) != 0; }
    // The id of a term, or `absent` when it is not a given one.
    [[nodiscard]] int id_of(std::uint64_t b, int absent) const {
      const std::uint64_t hash = hash_of(b);
      const auto f = static_cast<std::size_t>(hash >> filter_shift);
      if (((filter[f >> 6] >> (f & 63)) & 1U) == 0) return absent;
      const std::uint16_t tag = tag_of(hash);
      for (std::size_t h = start_of(hash);; h = (h + 1) & (slots - 1)) {
        if (!is_taken(h)) return absent;
        if (tags[h] == tag && table[h].bits == b) return table[h].id;
      }
    }
  };
  TermTable terms_;
  std::vector<int> given_id_;              // per job: its given term's id (number_given)
  std::vector<char> numbered_;             // per job: given_terms_ holds its options' ids (number_job)
  bool numbered_all_ = false;              // every job's (number_terms)
  std::vector<std::uint64_t> job_bits_;    // number_job's scratch: per option its term's bits,
  std::vector<unsigned char> job_hit_;     // its filter bit,
  std::vector<int> ids_;                   // its id
  int absent_id_ = 0;                      // the id every term that is not a given one shares
  std::vector<long> multiset_, left_;      // per term id: count in the given allocation, left to place
  std::vector<std::size_t> ranked_begin_;  // per job: its entries in ranked_ (+ one past the end)
  std::unique_ptr<int[]> ranked_;          // per job, its entries in rank order (ranked_of)
  std::vector<char> ranked_done_;          // per job: ranked_ holds its order
  std::vector<std::uint64_t> place_;       // per configuration: its place in the rank order (prepare_ranks)
  std::vector<std::uint64_t> keys_;        // ranked_of's scratch
  struct Option {
    int k;           // entry of the job's valid configurations; -1: no GPUs
    int term;        // class 2: tid(job, k)
    int first, end;  // its charges: charges_[first, end)
    double value;    // value_term(job, k)
  };
  std::vector<Option> opts_;  // per depth (decision order), the job's options best first
  // Class 2's dead ends (build_needs, dead_subtree_steps): per term, the depths needing it and
  // what is left of it beyond them; per depth, its one term (-1: several); per option, whether it
  // competes with those depths; per term, the deepest depth offering it.
  // by_terms_out_of_reach: the options its counts may look at, together.
  static constexpr long long kProbeWork = 100'000;
  static constexpr int kDeadTries = 16;  // per search: dead ends it may fail to count before walking them all
  // Per call of canonicalize_exactly: the options the counting may look at, over all its dead ends.
  // A state map costs many of the search's steps per option looked at, and pays only where states
  // merge many nodes (the rounds above: thousands of options for a million steps); where they do
  // not, this bounds what the counting can add to the search (about as much as the search itself).
  long long dead_work_left_ = 100'000;
  std::vector<long> need_total_, slack_left_;
  std::vector<int> sole_term_;
  std::vector<unsigned char> watch_;
  std::vector<std::size_t> last_depth_;
  StateSet states_now_, states_next_;     // dead_subtree_steps' scratch
  std::vector<std::size_t> depth_begin_;  // per depth: its first option in opts_ (+ one past the end)
  int options_class_ = 0;                 // the class opts_ (and low_, high_, slack_) were built for; 0: none
  std::vector<double> low_, high_;
  double slack_ = 0.0;
  bool tolerance_built_ = false;  // slack_ and tolerance_ (build_ranges)
  // build_low_high's magnitude, summed in another order than build_ranges', and how many terms it sums.
  double approx_magnitude_ = 0.0;
  std::size_t approx_terms_ = 0;
  // Class 1's width: 2(n + 1)·ε times the sum of |terms| over every option and |objective|, so at
  // least (n + 1)·ε·(Σ|terms of x| + Σ|terms of y|) for any two allocations x, y: room for the
  // rounding by which two sums of one real value differ (the sums' own, taken in other orders, and
  // a few ulps per term computed along another path: 4/3 + 8/3 against 4).
  double tolerance_ = 0.0;
  std::vector<TenantRow> tenant_rows_;           // empty: no tenant row this round
  std::vector<long long> row_bound_, row_used_;  // per row: the capacity rows, then the tenant rows
  std::vector<std::pair<int, int>> charges_;     // (row, GPUs) of every option: Option::first..end
  // Class 1's node_mask: per option, its one positive charge (row >= 0), or none (the job waits:
  // kWaiting; kNoCharge), or several (kSeveral: all checked); masks_ok_: every depth has <= 64 options.
  static constexpr int kNoCharge = -1, kWaiting = -2, kSeveral = -3;
  struct OneCharge {
    int row;
    long long gpus;
  };
  std::vector<OneCharge> one_charge_;
  bool masks_ok_ = false;
  std::vector<double> least_, most_;  // per depth: its options' least and largest value
  std::vector<double> mask_value_;    // per option: its value (Option::value), in one array
};

}  // namespace

#undef SIA_TIES_INLINE

bool canonicalize_exactly(const Problem& pb, const Requirements& req, Choice& ch, long long budget, bool shortcuts,
                          ExactSearchStats* stats, double window_margin, std::size_t terms_window) {
  if (pb.num_jobs() == 0) return true;
  CanonicalSearch search(pb, req, ch);
  search.count_dead_ends(shortcuts);
  struct Report {
    const CanonicalSearch& search;
    ExactSearchStats* to;
    ~Report() {
      if (to) *to = search.stats();
    }
  } report{search, stats};
  // Fewest forced jobs without GPUs first (the fewest `unmet`): the smallest limit for which the
  // class has a member, by bisection (a larger limit only admits more allocations).
  auto settle = [&](bool by_sum, long long& share) -> std::optional<Choice> {
    int lo = 0, hi = search.forced_waiting();
    // Rounds of as many jobs as class 1's share or more: no search when it cannot settle.
    if (by_sum && shortcuts && search.by_sum_out_of_reach(hi, share, window_margin)) return std::nullopt;
    // Class 2 certain to run out of its steps on its first run (which then ends it): no search.
    if (!by_sum && shortcuts && search.by_terms_out_of_reach(hi, share, terms_window)) {
      share = -1;
      return std::nullopt;
    }
    std::optional<Choice> best = search.run(by_sum, hi, share);  // the given allocation qualifies
    if (!best) return std::nullopt;
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      auto found = search.run(by_sum, mid, share);
      if (found) {
        best = std::move(found);
        hi = mid;
      } else {
        if (share < 0) return std::nullopt;  // out of budget, not an answer
        lo = mid + 1;
      }
    }
    return best;
  };
  // Class 1 is exhaustive: a small share, which rounds of a few jobs need and larger ones would
  // only spend (measured: 6 ms more per 200-job round with a quarter of the default budget).
  long long by_sum = std::min(budget / 4, 20'000LL);
  long long by_terms = budget - by_sum;
  if (auto found = settle(true, by_sum)) {
    ch = std::move(*found);
    return true;
  }
  if (auto found = settle(false, by_terms)) {
    ch = std::move(*found);
    return true;
  }
  if (by_terms < 0) search.note_out_of_budget();
  return false;
}

}  // namespace sia::detail
