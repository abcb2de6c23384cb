"""The package imports from the build tree and reports the library's version."""

import re

import sia


def test_version_is_the_library_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", sia.__version__)
