#pragma once
// An oracle of the round problem (product.md §2) re-derived from the product contract,
// independently of src/core: configuration shapes, per-job count rules, normalisation, restart
// factor, utilities, and capacity as the placeability condition "for every power-of-two threshold
// h, the items of at least h GPUs fit into the virtual nodes of at least h GPUs" (minus
// reservations); an exhaustive search of every allocation; random small instances. Used by
// test_round_conformance.cpp and test_decision_recompute.cpp.
#include <sia/configuration_set.hpp>
#include <sia/goodput_table.hpp>
#include <sia/round.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace sia::test {

// ------------------------------------------------------------------------------------------
// Independent oracle
// ------------------------------------------------------------------------------------------

inline int largest_pow2_at_most(int r) {
  int s = 1;
  while (s * 2 <= r) s *= 2;
  return s;
}

struct OracleConfig {
  int type, nodes, gpus;
  int used = 0;  // GPUs the job uses (a rigid count below the configuration's size); 0 = all
};

// The power-of-two pieces of a chosen configuration on one node each, and the bins it frees: a
// configuration used whole is `nodes` items of gpus/nodes GPUs. A rigid job using fewer GPUs
// (product contract: charged its count) is nodes − 1 whole virtual nodes plus its remainder on
// one node; a remainder that is no power of two sits in the smallest power-of-two slot holding it,
// and the rest of that slot is free for other items as bins of its binary digits (8 − 6 = 2).
struct OraclePieces {
  std::vector<int> items, bins;
};

inline OraclePieces oracle_pieces(const OracleConfig& x) {
  OraclePieces p;
  const int per_node = x.gpus / x.nodes;
  if (x.used <= 0 || x.used >= x.gpus) {
    p.items.assign(static_cast<std::size_t>(x.nodes), per_node);
    return p;
  }
  const int whole = x.nodes >= 2 ? x.nodes - 1 : 0;
  p.items.assign(static_cast<std::size_t>(whole), per_node);
  const int rest = x.used - whole * per_node;
  int slot = 1;
  while (slot < rest) slot *= 2;
  p.items.push_back(slot);
  for (int bit = 0; bit < 17; ++bit)
    if ((slot - rest) & (1 << bit)) p.bins.push_back(1 << bit);
  return p;
}

inline std::vector<OracleConfig> oracle_configs(const ClusterSpec& c) {
  std::vector<OracleConfig> out;
  for (int t = 0; t < c.num_types(); ++t) {
    const auto& g = c.types[static_cast<std::size_t>(t)];
    const int up =
        g.num_nodes() -
        (t < static_cast<int>(c.down.size()) ? static_cast<int>(c.down[static_cast<std::size_t>(t)].size()) : 0);
    if (up <= 0) continue;
    const int s = largest_pow2_at_most(g.gpus_per_node());
    for (int k = 1; k <= s; k *= 2) out.push_back({t, 1, k});
    for (int n = 2; n <= up; ++n) out.push_back({t, n, n * s});
  }
  return out;
}

// Placeability with reservations: for each type and each power-of-two threshold h, the GPUs of
// items >= h must not exceed the GPUs of virtual nodes >= h minus the reserved GPUs.
inline bool oracle_fits(const ClusterSpec& c, const std::vector<OracleConfig>& chosen) {
  for (int t = 0; t < c.num_types(); ++t) {
    const auto& g = c.types[static_cast<std::size_t>(t)];
    const int up =
        g.num_nodes() -
        (t < static_cast<int>(c.down.size()) ? static_cast<int>(c.down[static_cast<std::size_t>(t)].size()) : 0);
    for (int h = 1; h <= 1 << 16; h *= 2) {
      long long items = 0, freed = 0;
      for (const auto& x : chosen) {
        if (x.type != t) continue;
        const OraclePieces p = oracle_pieces(x);
        for (int it : p.items)
          if (it >= h) items += it;
        for (int b : p.bins)
          if (b >= h) freed += b;
      }
      long long bins = 0;
      for (int bit = 0; bit < 17; ++bit)
        if ((g.gpus_per_node() & (1 << bit)) && (1 << bit) >= h) bins += 1 << bit;
      bins *= up;
      if (items > std::max(0LL, bins - c.reserved_gpus(t)) + freed) return false;
    }
  }
  return true;
}

