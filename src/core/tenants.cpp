// Tenants' caps and guarantees as rows of the round (tenants.hpp, docs/decision.md "Tenants").
#include "core/tenants.hpp"

#include "core/capacity_use.hpp"

#include <algorithm>
#include <climits>
#include <utility>

namespace sia::detail {
namespace {

// A job whose configuration the round may take away or withhold: neither running
// non-preemptible (pinned) nor waiting non-preemptible (forced). Decided from what the job asks,
// not from what the round could honour, so the rows mean the same whatever capacity did.
bool preemptible(const Problem& pb, std::size_t i) { return !pb.required.pinned[i] && !pb.required.forced[i]; }

}  // namespace

bool tenant_member(const Problem& pb, const TenantRow& r, std::size_t i) {
  if (!r.reservation) return pb.tenant[i] == r.tenant;
  return pb.tenant[i] != r.tenant && preemptible(pb, i);
}

long long tenant_usage(const Problem& pb, const TenantRow& r, std::size_t i, const Entry& e) {
  if (!tenant_member(pb, r, i)) return 0;
  const int type = pb.set.configs[static_cast<std::size_t>(e.config)].type;
  return r.on_type[static_cast<std::size_t>(type)] ? e.gpus : 0;
}

std::vector<TenantRow> tenant_rows(const Problem& pb, const Requirements& req) {
  std::vector<TenantRow> rows;
  if (pb.tenants.empty()) return rows;
  const std::size_t ntypes = pb.set.free_gpus.size();
  const std::size_t n = pb.num_jobs();
  // GPUs held by running jobs that keep them (pins), per job.
  auto pinned_entry = [&](std::size_t i) -> const Entry* {
    if (!req.pinned[i]) return nullptr;
    const int k = pb.entry_of(i, pb.current[i]);
    return k < 0 ? nullptr : &pb.valid[i][static_cast<std::size_t>(k)];
  };
  for (std::size_t t = 0; t < pb.tenants.size(); ++t) {
    const TenantSpec& spec = pb.tenants[t];
    const int ti = static_cast<int>(t);
    auto add_cap = [&](TenantRow::Kind kind, int type, long long cap) {
      TenantRow r;
      r.tenant = ti;
      r.kind = kind;
      r.on_type.assign(ntypes, type < 0 ? 1 : 0);
      if (type >= 0) r.on_type[static_cast<std::size_t>(type)] = 1;
      // A running non-preemptible job keeps its GPUs above the cap: the cap then admits nothing more
      // (and the round stays feasible).
      long long held = 0;
      for (std::size_t i = 0; i < n; ++i)
        if (const Entry* e = pinned_entry(i)) held += tenant_usage(pb, r, i, *e);
      r.bound = std::max(cap, held);
      rows.push_back(std::move(r));
    };
    if (spec.max_gpus) add_cap(TenantRow::Kind::cap, -1, *spec.max_gpus);
    for (std::size_t ty = 0; ty < spec.max_gpus_per_type.size() && ty < ntypes; ++ty)
      if (spec.max_gpus_per_type[ty] >= 0)
        add_cap(TenantRow::Kind::cap_per_type, static_cast<int>(ty), spec.max_gpus_per_type[ty]);
    if (spec.guaranteed_gpus <= 0) continue;
    // The guarantee: the types the tenant's jobs can use, its demand there, and what others leave.
    TenantRow r;
    r.tenant = ti;
    r.reservation = true;
    r.kind = TenantRow::Kind::guarantee;
    r.on_type.assign(ntypes, 0);
    long long demand = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (pb.tenant[i] != ti) continue;
      int most = 0;
      for (const Entry& e : pb.valid[i]) {
        r.on_type[static_cast<std::size_t>(pb.set.configs[static_cast<std::size_t>(e.config)].type)] = 1;
        most = std::max(most, e.gpus);
      }
      demand += most;
    }
    long long room = 0;  // GPUs of those types, less the caps on them
    for (std::size_t ty = 0; ty < ntypes; ++ty) {
      if (!r.on_type[ty]) continue;
      long long free = pb.set.free_gpus[ty];
      if (ty < spec.max_gpus_per_type.size() && spec.max_gpus_per_type[ty] >= 0)
        free = std::min<long long>(free, spec.max_gpus_per_type[ty]);
      room += free;
    }
    long long capacity = 0;  // GPUs of those types, less what other tenants' pinned jobs hold
    for (std::size_t ty = 0; ty < ntypes; ++ty)
      if (r.on_type[ty]) capacity += pb.set.free_gpus[ty];
    long long held_by_others = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (pb.tenant[i] == ti) continue;
      if (const Entry* e = pinned_entry(i)) {
        const int type = pb.set.configs[static_cast<std::size_t>(e->config)].type;
        if (r.on_type[static_cast<std::size_t>(type)]) held_by_others += e->gpus;
      }
    }
    demand = std::min(demand, room);
    if (spec.max_gpus) demand = std::min<long long>(demand, *spec.max_gpus);
    const long long left = std::max(0LL, capacity - held_by_others);
    const long long reserved = std::min({static_cast<long long>(spec.guaranteed_gpus), demand, left});
    if (reserved <= 0) continue;
    r.bound = left - reserved;
    rows.push_back(std::move(r));
  }
  return rows;
}

