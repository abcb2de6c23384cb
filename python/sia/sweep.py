"""Sweeps: a grid of simulations on Dask, gathered into one table and plots.

    python3 -m sia.sweep GRID.toml                        # a LocalCluster of 2 worker processes on this machine
    python3 -m sia.sweep GRID.toml --workers 8
    python3 -m sia.sweep GRID.toml --scheduler tcp://head:8786   # any Dask cluster (dask-scheduler, Slurm, ...)

Every point of the grid is one ``sia.simulate(...)`` call, run as a Dask task in a worker process (the workers
import ``sia``: give them the same ``PYTHONPATH``). Results go to the output directory:

    points/<key>.json     one file per finished point, written as soon as it completes (key = a hash of the
                          point's parameters); a point that failed after its retries gets <key>.failed.json
    jobs/<key>.csv        the point's per-job records (with ``jobs_tables = true``)
    results.csv           one row per point: key, status (ok / failed), error, the parameters, the metrics
    results.parquet       the same, when pandas has a Parquet engine (pyarrow or fastparquet)
    <metric>.png          one plot per metric (matplotlib): the metric against ``plot_x``, one line per
                          combination of the other axes, mean over seeds with their standard deviation
    grid.toml             the grid the sweep ran

A failed point is retried (``retries``, default 2) and, when it still fails, reported on standard error and in the
table (status ``failed`` with the error) -- never dropped; the exit status is then 1. Interrupted sweeps resume:
run the same command again and the points already in ``points/`` are skipped (failed ones run again).

Many machines: start a Dask scheduler on one and workers that import sia on the others, then name the scheduler
(under Slurm, ``srun`` the worker line inside the allocation)::

    dask-scheduler --port 8786                                                  # on the head machine
    PYTHONPATH=/path/to/build/python dask-worker tcp://head:8786 --nthreads 1 --nworkers 8   # on each machine
    python3 -m sia.sweep GRID.toml --scheduler tcp://head:8786

The sweep checks first that every worker imports sia. Workers that read file workloads need the files at the same
paths (a shared file system); the results come back to this process, which writes every output file.

GRID.toml::

    [sweep]
    name = "knobs"              # output directory sweep-out/<name> unless --out; default: the file's stem
    retries = 2                 # Dask retries of a failed point
    plot_x = "p"                # x axis of the plots (default: the first numeric axis with several values)
    plot_metrics = ["avg_jct_h", "makespan_h"]   # default: avg_jct_h, p99_jct_h, makespan_h
    plot_average = ["workload"] # axes averaged in the plots besides seed (mean and standard deviation)
    jobs_tables = false         # also write jobs/<key>.csv per point

    [base]                      # keyword arguments of sia.simulate common to every point
    cluster = "paper-heterogeneous"
    jobs = 20                   # synthetic workload: jobs, rate, hours (seed comes from the grid)
    rate = 30

    [workloads.philly1]         # named workloads for the grid's `workload` axis: a CSV `path` (relative to this
    path = "../shared/data/sia-artifact/workloads/philly/workload-1.csv"     # file) or synthetic jobs/rate/hours,
    [workloads.small]           # plus any sia.simulate argument that goes with it (profiles, mix, horizon, ...)
    jobs = 12
    [workloads.philly]          # a directory: one workload per *.csv, named philly/<file stem>
    path = "../shared/data/sia-artifact/workloads/philly"

    [grid]                      # axes: every combination of their values is one point
    policy = ["sia", "gavel"]
    "sia.p" = [-1, -0.5, 0.5]   # a policy option: policy.key applies to that policy only; a bare key to the
    lambda = [1.1, 2.0]         # policies declaring it (as sia_simulate --policy-option); others ignore it
    interval = [60, 120]        # round length (s); any sia.simulate argument may be an axis
    seed = [1, 2, 3]            # synthetic workload seed; ignored by file workloads
    workload = ["small", "philly1"]

A value that does not apply to a point (``sia.p`` for gavel, ``seed`` for a file workload) is left out of it, and
points that become identical run once. Every axis and base key must be a sia.simulate argument or some policy's
option, checked before anything runs. Each simulation uses one thread (``threads = 1``) unless set; ``time_limit``
(wall seconds) fails a point that runs longer. Neither is part of a point's key: changing them keeps done points.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import itertools
import json
import math
import os
import sys
import time
import tomllib
import uuid
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from . import sim

DEFAULT_METRICS = ("avg_jct_h", "p99_jct_h", "makespan_h")
_SYNTHETIC = ("seed", "rate", "hours", "jobs")


class GridError(ValueError):
    """A GRID.toml that cannot be run (names the file and the entry)."""


def _simulate_args() -> set:
    params = inspect.signature(sim.simulate).parameters
    return {n for n, p in params.items() if p.kind is not inspect.Parameter.VAR_KEYWORD} - {"policy_options"}


def load_grid(path) -> dict:
    """Reads GRID.toml; raises GridError naming the file on bad TOML."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except OSError as e:
        raise GridError(f"{path}: cannot read ({e.strerror})") from None
    except tomllib.TOMLDecodeError as e:
        raise GridError(f"{path}: {e}") from None
    doc.setdefault("sweep", {}).setdefault("name", path.stem)
    doc["_dir"] = str(path.resolve().parent)
    doc["_source"] = str(path)
    return doc


