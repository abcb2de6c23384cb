// sia.allocate / sia.allocate_json: the program sia_allocate as a function (sia.next_request /
// sia.next_request_json: its second form, --next-request; sia.JsonSession: its --serve form). The request goes through the same
// library calls as the program (parse_request, run_round, decision_to_json), so the decision is the program's by
// construction, byte for byte apart from the timing fields; the dict form is that same JSON text read back by
// Python's json module (every number is printed so that it reads back as the same double).
#include <sia/error.hpp>
#include <sia/memory.hpp>
#include <sia/milp/factory.hpp>
#include <sia/request.hpp>
#include <sia/round.hpp>
#include <sia/round_log.hpp>
#include <sia/round_state_json.hpp>

#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "bindings.hpp"

namespace py = pybind11;

namespace sia::python {
namespace {

// The program's `--time-limit-ms` range (CLI11 check in examples/sia_allocate.cpp).
constexpr long long max_time_limit_ms = 2147483647LL;

std::string backend_list() {
  std::string s;
  for (const auto& n : sia::available_milp_solvers()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// '<text>', or its start and length when long: a value is never echoed in full (as sia_allocate does).
std::string quoted_value(std::string_view text) {
  constexpr std::size_t max_shown = 64;
  if (text.size() <= max_shown) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, max_shown / 2)) + "...' (" + std::to_string(text.size()) + " bytes)";
}

// NumPy scalars and arrays inside a request dict become plain numbers and lists (json.dumps refuses them).
py::object to_builtin(const py::object& value) {
  if (py::hasattr(value, "tolist")) return value.attr("tolist")();
  throw py::type_error("object of type " + py::str(py::type::of(value).attr("__name__")).cast<std::string>() +
                       " is not JSON serializable");
}

// A request or decision as JSON text: str or bytes as given, anything else (a dict) written by json.dumps. NaN or an
// infinity in a dict is written as NaN/Infinity, which the strict parser rejects with its position, as the
// program would reject that text.
std::string json_text(const py::object& document) {
  if (py::isinstance<py::str>(document)) return document.cast<std::string>();
  if (py::isinstance<py::bytes>(document)) return std::string(document.cast<py::bytes>());
  const py::object dumps = py::module_::import("json").attr("dumps");
  return dumps(document, py::arg("default") = py::cpp_function(&to_builtin)).cast<std::string>();
}

// `log=`: a Python callable given each phase's line (sia_allocate --verbose). The round calls its log on its own
// thread, synchronously, and the log must not throw: the GIL is taken for the call, and the callable's first
// exception is kept and raised once the round is over (later events are dropped).
class PythonLog {
 public:
  explicit PythonLog(py::object fn) : fn_(std::move(fn)) {}
  void operator()(const sia::RoundEvent& e) {
    const std::string line = sia::format(e);
    py::gil_scoped_acquire gil;
    if (error_) return;
    try {
      fn_(line);
    } catch (py::error_already_set& err) {
      error_ = std::make_unique<py::error_already_set>(std::move(err));
    }
  }
  // With the GIL held, after the round.
  void rethrow() {
    if (error_) throw std::move(*error_);
  }

