"""`import sia` stays light: the optional heavy dependencies (Dask for sweeps, matplotlib for plots, pandas for
tables) are imported only by the functions that need them, so a scheduler that only runs rounds does not pay for them
(nor need them installed). Each check runs in a fresh interpreter: this test process may have imported anything."""

import json
import os
import subprocess
import sys

HEAVY = ("dask", "distributed", "matplotlib", "pandas")

# Makes the heavy modules impossible to import, as on a machine without them.
BLOCK = """
import importlib.abc, sys
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in %r:
            raise ModuleNotFoundError("No module named %%r (blocked by test_package)" %% name, name=name)
        return None
sys.meta_path.insert(0, Absent())
""" % (HEAVY,)


def run(code):
    """Runs `code` in a fresh interpreter with this process's environment (PYTHONPATH: the build tree)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=os.environ.copy())
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_import_sia_loads_no_heavy_dependency():
    out = run("import json, sys\nimport sia\nprint(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in %r)))"
              % (HEAVY,))
    assert json.loads(out.strip().splitlines()[-1]) == []


def test_the_light_parts_work_without_the_heavy_dependencies():
    # The parts that need none of them: the version, a round as JSON, the goodput model, the sweep module itself (its
    # CLI imports Dask only when it runs a grid). `import sia` imports every module but sia.sweep.
    out = run(BLOCK + """
import sia, sia.goodput, sia.fit, sia.sim, sia.sweep
with_blocker_works = False
try:
    import matplotlib
except ModuleNotFoundError:
    with_blocker_works = True
assert with_blocker_works
p = sia.goodput.PerfParams(0.1, 0.01, 0.0, 0.0, 0.0, 0.0, 1.0)
print(sia.__version__, float(sia.goodput.GoodputFunction(p, sia.goodput.GradParams(1.0, 1.0), 128).throughput(1, 1, 64, 0)) > 0)
""")
    assert out.split()[-1] == "True"