// First-fit decreasing of the chosen items into the virtual nodes (no reservations): the
// allocation must actually be placeable.
inline bool ffd_places(const ClusterSpec& c, const std::vector<OracleConfig>& chosen) {
  for (int t = 0; t < c.num_types(); ++t) {
    const auto& g = c.types[static_cast<std::size_t>(t)];
    std::vector<int> bins;
    for (int node = 0; node < g.num_nodes(); ++node) {
      if (c.is_down(t, node)) continue;
      for (int bit = 16; bit >= 0; --bit)
        if (g.gpus_per_node() & (1 << bit)) bins.push_back(1 << bit);
    }
    // (item, bins it frees once placed), largest item first: the freed bins are smaller than
    // their item, so they exist before any item that could use them is placed.
    std::vector<std::pair<int, std::vector<int>>> items;
    for (const auto& x : chosen)
      if (x.type == t) {
        OraclePieces p = oracle_pieces(x);
        for (std::size_t k = 0; k < p.items.size(); ++k)
          items.emplace_back(p.items[k], k + 1 == p.items.size() ? p.bins : std::vector<int>{});
      }
    std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [it, freed] : items) {
      bool placed = false;
      for (int& b : bins)
        if (b >= it) {
          b -= it;
          placed = true;
          break;
        }
      if (!placed) return false;
      bins.insert(bins.end(), freed.begin(), freed.end());
    }
  }
  return true;
}

struct OracleEntry {
  int config;    // index into oracle_configs
  double util;   // u_ij
  int used = 0;  // GPUs the job uses there
};

struct OracleResult {
  bool forced_feasible = true;
  double objective = 0.0;
};

struct OracleProblem {
  std::vector<OracleConfig> configs;
  std::vector<std::vector<OracleEntry>> entries;  // per job
  std::vector<int> pinned;                        // config index or -1
  std::vector<char> forced;
  double p = 0, lambda = 0;
  /// A utility fell within 1e-9 of a half-cent while `round_utilities` rounds to cents: the
  /// library and this oracle compute G in a different order of operations, so one ulp may round
  /// that utility to the cent above in one and below in the other (0.125 → 0.12 or 0.13). Both
  /// are right; tests comparing objectives exactly regenerate such a round without rounding.
  bool rounding_ambiguous = false;
};

inline int oracle_config_index(const std::vector<OracleConfig>& cfgs, const JobSpec& j) {
  const auto& cur = *j.current();
  for (std::size_t k = 0; k < cfgs.size(); ++k)
    if (cfgs[k].type == cur.type && cfgs[k].gpus == cur.gpus) return static_cast<int>(k);
  for (std::size_t k = 0; k < cfgs.size(); ++k)  // rigid footprint
    if (cfgs[k].type == cur.type && cfgs[k].gpus >= cur.gpus) return static_cast<int>(k);
  return -1;
}

inline OracleProblem oracle_problem(const ClusterSpec& c, const std::vector<JobSpec>& jobs, const RoundOptions& o) {
  OracleProblem pb;
  pb.p = o.p;
  pb.lambda = o.lambda;
  pb.configs = oracle_configs(c);
  for (const auto& j : jobs) {
    // Allowed counts.
    int lo = j.min_gpus(), hi = j.max_gpus();
    const int P = j.pipeline_size();
    if (j.kind() == JobKind::hybrid) lo = (std::max(lo, P) + P - 1) / P * P;
    if (j.kind() != JobKind::rigid && j.max_gpus_ever())
      hi = std::min(hi, *j.max_gpus_ever() == 0 ? lo : std::max(2 * *j.max_gpus_ever(), lo));
    const int cur = j.current() ? oracle_config_index(pb.configs, j) : -1;
    const bool pin = cur >= 0 && !j.preemptible();
    std::vector<std::pair<int, int>> cand;  // (config, gpus used)
    std::set<int> types_done;
    for (std::size_t k = 0; k < pb.configs.size(); ++k) {
      const auto& x = pb.configs[k];
      if (j.kind() == JobKind::rigid) {
        if (x.gpus >= lo && types_done.insert(x.type).second) cand.push_back({static_cast<int>(k), lo});
        continue;
      }
      if (x.gpus < lo || x.gpus > hi) continue;
      if (j.kind() == JobKind::hybrid && x.gpus % P != 0) continue;
      cand.push_back({static_cast<int>(k), x.gpus});
    }
    if (pin && std::none_of(cand.begin(), cand.end(), [&](auto& e) { return e.first == cur; }))
      cand.push_back({cur, j.current()->gpus});
    std::vector<std::tuple<int, double, int>> raw;
    double gmin = 0;
    for (auto [k, used] : cand) {
      const auto& x = pb.configs[static_cast<std::size_t>(k)];
      const double g = j.goodput(c.types[static_cast<std::size_t>(x.type)], ConfigurationSpec{x.type, x.nodes, used});
      if (g > 0) {
        raw.push_back({k, g, used});
        gmin = gmin == 0 ? g : std::min(gmin, g);
      }
    }
    const double T = j.age_s(), N = j.restarts(), S = j.restart_cost_s();
    double r = (T < S || T + S <= 0) ? 1.0 : std::max(0.0, (T - N * S) / (T + S));
    if (cur < 0) r = 1.0;
    std::vector<OracleEntry> es;
    for (auto [k, g, used] : raw) {
      double G = lo * g / gmin;
      if (k != cur) G *= r;
      if (!(G > 0)) continue;
      if (pin && k != cur) continue;
      double u = std::pow(G, o.p);
      if (o.p < 0 && u > 1e6) u = 1e6;
      if (o.round_utilities) {
        const double cents = u * 100;
        if (std::abs(cents - std::floor(cents) - 0.5) < 1e-9 * (1.0 + std::abs(cents))) pb.rounding_ambiguous = true;
        u = std::nearbyint(cents) / 100;
      }
      es.push_back({k, u, used});
    }
    pb.entries.push_back(es);
    pb.pinned.push_back(pin ? cur : -1);
    pb.forced.push_back(!j.current() && !j.preemptible() ? 1 : 0);
  }
  return pb;
}

