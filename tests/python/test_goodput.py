"""sia.goodput: AdaptDL's interface over sia's C++ goodput model.

Known values (AdaptDL's formulas written out by hand here, and values the C++ unit tests assert), NumPy
broadcasting and return types, optimize against brute force within max_batch_size / atomic_bsz_range /
accumulation, the documented deviations from AdaptDL, fit_perf_params recovering known parameters, bad input.
"""

import itertools
import math

import numpy as np
import pytest

import sia
from sia.goodput import (
    GoodputFunction,
    GoodputValueError,
    GradParams,
    PerfParams,
    ProjectedGoodputFunction,
    fit_objective,
    fit_perf_params,
)
from sia_test_support import SOURCE_DIR, in_threads

# The example of tests/unit/test_goodput_model.cpp.
PERF = PerfParams(0.02, 0.001, 0.05, 0.004, 0.01, 0.002, 1.5)
GRAD = GradParams(0.5, 20.0)


# --- AdaptDL's formulas (adaptdl/goodput.py), written out independently for cross-checking -------------------


def hand_network_time(p, nodes, replicas):
    extra = np.maximum(np.asarray(replicas, dtype=float) - 2, 1e-8)
    alpha = np.where(nodes > 1, p.alpha_n, np.where(replicas > 1, p.alpha_r, 1e-8))
    beta = np.where(nodes > 1, p.beta_n, np.where(replicas > 1, p.beta_r, 1e-8))
    return alpha + beta * extra


def hand_throughput(p, nodes, replicas, atomic, accum):
    t_accum = p.alpha_c + p.beta_c * np.asarray(atomic, dtype=float)
    t_net = hand_network_time(p, np.asarray(nodes), np.asarray(replicas))
    t_optim = (t_accum**p.gamma + t_net**p.gamma) ** (1 / p.gamma)
    return replicas * atomic * (accum + 1) / (accum * t_accum + t_optim)


def hand_efficiency(g, init, batch):
    scale = np.asarray(batch, dtype=float) / init
    denom = g.var / scale + g.sqr
    gain = np.where(denom > 0, (g.var + g.sqr) / np.where(denom > 0, denom, 1), 1.0)
    return gain / scale


def candidates(init, nodes, replicas, max_batch, lo, hi, accumulation):
    """AdaptDL's 50 geometric candidates as (atomic, steps) before its clipping, with sia's split rule."""
    lo = lo or 1
    hi = hi or max_batch
    batch = np.geomspace(max(init, lo * replicas), max_batch)
    local = batch / replicas
    if accumulation:
        steps = np.ceil(local / hi - 1e-8) - 1
        steps = np.where((replicas == 1) & (local > init + 1e-8), np.maximum(steps, 1), steps).astype(int)
        atomic = np.ceil(local / (steps + 1) - 1e-8).astype(int)
    else:
        steps = np.zeros(len(local), dtype=int)
        atomic = (np.full(len(local), init) if replicas == 1 else np.ceil(local - 1e-8)).astype(int)
    return atomic, steps, lo, hi


def adaptdl_optimize(f, nodes, replicas, max_batch, lo=None, hi=None, accumulation=False):
    """AdaptDL's optimize for one configuration: candidates clipped into the atomic range, first argmax."""
    atomic, steps, lo, hi = candidates(f.init_batch_size, nodes, replicas, max_batch, lo, hi, accumulation)
    atomic = np.clip(atomic, lo, hi)
    goodput = hand_throughput(f.perf_params, nodes, replicas, atomic, steps) * hand_efficiency(
        f.grad_params, f.init_batch_size, replicas * atomic * (steps + 1)
    )
    k = int(np.argmax(goodput))
    return goodput[k], atomic[k], steps[k]


def sia_rule_optimize(f, nodes, replicas, max_batch, lo=None, hi=None, accumulation=False):
    """sia's documented rule: the same candidates, those outside [lo, hi] or above max_batch discarded."""
    atomic, steps, lo, hi = candidates(f.init_batch_size, nodes, replicas, max_batch, lo, hi, accumulation)
    best = (0.0, lo, 0)
    if max(f.init_batch_size, lo * replicas) > max_batch:
        return best
    for a, s in zip(atomic, steps):
        if a < lo or a > hi:
            continue
        g = float(f(nodes, replicas, a, s))
        if g > best[0]:
            best = (g, int(a), int(s))
    return best


