"""One Sia scheduling round from Python, and the state a scheduler carries from one round to the next.

The C++ library decides (``sia::run_round``, include/sia/round.hpp; ``sia::advance_round_state``,
include/sia/round_state.hpp); this module gives it Python values: dataclasses in, dataclasses out, GPU types
and nodes by name, a job's goodput table as a NumPy array (GPU counts x GPU types) or a mapping, or as a Python
callable, or as a model in the JSON form of ``sia_allocate`` requests. The GIL is released while the round runs.
Bad input raises ``ValueError`` with the C++ message (the same text ``sia_allocate`` prints).

>>> import sia
>>> cluster = sia.Cluster([sia.GpuType("A", nodes=1, gpus_per_node=2), sia.GpuType("B", nodes=1, gpus_per_node=4)])
>>> jobs = [sia.Job("J1", goodput={"A": [1, 1], "B": [2, 3, 0, 4]}),
...         sia.Job("J2", goodput={"A": [2, 4], "B": [1, 2, 0, 3]})]
>>> r = sia.run_round(cluster, jobs)
>>> r["J1"].gpu_type, r["J1"].gpus, r["J2"].gpu_type, r["J2"].gpus
('B', 4, 'A', 2)
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Union

import numpy as np

from . import _sia

__all__ = [
    "GpuType", "Cluster", "NodeShare", "Allocation", "Job", "Tenant", "RoundOptions", "BatchChoice",
    "JobDecision", "RejectedJob", "RoundResult", "JobState", "RoundStateChanges", "RoundState", "run_round",
    "round_state_of", "apply_round_state", "forget_lost_allocation", "advance_round_state", "available_backends",
    "WarmStart", "StopSource", "RoundEvent", "goodput_array", "job_model",
]

WarmStart = _sia.WarmStart
StopSource = _sia.StopSource
available_backends = _sia.available_backends

KINDS = ("adaptive", "strong-scaling", "rigid", "hybrid")


def _int(v: Any, where: str) -> int:
    """An integer field (1.0 counts, 1.5, "1" and True do not): ValueError naming the field and the value."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return int(v)
    raise ValueError(f"{where}: expected an integer, got {v!r}")


def _floats(v: Any, where: str) -> np.ndarray:
    try:
        return np.asarray(v, dtype=float)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{where}: expected numbers, got {v!r} ({e})") from None


def _opt_int(v: Any, where: str) -> Optional[int]:
    return None if v is None else _int(v, where)


def _float(v: Any, where: str) -> float:
    """A number field (NaN and infinities pass: sia's own checks name them)."""
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)):
        return float(v)
    raise ValueError(f"{where}: expected a number, got {v!r}")


# ----------------------------------------------------------------------------------------------- cluster


@dataclass(frozen=True)
class GpuType:
    """A GPU type of the cluster: its name, its node count and the GPUs of each node."""

    name: str
    nodes: int
    gpus_per_node: int

    @property
    def gpus(self) -> int:
        """All GPUs of the type (failed nodes included)."""
        return self.nodes * self.gpus_per_node


