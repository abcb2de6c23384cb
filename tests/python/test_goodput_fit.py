"""sia.fit_profiles / sia.profile_bootstrap: fitting the throughput model from profiles.

The same numbers as the program sia_fit_profiles (--json) on the same directory and seed, on a synthetic directory
written here and on the Sia artifact's profiles (../shared/data, skipped when absent); known parameters recovered
from synthetic rows given as columns, DataFrames, structured arrays or records; bad input named.
"""

import json
import subprocess

import numpy as np
import pytest

import sia
from sia.goodput import GradParams, PerfParams
from sia_test_support import BUILD_DIR, SOURCE_DIR

PROGRAM = BUILD_DIR / "examples" / "sia_fit_profiles"
ARTIFACT = SOURCE_DIR.parent / "shared" / "data" / "sia-artifact" / "profiles"

TRUTH = PerfParams(0.02, 0.003, 0.08, 0.01, 0.02, 0.004, 2.0)
SHAPES = [(1, 1), (1, 2), (1, 4), (1, 8), (2, 8), (2, 16), (3, 24), (4, 32)]
PLACEMENTS = {(1, 1): "1", (1, 2): "2", (1, 4): "4", (1, 8): "8", (2, 8): "44", (2, 16): "88", (3, 24): "888",
              (4, 32): "8888"}


def step_times(p, nodes, replicas, local_bsz):
    """AdaptDL's formulas: (step time, sync time) of one step without accumulation."""
    compute = p.alpha_c + p.beta_c * local_bsz
    extra = max(replicas - 2, 1e-8)
    if nodes > 1:
        net = p.alpha_n + p.beta_n * extra
    elif replicas > 1:
        net = p.alpha_r + p.beta_r * extra
    else:
        net = 1e-8 + 1e-8 * extra
    step = (compute**p.gamma + net**p.gamma) ** (1 / p.gamma)
    return step, step - compute


def synthetic_rows(p=TRUTH, wobble=0.0):
    rows = []
    for i, (n, r) in enumerate(SHAPES):
        for j, b in enumerate((8, 16, 32, 64, 128)):
            step, sync = step_times(p, n, r, b)
            f = 1 + wobble * ((i * 5 + j) % 7 - 3) / 3  # deterministic +-wobble on the step
            rows.append(dict(num_nodes=n, num_replicas=r, placement=PLACEMENTS[(n, r)], local_bsz=b,
                             step_time=step * f, sync_time=sync))
    return rows


def write_profiles(root, model="toy", types=("a", "b")):
    """A profiles directory: placements-<t>.csv and scalability-<t>.csv from the model, one type 1.5x slower."""
    d = root / model
    d.mkdir(parents=True)
    for k, t in enumerate(types):
        scale = 1.0 + 0.5 * k
        p = TRUTH._replace(alpha_c=TRUTH.alpha_c * scale, beta_c=TRUTH.beta_c * scale)
        rows = synthetic_rows(p, wobble=0.02)
        with open(d / f"placements-{t}.csv", "w") as f:
            f.write("placement,local_bsz,step_time,sync_time\n")
            for r in rows:
                if r["num_nodes"] == 1:
                    f.write(f"{r['placement']},{r['local_bsz']},{r['step_time']!r},{r['sync_time']!r}\n")
        with open(d / f"scalability-{t}.csv", "w") as f:
            f.write("num_nodes,num_replicas,local_bsz,step_time,sync_time\n")
            for r in rows:
                if r["num_nodes"] > 1 or r["num_replicas"] == 8:
                    f.write(f"{r['num_nodes']},{r['num_replicas']},{r['local_bsz']},{r['step_time']!r},"
                            f"{r['sync_time']!r}\n")
    (d / "validation-32.csv").write_text("progress,iteration,metric,grad_sqr,grad_var\n1,1,0.5,1.0,4.0\n")
    (d / "validation-512.csv").write_text("progress,iteration,metric,grad_sqr,grad_var\n1,1,0.5,1.0,4.0\n")
    return root


def program_json(directory, *options):
    if not PROGRAM.exists():
        pytest.skip(f"{PROGRAM} not built (SIA_BUILD_EXAMPLES=OFF)")
    p = subprocess.run([str(PROGRAM), str(directory), "--json", *options], capture_output=True, text=True,
                       timeout=300, check=True)
    return json.loads(p.stdout)


NAMES = ("alpha_c", "beta_c", "alpha_n", "beta_n", "alpha_r", "beta_r", "gamma")


