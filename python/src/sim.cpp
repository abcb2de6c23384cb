// The simulator part of sia._sia (submodule `_sia._sim`): workloads (CSV files, the synthetic generator, Python
// lists of jobs), one simulation of a workload under a policy, and its metrics and per-job records as plain Python
// objects (dicts of NumPy columns). The Pythonic face -- keyword arguments, dataclasses, pandas -- is
// python/sia/sim.py; this file only converts and checks, so that every error is the C++ library's own message.
//
// Results are plain dicts rather than bound C++ classes because a sweep ships them between Dask processes:
// dicts of NumPy arrays pickle without any help from the extension.
#include <sia/error.hpp>
#include <sia/job_kind.hpp>
#include <sia/sim/catalogue.hpp>
#include <sia/sim/cluster.hpp>
#include <sia/sim/limits.hpp>
#include <sia/sim/metrics.hpp>
#include <sia/sim/policy.hpp>
#include <sia/sim/runner.hpp>
#include <sia/sim/simulator.hpp>
#include <sia/sim/tuned_jobs.hpp>
#include <sia/sim/workload.hpp>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "bindings.hpp"

namespace py = pybind11;

namespace sia::python {

namespace {

using sim::Workload;
using sim::WorkloadJob;

// One job as Python sees it: (name, time, application, num_replicas, batch_size, category, pipeline_sizes).
using JobTuple = std::tuple<std::string, double, std::string, long long, long long, std::string,
                            std::vector<std::pair<std::string, int>>>;

JobTuple to_tuple(const WorkloadJob& j) {
  return {j.name,          j.time, j.application, j.num_replicas, j.batch_size, std::string(to_string(j.category)),
          j.pipeline_sizes};
}

// A workload from Python's jobs, checked as parse_workload_csv checks a file, but naming `jobs[i].field`.
Workload workload_from_jobs(const std::string& name, const std::vector<JobTuple>& jobs) {
  Workload w;
  w.name = name;
  w.source = name;
  std::unordered_set<std::string> names;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto& [jname, time, app, replicas, batch, category, pipes] = jobs[i];
    const auto fail = [&, idx = i](const std::string& field, const std::string& what) {
      throw InvalidArgument("workload '" + name + "': jobs[" + std::to_string(idx) + "]." + field + ": " + what);
    };
    WorkloadJob j;
    j.line = static_cast<int>(i);
    j.name = jname;
    if (j.name.empty()) fail("name", "empty job name");
    if (!names.insert(j.name).second) fail("name", "duplicate job name '" + j.name + "'");
    if (!std::isfinite(time) || time < 0)
      fail("time", "submission time must be finite and >= 0, got " + std::to_string(time));
    if (!w.jobs.empty() && time < w.jobs.back().time)
      fail("time", "submission times are not sorted (" + std::to_string(time) + " after " +
                       std::to_string(w.jobs.back().time) + ")");
    j.time = time;
    j.application = app;
    if (j.application.empty()) fail("application", "empty application");
    if (replicas < 1 || replicas > (1 << 20))
      fail("num_replicas", "must be in [1, 1048576], got " + std::to_string(replicas));
    j.num_replicas = static_cast<int>(replicas);
    if (batch < 1 || batch > 1'000'000'000'000LL)
      fail("batch_size", "must be in [1, 1e12], got " + std::to_string(batch));
    j.batch_size = batch;
    const auto kind =
        category.empty() || category == "None" ? std::optional<JobKind>(JobKind::adaptive) : parse_job_kind(category);
    if (!kind) fail("category", "unknown category '" + category + "' (expected " + std::string(job_kind_names) + ")");
    j.category = *kind;
    if (!pipes.empty() && j.category != JobKind::hybrid)
      fail("pipeline_size", "given for a job whose category is not hybrid");
    for (std::size_t a = 0; a < pipes.size(); ++a) {
      if (pipes[a].second < 1 || pipes[a].second > 4096)
        fail("pipeline_size", "GPUs per pipeline must be in [1, 4096], got " + std::to_string(pipes[a].second));
      if (pipes[a].first.empty() && pipes.size() > 1)
        fail("pipeline_size", "a size for every type ('') cannot be combined with sizes per type");
      for (std::size_t b = 0; b < a; ++b)
        if (pipes[b].first == pipes[a].first) fail("pipeline_size", "type '" + pipes[a].first + "' given twice");
    }
    j.pipeline_sizes = pipes;
    w.jobs.push_back(std::move(j));
  }
  return w;
}

template <class T>
py::array_t<T> column(const std::vector<T>& v) {
  py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
  auto m = a.template mutable_unchecked<1>();
  for (std::size_t i = 0; i < v.size(); ++i) m(static_cast<py::ssize_t>(i)) = v[i];
  return a;
}

// The fields of sia_simulate --json's rows (sim::for_each_metric, the one list of them), with their C++ types.
py::dict metrics_dict(const sim::RunMetrics& m, sim::MetricsRow row) {
  py::dict d;
  sim::for_each_metric(m, row, [&](const char* name, const auto& value) { d[name] = value; });
  return d;
}

py::dict jobs_dict(const std::vector<sim::JobRecord>& jobs, std::size_t num_types) {
  const std::size_t n = jobs.size();
  std::vector<std::string> name(n), app(n), category(n);
  std::vector<double> submission(n), completion(n), jct(n), gpu_hours(n), contention(n), ftf(n);
  std::vector<std::int64_t> restarts(n), epochs(n);
  py::array_t<double> by_type({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(num_types)});
  auto bt = by_type.mutable_unchecked<2>();
  for (std::size_t i = 0; i < n; ++i) {
    const auto& j = jobs[i];
    name[i] = j.name;
    app[i] = j.application;
    category[i] = std::string(to_string(j.category));
    submission[i] = j.submission_time;
    completion[i] = j.completion_time ? *j.completion_time : std::nan("");
    jct[i] = j.completion_time ? j.jct() : std::nan("");
    restarts[i] = j.restarts;
    gpu_hours[i] = j.gpu_hours;
    contention[i] = j.contention_avg;
    ftf[i] = j.ftf;
    epochs[i] = j.epochs;
    for (std::size_t t = 0; t < num_types; ++t)
      bt(static_cast<py::ssize_t>(i), static_cast<py::ssize_t>(t)) =
          t < j.gpu_hours_by_type.size() ? j.gpu_hours_by_type[t] : 0.0;
  }
  py::dict d;
  d["name"] = name;
  d["application"] = app;
  d["category"] = category;
  d["submission_time"] = column(submission);
  d["completion_time"] = column(completion);
  d["jct"] = column(jct);
  d["restarts"] = column(restarts);
  d["gpu_hours"] = column(gpu_hours);
  d["contention_avg"] = column(contention);
  d["ftf"] = column(ftf);
  d["epochs"] = column(epochs);
  d["gpu_hours_by_type"] = by_type;
  return d;
}

py::dict rounds_dict(const sim::SimResult& r, const sim::SimCluster& cluster, bool keep) {
  const std::size_t n = r.rounds.size();
  std::vector<double> time(n), policy_ms(n);
  std::vector<std::int64_t> active(n), queued(n);
  py::list allocations;
  for (std::size_t i = 0; i < n; ++i) {
    time[i] = r.rounds[i].time;
    active[i] = r.rounds[i].active;
    queued[i] = r.rounds[i].queued;
    policy_ms[i] = r.rounds[i].policy_ms;
    if (keep) {
      py::list round;
      for (const auto& a : r.rounds[i].allocations)
        round.append(py::make_tuple(a.job,
                                    a.type >= 0 && static_cast<std::size_t>(a.type) < cluster.types.size()
                                        ? py::str(cluster.types[static_cast<std::size_t>(a.type)].name)
                                        : py::str(""),
                                    a.nodes, a.gpus, a.batch));
      allocations.append(std::move(round));
    }
  }
  py::dict d;
  d["time"] = column(time);
  d["active"] = column(active);
  d["queued"] = column(queued);
  d["policy_ms"] = column(policy_ms);
  if (keep) d["allocations"] = allocations;
  return d;
}

// Everything one simulation needs besides the workload (keyword arguments of sia.simulate, already converted).
struct RunArgs {
  std::string policy = "sia";                         // sia.simulate: its one policy
  std::map<std::string, std::string> policy_options;  // ... and its options
  std::string cluster = "paper-heterogeneous";
  int scale = 1;
  std::string profiles;  // empty: the built-in catalogue
  std::string interpolation = "2d";
  double interval_s = 0.0;  // 0: the policy's default
  double horizon_s = sim::kDefaultHorizonS;
  bool truncate = false;
  std::string force_category;
  bool tuned_jobs = false;
  bool keep_rounds = false;
  bool ftf = true;
  int threads = 0;
  double time_limit_s = 0.0;  // wall time; 0: none
  py::object progress = py::none();
  double progress_period_s = 1.0;
};

// The common keyword arguments, as sia/sim.py passes them (its names; a missing one keeps the default).
RunArgs run_args(const py::dict& args) {
  RunArgs a;
  for (const auto& [key, value] : args) {
    const auto k = key.cast<std::string>();
    if (k == "cluster")
      a.cluster = value.cast<std::string>();
    else if (k == "scale")
      a.scale = value.cast<int>();
    else if (k == "profiles")
      a.profiles = value.cast<std::string>();
    else if (k == "interpolation")
      a.interpolation = value.cast<std::string>();
    else if (k == "interval_s")
      a.interval_s = value.cast<double>();
    else if (k == "horizon_s")
      a.horizon_s = value.cast<double>();
    else if (k == "truncate")
      a.truncate = value.cast<bool>();
    else if (k == "force_category")
      a.force_category = value.cast<std::string>();
    else if (k == "tuned_jobs")
      a.tuned_jobs = value.cast<bool>();
    else if (k == "keep_rounds")
      a.keep_rounds = value.cast<bool>();
    else if (k == "ftf")
      a.ftf = value.cast<bool>();
    else if (k == "threads")
      a.threads = value.cast<int>();
    else if (k == "time_limit_s")
      a.time_limit_s = value.cast<double>();
    else if (k == "progress")
      a.progress = py::reinterpret_borrow<py::object>(value);
    else if (k == "progress_period_s")
      a.progress_period_s = value.cast<double>();
    else
      throw InvalidArgument("simulation argument '" + k + "': unknown");
  }
  return a;
}

// Runs every (policy, workload) pair of a batch on `runner_threads` threads (sim/runner.hpp: the same results for any
// count), results in policy-major order. Python keeps a hand on it: Ctrl-C stops it (every 50 ms of wall time one
// simulation takes the GIL back for a moment to let Python look at its signals), so does `time_limit_s`, and
// `progress` is called with the runner's progress. A Python exception (KeyboardInterrupt, one raised by `progress`)
// stops the batch and is raised instead of the cancellation.
struct Batch {
  std::shared_ptr<const sim::SimCluster> cluster;
  std::vector<sim::SimResult> results;
};

Batch run_batch(const std::vector<Workload>& inputs, const std::vector<std::string>& policies,
                const std::map<std::string, std::map<std::string, std::string>>& policy_options, const RunArgs& a,
                int runner_threads) {
  if (a.scale < 1 || a.scale > 4096)
    throw InvalidArgument("scale: must be in [1, 4096], got " + std::to_string(a.scale));
  if (a.threads < 0 || a.threads > 1024)
    throw InvalidArgument("threads: must be in [0, 1024] (0 = all cores), got " + std::to_string(a.threads));
  if (runner_threads < 0 || runner_threads > 1024)
    throw InvalidArgument("parallel: must be in [0, 1024] (0 = all cores), got " + std::to_string(runner_threads));
  if (!(a.horizon_s > 0) || !std::isfinite(a.horizon_s))
    throw InvalidArgument("horizon: must be a finite number of seconds > 0, got " + std::to_string(a.horizon_s));
  if (!(a.time_limit_s >= 0) || !std::isfinite(a.time_limit_s))
    throw InvalidArgument("time_limit: must be a finite number of seconds >= 0 (0 = none), got " +
                          std::to_string(a.time_limit_s));
  if (!(a.progress_period_s >= 0) || !std::isfinite(a.progress_period_s))
    throw InvalidArgument("progress_period: must be a finite number of seconds >= 0, got " +
                          std::to_string(a.progress_period_s));
  if (!a.progress.is_none() && !PyCallable_Check(a.progress.ptr()))
    throw InvalidArgument("progress: must be callable (it receives a dict), got " +
                          std::string(py::str(py::type::of(a.progress).attr("__name__"))));
  if (a.interpolation != "2d" && a.interpolation != "3d")
    throw InvalidArgument("interpolation: expected '2d' or '3d', got '" + a.interpolation + "'");
  if (policies.empty()) throw InvalidArgument("policy: no policy named");
  if (inputs.empty()) throw InvalidArgument("workload: no workload given");
  std::vector<sim::PolicyOptions> options(policies.size());
  for (std::size_t p = 0; p < policies.size(); ++p) {
    if (const auto it = policy_options.find(policies[p]); it != policy_options.end())
      for (const auto& [k, v] : it->second) options[p].set(k, v);
    (void)sim::make_policy(policies[p], options[p]);  // unknown policy or bad option: before any work
  }

  // A cluster is a preset name, a cluster JSON file, or the JSON text itself (sia.simulate(cluster={...})).
  auto cluster = std::make_shared<const sim::SimCluster>(!a.cluster.empty() && a.cluster.front() == '{'
                                                             ? sim::parse_cluster_json(a.cluster, "cluster", a.scale)
                                                             : sim::load_cluster(a.cluster, a.scale));
  std::vector<Workload> workloads = inputs;
  if (a.interval_s != 0) {
    sim::check_interval(a.interval_s, "interval");
    for (const auto& w : workloads) sim::check_run(w, a.interval_s, a.horizon_s, "interval", a.truncate);
  }
  sim::SimOptions so;
  so.interval_s = a.interval_s;
  so.horizon_s = a.horizon_s;
  so.truncate = a.truncate;
  so.keep_round_log = a.keep_rounds;
  so.threads = a.threads;
  if (!a.force_category.empty()) {
    const auto kind = parse_job_kind(a.force_category);
    if (!kind || *kind == JobKind::hybrid)
      throw InvalidArgument("force_category: expected rigid, strong-scaling or adaptive, got '" + a.force_category +
                            "'");
    so.force_category = *kind;
  }
  auto apps = std::make_shared<const sim::ApplicationSet>(
      a.profiles.empty() ? sim::catalogue_applications(*cluster)
                         : sim::load_applications(
                               a.profiles, *cluster, workloads,
                               a.interpolation == "3d" ? sim::Interpolation::delaunay3d : sim::Interpolation::planar));
  for (auto& w : workloads) {
    sim::validate_inputs(*cluster, *apps, w);
    if (a.tuned_jobs) w = sim::retune_workload(w, *apps, *cluster, sim::cluster_tuned_jobs(*cluster));
  }
  std::vector<sim::SimulationSpec> specs;
  for (std::size_t p = 0; p < policies.size(); ++p)
    for (const auto& w : workloads) {
      sim::SimulationSpec spec;
      spec.cluster = cluster;
      spec.apps = apps;
      spec.workload = std::make_shared<const Workload>(w);
      spec.policy = policies[p];
      spec.policy_options = options[p];
      spec.finish_time_fairness = a.ftf;
      spec.options = so;
      specs.push_back(std::move(spec));
    }

  // The callbacks run on the simulating threads: `mutex` orders them (then the GIL, always in that order).
  std::mutex mutex;
  std::atomic<bool> stop{false};
  std::optional<py::error_already_set> python_error;
  bool timed_out = false;
  const auto start = std::chrono::steady_clock::now();
  auto last = start;
  sim::RunnerOptions ro;
  ro.threads = runner_threads;
  ro.cancelled = [&] {
    if (stop) return true;
    const auto now = std::chrono::steady_clock::now();
    std::unique_lock lock(mutex, std::try_to_lock);
    if (!lock.owns_lock()) return false;  // another simulation is looking already
    if (a.time_limit_s > 0 && std::chrono::duration<double>(now - start).count() > a.time_limit_s) {
      timed_out = true;
      stop = true;
      return true;
    }
    if (now - last < std::chrono::milliseconds(50)) return false;
    last = now;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      python_error.emplace();
      stop = true;
    }
    return stop.load();
  };
  if (!a.progress.is_none()) {
    ro.progress_period_s = a.progress_period_s;
    ro.on_progress = [&, now_s = 0.0, last_submission_s = 0.0](const sim::RunnerProgress& p) mutable {
      // The runner's last call has no running simulation (times 0): it keeps the last times seen.
      if (p.simulations_running > 0) {
        now_s = p.min_now_s;
        last_submission_s = p.max_horizon_s;
      }
      std::lock_guard lock(mutex);
      if (stop) return;
      py::gil_scoped_acquire gil;
      py::dict d;
      d["simulations"] = p.simulations;
      d["simulations_done"] = p.simulations_done;
      d["now_s"] = now_s;
      d["last_submission_s"] = last_submission_s;
      d["jobs_total"] = p.jobs_total;
      d["jobs_finished"] = p.jobs_finished;
      d["rounds"] = p.rounds;
      d["wall_s"] = p.wall_s;
      d["eta_s"] = p.eta_s < 0 ? py::object(py::none()) : py::object(py::float_(p.eta_s));
      d["done"] = p.done;
      try {
        a.progress(d);
      } catch (py::error_already_set& e) {
        python_error.emplace(std::move(e));
        stop = true;
      }
    };
  }
  Batch batch;
  batch.cluster = cluster;
  {
    py::gil_scoped_release release;
    try {
      batch.results = sim::run_simulations(specs, ro);
    } catch (const sim::SimulationCancelled&) {
      if (!stop) throw;
    }
  }
  if (python_error) throw std::move(*python_error);
  if (timed_out) {
    std::ostringstream os;
    os << "simulation of " << (specs.size() == 1 ? "'" + workloads.front().name + "'" : "the workloads") << " under '"
       << policies.front() << (policies.size() > 1 ? "', ..." : "'") << " stopped: time_limit of " << a.time_limit_s
       << " s of wall time reached";
    PyErr_SetString(PyExc_TimeoutError, os.str().c_str());
    throw py::error_already_set();
  }
  if (batch.results.size() != specs.size()) throw Error("simulations: results missing");  // not reached
  return batch;
}

