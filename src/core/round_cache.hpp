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
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/id_index.hpp"

#include "core/problem.hpp"

namespace sia::detail {

/// One job of a round, by input position: its id, what its rows depend on, and where its rows
/// are (flat arrays of the RoundCache: reading 20,000 jobs' rows is then a sequential scan).
struct CachedJob {
  std::string id;
  /// JobSpec::goodput_model_identity(): the goodput, batch and limit functions. Null: the rows
  /// cannot be reused (a goodput_fn job, or one not evaluated before the round's deadline).
  std::shared_ptr<const void> model;
  JobLimits limits;
  int current = -1;  ///< configuration index held (-1: none); part of the key when not preemptible
  int current_gpus = 0;
  bool preemptible = true;
  /// Its row: the configurations it may take with goodput > 0 (ascending) and their goodputs
  /// normalised (its worst one worth its minimum count), RoundCache::stored / goodput
  /// [rows_begin, rows_end): what does not depend on the restart factor.
  bool has_rows = false;
  std::size_t rows_begin = 0;
  std::size_t rows_end = 0;
  /// Its usable entries (Problem::valid[i]) are RoundCache::entries[entries_begin, entries_end),
  /// for holding `current` with restart factor `restart` (and the cache's p and rounding).
  double restart = 1.0;
  std::size_t entries_begin = 0;
  std::size_t entries_end = 0;
};

/// Do two jobs' rows depend on the same inputs (the model object included)?
[[nodiscard]] bool same_row_inputs(const CachedJob& a, const CachedJob& b) noexcept;

struct RoundCache {
  /// The cluster the rows were built on: its GPU types (what goodput functions are asked with)
  /// and its configuration set before any rigid threshold row was added.
  std::vector<GpuTypeSpec> types;
  ConfigurationSet set;
  double p = 0.0;
  bool round_utilities = false;
  std::vector<CachedJob> jobs;      ///< the round's jobs, in input order
  std::vector<ValidConfig> stored;  ///< every job's row, one range per job (CachedJob)
  std::vector<double> goodput;      ///< its normalised goodputs
  /// Every job's usable entries, one range per job (CachedJob): the round's own Problem::valid,
  /// shared.
  std::shared_ptr<const std::vector<Entry>> entries;
  /// The WarmStart's allocation list this cache was made with (WarmStart::allocations, one per
  /// job in the same order) and, per job, the configuration index it names (-1: none): while the
  /// warm start still holds that very list, apply_warm_start() reads the configurations by
  /// position instead of looking every job and GPU type up by name.
  const void* allocations = nullptr;
  std::vector<int> allocated;

  /// Built on the cluster `cluster` with configuration set `s` (as make_configuration_set gives it)?
  [[nodiscard]] bool same_cluster(const ClusterSpec& cluster, const ConfigurationSet& s) const;
  /// Position of job `id` in `jobs`, if any (an index built on first use; thread-safe).
  [[nodiscard]] const CachedJob* find(std::string_view id, std::size_t& position) const;

 private:
  mutable std::once_flag indexed_;
  mutable IdIndex by_id_;
};

}  // namespace sia::detail
