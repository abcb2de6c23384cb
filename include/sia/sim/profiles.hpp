#pragma once
/// @file sim/profiles.hpp
/// @brief Loaders for the throughput and gradient-statistics profiles of the Sia artifact (the simulator's
/// and `sia_fit_profiles`' input; the library core reads no files).
///
/// Directory layout (`../shared/data/sia-artifact/`):
/// - `profiles/<model>/placements-<type>.csv`: columns `placement,local_bsz,step_time,sync_time`
///   in any order; `placement` is a digit string, one digit per node = GPUs on that node
///   (e.g. `1244` = 4 nodes, 11 GPUs).
/// - `profiles/<model>/scalability-<type>.csv`: `num_nodes,num_replicas,local_bsz,step_time,sync_time`.
/// - `profiles/<model>/validation-<batch>.csv`: `progress,iteration,metric,grad_sqr,grad_var`
///   (per epoch, training at global batch `<batch>`).
/// - `seed-profiles/<model>.csv`: 1-GPU profiles `gpu_type,local_bsz,placement,step_time,sync_time`
///   whose type names are hardware names (`t4`, `v100`, `dgx`, `rtx`, `quad`); see
///   seed_type_to_profile_type().
///
/// Files `placements.csv`/`scalability.csv` without a type suffix (copies of `aws`) are ignored.
/// Every loader throws sia::InvalidArgument naming `file:line:column` for a malformed row:
/// missing column, non-numeric or non-finite value, non-positive step time, negative sync time,
/// non-integral or non-positive batch size, a bad placement string, or an empty file.

#include <sia/goodput/pipeline.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace sia::sim {

/// @brief One measured configuration: step and synchronisation time of one optimiser step
/// without gradient accumulation.
struct ProfileRow {
  std::string placement;   ///< GPUs per node as digits (scalability rows: empty)
  int nodes = 0;           ///< number of nodes
  int gpus = 0;            ///< GPUs in total (= data-parallel replicas for DP models)
  int local_bsz = 0;       ///< per-GPU batch size
  double step_time = 0.0;  ///< seconds per step (> 0)
  double sync_time = 0.0;  ///< seconds spent in gradient synchronisation (>= 0)
  std::size_t line = 0;    ///< 1-based line in the source file (for diagnostics)
};

/// @brief Gradient statistics and progress of one epoch at a validated batch size.
struct ValidationRow {
  double progress = 0.0;   ///< cumulative scale-invariant progress at the end of the epoch
  double iteration = 0.0;  ///< cumulative iterations
  double metric = 0.0;     ///< validation metric
  double grad_sqr = 0.0;   ///< gradient squared norm
  double grad_var = 0.0;   ///< gradient variance
};

/// @brief `validation-<batch_size>.csv`.
struct ValidationTable {
  long long batch_size = 0;
  std::vector<ValidationRow> rows;
};

/// @brief Profiles of one model on one GPU type.
struct TypeProfile {
  std::string gpu_type;                 ///< file suffix: aws, azure, dgx, dgx-ext, quad, rtx, ...
  std::vector<ProfileRow> placements;   ///< rows of placements-<type>.csv
  std::vector<ProfileRow> scalability;  ///< rows of scalability-<type>.csv (empty when absent)

  /// Smallest / largest local batch among the placement rows (0 when there are none).
  [[nodiscard]] int min_local_bsz() const noexcept;
  [[nodiscard]] int max_local_bsz() const noexcept;
  /// GPUs of the smallest placement profiled (0 when there is none): a pipeline model's stages on this
  /// type (one pipeline; reference `APPLICATIONS` num_stages: gpt_pmp 2 on dgx-ext, 8 on rtx).
  [[nodiscard]] int smallest_gpus() const noexcept;
  /// Placement and scalability rows together, exact duplicates (same nodes, gpus, local_bsz,
  /// step and sync time) removed — the scalability files repeat many placement rows.
  [[nodiscard]] std::vector<ProfileRow> all_rows() const;
};