@dataclass
class Cluster:
    """The cluster as one round sees it (C++ ``sia::ClusterSpec``), GPU types referred to by name.

    ``types``: ``GpuType`` objects (or ``(name, nodes, gpus_per_node)`` tuples), in the order of the columns of
    goodput arrays. ``reserved``: ``{type: GPUs}`` not available to sia. ``down``: ``{type: [failed nodes]}``,
    nodes by index or by name. ``node_names``: ``{type: [one name per node]}`` (default ``"<type>/<index>"``).
    """

    types: Sequence[GpuType]
    reserved: Optional[Mapping[str, int]] = None
    down: Optional[Mapping[str, Sequence[Union[int, str]]]] = None
    node_names: Optional[Mapping[str, Sequence[str]]] = None

    def __post_init__(self) -> None:
        self.types = tuple(t if isinstance(t, GpuType) else GpuType(*t) for t in self.types)
        self.reserved = dict(self.reserved or {})
        self.down = {k: list(v) for k, v in (self.down or {}).items()}
        self.node_names = {k: list(v) for k, v in (self.node_names or {}).items()}

    def _index(self) -> dict:
        # name -> index, rebuilt when `types` is replaced (every job of a round asks it)
        cache = self.__dict__.get("_index_cache")
        if cache is None or cache[0] is not self.types:
            cache = (self.types, {t.name: i for i, t in enumerate(self.types)})
            self.__dict__["_index_cache"] = cache
        return cache[1]

    @property
    def type_names(self) -> list[str]:
        return list(self._index())

    def type_index(self, name: Union[str, int]) -> int:
        """Index of the GPU type called ``name`` (an index is returned as it is); ValueError when unknown."""
        i = self._index().get(name) if isinstance(name, str) else None
        if i is not None:
            return i
        if isinstance(name, (int, np.integer)) and not isinstance(name, bool):
            if 0 <= int(name) < len(self.types):
                return int(name)
            raise ValueError(f"GPU type index {name} out of range: the cluster has {len(self.types)} types")
        known = ", ".join(repr(t.name) for t in self.types)
        raise ValueError(f"unknown GPU type {name!r} (cluster types: {known})")

    def node_name(self, gpu_type: Union[str, int], node: int) -> str:
        """The name of node ``node`` of ``gpu_type``."""
        t = self.type_index(gpu_type)
        names = self.node_names.get(self.types[t].name, [])
        return names[node] if 0 <= node < len(names) else f"{self.types[t].name}/{node}"

    def node_index(self, gpu_type: Union[str, int], node: Union[int, str]) -> int:
        """The index of a node of ``gpu_type`` given by index or by name."""
        if isinstance(node, (int, np.integer)) and not isinstance(node, bool):
            return int(node)
        t = self.type_index(gpu_type)
        for i in range(self.types[t].nodes):
            if self.node_name(t, i) == node:
                return i
        raise ValueError(f"unknown node {node!r} of GPU type {self.types[t].name!r}")

    def is_down(self, gpu_type: Union[str, int], node: int) -> bool:
        t = self.type_index(gpu_type)
        return any(self.node_index(t, n) == node for n in self.down.get(self.types[t].name, ()))

    def up_gpus(self, gpu_type: Union[str, int]) -> int:
        """GPUs of the type on nodes that are up (reservations not subtracted)."""
        t = self.type_index(gpu_type)
        failed = {self.node_index(t, n) for n in self.down.get(self.types[t].name, ())}
        return (self.types[t].nodes - len(failed)) * self.types[t].gpus_per_node

    def copy(self) -> "Cluster":
        return Cluster(self.types, copy.deepcopy(self.reserved), copy.deepcopy(self.down),
                       copy.deepcopy(self.node_names))

    def _plain(self) -> dict:
        names = self.type_names
        for what, m in (("reserved", self.reserved), ("down", self.down), ("node_names", self.node_names)):
            for k in m:
                if k not in names:
                    self.type_index(k)  # raises, naming the cluster's types
        return {
            "types": [(str(t.name), _int(t.nodes, f"GPU type {t.name!r}: nodes"),
                       _int(t.gpus_per_node, f"GPU type {t.name!r}: gpus_per_node")) for t in self.types],
            "reserved": [_int(self.reserved.get(n, 0), f"reserved[{n!r}]") for n in names] if self.reserved else [],
            "down": [[self.node_index(i, x) for x in self.down.get(n, ())] for i, n in enumerate(names)],
            "node_names": [list(self.node_names.get(n, ())) for n in names] if self.node_names else [],
        }


# ------------------------------------------------------------------------------------------------- jobs


@dataclass(frozen=True)
class NodeShare:
    """GPUs a job holds on one node: the node's index within its GPU type, how many GPUs, which ones."""

    node: Union[int, str]
    gpus: int
    gpu_ids: tuple[int, ...] = ()
    name: str = field(default="", compare=False)  # the node's name, in decisions

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpu_ids", tuple(_int(g, f"node {self.node!r}: gpu_ids") for g in self.gpu_ids))

    def __repr__(self) -> str:
        where = self.name or repr(self.node)
        ids = ",".join(map(str, self.gpu_ids)) if self.gpu_ids else f"{self.gpus} GPUs"
        return f"NodeShare({where}: {ids})"


def _share(s: Any) -> NodeShare:
    if isinstance(s, NodeShare):
        return s
    if isinstance(s, Mapping):
        return NodeShare(s["node"], int(s["gpus"]), tuple(s.get("gpu_ids", ())))
    return NodeShare(*s)


@dataclass(frozen=True)
class Allocation:
    """What a job holds (a job's ``current``): a GPU type, the GPUs it uses, its nodes (0 = derived) and,
    optionally, its placement (``NodeShare`` objects or ``(node, gpus, gpu_ids)`` tuples)."""

    gpu_type: str
    gpus: int
    nodes: int = 0
    placement: tuple[NodeShare, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "placement", tuple(_share(s) for s in self.placement))

    def _plain(self, cluster: Optional[Cluster]) -> tuple:
        t = cluster.type_index(self.gpu_type) if cluster is not None else 0
        shares = [(cluster.node_index(t, s.node) if cluster is not None else _int(s.node, "placement: node"),
                   _int(s.gpus, f"placement: node {s.node!r}: gpus"), list(s.gpu_ids)) for s in self.placement]
        return (t, _int(self.gpus, "gpus"), _int(self.nodes, "nodes"), shares)


def _allocation(plain: Optional[tuple], cluster: Cluster) -> Optional[Allocation]:
    if plain is None:
        return None
    t, gpus, nodes, shares = plain
    return Allocation(cluster.types[t].name, gpus, nodes,
                      tuple(NodeShare(n, g, tuple(ids), cluster.node_name(t, n)) for n, g, ids in shares))


GoodputSpec = Union[np.ndarray, Mapping, Callable[[str, int, int], float], None]