# --- known values ---------------------------------------------------------------------------------------------


def test_perf_and_grad_params_are_namedtuples_like_adaptdl():
    p = PerfParams(*range(1, 8))
    assert isinstance(p, tuple) and len(p) == 7
    assert p.alpha_c == 1 and p.gamma == 7 and p[3] == p.beta_n == 4
    assert PerfParams._fields == ("alpha_c", "beta_c", "alpha_n", "beta_n", "alpha_r", "beta_r", "gamma")
    g = GradParams(0.5, 2.0)
    assert g == (0.5, 2.0) and g.sqr == 0.5 and g.var == 2.0
    f = GoodputFunction(list(PERF), list(GRAD), 64)  # any sequences, like AdaptDL
    assert f.perf_params == PERF and f._perf_params == PERF
    assert f.grad_params == GRAD and f.init_batch_size == 64
    assert "GoodputFunction(PerfParams(alpha_c=0.02" in repr(f)
    assert sia.goodput is not None
    import pickle  # picklable, e.g. to ship to Dask workers

    g = pickle.loads(pickle.dumps(f))
    assert g.perf_params == PERF and g(2, 8, 32, 1) == f(2, 8, 32, 1)


def test_values_the_cpp_unit_tests_assert():
    # tests/unit/test_goodput_model.cpp: goodput.throughput.formulas and goodput.efficiency.hand_computed.
    f = GoodputFunction(PERF, GradParams(1.0, 3.0), 100)
    ta = 0.03
    tn = 0.05 + 0.004 * 6
    to = (ta**1.5 + tn**1.5) ** (1 / 1.5)
    assert f.throughput(2, 8, 10, 3) == pytest.approx(8 * 10 * 4 / (3 * ta + to), rel=1e-14)
    assert f.efficiency(400) == pytest.approx(1 / 1.75, rel=1e-14)
    assert f.efficiency(100) == pytest.approx(1.0, rel=1e-14)
    assert GoodputFunction(PERF, GradParams(2.0, 0.0), 100).efficiency(800) == pytest.approx(1 / 8)
    assert GoodputFunction(PERF, GradParams(0.0, 5.0), 100).efficiency(800) == pytest.approx(1.0)
    # Degenerate statistics: gain 1 (AdaptDL's np.where fallback), never NaN.
    assert GoodputFunction(PERF, GradParams(0.0, 0.0), 100).efficiency(800) == pytest.approx(100 / 800)
    # An atomic range of one value (128) on 4 GPUs within 1024: batches 512 (no accumulation) or 1024 (one extra
    # micro-step, goodput.optimize.fixed_batch_and_limits' split); the better of the two wins.
    f = GoodputFunction(PERF, GRAD, 64)
    goodput, atomic, steps = f.optimize(1, 4, max_batch_size=1024, atomic_bsz_range=(128, 128), accumulation=True)
    assert atomic == 128 and steps in (0, 1)
    assert goodput == pytest.approx(max(f(1, 4, 128, 0), f(1, 4, 128, 1)), rel=1e-14)
    assert f.optimize(1, 4, max_batch_size=1024, atomic_bsz_range=(128, 128))[1:] == (128, 0)


