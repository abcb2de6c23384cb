"""sia: the allocation and placement core of the Sia GPU-cluster scheduler (SOSP 2023), from Python.

The C++ library does the work (pybind11 extension ``sia._sia``); this package gives it a Pythonic face.
Build it with the project's CMake (``-DSIA_BUILD_PYTHON=ON``, the default of ``scripts/demo.sh`` and
``scripts/test.sh``) and import it from the build tree with ``PYTHONPATH=build/python``.
"""

from . import _sia
from ._sia import *  # noqa: F401,F403  (the extension's public names)
from .round import *  # noqa: F401,F403  (the round, its options and decision, the round state)

__version__ = _sia.__version__
from . import goodput  # noqa: E402,F401  (AdaptDL-compatible goodput model: sia.goodput)
from .fit import BootstrapError, ProfileFit, fit_profiles, profile_bootstrap  # noqa: E402,F401  (sia.fit)

# The simulator (python/sia/sim.py) and its sweeps (python -m sia.sweep).
from . import sim  # noqa: E402
from .sim import SimResult, load_workloads, simulate, synthetic_workload, workload_from_jobs  # noqa: E402,F401
