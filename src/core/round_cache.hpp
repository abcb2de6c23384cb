#pragma once
// Private to the round: what one round built per job, kept in its WarmStart (WarmStart::cache) so
// that the next round rebuilds only the jobs whose inputs changed. Everything a job's usable
// configurations and utilities depend on is part of the key, and a reused row is the very row a
// fresh build would compute (same arithmetic on the same numbers), so a round built from a cache
// is bit-identical to one built without it.
#include <sia/cluster.hpp>
#include <sia/configuration_set.hpp>
#include <sia/gpu_type_spec.hpp>
#include <sia/job_spec.hpp>
#include <sia/valid_configs.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/id_index.hpp"
#include "core/problem.hpp"

namespace sia::detail {

/// Rows of some jobs — the configurations each may take with goodput > 0 (ascending), their
/// goodputs normalised (its worst one worth its minimum count) and those to the power p: what does
/// not depend on the restart factor — written by one round and shared, immutable, by the caches of the rounds after it for
/// as long as enough of its jobs keep their rows (copying every unchanged job's rows into each
/// round's cache was a pass over 5 MB at 20,000 jobs, and freeing the old ones another).
struct RowBlock {
  std::vector<ValidConfig> stored;
  std::vector<double> goodput;
  /// Per stored row, its normalised goodput to the power p (the cache's RoundCache::p): a utility is
  /// `G^p · r^p` (goodput_matrix.hpp, restarted_utility_of), so a job whose restart factor moved
  /// (most running jobs, every round: their age grows) needs one `pow` (r^p), not one per entry.
  /// Empty with RoundCache::round_utilities (the reference's `(r·G)^p` is raised as written).
  std::vector<double> powered;
  /// The goodput model objects the rows were asked of, one per job written here (null for a job
  /// without one): held so that a model's address names it alone while a cache may compare it.
  std::vector<std::shared_ptr<const void>> models;
};

/// The count limits a job's rows depend on (JobLimits, from the JobSpec) in a form without an owner
/// of memory: the hybrid pipeline sizes per type lie in RoundCache::pipeline_sizes.
struct LimitsKey {
  int min_gpus = 1;
  int max_gpus = 0;
  int pipeline_size = 1;
  int max_gpus_ever = 0;       ///< when has_max_gpus_ever
  int max_pipelines_ever = 0;  ///< when has_max_pipelines_ever
  std::uint32_t sizes_begin = 0;
  std::uint32_t sizes_size = 0;
  std::uint8_t kind = 0;  ///< JobKind
  bool has_max_gpus_ever = false;
  bool has_max_pipelines_ever = false;
};

/// One job of a round, by input position: its id, what its rows depend on, and where its rows
/// are (RoundCache::blocks: reading 20,000 jobs' rows is then a few sequential scans). Nothing in
/// it owns memory (its id, its id's hash and pipeline sizes lie in the cache's arrays): 112 bytes,
/// written for every job each round and read in the next, and freed with the array alone (a
/// std::string and a JobLimits per job made it 192 bytes and a destructor per job).
struct CachedJob {
  /// JobSpec::goodput_model_identity(): the goodput, batch and limit functions, by address (its
  /// block's `models` holds it). Null: the rows cannot be reused (a goodput_fn job, or one not
  /// evaluated before the round's deadline).
  const void* model = nullptr;
  /// Its rows: RoundCache::blocks[block]'s stored / goodput [rows_begin, rows_end), and its model
  /// that block's models[model_slot].
  std::size_t rows_begin = 0;
  std::size_t rows_end = 0;
  /// Its usable entries (Problem::valid[i]) are RoundCache::entries[entries_begin, entries_end),
  /// for holding `current` with restart factor `restart` (and the cache's p and rounding).
  double restart = 1.0;
  double best = 0.0;  ///< the largest utility of those entries (0: none)
  std::uint32_t entries_begin = 0;
  std::uint32_t entries_end = 0;
  /// Its id: RoundCache::ids[id_begin, id_begin + id_size).
  std::uint32_t id_begin = 0;
  std::uint32_t id_size = 0;
  std::uint32_t block = 0;
  std::uint32_t model_slot = 0;
  int current = -1;  ///< configuration index held (-1: none); part of the key when not preemptible
  int current_gpus = 0;
  LimitsKey limits;
  bool preemptible = true;
  bool has_rows = false;
  /// Some row uses fewer GPUs than its configuration (a rigid job's footprint): only then can an
  /// entry need threshold rows (rigid_thresholds).
  bool short_rows = false;
  /// Every normalised goodput of its rows is at least 1/2 (as normalising to a minimum count of at
  /// least one GPU makes them): then r·G > 0 for every row once r/2 > 0, and making its entries
  /// need not read the goodputs.
  bool rows_at_least_half = false;
};
static_assert(std::is_trivially_destructible_v<CachedJob>);

/// Sets `k` to the key of a job's count limits; its pipeline sizes are appended to `sizes`
/// (LimitsKey::sizes_begin is then sizes' size before, truncated: meaningful only while `sizes` holds
/// fewer than 2^32). (Inline, writing the job's CachedJob in place: a key returned from a call was
/// stored field by field and read back 16 bytes at a time, a failed store forwarding per job.)
inline void set_limits_key(const JobSpec& j, std::vector<int>& sizes, LimitsKey& k) {
  k.min_gpus = j.min_gpus();
  k.max_gpus = j.max_gpus();
  k.pipeline_size = j.pipeline_size();
  k.kind = static_cast<std::uint8_t>(j.kind());
  k.has_max_gpus_ever = j.max_gpus_ever().has_value();
  k.max_gpus_ever = j.max_gpus_ever().value_or(0);
  k.has_max_pipelines_ever = j.max_pipelines_ever().has_value();
  k.max_pipelines_ever = j.max_pipelines_ever().value_or(0);
  const std::vector<int>& own = j.pipeline_sizes();
  k.sizes_begin = static_cast<std::uint32_t>(sizes.size());
  k.sizes_size = static_cast<std::uint32_t>(own.size());
  if (!own.empty()) sizes.insert(sizes.end(), own.begin(), own.end());
}

/// Do two jobs' rows depend on the same inputs (the model object included)? `a_sizes`, `b_sizes`:
/// their pipeline sizes (LimitsKey::sizes_begin and sizes_size in their caches' arrays). Two
/// max_gpus_ever that leave the same configurations count as the same (a rigid job ignores it, and
/// otherwise only the cap of the 2x rule, effective_max_gpus(), enters the rows).
[[nodiscard]] bool same_row_inputs(const CachedJob& a, std::span<const int> a_sizes, const CachedJob& b,
                                   std::span<const int> b_sizes) noexcept;

struct RoundCache {
  /// The cluster the rows were built on: its GPU types (what goodput functions are asked with)
  /// and its configuration set before any rigid threshold row was added.
  std::vector<GpuTypeSpec> types;
  ConfigurationSet set;
  /// The exponent and rounding the rows' powers (RowBlock::powered) and the entries were made with:
  /// a round with others reuses nothing.
  double p = 0.0;
  bool round_utilities = false;
  std::vector<CachedJob> jobs;  ///< the round's jobs, in input order
  /// Per job, hash_id of its id: carried from round to round (a job found in the previous round
  /// takes its hash from there), so that the index of ids (find) is filled without hashing an id,
  /// from one array read in order (with a hash in each CachedJob the index's first use, in every
  /// round of a scheduler's chain, read 2.2 MB at 20,000 jobs: its inserts 0.45 ms, now 0.13).
  std::vector<std::size_t> id_hashes;
  /// The jobs' ids, one after another (CachedJob::id_begin), and the hybrid jobs' pipeline sizes
  /// per type (LimitsKey::sizes_begin): below 2^32 each, or the cache is not kept.
  std::string ids;
  std::vector<int> pipeline_sizes;
  /// Every job's rows (CachedJob::block): this round's own block last, before it the blocks of
  /// earlier rounds still at least a quarter used by this round's jobs (the jobs of a block used
  /// less have their rows copied into this round's, so the blocks hold at most four times the rows
  /// in use), each under the number it had; null: a number no job uses (at most half of them, or
  /// 16: then they are renumbered).
  std::vector<std::shared_ptr<const RowBlock>> blocks;
  std::size_t rows = 0;  ///< the rows of every job, summed
  /// Every job's usable entries, one range per job (CachedJob): the round's own Problem::valid,
  /// shared.
  std::shared_ptr<const std::vector<Entry>> entries;
  /// The WarmStart's allocation list this cache was made with (WarmStart::allocations, one per
  /// job in the same order) and, per job, the configuration index it names (-1: none): while the
  /// warm start still holds that very list, apply_warm_start() reads the configurations by
  /// position instead of looking every job and GPU type up by name.
  const void* allocations = nullptr;
  std::vector<int> allocated;
  /// Per job, the entry of its Problem::valid row that `allocated` names (-1: none): where
  /// apply_warm_start() looks first in this round's row of the job (a job whose row was kept finds
  /// it there; any other is searched as before).
  std::vector<int> allocated_entry;

  [[nodiscard]] std::string_view id_of(const CachedJob& j) const noexcept {
    return {ids.data() + j.id_begin, j.id_size};
  }
  [[nodiscard]] std::span<const int> sizes_of(const CachedJob& j) const noexcept {
    return {pipeline_sizes.data() + j.limits.sizes_begin, j.limits.sizes_size};
  }
  /// Built on the cluster `cluster` with configuration set `s` (as make_configuration_set gives it)?
  [[nodiscard]] bool same_cluster(const ClusterSpec& cluster, const ConfigurationSet& s) const;
  /// Position of job `id` in `jobs`, if any (an index built on first use; thread-safe). `hash`:
  /// hash_id(id).
  [[nodiscard]] const CachedJob* find(std::string_view id, std::size_t hash, std::size_t& position) const;

 private:
  /// The index: jobs by id (IdTable: 8 bytes a slot, 512 KB at 20,000 jobs), filled from the
  /// hashes carried from round to round (id_hashes).
  mutable std::once_flag indexed_;
  mutable IdTable by_id_;
};

}  // namespace sia::detail
