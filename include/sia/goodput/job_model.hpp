#pragma once
/// @file goodput/job_model.hpp
/// @brief JobModel: the library's goodput estimator — a job's goodput on any configuration of any
/// GPU type, with projection to types the job has not run on, the value of a job that has never
/// run (first placement) and the batch-size choice. Satisfies sia::GoodputModel and offers
/// batch_size(t, c). The round (sia_allocate's `model` form), the simulator's Sia policy and
/// `sia_fit_profiles` all estimate with it.
///
/// Per GPU type (matched by GpuTypeSpec::name()) a TypeModel holds
/// - `perf`: the throughput model fitted on what the job ran on this type (online refinement),
/// - `seed`: a 1-GPU model fitted on the type's seed profile (network terms pinned),
/// - the type's local batch range (memory limit), its 1-GPU throughput and node size, and the
///   largest node count the model is valid for.
///
/// Goodput of configuration (N nodes, G GPUs) on type Y, data-parallel kinds:
/// 1. Y has `perf`: optimise the batch size with it (Y's batch limits).
/// 2. Else, if some type X has `perf` (the first such type in the job's type list, or `known_type`
///    when set) — **projection**, by ProjectionMode:
///    - `paper` (default, paper Eq. 1, projection.hpp): if Y has `seed`,
///      `T_Y(N, G, b, s) = T_Y^seed(1, 1, b, s) * T_X(N, G, b, s) / T_X(1, 1, b, s)`, batch optimised
///      within Y's own limits on Y's topology; 1-GPU configurations use Y's seed directly (Eq. 1 is
///      exact there); no seed: not usable.
///    - `reference` (the authors' simulator): X's optimised goodput on
///      `ceil(G / X.gpus_per_node)` nodes with X's batch limits, times `xput1(Y) / xput1(X)` (the
///      max/max 1-GPU throughputs, TypeModel::xput1). Put the types in cluster order.
///    - `equal` (the paper's "No Prof" ablation, §5.7: no profiles at all): Y is assumed to run as X
///      does — X's model on Y's configuration with Y's batch limits — until the job runs on Y.
///    - `none`: Y's `seed` alone (if any).
/// 3. Else (no type has `perf`: the job has never run) — **first placement**, by FirstPlacement:
///    - `seed` (default): Y's `seed` alone (its pinned network predicts linear scaling — the
///      paper's "assume throughput doubles"); no seed: not usable.
///    - `tie` (the reference code): every configuration is worth 1, so the solver's tie-break picks
///      (rigid jobs are valued as `profiled`, as the reference values them from the trace).
///    - `profiled` (the paper): the type's 1-GPU throughput xput1.
///    The round offers a never-run job only its minimum GPU count (the 2x rule with
///    `max_gpus_ever` = 0), so these values compare types. They carry no batch choice.
/// Configurations spanning more than TypeModel::max_nodes nodes (when set) are not usable, and
/// neither are types the job knows nothing about.
///
/// Kinds: adaptive tunes the global batch in [init_batch_size, max_batch_size]; strong-scaling and
/// rigid jobs run the fixed global batch `max_batch_size` (BatchLimits::tune = false); hybrid
/// jobs use the pipeline model (pipeline.hpp) with TypeModel::stages GPUs per pipeline and
/// `microbatches` micro-batches (no projection across types: the stage count differs per type).
/// Gradient statistics are optional: without them the efficiency is 1 (goodput = throughput) and an
/// adaptive job keeps its initial batch size (grad()).
/// The result is never NaN.

#include <sia/concepts/goodput_model.hpp>
#include <sia/concepts/job.hpp>
#include <sia/configuration.hpp>
#include <sia/error.hpp>
#include <sia/goodput/efficiency.hpp>
#include <sia/goodput/goodput_function.hpp>
#include <sia/goodput/pipeline.hpp>
#include <sia/goodput/projection.hpp>
#include <sia/goodput/throughput_model.hpp>
#include <sia/gpu_type_spec.hpp>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace sia {