@dataclass
class Job:
    """A job of the round (C++ ``sia::JobSpec``); keyword arguments default as in C++.

    Its goodput, one of:

    - ``goodput``: a table of raw goodputs, 0 (or absent) where the job cannot run — a 2-D array of shape
      (GPU counts, GPU types), row ``g - 1`` for ``g`` GPUs and columns in the cluster's type order; or a
      mapping ``{type: [value for 1, 2, ... GPUs]}``, ``{type: {gpus: value}}``, ``{type: {(gpus, nodes):
      value}}`` or ``{(type, gpus[, nodes]): value}``; or a callable ``f(gpu_type, nodes, gpus) -> float``
      (called by the round, with the GIL held);
    - ``model``: a goodput model in the ``model`` form of ``sia_allocate`` requests (a dict or its JSON text;
      src/io/model_json.hpp; ``perf``/``seed`` entries may be ``sia.goodput.PerfParams`` or ``sia.ProfileFit``,
      ``grad`` a ``sia.goodput.GradParams``), or an object with ``to_dict()`` giving it.

    ``max_gpus`` None is no limit; ``current`` an ``Allocation`` (what the job holds now) or None.
    """

    id: str
    goodput: GoodputSpec = None
    model: Any = None
    min_gpus: int = 1
    max_gpus: Optional[int] = None
    kind: str = "adaptive"
    preemptible: bool = True
    age_s: float = 0.0
    restarts: int = 0
    restart_cost_s: float = 30.0
    pipeline_size: int = 1
    pipeline_sizes: Optional[Mapping[str, int]] = None  # hybrid: GPUs per pipeline per type (0 = not there)
    max_pipelines_ever: Optional[int] = None
    max_gpus_ever: Optional[int] = None
    current: Optional[Allocation] = None
    weight: float = 1.0
    tenant: Optional[str] = None

    def _plain(self, cluster: Optional[Cluster], with_goodput: bool = True) -> dict:
        if self.kind not in KINDS and self.kind != "scale-gpus":
            raise ValueError(f"job {self.id!r}: kind: unknown kind {self.kind!r} ({', '.join(KINDS)})")
        if self.current is not None and not isinstance(self.current, Allocation):
            raise ValueError(f"job {self.id!r}: current: expected sia.Allocation or None, got {self.current!r}")
        sizes: list[int] = []
        if self.pipeline_sizes:
            if cluster is None:
                raise ValueError(f"job {self.id!r}: pipeline_sizes need the cluster")
            for k in self.pipeline_sizes:
                cluster.type_index(k)
            sizes = [_int(self.pipeline_sizes.get(n, 0), f"job {self.id!r}: pipeline_sizes[{n!r}]")
                     for n in cluster.type_names]
        try:
            current = self.current._plain(cluster) if self.current is not None else None
        except ValueError as e:
            raise ValueError(f"job {self.id!r}: current: {e}") from None
        w = f"job {self.id!r}: "
        if not isinstance(self.id, str):
            raise ValueError(f"job id: expected a string, got {self.id!r}")
        d = {
            "id": self.id, "kind": self.kind, "min_gpus": _int(self.min_gpus, w + "min_gpus"),
            "max_gpus": _opt_int(self.max_gpus, w + "max_gpus"), "preemptible": bool(self.preemptible),
            "age_s": _float(self.age_s, w + "age_s"), "restarts": _int(self.restarts, w + "restarts"),
            "restart_cost_s": _float(self.restart_cost_s, w + "restart_cost_s"),
            "pipeline_size": _int(self.pipeline_size, w + "pipeline_size"), "pipeline_sizes": sizes,
            "max_pipelines_ever": _opt_int(self.max_pipelines_ever, w + "max_pipelines_ever"),
            "max_gpus_ever": _opt_int(self.max_gpus_ever, w + "max_gpus_ever"),
            "weight": _float(self.weight, w + "weight"), "tenant": self.tenant or "",
            "current": current, "table": None, "callable": None, "model": None,
        }
        if with_goodput:
            _goodput_into(d, self, cluster)
        return d


def _goodput_into(d: dict, job: Job, cluster: Cluster) -> None:
    g, model = job.goodput, job.model
    if (g is None) == (model is None):
        raise ValueError(f"job {job.id!r}: give exactly one of goodput and model")
    if model is not None:
        if hasattr(model, "to_dict"):
            model = model.to_dict()
        d["model"] = model if isinstance(model, str) else json.dumps(_jsonable(model))
        return
    if callable(g) and not isinstance(g, (Mapping, np.ndarray)):
        d["callable"] = g
        return
    where = f"job {job.id!r}: goodput"
    entries: list[tuple[str, int, int, float]] = []
    names = cluster.type_names

    valid = cluster._index()

    def type_name(k: Any) -> str:
        if k in valid:
            return k
        try:
            return names[cluster.type_index(k)]
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None

    if isinstance(g, Mapping):
        for k, v in g.items():
            if type(k) is tuple and len(k) == 3 and k[0] in valid:  # the common form, fast
                entries.append((k[0], _int(k[2], f"{where}[{k!r}]"), _int(k[1], f"{where}[{k!r}]"),
                                _float(v, f"{where}[{k!r}]")))
            elif isinstance(k, tuple):
                if len(k) not in (2, 3):
                    raise ValueError(f"{where}: key {k!r}: expected (gpu_type, gpus) or (gpu_type, gpus, nodes)")
                entries.append((type_name(k[0]), _int(k[2], f"{where}[{k!r}]") if len(k) == 3 else 0,
                                _int(k[1], f"{where}[{k!r}]"), _float(v, f"{where}[{k!r}]")))
            elif isinstance(v, Mapping):
                t = type_name(k)
                for c, x in v.items():
                    gpus, nodes = (c if isinstance(c, tuple) else (c, 0))
                    entries.append((t, _int(nodes, f"{where}[{k!r}][{c!r}]"), _int(gpus, f"{where}[{k!r}][{c!r}]"),
                                    _float(x, f"{where}[{k!r}][{c!r}]")))
            else:
                t = type_name(k)
                for i, x in enumerate(_floats(v, f"{where}[{k!r}]").ravel()):
                    if x != 0:
                        entries.append((t, 0, i + 1, float(x)))
    else:
        a = _floats(g, where)
        if a.ndim != 2 or a.shape[1] != len(names):
            raise ValueError(f"{where}: expected an array of shape (GPU counts, {len(names)} GPU types), "
                             f"got shape {a.shape}")
        for gi, ti in zip(*np.nonzero(a != 0)):  # NaN != 0: the round reports it
            entries.append((names[ti], 0, int(gi) + 1, float(a[gi, ti])))
    d["table"] = entries