// Exhaustive search; returns nullopt when no allocation meets the hard constraints.
inline std::optional<double> oracle_search(const ClusterSpec& c, const OracleProblem& pb, bool with_forced) {
  const std::size_t n = pb.entries.size();
  std::optional<double> best;
  std::vector<OracleConfig> chosen;
  auto rec = [&](auto&& self, std::size_t i, double obj) -> void {
    if (i == n) {
      if (!best || (pb.p > 0 ? obj > *best : obj < *best)) best = obj;
      return;
    }
    // A forced job without any usable configuration cannot be served and is not forced.
    const bool must = pb.pinned[i] >= 0 || (with_forced && pb.forced[i] && !pb.entries[i].empty());
    if (!must) self(self, i + 1, obj + (pb.p > 0 ? -pb.lambda : pb.lambda));
    for (const auto& e : pb.entries[i]) {
      chosen.push_back(pb.configs[static_cast<std::size_t>(e.config)]);
      chosen.back().used = e.used;
      if (oracle_fits(c, chosen)) self(self, i + 1, obj + e.util);
      chosen.pop_back();
    }
  };
  rec(rec, 0, 0.0);
  return best;
}

// ------------------------------------------------------------------------------------------
// Random instances
// ------------------------------------------------------------------------------------------

struct OracleInstance {
  ClusterSpec cluster;
  std::vector<JobSpec> jobs;
  RoundOptions options;
};

/// The oracle's problem for `in`, with `round_utilities` turned off in `in` when a utility lies on
/// a half-cent (OracleProblem::rounding_ambiguous): callers then run the round on the same options.
inline OracleProblem settled_oracle_problem(OracleInstance& in) {
  OracleProblem pb = oracle_problem(in.cluster, in.jobs, in.options);
  if (pb.rounding_ambiguous) {
    in.options.round_utilities = false;
    pb = oracle_problem(in.cluster, in.jobs, in.options);
  }
  return pb;
}