 private:
  py::object fn_;
  std::unique_ptr<py::error_already_set> error_;
};

struct AllocateArgs {
  std::optional<std::string> backend;
  std::optional<long long> time_limit_ms;
  std::string source;
  bool pretty = false;
  PythonLog* log = nullptr;
};

// sia.JsonSession: a sia::JsonSession (not thread-safe) and the lock that lets one Python thread at a time
// use it while the GIL is released.
struct Session {
  sia::JsonSession session;
  std::mutex mutex;
};

// Parse, override, run, print: examples/sia_allocate.cpp's steps, in `session` when there is one (what
// sia_allocate --serve does for each line). Runs without the GIL.
std::string run(const std::string& text, const AllocateArgs& args, Session* session) {
  std::unique_lock<std::mutex> lock;
  if (session) lock = std::unique_lock<std::mutex>(session->mutex);
  sia::Request request = session ? session->session.parse(text, args.source) : sia::parse_request(text, args.source);
  if (args.backend) request.options.backend = *args.backend;
  if (args.time_limit_ms) request.options.time_limit = std::chrono::milliseconds(*args.time_limit_ms);
  if (args.log) request.options.log = [log = args.log](const sia::RoundEvent& e) { (*log)(e); };
  sia::RoundResult result;
  try {
    result = session ? session->session.run(request) : sia::run_round(request.cluster, request.jobs, request.options);
  } catch (const sia::InvalidArgument& e) {  // checks only the round can make: named by the source, as the program does
    throw sia::InvalidArgument(args.source + ": " + e.what());
  }
  return sia::decision_to_json(request, result, args.pretty);
}

std::string allocate_text(const py::object& request, const std::optional<std::string>& backend,
                          const std::optional<long long>& time_limit_ms, const std::string& source, bool pretty,
                          const py::object& log, Session* session = nullptr) {
  // The keyword checks of the program's command line, with its messages (the option named without "--").
  if (backend && !sia::has_milp_solver(*backend))
    throw sia::InvalidArgument("backend: unknown MILP backend " + quoted_value(*backend) +
                               " (available: " + backend_list() + ", default)");
  if (time_limit_ms && (*time_limit_ms < 0 || *time_limit_ms > max_time_limit_ms))
    throw sia::InvalidArgument("time_limit_ms: must be in [0, " + std::to_string(max_time_limit_ms) + "], got " +
                               std::to_string(*time_limit_ms));
  if (!log.is_none() && PyCallable_Check(log.ptr()) == 0) throw py::type_error("log: must be callable or None");
  const std::string text = json_text(request);
  std::optional<PythonLog> python_log;
  if (!log.is_none()) python_log.emplace(log);
  const AllocateArgs args{backend, time_limit_ms, source, pretty, python_log ? &*python_log : nullptr};
  std::string decision;
  {
    py::gil_scoped_release release;  // the round may take seconds: other Python threads run meanwhile
    decision = run(text, args, session);
  }
  if (python_log) python_log->rethrow();
  return decision;
}

constexpr const char* allocate_doc = R"doc(One Sia round: the ``sia_allocate`` program as a function.

``request`` is a ``sia_allocate`` request (examples/requests/README.md): a dict (NumPy numbers and arrays
allowed) or JSON text (str or bytes). Returns the decision as a dict, the same as the program prints for the
same request and options (docs/decision.md), ``solve_ms`` and ``total_ms`` aside. A round that could not be
solved (``status`` ``"error"`` or ``"infeasible"``, the program's exit status 3) is still returned: look at
``status``.

Keyword arguments, as the program's options:
  backend        MILP backend overriding ``policy.backend`` (``sia.available_backends()`` or ``"default"``)
  time_limit_ms  solver time limit in ms overriding ``policy.time_limit_ms`` (0 to 2147483647)
  source         name of the request in error messages (the program uses the file name)
  log            callable given one line per phase of the round (timings, sizes, backend status), the lines
                 ``sia_allocate --verbose`` prints; an exception it raises is raised after the round

Raises ValueError for a rejected request, with the program's message naming the source, line, column, field
and value (e.g. ``request:1:90: jobs[0].min_gpus: must be >= 1, got 0``); RuntimeError when no backend could
run. The GIL is released while the round runs.)doc";

constexpr const char* session_doc = R"doc(Rounds one after another: ``sia_allocate --serve`` as an object.

``allocate(request)`` takes and returns what ``sia.allocate`` does, with the same keyword arguments and
errors, and decides what ``sia.allocate`` decides for the same request, bit for bit (``solve_ms`` and
``total_ms`` aside). What differs is what the session keeps from one request to the next: a job whose
``goodput`` table (or ``model``) is the same as in the previous request keeps its model object, and a
request carrying the previous decision's ``warm_start`` (``sia.next_request`` writes it) gets what the
previous round built for each job, so a round rebuilds only the jobs that changed. A rejected request
raises and leaves the session as it was.

One round at a time: calls from several threads wait for each other (the GIL is released while a round
runs).)doc";

// sia_allocate REQUEST --next-request DECISION --elapsed S: the same library call (round_state_json.hpp).
std::string next_request_text(const py::object& request, const py::object& decision, double elapsed_s,
                              const std::string& request_source, const std::string& decision_source, bool pretty) {
  const std::string request_json = json_text(request);
  const std::string decision_json = json_text(decision);
  sia::NextRequestOptions o;
  o.request_source = request_source;
  o.decision_source = decision_source;
  o.pretty = pretty;
  py::gil_scoped_release release;
  return sia::next_request_json(request_json, decision_json, elapsed_s, o);
}

constexpr const char* next_request_doc =
    R"doc(The request of the next round: ``sia_allocate REQUEST --next-request DECISION --elapsed S``.

``request`` and ``decision`` (dicts or JSON text) are a request and the decision ``allocate`` returned for it;
``elapsed_s`` the seconds until the next round. Returns the request with every job's ``current``, ``age_s``,
``restarts`` and ``max_gpus_ever`` advanced by the decision (docs/round-state.md) and the decision's
``warm_start``, as a dict; everything else is kept as written. Raises ValueError naming the source
(``request_source``, ``decision_source``) and the field, as the program does.)doc";

}  // namespace