def _jsonable(o: Any) -> Any:
    """A model dict with sia.goodput's PerfParams / GradParams (namedtuples), sia.ProfileFit (its ``params``) and
    NumPy numbers in it, as JSON values (``perf: {type: PerfParams(...)}`` reads as the request's object)."""
    if hasattr(o, "_asdict"):
        return {k: _jsonable(v) for k, v in o._asdict().items()}
    if hasattr(o, "params") and hasattr(o, "gpu_type") and hasattr(o.params, "_asdict"):
        return _jsonable(o.params)
    if isinstance(o, Mapping):
        return {k: _jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple, np.ndarray)):
        return [_jsonable(v) for v in o]
    if isinstance(o, np.generic):
        return o.item()
    return o


def job_model(goodput: Mapping[str, Any], max_batch_size: Optional[float] = None,
              atomic_bsz_range: Union[None, tuple, Mapping[str, tuple]] = None, seed: Optional[Mapping] = None,
              **fields: Any) -> dict:
    """A job's model (``Job(model=...)``) from what an AdaptDL/Pollux job reports: ``goodput`` maps each GPU type
    the job has run on to its ``sia.goodput.GoodputFunction`` (its ``perf_params``, ``grad_params`` and
    ``init_batch_size``; all types share the gradient statistics and initial batch); ``max_batch_size`` and
    ``atomic_bsz_range`` (``(min, max)`` local batch, or ``{type: (min, max)}``) as in ``GoodputFunction.optimize``;
    ``seed``: ``{type: PerfParams}`` 1-GPU models of types the job has not run on (paper Eq. 1). Other keywords
    (``projection``, ``first_placement``, ``known_type``, ...) are copied into the model (src/io/model_json.hpp)."""
    if not goodput and not seed:
        raise ValueError("job_model: give a GoodputFunction for at least one GPU type (or seed models)")
    fns = list(goodput.values())
    init = {f.init_batch_size for f in fns}
    grads = {None if f.grad_params is None else tuple(f.grad_params) for f in fns}
    if len(init) > 1 or len(grads) > 1:
        raise ValueError("job_model: the GoodputFunctions differ in init_batch_size or grad_params "
                         f"({sorted(init)}, {sorted(grads, key=str)}): one job has one of each")
    model: dict = {"perf": {t: _jsonable(f.perf_params) for t, f in goodput.items()}}
    if fns:
        model["init_batch_size"] = fns[0].init_batch_size
        if fns[0].grad_params is not None:
            model["grad"] = _jsonable(fns[0].grad_params)
    if max_batch_size is not None:
        model["max_batch_size"] = max_batch_size
    if seed:
        model["seed"] = {t: _jsonable(p) for t, p in seed.items()}
    if atomic_bsz_range is not None:
        types = set(goodput) | set(seed or {})
        ranges = atomic_bsz_range if isinstance(atomic_bsz_range, Mapping) else {t: atomic_bsz_range for t in types}
        model["local_batch"] = {t: [int(lo), int(hi)] for t, (lo, hi) in ranges.items()}
    model.update(fields)
    return model


