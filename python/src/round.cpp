// The round and the round state for Python (python/sia/round.py is the Pythonic face). The Python layer hands
// plain values (tuples, lists, dicts, str, int, float) to the functions here: `_round_run` builds sia's
// ClusterSpec, JobSpecs and RoundOptions from them, runs sia::run_round with the GIL released, and answers
// with plain values again; `_round_state_of`, `_apply_round_state` and `_advance_round_state` call the one
// C++ round-state implementation (round_state.hpp), so a Python scheduler and a C++ one cannot disagree.
//
// Goodput forms of a job: a table (entries (type, nodes, gpus, value), sia::GoodputTable as in sia_allocate),
// a Python callable (called back with the GIL held: the only Python code that runs inside a round), or a
// model in the request's JSON form (parsed by the request's own parser, so errors read the same).
#include <sia/error.hpp>
#include <sia/goodput_table.hpp>
#include <sia/job_kind.hpp>
#include <sia/lost_allocations.hpp>
#include <sia/request.hpp>
#include <sia/round.hpp>
#include <sia/round_log.hpp>
#include <sia/round_state.hpp>

#include <pybind11/stl.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "io/model_json.hpp"

namespace py = pybind11;

namespace sia::python {
namespace {

// The C++ result of a round, kept behind the Python RoundResult so that advance_round_state works on exactly
// what the round decided (not on a copy rebuilt from Python values).
struct RoundHandle {
  RoundResult result;
  ClusterSpec cluster;   // for the decision's JSON form (names of types and nodes)
  RoundOptions options;  // its compute_prices and tenants (the rest is not kept: it may hold Python objects)
};

// The previous round's warm start, opaque to Python: handed back through RoundOptions.warm_start.
struct WarmStartHandle {
  std::shared_ptr<const WarmStart> warm;
};

// A Python exception raised inside a goodput callback: kept (released only with the GIL held) and raised again
// once the round has returned, so the caller sees their own exception, not a translated one.
struct CallbackFailure {
  std::optional<py::error_already_set> error;
};

// RoundOptions.stop from Python: one thread runs the round, another calls request_stop().
struct StopHandle {
  std::stop_source source;
};

// Thrown through the round when a callback failed; never reaches Python (replaced by the kept exception).
struct CallbackAbort : std::runtime_error {
  CallbackAbort() : std::runtime_error("goodput callback raised") {}
};

template <class T>
T item(const py::dict& d, const char* key) {
  return d[key].cast<T>();
}

ClusterSpec cluster_from(const py::dict& d) {
  ClusterSpec c;
  for (const auto& t : d["types"].cast<py::list>()) {
    const auto tup = t.cast<py::tuple>();
    c.types.emplace_back(tup[0].cast<std::string>(), tup[1].cast<int>(), tup[2].cast<int>());
  }
  c.reserved = item<std::vector<int>>(d, "reserved");
  c.down = item<std::vector<std::vector<int>>>(d, "down");
  c.node_names = item<std::vector<std::vector<std::string>>>(d, "node_names");
  return c;
}

// (type, gpus, nodes, [(node, gpus, [gpu ids])]) or None.
std::optional<CurrentAllocation> current_from(const py::handle& h) {
  if (h.is_none()) return std::nullopt;
  const auto tup = h.cast<py::tuple>();
  CurrentAllocation a;
  a.type = tup[0].cast<int>();
  a.gpus = tup[1].cast<int>();
  a.nodes = tup[2].cast<int>();
  for (const auto& s : tup[3].cast<py::list>()) {
    const auto share = s.cast<py::tuple>();
    a.placement.push_back(NodeShare{share[0].cast<int>(), share[1].cast<int>(), share[2].cast<std::vector<int>>()});
  }
  return a;
}

py::object current_to(const std::optional<CurrentAllocation>& a) {
  if (!a) return py::none();
  py::list placement;
  for (const auto& s : a->placement) placement.append(py::make_tuple(s.node, s.gpus, s.gpu_ids));
  return py::make_tuple(a->type, a->gpus, a->nodes, placement);
}

JobKind kind_from(const std::string& name, const std::string& job) {
  const auto k = parse_job_kind(name);
  if (!k)
    throw InvalidArgument("job '" + job + "': kind: unknown kind '" + name +
                          "' (adaptive, strong-scaling, rigid or hybrid)");
  return *k;
}

// The goodput of a job given as a Python callable f(gpu_type, nodes, gpus) -> float.
JobSpec::GoodputFn callable_goodput(py::object fn, std::shared_ptr<CallbackFailure> failure) {
  // The callable is shared by every copy of the function; it is released with the GIL held (the JobSpecs
  // holding it are destroyed by _round_run after the round, GIL held).
  auto f = std::make_shared<py::object>(std::move(fn));
  return [f, failure](const GpuTypeSpec& t, const ConfigurationSpec& c) -> double {
    py::gil_scoped_acquire gil;
    if (failure->error) throw CallbackAbort();
    try {
      return (*f)(t.name(), c.nodes, c.gpus).cast<double>();
    } catch (py::error_already_set& e) {
      failure->error.emplace(std::move(e));
    } catch (const py::cast_error&) {
      throw InvalidArgument("goodput callback: did not return a number for " + std::to_string(c.gpus) +
                            " GPUs of type '" + t.name() + "'");
    }
    throw CallbackAbort();
  };
}

// A bad goodput table or model rejects its job alone (or the round, strict), as in sia_allocate: the round asks
// the job's goodput, which reports the error as the job's (field "goodput").
void reject_with(JobSpec& j, std::string what) {
  j.goodput_fn([what = std::move(what)](const GpuTypeSpec&, const ConfigurationSpec&) -> double {
    throw InvalidArgument(what);
  });
}

// A job description from its plain form (python/sia/round.py, Job._plain). `cluster` serves the model form.
JobSpec job_from(const py::dict& d, const ClusterSpec& cluster, std::size_t index, bool with_goodput,
                 const std::shared_ptr<CallbackFailure>& failure) {
  JobSpec j(item<std::string>(d, "id"));
  j.kind(kind_from(item<std::string>(d, "kind"), j.id()));
  j.min_gpus(item<int>(d, "min_gpus"));
  j.max_gpus(d["max_gpus"].is_none() ? INT_MAX : item<int>(d, "max_gpus"));
  j.preemptible(item<bool>(d, "preemptible"));
  j.age_s(item<double>(d, "age_s"));
  j.restarts(item<int>(d, "restarts"));
  j.restart_cost_s(item<double>(d, "restart_cost_s"));
  j.pipeline_size(item<int>(d, "pipeline_size"));
  j.pipeline_sizes(item<std::vector<int>>(d, "pipeline_sizes"));
  j.max_pipelines_ever(item<std::optional<int>>(d, "max_pipelines_ever"));
  j.max_gpus_ever(item<std::optional<int>>(d, "max_gpus_ever"));
  j.weight(item<double>(d, "weight"));
  j.tenant(item<std::string>(d, "tenant"));
  j.current(current_from(d["current"]));
  if (!with_goodput) return j;

  if (!d["table"].is_none()) {
    try {
      GoodputTable table;
      for (const auto& e : d["table"].cast<py::list>()) {
        const auto entry = e.cast<py::tuple>();
        table.set(entry[0].cast<std::string>(), entry[1].cast<int>(), entry[2].cast<int>(), entry[3].cast<double>());
      }
      j.goodput_model(std::move(table));
    } catch (const InvalidArgument& e) {
      reject_with(j, e.what());
    }
  } else if (!d["callable"].is_none()) {
    j.goodput_fn(callable_goodput(d["callable"], failure));
  } else if (!d["model"].is_none()) {
    const std::string path = "jobs[" + std::to_string(index) + "].model";
    try {
      nlohmann::json model;
      try {
        model = nlohmann::json::parse(item<std::string>(d, "model"));
      } catch (const nlohmann::json::exception& e) {
        throw InvalidArgument(path + ": not JSON: " + e.what());
      }
      detail::apply_model_json(j, model, cluster, path);
    } catch (const InvalidArgument& e) {
      reject_with(j, e.what());
    }
  }
  return j;
}

std::vector<JobSpec> jobs_from(const py::list& jobs, const ClusterSpec& cluster, bool with_goodput,
                               const std::shared_ptr<CallbackFailure>& failure) {
  std::vector<JobSpec> out;
  out.reserve(jobs.size());
  std::size_t i = 0;
  for (const auto& j : jobs) out.push_back(job_from(j.cast<py::dict>(), cluster, i++, with_goodput, failure));
  return out;
}

// RoundOptions.log: each event as a dict to a Python callable, with the GIL held. The log must not throw (the
// round is not written for it): a Python exception is kept and raised once the round has returned.
RoundLog log_to(py::object fn, std::shared_ptr<CallbackFailure> failure) {
  auto f = std::make_shared<py::object>(std::move(fn));
  return [f, failure](const RoundEvent& e) noexcept {
    py::gil_scoped_acquire gil;
    if (failure->error) return;
    try {
      py::dict d;
      d["phase"] = std::string(to_string(e.phase));
      d["elapsed_ms"] = e.elapsed_ms;
      d["phase_ms"] = e.phase_ms;
      const auto count = [](std::ptrdiff_t v) { return v < 0 ? py::object(py::none()) : py::object(py::int_(v)); };
      const auto number = [](double v) { return std::isnan(v) ? py::object(py::none()) : py::object(py::float_(v)); };
      d["jobs"] = count(e.jobs);
      d["configurations"] = count(e.configurations);
      d["candidates"] = count(e.candidates);
      d["unevaluated"] = count(e.unevaluated);
      d["backend"] = std::string(e.backend);
      d["status"] = std::string(e.status);
      d["nodes"] = e.nodes < 0 ? py::object(py::none()) : py::object(py::int_(e.nodes));
      d["objective"] = number(e.objective);
      d["best_bound"] = number(e.best_bound);
      d["gap"] = number(e.gap);
      d["allocated"] = count(e.allocated);
      d["evicted"] = count(e.evicted);
      d["message"] = std::string(e.message);
      d["line"] = format(e);
      (*f)(d);
    } catch (py::error_already_set& err) {
      failure->error.emplace(std::move(err));
    } catch (...) {  // a conversion failure: nothing to tell the round
    }
  };
}

RoundOptions options_from(const py::dict& d, const std::shared_ptr<CallbackFailure>& failure) {
  RoundOptions o;
  o.p = item<double>(d, "p");
  o.lambda = item<double>(d, "lambda");
  o.backend = item<std::string>(d, "backend");
  if (d["time_limit_ms"].is_none()) {
    o.time_limit.reset();
  } else {
    const double ms = item<double>(d, "time_limit_ms");
    if (!std::isfinite(ms) || ms < 0)
      throw InvalidArgument("RoundOptions.time_limit_ms: must be finite and >= 0 (None = no limit), got " +
                            std::to_string(ms));
    o.time_limit = std::chrono::milliseconds(static_cast<long long>(std::llround(ms)));
  }
  o.relative_gap = item<double>(d, "relative_gap");
  o.place = item<bool>(d, "place");
  o.round_utilities = item<bool>(d, "round_utilities");
  o.compute_prices = item<bool>(d, "compute_prices");
  if (!d["warm_start"].is_none()) o.warm_start = d["warm_start"].cast<const WarmStartHandle&>().warm;
  o.threads = item<int>(d, "threads");
  o.strict = item<bool>(d, "strict");
  if (!d["stop"].is_none()) o.stop = d["stop"].cast<const StopHandle&>().source.get_token();
  if (!d["log"].is_none()) o.log = log_to(d["log"], failure);
  for (const auto& t : d["tenants"].cast<py::list>()) {
    const auto tup = t.cast<py::tuple>();
    TenantSpec s;
    s.name = tup[0].cast<std::string>();
    s.max_gpus = tup[1].cast<std::optional<int>>();
    s.max_gpus_per_type = tup[2].cast<std::vector<int>>();
    s.guaranteed_gpus = tup[3].cast<int>();
    o.tenants.push_back(std::move(s));
  }
  return o;
}

py::dict decision_to(const JobDecision& d) {
  py::dict o;
  o["job"] = d.job;
  if (d.config) {
    o["type"] = d.config->type;
    o["nodes"] = d.config->nodes;
    o["config_gpus"] = d.config->gpus;
  } else {
    o["type"] = py::none();
    o["nodes"] = 0;
    o["config_gpus"] = 0;
  }
  o["gpus"] = d.gpus;
  o["batch"] =
      d.batch ? py::object(py::make_tuple(d.batch->global_batch, d.batch->local_batch, d.batch->accumulation_steps))
              : py::none();
  py::list placement;
  for (const auto& s : d.placement) placement.append(py::make_tuple(s.node, s.gpus, s.gpu_ids));
  o["placement"] = placement;
  o["changed"] = d.changed;
  o["reason"] = std::string(to_string(d.reason));
  o["detail"] = d.detail;
  o["placement_status"] =
      d.placement_status ? py::object(py::str(std::string(to_string(*d.placement_status)))) : py::none();
  return o;
}

py::dict result_to(const RoundResult& r) {
  py::dict o;
  o["status"] = std::string(to_string(r.status));
  o["backend"] = r.backend;
  o["objective"] = r.objective;
  o["best_bound"] = r.best_bound;
  o["solve_ms"] = r.solve_ms;
  o["total_ms"] = r.total_ms;
  py::list decisions;
  for (const auto& d : r.decisions) decisions.append(decision_to(d));
  o["decisions"] = decisions;
  o["gpus_used"] = r.gpus_used;
  o["prices"] = r.prices;
  o["evicted"] = r.evicted;
  o["unmet"] = r.unmet;
  o["preempted"] = r.preempted;
  o["tenant_capped"] = r.tenant_capped;
  o["tenant_gpus"] = r.tenant_gpus;
  py::list rejected;
  for (const auto& x : r.rejected) rejected.append(py::make_tuple(x.job, x.index, x.field, x.reason, x.running));
  o["rejected"] = rejected;
  o["fallback"] = r.fallback;
  o["message"] = r.message;
  o["warm_start"] = r.warm_start ? py::cast(WarmStartHandle{r.warm_start}) : py::none();
  return o;
}

py::tuple state_to(const JobRoundState& s) {
  return py::make_tuple(s.id, current_to(s.current), s.age_s, s.restarts, s.max_gpus_ever, s.max_pipelines_ever);
}

JobRoundState state_from(const py::handle& h) {
  const auto t = h.cast<py::tuple>();
  JobRoundState s;
  s.id = t[0].cast<std::string>();
  s.current = current_from(t[1]);
  s.age_s = t[2].cast<double>();
  s.restarts = t[3].cast<int>();
  s.max_gpus_ever = t[4].cast<int>();
  s.max_pipelines_ever = t[5].cast<int>();
  return s;
}

// One round: (plain cluster, plain jobs, plain options) -> (plain result, handle on the C++ result).
py::tuple run(const py::dict& cluster_d, const py::list& jobs_d, const py::dict& options_d, bool forget_lost) {
  const ClusterSpec cluster = cluster_from(cluster_d);
  auto failure = std::make_shared<CallbackFailure>();
  std::vector<JobSpec> jobs = jobs_from(jobs_d, cluster, true, failure);
  // As sia_allocate's request reader does: a job whose configuration failed nodes took away holds nothing.
  const std::vector<std::string> lost =
      forget_lost ? forget_lost_allocations(cluster, jobs) : std::vector<std::string>{};
  RoundOptions options = options_from(options_d, failure);
  auto handle = std::make_shared<RoundHandle>();
  handle->cluster = cluster;
  handle->options.compute_prices = options.compute_prices;
  handle->options.tenants = options.tenants;
  bool aborted = false;
  {
    py::gil_scoped_release release;
    try {
      handle->result = run_round(cluster, jobs, options);
    } catch (const CallbackAbort&) {
      aborted = true;
    }
  }
  jobs.clear();  // the callables go with the GIL held
  options.log = nullptr;
  if (failure->error) {
    py::error_already_set e = std::move(*failure->error);
    failure->error.reset();
    throw std::move(e);
  }
  if (aborted) throw Error("round: a goodput callback failed");
  py::dict out = result_to(handle->result);
  out["lost"] = lost;
  return py::make_tuple(out, handle);
}

}  // namespace

void bind_round(py::module_& m) {
  py::class_<RoundHandle, std::shared_ptr<RoundHandle>>(m, "_RoundHandle",
                                                        "The C++ result of a round (kept by sia.RoundResult).");
  py::class_<WarmStartHandle>(m, "WarmStart",
                              "What the next round can start from: pass RoundResult.warm_start as "
                              "RoundOptions(warm_start=...). Opaque.")
      .def("__repr__", [](const WarmStartHandle& w) {
        return "<sia.WarmStart: " + std::to_string(w.warm ? w.warm->prices.size() : 0) + " prices, " +
               std::to_string(w.warm ? w.warm->allocations.size() : 0) + " allocations>";
      });

  py::class_<StopHandle>(m, "StopSource",
                         "Stops a running round from another thread: pass it as RoundOptions(stop=...), call "
                         "request_stop(); the round ends as at its time limit (status 'feasible', a valid "
                         "allocation). One StopSource stops every round given it, once requested.")
      .def(py::init<>())
      .def(
          "request_stop", [](StopHandle& h) { return h.source.request_stop(); },
          "Asks the rounds using it to stop; False when a stop was already requested.")
      .def_property_readonly("stop_requested", [](const StopHandle& h) { return h.source.stop_requested(); })
      .def("__repr__", [](const StopHandle& h) {
        return std::string("<sia.StopSource") + (h.source.stop_requested() ? " (stop requested)>" : ">");
      });

  m.def("_round_run", &run, py::arg("cluster"), py::arg("jobs"), py::arg("options"), py::arg("forget_lost"));

  m.def("_decision_json", [](const std::shared_ptr<RoundHandle>& h, bool pretty) {
    if (!h) throw InvalidArgument("RoundResult.to_json: the result is not one sia.run_round returned");
    Request request;
    request.cluster = h->cluster;
    request.options = h->options;
    return decision_to_json(request, h->result, pretty);
  });
  m.def("_round_state_of", [](const py::dict& job) {
    const ClusterSpec none;
    return state_to(round_state_of(job_from(job, none, 0, false, nullptr)));
  });
  m.def("_apply_round_state", [](const py::handle& state, const py::dict& job) {
    const ClusterSpec none;
    JobSpec j = job_from(job, none, 0, false, nullptr);
    apply_round_state(state_from(state), j);
    return py::make_tuple(current_to(j.current()), j.age_s(), j.restarts(), j.max_gpus_ever(), j.max_pipelines_ever());
  });
  m.def("_forget_lost_allocation", [](const py::handle& state, const py::dict& cluster_d) {
    JobRoundState s = state_from(state);
    const bool forgot = forget_lost_allocation(s, cluster_from(cluster_d));
    return py::make_tuple(state_to(s), forgot);
  });
  m.def("_advance_round_state",
        [](const py::list& states_d, const py::list& jobs_d, const std::shared_ptr<RoundHandle>& handle,
           double elapsed_s, const py::dict& next_cluster_d) {
          if (!handle) throw InvalidArgument("advance_round_state: the result is not one sia.run_round returned");
          const ClusterSpec next = cluster_from(next_cluster_d);
          std::vector<JobRoundState> states;
          states.reserve(states_d.size());
          for (const auto& s : states_d) states.push_back(state_from(s));
          const std::vector<JobSpec> jobs = jobs_from(jobs_d, next, false, nullptr);
          const RoundStateChanges c = advance_round_state(states, jobs, handle->result, elapsed_s, next);
          py::list out;
          for (const auto& s : states) out.append(state_to(s));
          py::dict changes;
          changes["started"] = c.started;
          changes["restarted"] = c.restarted;
          changes["stopped"] = c.stopped;
          changes["lost"] = c.lost;
          return py::make_tuple(out, changes);
        });
}

}  // namespace sia::python