/// @brief How a type the job has not run on is estimated from one it has (see job_model.hpp).
enum class ProjectionMode {
  paper,      ///< paper Eq. 1: known type's scaling x this type's own 1-GPU model, own limits (default)
  reference,  ///< reference simulator: first known type's curve on its topology and limits x 1-GPU throughput ratio
  none,       ///< no projection: the type's own seed model only
  equal,      ///< no profiles ("No Prof"): an unseen type is assumed as fast as the known type
};

/// @brief How a job that has never run is valued (see job_model.hpp).
enum class FirstPlacement {
  seed,      ///< each type's 1-GPU seed model (default)
  tie,       ///< every configuration worth the same (the reference code; rigid jobs as `profiled`)
  profiled,  ///< the type's 1-GPU throughput (the paper)
};

/// @brief What a job knows about one GPU type.
struct TypeModel {
  std::string gpu_type;            ///< GpuTypeSpec::name() this entry applies to
  std::optional<PerfParams> perf;  ///< fitted on the job's own observations on this type
  std::optional<PerfParams> seed;  ///< fitted on the type's 1-GPU seed profile
  int min_local = 0;               ///< smallest local batch per GPU (0 = 1)
  int max_local = 0;               ///< largest local batch per GPU that fits in memory (0 = no limit)
  int gpus_per_node = 0;           ///< node size, used by ProjectionMode::reference (0 = use the config's nodes)
  double xput1 = 0.0;              ///< reference 1-GPU throughput max(bsz)/max(step) (0 = derive from seed/perf)
  int stages = 1;                  ///< hybrid jobs: GPUs per pipeline on this type
  int max_nodes = 0;               ///< largest node count the model is valid for (0 = any)
};

class GoodputMemo;  // goodput_memo.hpp

/// @brief Builds a TypeModel from 1-GPU measurements (a seed profile): fits `seed`, sets the local
/// batch range from the measured batches and `xput1` with the reference's max/max rule.
/// Throws InvalidArgument when `one_gpu` is empty or invalid.
[[nodiscard]] TypeModel make_seed_type_model(std::string gpu_type, std::span<const PerfObservation> one_gpu);

/**
 * @brief A job's goodput model over GPU types. Build with the chained setters, then call validate().
 * @code
 * sia::JobModel m = sia::JobModel().init_batch_size(128).max_batch_size(4096)
 *                       .grad(sia::GradParams{0.5, 20}).add_type(t4).add_type(a100);
 * m.validate("job J1");
 * double g = m.goodput(cluster.types[0], sia::ConfigurationSpec{0, 1, 4});
 * @endcode
 */
class JobModel {
 public:
  // Each setter checks its own value and throws InvalidArgument naming the field and the value
  // ("JobModel.init_batch_size: must be a finite number in (0, 1e12], got -1"); validate() adds the
  // checks that relate fields (max_batch_size >= init_batch_size, known_type, local batch ranges).
  JobModel& kind(JobKind k);
  JobModel& init_batch_size(double b);
  /// Largest global batch (adaptive) or the fixed global batch (strong-scaling, rigid, hybrid cap).
  JobModel& max_batch_size(double b);
  /// Gradient statistics. Without them an adaptive job runs at its initial batch size (or the smallest
  /// global batch its GPUs hold, min_local per GPU, within max_batch_size): the statistical efficiency
  /// that makes a larger batch worth its cost is unknown until the job reports them, and efficiency 1
  /// would always favour the largest batch.
  JobModel& grad(std::optional<GradParams> g);
  JobModel& projection(ProjectionMode m);
  JobModel& first_placement(FirstPlacement f);
  JobModel& known_type(std::string name);
  JobModel& microbatches(int m);
  JobModel& candidates(int n);
  /// Optional: a memo of batch-size optimisations shared with other models (one scheduler's jobs); the answers
  /// are the same bits with or without it (goodput_memo.hpp). nullptr (the default): none.
  JobModel& memo(std::shared_ptr<GoodputMemo> m) noexcept;
  /// Adds (or replaces, by name) the model of one type; checks the type's own fields (name, perf, seed,
  /// local batch range, node size, xput1, stages, max_nodes) and throws InvalidArgument naming the first bad one.
  JobModel& add_type(TypeModel t);

