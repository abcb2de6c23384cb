#pragma once
/// @file sim/application.hpp
/// @brief Ground truth of one model ("application") on the GPU types of a simulated cluster:
/// step/sync times for any placement and local batch, gradient statistics per epoch and batch size,
/// progress per epoch, and the model's constants (reference §6.2, §6.3, §7).

#include <sia/goodput/efficiency.hpp>
#include <sia/goodput/throughput_model.hpp>
#include <sia/sim/cluster.hpp>
#include <sia/sim/profiles.hpp>

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace sia::sim {

/// @brief Per-model constants of the reference (`applications.py:APPLICATIONS`, `simulator_config.SLOWDOWNS`,
/// `sia.py:get_restart_penalty`).
struct ModelConstants {
  int max_epochs = 0;             ///< training length in epochs of progress (0 = all validation rows)
  double rescale_time_s = 30;     ///< simulated checkpoint-restore delay, paid at every (re)start
  double restart_penalty_s = 30;  ///< Sia's own estimate of the restart cost (restart factor)
  double slowdown = 1.0;          ///< calibration: true progress rate is divided by this
};

/// @brief Constants for a model name (cifar10, bert, deepspeech2, yolov3, imagenet, ncf; defaults otherwise).
[[nodiscard]] ModelConstants model_constants(std::string_view model);

/// @brief Step and synchronisation time (seconds) of one optimiser step without accumulation.
struct StepSync {
  double step = 0.0;
  double sync = 0.0;
};

/// @brief How step times of a placement the profiles do not list exactly are interpolated.
enum class Interpolation {
  planar,      ///< over the local batch per profiled (nodes, replicas) point, then the 2-D Delaunay triangle (default)
  delaunay3d,  ///< the reference's: one 3-D Delaunay triangulation over (nodes, replicas, local batch), qhull
};

/// @brief A sorted curve over local batch size (1-D linear interpolation, clamped at the ends).
struct BszCurve {
  std::vector<double> bsz, step, sync;
  [[nodiscard]] StepSync at(double local_bsz) const noexcept;
  [[nodiscard]] bool empty() const noexcept { return bsz.empty(); }
};

/**
 * @brief Trace-based step times of one model on one GPU type (reference §6.2).
 *
 * A placement profiled exactly (after normalising it to its lexicographically smallest rotation) is
 * interpolated linearly over the local batch. Any other placement is interpolated over
 * (nodes clipped to 16, replicas, local batch) from the per-(nodes, replicas, local batch) means of all
 * placement and scalability rows. The reference uses scipy's 3-D LinearNDInterpolator (Delaunay);
 * sia uses a documented approximation: each profiled (nodes, replicas) point is first interpolated
 * over the local batch (clamped to its profiled range), then the values are combined with the
 * barycentric weights of the 2-D Delaunay triangle of (nodes, replicas) points that contains the query
 * (the containing triangle with an empty circumcircle; the smallest one if none is empty). A query
 * outside the hull takes the nearest profiled point. Results are cached per (nodes, replicas).
 */
class TraceStepTimes {
 public:
  TraceStepTimes() = default;
  /// With Interpolation::delaunay3d, non-exact placements are interpolated like scipy's LinearNDInterpolator over
  /// the 3-D triangulation (qhull; a query outside its hull falls back to the planar rule). Throws
  /// BackendUnavailable when sia was built without qhull.
  explicit TraceStepTimes(const TypeProfile& profile, Interpolation mode = Interpolation::planar);

  [[nodiscard]] StepSync at(const std::vector<int>& placement, double local_bsz) const;
  /// True when this build has qhull (Interpolation::delaunay3d is available).
  [[nodiscard]] static bool qhull_available() noexcept;
  /// Largest local batch profiled for exactly this placement, else the largest over rows with at least
  /// as many nodes and replicas (reference `get_max_local_bsz`); 0 if none.
  [[nodiscard]] int max_local_bsz(const std::vector<int>& placement) const;
  /// Largest local batch over placement rows with this many replicas (0 if none).
  [[nodiscard]] int max_local_for_replicas(int replicas) const;

  /// Canonical placement id: non-zero digits, smallest rotation ("44", "8", "1244").
  [[nodiscard]] static std::string canonical_id(const std::vector<int>& placement);

 private:
  struct Point {
    int nodes = 0, replicas = 0;
    BszCurve curve;
    int max_bsz = 0;
  };
  struct Weights {
    int idx[3] = {-1, -1, -1};
    double w[3] = {0, 0, 0};
  };
  [[nodiscard]] Weights weights_for(int nodes, int replicas) const;

  [[nodiscard]] StepSync planar_at(int nodes, int replicas, double local_bsz) const;

  std::map<std::string, BszCurve> exact_;
  Interpolation mode_ = Interpolation::planar;
  std::vector<std::array<double, 3>> points3_;  ///< 3-D: (nodes, replicas, local batch) means
  std::vector<StepSync> values3_;               ///< 3-D: their step and sync times
  std::shared_ptr<const void> delaunay_;        ///< 3-D: the triangulation (private type)
  mutable std::map<std::tuple<int, int, double>, StepSync> cache3_;
  std::map<int, int> max_local_by_replicas_;
  std::vector<Point> points_;
  mutable std::mutex cache_mutex_;
  mutable std::map<std::pair<int, int>, Weights> cache_;
};

/// @brief Gradient statistics per epoch and validated batch size, and progress per epoch.
struct GradTable {
  std::vector<double> batch_sizes;         ///< validated global batch sizes, ascending
  std::vector<int> epochs;                 ///< epoch index of every row, ascending
  std::vector<std::vector<double>> sqr;    ///< [batch][row]
  std::vector<std::vector<double>> var;    ///< [batch][row]
  std::vector<double> progress_per_epoch;  ///< cumulative progress at the end of epoch e (e = 0..) — min over bsz
  /// Linear interpolation between the bracketing validated batch sizes (clamped), at `epoch` (clamped;
  /// linear between stored rows when rows are sub-sampled).
  [[nodiscard]] GradParams at(double batch, int epoch) const noexcept;
};

/// @brief One model's ground truth on the GPU types of one cluster (indexed like SimCluster::types).
class Application {
 public:
  /// Per-GPU-type ground truth.
  struct TypeTruth {
    std::string profile;                          ///< profile suffix
    int min_local = 0, max_local = 0;             ///< local batch range (reference §1.7)
    double xput1 = 0.0;                           ///< max(local_bsz)/max(step_time) over 1-GPU rows (reference §2)
    std::shared_ptr<const TraceStepTimes> trace;  ///< trace ground truth, or
    std::optional<PerfParams> model;              ///< model ground truth (embedded catalogue)
    /// What profiling one minimum configuration measures (paper §3.2, "Bootstrap"): the model fitted on the
    /// type's 1-GPU rows (data parallel: network terms pinned) or, for a pipeline model, on its one-pipeline
    /// rows (pipeline.hpp). Absent for the catalogue and for types without such rows.
    std::optional<PerfParams> seed;
    int stages = 1;         ///< pipeline models: GPUs per pipeline on this type (its smallest profiled placement)
    bool available = true;  ///< false: the model has no profiles for this type (a pipeline model may lack some)
  };

  std::string name;
  double init_batch_size = 0;
  double max_batch_size = 0;
  ModelConstants constants;
  GradTable grad;
  std::vector<TypeTruth> types;  ///< one per cluster type
  /// A pipeline-parallel model (hybrid jobs, paper §3.4/§5.3; profiles/gpt_pmp): `step_time()` gives the
  /// per-stage forward time of one micro-batch and the step's synchronisation; pipeline_step_time() the GPipe
  /// step (reference §4 PMP, with the synchronisation the reference drops, §9 item 17).
  bool pipeline = false;
  int microbatches = 48;  ///< pipeline models: micro-batches per pipeline and step (paper §5.3: 48 of size 1)

  /// Builds the ground truth from the artifact's profiles of this model for every type of `cluster`.
  /// @throws InvalidArgument when the profiles lack a GPU type (by profile suffix) the cluster has.
  static Application from_profile(const ModelProfile& profile, const SimCluster& cluster,
                                  Interpolation interpolation = Interpolation::planar);

  [[nodiscard]] StepSync step_time(int type, const std::vector<int>& placement, double local_bsz) const;
  /// Pipeline models: seconds per step of gpus / stages pipelines on `placement` with micro-batch `micro_bsz`:
  /// `3·((stages − 1) + microbatches)·fwd + sync` (GPipe); 0 on a type the model cannot use.
  [[nodiscard]] double pipeline_step_time(int type, const std::vector<int>& placement, double micro_bsz) const;
  /// The model can run on type `t` (profiles exist; a pipeline model also needs `gpus` to be whole pipelines).
  [[nodiscard]] bool usable(int t, int gpus = 0) const noexcept;
  [[nodiscard]] int max_local_bsz(int type, const std::vector<int>& placement) const;
  [[nodiscard]] int max_local_for_replicas(int type, int replicas) const;
  [[nodiscard]] GradParams grad_stats(double batch, int epoch) const noexcept { return grad.at(batch, epoch); }
  /// Cumulative progress needed to finish epoch `e` (0 for e = 0): reference `get_progress`.
  [[nodiscard]] double progress_at(int epoch) const noexcept;
  /// Number of epochs to train (completion when progress_at(num_epochs()) is reached).
  [[nodiscard]] int num_epochs() const noexcept;
  [[nodiscard]] double total_progress() const noexcept { return progress_at(num_epochs()); }
};

/// @brief Placement tuple (GPUs per node) of a configuration: (1, g) -> {g}; (n, g) -> n × g/n.
[[nodiscard]] std::vector<int> placement_of(int nodes, int gpus);

}  // namespace sia::sim
