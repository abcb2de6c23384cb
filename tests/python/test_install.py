"""The package installs into a virtual environment from the source tree without network (README, "Python"), and
the installed copy imports and runs a round from outside the source and build trees.

The venv goes into the build tree; python/setup.py reuses the already-built extension of SIA_BUILD_DIR (an
up-to-date CMake target), so the install takes seconds.
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
from sia_test_support import BUILD_DIR, SOURCE_DIR



def run(cmd, **kwargs):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300, **kwargs)
    assert p.returncode == 0, f"{' '.join(map(str, cmd))} exited {p.returncode}:\n{p.stdout}\n{p.stderr}"
    return p.stdout


def test_pip_install_into_a_venv(tmp_path):
    if subprocess.run([sys.executable, "-c", "import venv, ensurepip"], capture_output=True).returncode != 0:
        pytest.skip(f"{sys.executable} has no venv (Debian: apt-get install python3-venv)")
    system_pip = subprocess.run([sys.executable, "-c", "import pip"], capture_output=True).returncode == 0
    venv = BUILD_DIR / "python-venv-test"
    shutil.rmtree(venv, ignore_errors=True)
    # The README's commands: a venv that sees Debian's NumPy, Dask..., then pip offline from the source tree. With
    # Debian's pip (python3-pip) the venv gets no pip of its own (ensurepip takes most of the time): `python -m pip`
    # there is Debian's pip, which installs into the venv all the same.
    run([sys.executable, "-m", "venv", "--system-site-packages"] + (["--without-pip"] if system_pip else []) + [venv])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["SIA_BUILD_DIR"] = str(BUILD_DIR)
    pip = [venv / "bin" / "python", "-m", "pip"]
    run(pip + ["install", "--no-build-isolation", "--no-index", SOURCE_DIR / "python"], env=env)

    # Imported from elsewhere (no PYTHONPATH, cwd outside both trees): the venv's copy, not the build tree's.
    script = (
        "import json, sys, sia\n"
        "request = json.load(open(sys.argv[1]))\n"
        "d = sia.allocate(request)\n"
        "print(json.dumps({'file': sia.__file__, 'version': sia.__version__, 'decision': d}))\n"
    )
    out = run([venv / "bin" / "python", "-c", script, SOURCE_DIR / "examples" / "requests" / "table1.json"],
              env=env, cwd=tmp_path)
    result = json.loads(out)
    site = run([venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"], env=env)
    assert pathlib.Path(result["file"]).resolve().parent == (pathlib.Path(site.strip()) / "sia").resolve()
    project = re.search(r"project\(sia\s+VERSION\s+([0-9.]+)", (SOURCE_DIR / "CMakeLists.txt").read_text())
    assert result["version"] == project.group(1)
    allocations = {a["job"]: (a["gpus"], a["gpu_type"]) for a in result["decision"]["allocations"]}
    assert allocations == {"J1": (4, "B"), "J2": (2, "A")}  # the paper's Table 1

    # pip knows it (uninstall works) and it can go away again.
    assert "sia" in run(pip + ["list", "--disable-pip-version-check"], env=env).split()
    run(pip + ["uninstall", "-y", "sia"], env=env)
    gone = subprocess.run([venv / "bin" / "python", "-c", "import sia"], capture_output=True, env=env, cwd=tmp_path)
    assert gone.returncode != 0
    shutil.rmtree(venv, ignore_errors=True)