def goodput_array(job: Job, cluster: Cluster, max_gpus: Optional[int] = None) -> np.ndarray:
    """The job's goodput table as an array of shape (GPU counts, GPU types): what ``Job(goodput=...)``
    accepts. Callables are evaluated on single-node shapes up to a node's size, then whole nodes."""
    n = max_gpus or max(t.gpus for t in cluster.types)
    a = np.zeros((n, len(cluster.types)))
    d: dict = {}
    _goodput_into(d, job, cluster)
    if d["table"] is not None:
        for t, _nodes, gpus, v in d["table"]:
            if gpus <= n:
                a[gpus - 1, cluster.type_index(t)] = v
    elif d["callable"] is not None:
        for ti, t in enumerate(cluster.types):
            for gpus in range(1, min(n, t.gpus) + 1):
                nodes = max(1, -(-gpus // t.gpus_per_node))
                a[gpus - 1, ti] = d["callable"](t.name, nodes, gpus)
    else:
        raise ValueError("goodput_array: a model is evaluated by the round, not tabulated here")
    return a


@dataclass
class Tenant:
    """A tenant's caps and guarantee for one round (C++ ``sia::TenantSpec``; docs/decision.md, "Tenants").
    ``max_gpus_per_type``: ``{type: cap}``."""

    name: str
    max_gpus: Optional[int] = None
    max_gpus_per_type: Optional[Mapping[str, int]] = None
    guaranteed_gpus: int = 0

    def _plain(self, cluster: Cluster) -> tuple:
        per = self.max_gpus_per_type or {}
        for k in per:
            try:
                cluster.type_index(k)
            except ValueError as e:
                raise ValueError(f"tenant {self.name!r}: max_gpus_per_type: {e}") from None
        w = f"tenant {self.name!r}: "
        caps = [_int(per.get(n, -1), w + f"max_gpus_per_type[{n!r}]") for n in cluster.type_names] if per else []
        return (self.name, _opt_int(self.max_gpus, w + "max_gpus"), caps,
                _int(self.guaranteed_gpus, w + "guaranteed_gpus"))


@dataclass
class RoundOptions:
    """Options of a round (C++ ``sia::RoundOptions``; the ``policy`` of a ``sia_allocate`` request).

    ``p`` fairness exponent (!= 0), ``lambda_`` penalty per job left without GPUs (``lambda`` is a Python
    keyword), ``backend`` (``available_backends()``), ``time_limit_ms`` (None = no limit), ``relative_gap``,
    ``place`` (compute placements), ``round_utilities`` (the authors' 2-decimal rounding), ``compute_prices``,
    ``warm_start`` (a previous ``RoundResult.warm_start``), ``threads`` (0 = all cores), ``tenants``
    (``Tenant`` objects), ``strict`` (a bad job fails the round instead of being rejected alone), ``stop`` (a
    ``StopSource``: another thread's ``request_stop()`` ends the round as its time limit would), ``log`` (a
    callable receiving one ``RoundEvent`` per phase, with the GIL held; ``event.line`` is what ``sia_allocate
    --verbose`` prints).
    """

    p: float = -0.5
    lambda_: float = 1.1
    backend: str = "default"
    time_limit_ms: Optional[float] = 10000.0
    relative_gap: float = 1e-4
    place: bool = True
    round_utilities: bool = False
    compute_prices: bool = True
    warm_start: Optional[WarmStart] = None
    threads: int = 0
    tenants: Sequence[Tenant] = ()
    strict: bool = False
    stop: Optional[StopSource] = None
    log: Optional[Callable[["RoundEvent"], None]] = None

    def _plain(self, cluster: Cluster) -> dict:
        return {
            "p": _float(self.p, "RoundOptions.p"), "lambda": _float(self.lambda_, "RoundOptions.lambda_"),
            "backend": str(self.backend),
            "time_limit_ms": None if self.time_limit_ms is None else _float(self.time_limit_ms,
                                                                             "RoundOptions.time_limit_ms"),
            "relative_gap": _float(self.relative_gap, "RoundOptions.relative_gap"), "place": bool(self.place),
            "round_utilities": bool(self.round_utilities), "compute_prices": bool(self.compute_prices),
            "warm_start": self.warm_start, "threads": _int(self.threads, "RoundOptions.threads"),
            "strict": bool(self.strict),
            "tenants": [t._plain(cluster) for t in self.tenants], "stop": self.stop,
            "log": None if self.log is None else (lambda d, log=self.log: log(RoundEvent(**d))),
        }


@dataclass(frozen=True)
class RoundEvent:
    """One phase of a round, as ``RoundOptions.log`` receives it (C++ ``sia::RoundEvent``): ``phase`` is
    ``problem``, ``solve``, ``fallback``, ``prices``, ``placement`` or ``done``; fields that do not apply to the
    phase are None (or empty). ``line`` is the one-line rendering ``sia_allocate --verbose`` prints."""

    phase: str
    elapsed_ms: float
    phase_ms: float
    line: str
    jobs: Optional[int] = None
    configurations: Optional[int] = None
    candidates: Optional[int] = None
    unevaluated: Optional[int] = None
    backend: str = ""
    status: str = ""
    nodes: Optional[int] = None
    objective: Optional[float] = None
    best_bound: Optional[float] = None
    gap: Optional[float] = None
    allocated: Optional[int] = None
    evicted: Optional[int] = None
    message: str = ""

    def __str__(self) -> str:
        return self.line


# --------------------------------------------------------------------------------------------- decision


@dataclass(frozen=True)
class BatchChoice:
    """The batch size a model chose: global batch = GPUs / pipeline x local_batch x (accumulation_steps + 1)."""

    global_batch: int
    local_batch: int
    accumulation_steps: int


@dataclass(frozen=True)
class JobDecision:
    """The round's decision for one job. Without GPUs: ``gpu_type`` None, ``reason`` says why (``outbid``,
    ``capacity``, ``no_valid_configuration``, ``unmet``, ``tenant_cap``, ``rejected``, ``not_evaluated``) and
    ``detail`` explains; with GPUs ``reason`` is ``"none"``. ``config_gpus`` is the configuration's size (a
    rigid job may use fewer, ``gpus``)."""

    job: str
    gpu_type: Optional[str] = None
    gpus: int = 0
    nodes: int = 0
    config_gpus: int = 0
    batch: Optional[BatchChoice] = None
    placement: tuple[NodeShare, ...] = ()
    changed: bool = False
    reason: str = "none"
    detail: str = ""
    placement_status: Optional[str] = None

    @property
    def allocated(self) -> bool:
        return self.gpu_type is not None

    @property
    def allocation(self) -> Optional[Allocation]:
        """What the job holds after this decision (an ``Allocation`` for ``Job.current``), or None."""
        if not self.allocated:
            return None
        return Allocation(self.gpu_type, self.gpus, self.nodes, self.placement)

    def __repr__(self) -> str:
        if not self.allocated:
            return f"JobDecision({self.job!r}, no GPUs, reason={self.reason!r}, detail={self.detail!r})"
        where = ", ".join(repr(s) for s in self.placement)
        batch = f", batch={self.batch.global_batch}" if self.batch else ""
        return (f"JobDecision({self.job!r}, {self.gpus} x {self.gpu_type} on {self.nodes} node"
                f"{'s' if self.nodes != 1 else ''}{batch}, placement=[{where}], changed={self.changed})")


@dataclass(frozen=True)
class RejectedJob:
    """A job the round did not consider because its input is invalid (``RoundOptions.strict`` False)."""

    job: str
    index: int
    field: str
    reason: str
    running: bool = False


@dataclass(frozen=True, eq=False)
class RoundResult:
    """The outcome of a round (C++ ``sia::RoundResult``; every field: docs/decision.md).

    ``result["J1"]`` is job J1's ``JobDecision``; ``allocations`` the decisions with GPUs by job id;
    ``gpus_used``, ``prices`` (marginal objective per extra GPU) are by GPU type name, ``tenant_gpus`` by tenant;
    ``lost``: jobs whose ``current`` failed nodes took away, taken as holding nothing (``run_round``).
    Two results are equal when they decide the same (backend, bound, timings and warm start aside).
    """

    status: str
    backend: str
    objective: float
    best_bound: float
    decisions: tuple[JobDecision, ...]
    gpus_used: dict
    prices: dict
    evicted: tuple[str, ...] = ()
    unmet: tuple[str, ...] = ()
    preempted: tuple[str, ...] = ()
    tenant_capped: tuple[str, ...] = ()
    tenant_gpus: dict = field(default_factory=dict)
    rejected: tuple[RejectedJob, ...] = ()
    lost: tuple[str, ...] = ()
    fallback: bool = False
    message: str = ""
    solve_ms: float = 0.0
    total_ms: float = 0.0
    warm_start: Optional[WarmStart] = None
    _native: Any = field(default=None, repr=False)
    _cluster: Optional[Cluster] = field(default=None, repr=False)
    _jobs: tuple = field(default=(), repr=False)

    def __getitem__(self, job_id: str) -> JobDecision:
        for d in self.decisions:
            if d.job == job_id:
                return d
        raise KeyError(job_id)

    def __iter__(self) -> Iterator[JobDecision]:
        return iter(self.decisions)

    def __len__(self) -> int:
        return len(self.decisions)

    @property
    def allocations(self) -> dict[str, JobDecision]:
        return {d.job: d for d in self.decisions if d.allocated}

    @property
    def unallocated(self) -> dict[str, JobDecision]:
        return {d.job: d for d in self.decisions if not d.allocated}

    def to_json(self, pretty: bool = False) -> str:
        """The decision as ``sia_allocate`` prints it (examples/requests/README.md, "Decision"; the same C++
        ``sia::decision_to_json``), e.g. to hand it to a controller in another language."""
        if self._native is None:
            raise ValueError("RoundResult.to_json: the result is not one sia.run_round returned")
        return _sia._decision_json(self._native, bool(pretty))

    def to_dict(self) -> dict:
        """``to_json()`` read back: the decision as ``sia.allocate`` returns it."""
        return json.loads(self.to_json())

    def gpus_array(self) -> np.ndarray:
        """GPUs each job uses of each type: an int array of shape (jobs, GPU types), rows in the decisions'
        order, columns in the cluster's type order."""
        names = self._cluster.type_names if self._cluster is not None else list(self.gpus_used)
        a = np.zeros((len(self.decisions), len(names)), dtype=int)
        for i, d in enumerate(self.decisions):
            if d.allocated:
                a[i, names.index(d.gpu_type)] = d.gpus
        return a

    def _key(self) -> tuple:
        return (self.status, self.objective, self.decisions, self.gpus_used, self.prices,
                self.evicted, self.unmet, self.preempted, self.tenant_capped, self.tenant_gpus, self.rejected,
                self.lost, self.fallback, self.message)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RoundResult):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # mutable dicts inside

    def __repr__(self) -> str:
        alloc = ", ".join(f"{d.job}: {d.gpus} x {d.gpu_type}" for d in self.decisions if d.allocated)
        waiting = ", ".join(f"{d.job}: {d.reason}" for d in self.decisions if not d.allocated)
        extra = "".join(f", {k}={list(v)!r}" for k, v in (("rejected", [r.job for r in self.rejected]),
                                                          ("unmet", self.unmet), ("preempted", self.preempted),
                                                          ("evicted", self.evicted)) if v)
        prices = {k: round(v, 6) for k, v in self.prices.items()}
        return (f"RoundResult(status={self.status!r}, objective={self.objective:.6g}, backend={self.backend!r}, "
                f"allocated={{{alloc}}}, unallocated={{{waiting}}}{extra}, prices={prices})")


def _result(plain: dict, handle: Any, cluster: Cluster, jobs: tuple, tenants: Sequence[str]) -> RoundResult:
    names = cluster.type_names
    decisions = []
    for d in plain["decisions"]:
        t = d["type"]
        decisions.append(JobDecision(
            job=d["job"], gpu_type=None if t is None else names[t], gpus=d["gpus"], nodes=d["nodes"],
            config_gpus=d["config_gpus"], batch=None if d["batch"] is None else BatchChoice(*d["batch"]),
            placement=tuple(NodeShare(n, g, tuple(ids), cluster.node_name(t, n)) for n, g, ids in d["placement"]),
            changed=d["changed"], reason=d["reason"], detail=d["detail"], placement_status=d["placement_status"]))
    return RoundResult(
        status=plain["status"], backend=plain["backend"], objective=plain["objective"],
        best_bound=plain["best_bound"], decisions=tuple(decisions),
        gpus_used=dict(zip(names, plain["gpus_used"])), prices=dict(zip(names, plain["prices"])),
        evicted=tuple(plain["evicted"]), unmet=tuple(plain["unmet"]), preempted=tuple(plain["preempted"]),
        tenant_capped=tuple(plain["tenant_capped"]), tenant_gpus=dict(zip(tenants, plain["tenant_gpus"])),
        rejected=tuple(RejectedJob(*r) for r in plain["rejected"]), lost=tuple(plain["lost"]),
        fallback=plain["fallback"],
        message=plain["message"], solve_ms=plain["solve_ms"], total_ms=plain["total_ms"],
        warm_start=plain["warm_start"], _native=handle, _cluster=cluster, _jobs=jobs)


def _options(options: Optional[RoundOptions], overrides: dict) -> RoundOptions:
    if "lambda" in overrides:
        overrides["lambda_"] = overrides.pop("lambda")
    if options is None:
        options = RoundOptions()
    if overrides:
        known = {f.name for f in dataclasses.fields(RoundOptions)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise TypeError(f"run_round: unknown option(s) {', '.join(unknown)} (RoundOptions fields: "
                            f"{', '.join(sorted(known))})")
        options = dataclasses.replace(options, **overrides)
    return options


def run_round(cluster: Cluster, jobs: Iterable[Job], options: Optional[RoundOptions] = None, *,
              forget_lost_allocations: bool = True, **overrides: Any) -> RoundResult:
    """Runs one round (C++ ``sia::run_round``): every job gets a configuration and a placement, or a reason.

    ``overrides`` are RoundOptions fields (``run_round(cluster, jobs, p=-1, backend="cbc")``; ``lambda`` may be
    spelt ``lambda_``). Raises ValueError for bad input with sia's message; a job-level error (a bad count, a
    negative goodput...) rejects that job alone (``RoundResult.rejected``) unless ``strict``. The GIL is
    released during the round (a callable goodput takes it back for each call).

    A job whose ``current`` configuration no longer exists because nodes of ``cluster.down`` took it away is
    taken as holding nothing (listed in ``RoundResult.lost``), as ``sia_allocate`` does
    (``sia::forget_lost_allocations``); with ``forget_lost_allocations=False`` it is rejected, as the C++
    ``run_round`` does.
    """
    options = _options(options, dict(overrides))
    jobs = tuple(jobs)
    for j in jobs:
        if not isinstance(j, Job):
            raise TypeError(f"run_round: jobs must be sia.Job objects, got {type(j).__name__}")
    plain_jobs = [j._plain(cluster) for j in jobs]
    plain, handle = _sia._round_run(cluster._plain(), plain_jobs, options._plain(cluster),
                                    bool(forget_lost_allocations))
    return _result(plain, handle, cluster, jobs, [t.name for t in options.tenants])


# ------------------------------------------------------------------------------------------ round state


@dataclass
class JobState:
    """What a scheduler carries for one job between rounds (C++ ``sia::JobRoundState``; docs/round-state.md):
    what it holds (``current``), its age since submission, its restarts, and the largest count (and, hybrid
    jobs, pipelines) it has run with — the input of the 2x scale-up rule."""

    id: str
    current: Optional[Allocation] = None
    age_s: float = 0.0
    restarts: int = 0
    max_gpus_ever: int = 0
    max_pipelines_ever: int = 0

    @property
    def has_run(self) -> bool:
        return self.max_gpus_ever > 0

    def _plain(self, cluster: Optional[Cluster]) -> tuple:
        current = self.current._plain(cluster) if self.current is not None else None
        return (self.id, current, float(self.age_s), int(self.restarts), int(self.max_gpus_ever),
                int(self.max_pipelines_ever))

    def _set(self, plain: tuple, cluster: Optional[Cluster], current: Any = ...) -> None:
        _id, cur, self.age_s, self.restarts, self.max_gpus_ever, self.max_pipelines_ever = plain
        self.current = _allocation(cur, cluster) if current is ... else current


@dataclass(frozen=True)
class RoundStateChanges:
    """What ``advance_round_state`` changed, by job id in input order (C++ ``sia::RoundStateChanges``)."""

    started: tuple[str, ...] = ()
    restarted: tuple[str, ...] = ()
    stopped: tuple[str, ...] = ()
    lost: tuple[str, ...] = ()


def round_state_of(job: Job, cluster: Optional[Cluster] = None) -> JobState:
    """The state ``job`` describes (C++ ``sia::round_state_of``): its current, age, restarts and largest
    counts. ``cluster`` is needed only for a hybrid job with per-type pipeline sizes that holds GPUs."""
    need = job.current is not None and job.kind == "hybrid" and job.pipeline_sizes
    plain = _sia._round_state_of(job._plain(cluster if need else None, with_goodput=False))
    s = JobState(job.id)
    s._set(plain, None, current=job.current)
    return s


def apply_round_state(state: JobState, job: Job) -> Job:
    """Writes ``state`` into ``job`` before a round (C++ ``sia::apply_round_state``) and returns the job:
    current, age, restarts and the 2x rule's input. ValueError when the ids differ."""
    current, job.age_s, job.restarts, job.max_gpus_ever, pipelines = _sia._apply_round_state(
        state._plain(None), job._plain(None, with_goodput=False))
    job.current = state.current
    if job.kind == "hybrid":
        job.max_pipelines_ever = pipelines
    return job


def forget_lost_allocation(state: JobState, cluster: Cluster) -> bool:
    """Forgets ``state.current`` when failed nodes of ``cluster`` took its configuration away (C++
    ``sia::forget_lost_allocation``); True when it did."""
    plain, forgot = _sia._forget_lost_allocation(state._plain(cluster), cluster._plain())
    state._set(plain, cluster)
    return forgot


def advance_round_state(states: Sequence[JobState], jobs: Sequence[Job], result: RoundResult, elapsed_s: float,
                        next_cluster: Cluster) -> RoundStateChanges:
    """The one function between two rounds (C++ ``sia::advance_round_state``): applies ``result`` (the round
    run on ``jobs``, built from ``states``) and the ``elapsed_s`` seconds until the next round to every state,
    in place, then forgets the allocations that ``next_cluster`` (with the nodes that failed meanwhile
    ``down``) no longer has. ``states``, ``jobs`` and ``result.decisions`` are in the same order."""
    if not isinstance(result, RoundResult) or result._native is None:
        raise ValueError("advance_round_state: the result must be one sia.run_round returned")
    cluster = result._cluster
    plain, changes = _sia._advance_round_state([s._plain(cluster) for s in states],
                                               [j._plain(cluster, with_goodput=False) for j in jobs],
                                               result._native, float(elapsed_s), next_cluster._plain())
    for s, p in zip(states, plain):
        s._set(p, cluster)
    return RoundStateChanges(**{k: tuple(v) for k, v in changes.items()})


class RoundState:
    """The state of a scheduler's jobs from one round to the next: one ``JobState`` per job id.

    >>> state = sia.RoundState()
    >>> r = state.run_round(cluster, jobs)               # new jobs are tracked, every state applied
    >>> changes = state.advance(r, 60.0, cluster)        # 60 s later; next_cluster carries new failures
    >>> state.forget("J1")                               # J1 completed
    """

    def __init__(self) -> None:
        self._states: dict[str, JobState] = {}

    def __getitem__(self, job_id: str) -> JobState:
        return self._states[job_id]

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._states

    def __len__(self) -> int:
        return len(self._states)

    def __iter__(self) -> Iterator[JobState]:
        return iter(self._states.values())

    def __repr__(self) -> str:
        return f"RoundState({list(self._states.values())!r})"

    def track(self, job: Job, cluster: Optional[Cluster] = None) -> JobState:
        """The job's state, taken from its description (``round_state_of``) the first time it is seen."""
        s = self._states.get(job.id)
        if s is None:
            s = self._states[job.id] = round_state_of(job, cluster)
        return s

    def forget(self, job_id: str) -> None:
        """Drops a job that completed or left."""
        self._states.pop(job_id, None)

    def apply(self, jobs: Iterable[Job], cluster: Optional[Cluster] = None) -> list[Job]:
        """Writes every job's state into it (tracking new jobs first); returns the jobs."""
        jobs = list(jobs)
        for j in jobs:
            apply_round_state(self.track(j, cluster), j)
        return jobs

    def run_round(self, cluster: Cluster, jobs: Iterable[Job], options: Optional[RoundOptions] = None,
                  **overrides: Any) -> RoundResult:
        """``apply(jobs)`` then ``sia.run_round``."""
        return run_round(cluster, self.apply(jobs, cluster), options, **overrides)

    def advance(self, result: RoundResult, elapsed_s: float, next_cluster: Optional[Cluster] = None
                ) -> RoundStateChanges:
        """``advance_round_state`` on the jobs of ``result`` (the round's own cluster when ``next_cluster`` is
        None: nothing failed)."""
        jobs = list(result._jobs)
        missing = [j.id for j in jobs if j.id not in self._states]
        if missing:
            raise ValueError(f"RoundState.advance: jobs {missing} are not tracked (run the round through this state)")
        return advance_round_state([self._states[j.id] for j in jobs], jobs, result, elapsed_s,
                                   next_cluster if next_cluster is not None else result._cluster)
