"""Pollux's goodput model with the interface of AdaptDL's ``adaptdl.goodput``, computed by sia's C++ model.

Code written against AdaptDL switches by changing one import::

    from sia.goodput import GoodputFunction, PerfParams, GradParams, fit_perf_params

The names, argument order and defaults, NumPy broadcasting and return types are AdaptDL's:

- ``PerfParams(alpha_c, beta_c, alpha_n, beta_n, alpha_r, beta_r, gamma)`` and ``GradParams(sqr, var)`` are
  namedtuples.
- ``GoodputFunction(perf_params, grad_params, init_batch_size)``; ``f(num_nodes, num_replicas, atomic_bsz,
  accum_steps)`` = ``f.evaluate(...)`` = ``f.throughput(...) * f.efficiency(batch_size)``; the arguments broadcast
  like NumPy's operators and the result is a ``numpy.float64`` for scalars, an array otherwise.
- ``f.optimize(num_nodes, num_replicas, max_batch_size=None, atomic_bsz_range=None, accumulation=False)`` returns
  ``(goodput, atomic_bsz, accum_steps)``: Python scalars when an argument is a scalar and the broadcast shape is
  ``()``, arrays of the broadcast shape otherwise (AdaptDL fails on a scalar broadcast against an array; sia
  returns the arrays).
- ``fit_perf_params(num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time)`` returns the fitted
  ``PerfParams`` (same objective, bounds, pinning rules and prior as AdaptDL's).

Every number comes from sia's C++ model (``sia/goodput/throughput_model.hpp``, ``efficiency.hpp``,
``goodput_function.hpp``, ``fit.hpp``): the same formulas the scheduler's rounds use, so a trainer and sia agree.
Where sia differs from AdaptDL:

1. **Candidates outside ``atomic_bsz_range`` are discarded, not clipped.** AdaptDL clips each candidate's atomic
   batch into the range and evaluates the clipped configuration, whose batch may then exceed ``max_batch_size``;
   sia (like its rounds) keeps only candidates within the range and the batch limit. When none is left the
   configuration is unusable: goodput ``0.0``, ``atomic_bsz`` the smallest atomic batch allowed, ``accum_steps``
   ``0``. So sia's goodput can be lower than AdaptDL's, never for a batch AdaptDL would also have had to accept.
2. **Bad input raises** ``ValueError`` naming the argument, its index in the broadcast shape and the value: an
   evaluation below the initial batch size (AdaptDL: ``AssertionError``), ``num_nodes > num_replicas``, a
   non-integral ``num_nodes``/``num_replicas``/``accum_steps``, a non-positive batch, and ``PerfParams`` outside
   the model's domain (a negative or non-finite time, ``gamma < 1``, ``alpha_c + beta_c <= 0``; AdaptDL's own
   fit never leaves that domain, but it does not check hand-made parameters). ``ValueError`` here is also an
   ``AssertionError`` (:class:`GoodputValueError`), so code catching AdaptDL's assertions keeps working.
3. **``grad_params=None``** (sia extension): statistics not known yet, efficiency 1, goodput = throughput.
4. **``fit_perf_params``** needs ``0 < accum_step_time <= optim_step_time`` (the compute part of a step within the
   step) and minimises the same objective with sia's optimiser (NLopt L-BFGS from AdaptDL's start and from a
   least-squares start, time parameters in log space) instead of SciPy's L-BFGS-B: it reaches AdaptDL's objective
   value or a lower one (tested when SciPy is installed), and the parameters can differ where the objective is flat. Keyword options select AdaptDL's plain setup (``log_space=False``,
   ``multi_start=False``) or pin gamma (``fixed_gamma=1``).
5. **Paper extension** (not in AdaptDL): :class:`ProjectedGoodputFunction` (or ``f.project(seed_perf_params)``)
   estimates goodput on a GPU type known only from a 1-GPU profile by the paper's Eq. 1.
6. Degenerate statistics (``sqr = var = 0``) give gain 1 as in AdaptDL; sia also never returns NaN (a non-finite
   throughput or goodput is reported as 0).
7. ``optimize(..., accumulation=False)`` works with current NumPy (AdaptDL's uses ``np.int``, gone since NumPy 1.24).

Model fitting from throughput profiles (what ``sia_fit_profiles`` does) is :func:`sia.fit_profiles`
(``sia/fit.py``).
"""

import collections

import numpy as np

from . import _sia

_k = _sia._goodput

__all__ = [
    "PerfParams",
    "GradParams",
    "GoodputFunction",
    "ProjectedGoodputFunction",
    "GoodputValueError",
    "fit_perf_params",
    "fit_objective",
]

