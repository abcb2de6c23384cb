#pragma once
/// @file job_spec.hpp
/// @brief JobSpec: sia's own model of the Job concept, holding any GoodputModel type-erased.

#include <sia/allocation.hpp>
#include <sia/concepts/goodput_model.hpp>
#include <sia/concepts/job.hpp>
#include <sia/configuration.hpp>
#include <sia/error.hpp>
#include <sia/gpu_type_spec.hpp>

#include <climits>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sia {

/**
 * @brief A job described by value. Setters return `*this` so a job reads as one expression:
 * @code
 * sia::JobSpec j = sia::JobSpec("J1").min_gpus(1).max_gpus(8).goodput_model(table);
 * @endcode
 */
class JobSpec {
 public:
  using GoodputFn = std::function<double(const GpuTypeSpec&, const ConfigurationSpec&)>;
  using BatchFn = std::function<BatchChoice(const GpuTypeSpec&, const ConfigurationSpec&)>;
  using LimitFn = std::function<int(const GpuTypeSpec&)>;

  JobSpec() = default;
  explicit JobSpec(std::string id) : id_(std::move(id)) {}

  // --- queries (the Job concept) ----------------------------------------------------------
  [[nodiscard]] const std::string& id() const noexcept { return id_; }
  [[nodiscard]] int min_gpus() const noexcept { return min_gpus_; }
  [[nodiscard]] int max_gpus() const noexcept { return max_gpus_; }
  [[nodiscard]] JobKind kind() const noexcept { return kind_; }
  [[nodiscard]] bool preemptible() const noexcept { return preemptible_; }
  [[nodiscard]] double age_s() const noexcept { return age_s_; }
  [[nodiscard]] int restarts() const noexcept { return restarts_; }
  [[nodiscard]] double restart_cost_s() const noexcept { return restart_cost_s_; }
  [[nodiscard]] int pipeline_size() const noexcept { return pipeline_size_; }
  /// Hybrid jobs whose pipeline differs per GPU type: GPUs per pipeline on each type (indexed like the
  /// cluster's types; 0 = the job cannot run there). Empty = pipeline_size() on every type.
  [[nodiscard]] const std::vector<int>& pipeline_sizes() const noexcept { return pipeline_sizes_; }
  /// Hybrid jobs: the largest number of pipelines the job has run with; drives the 2x rule in
  /// pipelines (valid_configs.hpp). Absent = max_gpus_ever() decides.
  [[nodiscard]] const std::optional<int>& max_pipelines_ever() const noexcept { return max_pipelines_ever_; }
  [[nodiscard]] const std::optional<int>& max_gpus_ever() const noexcept { return max_gpus_ever_; }
  [[nodiscard]] const std::optional<CurrentAllocation>& current() const noexcept { return current_; }
  /// Multiplies the job's whole term of the objective (utility when it runs, the λ penalty when it
  /// waits; docs/decision.md): finite and > 0, default 1.
  [[nodiscard]] double weight() const noexcept { return weight_; }
  /// The tenant the job belongs to (RoundOptions::tenants); empty = none.
  [[nodiscard]] const std::string& tenant() const noexcept { return tenant_; }
  [[nodiscard]] bool has_goodput() const noexcept { return static_cast<bool>(goodput_); }
  [[nodiscard]] bool has_batch_size() const noexcept { return static_cast<bool>(batch_); }
  /// The model object given to goodput_model() (shared by copies of this JobSpec), null after
  /// goodput_fn() or without a model: two JobSpecs with the same non-null identity answer every
  /// goodput, batch-size and count-limit query alike.
  [[nodiscard]] const std::shared_ptr<const void>& goodput_model_identity() const noexcept { return model_; }

  /// Raw goodput on configuration c of type t; 0 when no model is set.
  [[nodiscard]] double goodput(const GpuTypeSpec& t, const ConfigurationSpec& c) const {
    return goodput_ ? goodput_(t, c) : 0.0;
  }
  /// The largest GPU count of type t with a positive goodput (HasGpuLimit); INT_MAX when the model
  /// gives no limit.
  [[nodiscard]] int gpu_limit(const GpuTypeSpec& t) const { return limit_ ? limit_(t) : INT_MAX; }
  [[nodiscard]] bool has_gpu_limit() const noexcept { return static_cast<bool>(limit_); }
  /// Batch-size choice for configuration c, when the model offers one.
  [[nodiscard]] BatchChoice batch_size(const GpuTypeSpec& t, const ConfigurationSpec& c) const {
    return batch_ ? batch_(t, c) : BatchChoice{};
  }

