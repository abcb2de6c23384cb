// sia._sia._goodput: the vectorised kernels under sia.goodput (python/sia/goodput.py) and the profile fits under
// sia.fit_profiles (python/sia/fit.py).
//
// The Python layer broadcasts its arguments (NumPy rules) and hands them here as arrays of one shape; every number
// comes from sia's C++ model (throughput_model.hpp, efficiency.hpp, goodput_function.hpp, fit.hpp), evaluated
// element by element with the GIL released for large inputs. Bad elements are rejected with their index in the
// broadcast shape, so the ValueError says which value of which argument is wrong.
#include <sia/error.hpp>
#include <sia/goodput/efficiency.hpp>
#include <sia/goodput/fit.hpp>
#include <sia/goodput/goodput_function.hpp>
#include <sia/goodput/pipeline.hpp>
#include <sia/goodput/projection.hpp>
#include <sia/goodput/throughput_model.hpp>
#include <sia/sim/profile_split.hpp>
#include <sia/sim/profiles.hpp>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.hpp"

namespace py = pybind11;

namespace sia::python {
namespace {

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
using Perf7 = std::array<double, 7>;
using Grad2 = std::optional<std::array<double, 2>>;

// Releasing the GIL costs about as much as a few evaluations: only worth it for inputs this large.
constexpr std::size_t kReleaseGilAbove = 2048;

PerfParams to_perf(const Perf7& v) {
  PerfParams p{v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
  validate(p, "perf_params");
  return p;
}

std::optional<GradParams> to_grad(const Grad2& v) {
  if (!v) return std::nullopt;
  GradParams g{(*v)[0], (*v)[1]};
  validate(g, "grad_params");
  return g;
}

double to_init(double init) {
  if (!std::isfinite(init) || !(init > 0.0))
    throw InvalidArgument("init_batch_size: must be a finite number > 0, got " + std::to_string(init));
  return init;
}

/// The shortest text that reads back as `v` (0.1, 1e+300, nan), as Python's repr would print it.
std::string number(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

/// Arrays of one (broadcast) shape, read-only, with the names the messages use.
class Inputs {
 public:
  Inputs(const char* function, std::vector<std::pair<const char*, Array>> arrays) : function_(function) {
    for (auto& [name, a] : arrays) {
      if (!names_.empty() && !same_shape(a)) throw InvalidArgument(function_ + ": arguments of different shapes");
      if (names_.empty()) shape_.assign(a.shape(), a.shape() + a.ndim());
      names_.push_back(name);
      data_.push_back(a.data());
      keep_.push_back(std::move(a));
    }
    size_ = 1;
    for (py::ssize_t d : shape_) size_ *= static_cast<std::size_t>(d);
  }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] const std::vector<py::ssize_t>& shape() const noexcept { return shape_; }
  [[nodiscard]] double at(std::size_t k, std::size_t i) const noexcept { return data_[k][i]; }

  /// Element i of input k as an int in [lo, 2^31 - 1]; throws naming the argument and index otherwise.
  [[nodiscard]] int whole(std::size_t k, std::size_t i, int lo) const {
    const double v = data_[k][i];
    if (!(v >= lo) || v > 2147483647.0 || v != std::floor(v)) fail(k, i, "a whole number >= " + std::to_string(lo));
    return static_cast<int>(v);
  }
  /// Element i of input k as a finite number > 0.
  [[nodiscard]] double positive(std::size_t k, std::size_t i) const {
    const double v = data_[k][i];
    if (!std::isfinite(v) || !(v > 0.0)) fail(k, i, "a finite number > 0");
    return v;
  }
  [[noreturn]] void fail(std::size_t k, std::size_t i, const std::string& need) const {
    throw InvalidArgument(function_ + ": " + names_[k] + index(i) + " = " + number(data_[k][i]) + ": must be " + need);
  }
  [[noreturn]] void fail_message(std::size_t i, const std::string& text) const {
    throw InvalidArgument(function_ + (shape_.empty() ? "" : ": at index " + index(i)) + ": " + text);
  }

  /// A new array of the inputs' shape.
  template <class T>
  [[nodiscard]] py::array_t<T> output() const {
    return py::array_t<T>(shape_);
  }

 private:
  [[nodiscard]] bool same_shape(const Array& a) const {
    if (static_cast<std::size_t>(a.ndim()) != shape_.size()) return false;
    for (std::size_t d = 0; d < shape_.size(); ++d)
      if (a.shape(static_cast<py::ssize_t>(d)) != shape_[d]) return false;
    return true;
  }
  /// "[i, j]" in the broadcast shape ("" for a scalar).
  [[nodiscard]] std::string index(std::size_t flat) const {
    if (shape_.empty()) return "";
    std::vector<std::size_t> idx(shape_.size());
    for (std::size_t d = shape_.size(); d-- > 0;) {
      const auto n = static_cast<std::size_t>(shape_[d]);
      idx[d] = flat % n;
      flat /= n;
    }
    std::string s = "[";
    for (std::size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
    return s + "]";
  }

  std::string function_;
  std::vector<const char*> names_;
  std::vector<const double*> data_;
  std::vector<Array> keep_;
  std::vector<py::ssize_t> shape_;
  std::size_t size_ = 0;
};

/// Runs body(i) for every element, without the GIL when there are many.
template <class Body>
void for_each(std::size_t n, Body&& body) {
  std::optional<py::gil_scoped_release> release;
  if (n > kReleaseGilAbove) release.emplace();
  for (std::size_t i = 0; i < n; ++i) body(i);
}

struct Config {
  int nodes;
  int replicas;
  double atomic;
  int accum;
};

/// Element i of (num_nodes, num_replicas, atomic_bsz, accum_steps), checked.
Config config(const Inputs& in, std::size_t i) {
  Config c{in.whole(0, i, 1), in.whole(1, i, 1), in.positive(2, i), in.whole(3, i, 0)};
  if (c.nodes > c.replicas)
    in.fail_message(i, "num_nodes " + std::to_string(c.nodes) + " > num_replicas " + std::to_string(c.replicas) +
                           " (every node holds at least one replica)");
  return c;
}

/// The step-time model of a kernel: sia's data-parallel model of `perf`, or, with `seed`, the paper's Eq. 1
/// projection of it onto a GPU type known only from its 1-GPU profile (projection.hpp).
struct StepModel {
  PerfParams perf;
  std::optional<PerfParams> seed;

  [[nodiscard]] double throughput(int nodes, int replicas, double atomic, int accum) const noexcept {
    return seed ? projected_throughput(perf, *seed, nodes, replicas, atomic, accum)
                : sia::throughput(perf, nodes, replicas, atomic, accum);
  }
};

StepModel to_model(const Perf7& perf, const std::optional<Perf7>& seed) {
  StepModel m{to_perf(perf), std::nullopt};
  if (seed) {
    const Perf7& v = *seed;
    m.seed = PerfParams{v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
    validate(*m.seed, "seed_perf_params");
  }
  return m;
}

Inputs config_inputs(const char* function, Array nodes, Array replicas, Array atomic, Array accum) {
  return Inputs(function, {{"num_nodes", std::move(nodes)},
                           {"num_replicas", std::move(replicas)},
                           {"atomic_bsz", std::move(atomic)},
                           {"accum_steps", std::move(accum)}});
}

py::array_t<double> throughput(const Perf7& perf, const std::optional<Perf7>& seed, Array nodes, Array replicas,
                               Array atomic, Array accum) {
  const StepModel model = to_model(perf, seed);
  const Inputs in = config_inputs("GoodputFunction.throughput", std::move(nodes), std::move(replicas),
                                  std::move(atomic), std::move(accum));
  auto out = in.output<double>();
  double* o = out.mutable_data();
  for_each(in.size(), [&](std::size_t i) {
    const Config c = config(in, i);
    o[i] = model.throughput(c.nodes, c.replicas, c.atomic, c.accum);
  });
  return out;
}

py::array_t<double> evaluate(const Perf7& perf, const std::optional<Perf7>& seed, const Grad2& grad, double init,
                             Array nodes, Array replicas, Array atomic, Array accum) {
  const StepModel model = to_model(perf, seed);
  const GoodputFunction f{model.perf, to_grad(grad), to_init(init)};
  const Inputs in = config_inputs("GoodputFunction.evaluate", std::move(nodes), std::move(replicas), std::move(atomic),
                                  std::move(accum));
  auto out = in.output<double>();
  double* o = out.mutable_data();
  for_each(in.size(), [&](std::size_t i) {
    const Config c = config(in, i);
    const double batch = static_cast<double>(c.replicas) * c.atomic * (c.accum + 1);
    // AdaptDL asserts this too: the efficiency model extrapolates only upwards from the initial batch.
    if (batch < f.init_batch_size * (1.0 - 1e-12))
      in.fail_message(i, "batch size num_replicas * atomic_bsz * (accum_steps + 1) = " + number(batch) +
                             " < init_batch_size " + number(f.init_batch_size));
    // GoodputFunction::evaluate's rule (0 instead of a non-finite value) over either step-time model.
    const double g = model.throughput(c.nodes, c.replicas, c.atomic, c.accum) * f.efficiency(batch);
    o[i] = std::isfinite(g) && g > 0.0 ? g : 0.0;
  });
  return out;
}

py::array_t<double> efficiency(const Grad2& grad, double init, Array batch) {
  const GoodputFunction f{PerfParams{}, to_grad(grad), to_init(init)};
  const Inputs in("GoodputFunction.efficiency", {{"batch_size", std::move(batch)}});
  auto out = in.output<double>();
  double* o = out.mutable_data();
  for_each(in.size(), [&](std::size_t i) { o[i] = f.efficiency(in.positive(0, i)); });
  return out;
}

/// The goodput-maximising (atomic_bsz, accum_steps) of every (num_nodes, num_replicas), by sia's optimiser with
/// AdaptDL's arguments (see python/sia/goodput.py for the mapping and its deviations).
std::tuple<py::array_t<double>, py::array_t<long long>, py::array_t<long long>> optimize(
    const Perf7& perf, const std::optional<Perf7>& seed, const Grad2& grad, double init, Array nodes, Array replicas,
    double max_batch_size, int min_atomic, int max_atomic, bool accumulation) {
  const StepModel model = to_model(perf, seed);
  const GoodputFunction f{model.perf, to_grad(grad), to_init(init)};
  BatchLimits lim;
  lim.max_batch_size = max_batch_size;
  lim.min_local = min_atomic;
  lim.max_local = max_atomic;
  lim.accumulation = accumulation;
  validate(lim, "GoodputFunction.optimize");
  if (max_batch_size < f.init_batch_size)
    throw InvalidArgument("GoodputFunction.optimize: max_batch_size " + number(max_batch_size) + " < init_batch_size " +
                          number(f.init_batch_size));
  const Inputs in("GoodputFunction.optimize", {{"num_nodes", std::move(nodes)}, {"num_replicas", std::move(replicas)}});
  auto goodput = in.output<double>();
  auto atomic = in.output<long long>();
  auto steps = in.output<long long>();
  double* g = goodput.mutable_data();
  long long* a = atomic.mutable_data();
  long long* s = steps.mutable_data();
  // A configuration no batch fits reports the smallest atomic batch allowed, as AdaptDL's clipping would.
  const long long fallback_atomic = min_atomic > 0 ? min_atomic : 1;
  for_each(in.size(), [&](std::size_t i) {
    const int n = in.whole(0, i, 1);
    const int r = in.whole(1, i, 1);
    if (n > r)
      in.fail_message(i, "num_nodes " + std::to_string(n) + " > num_replicas " + std::to_string(r) +
                             " (every node holds at least one replica)");
    BatchLimits l = lim;
    if (r == 1 && !accumulation) {
      // AdaptDL's rule: one replica without accumulation trains at the initial batch size only (the gradient
      // noise statistics need at least two micro-batches per step to be estimated).
      l.tune = false;
      l.max_batch_size = f.init_batch_size;
    }
    GoodputChoice c;
    if (model.seed) {
      const ProjectedStepTime step(model.perf, *model.seed, n, r);
      c = optimize_batch(
          r, f.init_batch_size, l, [&](double b, int k) { return step(b, k); },
          efficiency_fn(f.grad, f.init_batch_size), [&](double b, int k) { return step.lower_bound(b, k); });
    } else {
      c = f.optimize(n, r, l);
    }
    if (c.goodput > 0.0) {
      g[i] = c.goodput;
      a[i] = c.batch.local_batch;
      s[i] = c.batch.accumulation_steps;
    } else {
      g[i] = 0.0;
      a[i] = fallback_atomic;
      s[i] = 0;
    }
  });
  return {goodput, atomic, steps};
}

/// Observations from AdaptDL's fit arguments: accum_step_time is the compute time of a micro-step, optim_step_time
/// the whole step (compute + synchronisation), so sync = optim - accum.
std::vector<PerfObservation> observations(const char* function, Array nodes, Array replicas, Array atomic,
                                          Array accum_time, Array optim_time) {
  const Inputs in(function, {{"num_nodes", std::move(nodes)},
                             {"num_replicas", std::move(replicas)},
                             {"atomic_bsz", std::move(atomic)},
                             {"accum_step_time", std::move(accum_time)},
                             {"optim_step_time", std::move(optim_time)}});
  std::vector<PerfObservation> obs(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    PerfObservation& o = obs[i];
    o.nodes = in.whole(0, i, 1);
    o.replicas = in.whole(1, i, 1);
    if (o.nodes > o.replicas)
      in.fail_message(i, "num_nodes " + std::to_string(o.nodes) + " > num_replicas " + std::to_string(o.replicas));
    o.local_bsz = in.positive(2, i);
    const double accum = in.positive(3, i);
    o.step_time = in.positive(4, i);
    if (accum > o.step_time)
      in.fail_message(i, "accum_step_time " + number(accum) + " > optim_step_time " + number(o.step_time) +
                             " (the compute part of a step cannot exceed the whole step)");
    o.sync_time = o.step_time - accum;
    if (!(o.sync_time < o.step_time))  // accum below the rounding of optim: the compute time would be lost
      in.fail_message(i, "accum_step_time " + number(accum) + " is too small next to optim_step_time " +
                             number(o.step_time) + " to be represented (ratio below 1e-16)");
  }
  if (obs.empty()) throw InvalidArgument(std::string(function) + ": no observations to fit");
  return obs;
}

std::tuple<Perf7, double, int> fit_perf_params(Array nodes, Array replicas, Array atomic, Array accum_time,
                                               Array optim_time, bool log_space, bool multi_start, bool apply_priors,
                                               double fixed_gamma, int max_evaluations) {
  const std::vector<PerfObservation> obs =
      observations("fit_perf_params", std::move(nodes), std::move(replicas), std::move(atomic), std::move(accum_time),
                   std::move(optim_time));
  FitOptions opt;
  opt.log_space = log_space;
  opt.multi_start = multi_start;
  opt.apply_priors = apply_priors;
  if (fixed_gamma != 0.0 && !(fixed_gamma >= 1.0 && fixed_gamma <= 10.0))
    throw InvalidArgument("fit_perf_params: fixed_gamma must be in [1, 10], got " + number(fixed_gamma));
  opt.fixed_gamma = fixed_gamma;
  if (max_evaluations < 1) throw InvalidArgument("fit_perf_params: max_evaluations must be >= 1");
  opt.max_evaluations = max_evaluations;
  FitResult r;
  {
    py::gil_scoped_release release;
    r = fit_perf_params_detailed(obs, opt);
  }
  const PerfParams& p = r.params;
  return {Perf7{p.alpha_c, p.beta_c, p.alpha_n, p.beta_n, p.alpha_r, p.beta_r, p.gamma}, r.objective, r.evaluations};
}

double fit_objective(const Perf7& perf, Array nodes, Array replicas, Array atomic, Array accum_time, Array optim_time) {
  const PerfParams p = to_perf(perf);
  const std::vector<PerfObservation> obs =
      observations("fit_objective", std::move(nodes), std::move(replicas), std::move(atomic), std::move(accum_time),
                   std::move(optim_time));
  return sia::fit_objective(p, obs);
}

// ---- Fits from throughput profiles (what sia_fit_profiles prints, as data) ---------------------------------------
//
// Same procedure as examples/sia_fit_profiles.cpp, and the same split of the rows (sia::sim::split_profile_rows), so
// that the same directory and seed give the same numbers from Python as from the program
// (tests/python/test_goodput_fit.py compares them): the fitted rows' parameters and the RMSLE of the predicted step
// time on the fitted and the held-out rows.

/// RMSLE of predictions against observations; nullopt when there are none.
std::optional<double> rmsle(const std::vector<double>& pred, const std::vector<double>& obs) {
  if (pred.empty()) return std::nullopt;
  double s = 0.0;
  for (std::size_t i = 0; i < pred.size(); ++i) {
    const double e = std::log(pred[i]) - std::log(obs[i]);
    s += e * e;
  }
  return std::sqrt(s / static_cast<double>(pred.size()));
}

PerfObservation to_observation(const sim::ProfileRow& r) {
  return PerfObservation{r.nodes, r.gpus, static_cast<double>(r.local_bsz), r.step_time, r.sync_time};
}

Perf7 to_array(const PerfParams& p) { return {p.alpha_c, p.beta_c, p.alpha_n, p.beta_n, p.alpha_r, p.beta_r, p.gamma}; }

struct ProfileFitOptions {
  std::uint64_t seed = 1;
  double holdout = 0.2;
  FitOptions fit;
};

ProfileFitOptions profile_options(std::uint64_t seed, double holdout, bool log_space, bool multi_start) {
  if (!(holdout >= 0.0 && holdout < 1.0))
    throw InvalidArgument("fit_profiles: holdout must be in [0, 1), got " + number(holdout));
  ProfileFitOptions o;
  o.seed = seed;
  o.holdout = holdout;
  o.fit.log_space = log_space;
  o.fit.multi_start = multi_start;
  return o;
}

/// One (model, GPU type): fit on the seen part, errors on both parts. `stages` > 0: the GPipe model.
py::dict fit_type(const std::string& model, const std::string& gpu_type, std::vector<sim::ProfileRow> rows, int stages,
                  const ProfileFitOptions& opt) {
  if (rows.empty()) throw InvalidArgument("fit_profiles: " + model + "/" + gpu_type + ": no rows");
  const sim::ProfileSplit split = sim::split_profile_rows(std::move(rows), opt.seed, model, gpu_type, opt.holdout);
  const auto seen = split.seen();
  const auto unseen = split.held_out();
  std::vector<double> ps, os, pu, ou;
  py::dict out;
  {
    py::gil_scoped_release release;
    if (stages > 0) {
      std::vector<PipelineObservation> obs;
      for (const auto& r : seen) obs.push_back(sim::pipeline_observation(r, stages));
      const PipelineParams pp = fit_pipeline_params(obs, stages);
      for (const auto* part : {&seen, &unseen})
        for (const auto& r : *part) {
          const PipelineObservation o = sim::pipeline_observation(r, stages);
          (part == &seen ? ps : pu).push_back(pipeline_step_time(pp, o.nodes, o.pipelines, o.micro_bsz));
          (part == &seen ? os : ou).push_back(pipeline_observed_step_time(pp, o));
        }
      py::gil_scoped_acquire acquire;
      out["params"] = to_array(pp.perf);
      out["stages"] = pp.stages;
      out["microbatches"] = pp.microbatches;
    } else {
      std::vector<PerfObservation> obs;
      for (const auto& r : seen) obs.push_back(to_observation(r));
      const PerfParams p = fit_perf_params(obs, opt.fit);
      for (const auto* part : {&seen, &unseen})
        for (const auto& r : *part) {
          (part == &seen ? ps : pu).push_back(optim_time(p, r.nodes, r.gpus, r.local_bsz));
          (part == &seen ? os : ou).push_back(r.step_time);
        }
      py::gil_scoped_acquire acquire;
      out["params"] = to_array(p);
      out["stages"] = py::none();
      out["microbatches"] = py::none();
    }
  }
  out["model"] = model;
  out["gpu_type"] = gpu_type;
  out["rows_seen"] = seen.size();
  out["rows_unseen"] = unseen.size();
  out["rmsle_seen"] = *rmsle(ps, os);
  out["rmsle_unseen"] = rmsle(pu, ou);
  return out;
}

/// The models of an artifact profiles directory (sorted); none is an error, as in sia_fit_profiles.
std::vector<std::string> models_of(const std::string& dir) {
  std::vector<std::string> models = sim::list_models(dir);
  if (models.empty()) throw InvalidArgument(dir + ": no model directories with placements-<type>.csv files");
  return models;
}

/// Every (model, GPU type) of an artifact profiles directory, models and types sorted.
py::list fit_profile_dir(const std::string& dir, std::uint64_t seed, double holdout, bool log_space, bool multi_start) {
  const ProfileFitOptions opt = profile_options(seed, holdout, log_space, multi_start);
  const std::vector<std::string> models = models_of(dir);
  py::list out;
  for (const std::string& model : models) {
    const sim::ModelProfile mp = sim::load_model_profile(dir, model);
    for (const sim::TypeProfile& tp : mp.types) {
      py::dict d =
          fit_type(model, tp.gpu_type, tp.all_rows(), mp.is_pipeline() ? std::max(1, tp.smallest_gpus()) : 0, opt);
      d["init_batch_size"] = mp.init_batch_size() > 0 ? py::object(py::int_(mp.init_batch_size())) : py::none();
      d["max_batch_size"] = mp.max_batch_size() > 0 ? py::object(py::int_(mp.max_batch_size())) : py::none();
      out.append(d);
    }
  }
  return out;
}

/// The paper's Eq. 1 bootstrap errors of a profiles directory (sia_fit_profiles' second table): the model fitted on
/// all rows of `from`, scaled by the ratio of 1-GPU step times of `to`, predicting `to`'s multi-GPU rows.
py::list bootstrap_profile_dir(const std::string& dir, std::uint64_t seed, bool log_space, bool multi_start) {
  const ProfileFitOptions opt = profile_options(seed, 0.2, log_space, multi_start);
  const std::vector<std::string> models = models_of(dir);
  py::list out;
  for (const std::string& model : models) {
    const sim::ModelProfile mp = sim::load_model_profile(dir, model);
    if (mp.is_pipeline()) continue;  // Eq. 1 across types needs the same parallelism on both (stages differ)
    std::vector<PerfParams> full(mp.types.size());
    {
      py::gil_scoped_release release;
      for (std::size_t t = 0; t < mp.types.size(); ++t) {
        std::vector<sim::ProfileRow> rows = mp.types[t].all_rows();
        // The program fits the rows in their shuffled order: same order, same rounding, same parameters.
        sim::shuffle_profile_rows(rows, opt.seed, model, mp.types[t].gpu_type);
        std::vector<PerfObservation> obs;
        for (const auto& r : rows) obs.push_back(to_observation(r));
        full[t] = fit_perf_params(obs, opt.fit);
      }
    }
    for (std::size_t from = 0; from < mp.types.size(); ++from)
      for (std::size_t to = 0; to < mp.types.size(); ++to) {
        if (from == to) continue;
        const sim::TypeProfile& dst = mp.types[to];
        std::vector<PerfObservation> one_gpu;
        for (const auto& r : dst.placements)
          if (r.gpus == 1) one_gpu.push_back(to_observation(r));
        if (one_gpu.empty()) continue;
        std::vector<double> pred, obs;
        {
          py::gil_scoped_release release;
          const PerfParams seed_fit = fit_perf_params(one_gpu, opt.fit);
          for (const auto& r : dst.all_rows()) {
            if (r.gpus == 1) continue;
            pred.push_back(projected_step_time(full[from], seed_fit, r.nodes, r.gpus, r.local_bsz, 0));
            obs.push_back(r.step_time);
          }
        }
        if (pred.empty()) continue;
        py::dict d;
        d["model"] = model;
        d["from_type"] = mp.types[from].gpu_type;
        d["to_type"] = dst.gpu_type;
        d["rows"] = pred.size();
        d["rmsle"] = *rmsle(pred, obs);
        out.append(d);
      }
  }
  return out;
}

/// (nodes, gpus) of placement strings ("1244": 4 nodes, 11 GPUs), errors naming the element.
std::pair<std::vector<int>, std::vector<int>> parse_placements(const std::vector<std::string>& placements) {
  std::vector<int> nodes(placements.size()), gpus(placements.size());
  for (std::size_t i = 0; i < placements.size(); ++i)
    sim::parse_placement(placements[i], nodes[i], gpus[i], "fit_profiles: placement[" + std::to_string(i) + "]");
  return {nodes, gpus};
}

/// One (model, GPU type) from the rows `members` (indices into the 1-D columns, in order) of all the rows: errors
/// name the row by its index among all of them.
py::dict fit_profile_rows(const std::string& model, const std::string& gpu_type, Array nodes, Array gpus,
                          Array local_bsz, Array step_time, Array sync_time, const std::vector<std::size_t>& members,
                          int stages, std::uint64_t seed, double holdout, bool log_space, bool multi_start) {
  const ProfileFitOptions opt = profile_options(seed, holdout, log_space, multi_start);
  if (stages < 0) throw InvalidArgument("fit_profiles: pipeline_stages must be >= 1, got " + std::to_string(stages));
  const std::string where =
      model.empty() && gpu_type.empty() ? std::string("fit_profiles") : "fit_profiles (" + model + "/" + gpu_type + ")";
  const Inputs in(where.c_str(), {{"num_nodes", std::move(nodes)},
                                  {"num_replicas", std::move(gpus)},
                                  {"local_bsz", std::move(local_bsz)},
                                  {"step_time", std::move(step_time)},
                                  {"sync_time", std::move(sync_time)}});
  if (in.shape().size() != 1) throw InvalidArgument(where + ": columns must be one-dimensional");
  std::vector<sim::ProfileRow> rows(members.size());
  for (std::size_t j = 0; j < members.size(); ++j) {
    const std::size_t i = members[j];
    if (i >= in.size()) throw InvalidArgument(where + ": row index " + std::to_string(i) + " out of range");
    sim::ProfileRow& r = rows[j];
    r.nodes = in.whole(0, i, 1);
    r.gpus = in.whole(1, i, 1);
    if (r.nodes > r.gpus)
      in.fail_message(i, "num_nodes " + std::to_string(r.nodes) + " > num_replicas " + std::to_string(r.gpus));
    r.local_bsz = in.whole(2, i, 1);
    r.step_time = in.positive(3, i);
    r.sync_time = in.at(4, i);
    if (!std::isfinite(r.sync_time) || r.sync_time < 0.0) in.fail(4, i, "a finite number >= 0");
    if (stages == 0 && !(r.sync_time < r.step_time))
      in.fail(4, i, "below step_time " + number(r.step_time) + " (a data-parallel step includes its synchronisation)");
    if (stages > 0 && r.gpus % stages != 0) in.fail(1, i, "a multiple of pipeline_stages " + std::to_string(stages));
    r.line = i + 1;
  }
  return fit_type(model, gpu_type, std::move(rows), stages, opt);
}

}  // namespace

void bind_goodput(py::module_& m) {
  py::module_ g = m.def_submodule("_goodput", "Vectorised kernels of sia.goodput (arguments already broadcast)");
  g.def("throughput", &throughput, py::arg("perf"), py::arg("seed"), py::arg("num_nodes"), py::arg("num_replicas"),
        py::arg("atomic_bsz"), py::arg("accum_steps"));
  g.def("evaluate", &evaluate, py::arg("perf"), py::arg("seed"), py::arg("grad"), py::arg("init_batch_size"),
        py::arg("num_nodes"), py::arg("num_replicas"), py::arg("atomic_bsz"), py::arg("accum_steps"));
  g.def("efficiency", &efficiency, py::arg("grad"), py::arg("init_batch_size"), py::arg("batch_size"));
  g.def("optimize", &optimize, py::arg("perf"), py::arg("seed"), py::arg("grad"), py::arg("init_batch_size"),
        py::arg("num_nodes"), py::arg("num_replicas"), py::arg("max_batch_size"), py::arg("min_atomic_bsz"),
        py::arg("max_atomic_bsz"), py::arg("accumulation"));
  g.def("fit_perf_params", &fit_perf_params, py::arg("num_nodes"), py::arg("num_replicas"), py::arg("atomic_bsz"),
        py::arg("accum_step_time"), py::arg("optim_step_time"), py::arg("log_space"), py::arg("multi_start"),
        py::arg("apply_priors"), py::arg("fixed_gamma"), py::arg("max_evaluations"));
  g.def("fit_profile_dir", &fit_profile_dir, py::arg("directory"), py::arg("seed"), py::arg("holdout"),
        py::arg("log_space"), py::arg("multi_start"));
  g.def("bootstrap_profile_dir", &bootstrap_profile_dir, py::arg("directory"), py::arg("seed"), py::arg("log_space"),
        py::arg("multi_start"));
  g.def("parse_placements", &parse_placements, py::arg("placements"));
  g.def("fit_profile_rows", &fit_profile_rows, py::arg("model"), py::arg("gpu_type"), py::arg("num_nodes"),
        py::arg("num_replicas"), py::arg("local_bsz"), py::arg("step_time"), py::arg("sync_time"), py::arg("members"),
        py::arg("stages"), py::arg("seed"), py::arg("holdout"), py::arg("log_space"), py::arg("multi_start"));
  g.def("fit_objective", &fit_objective, py::arg("perf"), py::arg("num_nodes"), py::arg("num_replicas"),
        py::arg("atomic_bsz"), py::arg("accum_step_time"), py::arg("optim_step_time"));
}

}  // namespace sia::python