def test_throughput_efficiency_and_goodput_match_adaptdls_formulas():
    rng = np.random.default_rng(1)
    for trial in range(20):
        p = PerfParams(*rng.uniform(1e-4, 0.2, 6), rng.uniform(1.0, 4.0))
        g = GradParams(*rng.uniform(0.0, 30.0, 2))
        init = int(rng.integers(8, 200))
        f = GoodputFunction(p, g, init)
        nodes, replicas, atomic, accum = map(
            np.array, zip(*itertools.product([1, 2, 3], [1, 2, 3, 8, 17], [8, 33, 256], [0, 1, 4]))
        )
        ok = (nodes <= replicas) & (replicas * atomic * (accum + 1) >= init)
        nodes, replicas, atomic, accum = nodes[ok], replicas[ok], atomic[ok], accum[ok]
        xput = hand_throughput(p, nodes, replicas, atomic, accum)
        batch = replicas * atomic * (accum + 1)
        eff = hand_efficiency(g, init, batch)
        np.testing.assert_allclose(f.throughput(nodes, replicas, atomic, accum), xput, rtol=1e-12)
        np.testing.assert_allclose(f.efficiency(batch), eff, rtol=1e-12)
        np.testing.assert_allclose(f(nodes, replicas, atomic, accum), xput * eff, rtol=1e-12)
        np.testing.assert_allclose(f.evaluate(nodes, replicas, atomic, accum), xput * eff, rtol=1e-12)


def test_grad_params_none_means_efficiency_one():
    f = GoodputFunction(PERF, None, 64)
    assert f.efficiency(6400) == 1.0
    assert f(2, 8, 32, 1) == pytest.approx(f.throughput(2, 8, 32, 1))


# --- broadcasting and return types -----------------------------------------------------------------------------


def test_scalars_give_numpy_float64():
    f = GoodputFunction(PERF, GRAD, 64)
    for v in (f(1, 2, 32, 0), f.throughput(1, 2, 32, 0), f.efficiency(64)):
        assert isinstance(v, np.float64) and isinstance(v, float)


def test_broadcasting_shapes_like_numpy():
    f = GoodputFunction(PERF, GRAD, 64)
    nodes = np.array([[1], [2], [4]])  # (3, 1)
    replicas = np.array([4, 8, 16, 32])  # (4,)
    out = f.throughput(nodes, replicas, 32, 1)
    assert out.shape == (3, 4)
    n, r = np.broadcast_arrays(nodes, replicas)
    np.testing.assert_allclose(out, hand_throughput(PERF, n, r, 32, 1), rtol=1e-12)
    assert f(nodes, replicas, np.array([32.0]), 0).shape == (3, 4)
    assert f.efficiency(np.full((2, 3, 1), 128)).shape == (2, 3, 1)
    assert f.throughput([1, 1], [2, 4], [16, 32], [0, 0]).shape == (2,)
    with pytest.raises(ValueError, match="broadcast"):
        f.throughput([1, 1], [2, 4, 8], 32, 0)


def test_optimize_return_types():
    f = GoodputFunction(PERF, GRAD, 128)
    goodput, atomic, steps = f.optimize(1, 3)
    assert type(goodput) is float and type(atomic) is int and type(steps) is int
    assert atomic == 43 and steps == 0  # ceil(128 / 3): AdaptDL's own example
    replicas = np.arange(1, 6)
    goodput, atomic, steps = f.optimize(np.ones_like(replicas), replicas)
    assert goodput.shape == atomic.shape == steps.shape == (5,)
    assert atomic.dtype.kind == "i" and steps.dtype.kind == "i"
    np.testing.assert_array_equal(atomic, np.ceil(128 / replicas).astype(int))
    # 2-D broadcasting, and a scalar against an array (AdaptDL's .item() fails there; sia returns the arrays).
    goodput, atomic, steps = f.optimize(np.array([[1], [2]]), np.array([2, 4, 8]), max_batch_size=1024)
    assert goodput.shape == (2, 3)
    goodput, atomic, steps = f.optimize(1, np.array([1, 2, 4]), max_batch_size=1024)
    assert goodput.shape == (3,)


# --- optimize ---------------------------------------------------------------------------------------------------

LIMITS = [
    dict(max_batch=4096, lo=16, hi=256, accumulation=True),
    dict(max_batch=4096, lo=16, hi=256, accumulation=False),
    dict(max_batch=1280, lo=64, hi=256, accumulation=True),
    dict(max_batch=1280, lo=None, hi=None, accumulation=False),
    dict(max_batch=2000, lo=None, hi=100, accumulation=True),
    dict(max_batch=512, lo=200, hi=200, accumulation=True),
]


