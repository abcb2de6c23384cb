"""sia.sweep: a 2-worker LocalCluster runs a 12-point grid and writes its table and plots; a sweep resumes without
re-running done points, also after Ctrl-C; a failing point is retried, then reported (table, stderr, exit status);
the command line on its own LocalCluster and on a scheduler's address; bad grids are refused before anything runs."""

import io
import os
import signal
import subprocess
import sys
import time
import uuid

import pandas as pd
import pytest

import sia
from sia import sweep
from sia_test_support import SOURCE_DIR

distributed = pytest.importorskip("distributed")
# Dask 2022.12 on Debian's tornado warns about its own event loop set-up.
pytestmark = pytest.mark.filterwarnings("ignore:make_current is deprecated:DeprecationWarning")

GRID = """
[sweep]
name = "test"
retries = 1
plot_x = "p"
plot_metrics = ["avg_jct_h", "makespan_h"]
jobs_tables = true

[base]
jobs = 6
rate = 30

[workloads.six]
jobs = 6
[workloads.eight]
jobs = 8

[grid]
"sia.p" = [-1.0, 0.5]
interval = [60, 120]
seed = [1, 2, 3]
workload = ["six"]
"""


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def write_grid(tmp_path, text=GRID):
    f = tmp_path / "grid.toml"
    f.write_text(text)
    return sweep.load_grid(f)


