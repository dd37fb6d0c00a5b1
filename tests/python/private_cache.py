"""A private kernel cache for a test directory: its conftest.py imports the fixtures below, so
every test there compiles into a temporary cache directory and results never depend on (or
pollute) the user's ~/.cache/tilelang. One directory per pytest process, removed at its end."""
import os
import shutil
import tempfile

import pytest

_CACHE = tempfile.mkdtemp(prefix="tl-pytest-cache-")
os.environ["TILELANG_CACHE_DIR"] = _CACHE
os.environ.pop("TILELANG_DISABLE_CACHE", None)


@pytest.fixture(scope="session", autouse=True)
def _private_cache():
    yield _CACHE
    shutil.rmtree(_CACHE, ignore_errors=True)


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(1234)