def expand(grid: Mapping) -> list:
    """The points of a grid (load_grid's dict): a list of parameter dicts, in grid order, duplicates removed.

    Each point holds sia.simulate's keyword arguments plus ``workload`` (a name of [workloads], or absent for the
    base's synthetic workload) and its policy options under their bare keys.
    """
    src = grid.get("_source", "grid")
    allowed = {"sweep", "base", "workloads", "grid", "_dir", "_source"}
    for k in grid:
        if k not in allowed:
            raise GridError(f"{src}: unknown table [{k}] (tables: sweep, base, workloads, grid)")
    sim_args = _simulate_args() - {"workload"}
    policies = sim.policies()
    option_owners: dict = {}
    for name, info in policies.items():
        for key in info.options:
            option_owners.setdefault(key, set()).add(name)

    def check_key(where: str, key: str):
        if key == "workload" or key in sim_args:
            return
        if "." in key:
            pol, opt = key.split(".", 1)
            if pol not in policies:
                raise GridError(f"{src}: {where}: '{key}': no policy '{pol}' (policies: {', '.join(policies)})")
            if opt not in policies[pol].options:
                raise GridError(f"{src}: {where}: '{key}': policy '{pol}' has no option '{opt}' "
                                f"(options: {', '.join(policies[pol].options)})")
            return
        if key.rstrip("_") not in option_owners:
            raise GridError(f"{src}: {where}: '{key}' is neither a sia.simulate argument nor any policy's option")

    base = dict(grid.get("base", {}))
    for k in base:
        check_key("[base]", k)
    if "workload" in base:
        raise GridError(f"{src}: [base]: name workloads in [workloads] and choose them with the grid's `workload`")
    workloads = grid.get("workloads", {})
    for name, w in workloads.items():
        if not isinstance(w, Mapping):
            raise GridError(f"{src}: [workloads]: '{name}' must be a table")
        for k in w:
            if k != "path":
                check_key(f"[workloads.{name}]", k)
        if "path" in w and any(k in w for k in _SYNTHETIC):
            raise GridError(f"{src}: [workloads.{name}]: a CSV path or synthetic {'/'.join(_SYNTHETIC)}, not both")
    workloads, expansions = _expand_workloads(workloads, Path(grid.get("_dir", ".")), src)
    axes = {}
    for k, v in grid.get("grid", {}).items():
        check_key("[grid]", k)
        values = list(v) if isinstance(v, list) else [v]
        if not values:
            raise GridError(f"{src}: [grid]: '{k}' has no values")
        if k == "workload":
            for name in values:
                if name not in expansions:
                    raise GridError(f"{src}: [grid]: workload '{name}' is not in [workloads] "
                                    f"(known: {', '.join(expansions) or 'none'})")
            values = [x for name in values for x in expansions[name]]
        axes[k] = values
    if not axes:
        axes = {"policy": [base.get("policy", "sia")]}

    points, seen = [], set()
    for combo in itertools.product(*axes.values()):
        raw = dict(base)
        chosen = dict(zip(axes, combo))
        wname = chosen.get("workload")
        if wname is not None:
            wdef = dict(workloads[wname])
            if "path" in wdef:
                for k in _SYNTHETIC:
                    raw.pop(k, None)
            raw.update(wdef)
        raw.update(chosen)
        point = _effective(raw, policies)
        key = point_key(point)
        if key not in seen:
            seen.add(key)
            points.append(point)
    return points


