#pragma once
/// @file sim/job.hpp
/// @brief A simulated training job: its life cycle (submission, starts, restarts with their delay,
/// progress by epochs, completion) and what the scheduler learns about it (observed step times,
/// fitted PerfParams per GPU type, gradient statistics). Reference §6.2, §6.3, §1.2, §1.6.

#include <sia/goodput/goodput_function.hpp>
#include <sia/goodput/goodput_memo.hpp>
#include <sia/sim/application.hpp>
#include <sia/sim/workload.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace sia::sim {

/// @brief Where a job runs: GPU type index (-1 = nowhere), nodes and GPUs.
struct SimAllocation {
  int type = -1;
  int nodes = 0;
  int gpus = 0;
  [[nodiscard]] bool empty() const noexcept { return type < 0 || gpus <= 0; }
  friend bool operator==(const SimAllocation&, const SimAllocation&) = default;
};

/// @brief One observed step time (noise-free, from the ground truth).
struct StepObservation {
  int nodes = 0, replicas = 0, local_bsz = 0;
  double step_time = 0.0, sync_time = 0.0;
};

/// @brief Fits PerfParams to observations of one GPU type (the goodput library's fitter by default).
using PerfFitter = std::function<PerfParams(const std::vector<StepObservation>&)>;

/// @brief The default fitter: sia's Pollux fit (reference §1.2).
[[nodiscard]] PerfFitter default_perf_fitter();

/// @brief `inner` with a memo keyed by the exact observations (bit for bit): jobs of one model that saw the
/// same placements and batch sizes get the same parameters without a new fit. A fit is a pure function of
/// its observations, so results are the same bits as `inner`'s. Most of a large simulation's time was these
/// fits (profiled: ~75 % at 16,384 GPUs); many jobs share their first observations. At most `capacity`
/// entries (the memo is emptied when full). Thread-safe: run_simulations() shares one between the simulations of
/// a batch (the Philly workloads share half their fits), and a fit runs outside its lock.
[[nodiscard]] PerfFitter memoised_perf_fitter(PerfFitter inner, std::size_t capacity = 1u << 18);

/**
 * @brief A pipeline job's GPUs per pipeline on each type of `cluster`: the sizes its model's profiles were
 * measured with, restricted to the types `spec.pipeline_sizes` lists (by type name or profile suffix) when it
 * lists any. Empty for a data-parallel model.
 * @throws InvalidArgument naming `source`, the job's line and the type when a listed size differs from the
 * profiles', a listed type is not in the cluster or has no profiles, the job is not hybrid, or a hybrid job's
 * model is not a pipeline model.
 */
[[nodiscard]] std::vector<int> resolve_pipeline_sizes(const WorkloadJob& spec, const Application& app,
                                                      const SimCluster& cluster, const std::string& source);

/// @brief A simulated job.
class SimJob {
 public:
  SimJob(const WorkloadJob& spec, std::shared_ptr<const Application> app, int num_types);

  // --- identity --------------------------------------------------------------------------
  std::uint64_t uid = 0;  ///< unique over the process (caches key on it, not on addresses)
  std::string name;
  std::shared_ptr<const Application> app;
  double submission_time = 0.0;
  JobKind kind = JobKind::adaptive;
  long long target_batch_size = 0;  ///< workload batch_size (caps the scheduler's batch search)
  int target_replicas = 1;          ///< workload num_replicas (rigid / strong-scaling count)
  /// Pipeline models (Application::pipeline): GPUs per pipeline on each type, 0 where the job cannot run
  /// (resolve_pipeline_sizes()); empty for data-parallel models. The job runs gpus / P pipelines.
  std::vector<int> pipeline_sizes;

  // --- state -----------------------------------------------------------------------------
  SimAllocation alloc;         ///< current allocation
  std::vector<int> placement;  ///< GPUs per node of the current allocation
  int atomic_bsz = 0;          ///< local batch per GPU
  int accum_steps = 0;         ///< extra micro-steps
  int epoch = 0;
  double progress = 0.0;      ///< scale-invariant progress (init-bsz iterations)
  double rescale_time = 0.0;  ///< remaining checkpoint-restore delay (s)
  int num_restarts = 0;       ///< restarts after the first start
  bool started = false;
  std::optional<double> completion_time;
  double gpu_seconds = 0.0;         ///< GPU-seconds held (incl. restore delays)
  double wasted_gpu_seconds = 0.0;  ///< GPU-seconds spent restoring

