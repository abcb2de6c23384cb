/// @file goodput/job_model.cpp
/// @brief JobModel: the library's goodput estimator (see include/sia/goodput/job_model.hpp).

#include <sia/goodput/fit.hpp>
#include <sia/goodput/goodput_memo.hpp>
#include <sia/goodput/job_model.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

namespace sia {

TypeModel make_seed_type_model(std::string gpu_type, std::span<const PerfObservation> one_gpu) {
  validate(one_gpu, "seed profile of '" + gpu_type + "'");
  std::vector<PerfObservation> rows;
  std::vector<OneGpuSample> samples;
  for (const auto& o : one_gpu) {
    if (o.replicas != 1 || o.nodes != 1) continue;
    rows.push_back(o);
    samples.push_back(OneGpuSample{o.local_bsz, o.step_time});
  }
  if (rows.empty()) throw InvalidArgument("seed profile of '" + gpu_type + "': no 1-GPU rows");
  TypeModel t;
  t.gpu_type = std::move(gpu_type);
  t.seed = fit_perf_params(rows);
  double lo = rows.front().local_bsz, hi = rows.front().local_bsz;
  for (const auto& o : rows) {
    lo = std::min(lo, o.local_bsz);
    hi = std::max(hi, o.local_bsz);
  }
  t.min_local = static_cast<int>(std::ceil(lo));
  t.max_local = static_cast<int>(std::floor(hi));
  t.xput1 = one_gpu_throughput(samples);
  return t;
}

namespace {

// "JobModel.<field>: must be <rule>, got <value>".
[[noreturn]] void bad_field(const char* field, const char* rule, const std::string& got) {
  throw InvalidArgument(std::string("JobModel.") + field + ": must be " + rule + ", got " + got);
}
std::string show(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

// The checks of one type that do not depend on the job (validate() checks the rest).
void check_type(const TypeModel& t) {
  if (t.gpu_type.empty()) throw InvalidArgument("JobModel.add_type: empty GPU type name");
  const std::string w = "JobModel.types['" + t.gpu_type + "']";
  if (t.perf) sia::validate(*t.perf, w + ".perf");
  if (t.seed) sia::validate(*t.seed, w + ".seed");
  if (t.min_local < 0) throw InvalidArgument(w + ".min_local: must be >= 0, got " + std::to_string(t.min_local));
  if (t.max_local < 0) throw InvalidArgument(w + ".max_local: must be >= 0, got " + std::to_string(t.max_local));
  if (t.max_local > 0 && t.min_local > t.max_local)
    throw InvalidArgument(w + ".min_local: " + std::to_string(t.min_local) + " > max_local " +
                          std::to_string(t.max_local));
  if (t.gpus_per_node < 0)
    throw InvalidArgument(w + ".gpus_per_node: must be >= 0, got " + std::to_string(t.gpus_per_node));
  if (!std::isfinite(t.xput1) || t.xput1 < 0.0)
    throw InvalidArgument(w + ".xput1: must be a finite number >= 0, got " + show(t.xput1));
  if (t.stages < 1) throw InvalidArgument(w + ".stages: must be >= 1, got " + std::to_string(t.stages));
  if (t.max_nodes < 0) throw InvalidArgument(w + ".max_nodes: must be >= 0, got " + std::to_string(t.max_nodes));
}

}  // namespace

JobModel& JobModel::kind(JobKind k) {
  if (std::find(all_job_kinds.begin(), all_job_kinds.end(), k) == all_job_kinds.end())
    bad_field("kind", "a JobKind", std::to_string(static_cast<int>(k)));
  kind_ = k;
  return *this;
}
JobModel& JobModel::init_batch_size(double b) {
  if (!std::isfinite(b) || !(b > 0.0) || b > 1e12)
    bad_field("init_batch_size", "a finite number in (0, 1e12]", show(b));
  init_batch_ = b;
  return *this;
}
JobModel& JobModel::max_batch_size(double b) {
  if (!std::isfinite(b) || b < 0.0 || b > 1e12)
    bad_field("max_batch_size", "a finite number in [0, 1e12] (0: the initial batch size)", show(b));
  max_batch_ = b;
  return *this;
}
JobModel& JobModel::grad(std::optional<GradParams> g) {
  if (g) sia::validate(*g, "JobModel.grad");
  grad_ = std::move(g);
  return *this;
}
JobModel& JobModel::projection(ProjectionMode m) {
  mode_ = m;
  return *this;
}
JobModel& JobModel::first_placement(FirstPlacement f) {
  first_ = f;
  return *this;
}
JobModel& JobModel::known_type(std::string name) {
  known_type_ = std::move(name);
  return *this;
}
JobModel& JobModel::microbatches(int m) {
  if (m < 1) bad_field("microbatches", ">= 1", std::to_string(m));
  microbatches_ = m;
  return *this;
}
JobModel& JobModel::candidates(int n) {
  if (n < 1 || n > 100000) bad_field("candidates", "in [1, 100000]", std::to_string(n));
  candidates_ = n;
  return *this;
}

JobModel& JobModel::memo(std::shared_ptr<GoodputMemo> m) noexcept {
  memo_ = std::move(m);
  return *this;
}

JobModel& JobModel::add_type(TypeModel t) {
  check_type(t);
  for (auto& e : types_)
    if (e.gpu_type == t.gpu_type) {
      e = std::move(t);
      return *this;
    }
  types_.push_back(std::move(t));
  return *this;
}

const TypeModel* JobModel::type(const std::string& name) const noexcept {
  for (const auto& e : types_)
    if (e.gpu_type == name) return &e;
  return nullptr;
}

void JobModel::validate(const std::string& what) const {
  if (!std::isfinite(init_batch_) || !(init_batch_ > 0.0))
    throw InvalidArgument(what + ".init_batch_size: must be a finite number > 0");
  if (!std::isfinite(max_batch_) || max_batch_ < 0.0 || max_batch_ > 1e12)
    throw InvalidArgument(what + ".max_batch_size: must be a finite number in [0, 1e12]");
  if (kind_ == JobKind::adaptive && max_batch_ > 0.0 && max_batch_ < init_batch_)
    throw InvalidArgument(what + ".max_batch_size: " + std::to_string(max_batch_) + " < init_batch_size " +
                          std::to_string(init_batch_));
  if (grad_) sia::validate(*grad_, what + ".grad");
  if (microbatches_ < 1) throw InvalidArgument(what + ".microbatches: must be >= 1");
  if (candidates_ < 1 || candidates_ > 100000) throw InvalidArgument(what + ".candidates: must be in [1, 100000]");
  if (!known_type_.empty() && (type(known_type_) == nullptr || !type(known_type_)->perf))
    throw InvalidArgument(what + ".known_type: '" + known_type_ + "' has no fitted perf model");
  for (const auto& t : types_) {
    const std::string w = what + ".types['" + t.gpu_type + "']";
    if (t.gpu_type.empty()) throw InvalidArgument(what + ".types: empty GPU type name");
    if (t.perf) sia::validate(*t.perf, w + ".perf");
    if (t.seed) sia::validate(*t.seed, w + ".seed");
    BatchLimits l = limits(t);
    l.max_batch_size = std::max(l.max_batch_size, 0.0);
    sia::validate(l, w + ".local_batch");
    if (t.gpus_per_node < 0) throw InvalidArgument(w + ".gpus_per_node: must be >= 0");
    if (!std::isfinite(t.xput1) || t.xput1 < 0.0) throw InvalidArgument(w + ".xput1: must be a finite number >= 0");
    if (t.stages < 1) throw InvalidArgument(w + ".stages: must be >= 1");
    if (t.max_nodes < 0) throw InvalidArgument(w + ".max_nodes: must be >= 0");
  }
}

BatchLimits JobModel::limits_at(const TypeModel& tm, int gpus) const noexcept {
  BatchLimits l = limits(tm);
  if (kind_ == JobKind::adaptive && !grad_) {
    // One candidate: the smallest batch of the tuning range (optimize_batch: [max(init, min_local*R),
    // max_batch]); none when even that exceeds max_batch_size, as with statistics.
    const double smallest = std::max(init_batch_, (tm.min_local > 0 ? tm.min_local : 1.0) * std::max(gpus, 1));
    if (smallest <= l.max_batch_size * (1.0 + 1e-12)) l.max_batch_size = smallest;
  }
  if (kind_ == JobKind::hybrid && !grad_ && tm.stages >= 1 && gpus % tm.stages == 0 && gpus > 0) {
    // The same rule for a pipeline: without statistics nothing says a larger batch keeps its
    // efficiency, so the global batch (pipelines x micro-batch x micro-batches) is the smallest one
    // of at least init_batch_size the micro-batch range allows (PipelineGoodputFunction then takes
    // the largest micro-batch within it: that one).
    const double per_micro = static_cast<double>(gpus / tm.stages) * microbatches_;
    const double lo = tm.min_local > 0 ? tm.min_local : 1.0;
    const double smallest = std::max(lo, std::ceil(init_batch_ / per_micro - 1e-9)) * per_micro;
    if (smallest <= l.max_batch_size * (1.0 + 1e-12)) l.max_batch_size = smallest;
  }
  return l;
}

const TypeModel* JobModel::known() const noexcept {
  if (!known_type_.empty()) {
    const TypeModel* t = type(known_type_);
    return t != nullptr && t->perf ? t : nullptr;
  }
  for (const auto& e : types_)
    if (e.perf) return &e;
  return nullptr;
}

double JobModel::xput1(const TypeModel& tm) const noexcept {
  if (tm.xput1 > 0.0) return tm.xput1;
  const PerfParams* p = tm.seed ? &*tm.seed : (tm.perf ? &*tm.perf : nullptr);
  if (p == nullptr) return 0.0;
  const double b = tm.max_local > 0 ? tm.max_local : (tm.min_local > 0 ? tm.min_local : init_batch_);
  return throughput(*p, 1, 1, b, 0);
}

GoodputChoice JobModel::optimize(const PerfParams& perf, int nodes, int gpus, const BatchLimits& lim) const noexcept {
  const GoodputFunction f{perf, grad_, init_batch_};
  return memo_ ? memo_->optimize(f, nodes, gpus, lim) : f.optimize(nodes, gpus, lim);
}

GoodputChoice JobModel::first_placement_value(const TypeModel& y, int n, int g) const noexcept {
  FirstPlacement rule = first_;
  // The reference values rigid jobs from the trace's throughput, never by a tie (reference §4).
  if (rule == FirstPlacement::tie && kind_ == JobKind::rigid) rule = FirstPlacement::profiled;
  switch (rule) {
    case FirstPlacement::tie:
      return GoodputChoice{1.0, 1.0, 1.0, BatchChoice{}};
    case FirstPlacement::profiled: {
      const double r = xput1(y);
      if (!(r > 0.0) || !std::isfinite(r)) return GoodputChoice{};
      return GoodputChoice{r, r, 1.0, BatchChoice{}};
    }
    case FirstPlacement::seed:
      break;
  }
  if (!y.seed) return GoodputChoice{};
  return optimize(*y.seed, n, g, limits_at(y, g));
}

GoodputChoice JobModel::evaluate(const GpuTypeSpec& t, const ConfigurationSpec& c) const noexcept {
  const TypeModel* y = type(t.name());
  const int n = c.nodes;
  const int g = c.gpus;
  if (y == nullptr || n < 1 || g < n) return GoodputChoice{};
  if (y->max_nodes > 0 && n > y->max_nodes) return GoodputChoice{};
  const BatchLimits lim = limits_at(*y, g);

  if (kind_ == JobKind::hybrid) {
    const PerfParams* p = y->perf ? &*y->perf : (y->seed ? &*y->seed : nullptr);
    if (p == nullptr) return GoodputChoice{};
    PipelineGoodputFunction f{PipelineParams{*p, y->stages, microbatches_}, grad_, init_batch_};
    return f.optimize(n, g, lim);
  }
  if (y->perf) return optimize(*y->perf, n, g, lim);

  const TypeModel* x = known();
  if (x == nullptr) return first_placement_value(*y, n, g);
  if (mode_ == ProjectionMode::equal)  // no profile says otherwise: Y runs as X does
    return optimize(*x->perf, n, g, lim);
  if (mode_ == ProjectionMode::none || (mode_ == ProjectionMode::paper && (g == 1 || !y->seed))) {
    // No projection (or Eq. 1 reduces to the seed): the type's own 1-GPU model.
    if (!y->seed) return GoodputChoice{};
    return optimize(*y->seed, n, g, lim);
  }
  if (mode_ == ProjectionMode::paper) {
    const ProjectedStepTime step(*x->perf, *y->seed, n, g);
    return optimize_batch(
        g, init_batch_, lim, [&](double b, int s) { return step(b, s); }, efficiency_fn(grad_, init_batch_),
        [&](double b, int s) { return step.lower_bound(b, s); });
  }
  // ProjectionMode::reference: the known type's curve on its own topology and limits, scaled.
  const double ry = xput1(*y);
  const double rx = xput1(*x);
  if (!(ry > 0.0) || !(rx > 0.0)) return GoodputChoice{};
  const int nx = x->gpus_per_node > 0 ? (g + x->gpus_per_node - 1) / x->gpus_per_node : n;
  GoodputChoice r = optimize(*x->perf, std::max(nx, 1), g, limits_at(*x, g));
  r.goodput = r.goodput * ry / rx;
  r.throughput = r.throughput * ry / rx;
  if (!std::isfinite(r.goodput)) return GoodputChoice{};
  return r;
}

}  // namespace sia