def _expand_workloads(workloads: Mapping, base_dir: Path, src: str):
    """Workload definitions with absolute CSV paths and their content hashes; a directory becomes one workload per
    ``*.csv`` (named ``<name>/<file stem>``). Returns (definitions by name, names each grid name stands for)."""
    out, expansions = {}, {}
    for name, w in workloads.items():
        if "path" not in w:
            out[name], expansions[name] = dict(w), [name]
            continue
        p = Path(w["path"])
        p = p if p.is_absolute() else base_dir / p
        if p.is_dir():
            files = sorted(p.glob("*.csv"))
            if not files:
                raise GridError(f"{src}: [workloads.{name}]: directory {p} holds no *.csv workload")
            names = [f"{name}/{f.stem}" for f in files]
        elif p.is_file():
            files, names = [p], [name]
        else:
            raise GridError(f"{src}: [workloads.{name}]: {p}: no such workload file or directory")
        expansions[name] = names
        for n, f in zip(names, files):
            # The key holds the file's content, not its path: a moved checkout resumes, an edited workload reruns.
            digest = hashlib.sha256(f.read_bytes()).hexdigest()[:16]
            out[n] = {**{k: v for k, v in w.items() if k != "path"}, "path": str(f.resolve()),
                      "workload_sha256": digest}
    return out, expansions


def _effective(raw: Mapping, policies: Mapping) -> dict:
    """Drops what does not apply to the point: other policies' options, the seed of a file workload."""
    sim_args = _simulate_args()
    policy = raw.get("policy", "sia")
    info = policies.get(policy)
    out = {}
    for k, v in raw.items():
        if k in sim_args or k in ("workload", "path", "workload_sha256"):
            if k in _SYNTHETIC and "path" in raw:
                continue
            out[k] = v
        elif "." in k:
            pol, opt = k.split(".", 1)
            if pol == policy:
                out[opt] = v
        elif info is not None and k.rstrip("_") in info.options:
            out[k.rstrip("_")] = v
    out["policy"] = policy
    out.setdefault("threads", 1)
    return out


# Arguments that do not change a simulation's result (threads: the policies are deterministic for any count;
# time_limit only decides whether it finishes): left out of a point's key, so changing them keeps the done points.
_NOT_IN_KEY = ("threads", "time_limit", "path")  # a file workload's key holds its content (workload_sha256)


def point_key(point: Mapping) -> str:
    """A short stable hash of a point's parameters (its file name in points/)."""
    text = json.dumps({k: v for k, v in point.items() if k not in _NOT_IN_KEY}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run_point(point: Mapping):
    """One point: sia.simulate with the point's parameters (runs in a Dask worker)."""
    kwargs = {k: v for k, v in point.items() if k not in ("workload", "path", "workload_sha256")}
    if "path" in point:
        kwargs["workload"] = point["path"]
    if "lambda" in kwargs:  # a Python keyword: simulate takes it as lambda_ (or through **)
        kwargs["lambda_"] = kwargs.pop("lambda")
    return sim.simulate(**kwargs)


def _write_json(path: Path, doc) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True, default=str))
    os.replace(tmp, path)  # a point file is whole or absent, even when the sweep is killed


def _row(result) -> dict:
    if isinstance(result, sim.SimResult):
        return result.metrics.to_dict()
    if isinstance(result, Mapping):
        return dict(result)
    raise TypeError(f"a point's run returned {type(result).__name__}: expected sia.SimResult or a dict of metrics")