/// @brief All profiles of one model (`profiles/<model>/`).
struct ModelProfile {
  std::string model;
  std::vector<TypeProfile> types;           ///< sorted by type name
  std::vector<ValidationTable> validation;  ///< sorted by batch size

  /// The profile of `gpu_type`, or nullptr.
  [[nodiscard]] const TypeProfile* type(std::string_view gpu_type) const noexcept;
  /// Smallest / largest validated global batch size (the reference's init / max batch size; 0 if none).
  [[nodiscard]] long long init_batch_size() const noexcept;
  [[nodiscard]] long long max_batch_size() const noexcept;
  /// A pipeline-parallel (hybrid) model: no GPU type has a 1-GPU placement — the profiles start at one
  /// pipeline (gpt_pmp), with `step_time` the per-stage forward time of one micro-batch.
  [[nodiscard]] bool is_pipeline() const noexcept;
};

/// @brief One row of a seed (1-GPU) profile.
struct SeedRow {
  std::string gpu_type;  ///< hardware name as written in the file (t4, v100, dgx, rtx, quad)
  std::string placement;
  int nodes = 0;
  int gpus = 0;
  int local_bsz = 0;
  double step_time = 0.0;
  double sync_time = 0.0;
  std::size_t line = 0;
};

/// @brief `seed-profiles/<model>.csv`.
struct SeedProfile {
  std::string model;
  std::vector<SeedRow> rows;
  /// Rows whose type is `gpu_type` — matched either literally or through seed_type_to_profile_type().
  [[nodiscard]] std::vector<SeedRow> rows_for(std::string_view gpu_type) const;
  /// Distinct type names in file order.
  [[nodiscard]] std::vector<std::string> gpu_types() const;
};

/// @brief Maps a seed-profile hardware name to the profile-file suffix of the same hardware:
/// t4 -> aws, v100 -> azure, dgx -> dgx-ext (the A100 rows match dgx-ext exactly), rtx -> rtx,
/// quad -> quad; anything else is returned unchanged.
[[nodiscard]] std::string seed_type_to_profile_type(std::string_view seed_type);

/// @brief Parses `placement` digits: nodes = number of non-zero digits, gpus = their sum.
/// Throws InvalidArgument (prefixed by `where`) for an empty or non-digit string.
void parse_placement(std::string_view placement, int& nodes, int& gpus, const std::string& where = "placement");

/// @brief Reads `placements-<type>.csv` (columns found by header name).
[[nodiscard]] std::vector<ProfileRow> load_placements_csv(const std::filesystem::path& file);
/// @brief Reads `scalability-<type>.csv`.
[[nodiscard]] std::vector<ProfileRow> load_scalability_csv(const std::filesystem::path& file);
/// @brief Reads `validation-<batch>.csv`; the batch size comes from the file name.
[[nodiscard]] ValidationTable load_validation_csv(const std::filesystem::path& file);
/// @brief Reads a seed profile (`seed-profiles/<model>.csv`).
[[nodiscard]] SeedProfile load_seed_profile(const std::filesystem::path& file);

/// @brief Models present in `profiles_dir` (sub-directories holding at least one placements-*.csv), sorted.
[[nodiscard]] std::vector<std::string> list_models(const std::filesystem::path& profiles_dir);
/// @brief GPU types with a `placements-<type>.csv` for `model`, sorted.
[[nodiscard]] std::vector<std::string> list_gpu_types(const std::filesystem::path& profiles_dir,
                                                      const std::string& model);
/// @brief Loads every typed placements/scalability file and every validation file of `model`.
/// Throws InvalidArgument when the directory is missing or holds no placement rows.
[[nodiscard]] ModelProfile load_model_profile(const std::filesystem::path& profiles_dir, const std::string& model);

/// @brief Converts an artifact profile row of a pipeline model (step_time = per-micro-batch
/// compute, sync_time = synchronisation) given the stages per pipeline. Throws InvalidArgument
/// when the row's GPUs are not a multiple of `stages`.
[[nodiscard]] PipelineObservation pipeline_observation(const ProfileRow& row, int stages);

}  // namespace sia::sim
