"""examples/python/scheduler_loop.py makes the same decisions as the C++ examples/scheduler_loop.cpp on the same
input: both run with --log, the decision logs (every job's decision and placement in every round, every node
failure) must be identical, and so must the summary line."""

import os
import subprocess
import sys

import pytest
from sia_test_support import BUILD_DIR as BUILD
from sia_test_support import SOURCE_DIR as SOURCE

CPP = BUILD / "examples" / "scheduler_loop"
PY = SOURCE / "examples" / "python" / "scheduler_loop.py"


# Seed 15 is the examples' default; seed 12 has a failure that takes a running job's configuration away.
@pytest.mark.parametrize("seed", [15, 12])
def test_python_loop_decides_as_the_cpp_loop(seed, tmp_path):
    if not CPP.exists():
        pytest.skip(f"{CPP} is not built (SIA_BUILD_EXAMPLES off?)")
    cpp_log, py_log = tmp_path / "cpp.log", tmp_path / "py.log"
    cpp = subprocess.run([str(CPP), "--seed", str(seed), "--log", str(cpp_log)], capture_output=True, text=True,
                         check=True)
    py = subprocess.run([sys.executable, str(PY), "--seed", str(seed), "--log", str(py_log)], capture_output=True,
                        text=True, check=True, env=os.environ)
    assert "invariants hold" in cpp.stdout
    assert py.stdout == cpp.stdout
    cpp_lines, py_lines = cpp_log.read_text().splitlines(), py_log.read_text().splitlines()
    assert len(cpp_lines) > 1000 and any(" failed " in line for line in cpp_lines)
    for i, (c, p) in enumerate(zip(cpp_lines, py_lines)):
        assert p == c, f"line {i + 1} of the logs differs"
    assert len(py_lines) == len(cpp_lines)
