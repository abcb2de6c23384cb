"""Shared by the tests of this directory (imported as a sibling module, as test_round_vs_allocate imports
test_allocate): where the sources and the build are, and a runner for the thread-safety tests.

ctest sets SIA_SOURCE_DIR and SIA_BUILD_DIR; run by hand, the defaults are this checkout and its build/."""

import os
import pathlib
import threading

_CHECKOUT = pathlib.Path(__file__).resolve().parents[2]
SOURCE_DIR = pathlib.Path(os.environ.get("SIA_SOURCE_DIR", _CHECKOUT))
BUILD_DIR = pathlib.Path(os.environ.get("SIA_BUILD_DIR", _CHECKOUT / "build"))


def in_threads(fn, n=4):
    """[fn(0), ..., fn(n - 1)], the n calls started on n threads at once (an exception leaves None in its slot:
    the caller's comparison then fails)."""
    results = [None] * n

    def work(i):
        results[i] = fn(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results
