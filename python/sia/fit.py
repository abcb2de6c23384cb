"""Fitting the goodput model's throughput parameters from throughput profiles (what ``sia_fit_profiles`` does).

``fit_profiles(source)`` fits one model per (model, GPU type) and reports its errors:

- ``source`` an artifact profiles directory (``profiles/<model>/placements-<type>.csv`` and
  ``scalability-<type>.csv``, read by the simulator's loaders: a malformed row is a ``ValueError`` naming
  ``file:line``), or rows: a mapping of columns (dict of lists or NumPy arrays, a pandas DataFrame), a NumPy
  structured array or a list of dicts, with columns ``local_bsz``, ``step_time``, ``sync_time`` (seconds per
  optimiser step without accumulation, and the part of it spent synchronising gradients) and either ``placement``
  (digits: GPUs per node, e.g. ``"1244"``) or ``num_nodes`` and ``num_replicas``; optional ``model`` and
  ``gpu_type`` columns group the rows (absent: one group named ``""``).
- The rows of each group are shuffled with a seeded portable generator and the first ``1 - holdout`` of them
  (at least one) are fitted; ``rmsle_seen`` / ``rmsle_unseen`` are the RMSLE of the predicted step time on the
  fitted and the held-out rows (``None`` when nothing is held out). With the same directory and seed the numbers
  are ``sia_fit_profiles --json``'s.
- Pipeline-parallel models (GPipe, ``sia/goodput/pipeline.hpp``) are recognised in a directory as the program
  does (no 1-GPU placement: gpt_pmp); for rows, say ``pipeline_stages=`` (an int, or a dict by model or by
  ``(model, gpu_type)``).

``profile_bootstrap(directory)`` gives the program's second table: the error of the paper's Eq. 1 bootstrap
(a model fitted on one GPU type, scaled by another type's 1-GPU step times, predicting that type's multi-GPU rows).
"""

import collections.abc
import dataclasses
import os
from typing import Optional

import numpy as np

from . import _sia
from .goodput import GoodputFunction, GoodputValueError, PerfParams, _call

_k = _sia._goodput

__all__ = ["ProfileFit", "BootstrapError", "fit_profiles", "profile_bootstrap"]


@dataclasses.dataclass(frozen=True)
class ProfileFit:
    """The fitted throughput model of one (model, GPU type) and its errors."""

    model: str
    gpu_type: str
    params: PerfParams
    rows_seen: int
    rows_unseen: int
    rmsle_seen: float
    rmsle_unseen: Optional[float]
    stages: Optional[int] = None  # pipeline model: GPUs per pipeline (None: data parallel)
    microbatches: Optional[int] = None  # pipeline model: micro-batches per pipeline and step
    init_batch_size: Optional[int] = None  # smallest validated batch of the model (directory input)
    max_batch_size: Optional[int] = None  # largest validated batch of the model (directory input)

    @property
    def pipeline(self):
        return self.stages is not None

    def goodput_function(self, grad_params, init_batch_size=None):
        """A GoodputFunction over the fitted parameters (data-parallel models; ``init_batch_size`` defaults to the
        model's smallest validated batch)."""
        if self.pipeline:
            raise GoodputValueError(
                f"{self.model}/{self.gpu_type}: a pipeline model ({self.stages} stages) has no data-parallel "
                "GoodputFunction"
            )
        init = self.init_batch_size if init_batch_size is None else init_batch_size
        if init is None:
            raise GoodputValueError(f"{self.model}/{self.gpu_type}: init_batch_size needed (no validation files)")
        return GoodputFunction(self.params, grad_params, init)


@dataclasses.dataclass(frozen=True)
class BootstrapError:
    """Eq. 1 bootstrap from one GPU type to another: RMSLE over the target's multi-GPU rows."""

    model: str
    from_type: str
    to_type: str
    rows: int
    rmsle: float


def _to_fit(d):
    d = dict(d)
    d["params"] = PerfParams(*d["params"])
    d.setdefault("init_batch_size", None)
    d.setdefault("max_batch_size", None)
    return ProfileFit(**d)


def _directory(source, what):
    path = os.fspath(source)
    if not os.path.isdir(path):
        raise GoodputValueError(f"{what}: {path}: not a directory")
    return path