TenantUse::TenantUse(const Problem& pb, std::vector<TenantRow> rows)
    : pb_(&pb), rows_(std::move(rows)), rows_of_job_(pb.num_jobs()), used_(rows_.size(), 0) {
  for (std::size_t r = 0; r < rows_.size(); ++r)
    for (std::size_t i = 0; i < pb.num_jobs(); ++i)
      if (tenant_member(pb, rows_[r], i)) rows_of_job_[i].push_back(r);
}

bool TenantUse::fits(std::size_t i, const Entry& e) const {
  for (std::size_t r : rows_of_job_[i]) {
    const long long u = tenant_usage(*pb_, rows_[r], i, e);
    if (u > 0 && used_[r] + u > rows_[r].bound) return false;
  }
  return true;
}

void TenantUse::add(std::size_t i, const Entry& e) {
  for (std::size_t r : rows_of_job_[i]) used_[r] += tenant_usage(*pb_, rows_[r], i, e);
}

bool TenantUse::within_bounds() const {
  for (std::size_t r = 0; r < rows_.size(); ++r)
    if (used_[r] > rows_[r].bound) return false;
  return true;
}

std::vector<char> held_by_tenants(const Problem& pb, const Requirements& req, const Choice& ch) {
  std::vector<char> out(pb.num_jobs(), 0);
  if (pb.tenants.empty()) return out;
  CapacityUse capacity(pb.set);
  TenantUse use(pb, tenant_rows(pb, req));
  for (std::size_t i = 0; i < pb.num_jobs(); ++i)
    if (ch[i] >= 0) {
      const Entry& e = pb.valid[i][static_cast<std::size_t>(ch[i])];
      capacity.add(e.config, e.gpus);
      use.add(i, e);
    }
  for (std::size_t i = 0; i < pb.num_jobs(); ++i) {
    if (ch[i] >= 0) continue;
    bool fits_capacity = false, fits_both = false;
    for (const Entry& e : pb.valid[i]) {
      if (!capacity.fits(e.config, e.gpus)) continue;
      fits_capacity = true;
      fits_both = fits_both || use.fits(i, e);
    }
    out[i] = fits_capacity && !fits_both ? 1 : 0;
  }
  return out;
}

std::vector<int> tenant_gpus(const Problem& pb, const Choice& ch) {
  std::vector<int> out(pb.tenants.size(), 0);
  for (std::size_t i = 0; i < pb.num_jobs(); ++i)
    if (ch[i] >= 0 && pb.tenant[i] >= 0)
      out[static_cast<std::size_t>(pb.tenant[i])] += pb.valid[i][static_cast<std::size_t>(ch[i])].gpus;
  return out;
}

bool tenants_respected(const Problem& pb, const Requirements& req, const Choice& ch) {
  if (pb.tenants.empty()) return true;
  TenantUse use(pb, tenant_rows(pb, req));
  for (std::size_t i = 0; i < pb.num_jobs(); ++i)
    if (ch[i] >= 0) use.add(i, pb.valid[i][static_cast<std::size_t>(ch[i])]);
  return use.within_bounds();
}

}  // namespace sia::detail