def check_same_as_program(directory, seed):
    ref = program_json(directory, "--seed", str(seed))
    fits = sia.fit_profiles(directory, seed=seed)
    assert [(f.model, f.gpu_type) for f in fits] == [(r["model"], r["gpu_type"]) for r in ref["fits"]]
    for f, r in zip(fits, ref["fits"]):
        # Bit for bit: same rows, same split, same optimiser.
        assert f.params == tuple(r["params"][k] for k in NAMES)
        assert (f.rows_seen, f.rows_unseen) == (r["rows_seen"], r["rows_unseen"])
        assert f.rmsle_seen == r["rmsle_seen"] and f.rmsle_unseen == r["rmsle_unseen"]
        if f.pipeline:
            assert (f.stages, f.microbatches) == (r["params"]["stages"], r["params"]["microbatches"])
    boot = sia.profile_bootstrap(directory, seed=seed)
    assert [(b.model, b.from_type, b.to_type, b.rows, b.rmsle) for b in boot] == [
        (r["model"], r["from"], r["to"], r["rows"], r["rmsle"]) for r in ref["bootstrap"]]
    return fits


def test_same_numbers_as_sia_fit_profiles_on_a_synthetic_directory(tmp_path):
    fits = check_same_as_program(write_profiles(tmp_path), seed=3)
    assert [(f.model, f.gpu_type) for f in fits] == [("toy", "a"), ("toy", "b")]
    a = fits[0]
    assert a.rows_seen + a.rows_unseen == 40 and a.rows_unseen == 8
    assert a.rmsle_seen < 0.03 and a.rmsle_unseen < 0.05
    assert (a.init_batch_size, a.max_batch_size) == (32, 512)
    assert not a.pipeline
    f = a.goodput_function(GradParams(1.0, 4.0))
    assert f.init_batch_size == 32
    assert f.throughput(2, 16, 64, 0) == pytest.approx(16 * 64 / step_times(TRUTH, 2, 16, 64)[0], rel=0.05)


def test_projected_goodput_function_is_the_programs_eq_1(tmp_path):
    # sia_fit_profiles' bootstrap a -> b, through the Python API: the model fitted on all of a's rows (fit_profiles
    # with holdout 0 fits them in the program's order), b's 1-GPU rows fitted by fit_perf_params, projected with
    # ProjectedGoodputFunction onto b's multi-GPU rows.
    write_profiles(tmp_path)
    full = {f.gpu_type: f for f in sia.fit_profiles(tmp_path, holdout=0)}
    boot = {(b.from_type, b.to_type): b for b in sia.profile_bootstrap(tmp_path)}
    p_b = TRUTH._replace(alpha_c=TRUTH.alpha_c * 1.5, beta_c=TRUTH.beta_c * 1.5)
    rows = synthetic_rows(p_b, wobble=0.02)
    one = [r for r in rows if r["num_replicas"] == 1]
    seed = sia.goodput.fit_perf_params([1] * len(one), [1] * len(one), [r["local_bsz"] for r in one],
                                       [r["step_time"] - r["sync_time"] for r in one], [r["step_time"] for r in one])
    multi = [r for r in rows if r["num_replicas"] > 1]
    f = sia.goodput.GoodputFunction(full["a"].params, None, 8).project(seed)
    n, r, b = (np.array([row[k] for row in multi]) for k in ("num_nodes", "num_replicas", "local_bsz"))
    pred = r * b / f.throughput(n, r, b, 0)
    obs = np.array([row["step_time"] for row in multi])
    rmsle = np.sqrt(np.mean((np.log(pred) - np.log(obs)) ** 2))
    assert boot[("a", "b")].rows == len(multi)
    assert rmsle == pytest.approx(boot[("a", "b")].rmsle, rel=1e-6)


def test_same_numbers_as_sia_fit_profiles_on_the_artifact():
    if not ARTIFACT.is_dir():
        pytest.skip(f"{ARTIFACT} not present (the Sia artifact's profiles under ../shared/data)")
    fits = check_same_as_program(ARTIFACT, seed=1)
    assert len({f.model for f in fits}) >= 7
    assert any(f.pipeline for f in fits)  # gpt_pmp: the GPipe model
    with pytest.raises(ValueError, match="pipeline model"):
        next(f for f in fits if f.pipeline).goodput_function(GradParams(1, 1))


def test_rows_in_every_form_recover_known_parameters():
    rows = synthetic_rows()
    cols = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    structured = np.array([(r["num_nodes"], r["num_replicas"], r["local_bsz"], r["step_time"], r["sync_time"])
                           for r in rows],
                          dtype=[("num_nodes", "i4"), ("num_replicas", "i4"), ("local_bsz", "i4"),
                                 ("step_time", "f8"), ("sync_time", "f8")])
    forms = [cols, rows, structured, {k: v for k, v in cols.items() if k not in ("num_nodes", "num_replicas")}]
    try:
        import pandas as pd
        forms.append(pd.DataFrame(rows))
    except ImportError:
        pass
    results = [sia.fit_profiles(form, holdout=0.25, seed=5) for form in forms]
    for fits in results:
        assert len(fits) == 1 and fits == results[0]
    fit = results[0][0]
    assert (fit.model, fit.gpu_type, fit.rows_seen, fit.rows_unseen) == ("", "", 30, 10)
    assert fit.params.alpha_c == pytest.approx(TRUTH.alpha_c, rel=0.05)
    assert fit.params.beta_c == pytest.approx(TRUTH.beta_c, rel=0.05)
    assert fit.rmsle_seen < 0.02 and fit.rmsle_unseen < 0.03
    whole = sia.fit_profiles(cols, holdout=0)[0]
    assert (whole.rows_seen, whole.rows_unseen, whole.rmsle_unseen) == (40, 0, None)
    # The same rows through fit_perf_params (AdaptDL's arguments) give the same fit: one optimiser.
    direct = sia.goodput.fit_perf_params(cols["num_nodes"], cols["num_replicas"], cols["local_bsz"],
                                         cols["step_time"] - cols["sync_time"], cols["step_time"])
    assert direct == pytest.approx(whole.params, rel=1e-6, abs=1e-12)