def run_sweep(grid: Mapping, out: Path, client, *, retries: Optional[int] = None,
              run: Callable[[Mapping], Any] = run_point, plots: bool = True, log=sys.stderr) -> dict:
    """Runs every point of `grid` not already done in `out` on the Dask `client`; writes the table and plots.

    Returns {"points": n, "skipped": already done, "ok": n_ok, "failed": [(key, error)], "table": path,
    "plots": [paths]}. `run(point)` returns a sia.SimResult or a dict of metrics (run_point by default).
    """
    from distributed import as_completed

    out = Path(out)
    (out / "points").mkdir(parents=True, exist_ok=True)
    settings = grid.get("sweep", {})
    retries = int(settings.get("retries", 2) if retries is None else retries)
    jobs_tables = bool(settings.get("jobs_tables", False))
    if jobs_tables:
        (out / "jobs").mkdir(exist_ok=True)
    if "_source" in grid and Path(grid["_source"]).exists():
        (out / "grid.toml").write_bytes(Path(grid["_source"]).read_bytes())
    points = expand(grid)
    _check_workers(client, log)
    todo, skipped = [], 0
    for p in points:
        key = point_key(p)
        if (out / "points" / f"{key}.json").exists():
            skipped += 1
        else:
            todo.append((key, p))
    print(f"sia.sweep: {len(points)} points, {skipped} already done, {len(todo)} to run -> {out}", file=log,
          flush=True)
    futures = {}
    for key, p in todo:
        # A fresh task key per submission: a scheduler still holding an earlier sweep's task of this point (a
        # failure, an interrupted run) must not hand its state to this one.
        f = client.submit(run, p, key=f"sia-sweep-{key}-{uuid.uuid4().hex[:8]}", retries=retries, pure=False)
        futures[f] = (key, p)
    failed = []
    done = 0
    t0 = time.monotonic()
    for f in as_completed(futures):
        key, p = futures[f]
        done += 1
        label = _label(p)
        if f.status == "finished":
            try:
                result = f.result()
                row = _row(result)
            except Exception as e:  # noqa: BLE001 (a bad return value is this point's failure, not the sweep's)
                f_error = f"{type(e).__name__}: {e}"
            else:
                f_error = None
        else:
            exc = f.exception()
            f_error = f"{type(exc).__name__}: {exc}"
        if f_error is None:
            if jobs_tables and isinstance(result, sim.SimResult):
                result.jobs.to_pandas().to_csv(out / "jobs" / f"{key}.csv", index=False)
            (out / "points" / f"{key}.failed.json").unlink(missing_ok=True)
            _write_json(out / "points" / f"{key}.json", {"key": key, "status": "ok", "params": p, "metrics": row})
            summary = ", ".join(f"{m}={row[m]:.4g}" for m in DEFAULT_METRICS if isinstance(row.get(m), float))
            print(f"[{done}/{len(todo)}] {key} {label}: {summary}", file=log, flush=True)
        else:
            failed.append((key, f_error))
            _write_json(out / "points" / f"{key}.failed.json",
                        {"key": key, "status": "failed", "params": p, "error": f_error, "attempts": retries + 1})
            print(f"[{done}/{len(todo)}] {key} {label}: FAILED after {retries + 1} attempt(s): {f_error}",
                  file=log, flush=True)
        f.release()
    wall = time.monotonic() - t0
    table = write_table(out, points)
    pngs = write_plots(out, table, grid) if plots else []
    ok = sum(1 for k in map(point_key, points) if (out / "points" / f"{k}.json").exists())
    print(f"sia.sweep: {ok}/{len(points)} points done ({len(todo)} run in {wall:.1f} s), {len(failed)} failed; "
          f"table {out / 'results.csv'}" + (f"; plots {', '.join(p.name for p in pngs)}" if pngs else ""),
          file=log, flush=True)
    for key, err in failed:
        print(f"sia.sweep: point {key} failed: {err}", file=log, flush=True)
    return {"points": len(points), "skipped": skipped, "ok": ok, "failed": failed, "table": out / "results.csv",
            "plots": pngs}


def _probe():
    import sia  # noqa: F401  (what every point needs)

    return sia.__version__


def _check_workers(client, log) -> None:
    """Every worker must import this sia (same version): said once, up front, instead of one failure per point."""
    from . import __version__

    try:
        versions = client.run(_probe)
    except Exception as e:  # noqa: BLE001 (whatever the worker raised is the reason)
        raise RuntimeError(f"a Dask worker cannot import sia ({type(e).__name__}: {e}): start the workers with the "
                           "PYTHONPATH (or virtual environment) that imports sia here") from None
    if not versions:
        print("sia.sweep: the scheduler has no workers yet; points wait for them", file=log, flush=True)
    for address, v in versions.items():
        if v != __version__:
            print(f"sia.sweep: warning: worker {address} has sia {v}, this process {__version__}", file=log,
                  flush=True)