# T_accum = alpha_c + beta_c * atomic_bsz; T_network = alpha_n + beta_n * max(R - 2, 1e-8) across nodes,
# alpha_r + beta_r * max(R - 2, 1e-8) within a node; T_optim = (T_accum^gamma + T_network^gamma)^(1/gamma).
PerfParams = collections.namedtuple(
    "PerfParams", ["alpha_c", "beta_c", "alpha_n", "beta_n", "alpha_r", "beta_r", "gamma"]
)
# Squared norm of the true gradient and gradient variance, measured at the initial batch size.
GradParams = collections.namedtuple("GradParams", ["sqr", "var"])


class GoodputValueError(ValueError, AssertionError):
    """Bad input to sia.goodput: a ValueError, and an AssertionError where AdaptDL would have asserted."""


def _call(kernel, *args, **kwargs):
    # The C++ kernels raise ValueError (sia::InvalidArgument); re-raise as the dual-class error, same message.
    try:
        return kernel(*args, **kwargs)
    except GoodputValueError:
        raise
    except ValueError as e:
        raise GoodputValueError(str(e)) from None


def _floats(*args):
    """The arguments as float64 arrays broadcast to one shape (the shape is the result's)."""
    try:
        arrays = [np.asarray(a, dtype=np.float64) for a in args]
        return np.broadcast_arrays(*arrays)
    except (TypeError, ValueError) as e:
        raise GoodputValueError(f"sia.goodput: arguments not numeric or not broadcastable: {e}") from None


def _result(array):
    # AdaptDL's NumPy expressions give numpy.float64 for scalar inputs, arrays otherwise.
    return array[()] if array.ndim == 0 else array


def _perf(perf_params):
    return tuple(float(v) for v in PerfParams(*perf_params))


def _grad(grad_params):
    return None if grad_params is None else tuple(float(v) for v in GradParams(*grad_params))


class GoodputFunction(object):
    """Goodput (useful samples per second) of a job: throughput x statistical efficiency."""

    _seed_perf_params = None  # ProjectedGoodputFunction: the target type's 1-GPU model

    def __init__(self, perf_params, grad_params, init_batch_size):
        self._perf_params = PerfParams(*perf_params)
        self._grad_params = None if grad_params is None else GradParams(*grad_params)
        self._init_batch_size = init_batch_size
        self._check()

    def _check(self):
        # Checked once here (ValueError naming the field) rather than at every call.
        init = self._init_batch_size
        _call(_k.efficiency, _grad(self._grad_params), float(init), 1.0 * init)
        _call(_k.throughput, _perf(self._perf_params), self._seed(), 1.0, 1.0, 1.0, 0.0)

    def _seed(self):
        return None if self._seed_perf_params is None else _perf(self._seed_perf_params)

    def project(self, seed_perf_params):
        """This job on another GPU type known only from its 1-GPU profile (sia extension, paper Eq. 1): a
        ProjectedGoodputFunction with this function's parameters as the known type's."""
        return ProjectedGoodputFunction(self._perf_params, seed_perf_params, self._grad_params, self._init_batch_size)

    @property
    def perf_params(self):
        return self._perf_params

    @property
    def grad_params(self):
        return self._grad_params

    @property
    def init_batch_size(self):
        return self._init_batch_size

    def __repr__(self):
        return (
            f"GoodputFunction({self._perf_params!r}, {self._grad_params!r}, "
            f"init_batch_size={self._init_batch_size!r})"
        )

    def __call__(self, num_nodes, num_replicas, atomic_bsz, accum_steps):
        return self.evaluate(num_nodes, num_replicas, atomic_bsz, accum_steps)

    def evaluate(self, num_nodes, num_replicas, atomic_bsz, accum_steps):
        """Goodput of each configuration; the batch size R * atomic_bsz * (accum_steps + 1) must be at least
        the initial batch size."""
        n, r, b, s = _floats(num_nodes, num_replicas, atomic_bsz, accum_steps)
        out = _call(
            _k.evaluate,
            _perf(self._perf_params),
            self._seed(),
            _grad(self._grad_params),
            float(self._init_batch_size),
            n,
            r,
            b,
            s,
        )
        return _result(out)

    def throughput(self, num_nodes, num_replicas, atomic_bsz, accum_steps):
        """Samples per second: R * atomic_bsz * (accum_steps + 1) / step time."""
        n, r, b, s = _floats(num_nodes, num_replicas, atomic_bsz, accum_steps)
        return _result(_call(_k.throughput, _perf(self._perf_params), self._seed(), n, r, b, s))

    def efficiency(self, batch_size):
        """Statistical efficiency of a global batch: gain / scale with scale = batch_size / init_batch_size."""
        (batch,) = _floats(batch_size)
        return _result(_call(_k.efficiency, _grad(self._grad_params), float(self._init_batch_size), batch))

    def optimize(self, num_nodes, num_replicas, max_batch_size=None, atomic_bsz_range=None, accumulation=False):
        """The goodput-maximising (goodput, atomic_bsz, accum_steps) of each (num_nodes, num_replicas).

        ``max_batch_size`` defaults to the initial batch size; ``atomic_bsz_range`` is ``(min, max)`` with
        ``None`` for no bound; ``accumulation`` allows extra micro-steps per optimiser step. One replica without
        accumulation trains at the initial batch size (AdaptDL's rule)."""
        if max_batch_size is None:
            max_batch_size = self._init_batch_size
        atomic_bsz_range = atomic_bsz_range or (None, None)
        if len(atomic_bsz_range) != 2:
            raise GoodputValueError(f"optimize: atomic_bsz_range must be (min, max), got {atomic_bsz_range!r}")
        bounds = []
        for name, v in zip(("min", "max"), atomic_bsz_range):
            if v is None or v == 0:
                bounds.append(0)  # no bound
                continue
            if not np.isscalar(v) or float(v) != int(v) or int(v) < 1 or int(v) > 2**31 - 1:
                raise GoodputValueError(
                    f"optimize: atomic_bsz_range {name} must be a whole number >= 1 or None, got {v!r}"
                )
            bounds.append(int(v))
        output_scalar = np.isscalar(num_nodes) or np.isscalar(num_replicas)
        n, r = _floats(num_nodes, num_replicas)
        goodput, atomic, steps = _call(
            _k.optimize,
            _perf(self._perf_params),
            self._seed(),
            _grad(self._grad_params),
            float(self._init_batch_size),
            n,
            r,
            float(max_batch_size),
            bounds[0],
            bounds[1],
            bool(accumulation),
        )
        if output_scalar and goodput.ndim == 0:
            return goodput.item(), atomic.item(), steps.item()
        return goodput, atomic, steps