def test_rows_grouped_by_model_and_gpu_type():
    rows = [dict(r, model=m, gpu_type=t) for m in ("x", "y") for t in ("slow", "fast") for r in synthetic_rows()]
    fits = sia.fit_profiles(rows)
    assert [(f.model, f.gpu_type) for f in fits] == [("x", "fast"), ("x", "slow"), ("y", "fast"), ("y", "slow")]
    assert all(f.rows_seen == 32 and f.rows_unseen == 8 for f in fits)


def test_pipeline_rows():
    # GPipe: per-stage forward time of a micro-batch (step_time column) and the step's sync time.
    p = PerfParams(1e-4, 0.01, 0.2, 0.01, 0.05, 0.002, 1.0)
    rows = []
    for n, g in ((1, 2), (1, 4), (1, 8), (2, 8), (2, 16)):
        for m in (1, 2, 4, 8):
            net = (p.alpha_n + p.beta_n * (g - 2)) if n > 1 else (p.alpha_r + p.beta_r * max(g - 2, 1e-8))
            rows.append(dict(num_nodes=n, num_replicas=g, local_bsz=m, step_time=p.alpha_c + p.beta_c * m,
                             sync_time=net))
    fit = sia.fit_profiles(rows, pipeline_stages={"": 2}, holdout=0)[0]
    assert (fit.stages, fit.microbatches) == (2, 48)
    assert fit.rmsle_seen < 1e-3
    assert fit.params.beta_c == pytest.approx(p.beta_c, rel=0.01)
    with pytest.raises(ValueError, match="multiple of pipeline_stages 3"):
        sia.fit_profiles(rows, pipeline_stages=3)


def test_bad_input_is_named(tmp_path):
    with pytest.raises(ValueError, match="missing column.*sync_time"):
        sia.fit_profiles({"placement": ["1"], "local_bsz": [8], "step_time": [0.1]})
    with pytest.raises(ValueError, match="different lengths"):
        sia.fit_profiles({"placement": ["1", "2"], "local_bsz": [8], "step_time": [0.1], "sync_time": [0.0]})
    with pytest.raises(ValueError, match=r"placement\[1\]"):
        sia.fit_profiles({"placement": ["1", "x2"], "local_bsz": [8, 8], "step_time": [0.1, 0.1],
                          "sync_time": [0.0, 0.0]})
    with pytest.raises(ValueError, match=r"sync_time\[0\] = 0.2: must be below step_time 0.1"):
        sia.fit_profiles({"num_nodes": [1], "num_replicas": [2], "local_bsz": [8], "step_time": [0.1],
                          "sync_time": [0.2]})
    with pytest.raises(ValueError, match=r"local_bsz\[0\] = 8.5"):
        sia.fit_profiles({"num_nodes": [1], "num_replicas": [2], "local_bsz": [8.5], "step_time": [0.1],
                          "sync_time": [0.01]})
    grouped = dict(model=["a", "b", "b"], num_nodes=[1, 1, 2], num_replicas=[1, 2, 4], local_bsz=[8, 8, 8],
                   step_time=[0.1, 0.12, np.nan], sync_time=[0.0, 0.02, 0.1])
    with pytest.raises(ValueError, match=r"fit_profiles \(b/\): step_time\[2\] = nan"):  # index among all rows
        sia.fit_profiles(grouped)
    with pytest.raises(ValueError, match=r"column num_nodes must be one-dimensional, got shape \(3, 1\)"):
        sia.fit_profiles(dict(grouped, num_nodes=[[1], [1], [2]]))
    with pytest.raises(ValueError, match="holdout must be in"):
        sia.fit_profiles(synthetic_rows(), holdout=1.0)
    with pytest.raises(ValueError, match="not a directory"):
        sia.fit_profiles(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="no model directories"):
        sia.fit_profiles(tmp_path)
    with pytest.raises(ValueError, match="expected a profiles directory"):
        sia.fit_profiles(42)
    bad = tmp_path / "p" / "m"
    bad.mkdir(parents=True)
    (bad / "placements-a.csv").write_text("placement,local_bsz,step_time,sync_time\n1,8,0.1,0.01\n2,8,oops,0.01\n")
    with pytest.raises(ValueError, match=r"placements-a.csv:3"):
        sia.fit_profiles(tmp_path / "p")