  [[nodiscard]] JobKind kind() const noexcept { return kind_; }
  [[nodiscard]] double init_batch_size() const noexcept { return init_batch_; }
  [[nodiscard]] double max_batch_size() const noexcept { return max_batch_; }
  [[nodiscard]] const std::optional<GradParams>& grad() const noexcept { return grad_; }
  [[nodiscard]] ProjectionMode projection() const noexcept { return mode_; }
  [[nodiscard]] FirstPlacement first_placement() const noexcept { return first_; }
  [[nodiscard]] const std::vector<TypeModel>& types() const noexcept { return types_; }
  /// The model of type `name`, or nullptr.
  [[nodiscard]] const TypeModel* type(const std::string& name) const noexcept;

  /// Throws InvalidArgument, prefixed by `what`, naming the first inconsistent field.
  void validate(const std::string& what = "job model") const;

  /// Best goodput and batch choice of configuration c on type t (goodput 0: not usable).
  [[nodiscard]] GoodputChoice evaluate(const GpuTypeSpec& t, const ConfigurationSpec& c) const noexcept;
  /// GoodputModel: raw goodput (samples/s of useful progress).
  [[nodiscard]] double goodput(const GpuTypeSpec& t, const ConfigurationSpec& c) const noexcept {
    return evaluate(t, c).goodput;
  }
  /// Batch-size choice that goes with goodput(t, c).
  [[nodiscard]] BatchChoice batch_size(const GpuTypeSpec& t, const ConfigurationSpec& c) const noexcept {
    return evaluate(t, c).batch;
  }

  /// The batch limits used on type `tm` (kind, job batch range and the type's local range).
  [[nodiscard]] BatchLimits limits(const TypeModel& tm) const noexcept {
    BatchLimits l;
    l.max_batch_size = max_batch_ > 0.0 ? max_batch_ : init_batch_;
    l.min_local = tm.min_local;
    l.max_local = tm.max_local;
    l.tune = kind_ == JobKind::adaptive || kind_ == JobKind::hybrid;
    l.accumulation = true;
    l.candidates = candidates_;
    return l;
  }

 private:
  /// limits(tm) for a configuration of `gpus` GPUs: an adaptive job without gradient statistics gets
  /// only its smallest valid batch, max(init_batch_size, min_local * gpus); a hybrid one the smallest
  /// global batch of at least init_batch_size its micro-batch range allows.
  [[nodiscard]] BatchLimits limits_at(const TypeModel& tm, int gpus) const noexcept;
  [[nodiscard]] const TypeModel* known() const noexcept;
  [[nodiscard]] double xput1(const TypeModel& tm) const noexcept;
  [[nodiscard]] GoodputChoice first_placement_value(const TypeModel& y, int nodes, int gpus) const noexcept;
  /// GoodputFunction{perf, grad, init}.optimize(nodes, gpus, lim), through the memo when there is one.
  [[nodiscard]] GoodputChoice optimize(const PerfParams& perf, int nodes, int gpus,
                                       const BatchLimits& lim) const noexcept;

  JobKind kind_ = JobKind::adaptive;
  double init_batch_ = 1.0;
  double max_batch_ = 0.0;
  std::optional<GradParams> grad_;
  ProjectionMode mode_ = ProjectionMode::paper;
  FirstPlacement first_ = FirstPlacement::seed;
  std::string known_type_;
  int microbatches_ = 48;
  int candidates_ = 50;
  std::vector<TypeModel> types_;
  std::shared_ptr<GoodputMemo> memo_;
};

static_assert(GoodputModel<JobModel, GpuTypeSpec, ConfigurationSpec>);
static_assert(HasBatchSize<JobModel, GpuTypeSpec, ConfigurationSpec>);

}  // namespace sia
