#pragma once
// Private to the round: the tenants' caps and guarantees (tenant_spec.hpp, docs/decision.md
// "Tenants") as rows over (job, configuration) pairs — the same rows for the binary program, the
// independent check of a backend's answer, the greedy fallback and the tie rules.
#include <cstddef>
#include <vector>

#include "core/problem.hpp"

namespace sia::detail {

/// One tenant row: Σ over member jobs of the GPUs their chosen configuration uses on the row's
/// types <= bound.
struct TenantRow {
  int tenant = 0;             ///< index into Problem::tenants
  bool reservation = false;   ///< false: the tenant's cap (members: its jobs); true: its guarantee
                              ///< (members: other tenants' preemptible jobs)
  std::vector<char> on_type;  ///< per GPU type: counted on this row
  long long bound = 0;        ///< GPUs
  enum class Kind { cap, cap_per_type, guarantee } kind = Kind::cap;
};

/// The rows of a round, for requirements `req` (pins decide what is already held).
[[nodiscard]] std::vector<TenantRow> tenant_rows(const Problem& pb, const Requirements& req);

/// Is job i a member of row r?
[[nodiscard]] bool tenant_member(const Problem& pb, const TenantRow& r, std::size_t i);

/// GPUs entry e of job i counts on row r (0 when i is not a member or the type is not counted).
[[nodiscard]] long long tenant_usage(const Problem& pb, const TenantRow& r, std::size_t i, const Entry& e);

/// Tenant rows' use by a growing allocation (like CapacityUse, but per job).
class TenantUse {
 public:
  TenantUse(const Problem& pb, std::vector<TenantRow> rows);
  [[nodiscard]] bool fits(std::size_t i, const Entry& e) const;
  void add(std::size_t i, const Entry& e);
  [[nodiscard]] bool within_bounds() const;
  [[nodiscard]] const std::vector<TenantRow>& rows() const noexcept { return rows_; }

 private:
  const Problem* pb_;
  std::vector<TenantRow> rows_;
  std::vector<std::vector<std::size_t>> rows_of_job_;  // only rows the job is a member of
  std::vector<long long> used_;
};

/**
 * @brief Per job: 1 when the job gets no GPUs in `ch` although one of its configurations fits the
 * GPUs `ch` leaves free, and every such configuration is refused by a tenant row (its tenant's cap,
 * or another tenant's guarantee) — the job waits because of tenants, not capacity.
 */
[[nodiscard]] std::vector<char> held_by_tenants(const Problem& pb, const Requirements& req, const Choice& ch);

/// GPUs the jobs of each tenant use in `ch` (indexed like Problem::tenants).
[[nodiscard]] std::vector<int> tenant_gpus(const Problem& pb, const Choice& ch);

/// Does allocation `ch` respect every tenant row?
[[nodiscard]] bool tenants_respected(const Problem& pb, const Requirements& req, const Choice& ch);

}  // namespace sia::detail
