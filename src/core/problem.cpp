// The round's problem from validated input (product.md §2 steps 1-3 and 5-6).
#include "core/problem.hpp"

#include <sia/error.hpp>
#include <sia/goodput_matrix.hpp>
#include <sia/lost_allocations.hpp>
#include <sia/valid_configs.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_set>

#include "core/id_index.hpp"
#include "core/input_checks.hpp"
#include "core/prefetch.hpp"
#include "core/round_cache.hpp"

namespace sia::detail {
namespace {

JobLimits limits_of(const JobSpec& j) {
  return JobLimits{j.min_gpus(),       j.max_gpus(),          j.kind(), j.pipeline_size(), j.max_gpus_ever(),
                   j.pipeline_sizes(), j.max_pipelines_ever()};
}

// Tenants: names unique and non-empty, caps and guarantees non-negative, per-type caps indexed by
// the cluster's types, and guarantees that the cluster's GPUs (all nodes up, nothing reserved) can
// hold together.
void check_tenants(const std::vector<TenantSpec>& tenants, const ClusterSpec& cluster) {
  std::unordered_set<std::string_view> names;
  long long guaranteed = 0, total = 0;
  for (const auto& t : cluster.types) total += static_cast<long long>(t.num_nodes()) * t.gpus_per_node();
  for (std::size_t k = 0; k < tenants.size(); ++k) {
    const TenantSpec& t = tenants[k];
    const std::string label =
        "RoundOptions.tenants[" + std::to_string(k) + "]" + (t.name.empty() ? std::string() : " ('" + t.name + "')");
    if (t.name.empty()) throw InvalidArgument(label + ": empty name");
    if (!names.insert(t.name).second) throw InvalidArgument(label + ": duplicate tenant name");
    if (t.max_gpus && *t.max_gpus < 0)
      throw InvalidArgument(label + ": max_gpus must be >= 0 (got " + std::to_string(*t.max_gpus) + ")");
    if (t.guaranteed_gpus < 0)
      throw InvalidArgument(label + ": guaranteed_gpus must be >= 0 (got " + std::to_string(t.guaranteed_gpus) + ")");
    if (t.max_gpus && t.guaranteed_gpus > *t.max_gpus)
      throw InvalidArgument(label + ": guaranteed_gpus (" + std::to_string(t.guaranteed_gpus) + ") exceeds max_gpus (" +
                            std::to_string(*t.max_gpus) + ")");
    if (!t.max_gpus_per_type.empty() && static_cast<int>(t.max_gpus_per_type.size()) != cluster.num_types())
      throw InvalidArgument(label + ": max_gpus_per_type has " + std::to_string(t.max_gpus_per_type.size()) +
                            " entries for " + std::to_string(cluster.num_types()) + " GPU types (-1 = no cap)");
    for (std::size_t ty = 0; ty < t.max_gpus_per_type.size(); ++ty)
      if (t.max_gpus_per_type[ty] < -1)
        throw InvalidArgument(label + ": max_gpus_per_type[" + std::to_string(ty) + "] ('" + cluster.types[ty].name() +
                              "') must be >= 0, or -1 for no cap (got " + std::to_string(t.max_gpus_per_type[ty]) +
                              ")");
    guaranteed += t.guaranteed_gpus;
  }
  if (guaranteed > total)
    throw InvalidArgument("RoundOptions.tenants: guaranteed_gpus sum to " + std::to_string(guaranteed) +
                          ", more than the cluster's " + std::to_string(total) + " GPUs");
}

int tenant_of(const std::vector<TenantSpec>& tenants, const JobSpec& j, std::size_t i) {
  for (std::size_t k = 0; k < tenants.size(); ++k)
    if (tenants[k].name == j.tenant()) return static_cast<int>(k);
  std::string known;
  for (const auto& t : tenants) known += (known.empty() ? "'" : ", '") + t.name + "'";
  std::string reason =
      "unknown tenant '" + j.tenant() + "' (tenants: " + (known.empty() ? std::string("none") : known) + ")";
  const std::string message = job_label(j, i) + ": tenant: " + reason;
  throw JobError(i, "tenant", std::move(reason), message);  // a job-level error (RoundOptions::strict)
}

// Normalises a raw row in place (goodput_matrix.hpp's normalize_rows on one row): its worst
// configuration becomes worth `nmin` GPUs. The result does not depend on the restart factor, so
// the round cache keeps it (every stored goodput is > 0 and finite).
void normalise_row(std::span<double> row, double nmin) {
  double lo = 0.0;
  for (double v : row)
    if (v > 0.0 && (lo == 0.0 || v < lo)) lo = v;
  if (!(lo > 0.0)) return;
  const double scale = nmin / lo;
  for (double& g : row) g *= scale;
}

// The entries of a job all of whose entries are usable and whose utilities `G^p · r^p` are positive
// finite doubles (restarted_utility_of's arithmetic: x = G^p on the current configuration,
// G^p · r^p elsewhere, clipped for p < 0), written to `e` by a loop without branches: returns their
// largest utility, or -1 when some entry is not such (then `e` holds nothing of use). A function of
// its own so that its accumulators stay in registers (inside the round's loop the largest utility
// went through the stack, a store and a load per entry on the loop's critical path). Without
// `CheckGoodput` the caller knows r·G > 0 for every entry (CachedJob::rows_at_least_half) and the
// goodputs are not read.
template <bool CheckGoodput>
[[gnu::noinline]] double write_plain_entries(const ValidConfig* stored, const double* normalised, const double* powered,
                                             std::size_t n, int current, double r, double rp, double p, Entry* e) {
  double best = 0.0;
  bool plain = true;
  const double top = std::numeric_limits<double>::max();
  for (std::size_t k = 0; k < n; ++k) {
    const ValidConfig v = stored[k];
    const bool other = v.config != current;
    const double x = powered[k] * (other ? rp : 1.0);
    if constexpr (CheckGoodput) plain = plain & (normalised[k] * (other ? r : 1.0) > 0.0);
    plain = plain & (x > 0.0) & (x <= top);
    const double u = p < 0.0 ? std::min(x, max_negative_p_utility) : x;
    e[k] = Entry{v.config, v.gpus, u};
    best = std::max(best, u);
  }
  return plain ? best : -1.0;
}

// Entries of job i from its normalised row, in the arithmetic of goodput_matrix.hpp applied to one
// row (utility_matrix(g, restarts, p)): restart factor `r` on all but the current configuration,
// the utility `G^p · r^p` from the row's powers `powered` (G^p, kept with the row; empty with
// RoundOptions::round_utilities: then `(r·G)^p` as written, the reference's arithmetic), then only
// the usable entries (r·G > 0; a pinned job: its current configuration alone), appended to `out`.
// Returns the largest utility appended (0 if none). `at_least_half`: every normalised goodput is at
// least 1/2 (CachedJob::rows_at_least_half).
double append_entries(std::span<const ValidConfig> stored, std::span<const double> normalised,
                      std::span<const double> powered, int current, double r, bool pinned, bool at_least_half,
                      const RoundOptions& options, const std::string& id, std::vector<Entry>& out) {
  const std::span<const std::string> ids(&id, 1);
  const double p = options.p;
  const double rp = powered.empty() ? 1.0 : restart_power(r, p);  // r^p: once per job
  double best = 0.0;
  if (!powered.empty() && !pinned && r > 0.0) {
    // Usually every entry is usable and every product a positive finite double: then the entries
    // are written by write_plain_entries; otherwise the loop below.
    const std::size_t at = out.size(), n = stored.size();
    out.resize(at + n);
    // With every G >= 1/2 and r/2 > 0, every r·G >= r/2 > 0 (a product of positive doubles is
    // monotone in each factor), and the current configuration's 1·G > 0.
    const bool known_usable = at_least_half && 0.5 * r > 0.0;
    best = known_usable ? write_plain_entries<false>(stored.data(), normalised.data(), powered.data(), n, current, r,
                                                     rp, p, out.data() + at)
                        : write_plain_entries<true>(stored.data(), normalised.data(), powered.data(), n, current, r, rp,
                                                    p, out.data() + at);
    if (best >= 0.0) return best;
    out.resize(at);
    best = 0.0;
  }
  for (std::size_t k = 0; k < stored.size(); ++k) {
    const ValidConfig& v = stored[k];
    const double rk = current >= 0 && v.config != current ? r : 1.0;  // (no current configuration: r = 1)
    // With r = 0 (a job restarted more often than its age pays for, a quarter of the running jobs
    // in the bench's rounds) only its current configuration is usable: r·G > 0 fails for any G,
    // so the goodputs of the others are not read (each a miss: they are not fetched ahead).
    if (rk == 0.0) continue;
    const double g = normalised[k];
    if (!(g * rk > 0.0)) continue;
    const double u = powered.empty()
                         ? sia::detail::utility_of(g * rk, p, options.round_utilities, 0, v.config, ids)
                         : restarted_utility_of(g, powered[k], rk, rk == 1.0 ? 1.0 : rp, p, false, 0, v.config, ids);
    if (pinned && v.config != current) continue;
    out.push_back(Entry{v.config, v.gpus, u});
    best = std::max(best, u);
  }
  return best;
}

// A row's powers G^p (RowBlock::powered), appended to `powered` (none with rounded utilities: the
// reference's arithmetic raises r·G itself).
void append_powers(std::span<const double> normalised, const RoundOptions& options, std::vector<double>& powered) {
  if (options.round_utilities) return;
  for (double g : normalised) powered.push_back(std::pow(g, options.p));
}

// The blocks of the next round's cache (RoundCache::blocks): the previous round's blocks that this
// round's jobs still use, under the same numbers, and `block` (this round's) as number `own`, the
// last. A previous block less than a quarter used has its jobs' rows and models copied into `block`
// instead, so that the blocks never hold more than four times the rows in use (at a half, as many
// rows were copied as built in a chain of rounds: each round's block was copied out once its jobs
// thinned out; at a quarter, a third as many). A block no job uses any more leaves its number
// empty (null) rather than every job's number changing (a pass over `built`, 2.2 MB at 20,000
// jobs); the numbers are made dense again only when most are empty. `used`, `jobs`: per block of
// `built` (number `own` this round's), the rows its jobs use and their number, counted as the jobs
// were built.
void keep_rows(std::vector<CachedJob>& built, const RoundCache* prev, std::uint32_t own,
               std::shared_ptr<RowBlock> block, const std::vector<std::size_t>& used,
               const std::vector<std::size_t>& jobs, RoundCache& out) {
  std::vector<char> copy(own, 0);
  bool any_copy = false;
  for (std::uint32_t k = 0; k < own; ++k)
    if (jobs[k] > 0 && 4 * used[k] < prev->blocks[k]->stored.size()) copy[k] = 1, any_copy = true;
  if (any_copy)
    for (CachedJob& b : built) {
      if (b.block == own || !copy[b.block]) continue;
      const RowBlock& from = *prev->blocks[b.block];
      const std::size_t at = block->stored.size();
      block->stored.insert(block->stored.end(), from.stored.begin() + static_cast<std::ptrdiff_t>(b.rows_begin),
                           from.stored.begin() + static_cast<std::ptrdiff_t>(b.rows_end));
      block->goodput.insert(block->goodput.end(), from.goodput.begin() + static_cast<std::ptrdiff_t>(b.rows_begin),
                            from.goodput.begin() + static_cast<std::ptrdiff_t>(b.rows_end));
      if (!from.powered.empty())
        block->powered.insert(block->powered.end(), from.powered.begin() + static_cast<std::ptrdiff_t>(b.rows_begin),
                              from.powered.begin() + static_cast<std::ptrdiff_t>(b.rows_end));
      const auto slot = static_cast<std::uint32_t>(block->models.size());
      block->models.push_back(from.models[b.model_slot]);
      b.block = own;
      b.model_slot = slot;
      b.rows_end = at + (b.rows_end - b.rows_begin);
      b.rows_begin = at;
    }
  out.rows = 0;
  out.blocks.resize(own + 1);
  std::uint32_t live = 1;
  for (std::uint32_t k = 0; k < own; ++k) {
    if (jobs[k] == 0 || copy[k]) continue;
    out.blocks[k] = prev->blocks[k];
    out.rows += used[k];
    ++live;
  }
  out.rows += block->stored.size();
  out.blocks[own] = std::move(block);
  if (own + 1 <= 2 * live + 16) return;
  // Mostly empty numbers: the blocks numbered in order again (this round's stays the last).
  constexpr auto none = static_cast<std::uint32_t>(-1);
  std::vector<std::uint32_t> number(own + 1, none);
  std::uint32_t next = 0;
  for (std::uint32_t k = 0; k <= own; ++k)
    if (out.blocks[k] != nullptr) {
      number[k] = next;
      out.blocks[next++] = std::move(out.blocks[k]);
    }
  out.blocks.resize(next);
  for (CachedJob& b : built) b.block = number[b.block];
}

// a == b, compared inline eight bytes at a time: every job's id is compared with the previous
// round's, and a call of memcmp for each cost more than comparing a short id.
bool same_id(std::string_view a, std::string_view b) noexcept {
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  std::size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    std::uint64_t x = 0, y = 0;
    std::memcpy(&x, a.data() + k, 8);
    std::memcpy(&y, b.data() + k, 8);
    if (x != y) return false;
  }
  for (; k < n; ++k)
    if (a[k] != b[k]) return false;
  return true;
}

bool same_bits(double a, double b) noexcept {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

}  // namespace

Problem build_problem(ConfigurationSet set, const ClusterSpec& cluster, std::span<const JobSpec> jobs,
                      const RoundOptions& options, const RoundDeadline* deadline, const RoundCache* previous,
                      std::shared_ptr<RoundCache>* next, const CheckedJobs* checked) {
  Problem pb;
  pb.p = options.p;
  pb.lambda = options.lambda;
  const auto n = jobs.size();
  // The previous round's rows count only on the same cluster, with the same exponent and rounding
  // (their powers G^p, RowBlock::powered, are for that exponent, and none are kept with rounding).
  const RoundCache* prev = previous != nullptr && previous->same_cluster(cluster, set) &&
                                   same_bits(previous->p, options.p) &&
                                   previous->round_utilities == options.round_utilities
                               ? previous
                               : nullptr;
  std::shared_ptr<RoundCache> out;
  // Only jobs with a goodput model object can be reused: without any, nothing is kept.
  if (next != nullptr &&
      std::any_of(jobs.begin(), jobs.end(), [](const JobSpec& j) { return j.goodput_model_identity() != nullptr; })) {
    out = std::make_shared<RoundCache>();
    out->types = cluster.types;
    out->set = set;  // before threshold rows
    out->p = options.p;
    out->round_utilities = options.round_utilities;
  }
  pb.set = std::move(set);
  pb.current.assign(n, -1);
  pb.required.pinned.assign(n, 0);
  pb.required.forced.assign(n, 0);
  pb.weight.assign(n, 1.0);
  pb.tenant.assign(n, -1);
  pb.tenants = options.tenants;
  check_tenants(pb.tenants, cluster);
  // Per job: what its rows depend on, and its rows (reused from `prev` when those are the same).
  std::vector<CachedJob> built;
  built.reserve(n);
  // The rows built this round go into a block of their own; a job that keeps its rows reads them
  // where they are, in the previous round's blocks (RoundCache::blocks, numbered as there; this
  // round's block is number `own`).
  auto block = std::make_shared<RowBlock>();
  std::vector<ValidConfig>& stored = block->stored;
  std::vector<double>& goodput = block->goodput;
  std::vector<double>& powered = block->powered;
  const auto own = static_cast<std::uint32_t>(prev != nullptr ? prev->blocks.size() : 0);
  // Per block (own: this round's), the rows this round's jobs use and their number, for keep_rows:
  // counted here, while each job's record is in cache (a pass of its own over the records, 2.4 MB at
  // 20,000 jobs, cost more: build_problem 0.4-1.4 ms slower on warm 100,000-GPU rounds).
  std::vector<std::size_t> block_rows(own + 1, 0), block_jobs(own + 1, 0);
  if (prev != nullptr) {
    stored.reserve(prev->rows / 8);
    goodput.reserve(prev->rows / 8);
    if (!options.round_utilities) powered.reserve(prev->rows / 8);
  }
  auto block_of = [&](const CachedJob& b) -> const RowBlock& {
    return b.block == own ? *block : *prev->blocks[b.block];
  };
  // Duplicate ids: without a previous round, a set of every id; with one, a job whose id the
  // previous round had takes that job's place (a second job taking it is a duplicate), and only
  // the others go into the set.
  // (None of it when the caller checked the ids: CheckedJobs.)
  IdIndex seen;
  std::vector<char> taken;
  if (prev == nullptr) {
    if (checked == nullptr) seen.reserve(n);
  } else {
    if (checked == nullptr) taken.assign(prev->jobs.size(), 0);
    pb.previous_position.assign(n, -1);
  }
  std::size_t cursor = 0;  // the previous round's jobs are usually in the same order
  std::vector<int> type_limit;
  bool any_model = false;
  std::vector<ValidConfig> candidates;  // per job, its capacity kept from job to job
  // The next cache's ids, their hashes and pipeline sizes (RoundCache::ids, id_hashes, pipeline_sizes).
  std::string ids;
  std::vector<int> sizes;
  std::vector<std::size_t> id_hashes;
  if (out) id_hashes.reserve(n);
  if (out && prev != nullptr) ids.reserve(prev->ids.size() + prev->ids.size() / 8);

  // With the previous round's rows, each job's entries (restart factors and utilities,
  // goodput_matrix.hpp) are made as soon as its rows are known, while they are still in cache (a
  // second pass over every row was a pass over 5 MB at 20,000 jobs); without (every row new, their
  // number unknown until the last), in a pass of their own into an array of the final size. The
  // errors come in the order of separate passes either way: every job's own checks first, then the
  // exponent's, then the first utility that overflows.
  const bool entries_in_loop = prev != nullptr;
  std::vector<double> restart_of;  // per job, when its entries come after the loop
  const bool exponent_ok = std::isfinite(options.p) && options.p != 0.0;  // check_exponent's test
  std::exception_ptr overflow;                                            // the first utility that overflows
  auto entries = std::make_shared<std::vector<Entry>>();
  if (prev != nullptr) entries->reserve(prev->rows + prev->rows / 8);
  std::vector<std::size_t> begin(n + 1, 0);
  // Per job as its entries are made (in job order, as separate passes summed them): the threshold
  // rows rigid jobs need, Σ weight × best utility, Σ weight.
  std::vector<unsigned> needed(pb.set.vnode_size.size(), 0);
  pb.util_bound = 0.0;
  pb.total_weight = 0.0;
  pb.integer_weights = true;
  auto add_entries = [&](std::size_t i, CachedJob& b, const CachedJob* keep, double r) {
    begin[i] = entries->size();
    double best = 0.0;  // the job's largest utility
    if (keep != nullptr) {
      const auto first = prev->entries->begin();
      entries->insert(entries->end(), first + static_cast<std::ptrdiff_t>(keep->entries_begin),
                      first + static_cast<std::ptrdiff_t>(keep->entries_end));
      best = keep->best;
    } else if (exponent_ok && !overflow) {
      const RowBlock& rows = block_of(b);
      const std::span<const ValidConfig> row(rows.stored.data() + b.rows_begin, b.rows_end - b.rows_begin);
      const std::span<const double> values(rows.goodput.data() + b.rows_begin, b.rows_end - b.rows_begin);
      const std::span<const double> powers =
          rows.powered.empty() ? std::span<const double>()
                               : std::span<const double>(rows.powered.data() + b.rows_begin, b.rows_end - b.rows_begin);
      try {
        best = append_entries(row, values, powers, pb.current[i], r, pb.required.pinned[i] != 0, b.rows_at_least_half,
                              options, jobs[i].id(), *entries);
      } catch (const InvalidArgument&) {
        overflow = std::current_exception();
      }
    }
    b.best = best;
    if (out) {
      b.restart = r;
      b.entries_begin = static_cast<std::uint32_t>(begin[i]);  // (a cache of 2^32 entries or more is not kept)
      b.entries_end = static_cast<std::uint32_t>(entries->size());
    }
    // A rigid job charged less than its footprint may need threshold rows its type does not have
    // (rigid_thresholds: its charge grows between two thresholds of equal capacity). Only a row
    // with such a configuration (CachedJob::short_rows) can have such an entry.
    if (b.short_rows)
      for (std::size_t k = begin[i]; k < entries->size(); ++k) {
        const Entry& e = (*entries)[k];
        const ConfigurationSpec& c = pb.set.configs[static_cast<std::size_t>(e.config)];
        if (e.gpus < c.gpus)
          needed[static_cast<std::size_t>(c.type)] |=
              rigid_thresholds(c, e.gpus, pb.set.vnode_size[static_cast<std::size_t>(c.type)]);
      }
    pb.util_bound += pb.weight[i] * best;
    pb.total_weight += pb.weight[i];
    pb.integer_weights = pb.integer_weights && pb.weight[i] == std::floor(pb.weight[i]);
  };

  for (std::size_t i = 0; i < n; ++i) {
    // The jobs ahead: every line of each is read below, and its id (compared with the previous
    // round's) lies apart when it is longer than std::string's inline buffer.
    if (i + kFetchAhead < n) fetch_job(jobs[i + kFetchAhead]);
    if (i + kFetchAhead / 2 < n) fetch_id(jobs[i + kFetchAhead / 2]);
    const JobSpec& j = jobs[i];
    if (checked == nullptr) validate_job(j, i, cluster.num_types());
    // The rows and entries of the previous round's job a few places ahead (the jobs usually come in
    // the same order): read from the blocks and the previous entries, which lie in memory apart
    // from the arrays this loop walks.
    if (prev != nullptr && cursor + 6 < prev->jobs.size()) {
      const CachedJob& ahead = prev->jobs[cursor + 6];
      if (ahead.has_rows) {
        // (Every line of its rows: a row of 16 configurations is two lines of each array, and the
        // second was a cache miss when only the first was fetched.)
        const RowBlock& rows = *prev->blocks[ahead.block];
        const std::size_t b = ahead.rows_begin, e = ahead.rows_end;
        auto lines = [b, e](const auto* data) {
          const char* const from = reinterpret_cast<const char*>(data + b);
          const char* const to = reinterpret_cast<const char*>(data + e);
          for (const char* at = from; at < to; at += 64) fetch(at);
          if (e > b) fetch(to - 1);  // (the last line, where the row does not start a line)
        };
        if (!ahead.rows_at_least_half) lines(rows.goodput.data());
        lines(rows.stored.data());
        if (!rows.powered.empty()) lines(rows.powered.data());
      }
      if (prev->entries) fetch(prev->entries->data() + ahead.entries_begin);
    }
    const CachedJob* was = nullptr;
    std::size_t id_hash = 0;  // hash_id(j.id()), when the next cache is made (`out`) or the id looked up
    if (prev == nullptr) {
      if (out) id_hash = hash_id(j.id());
      if (checked == nullptr && (out ? seen.insert(j.id(), i, id_hash) : seen.insert(j.id(), i)) != IdIndex::npos)
        throw InvalidArgument(job_label(j, i) + ": duplicate job id");
    } else {
      std::size_t at = cursor;
      if (at < prev->jobs.size() && same_id(prev->id_of(prev->jobs[at]), j.id())) {
        was = &prev->jobs[at];
      } else if (at + 1 < prev->jobs.size() && same_id(prev->id_of(prev->jobs[at + 1]), j.id())) {
        was = &prev->jobs[++at];  // the job before it left (ids are distinct: what find() would say)
      } else {
        id_hash = hash_id(j.id());
        was = prev->find(j.id(), id_hash, at);
      }
      if (was != nullptr) {
        id_hash = prev->id_hashes[at];  // (the same id: its hash carried, not computed again)
        if (checked == nullptr) {
          if (taken[at]) throw InvalidArgument(job_label(j, i) + ": duplicate job id");
          taken[at] = 1;
        }
        cursor = at + 1;
        pb.previous_position[i] = static_cast<int>(at);
      } else if (checked == nullptr && seen.insert(j.id(), i, id_hash) != IdIndex::npos) {
        throw InvalidArgument(job_label(j, i) + ": duplicate job id");
      }
    }
    pb.weight[i] = j.weight();
    if (!j.tenant().empty()) pb.tenant[i] = tenant_of(pb.tenants, j, i);
    CachedJob& b = built.emplace_back();
    if (out) {
      b.id_begin = static_cast<std::uint32_t>(ids.size());  // (a cache of 2^32 id bytes or more is not kept)
      b.id_size = static_cast<std::uint32_t>(j.id().size());
      ids += j.id();
      id_hashes.push_back(id_hash);
    }
    set_limits_key(j, sizes, b.limits);
    JobLimits lim;  // the job's limits, when its rows are built
    // Past the deadline (checked every 16 jobs) the remaining jobs are not enumerated.
    if (deadline && pb.unevaluated == 0 && i % 16 == 0 && deadline->passed()) pb.unevaluated = n - i;
    // The job's current configuration (checked after its count limits, as a fresh build does: a
    // job whose model is the previous round's passed both checks then).
    auto take_current = [&] {
      if (!j.current() || pb.current[i] >= 0) return;
      const CurrentAllocation& cur = *j.current();
      // A job holding what it held in the previous round (same type and count, same rigid count)
      // holds the configuration found then: find_held is a function of those and of the cluster's
      // shape, which is the previous round's (`prev`). (Looking it up again cost about 25 ns a
      // job, most jobs of a warm round.)
      if (checked != nullptr)
        pb.current[i] = checked->current[i];
      else if (was != nullptr && was->current >= 0 && cur.gpus == was->current_gpus &&
               cur.type == pb.set.configs[static_cast<std::size_t>(was->current)].type &&
               b.limits.kind == was->limits.kind && b.limits.min_gpus == was->limits.min_gpus)
        pb.current[i] = was->current;
      else
        pb.current[i] = current_config_index(pb.set, cluster, j, i);
      b.current = pb.current[i];
      b.current_gpus = cur.gpus;
    };
    b.preemptible = j.preemptible();
    // (By address: a job that keeps its rows leaves its model's reference count alone — counting it
    // was a cache miss per job, the control blocks lying apart — as its block holds the model.)
    if (pb.unevaluated == 0) b.model = j.goodput_model_identity().get();
    any_model = any_model || b.model != nullptr;
    const bool reusable = was != nullptr && was->has_rows && b.model != nullptr && b.model == was->model;
    if (reusable) take_current();
    const bool keep = reusable && same_row_inputs(b, j.pipeline_sizes(), *was, prev->sizes_of(*was));
    candidates.clear();
    if (!keep) {
      lim = limits_of(j);
      if (pb.unevaluated == 0) {
        // Counts above the goodput model's limit per type (HasGpuLimit) are never enumerated.
        type_limit.clear();
        if (j.has_gpu_limit())
          for (const auto& t : cluster.types) type_limit.push_back(j.gpu_limit(t));
        valid_configs(pb.set, lim, type_limit, candidates);
      }
      take_current();
    }
    double r = 1.0;
    if (j.current()) {
      if (!j.preemptible()) pb.required.pinned[i] = 1;
      r = restart_factor(j.age_s(), static_cast<double>(j.restarts()), j.restart_cost_s());
    } else if (!j.preemptible() && pb.unevaluated == 0) {
      pb.required.forced[i] = 1;  // (one not evaluated in time simply waits: the round says why)
    }
    if (keep) {
      b.has_rows = true;
      b.block = was->block;
      b.model_slot = was->model_slot;
      b.rows_begin = was->rows_begin;
      b.rows_end = was->rows_end;
      block_rows[b.block] += b.rows_end - b.rows_begin;
      ++block_jobs[b.block];
      b.short_rows = was->short_rows;
      b.rows_at_least_half = was->rows_at_least_half;
      // Its utilities too when it holds the same configuration with the same restart factor.
      const bool same_utilities = was->current == b.current && same_bits(was->restart, r);
      add_entries(i, b, same_utilities ? was : nullptr, r);  // (entries_in_loop: `prev`)
      continue;
    }
    if (j.current()) {
      if (pb.unevaluated > 0) candidates.push_back(ValidConfig{pb.current[i], j.current()->gpus});
      if (!j.preemptible()) {
        // A running non-preemptible job keeps what it holds, whatever the count rules say now.
        const bool listed = std::any_of(candidates.begin(), candidates.end(),
                                        [&](const ValidConfig& v) { return v.config == pb.current[i]; });
        if (!listed) {
          candidates.push_back(ValidConfig{pb.current[i], j.current()->gpus});
          std::sort(candidates.begin(), candidates.end(),
                    [](const ValidConfig& a, const ValidConfig& b) { return a.config < b.config; });
        }
      }
    }
    double nmin = effective_min_gpus(lim);
    b.block = own;
    b.rows_begin = stored.size();
    if (out) {
      b.model_slot = static_cast<std::uint32_t>(block->models.size());
      block->models.push_back(b.model != nullptr ? j.goodput_model_identity() : nullptr);
    }
    double current_goodput = 0.0;
    double min_goodput = 0.0;
    for (const ValidConfig& v : candidates) {
      const ConfigurationSpec& c = pb.set.configs[static_cast<std::size_t>(v.config)];
      const auto& type = cluster.types[static_cast<std::size_t>(c.type)];
      const ConfigurationSpec asked{c.type, c.nodes, v.gpus};
      double g = 0.0;
      try {
        g = j.goodput(type, asked);
        check_goodput(g, j.id(), type.name(), asked);
      } catch (const InvalidArgument& e) {  // the job's own goodput: a job-level error
        throw JobError(i, "goodput", e.what(), e.what());
      }
      if (v.config == pb.current[i]) current_goodput = g;
      if (!(g > 0.0)) continue;
      // A hybrid job's worst configuration is worth its pipeline on the type holding it (the reference's
      // scale unit of that type): with per-type pipeline sizes Nmin depends on where the minimum lies.
      if (lim.kind == JobKind::hybrid && (min_goodput == 0.0 || g < min_goodput)) {
        min_goodput = g;
        nmin = effective_min_gpus(lim, c.type);
      }
      stored.push_back(v);
      goodput.push_back(g);
      b.short_rows = b.short_rows || v.gpus < c.gpus;
    }
    b.rows_end = stored.size();
    block_rows[own] += b.rows_end - b.rows_begin;
    ++block_jobs[own];
    normalise_row(std::span<double>(goodput.data() + b.rows_begin, b.rows_end - b.rows_begin), nmin);
    b.rows_at_least_half = std::all_of(goodput.begin() + static_cast<std::ptrdiff_t>(b.rows_begin), goodput.end(),
                                       [](double g) { return g >= 0.5; });
    append_powers(std::span<const double>(goodput.data() + b.rows_begin, b.rows_end - b.rows_begin), options, powered);
    if (pb.required.pinned[i] && !(current_goodput > 0.0)) {
      const ConfigurationSpec& c = pb.set.configs[static_cast<std::size_t>(pb.current[i])];
      fail_job(j, i, "current",
               "is " + std::to_string(c.gpus) + " GPUs of type '" +
                   cluster.types[static_cast<std::size_t>(c.type)].name() +
                   "', but the job is non-preemptible and its goodput there is 0");
    }
    b.has_rows = true;
    if (entries_in_loop)
      add_entries(i, b, nullptr, r);
    else
      restart_of.push_back(r);
  }
  if (!entries_in_loop) {
    entries->reserve(stored.size());  // at most one entry per stored configuration
    for (std::size_t i = 0; i < n; ++i) add_entries(i, built[i], nullptr, restart_of[i]);
  }
  sia::detail::check_exponent(options.p);
  if (overflow) std::rethrow_exception(overflow);
  begin[n] = entries->size();
  if (out) out->entries = entries;  // the same entries, shared (immutable from here on)
  pb.valid = EntryRows(std::move(entries), std::move(begin));
  constexpr std::size_t max32 = std::numeric_limits<std::uint32_t>::max();
  if (out && any_model && pb.valid.all()->size() <= max32 && ids.size() <= max32 && sizes.size() <= max32) {
    keep_rows(built, prev, own, std::move(block), block_rows, block_jobs, *out);
    out->jobs = std::move(built);
    out->ids = std::move(ids);
    out->id_hashes = std::move(id_hashes);
    out->pipeline_sizes = std::move(sizes);
    *next = std::move(out);
  }
  for (std::size_t t = 0; t < needed.size(); ++t)
    for (int h = 2; h > 0 && static_cast<unsigned>(h) <= needed[t]; h *= 2)
      if (needed[t] & static_cast<unsigned>(h)) pb.set.add_threshold(static_cast<int>(t), h);
  // λ far beyond every utility sum: the model uses λ' = 2·Σ max u + 1 instead (Problem::model_lambda),
  // which ranks every allocation exactly as λ does and keeps the utilities' differences within the
  // backends' resolution (at up to 2^20·λ', λ = 1e9 beside utilities near 1 made CBC and GLPK prove
  // wrong optima: decision.recompute.numerics_regressions).
  // The objective must be a finite double for every allocation: Σ utilities and λ·J.
  if (!std::isfinite(pb.util_bound))
    throw InvalidArgument(
        "jobs: the utilities (normalised goodput^p) of the jobs' best configurations sum to more than the largest "
        "double (1.8e308); accepted: a finite sum (use goodputs of a narrower range or a smaller |p|)");
  if (!std::isfinite(pb.lambda * pb.total_weight) || !std::isfinite(pb.lambda * pb.total_weight + pb.util_bound))
    throw InvalidArgument("RoundOptions.lambda: " + std::to_string(pb.lambda) + " times " + std::to_string(n) +
                          " jobs (total weight " + std::to_string(pb.total_weight) +
                          ") overflows a double; accepted range: 0 < lambda <= 1.7e308 / (total weight of the jobs)");
  pb.model_lambda = pb.lambda;
  // With integer weights two allocations' waiting weights differ by 0 or at least 1, so every
  // λ' > util_bound ranks them alike; with fractional weights no such λ' is known: λ is kept.
  if (std::isfinite(pb.util_bound) && pb.integer_weights) {
    const double clamp = 2.0 * pb.util_bound + 1.0;
    if (pb.lambda > clamp) pb.model_lambda = clamp;
  }
  return pb;
}

double round_bound(const Problem& pb, double model_bound) {
  if (pb.model_lambda == pb.lambda || !std::isfinite(model_bound)) return model_bound;
  // (Only with integer weights: m below counts waiting weight, an integer.)
  // With λ' > T = util_bound, an allocation leaving m jobs waiting is worth U + λ'm (p < 0, to
  // minimise) or U − λ'm (p > 0, to maximise), with 0 <= U <= T. The model bound therefore proves
  // at least m_lb jobs wait, and the round's optimum is the model's shifted by (λ − λ')·m >= that.
  const double lp = pb.model_lambda;
  const double shift = pb.lambda - lp;
  if (pb.p < 0) {
    const double m = std::max(0.0, std::ceil((model_bound - pb.util_bound) / lp - 1e-6));
    return model_bound + shift * m;
  }
  const double m = std::max(0.0, std::ceil(-model_bound / lp - 1e-6));
  return model_bound - shift * m;
}

double objective_of(const Problem& pb, const Choice& ch) {
  double obj = 0.0;
  for (std::size_t i = 0; i < pb.num_jobs(); ++i) {
    if (ch[i] < 0) {
      obj += pb.weight[i] * (pb.p > 0 ? -pb.lambda : pb.lambda);
    } else {
      obj += pb.weight[i] * pb.valid[i][static_cast<std::size_t>(ch[i])].util;
    }
  }
  return obj;
}

}  // namespace sia::detail