def _columns(rows):
    """Column name -> 1-D array, from a mapping, DataFrame, structured array or list of dicts."""
    if isinstance(rows, np.ndarray) and rows.dtype.names:
        return {n: np.asarray(rows[n]) for n in rows.dtype.names}
    if isinstance(rows, (list, tuple)) and all(isinstance(r, collections.abc.Mapping) for r in rows):
        names = sorted({k for r in rows for k in r})
        missing = [(i, n) for i, r in enumerate(rows) for n in names if n not in r]
        if missing:
            raise GoodputValueError(f"fit_profiles: rows[{missing[0][0]}] has no '{missing[0][1]}'")
        return {n: np.asarray([r[n] for r in rows]) for n in names}
    if isinstance(rows, collections.abc.Mapping) or hasattr(rows, "columns"):
        names = list(rows.keys())
        return {str(n): np.asarray(rows[n]) for n in names}
    raise GoodputValueError(
        "fit_profiles: expected a profiles directory, a mapping of columns, a DataFrame, a structured array or a "
        f"list of dicts, got {type(rows).__name__}"
    )


def _stages_for(pipeline_stages, model, gpu_type):
    if pipeline_stages is None:
        return 0
    if isinstance(pipeline_stages, collections.abc.Mapping):
        v = pipeline_stages.get((model, gpu_type), pipeline_stages.get(model))
        return 0 if v is None else _whole_stages(v)
    return _whole_stages(pipeline_stages)


def _whole_stages(v):
    if not np.isscalar(v) or float(v) != int(v) or int(v) < 1:
        raise GoodputValueError(f"fit_profiles: pipeline_stages must be a whole number >= 1, got {v!r}")
    return int(v)


def fit_profiles(source, *, seed=1, holdout=0.2, pipeline_stages=None, log_space=True, multi_start=True):
    """Fitted throughput models per (model, GPU type), sorted by model then type, as a list of ProfileFit."""
    if not isinstance(seed, (int, np.integer)) or seed < 0 or seed >= 2**64:
        raise GoodputValueError(f"fit_profiles: seed must be an integer in [0, 2^64), got {seed!r}")
    if isinstance(source, (str, os.PathLike)):
        path = _directory(source, "fit_profiles")
        fits = _call(_k.fit_profile_dir, path, int(seed), float(holdout), bool(log_space), bool(multi_start))
        return [_to_fit(d) for d in fits]
    cols = _columns(source)
    need = ["local_bsz", "step_time", "sync_time"]
    if "placement" not in cols:
        need += ["num_nodes", "num_replicas"]
    missing = [c for c in need if c not in cols]
    if missing:
        raise GoodputValueError(
            f"fit_profiles: missing column(s) {', '.join(missing)} (have: {', '.join(sorted(cols)) or 'none'}; "
            "need local_bsz, step_time, sync_time and placement or num_nodes + num_replicas)"
        )
    lengths = {n: len(np.atleast_1d(c)) for n, c in cols.items()}
    if len(set(lengths.values())) > 1:
        raise GoodputValueError(f"fit_profiles: columns of different lengths: {lengths}")
    n = next(iter(lengths.values()))
    if n == 0:
        raise GoodputValueError("fit_profiles: no rows")
    if "placement" in cols:
        placements = [str(p) for p in np.atleast_1d(cols["placement"])]
        nodes, replicas = (np.asarray(a, dtype=float) for a in _call(_k.parse_placements, placements))
    else:
        nodes, replicas = cols["num_nodes"], cols["num_replicas"]
    model = np.atleast_1d(cols["model"]).astype(str) if "model" in cols else np.full(n, "")
    gpu_type = np.atleast_1d(cols["gpu_type"]).astype(str) if "gpu_type" in cols else np.full(n, "")
    names = ("num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time")
    try:
        arrays = [
            np.atleast_1d(np.asarray(a, dtype=float))
            for a in (nodes, replicas, cols["local_bsz"], cols["step_time"], cols["sync_time"])
        ]
    except (TypeError, ValueError) as e:
        raise GoodputValueError(f"fit_profiles: a numeric column holds a non-number: {e}") from None
    for name, a in zip(names, arrays):
        if a.ndim != 1:
            raise GoodputValueError(f"fit_profiles: column {name} must be one-dimensional, got shape {a.shape}")
    out = []
    for m, t in sorted(set(zip(model.tolist(), gpu_type.tolist()))):
        members = np.flatnonzero((model == m) & (gpu_type == t)).tolist()
        d = _call(
            _k.fit_profile_rows,
            m,
            t,
            *arrays,
            members,
            _stages_for(pipeline_stages, m, t),
            int(seed),
            float(holdout),
            bool(log_space),
            bool(multi_start),
        )
        out.append(_to_fit(d))
    return out


def profile_bootstrap(directory, *, seed=1, log_space=True, multi_start=True):
    """Eq. 1 bootstrap errors of every ordered pair of GPU types of each data-parallel model of a profiles
    directory, as a list of BootstrapError (``sia_fit_profiles``' second table)."""
    path = _directory(directory, "profile_bootstrap")
    rows = _call(_k.bootstrap_profile_dir, path, int(seed), bool(log_space), bool(multi_start))
    return [BootstrapError(**d) for d in rows]
