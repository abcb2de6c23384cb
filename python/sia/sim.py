"""The simulator from Python: run a workload under a policy, get its metrics and per-job records.

    import sia
    r = sia.simulate(policy="sia", jobs=40, rate=20, seed=3, p=-0.5)      # synthetic Philly-like workload
    r.metrics.avg_jct_h, r.metrics.makespan_h
    r.jobs.to_pandas()                                                      # one row per job
    r = sia.simulate("workload-1.csv", policy="gavel")                     # an artifact workload file
    r = sia.simulate([{"name": "a", "time": 0, "application": "cifar10",   # a Python list of jobs
                       "num_replicas": 1, "batch_size": 128}], policy="sia")

The C++ simulator does the work (``sia._sia._sim``) with the GIL released; a simulation gives the same numbers as
``sia_simulate`` for the same input (its ``--json`` "runs" entry). Bad parameters raise ``ValueError`` with the C++
message (the ranges of ``include/sia/sim/limits.hpp``): round length in [0.001, 86400] s, synthetic rate in
(0, 1e6] jobs/h, at most 2,000,000 jobs, seeds in [0, 2^63-1].
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from ._sia import _sim

Workload = _sim.Workload

__all__ = [
    "Workload", "Metrics", "AggregateMetrics", "JobRecord", "JobRecords", "Rounds", "SimResult", "PolicyRuns",
    "PolicyInfo", "simulate", "simulate_many", "synthetic_workload", "load_workloads", "workload_from_jobs",
    "policies", "cluster_presets",
]

_JOB_FIELDS = ("name", "time", "application", "num_replicas", "batch_size", "category", "pipeline_sizes")


@dataclass(frozen=True)
class Metrics:
    """Metrics of one run (the fields of ``sia_simulate --json``'s "runs" entries; times in hours)."""

    policy: str
    workload: str
    jobs: int
    completed: int
    avg_jct_h: float
    p99_jct_h: float
    makespan_h: float
    gpu_hours_per_job: float
    restarts_per_job: float
    contention_mean: float
    contention_max: int
    ftf_worst: float
    unfair_fraction: float
    policy_ms_median: float
    policy_ms_p95: float
    rounds: int
    wall_s: float

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class JobRecord:
    """One job's outcome; ``completion_time``/``jct`` are None for a job the horizon left unfinished."""

    name: str
    application: str
    category: str
    submission_time: float
    completion_time: Optional[float]
    jct: Optional[float]
    restarts: int
    gpu_hours: float
    gpu_hours_by_type: dict
    contention_avg: float
    ftf: float
    epochs: int


class JobRecords:
    """Per-job records as NumPy columns (``records["jct"]``), rows (``records[3]``, iteration) or a DataFrame.

    Columns: name, application, category (lists of str); submission_time, completion_time, jct (seconds; NaN when
    unfinished), gpu_hours, contention_avg, ftf (float64); restarts, epochs (int64); gpu_hours_by_type (an
    n x types float64 array, types in ``gpu_types`` order).
    """

    def __init__(self, columns: Mapping[str, Any], gpu_types: Sequence[str]):
        self._c = dict(columns)
        self.gpu_types = list(gpu_types)

    @property
    def columns(self) -> list:
        return list(self._c)

    def __len__(self) -> int:
        return len(self._c["name"])

    def __getitem__(self, key):
        if isinstance(key, str):
            return self._c[key]
        if isinstance(key, slice):
            return [self[i] for i in range(len(self))[key]]
        i = range(len(self))[key]  # IndexError for a bad index, negative indices allowed
        c = self._c

        def opt(v):
            return None if math.isnan(v) else float(v)

        return JobRecord(
            name=c["name"][i], application=c["application"][i], category=c["category"][i],
            submission_time=float(c["submission_time"][i]), completion_time=opt(c["completion_time"][i]),
            jct=opt(c["jct"][i]), restarts=int(c["restarts"][i]), gpu_hours=float(c["gpu_hours"][i]),
            gpu_hours_by_type={t: float(v) for t, v in zip(self.gpu_types, c["gpu_hours_by_type"][i])},
            contention_avg=float(c["contention_avg"][i]), ftf=float(c["ftf"][i]), epochs=int(c["epochs"][i]))

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def to_numpy(self):
        """A NumPy structured array, one record per job (gpu_hours_by_type as one column per type)."""
        import numpy as np

        scalar = [k for k in self._c if k != "gpu_hours_by_type"]
        dtype = []
        for k in scalar:
            v = self._c[k]
            dtype.append((k, object) if isinstance(v, list) else (k, v.dtype))
        dtype += [(f"gpu_hours_{t}", np.float64) for t in self.gpu_types]
        out = np.empty(len(self), dtype=dtype)
        for k in scalar:
            out[k] = self._c[k]
        for t, name in enumerate(self.gpu_types):
            out[f"gpu_hours_{name}"] = self._c["gpu_hours_by_type"][:, t]
        return out

    def to_pandas(self):
        """A pandas DataFrame, one row per job (gpu_hours_by_type as columns ``gpu_hours_<type>``)."""
        import pandas as pd

        data = {k: v for k, v in self._c.items() if k != "gpu_hours_by_type"}
        for t, name in enumerate(self.gpu_types):
            data[f"gpu_hours_{name}"] = self._c["gpu_hours_by_type"][:, t]
        return pd.DataFrame(data)

    def __repr__(self) -> str:
        done = int((~_isnan(self._c["completion_time"])).sum()) if len(self) else 0
        return f"JobRecords({len(self)} jobs, {done} completed, columns={self.columns})"


def _isnan(a):
    import numpy as np

    return np.isnan(a)


@dataclass(frozen=True, repr=False)
class Rounds:
    """Every round: simulated time (s), active and queued jobs, policy runtime (ms); ``allocations`` (one list of
    (job, gpu_type, nodes, gpus, batch) per round) only with ``simulate(keep_rounds=True)``."""

    time: Any
    active: Any
    queued: Any
    policy_ms: Any
    allocations: Optional[list] = None

    def __len__(self) -> int:
        return len(self.time)

    def to_pandas(self):
        import pandas as pd

        return pd.DataFrame({"time": self.time, "active": self.active, "queued": self.queued,
                             "policy_ms": self.policy_ms})

    def __repr__(self) -> str:
        return f"Rounds({len(self)} rounds{', with allocations' if self.allocations is not None else ''})"


@dataclass(frozen=True, repr=False)
class SimResult:
    """Outcome of one simulation: ``metrics`` (Metrics), ``jobs`` (JobRecords), ``rounds`` (Rounds)."""

    policy: str
    workload: str
    interval_s: float
    wall_s: float
    gpu_types: list
    total_gpus: int
    metrics: Metrics
    jobs: JobRecords
    rounds: Rounds

    def to_pandas(self):
        """The per-job records as a DataFrame (``self.jobs.to_pandas()``)."""
        return self.jobs.to_pandas()

    def __repr__(self) -> str:
        m = self.metrics
        return (f"SimResult(policy={self.policy!r}, workload={self.workload!r}, interval_s={self.interval_s:g}, "
                f"jobs={m.jobs}, completed={m.completed}, avg_jct_h={m.avg_jct_h:.4g}, p99_jct_h={m.p99_jct_h:.4g}, "
                f"makespan_h={m.makespan_h:.4g}, gpu_hours_per_job={m.gpu_hours_per_job:.4g}, "
                f"restarts_per_job={m.restarts_per_job:.3g}, rounds={m.rounds}, wall_s={self.wall_s:.3g})")


@dataclass(frozen=True)
class PolicyInfo:
    """A registered policy and its options (``{key: (default, help)}``)."""

    name: str
    description: str
    options: dict = field(default_factory=dict)


def policies() -> dict:
    """The registered policies by name (``sia_simulate --list-policies``)."""
    return {n: PolicyInfo(n, d, {k: (v, h) for k, v, h in opts}) for n, d, opts in _sim.policies()}


_registered_policies = policies  # simulate_many's argument `policies` hides the function there


def cluster_presets() -> list:
    """Names of the built-in clusters (``paper-heterogeneous``, ...)."""
    return list(_sim.cluster_presets())


def synthetic_workload(seed: int = 1, rate: float = 20.0, hours: Optional[float] = None,
                       jobs: Optional[int] = None, horizon: Optional[float] = None) -> Workload:
    """The synthetic Philly-like workload of ``sia_simulate``: Poisson arrivals at ``rate`` jobs/hour for ``hours``
    (8 by default), or until ``jobs`` jobs; the artifact's model mix. Deterministic for a seed."""
    return _sim.synthetic_workload(_int(seed, "seed"), float(rate), None if hours is None else float(hours),
                                   None if jobs is None else _int(jobs, "jobs"),
                                   _sim.DEFAULT_HORIZON_S if horizon is None else float(horizon))


def load_workloads(path) -> list:
    """The workload CSV at ``path`` (``name,time,application,num_replicas,batch_size[,category]``), or every
    ``*.csv`` of a directory, sorted by name."""
    return list(_sim.load_workloads(os.fspath(path)))


def workload_from_jobs(jobs, name: str = "jobs") -> Workload:
    """A workload from a list of jobs: dicts with keys name, time, application, num_replicas, batch_size and
    optionally category (adaptive, strong-scaling, rigid, hybrid) and pipeline_sizes ({gpu_type: gpus} or an int),
    or tuples in that order; a pandas DataFrame with those columns also works."""
    if hasattr(jobs, "to_dict") and not isinstance(jobs, Mapping):
        jobs = jobs.to_dict("records")
    if isinstance(jobs, (str, bytes, Mapping)):
        raise ValueError(f"workload {name!r}: expected a list of jobs, got {type(jobs).__name__}")
    rows = []
    for i, j in enumerate(jobs):
        if isinstance(j, Mapping):
            unknown = set(j) - set(_JOB_FIELDS)
            if unknown:
                raise ValueError(f"workload {name!r}: jobs[{i}]: unknown field(s) {sorted(unknown)} "
                                 f"(fields: {', '.join(_JOB_FIELDS)})")
            missing = [k for k in _JOB_FIELDS[:5] if k not in j]
            if missing:
                raise ValueError(f"workload {name!r}: jobs[{i}]: missing field(s) {missing}")
            v = [j[k] for k in _JOB_FIELDS[:5]] + [j.get("category"), j.get("pipeline_sizes")]
        elif isinstance(j, Sequence) and not isinstance(j, (str, bytes)) and 5 <= len(j) <= 7:
            v = list(j) + [None] * (7 - len(j))
        else:
            raise ValueError(f"workload {name!r}: jobs[{i}]: expected a dict or a tuple "
                             f"({', '.join(_JOB_FIELDS)}), got {j!r}")
        pipes = v[6]
        if pipes is None:
            pipes = []
        elif isinstance(pipes, int):
            pipes = [("", pipes)]
        elif isinstance(pipes, Mapping):
            pipes = list(pipes.items())
        try:
            rows.append((str(v[0]), float(v[1]), str(v[2]), _int(v[3], "num_replicas"),
                         _int(v[4], "batch_size"), "" if v[5] is None else str(v[5]),
                         [(str(t), _int(n, "pipeline_sizes")) for t, n in pipes]))
        except (TypeError, ValueError) as e:
            raise ValueError(f"workload {name!r}: jobs[{i}]: {e}") from None
    return _sim.workload_from_jobs(name, rows)


def _int(v, what: str) -> int:
    if isinstance(v, bool) or not float(v).is_integer():
        raise ValueError(f"{what}: expected an integer, got {v!r}")
    return int(v)


def _option_text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _find_artifact_profiles() -> Optional[Path]:
    """``shared/data/sia-artifact/profiles`` searched upwards from the working directory and this package (as
    ``sia_simulate`` does for ``--workload`` without ``--profiles``)."""
    rel = Path("shared") / "data" / "sia-artifact" / "profiles"
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        for d in [start, *start.parents][:7]:
            for cand in (d / ".." / rel, d / rel):
                if cand.is_dir():
                    return cand.resolve()
    return None


def _resolve_workload(workload, seed, rate, hours, jobs, horizon):
    synthetic_given = any(x is not None for x in (seed, rate, hours, jobs))
    if workload is None:
        return synthetic_workload(1 if seed is None else seed, 20.0 if rate is None else rate, hours, jobs,
                                  horizon), False
    if synthetic_given:
        raise ValueError("seed, rate, hours and jobs shape the synthetic workload: not with workload=")
    if isinstance(workload, Workload):
        return workload, False
    if isinstance(workload, (str, os.PathLike)):
        ws = load_workloads(workload)
        if len(ws) != 1:
            raise ValueError(f"{os.fspath(workload)}: holds {len(ws)} workloads; simulate() runs one "
                             "(sia.load_workloads(path) gives them all)")
        return ws[0], True
    return workload_from_jobs(workload), False


def simulate(workload=None, policy: str = "sia", cluster="paper-heterogeneous", *, seed: Optional[int] = None,
             rate: Optional[float] = None, hours: Optional[float] = None, jobs: Optional[int] = None,
             scale: int = 1, interval: Optional[float] = None, horizon: Optional[float] = None,
             truncate: bool = False, profiles=None, interpolation: str = "2d", mix: Optional[str] = None,
             mix_seed: int = 1, force_category: Optional[str] = None, tuned_jobs: bool = False,
             keep_rounds: bool = False, ftf: bool = True, threads: int = 0, time_limit: Optional[float] = None,
             progress: Optional[Callable[[dict], Any]] = None, progress_period: float = 1.0,
             policy_options: Optional[Mapping[str, Any]] = None, **options) -> SimResult:
    """Simulates one workload under one policy; the arguments are ``sia_simulate``'s options.

    workload: None (the synthetic workload of ``seed`` (1), ``rate`` (20 jobs/h), ``hours`` (8) or ``jobs``), a
        workload CSV path, a :class:`Workload`, or a list of jobs (see :func:`workload_from_jobs`).
    policy: a registered policy (:func:`policies`): sia, gavel, pollux, themis, shockwave, ...
    cluster: a preset (:func:`cluster_presets`), a cluster JSON file, or the cluster as a dict
        ``{"name": ..., "gpu_types": [{"name": "t4", "nodes": 6, "gpus_per_node": 4}, ...]}``; ``scale``
        multiplies its node counts.
    interval: round length in seconds (the policy's default when None); horizon: stop after this many simulated
        seconds (90 days), ``truncate`` to leave out jobs submitted after it.
    profiles: the artifact's profiles directory for the ground truth; None = the built-in catalogue for synthetic
        or listed workloads, and for a CSV path the artifact's profiles found beside the repository (as
        ``sia_simulate --workload``); "builtin" = the catalogue always.
    mix / mix_seed: job kinds, e.g. "adaptive=60,strong-scaling=20,rigid=20"; force_category: every job's kind.
    keep_rounds: keep every round's allocations (``result.rounds.allocations``); ftf: compute finish-time fairness.
    threads: threads of one simulation: its jobs step in parallel and its policy may use them (0 = all cores; a sweep
        gives each simulation its share, 1 when it runs one per thread); the results are the same.
    time_limit: wall-clock seconds after which the simulation stops with TimeoutError (None: no limit).
    progress: called every ``progress_period`` wall seconds (and at the end) with a dict: now_s, last_submission_s,
        jobs_total, jobs_finished, rounds, wall_s, eta_s (None while unknown), done. An exception it raises stops
        the simulation and propagates; so does Ctrl-C (KeyboardInterrupt).
    policy_options / **options: the policy's options (``p=-0.5``, ``lambda_=1.1``, ``backend="glpk"``); a trailing
        underscore is dropped (``lambda`` is a Python keyword); bools become true/false.
    """
    w, from_file = _resolve_workload(workload, seed, rate, hours, jobs, horizon)
    if mix is not None:
        w = _sim.apply_kind_mix(w, str(mix), _int(mix_seed, "mix_seed"))
    opts = {_option_key(k): _option_text(v) for k, v in {**(policy_options or {}), **options}.items()}
    args = _common_args(from_file, cluster, scale, profiles, interpolation, interval, horizon, truncate,
                        force_category, tuned_jobs, keep_rounds, ftf, threads, time_limit, progress, progress_period)
    return _result(_sim.run(w, str(policy), opts, args))


def _option_key(k: str) -> str:
    return k[:-1] if k.endswith("_") else k


def _common_args(from_file, cluster, scale, profiles, interpolation, interval, horizon, truncate, force_category,
                 tuned_jobs, keep_rounds, ftf, threads, time_limit, progress, progress_period) -> dict:
    if profiles is None:
        if from_file:
            found = _find_artifact_profiles()
            if found is None:
                raise ValueError("profiles: not given and ../shared/data/sia-artifact/profiles not found "
                                 "(pass profiles=DIR, or profiles='builtin' for the built-in catalogue)")
            profiles = str(found)
        else:
            profiles = ""
    elif profiles == "builtin":
        profiles = ""
    else:
        profiles = os.fspath(profiles)
    if isinstance(cluster, Mapping):
        import json

        cluster = json.dumps(cluster)
    elif isinstance(cluster, os.PathLike):
        cluster = os.fspath(cluster)
    return {"cluster": str(cluster), "scale": _int(scale, "scale"), "profiles": profiles,
            "interpolation": str(interpolation), "interval_s": 0.0 if interval is None else float(interval),
            "horizon_s": _sim.DEFAULT_HORIZON_S if horizon is None else float(horizon), "truncate": bool(truncate),
            "force_category": "" if force_category is None else str(force_category),
            "tuned_jobs": bool(tuned_jobs), "keep_rounds": bool(keep_rounds), "ftf": bool(ftf),
            "threads": _int(threads, "threads"), "time_limit_s": 0.0 if time_limit is None else float(time_limit),
            "progress": progress, "progress_period_s": float(progress_period)}


def _result(d) -> SimResult:
    r = d["rounds"]
    return SimResult(policy=d["policy"], workload=d["workload"], interval_s=d["interval_s"], wall_s=d["wall_s"],
                     gpu_types=list(d["gpu_types"]), total_gpus=d["total_gpus"], metrics=Metrics(**d["metrics"]),
                     jobs=JobRecords(d["jobs"], d["gpu_types"]),
                     rounds=Rounds(r["time"], r["active"], r["queued"], r["policy_ms"], r.get("allocations")))


@dataclass(frozen=True)
class AggregateMetrics(Metrics):
    """Metrics pooled over a policy's runs (sia_simulate's aggregate rows): the fields of Metrics, plus the
    standard deviation over workloads of the per-workload mean JCT and of the makespan (0 for one workload)."""

    avg_jct_std_h: float = 0.0
    makespan_std_h: float = 0.0


@dataclass(frozen=True, repr=False)
class PolicyRuns:
    """One policy over several workloads: its runs (SimResult, in workload order) and their pooled metrics."""

    policy: str
    runs: list
    aggregate: AggregateMetrics

    def metrics_frame(self):
        """One row per run (its metrics) as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame([r.metrics.to_dict() for r in self.runs])

    def __repr__(self) -> str:
        a = self.aggregate
        return (f"PolicyRuns(policy={self.policy!r}, runs={len(self.runs)}, jobs={a.jobs}, completed={a.completed}, "
                f"avg_jct_h={a.avg_jct_h:.4g} ± {a.avg_jct_std_h:.2g}, makespan_h={a.makespan_h:.4g}, "
                f"gpu_hours_per_job={a.gpu_hours_per_job:.4g})")


def simulate_many(workloads=None, policies=("sia",), cluster="paper-heterogeneous", *, parallel: int = 0,
                  seed: Optional[int] = None, rate: Optional[float] = None, hours: Optional[float] = None,
                  jobs: Optional[int] = None, scale: int = 1, interval: Optional[float] = None,
                  horizon: Optional[float] = None, truncate: bool = False, profiles=None, interpolation: str = "2d",
                  mix: Optional[str] = None, mix_seed: int = 1, force_category: Optional[str] = None,
                  tuned_jobs: bool = False, keep_rounds: bool = False, ftf: bool = True, threads: int = 0,
                  time_limit: Optional[float] = None, progress: Optional[Callable[[dict], Any]] = None,
                  progress_period: float = 1.0, policy_options: Optional[Mapping[str, Mapping[str, Any]]] = None,
                  **options) -> dict:
    """Every policy on every workload, as ``sia_simulate --policy a,b --workload DIR`` does: ``parallel``
    simulations at once on a thread pool in this process (0 = all cores; the results are the same for any count),
    the GIL released. Returns ``{policy: PolicyRuns}`` in the order of ``policies``, each with its runs and their
    pooled metrics (``sia_simulate --json``'s "aggregate" entries).

    workloads: a CSV file or a directory of them, a Workload or a list of Workloads, or None (the synthetic
        workload of seed/rate/hours/jobs). policy_options: ``{policy: {key: value}}``; the other keyword arguments
        are options of every listed policy that declares them (``p=-1`` goes to sia, not to gavel), as
        ``sia_simulate --policy-option key=value``; a key no listed policy declares is a ValueError. The other
        arguments are :func:`simulate`'s.
    """
    if isinstance(policies, str):
        policies = [policies]
    policies = [str(p) for p in policies]
    from_file = False
    if workloads is None:
        ws = [synthetic_workload(1 if seed is None else seed, 20.0 if rate is None else rate, hours, jobs, horizon)]
    elif any(x is not None for x in (seed, rate, hours, jobs)):
        raise ValueError("seed, rate, hours and jobs shape the synthetic workload: not with workloads=")
    elif isinstance(workloads, (str, os.PathLike)):
        ws, from_file = load_workloads(workloads), True
    elif isinstance(workloads, Workload):
        ws = [workloads]
    elif isinstance(workloads, (list, tuple)) and workloads and all(isinstance(w, Workload) for w in workloads):
        ws = list(workloads)
    else:
        ws = [workload_from_jobs(workloads)]  # one list of jobs
    if mix is not None:
        ws = [_sim.apply_kind_mix(w, str(mix), _int(mix_seed, "mix_seed")) for w in ws]
    registered = _registered_policies()
    per_policy = {p: {} for p in policies}
    for k, v in options.items():
        key = _option_key(k)
        owners = [p for p in policies if p in registered and key in registered[p].options]
        if not owners and all(p in registered for p in policies):
            raise ValueError(f"option '{key}': none of the policies {', '.join(policies)} has it "
                             "(sia.sim.policies() lists their options)")
        for p in owners:
            per_policy[p][key] = _option_text(v)
    for p, o in (policy_options or {}).items():
        if p not in per_policy:
            raise ValueError(f"policy_options: '{p}' is not one of the policies {', '.join(policies)}")
        per_policy[p].update({_option_key(k): _option_text(v) for k, v in o.items()})
    args = _common_args(from_file, cluster, scale, profiles, interpolation, interval, horizon, truncate,
                        force_category, tuned_jobs, keep_rounds, ftf, threads, time_limit, progress, progress_period)
    out = {}
    for d in _sim.run_many(ws, policies, per_policy, args, _int(parallel, "parallel")):
        out[d["policy"]] = PolicyRuns(policy=d["policy"], runs=[_result(r) for r in d["runs"]],
                                      aggregate=AggregateMetrics(**d["aggregate"]))
    return out
