"""sia.simulate: the same metrics as sia_simulate for the same input, workloads from every source, results as
dataclasses / NumPy / pandas, and bad parameters as ValueError with the C++ message."""

import dataclasses
import json
import math
import pickle
import subprocess

import numpy as np
import pytest

import sia
from sia_test_support import BUILD_DIR as BUILD
from sia_test_support import SOURCE_DIR as SOURCE

# Timings differ from run to run; everything else must be the same bits.
TIMING = {"wall_s", "policy_ms_median", "policy_ms_p95"}


def sia_simulate(*args):
    exe = BUILD / "examples" / "sia_simulate"
    if not exe.exists():
        pytest.skip(f"{exe} not built (SIA_BUILD_DIR)")
    out = subprocess.run([str(exe), "--json", "--no-progress", *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["runs"]


def same_metrics(py, cpp):
    d = py.metrics.to_dict()
    assert set(d) == set(cpp)  # one list of fields (sim::for_each_metric) for both
    for k, v in cpp.items():
        if k in TIMING:
            continue
        assert d[k] == v, f"{k}: python {d[k]!r}, sia_simulate {v!r}"


@pytest.mark.parametrize("policy,extra,kwargs", [
    ("sia", ["--p", "-1", "--lambda", "2"], {"p": -1, "lambda_": 2}),
    ("gavel", [], {}),
    ("pollux", ["--pollux-search", "greedy"], {"search": "greedy"}),  # the genetic search takes seconds
    ("themis", [], {}),
    ("shockwave", [], {}),
])
def test_synthetic_run_matches_sia_simulate(policy, extra, kwargs):
    cpp = sia_simulate("--policy", policy, "--jobs", "10", "--rate", "30", "--seed", "5", *extra)
    py = sia.simulate(policy=policy, jobs=10, rate=30, seed=5, **kwargs)
    assert len(cpp) == 1
    same_metrics(py, cpp[0])
    assert py.metrics.jobs == 10 and len(py.jobs) == 10


def test_workload_file_and_job_list_match_sia_simulate(tmp_path):
    w = sia.synthetic_workload(seed=2, jobs=8, rate=40)
    lines = ["name,time,application,num_replicas,batch_size,category"]
    jobs = []
    for n, t, app, rep, bsz, cat, _ in w.jobs():
        lines.append(f"{n},{t!r},{app},{rep},{bsz},{cat}")
        jobs.append({"name": n, "time": t, "application": app, "num_replicas": rep, "batch_size": bsz,
                     "category": cat})
    f = tmp_path / "mine.csv"
    f.write_text("\n".join(lines) + "\n")
    # The same jobs from a CSV file, from a list and from the generator give the same run (all on the built-in
    # catalogue; the generator's run is checked against sia_simulate above).
    ref = sia.simulate(policy="sia", jobs=8, rate=40, seed=2, interval=120)
    from_file = sia.simulate(f, policy="sia", profiles="builtin", interval=120)
    from_list = sia.simulate(jobs, policy="sia", interval=120)
    for r in (from_file, from_list):
        a, b = r.metrics.to_dict(), ref.metrics.to_dict()
        for k in b:
            if k not in TIMING and k != "workload":
                assert a[k] == b[k], k
        assert np.array_equal(r.jobs["jct"], ref.jobs["jct"])
    assert from_file.workload == "mine"


def test_artifact_workload_matches_sia_simulate(tmp_path):
    data = SOURCE.parent / "shared" / "data" / "sia-artifact"
    src = data / "workloads" / "philly" / "workload-1.csv"
    if not src.exists():
        pytest.skip(f"{src} missing (the artifact data beside the repository)")
    f = tmp_path / "philly-head.csv"  # its first 8 jobs: a small run on the artifact's profiles
    f.write_text("".join(src.read_text().splitlines(keepends=True)[:9]))
    profiles = data / "profiles"
    cpp = sia_simulate("--policy", "sia", "--workload", str(f), "--profiles", str(profiles))
    same_metrics(sia.simulate(f, policy="sia", profiles=profiles), cpp[0])


def test_results_are_dataclasses_numpy_and_pandas():
    r = sia.simulate(policy="sia", jobs=6, rate=20, seed=1, keep_rounds=True)
    assert "SimResult(policy='sia'" in repr(r) and "Metrics(" in repr(r.metrics)
    assert r.gpu_types == ["aws", "dgx-ext", "rtx"] and r.total_gpus == 64
    df = r.jobs.to_pandas()
    assert list(df["name"]) == r.jobs["name"] and len(df) == 6
    assert {"gpu_hours_aws", "gpu_hours_dgx-ext", "gpu_hours_rtx"} <= set(df.columns)
    arr = r.jobs.to_numpy()
    assert arr.shape == (6,) and np.allclose(arr["gpu_hours"], r.jobs["gpu_hours"])
    # GPU-hours per type add up to the job's GPU-hours.
    assert np.allclose(r.jobs["gpu_hours_by_type"].sum(axis=1), r.jobs["gpu_hours"])
    j = r.jobs[-1]
    assert j.completion_time is not None and math.isclose(j.jct, j.completion_time - j.submission_time)
    assert [x.name for x in r.jobs] == r.jobs["name"] == [x.name for x in r.jobs[:]]
    assert [x.name for x in r.jobs[1:3]] == r.jobs["name"][1:3]
    with pytest.raises(IndexError):
        r.jobs[6]
    assert len(r.rounds) == len(r.rounds.allocations) and len(r.rounds.to_pandas()) == len(r.rounds)
    assert all(len(a) == 5 for rnd in r.rounds.allocations for a in rnd)
    back = pickle.loads(pickle.dumps(r))  # results travel between Dask processes
    assert back.metrics == r.metrics and np.array_equal(back.jobs["jct"], r.jobs["jct"])


def test_unfinished_jobs_have_no_completion_time():
    r = sia.simulate(policy="sia", jobs=6, rate=20, seed=1, horizon=1200, truncate=True)
    assert r.metrics.completed < r.metrics.jobs
    assert any(j.completion_time is None for j in r.jobs)
    assert np.isnan(r.jobs["jct"]).sum() == r.metrics.jobs - r.metrics.completed


def test_cluster_as_dict_and_policy_listing():
    c = {"name": "tiny", "gpu_types": [{"name": "rtx", "nodes": 2, "gpus_per_node": 8}]}
    r = sia.simulate(policy="sia", jobs=4, seed=1, cluster=c)
    assert r.total_gpus == 16 and r.gpu_types == ["rtx"] and r.metrics.completed == 4
    pols = sia.sim.policies()
    assert "sia" in pols and "p" in pols["sia"].options
    assert "paper-heterogeneous" in sia.sim.cluster_presets()


@pytest.mark.parametrize("kwargs,message", [
    ({"interval": 0.0001}, "interval"),
    ({"interval": 1e6}, "interval"),
    ({"rate": -1}, "rate"),
    ({"jobs": 3_000_000}, "2000000"),
    ({"seed": -1}, "seed"),
    ({"policy": "nope"}, "nope"),
    ({"p": 50}, "p"),
    ({"colour": "red"}, "colour"),
    ({"cluster": "moon"}, "moon"),
    ({"scale": 0}, "scale"),
    ({"mix": "adaptive=50"}, "100"),
    ({"force_category": "wobbly"}, "force_category"),
])
def test_bad_parameters_raise_value_error(kwargs, message):
    base = {"jobs": 4, "seed": 1}
    base.update(kwargs)
    with pytest.raises(ValueError, match=message):
        sia.simulate(**base)


def test_bad_jobs_name_the_job():
    good = {"name": "a", "time": 0, "application": "cifar10", "num_replicas": 1, "batch_size": 128}
    with pytest.raises(ValueError, match=r"jobs\[1\]\.name: duplicate"):
        sia.simulate([good, dict(good)])
    with pytest.raises(ValueError, match=r"jobs\[1\]\.time: submission times are not sorted"):
        sia.simulate([dict(good, time=10), dict(good, name="b", time=5)])
    with pytest.raises(ValueError, match=r"jobs\[0\]: missing"):
        sia.simulate([{"name": "a"}])
    with pytest.raises(ValueError, match="no-such-model"):
        sia.simulate([dict(good, application="no-such-model")])
    with pytest.raises(ValueError, match="no such workload"):
        sia.simulate("/nonexistent/w.csv", profiles="builtin")
    with pytest.raises(ValueError, match="synthetic"):
        sia.simulate([good], seed=3)


def test_readme_snippet_prints_what_it_says(capsys):
    readme = SOURCE / "README.md"
    if not readme.exists():
        pytest.skip(f"{readme} missing")
    text = readme.read_text()
    block = text.split("### Simulator and sweeps", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(block, "README.md (Simulator and sweeps)", "exec"), {})
    expected = [line.split("#", 1)[1].strip() for line in block.splitlines()
                if line.startswith("print(") and "#" in line]
    assert capsys.readouterr().out.splitlines() == expected


def test_gil_is_released_while_simulating():
    import threading

    count, stop = [0], threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        before = count[0]
        serial = sia.simulate(policy="sia", jobs=40, rate=30, seed=4)
        during = count[0] - before
    finally:
        stop.set()
        t.join()
    assert during > 0  # the other Python thread ran while the C++ simulation did
    # Two simulations in two threads at once give the serial answers.
    out = {}
    ts = [threading.Thread(target=lambda s=s: out.__setitem__(s, sia.simulate(policy="sia", jobs=12, seed=s)))
          for s in (1, 2)]
    for x in ts:
        x.start()
    for x in ts:
        x.join()
    for s in (1, 2):
        assert np.array_equal(out[s].jobs["jct"], sia.simulate(policy="sia", jobs=12, seed=s).jobs["jct"])
    assert serial.metrics.jobs == 40


def test_progress_time_limit_and_callback_errors():
    seen = []
    r = sia.simulate(policy="sia", jobs=20, rate=30, seed=2, progress=seen.append, progress_period=0)
    assert seen and seen[-1]["done"] and seen[-1]["jobs_finished"] == 20 == seen[-1]["jobs_total"]
    assert all(not e["done"] for e in seen[:-1])
    assert [e["rounds"] for e in seen] == sorted(e["rounds"] for e in seen)
    assert seen[-1]["rounds"] == len(r.rounds)
    with pytest.raises(TimeoutError, match="time_limit"):
        sia.simulate(policy="sia", jobs=20, rate=30, seed=2, time_limit=1e-9)  # spent before the first round ends

    class Stop(Exception):
        pass

    def stop(event):
        raise Stop(event["rounds"])

    with pytest.raises(Stop):  # the callback's exception stops the simulation and comes out unchanged
        sia.simulate(policy="sia", jobs=20, rate=30, seed=2, progress=stop, progress_period=0)
    with pytest.raises(ValueError, match="progress"):
        sia.simulate(jobs=3, progress=5)
    with pytest.raises(ValueError, match="time_limit"):
        sia.simulate(jobs=3, time_limit=-1)


def test_simulate_many_matches_sia_simulate_on_a_directory(tmp_path):
    data = SOURCE.parent / "shared" / "data" / "sia-artifact"
    if not (data / "workloads" / "philly").is_dir():
        pytest.skip(f"{data / 'workloads' / 'philly'} missing (the artifact data beside the repository)")
    d = tmp_path / "heads"
    d.mkdir()
    for i in (1, 2):  # the first 8 jobs of two Philly traces
        src = data / "workloads" / "philly" / f"workload-{i}.csv"
        (d / src.name).write_text("".join(src.read_text().splitlines(keepends=True)[:9]))
    profiles = data / "profiles"
    exe = BUILD / "examples" / "sia_simulate"
    if not exe.exists():
        pytest.skip(f"{exe} not built (SIA_BUILD_DIR)")
    out = subprocess.run([str(exe), "--json", "--no-progress", "--policy", "sia,gavel", "--workload", str(d),
                          "--profiles", str(profiles), "--p", "-1"], check=True, capture_output=True, text=True)
    cpp = json.loads(out.stdout)
    many = sia.sim.simulate_many(d, policies=["sia", "gavel"], profiles=profiles, p=-1, parallel=2)
    assert list(many) == ["sia", "gavel"]
    runs = [r for pr in many.values() for r in pr.runs]
    assert len(runs) == len(cpp["runs"]) == 4
    for py_run, cpp_run in zip(runs, cpp["runs"]):
        same_metrics(py_run, cpp_run)
    for pr, agg in zip(many.values(), cpp["aggregate"]):
        a = dataclasses.asdict(pr.aggregate)
        for k, v in agg.items():
            if k not in TIMING and k != "gpu_hours_per_job_by_model_type":
                assert a[k] == v, f"{pr.policy} {k}: python {a[k]!r}, sia_simulate {v!r}"


def test_simulate_many_runs_each_workload_as_simulate_does():
    ws = [sia.synthetic_workload(seed=s, jobs=6, rate=30) for s in (1, 2)]
    many = sia.sim.simulate_many(ws, policies=("sia", "gavel"), p=-1, parallel=2,
                                 policy_options={"gavel": {"interval_s": 120}})
    for w, r in zip(ws, many["sia"].runs):
        assert np.array_equal(r.jobs["jct"], sia.simulate(w, policy="sia", p=-1).jobs["jct"])
    for w, r in zip(ws, many["gavel"].runs):  # p is sia's option only; gavel got its own interval_s
        assert np.array_equal(r.jobs["jct"], sia.simulate(w, policy="gavel", interval_s=120).jobs["jct"])
    assert many["sia"].aggregate.jobs == 12 and len(many["sia"].metrics_frame()) == 2
    assert "PolicyRuns(policy='sia'" in repr(many["sia"])
    with pytest.raises(ValueError, match="colour"):
        sia.sim.simulate_many(ws, policies=("sia", "gavel"), colour=1)
    with pytest.raises(ValueError, match="themis"):
        sia.sim.simulate_many(ws, policies=("sia",), policy_options={"themis": {}})
    with pytest.raises(ValueError, match="parallel"):
        sia.sim.simulate_many(ws, parallel=-1)