py::dict run_dict(const sim::SimResult& r, const sim::SimCluster& cluster, bool keep_rounds) {
  std::vector<std::string> types;
  for (const auto& t : cluster.types) types.push_back(t.name);
  py::dict d;
  d["policy"] = r.policy;
  d["workload"] = r.workload;
  d["interval_s"] = r.interval_s;
  d["wall_s"] = r.wall_s;
  d["gpu_types"] = types;
  d["total_gpus"] = cluster.total_gpus();
  d["metrics"] = metrics_dict(sim::compute_metrics(r), sim::MetricsRow::run);
  d["jobs"] = jobs_dict(r.jobs, types.size());
  d["rounds"] = rounds_dict(r, cluster, keep_rounds);
  return d;
}

py::dict run(const Workload& input, const RunArgs& a) {
  const Batch b = run_batch({input}, {a.policy}, {{a.policy, a.policy_options}}, a, 1);
  return run_dict(b.results.front(), *b.cluster, a.keep_rounds);
}

// Every policy on every workload: per policy its runs and their pooled metrics (sia_simulate's aggregate rows).
py::list run_many(const std::vector<Workload>& inputs, const std::vector<std::string>& policies,
                  const std::map<std::string, std::map<std::string, std::string>>& policy_options, const py::dict& args,
                  int parallel) {
  const RunArgs a = run_args(args);
  const Batch b = run_batch(inputs, policies, policy_options, a, parallel);
  py::list out;
  std::size_t k = 0;
  for (const auto& policy : policies) {
    py::list runs;
    std::vector<const sim::SimResult*> ptrs;
    for (std::size_t w = 0; w < inputs.size(); ++w, ++k) {
      runs.append(run_dict(b.results[k], *b.cluster, a.keep_rounds));
      ptrs.push_back(&b.results[k]);
    }
    sim::RunMetrics agg = sim::aggregate_metrics(ptrs);
    if (inputs.size() == 1) agg.workload = inputs.front().name;
    py::dict aggregate = metrics_dict(agg, sim::MetricsRow::pooled);
    aggregate["workload"] = agg.workload;  // AggregateMetrics (sim.py) extends Metrics, which has a workload
    py::dict d;
    d["policy"] = policy;
    d["runs"] = runs;
    d["aggregate"] = aggregate;
    out.append(std::move(d));
  }
  return out;
}

}  // namespace

