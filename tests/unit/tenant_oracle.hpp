#pragma once
// The tenants' caps and guarantees (tenant_spec.hpp, docs/decision.md "Tenants") re-derived from
// their documented definition over the oracle of round_oracle.hpp, and random instances with weights
// and tenants. Used by test_round_tenants.cpp and test_ties_weighted.cpp.
#include <sia/round.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "unit/round_oracle.hpp"

namespace sia::test {

// One row of the oracle: Σ over member jobs of the GPUs of their configuration on `types` <= bound.
struct OracleRow {
  std::vector<char> member;  // per job
  std::vector<char> types;   // per GPU type
  long long bound = 0;
};

inline int free_gpus(const ClusterSpec& c, int t) {
  const auto& g = c.types[static_cast<std::size_t>(t)];
  const int up =
      g.num_nodes() -
      static_cast<int>(c.down.size() > static_cast<std::size_t>(t) ? c.down[static_cast<std::size_t>(t)].size() : 0);
  return std::max(0, up * g.gpus_per_node() - c.reserved_gpus(t));
}

// The rows as tenant_spec.hpp defines them.
inline std::vector<OracleRow> oracle_rows(const OracleInstance& in, const OracleProblem& pb) {
  std::vector<OracleRow> rows;
  const std::size_t n = in.jobs.size();
  const int ntypes = in.cluster.num_types();
  auto tenant_of = [&](std::size_t i) { return in.jobs[i].tenant(); };
  auto pinned_gpus = [&](std::size_t i, const std::vector<char>& types) -> long long {
    if (pb.pinned[i] < 0) return 0;
    const auto& x = pb.configs[static_cast<std::size_t>(pb.pinned[i])];
    return types[static_cast<std::size_t>(x.type)] ? x.gpus : 0;
  };
  for (const TenantSpec& t : in.options.tenants) {
    auto cap_row = [&](int type, long long cap) {
      OracleRow r;
      r.types.assign(static_cast<std::size_t>(ntypes), type < 0 ? 1 : 0);
      if (type >= 0) r.types[static_cast<std::size_t>(type)] = 1;
      long long held = 0;
      for (std::size_t i = 0; i < n; ++i) {
        r.member.push_back(tenant_of(i) == t.name ? 1 : 0);
        if (r.member[i]) held += pinned_gpus(i, r.types);
      }
      r.bound = std::max(cap, held);
      rows.push_back(r);
    };
    if (t.max_gpus) cap_row(-1, *t.max_gpus);
    for (int ty = 0; ty < static_cast<int>(t.max_gpus_per_type.size()); ++ty)
      if (t.max_gpus_per_type[static_cast<std::size_t>(ty)] >= 0)
        cap_row(ty, t.max_gpus_per_type[static_cast<std::size_t>(ty)]);
    if (t.guaranteed_gpus <= 0) continue;
    OracleRow r;
    r.types.assign(static_cast<std::size_t>(ntypes), 0);
    long long demand = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (tenant_of(i) != t.name) continue;
      int most = 0;
      for (const auto& e : pb.entries[i]) {
        const auto& x = pb.configs[static_cast<std::size_t>(e.config)];
        r.types[static_cast<std::size_t>(x.type)] = 1;
        most = std::max(most, x.gpus);
      }
      demand += most;
    }
    long long room = 0, capacity = 0, held = 0;
    for (int ty = 0; ty < ntypes; ++ty) {
      if (!r.types[static_cast<std::size_t>(ty)]) continue;
      long long f = free_gpus(in.cluster, ty);
      capacity += f;
      if (!t.max_gpus_per_type.empty() && t.max_gpus_per_type[static_cast<std::size_t>(ty)] >= 0)
        f = std::min<long long>(f, t.max_gpus_per_type[static_cast<std::size_t>(ty)]);
      room += f;
    }
    for (std::size_t i = 0; i < n; ++i)
      if (tenant_of(i) != t.name) held += pinned_gpus(i, r.types);
    const long long left = std::max(0LL, capacity - held);
    long long reserved = std::min({static_cast<long long>(t.guaranteed_gpus), demand, room, left});
    if (t.max_gpus) reserved = std::min<long long>(reserved, *t.max_gpus);
    if (reserved <= 0) continue;
    r.bound = left - reserved;
    for (std::size_t i = 0; i < n; ++i) r.member.push_back(tenant_of(i) != t.name && in.jobs[i].preemptible() ? 1 : 0);
    rows.push_back(r);
  }
  return rows;
}

inline bool rows_hold(const std::vector<OracleRow>& rows, const OracleProblem& pb, const std::vector<int>& chosen) {
  for (const auto& r : rows) {
    long long used = 0;
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      if (chosen[i] < 0 || !r.member[i]) continue;
      const auto& x = pb.configs[static_cast<std::size_t>(chosen[i])];
      if (r.types[static_cast<std::size_t>(x.type)]) used += x.gpus;
    }
    if (used > r.bound) return false;
  }
  return true;
}

// `ntenants` random tenants (caps, a per-type cap up to `max_type_cap`, guarantees that fit the free GPUs)
// and each job in one of them or in none; shared by the tenant and the weighted-ties tests.
inline void add_random_tenants(OracleInstance& in, std::mt19937& rng, int ntenants, int max_type_cap) {
  auto uni = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(rng); };
  int total = 0;
  for (int t = 0; t < in.cluster.num_types(); ++t) total += free_gpus(in.cluster, t);
  int guaranteed = 0;
  for (int t = 0; t < ntenants; ++t) {
    TenantSpec s;
    s.name = std::string(1, static_cast<char>('a' + t));
    if (uni(0, 2) > 0) s.max_gpus = uni(0, std::max(1, total / 2));
    if (uni(0, 2) == 0) {
      s.max_gpus_per_type.assign(in.cluster.types.size(), -1);
      s.max_gpus_per_type[static_cast<std::size_t>(uni(0, in.cluster.num_types() - 1))] = uni(0, max_type_cap);
    }
    if (uni(0, 1) == 0) {
      s.guaranteed_gpus = uni(1, std::max(1, total / 2));
      if (s.max_gpus) s.guaranteed_gpus = std::min(s.guaranteed_gpus, *s.max_gpus);
      if (guaranteed + s.guaranteed_gpus > total) s.guaranteed_gpus = 0;
      guaranteed += s.guaranteed_gpus;
    }
    in.options.tenants.push_back(s);
  }
  for (auto& j : in.jobs) {
    const int t = uni(-1, ntenants - 1);
    if (t >= 0) j.tenant(in.options.tenants[static_cast<std::size_t>(t)].name);
  }
}

// A random instance of round_oracle.hpp without rigid jobs (their GPUs differ from their
// configuration's), with random weights and two or three tenants.
inline OracleInstance tenant_instance(std::mt19937& rng) {
  auto uni = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(rng); };
  OracleInstance in = oracle_instance(rng, 2, 6, 3);
  in.options.relative_gap = 1e-7;  // (1e-9 is below what some rounds of utilities near 1e5 can prove, tenants or not)
  std::vector<JobSpec> kept;
  for (auto& j : in.jobs)
    if (j.kind() != JobKind::rigid) kept.push_back(std::move(j));
  in.jobs = std::move(kept);
  const double weights[] = {1.0, 1.0, 2.0, 4.0, 0.5, 2.5};
  for (auto& j : in.jobs) j.weight(weights[uni(0, 5)]);
  const int ntenants = uni(0, 3);
  add_random_tenants(in, rng, ntenants, 8);
  return in;
}

}  // namespace sia::test