def _label(p: Mapping) -> str:
    keys = [k for k in p if k not in ("threads", "path", "workload_sha256")]
    return " ".join(f"{k}={p[k]}" for k in keys)


def write_table(out: Path, points) -> "pandas.DataFrame":  # noqa: F821
    """results.csv (and results.parquet when pandas can write it): one row per point of `points`, from points/."""
    import pandas as pd

    rows = []
    for p in points:
        key = point_key(p)
        okf, badf = out / "points" / f"{key}.json", out / "points" / f"{key}.failed.json"
        row = {"key": key}
        if okf.exists():
            doc = json.loads(okf.read_text())
            row.update(status="ok", error="")
            row.update({k: v for k, v in p.items()})
            # Metrics after the parameters; a metric named like a parameter (jobs, workload) gets a prefix, and the
            # policy is the parameter's.
            row.update({k if k not in p else f"metric_{k}": v for k, v in doc["metrics"].items() if k != "policy"})
        else:
            doc = json.loads(badf.read_text()) if badf.exists() else {"error": "not run (sweep interrupted?)"}
            row.update(status="failed" if badf.exists() else "missing", error=doc["error"])
            row.update({k: v for k, v in p.items()})
        rows.append(row)
    df = pd.DataFrame(rows)
    df.to_csv(out / "results.csv", index=False)
    import importlib.util

    if importlib.util.find_spec("pyarrow") or importlib.util.find_spec("fastparquet"):
        df.to_parquet(out / "results.parquet", index=False)
    return df


def write_plots(out: Path, table, grid: Mapping) -> list:
    """One PNG per metric: mean over seeds against the x axis, one line per combination of the other axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    settings = grid.get("sweep", {})
    ok = table[table["status"] == "ok"] if "status" in table else table
    if ok.empty:
        return []
    metrics = [m for m in settings.get("plot_metrics", DEFAULT_METRICS) if m in ok.columns]
    axes = [k for k in grid.get("grid", {}) if k in ok.columns or k.split(".", 1)[-1] in ok.columns]
    axes = [k if k in ok.columns else k.split(".", 1)[-1] for k in axes]
    averaged = ["seed", *(a.split(".", 1)[-1] for a in settings.get("plot_average", []))]
    varying = [k for k in dict.fromkeys(axes) if ok[k].astype(str).nunique(dropna=False) > 1 and k not in averaged]
    averaged = [k for k in dict.fromkeys(averaged) if k in ok and ok[k].astype(str).nunique(dropna=False) > 1]
    x = settings.get("plot_x")
    if x is not None and x not in ok.columns:
        raise GridError(f"[sweep] plot_x = '{x}': not a parameter of the points ({', '.join(axes)})")
    if x is None:
        numeric = [k for k in varying if _numeric(ok[k].dropna())]
        x = numeric[0] if numeric else (varying[0] if varying else None)
    series = [k for k in varying if k != x]
    written = []
    for m in metrics:
        many = len(series) > 0 and ok.groupby([ok[k].astype(str) for k in series]).ngroups > 4
        fig, ax = plt.subplots(figsize=(9.6 if many else 6.4, 4.2))
        groups = _groups(ok, series)
        for i, (gkey, g) in enumerate(groups):
            colour = f"C{i % 10}"
            gkey = gkey if isinstance(gkey, tuple) else (gkey,)
            name = ", ".join(f"{k}={v}" for k, v in zip(series, gkey)) or m
            if x is None:
                ax.bar([name], [g[m].mean()], yerr=[g[m].std() if len(g) > 1 else 0], color=colour)
                continue
            sub = g[g[x].notna()]
            if sub.empty:  # points without this parameter (gavel on a "sia.p" axis): their mean as a level
                ax.axhline(g[m].mean(), linestyle="--", color=colour,
                           label=f"{name} (no {x})")
                continue
            xs = sub[x] if _numeric(sub[x]) else sub[x].astype(str)
            stats = sub.assign(_x=xs).groupby("_x")[m].agg(["mean", "std", "count"]).sort_index()
            ax.errorbar(stats.index, stats["mean"], yerr=stats["std"].fillna(0), marker="o", capsize=3,
                        color=colour, label=name)
        ax.set_xlabel(x or "")
        ax.set_ylabel(m)
        ax.set_title(f"{settings.get('name', 'sweep')}: {m}" +
                     (f" (mean over {', '.join(averaged)})" if averaged else ""))
        if series and many:  # beside the axes, so that it hides no data
            ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
        elif series:
            ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        path = out / f"{m}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written


def _groups(table, series):
    """The table's rows grouped by the `series` columns, in value order (numbers numerically when they allow it)."""
    if not series:
        return [((), table)]
    try:
        keys = [table[k] for k in series]
        return list(table.groupby(keys if len(keys) > 1 else keys[0], dropna=False, sort=True))
    except TypeError:  # a column mixing numbers and text: its values as text
        keys = [table[k].astype(str) for k in series]
        return list(table.groupby(keys if len(keys) > 1 else keys[0], dropna=False, sort=True))