void bind_allocate(py::module_& m) {
  m.def(
      "allocate_json",
      [](const py::object& request, const std::optional<std::string>& backend,
         const std::optional<long long>& time_limit_ms, const std::string& source, bool pretty,
         const py::object& log) { return allocate_text(request, backend, time_limit_ms, source, pretty, log); },
      py::arg("request"), py::kw_only(), py::arg("backend") = py::none(), py::arg("time_limit_ms") = py::none(),
      py::arg("source") = "request", py::arg("pretty") = false, py::arg("log") = py::none(),
      "Like allocate(), but returns the decision as the JSON text sia_allocate prints (``pretty``: indented, as "
      "``--pretty``), without the final newline.");
  m.def(
      "allocate",
      [](const py::object& request, const std::optional<std::string>& backend,
         const std::optional<long long>& time_limit_ms, const std::string& source, const py::object& log) {
        const std::string decision = allocate_text(request, backend, time_limit_ms, source, false, log);
        return py::module_::import("json").attr("loads")(decision);
      },
      py::arg("request"), py::kw_only(), py::arg("backend") = py::none(), py::arg("time_limit_ms") = py::none(),
      py::arg("source") = "request", py::arg("log") = py::none(), allocate_doc);
  m.def(
      "next_request_json",
      [](const py::object& request, const py::object& decision, double elapsed_s, const std::string& request_source,
         const std::string& decision_source, bool pretty) {
        return next_request_text(request, decision, elapsed_s, request_source, decision_source, pretty);
      },
      py::arg("request"), py::arg("decision"), py::arg("elapsed_s"), py::kw_only(),
      py::arg("request_source") = "request", py::arg("decision_source") = "decision", py::arg("pretty") = false,
      "Like next_request(), but returns the JSON text sia_allocate --next-request prints, without the final newline.");
  m.def(
      "next_request",
      [](const py::object& request, const py::object& decision, double elapsed_s, const std::string& request_source,
         const std::string& decision_source) {
        const std::string next =
            next_request_text(request, decision, elapsed_s, request_source, decision_source, false);
        return py::module_::import("json").attr("loads")(next);
      },
      py::arg("request"), py::arg("decision"), py::arg("elapsed_s"), py::kw_only(),
      py::arg("request_source") = "request", py::arg("decision_source") = "decision", next_request_doc);
  py::class_<Session>(m, "JsonSession", session_doc)
      .def(py::init<>())
      .def(
          "allocate",
          [](Session& self, const py::object& request, const std::optional<std::string>& backend,
             const std::optional<long long>& time_limit_ms, const std::string& source, const py::object& log) {
            const std::string decision = allocate_text(request, backend, time_limit_ms, source, false, log, &self);
            return py::module_::import("json").attr("loads")(decision);
          },
          py::arg("request"), py::kw_only(), py::arg("backend") = py::none(), py::arg("time_limit_ms") = py::none(),
          py::arg("source") = "request", py::arg("log") = py::none(),
          "sia.allocate() in this session: the decision as a dict.")
      .def(
          "allocate_json",
          [](Session& self, const py::object& request, const std::optional<std::string>& backend,
             const std::optional<long long>& time_limit_ms, const std::string& source, bool pretty,
             const py::object& log) {
            return allocate_text(request, backend, time_limit_ms, source, pretty, log, &self);
          },
          py::arg("request"), py::kw_only(), py::arg("backend") = py::none(), py::arg("time_limit_ms") = py::none(),
          py::arg("source") = "request", py::arg("pretty") = false, py::arg("log") = py::none(),
          "sia.allocate_json() in this session: the decision as JSON text.")
      .def(
          "clear",
          [](Session& self) {
            py::gil_scoped_release release;  // (a round of another thread may hold the session)
            const std::lock_guard<std::mutex> lock(self.mutex);
            self.session.clear();
          },
          "Forgets the previous request and round: the next request builds every job anew.");
  m.def(
      "retain_freed_memory",
      [](std::size_t keep_bytes) {
        const sia::MemoryPolicy p = sia::retain_freed_memory(keep_bytes);
        py::dict d;
        d["applied"] = p.applied;
        d["keep_bytes"] = p.keep_bytes;
        d["mmap_threshold"] = p.mmap_threshold;
        d["allocator"] = p.allocator;
        d["note"] = p.note;
        return d;
      },
      py::arg("keep_bytes") = sia::default_kept_memory,
      "Keeps up to keep_bytes of freed memory in the process for the next round (glibc's malloc thresholds, or "
      "jemalloc's decay times when it is the process's malloc, e.g. preloaded; process-wide, so never applied by "
      "sia itself): a long run of rounds, e.g. a JsonSession's, then takes no pages back from the system. Returns "
      "{applied, keep_bytes, mmap_threshold, allocator, note}.");
  m.def("available_backends", &sia::available_milp_solvers,
        "Names of the MILP backends compiled into this build, the default (native) first.");
}

}  // namespace sia::python