class ProjectedGoodputFunction(GoodputFunction):
    """Goodput on a GPU type B known only from its 1-GPU model ``seed_perf_params`` (sia extension: the paper's
    Eq. 1 "bootstrapping"), from the multi-GPU model ``perf_params`` of a type A the job has run on:
    ``T_B(N, R, b, s) = T_B(1, 1, b, s) * T_A(N, R, b, s) / T_A(1, 1, b, s)`` -- B keeps A's scaling and its own
    single-GPU speed. Same interface as GoodputFunction; ``seed_perf_params`` typically comes from
    ``fit_perf_params`` on B's 1-GPU steps (network terms pinned)."""

    def __init__(self, perf_params, seed_perf_params, grad_params, init_batch_size):
        self._perf_params = PerfParams(*perf_params)
        self._seed_perf_params = PerfParams(*seed_perf_params)
        self._grad_params = None if grad_params is None else GradParams(*grad_params)
        self._init_batch_size = init_batch_size
        self._check()

    @property
    def seed_perf_params(self):
        return self._seed_perf_params

    def __repr__(self):
        return (
            f"ProjectedGoodputFunction({self._perf_params!r}, {self._seed_perf_params!r}, {self._grad_params!r}, "
            f"init_batch_size={self._init_batch_size!r})"
        )


def _fit_arrays(num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time):
    arrays = _floats(num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time)
    return [a.ravel() for a in arrays]


def fit_perf_params(
    num_nodes,
    num_replicas,
    atomic_bsz,
    accum_step_time,
    optim_step_time,
    *,
    log_space=True,
    multi_start=True,
    apply_priors=True,
    fixed_gamma=None,
    max_evaluations=3000,
):
    """Fits PerfParams to measured steps: per configuration (num_nodes, num_replicas, atomic_bsz) the compute
    time of a micro-step (accum_step_time) and of a whole optimiser step (optim_step_time), in seconds.

    The objective is AdaptDL's (RMSLE of both times plus its two regularisers) with its bounds, pinning rules and
    post-fit prior. The keyword-only options are sia's (see the module docstring)."""
    arrays = _fit_arrays(num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time)
    gamma = 0.0 if fixed_gamma is None else float(fixed_gamma)
    params, _, _ = _call(
        _k.fit_perf_params,
        *arrays,
        bool(log_space),
        bool(multi_start),
        bool(apply_priors),
        gamma,
        int(max_evaluations),
    )
    return PerfParams(*params)


def fit_objective(perf_params, num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time):
    """The fit's objective at ``perf_params`` (AdaptDL's ``_obj_fn``): lower is a better fit."""
    arrays = _fit_arrays(num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time)
    return _call(_k.fit_objective, _perf(perf_params), *arrays)