@pytest.mark.parametrize("lim", LIMITS)
def test_optimize_is_sias_rule_within_limits_and_near_brute_force(lim):
    rng = np.random.default_rng(7)
    for trial in range(6):
        p = PerfParams(*rng.uniform(1e-4, 0.1, 6), rng.uniform(1.0, 3.0))
        f = GoodputFunction(p, GradParams(*rng.uniform(0.01, 30.0, 2)), 64)
        for replicas in (1, 2, 3, 8, 16):
            nodes = 1 if replicas <= 4 else replicas // 4
            goodput, atomic, steps = f.optimize(
                nodes, replicas, max_batch_size=lim["max_batch"], atomic_bsz_range=(lim["lo"], lim["hi"]),
                accumulation=lim["accumulation"],
            )
            expect = sia_rule_optimize(f, nodes, replicas, **lim)
            assert goodput == pytest.approx(expect[0], rel=1e-12)
            assert (atomic, steps) == expect[1:]
            lo, hi = lim["lo"] or 1, lim["hi"] or lim["max_batch"]
            if goodput == 0.0:
                assert (atomic, steps) == (lo, 0)
                continue
            batch = replicas * atomic * (steps + 1)
            assert lo <= atomic <= hi
            assert 64 <= batch <= lim["max_batch"] * (1 + 1e-9)
            assert lim["accumulation"] or steps == 0
            assert goodput == pytest.approx(float(f(nodes, replicas, atomic, steps)), rel=1e-12)
            # Brute force over every split the limits allow: the 50 candidates come within 3 %.
            best = 0.0
            for s in range(0, 65 if lim["accumulation"] else 1):
                b = np.arange(lo, hi + 1)
                b = b[(replicas * b * (s + 1) >= 64) & (replicas * b * (s + 1) <= lim["max_batch"])]
                if replicas == 1 and s == 0:
                    b = b[b <= 64] if lim["accumulation"] else b[b == 64]  # the single-replica rule
                if len(b):
                    best = max(best, float(np.max(f(nodes, replicas, b, s))))
            assert goodput <= best * (1 + 1e-12)
            assert goodput >= best * 0.97