  // --- setters ----------------------------------------------------------------------------
  JobSpec& id(std::string v) {
    id_ = std::move(v);
    return *this;
  }
  JobSpec& min_gpus(int v) noexcept {
    min_gpus_ = v;
    return *this;
  }
  JobSpec& max_gpus(int v) noexcept {
    max_gpus_ = v;
    return *this;
  }
  JobSpec& kind(JobKind v) noexcept {
    kind_ = v;
    return *this;
  }
  JobSpec& preemptible(bool v) noexcept {
    preemptible_ = v;
    return *this;
  }
  JobSpec& age_s(double v) noexcept {
    age_s_ = v;
    return *this;
  }
  JobSpec& restarts(int v) noexcept {
    restarts_ = v;
    return *this;
  }
  JobSpec& restart_cost_s(double v) noexcept {
    restart_cost_s_ = v;
    return *this;
  }
  JobSpec& pipeline_size(int v) noexcept {
    pipeline_size_ = v;
    return *this;
  }
  JobSpec& pipeline_sizes(std::vector<int> v) {
    pipeline_sizes_ = std::move(v);
    return *this;
  }
  JobSpec& max_pipelines_ever(std::optional<int> v) noexcept {
    max_pipelines_ever_ = v;
    return *this;
  }
  JobSpec& max_gpus_ever(std::optional<int> v) noexcept {
    max_gpus_ever_ = v;
    return *this;
  }
  JobSpec& weight(double v) noexcept {
    weight_ = v;
    return *this;
  }
  JobSpec& tenant(std::string v) {
    tenant_ = std::move(v);
    return *this;
  }
  JobSpec& current(std::optional<CurrentAllocation> v) {
    current_ = std::move(v);
    return *this;
  }

  /// Stores a copy of any GoodputModel of sia's types (and its batch_size and gpu_limit queries,
  /// when it has them). The copy is immutable and shared by copies of this JobSpec; its answers
  /// must depend only on their arguments (use goodput_fn() for a goodput that changes between
  /// rounds): a round started from a warm start (RoundOptions::warm_start) reuses the goodputs the
  /// previous round asked of the same model object (goodput_model_identity()).
  template <class M>
  requires GoodputModel<M, GpuTypeSpec, ConfigurationSpec> JobSpec& goodput_model(M model) {
    return goodput_model(std::make_shared<const M>(std::move(model)));
  }
  /// The same, with a model object that is already shared: JobSpecs given one object (of this
  /// round or of the next) share its identity, so a round started from a warm start reuses what
  /// the previous round built for a job holding the same object (a job read again from JSON with an
  /// unchanged table, in sia::JsonSession). Null throws InvalidArgument.
  template <class M>
  requires GoodputModel<M, GpuTypeSpec, ConfigurationSpec> JobSpec& goodput_model(std::shared_ptr<const M> shared) {
    if (!shared) throw InvalidArgument("job " + id_ + ": goodput_model: null model");
    model_ = shared;
    goodput_ = [shared](const GpuTypeSpec& t, const ConfigurationSpec& c) {
      return static_cast<double>(shared->goodput(t, c));
    };
    if constexpr (HasBatchSize<M, GpuTypeSpec, ConfigurationSpec>) {
      batch_ = [shared](const GpuTypeSpec& t, const ConfigurationSpec& c) {
        return to_batch_choice(shared->batch_size(t, c));
      };
    } else {
      batch_ = nullptr;
    }
    if constexpr (HasGpuLimit<M, GpuTypeSpec>) {
      limit_ = [shared](const GpuTypeSpec& t) { return static_cast<int>(shared->gpu_limit(t)); };
    } else {
      limit_ = nullptr;
    }
    return *this;
  }
  /// Sets the goodput function directly (with, optionally, its batch-size choice and its count
  /// limit per type, see HasGpuLimit).
  JobSpec& goodput_fn(GoodputFn f, BatchFn b = nullptr, LimitFn limit = nullptr) {
    model_.reset();
    goodput_ = std::move(f);
    batch_ = std::move(b);
    limit_ = std::move(limit);
    return *this;
  }

 private:
  std::string id_;
  int min_gpus_ = 1;
  int max_gpus_ = INT_MAX;
  JobKind kind_ = JobKind::adaptive;
  bool preemptible_ = true;
  double age_s_ = 0.0;
  int restarts_ = 0;
  double restart_cost_s_ = 30.0;
  int pipeline_size_ = 1;
  std::vector<int> pipeline_sizes_;
  std::optional<int> max_pipelines_ever_;
  std::optional<int> max_gpus_ever_;
  std::optional<CurrentAllocation> current_;
  double weight_ = 1.0;
  std::string tenant_;
  std::shared_ptr<const void> model_;  // goodput_model()'s object: its identity (goodput_model_identity())
  GoodputFn goodput_;
  BatchFn batch_;
  LimitFn limit_;
};

static_assert(Job<JobSpec, GpuTypeSpec, ConfigurationSpec>);

}  // namespace sia