def test_grid_of_12_points_writes_table_and_plots(tmp_path, client):
    grid = write_grid(tmp_path)
    out = tmp_path / "out"
    log = io.StringIO()
    r = sweep.run_sweep(grid, out, client, log=log)
    assert r["points"] == 12 and r["ok"] == 12 and not r["failed"]
    table = pd.read_csv(out / "results.csv")
    assert len(table) == 12 and set(table["status"]) == {"ok"}
    assert sorted(set(table["p"])) == [-1.0, 0.5] and sorted(set(table["seed"])) == [1, 2, 3]
    assert len(table["key"].unique()) == 12
    for png in ("avg_jct_h.png", "makespan_h.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # A point's row is that simulation's metrics.
    row = table[(table["p"] == 0.5) & (table["interval"] == 120) & (table["seed"] == 2)].iloc[0]
    direct = sia.simulate(policy="sia", p=0.5, interval=120, seed=2, jobs=6, rate=30)
    for m in ("avg_jct_h", "makespan_h", "p99_jct_h", "restarts_per_job", "rounds"):
        assert row[m] == pytest.approx(getattr(direct.metrics, m), rel=1e-12), m
    assert "[12/12]" in log.getvalue()
    for key in table["key"]:  # jobs_tables: every point's per-job records
        jobs = pd.read_csv(out / "jobs" / f"{key}.csv")
        assert len(jobs) == 6 and {"name", "jct", "gpu_hours"} <= set(jobs.columns)


def test_resume_skips_done_points(tmp_path, client):
    grid = write_grid(tmp_path)
    out = tmp_path / "out"
    sweep.run_sweep(grid, out, client, log=io.StringIO())
    done = sorted((out / "points").glob("*.json"))
    assert len(done) == 12
    for f in done[:4]:  # as if the sweep had been interrupted before these points
        f.unlink()
    before = {f: f.stat().st_mtime_ns for f in done[4:]}
    r = sweep.run_sweep(grid, out, client, log=io.StringIO())
    assert r["skipped"] == 8 and r["ok"] == 12 and not r["failed"]
    assert all(f.stat().st_mtime_ns == t for f, t in before.items())  # done points were not rewritten
    assert len(pd.read_csv(out / "results.csv")) == 12


def test_failed_point_is_retried_then_reported(tmp_path, client):
    grid = write_grid(tmp_path, GRID.replace('workload = ["six"]', 'workload = ["six", "eight"]')
                      .replace("seed = [1, 2, 3]", "seed = [1]"))
    attempts = tmp_path / "attempts"
    attempts.mkdir()

    def flaky(point):
        # Runs in a worker process: each attempt leaves a file, so the test counts them.
        (attempts / f"{sweep.point_key(point)}-{uuid.uuid4().hex}").touch()
        if point.get("jobs") == 8 and point.get("p") == 0.5 and point.get("interval") == 60:
            raise RuntimeError("this point always fails")
        if point.get("jobs") == 8 and len(list(attempts.glob(sweep.point_key(point) + "-*"))) == 1:
            raise RuntimeError("a transient failure")
        return sweep.run_point(point)

    out = tmp_path / "out"
    log = io.StringIO()
    r = sweep.run_sweep(grid, out, client, run=flaky, retries=1, log=log)
    assert r["points"] == 8 and r["ok"] == 7 and len(r["failed"]) == 1
    bad_key, err = r["failed"][0]
    assert "always fails" in err
    counts = {}
    for f in attempts.iterdir():
        k = f.name.split("-")[0]
        counts[k] = counts.get(k, 0) + 1
    assert counts[bad_key] == 2  # first attempt + 1 retry
    assert sorted(counts.values()) == [1, 1, 1, 1, 2, 2, 2, 2]  # the "eight" points failed once, then ran
    table = pd.read_csv(out / "results.csv")
    bad = table[table["key"] == bad_key].iloc[0]
    assert bad["status"] == "failed" and "always fails" in bad["error"]
    assert (table["status"] == "ok").sum() == 7
    assert f"{bad_key}" in log.getvalue() and "FAILED" in log.getvalue()
    # Resuming runs only the failed point again.
    r2 = sweep.run_sweep(grid, out, client, log=io.StringIO())
    assert r2["skipped"] == 7 and r2["ok"] == 8 and not r2["failed"]


def test_interrupted_sweep_resumes(tmp_path, client):
    f = tmp_path / "g.toml"
    f.write_text(GRID.replace("seed = [1, 2, 3]", "seed = [1, 2, 3, 4]").replace("jobs = 6\n", "jobs = 16\n"))
    out = tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-m", "sia.sweep", str(f), "--out", str(out), "--no-plots",
                          "--scheduler", client.scheduler.address], stderr=subprocess.PIPE, text=True)
    points = out / "points"
    deadline = time.monotonic() + 60
    while p.poll() is None and len(list(points.glob("*.json"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)  # Ctrl-C in the middle of the sweep
    err = p.communicate(timeout=60)[1]
    done = len(list(points.glob("*.json")))
    assert done >= 2
    if p.returncode == 130:  # it was still running (a fast machine may have finished all 16 points)
        assert "resume" in err
    grid = sweep.load_grid(f)
    r = sweep.run_sweep(grid, out, client, log=io.StringIO(), plots=False)
    assert r["points"] == 16 and r["skipped"] == done and r["ok"] == 16


def test_command_line_on_its_own_local_cluster(tmp_path):
    f = tmp_path / "g.toml"
    f.write_text(GRID.replace("seed = [1, 2, 3]", "seed = [1]").replace("interval = [60, 120]", "interval = [1e-5]")
                 .replace('"sia.p" = [-1.0, 0.5]', '"sia.p" = [-1.0]'))
    out = tmp_path / "cli"
    env = dict(os.environ)
    p = subprocess.run([sys.executable, "-m", "sia.sweep", str(f), "--out", str(out), "--retries", "0",
                        "--workers", "2"], capture_output=True, text=True, env=env, timeout=120)
    # The only point has a round length outside [0.001, 86400]: it fails with the C++ message, exit status 1.
    assert p.returncode == 1, p.stderr
    assert "interval" in p.stderr and "FAILED" in p.stderr
    table = pd.read_csv(out / "results.csv")
    assert list(table["status"]) == ["failed"] and "0.001" in table["error"][0]
    listing = subprocess.run([sys.executable, "-m", "sia.sweep", str(f), "--list"], capture_output=True, text=True,
                             env=env)
    assert listing.returncode == 0 and len(listing.stdout.splitlines()) == 1


@pytest.mark.parametrize("text,message", [
    ("[grid]\ncolour = [1]\n", "colour"),
    ("[grid]\n\"sia.nope\" = [1]\n", "nope"),
    ("[grid]\n\"nopolicy.p\" = [1]\n", "nopolicy"),
    ("[grid]\nworkload = [\"missing\"]\n", "missing"),
    ("[tables]\nx = 1\n", "tables"),
    ("[grid\n", "grid.toml"),
])
def test_bad_grids_are_refused(tmp_path, text, message):
    f = tmp_path / "grid.toml"
    f.write_text(text)
    with pytest.raises(ValueError, match=message):
        sweep.expand(sweep.load_grid(f))
    p = subprocess.run([sys.executable, "-m", "sia.sweep", str(f), "--list"], capture_output=True, text=True)
    assert p.returncode == 2 and message in p.stderr


def test_example_grid_has_at_least_12_points():
    points = sweep.expand(sweep.load_grid(SOURCE_DIR / "examples" / "python" / "sweeps" / "small.toml"))
    assert len(points) >= 12


def test_workload_directory_expands_and_keys_follow_content(tmp_path):
    import shutil

    d = tmp_path / "a" / "traces"
    d.mkdir(parents=True)
    for i, t in enumerate(("w1", "w2")):
        (d / f"{t}.csv").write_text("name,time,application,num_replicas,batch_size\n"
                                    f"j0,{i * 10},cifar10,1,128\nj1,{60 + i},cifar10,2,256\n")
    (tmp_path / "a" / "grid.toml").write_text(
        '[workloads.t]\npath = "traces"\n[base]\nprofiles = "builtin"\n[grid]\nworkload = ["t"]\n'
        'interval = [60, 120]\nseed = [1, 2]\n')
    points = sweep.expand(sweep.load_grid(tmp_path / "a" / "grid.toml"))
    # A directory is one workload per file; seed does not apply to file workloads (4 points, not 8).
    assert sorted((p["workload"], p["interval"]) for p in points) == [
        ("t/w1", 60), ("t/w1", 120), ("t/w2", 60), ("t/w2", 120)]
    assert all("seed" not in p for p in points)
    keys = {sweep.point_key(p) for p in points}
    shutil.copytree(tmp_path / "a", tmp_path / "moved")  # another checkout: the same keys (resume works)
    assert {sweep.point_key(p) for p in sweep.expand(sweep.load_grid(tmp_path / "moved" / "grid.toml"))} == keys
    (tmp_path / "moved" / "traces" / "w2.csv").write_text(
        "name,time,application,num_replicas,batch_size\nj0,0,cifar10,1,128\n")  # an edited trace runs again
    moved = {sweep.point_key(p) for p in sweep.expand(sweep.load_grid(tmp_path / "moved" / "grid.toml"))}
    assert len(moved & keys) == 2 and len(moved) == 4
    r = sweep.run_point(points[0])
    assert r.metrics.jobs == 2 and r.workload in ("w1", "w2")
    (tmp_path / "a" / "grid.toml").write_text('[workloads.t]\npath = "nowhere"\n[grid]\nworkload = ["t"]\n')
    with pytest.raises(ValueError, match="nowhere"):
        sweep.expand(sweep.load_grid(tmp_path / "a" / "grid.toml"))
