"""tests/python/autotuner: a private kernel cache, as in tests/python/runtime."""
import os
import shutil
import tempfile

import pytest

# Every runtime test compiles into a private cache directory, so results never depend on (or
# pollute) the user's ~/.cache/tilelang.
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