inline OracleInstance oracle_instance(std::mt19937& rng, int min_jobs, int max_jobs, int max_nodes, bool big = false) {
  auto uni = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(rng); };
  auto real = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
  OracleInstance in;
  const int ntypes = uni(2, 3);
  const int sizes[] = {1, 2, 3, 4, 6, 8};
  for (int t = 0; t < ntypes; ++t) {
    const int nodes = uni(1, max_nodes);
    in.cluster.types.emplace_back("t" + std::to_string(t), nodes, sizes[uni(0, 5)]);
  }
  in.cluster.down.resize(static_cast<std::size_t>(ntypes));
  in.cluster.reserved.assign(static_cast<std::size_t>(ntypes), 0);
  for (int t = 0; t < ntypes; ++t) {
    const auto& g = in.cluster.types[static_cast<std::size_t>(t)];
    if (g.num_nodes() > 1 && uni(0, 5) == 0)
      in.cluster.down[static_cast<std::size_t>(t)].push_back(uni(0, g.num_nodes() - 1));
    const int up =
        (g.num_nodes() - static_cast<int>(in.cluster.down[static_cast<std::size_t>(t)].size())) * g.gpus_per_node();
    if (uni(0, 3) == 0) in.cluster.reserved[static_cast<std::size_t>(t)] = uni(0, std::min(up, 3));
  }
  const auto cfgs = make_configuration_set(in.cluster).configs;
  int total = 0;
  for (const auto& g : in.cluster.types) total += g.num_nodes() * g.gpus_per_node();

  std::vector<OracleConfig> pins;  // keep pinned jobs jointly feasible
  const int njobs = uni(min_jobs, max_jobs);
  for (int i = 0; i < njobs; ++i) {
    JobSpec j("j" + std::to_string(i));
    const int kind = uni(0, 3);
    j.kind(static_cast<JobKind>(kind));
    if (j.kind() == JobKind::rigid) {
      const int n = uni(1, std::min(total, 9));
      j.min_gpus(n).max_gpus(n);
    } else {
      const int lo = uni(1, 3);
      j.min_gpus(lo).max_gpus(uni(0, 3) == 0 ? 1 << 20 : lo + uni(0, 16));
    }
    if (j.kind() == JobKind::hybrid) j.pipeline_size(uni(1, 4));
    if (uni(0, 2) == 0) j.max_gpus_ever(uni(0, 6));
    // Goodput table over (type, gpus): random, some holes, roughly increasing.
    auto table = std::make_shared<std::map<std::pair<int, int>, double>>();
    for (int t = 0; t < ntypes; ++t) {
      double v = real(0.5, 4.0);
      for (int g = 1; g <= 64; ++g) {
        v *= big ? real(1.0, 1.1) : real(1.0, 1.6);
        (*table)[{t, g}] = uni(0, 6) == 0 ? 0.0 : (big ? std::round(v * 8) / 8 : v);
      }
    }
    if (!cfgs.empty() && uni(0, 2) == 0) {
      const auto& c = cfgs[static_cast<std::size_t>(uni(0, static_cast<int>(cfgs.size()) - 1))];
      CurrentAllocation cur{c.type, c.gpus, c.nodes, {}};
      bool ok = true;
      if (j.kind() == JobKind::rigid) {
        // A rigid job runs with its count on its footprint.
        int fp = -1;
        for (const auto& x : cfgs)
          if (x.type == c.type && x.gpus >= j.min_gpus()) {
            fp = x.gpus;
            break;
          }
        ok = fp > 0;
        cur.gpus = j.min_gpus();
      }
      if (ok) {
        j.current(cur).age_s(real(0, 600)).restarts(uni(0, 4)).restart_cost_s(real(0, 120));
        if (uni(0, 3) == 0) {
          // Non-preemptible running: only if all pins together stay placeable.
          ConfigurationSpec fc{};
          for (const auto& x : cfgs)
            if (x.type == cur.type && x.gpus >= cur.gpus) {
              fc = x;
              break;
            }
          pins.push_back({fc.type, fc.nodes, fc.gpus});
          if (oracle_fits(in.cluster, pins)) {
            j.preemptible(false);
            auto& val = (*table)[{cur.type, cur.gpus}];
            if (val <= 0) val = real(0.5, 4.0);
          } else {
            pins.pop_back();
          }
        }
      }
    } else if (uni(0, 4) == 0) {
      j.preemptible(false);  // waiting and must run
    }
    j.goodput_fn([table](const GpuTypeSpec& g, const ConfigurationSpec& c) {
      (void)g;
      const auto it = table->find({c.type, c.gpus});
      return it == table->end() ? 0.0 : it->second;
    });
    in.jobs.push_back(std::move(j));
  }
  const double ps[] = {1.0, 0.5, 2.0, -0.5, -1.0, -0.25};
  const double lambdas[] = {1.1, 0.3, 3.0};
  in.options.p = ps[uni(0, 5)];
  in.options.lambda = lambdas[uni(0, 2)];
  in.options.round_utilities = uni(0, 4) == 0;
  in.options.relative_gap = 1e-9;
  in.options.time_limit = std::chrono::milliseconds(20000);
  return in;
}

}  // namespace sia::test
