"""Packs the sia package the CMake build made into a wheel, so that pip can install it into a venv.

The extension is C++ built by the project's CMake (python/CMakeLists.txt), not by setuptools: this file only
runs CMake on a build tree (SIA_BUILD_DIR, default <source>/build; an up-to-date tree is reused as it is) and
copies that tree's python/sia (the extension sia._sia and the pure-Python modules) into the wheel. Offline, with
Debian's setuptools and wheel:

    /usr/bin/python3 -m venv --system-site-packages VENV
    VENV/bin/pip install --no-build-isolation --no-index ./python

Environment: SIA_BUILD_DIR (the CMake build tree), SIA_CMAKE_ARGS (extra configure arguments, whitespace-separated,
used when the tree is configured here), CMAKE_BUILD_PARALLEL_LEVEL (build jobs; default: the machine's cores).
"""

import importlib.machinery
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

SOURCE_DIR = Path(__file__).resolve().parent.parent
BUILD_DIR = Path(os.environ.get("SIA_BUILD_DIR") or SOURCE_DIR / "build").resolve()


def project_version():
    text = (SOURCE_DIR / "CMakeLists.txt").read_text()
    m = re.search(r"project\(sia\s+VERSION\s+([0-9.]+)", text)
    if not m:
        sys.exit(f"setup.py: {SOURCE_DIR / 'CMakeLists.txt'}: no 'project(sia VERSION x.y.z' line")
    return m.group(1)


def cache_value(cache, name):
    m = re.search(rf"^{name}:[A-Z]+=(.*)$", cache, re.MULTILINE)
    return m.group(1) if m else None


def cmake(*args):
    print("setup.py: cmake " + " ".join(shlex.quote(str(a)) for a in args), flush=True)
    subprocess.run(["cmake", *map(str, args)], check=True)


def build_python_package():
    """Configures BUILD_DIR when needed, builds the target sia_python; returns BUILD_DIR/python/sia."""
    cache_file = BUILD_DIR / "CMakeCache.txt"
    cache = cache_file.read_text() if cache_file.exists() else None
    if cache is None or cache_value(cache, "SIA_BUILD_PYTHON") not in ("ON", "TRUE", "1"):
        # A new tree is configured as the README's set-up command does; an existing one only gains the package.
        args = ["-S", SOURCE_DIR, "-B", BUILD_DIR, "-DSIA_BUILD_PYTHON=ON"]
        if cache is None:
            # The interpreter the venv was made from, not the venv's link to it: the tree outlives the venv.
            python = getattr(sys, "_base_executable", None) or sys.executable
            args += ["-DCMAKE_BUILD_TYPE=Release", "-DSIA_WITH_GLPK=ON", f"-DPython3_EXECUTABLE={python}"]
        args += shlex.split(os.environ.get("SIA_CMAKE_ARGS", ""))
        cmake(*args)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    cmake("--build", BUILD_DIR, "--target", "sia_python", "--parallel", jobs)

    package = BUILD_DIR / "python" / "sia"
    extensions = sorted(package.glob("_sia*.so")) + sorted(package.glob("_sia*.pyd"))
    if not extensions:
        sys.exit(f"setup.py: {package}: no extension _sia after the build")
    # The tree may have been built for another interpreter (Python3_EXECUTABLE in its cache): refuse a mismatch
    # here rather than install a package that fails at import.
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    usable = [e for e in extensions if any(e.name == "_sia" + s for s in suffixes)]
    if not usable:
        built_for = cache_value(cache_file.read_text(), "Python3_EXECUTABLE")
        sys.exit(f"setup.py: {extensions[0]} was built for another Python ({built_for}) than {sys.executable} "
                 f"(extension suffixes {suffixes}); use that interpreter's venv, or another SIA_BUILD_DIR")
    return package, usable[0]


class BuildPyFromCMake(build_py):
    """build_py that copies the CMake build's sia package (extension and modules) instead of python/sia."""

    def run(self):
        package, extension = build_python_package()
        target = Path(self.build_lib) / "sia"
        if target.exists():
            shutil.rmtree(target)
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "_sia*.so", "_sia*.pyd")
        shutil.copytree(package, target, ignore=ignore)
        shutil.copy2(extension, target / extension.name)


class BinaryDistribution(Distribution):
    """The wheel holds a compiled extension: tag it for this platform and Python, install it in platlib."""

    def has_ext_modules(self):
        return True


(BUILD_DIR / "python-setuptools").mkdir(parents=True, exist_ok=True)
setup(
    name="sia",
    version=project_version(),
    description="Allocation and placement core of the Sia GPU-cluster scheduler (SOSP 2023)",
    license="Apache-2.0",
    python_requires=">=3.9",
    packages=["sia"],
    package_dir={"sia": "sia"},
    cmdclass={"build_py": BuildPyFromCMake},
    distclass=BinaryDistribution,
    zip_safe=False,
    # setuptools' own scratch directories go into the CMake build tree, not into the sources.
    options={"build": {"build_base": str(BUILD_DIR / "python-setuptools")},
             "egg_info": {"egg_base": str(BUILD_DIR / "python-setuptools")}},
)