def test_optimize_equals_adaptdl_where_it_does_not_clip():
    # With accumulation and a range every candidate respects, AdaptDL's optimize and sia's agree exactly.
    rng = np.random.default_rng(3)
    for trial in range(10):
        p = PerfParams(*rng.uniform(1e-4, 0.1, 6), rng.uniform(1.0, 3.0))
        f = GoodputFunction(p, GradParams(*rng.uniform(0.01, 30.0, 2)), 128)
        for replicas in (1, 2, 4, 8, 32):
            for kw in (dict(max_batch=8192, hi=512, accumulation=True), dict(max_batch=128 * replicas)):
                nodes = max(1, replicas // 4)
                ref = adaptdl_optimize(f, nodes, replicas, **kw)
                got = f.optimize(nodes, replicas, max_batch_size=kw["max_batch"],
                                 atomic_bsz_range=(None, kw.get("hi")), accumulation=kw.get("accumulation", False))
                assert got[0] == pytest.approx(ref[0], rel=1e-12)
                assert got[1:] == (ref[1], ref[2])


def test_optimize_discards_what_adaptdl_clips():
    # Documented deviation: 16 replicas x atomic >= 64 exceeds max_batch_size 512. AdaptDL clips the atomic batch
    # to 64 and evaluates batch 1024 > 512; sia finds no usable batch: goodput 0 at the smallest atomic batch.
    f = GoodputFunction(PERF, GRAD, 128)
    ref = adaptdl_optimize(f, 4, 16, 512, lo=64, hi=256)
    assert ref[0] > 0 and 16 * ref[1] > 512
    assert f.optimize(4, 16, max_batch_size=512, atomic_bsz_range=(64, 256)) == (0.0, 64, 0)
    # Where clipping only changes some candidates, sia's goodput is at most AdaptDL's.
    for replicas in range(1, 20):
        got = f.optimize(1, replicas, max_batch_size=1280, atomic_bsz_range=(64, 256), accumulation=True)
        ref = adaptdl_optimize(f, 1, replicas, 1280, lo=64, hi=256, accumulation=True)
        assert got[0] <= ref[0] * (1 + 1e-12)


def test_single_replica_without_accumulation_trains_at_the_initial_batch():
    f = GoodputFunction(PERF, GRAD, 128)
    assert f.optimize(1, 1, max_batch_size=1280)[1:] == (128, 0)
    goodput, atomic, steps = f.optimize(1, 1, max_batch_size=1280, accumulation=True)
    assert steps >= 1 or atomic * (steps + 1) == 128  # AdaptDL: one replica accumulates above the initial batch


# --- paper extension: Eq. 1 projection onto a GPU type known from its 1-GPU model --------------------------------


def hand_step_time(p, nodes, replicas, atomic, accum):
    t_accum = p.alpha_c + p.beta_c * np.asarray(atomic, dtype=float)
    t_net = hand_network_time(p, np.asarray(nodes), np.asarray(replicas))
    return accum * t_accum + (t_accum**p.gamma + t_net**p.gamma) ** (1 / p.gamma)


SEED = PerfParams(0.05, 0.0025, 1e-8, 1e-8, 1e-8, 1e-8, 1.0)  # a slower type, 1-GPU model only


def test_projection_is_eq_1():
    f = ProjectedGoodputFunction(PERF, SEED, GRAD, 64)
    assert f.seed_perf_params == SEED and "ProjectedGoodputFunction(" in repr(f)
    nodes, replicas = np.array([1, 1, 2, 4]), np.array([1, 4, 8, 32])
    atomic, accum = np.array([64, 32, 48, 16]), np.array([1, 0, 2, 3])
    t = hand_step_time(SEED, 1, 1, atomic, accum) * hand_step_time(PERF, nodes, replicas, atomic, accum) / \
        hand_step_time(PERF, 1, 1, atomic, accum)
    xput = replicas * atomic * (accum + 1) / t
    np.testing.assert_allclose(f.throughput(nodes, replicas, atomic, accum), xput, rtol=1e-12)
    batch = replicas * atomic * (accum + 1)
    np.testing.assert_allclose(f(nodes, replicas, atomic, accum), xput * hand_efficiency(GRAD, 64, batch), rtol=1e-12)
    # Projecting a type onto its own 1-GPU model changes nothing.
    same = GoodputFunction(PERF, GRAD, 64).project(PERF)
    np.testing.assert_allclose(same.throughput(nodes, replicas, atomic, accum),
                               GoodputFunction(PERF, GRAD, 64).throughput(nodes, replicas, atomic, accum), rtol=1e-12)
    import pickle

    assert pickle.loads(pickle.dumps(f))(2, 8, 32, 1) == f(2, 8, 32, 1)
    with pytest.raises(ValueError, match="seed_perf_params.gamma"):
        GoodputFunction(PERF, GRAD, 64).project(SEED._replace(gamma=0.9))


@pytest.mark.parametrize("lim", LIMITS[:3])
def test_projected_optimize_is_sias_rule(lim):
    f = ProjectedGoodputFunction(PERF, SEED, GRAD, 64)
    for replicas in (1, 2, 3, 8, 16):
        nodes = 1 if replicas <= 4 else replicas // 4
        got = f.optimize(nodes, replicas, max_batch_size=lim["max_batch"], atomic_bsz_range=(lim["lo"], lim["hi"]),
                         accumulation=lim["accumulation"])
        expect = sia_rule_optimize(f, nodes, replicas, **lim)
        assert got[0] == pytest.approx(expect[0], rel=1e-12)
        assert got[1:] == expect[1:]


# --- fitting ----------------------------------------------------------------------------------------------------


def synthetic_steps(p, nodes, replicas, atomic):
    accum = p.alpha_c + p.beta_c * atomic
    net = hand_network_time(p, nodes, replicas)
    return accum, (accum**p.gamma + net**p.gamma) ** (1 / p.gamma)


def test_fit_perf_params_recovers_known_parameters():
    truth = PerfParams(0.02, 0.003, 0.08, 0.01, 0.02, 0.004, 2.0)
    shapes = [(1, 1), (1, 2), (1, 4), (1, 8), (2, 8), (2, 16), (3, 24), (4, 32)]
    nodes, replicas, atomic = map(np.array, zip(*[(n, r, b) for n, r in shapes for b in (8, 16, 32, 64, 128)]))
    accum, optim = synthetic_steps(truth, nodes, replicas, atomic)
    fit = fit_perf_params(nodes, replicas, atomic, accum, optim)
    assert isinstance(fit, PerfParams)
    assert fit.alpha_c == pytest.approx(truth.alpha_c, rel=0.05)
    assert fit.beta_c == pytest.approx(truth.beta_c, rel=0.05)
    f_fit, f_true = GoodputFunction(fit, GRAD, 64), GoodputFunction(truth, GRAD, 64)
    np.testing.assert_allclose(f_fit.throughput(nodes, replicas, atomic, 0), f_true.throughput(nodes, replicas, atomic, 0),
                               rtol=0.03)
    assert f_fit.throughput(5, 40, 48, 2) == pytest.approx(f_true.throughput(5, 40, 48, 2), rel=0.05)
    assert fit_objective(fit, nodes, replicas, atomic, accum, optim) < 0.02
    assert fit_perf_params(nodes, replicas, atomic, accum, optim) == fit  # deterministic


def test_fit_perf_params_with_noise_is_as_good_as_the_truth():
    # AdaptDL's own fit test, in spirit: data from the model with noise; the fitted loss is within 10 % of the
    # generating parameters' loss, or lower.
    rng = np.random.default_rng(0)
    nodes = rng.integers(1, 11, 300)
    replicas = rng.integers(nodes, 2 * nodes + 1)
    atomic = rng.integers(32, 1024, 300)
    truth = PerfParams(0.1, 0.01, 0.5, 1.0, 1e-6, 1e-6, 1.2)
    accum = truth.alpha_c + truth.beta_c * atomic + np.maximum(rng.normal(0, 0.01, 300), 0)
    net = hand_network_time(truth, nodes, replicas) + np.maximum(rng.normal(0, 0.01, 300), 0)
    optim = (accum**truth.gamma + net**truth.gamma) ** (1 / truth.gamma)
    fit = fit_perf_params(nodes, replicas, atomic, accum, optim)
    loss_fit = fit_objective(fit, nodes, replicas, atomic, accum, optim)
    loss_true = fit_objective(truth, nodes, replicas, atomic, accum, optim)
    assert loss_fit < loss_true * 1.1


def adaptdl_scipy_fit(nodes, replicas, atomic, accum, optim):
    """AdaptDL's fit setup (start point, bounds, pinning rules) on SciPy's L-BFGS-B, numerical gradients."""
    import scipy.optimize

    params = [1e-1, 1e-2] * 3 + [1.0 + 1e-3]
    lower = [1e-8, 1e-8] * 3 + [1.0]
    upper = [np.inf, np.inf] * 3 + [10.0]
    pinned = []
    if len(np.unique(atomic)) == 1:
        params[0] = upper[0] = lower[0] = np.mean(accum) / 2
    if not np.any(nodes > 1):
        pinned += [2, 3]
    if not np.any((nodes == 1) & (replicas > 1)):
        pinned += [4, 5]
    if not np.any(replicas > 2):
        pinned += [3, 5]
    for k in pinned:
        params[k] = upper[k] = lower[k]
    result = scipy.optimize.minimize(
        lambda x: hand_objective(PerfParams(*x), nodes, replicas, atomic, accum, optim), params,
        bounds=scipy.optimize.Bounds(lower, upper, keep_feasible=True))
    return PerfParams(*result.x)


def test_fit_reaches_adaptdls_objective_or_lower():
    pytest.importorskip("scipy", reason="SciPy (python3-scipy) not installed: no AdaptDL-style fit to compare with")
    rng = np.random.default_rng(0)
    for trial in range(3):
        nodes = rng.integers(1, 6, 200)
        replicas = nodes * rng.integers(1, 5, 200)
        atomic = rng.integers(16, 512, 200)
        truth = PerfParams(*rng.uniform(1e-3, 0.3, 6), rng.uniform(1, 3))
        accum, optim = synthetic_steps(truth, nodes, replicas, atomic)
        optim = optim * rng.uniform(0.95, 1.05, 200)
        accum = np.minimum(accum * rng.uniform(0.95, 1.05, 200), optim)
        ours = fit_perf_params(nodes, replicas, atomic, accum, optim, apply_priors=False)
        theirs = adaptdl_scipy_fit(nodes, replicas, atomic, accum, optim)
        assert fit_objective(ours, nodes, replicas, atomic, accum, optim) <= hand_objective(
            theirs, nodes, replicas, atomic, accum, optim) * (1 + 1e-9)


def test_fit_pinning_rules_and_prior():
    # Single GPU, one batch size: alpha_c pinned to half the mean compute time, network terms pinned and the prior
    # alpha_n >= 1.1 alpha_r applied (AdaptDL's rules).
    accum = np.array([0.1, 0.12, 0.11])
    fit = fit_perf_params([1, 1, 1], [1, 1, 1], [32, 32, 32], accum, accum * 1.0)
    assert fit.alpha_c == pytest.approx(np.mean(accum) / 2)
    assert fit.alpha_r == pytest.approx(1e-8) and fit.alpha_n == pytest.approx(1.1e-8)
    assert fit_perf_params([1, 1], [1, 1], [16, 64], [0.1, 0.3], [0.1, 0.3], fixed_gamma=1).gamma == 1.0


def hand_objective(p, nodes, replicas, atomic, accum, optim):
    """AdaptDL's fit objective (_obj_fn) written out: RMSLE of both times plus its two regularisers."""
    pred_accum = p.alpha_c + p.beta_c * atomic
    pred_net = hand_network_time(p, nodes, replicas)
    pred_log_optim = np.log(pred_accum**p.gamma + pred_net**p.gamma) / p.gamma
    err1 = np.sqrt(np.mean((np.log(pred_accum) - np.log(accum)) ** 2))
    err2 = np.sqrt(np.mean((pred_log_optim - np.log(optim)) ** 2))
    reg = 1e-3 * (p.gamma - 1) ** 2 + 1e-2 * ((p.beta_n / p.alpha_n) ** 2 + (p.beta_r / p.alpha_r) ** 2)
    return err1 + err2 + reg


def test_fit_objective_is_adaptdls():
    rng = np.random.default_rng(11)
    nodes = rng.integers(1, 5, 50)
    replicas = nodes * rng.integers(1, 5, 50)
    atomic = rng.integers(8, 512, 50)
    truth = PerfParams(0.05, 0.002, 0.3, 0.02, 0.05, 0.004, 1.7)
    accum, optim = synthetic_steps(truth, nodes, replicas, atomic)
    optim = optim * rng.uniform(0.9, 1.1, 50)
    accum = np.minimum(accum * rng.uniform(0.9, 1.1, 50), optim)
    for p in (truth, PerfParams(0.01, 0.004, 0.1, 0.05, 0.02, 0.001, 3.0)):
        assert fit_objective(p, nodes, replicas, atomic, accum, optim) == pytest.approx(
            hand_objective(p, nodes, replicas, atomic, accum, optim), rel=1e-9)


def test_large_arrays_and_threads():
    # Above 2048 elements the kernels run without the GIL: same numbers, and threads may call them at once.

    f = GoodputFunction(PERF, GRAD, 64)
    rng = np.random.default_rng(5)
    nodes = rng.integers(1, 5, 100_000)
    replicas = nodes * rng.integers(1, 9, 100_000)
    atomic = rng.integers(64, 512, 100_000)
    accum = rng.integers(0, 4, 100_000)
    expect = hand_throughput(PERF, nodes, replicas, atomic, accum) * hand_efficiency(
        GRAD, 64, replicas * atomic * (accum + 1))
    for r in in_threads(lambda _: f(nodes, replicas, atomic, accum)):
        np.testing.assert_allclose(r, expect, rtol=1e-12)
    goodput, b, s = f.optimize(nodes[:5000], replicas[:5000], max_batch_size=4096, atomic_bsz_range=(16, 256),
                               accumulation=True)
    assert goodput.shape == (5000,) and np.all(goodput > 0) and np.all((16 <= b) & (b <= 256))
    with pytest.raises(ValueError, match=r"num_nodes\[99999\] = 0"):
        f.throughput(np.concatenate([nodes[:-1], [0]]), replicas, atomic, accum)


# --- bad input --------------------------------------------------------------------------------------------------


def test_bad_input_is_a_value_error_naming_the_value():
    f = GoodputFunction(PERF, GRAD, 64)
    with pytest.raises(ValueError, match=r"batch size .* = 32 < init_batch_size 64"):
        f(1, 1, 32, 0)
    with pytest.raises(AssertionError):  # where AdaptDL asserts, the error is an AssertionError too
        f(1, 1, 32, 0)
    with pytest.raises(ValueError, match=r"at index \[1\]: num_nodes 3 > num_replicas 2"):
        f.throughput([1, 3], [2, 2], 32, 0)
    with pytest.raises(ValueError, match=r"num_replicas\[1, 0\] = 1.5: must be a whole number >= 1"):
        f.throughput(1, [[2], [1.5]], 32, 0)
    with pytest.raises(ValueError, match=r"accum_steps\[0\] = -1"):
        f.throughput(1, 2, 32, [-1])
    with pytest.raises(ValueError, match=r"atomic_bsz = nan"):
        f.throughput(1, 2, math.nan, 0)
    with pytest.raises(ValueError, match=r"batch_size = 0"):
        f.efficiency(0)
    with pytest.raises(ValueError, match="perf_params.gamma: must be >= 1"):
        GoodputFunction(PerfParams(0.1, 0.01, 0, 0, 0, 0, 0.5), GRAD, 64)
    with pytest.raises(ValueError, match="perf_params.beta_c: negative time"):
        GoodputFunction(PerfParams(0.1, -0.01, 0, 0, 0, 0, 1), GRAD, 64)
    with pytest.raises(ValueError, match="grad_params.var"):
        GoodputFunction(PERF, GradParams(1.0, math.inf), 64)
    with pytest.raises(ValueError, match="init_batch_size"):
        GoodputFunction(PERF, GRAD, 0)
    with pytest.raises(ValueError, match="max_batch_size 32 < init_batch_size 64"):
        f.optimize(1, 1, max_batch_size=32)
    with pytest.raises(ValueError, match="min 300 > max 200"):
        f.optimize(1, 1, max_batch_size=1024, atomic_bsz_range=(300, 200))
    with pytest.raises(ValueError, match="atomic_bsz_range min"):
        f.optimize(1, 1, atomic_bsz_range=(0.5, 200))
    with pytest.raises(ValueError, match=r"num_nodes 2 > num_replicas 1"):
        f.optimize(2, 1)
    with pytest.raises(ValueError, match=r"accum_step_time 0.2 > optim_step_time 0.1"):
        fit_perf_params([1], [1], [32], [0.2], [0.1])
    with pytest.raises(ValueError, match=r"accum_step_time 1e-300 is too small next to optim_step_time 1e\+300"):
        fit_perf_params([1], [1], [32], [1e-300], [1e300])
    with pytest.raises(ValueError, match=r"num_nodes = 1e\+300: must be a whole number"):
        f.throughput(1e300, 1e300, 32, 0)
    with pytest.raises(ValueError, match="no observations"):
        fit_perf_params([], [], [], [], [])
    with pytest.raises(ValueError, match=r"optim_step_time\[1\] = 0: must be a finite number > 0"):
        fit_perf_params([1, 1], [1, 1], [32, 32], [0.1, 0.1], [0.2, 0])
    assert issubclass(GoodputValueError, ValueError)


def test_readme_example(tmp_path):
    """The README's snippet (section "Goodput models") runs and prints what its comment says."""
    import subprocess
    import sys

    section = (SOURCE_DIR / "README.md").read_text().split("### Goodput models: `sia.goodput`", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    expected = code.rsplit("# ", 1)[1].strip()
    script = tmp_path / "readme_goodput.py"
    script.write_text(code)
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == expected