void bind_sim(py::module_& m) {
  auto s = m.def_submodule("_sim", "The simulator (wrapped by sia.sim)");

  py::class_<Workload>(s, "Workload", "A workload: a named list of jobs sorted by submission time.")
      .def_readonly("name", &Workload::name)
      .def_readonly("source", &Workload::source)
      .def("__len__", [](const Workload& w) { return w.jobs.size(); })
      .def(
          "jobs",
          [](const Workload& w) {
            std::vector<JobTuple> out;
            for (const auto& j : w.jobs) out.push_back(to_tuple(j));
            return out;
          },
          "The jobs as (name, time, application, num_replicas, batch_size, category, pipeline_sizes) tuples.")
      .def("__repr__",
           [](const Workload& w) {
             std::ostringstream os;
             os << "Workload(name='" << w.name << "', jobs=" << w.jobs.size();
             if (!w.jobs.empty()) os << ", last_submission_s=" << w.jobs.back().time;
             os << ")";
             return os.str();
           })
      .def(py::pickle(
          [](const Workload& w) {
            std::vector<JobTuple> jobs;
            for (const auto& j : w.jobs) jobs.push_back(to_tuple(j));
            return py::make_tuple(w.name, w.source, jobs);
          },
          [](const py::tuple& t) {
            Workload w = workload_from_jobs(t[0].cast<std::string>(), t[2].cast<std::vector<JobTuple>>());
            w.source = t[1].cast<std::string>();
            return w;
          }));

  s.def("load_workloads", &sim::load_workloads, py::arg("path"),
        "The workload CSV at `path`, or every *.csv of a directory (sorted by name).");
  s.def(
      "parse_workload_csv",
      [](const std::string& text, const std::string& source) {
        std::istringstream in(text);
        return sim::parse_workload_csv(in, source);
      },
      py::arg("text"), py::arg("source"), "A workload from CSV text (errors name `source`, line and column).");
  s.def(
      "synthetic_workload",
      [](long long seed, double rate, std::optional<double> hours, std::optional<long long> jobs, double horizon_s) {
        if (hours && jobs) throw InvalidArgument("jobs and hours: give one");
        const double h = jobs ? HUGE_VAL : hours.value_or(8.0);
        sim::check_synthetic(rate, jobs ? std::nullopt : std::optional<double>(h), jobs, horizon_s);
        return sim::synthetic_philly_workload(sim::checked_seed(seed, "seed"), rate, h, jobs.value_or(0));
      },
      py::arg("seed"), py::arg("rate"), py::arg("hours"), py::arg("jobs"), py::arg("horizon_s"),
      "The synthetic Philly-like workload (sim/limits.hpp ranges).");
  s.def("workload_from_jobs", &workload_from_jobs, py::arg("name"), py::arg("jobs"),
        "A workload from (name, time, application, num_replicas, batch_size, category, pipeline_sizes) tuples.");
  s.def(
      "apply_kind_mix",
      [](const Workload& w, const std::string& mix, long long seed) {
        Workload out = w;
        sim::apply_kind_mix(out, sim::parse_kind_mix(mix), sim::checked_seed(seed, "mix_seed"));
        return out;
      },
      py::arg("workload"), py::arg("mix"), py::arg("seed"),
      "A copy of `workload` whose data-parallel jobs get the kinds of `mix` ('adaptive=60,rigid=40').");
  s.def(
      "policies",
      [] {
        py::list out;
        for (const auto& n : sim::policy_names()) {
          const auto info = sim::find_policy(n);
          if (!info) continue;
          py::list opts;
          for (const auto& o : info->options) opts.append(py::make_tuple(o.key, o.default_value, o.help));
          out.append(py::make_tuple(info->name, info->description, opts));
        }
        return out;
      },
      "The registered policies as (name, description, [(option, default, help)]).");
  s.def("cluster_presets", &sim::cluster_preset_names, "Names of the built-in clusters.");
  s.def(
      "run",
      [](const Workload& w, const std::string& policy, const std::map<std::string, std::string>& policy_options,
         const py::dict& args) {
        RunArgs a = run_args(args);
        a.policy = policy;
        a.policy_options = policy_options;
        return run(w, a);
      },
      py::arg("workload"), py::arg("policy"), py::arg("policy_options"), py::arg("args"),
      "One simulation (the GIL is released while it runs); a dict of metrics, per-job columns and rounds. `args`: "
      "the common arguments (cluster, scale, profiles, interpolation, interval_s, horizon_s, truncate, "
      "force_category, tuned_jobs, keep_rounds, ftf, threads, time_limit_s, progress, progress_period_s).");
  s.def("run_many", &run_many, py::arg("workloads"), py::arg("policies"), py::arg("policy_options"), py::arg("args"),
        py::arg("parallel"),
        "Every policy on every workload, `parallel` simulations at once (0 = all cores): per policy a dict of its "
        "runs and their pooled metrics.");
  s.attr("DEFAULT_HORIZON_S") = sim::kDefaultHorizonS;
  s.attr("MIN_INTERVAL_S") = sim::kMinIntervalS;
  s.attr("MAX_INTERVAL_S") = sim::kMaxIntervalS;
}

}  // namespace sia::python