def _numeric(col) -> bool:
    try:
        return len(col) > 0 and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                                    for v in col)
    except TypeError:
        return False


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m sia.sweep",
                                 description="Run a grid of sia simulations on Dask (GRID.toml format: "
                                             "`python3 -c 'import sia.sweep; help(sia.sweep)'`).")
    ap.add_argument("grid", help="GRID.toml")
    ap.add_argument("--out", help="output directory (default: sweep-out/<[sweep] name>)")
    ap.add_argument("--workers", type=int, default=2, help="worker processes of the LocalCluster (default 2)")
    ap.add_argument("--scheduler", help="address of a running Dask scheduler (tcp://host:8786) instead of a "
                                        "LocalCluster; its workers must import sia")
    ap.add_argument("--dashboard", default=":0",
                    help="address of the LocalCluster's Dask dashboard (default :0, a free port; printed)")
    ap.add_argument("--retries", type=int, help="retries of a failed point (default: [sweep] retries, else 2)")
    ap.add_argument("--no-plots", action="store_true", help="write the table only")
    ap.add_argument("--list", action="store_true", help="print the points and exit")
    a = ap.parse_args(argv)
    try:
        grid = load_grid(a.grid)
        points = expand(grid)
    except ValueError as e:
        print(f"sia.sweep: {e}", file=sys.stderr)
        return 2
    if a.list:
        for p in points:
            print(point_key(p), _label(p))
        return 0
    if a.workers < 1:
        print(f"sia.sweep: --workers: must be >= 1, got {a.workers}", file=sys.stderr)
        return 2
    if a.retries is not None and a.retries < 0:
        print(f"sia.sweep: --retries: must be >= 0, got {a.retries}", file=sys.stderr)
        return 2
    out = Path(a.out) if a.out else Path("sweep-out") / str(grid["sweep"]["name"])
    from distributed import Client, LocalCluster

    # The workers are new processes: they find sia where this process found it, whatever put it on sys.path here.
    here = str(Path(__file__).resolve().parent.parent)
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if here not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([here, *filter(None, paths)])

    cluster = None
    try:
        if a.scheduler:
            client = Client(a.scheduler)
        else:
            # Processes, one thread each: simulations hold the GIL only between rounds, but a process per worker
            # keeps them apart (and is what a cluster of machines looks like).
            cluster = LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True,
                                   dashboard_address=a.dashboard)
            client = Client(cluster)
        if client.dashboard_link:
            print(f"sia.sweep: Dask dashboard {client.dashboard_link}", file=sys.stderr, flush=True)
        with client:
            r = run_sweep(grid, out, client, retries=a.retries, plots=not a.no_plots)
    except KeyboardInterrupt:
        print(f"sia.sweep: interrupted; the points done are in {out / 'points'}: run the same command to resume",
              file=sys.stderr)
        return 130
    except ValueError as e:
        print(f"sia.sweep: {e}", file=sys.stderr)
        return 2
    except (RuntimeError, OSError) as e:  # workers without sia, an unreachable scheduler
        print(f"sia.sweep: {e}", file=sys.stderr)
        return 1
    finally:
        if cluster is not None:
            cluster.close()
    return 1 if r["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