  // --- scheduler knowledge ---------------------------------------------------------------
  std::vector<std::map<std::tuple<int, int, int>, StepSync>> observed;  ///< per type: (N, R, local) -> times
  std::vector<std::optional<PerfParams>> perf;                          ///< per type, fitted
  std::optional<GradParams> grad;                                       ///< latest gradient statistics
  int fit_generation = 0;  ///< bumped when the job's fitted models or gradient statistics change (for caches)
  /// Heterogeneity-unaware job (reference §6.6, `h_unaware`): one merged profile over all GPU types
  /// (the first observation of a (nodes, replicas, local batch) key wins) and one fitted model that
  /// goodput_function() returns for every type, so the executor's batch size ignores the GPU type too.
  bool unaware_model = false;
  std::map<std::tuple<int, int, int>, StepSync> merged_observed;  ///< unaware jobs: merged profile
  std::optional<PerfParams> merged_perf;                          ///< unaware jobs: its fit
  /// Optional: a memo of batch-size searches shared by the simulation's jobs (their executors ask for the same
  /// searches: the same fitted model, statistics and placement); the same answers without it (goodput_memo.hpp).
  std::shared_ptr<GoodputMemo> goodput_memo;

  [[nodiscard]] bool completed() const noexcept { return completion_time.has_value(); }
  [[nodiscard]] bool tunes_batch() const noexcept { return kind == JobKind::adaptive; }
  /// Pipeline job: GPUs per pipeline on type t (0 = not usable); 1 for data-parallel jobs.
  [[nodiscard]] int stages_on(int t) const noexcept;
  /// Data-parallel replicas (pipelines for a pipeline job) that `gpus` GPUs of type t run.
  [[nodiscard]] int replicas_on(int t, int gpus) const noexcept;
  /// Global batch of the current allocation: replicas × local batch × (accumulation + 1).
  [[nodiscard]] long long global_batch() const noexcept;
  /// Pipeline job: the part of the placement its whole pipelines use (node by node).
  [[nodiscard]] std::vector<int> pipeline_placement() const;
  /// Largest replica count observed on type t (0 if never run there; pipelines for a pipeline job).
  [[nodiscard]] int max_profiled_replicas(int t) const noexcept;
  /// Goodput function of type t, when the job has run there and has gradient statistics.
  [[nodiscard]] std::optional<GoodputFunction> goodput_function(int t) const;

  /**
   * @brief Applies a new allocation at the start of a step (reference §6.3): a change of GPU type or of the
   * placement shape restarts the job (the first start too) and charges the model's restore delay;
   * an empty allocation suspends it.
   * @return true when the job (re)started.
   */
  bool apply(const SimAllocation& a);

  /**
   * @brief Advances the job by `seconds` from time `now` with its current allocation (reference §6.2):
   * restore delay first, then progress at the true goodput rate (calibrated by the model's slowdown),
   * crossing epoch boundaries (gradient statistics and batch size are refreshed at each), observing step
   * times (refitting PerfParams when a new (nodes, replicas, local batch) appears), completing after the
   * model's epochs of progress.
   */
  void step(double now, double seconds, const PerfFitter& fitter);

  /// Re-optimises the executed batch size for the current placement (reference §1.6).
  void update_local_bsz();

  /// True when step(now, seconds) would refit before anything else: a data-parallel job whose first observation,
  /// with its allocation and batch size, is a new one (later refits, after an epoch, are not foreseen).
  [[nodiscard]] bool refits_first(double seconds) const;

 private:
  void compute_local_bsz();
  // update_local_bsz()'s last answer and what it depended on.
  struct BszKey {
    int generation = -1;
    JobKind kind = JobKind::adaptive;
    bool unaware = false;
    SimAllocation alloc;
    bool operator==(const BszKey&) const = default;
  };
  struct BszMemo {
    BszKey key;
    int atomic_bsz = 0;
    int accum_steps = 0;
  };
  std::optional<BszMemo> bsz_memo_;
  void observe(int nodes, int replicas, int local, const StepSync& s, const PerfFitter& fitter);
};

}  // namespace sia::sim
