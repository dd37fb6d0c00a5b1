"""Test tiers. `make test` (CI, no GPU) sets TL_TEST_TIER=cpu: tests marked `gpu` (need a CUDA device)
or `torch` (need PyTorch) are deselected there — they belong to the GPU tier that
scripts/gpu_check.sh runs on a CUDA machine. Elsewhere a marked test whose requirement is missing
is skipped with the reason."""
import importlib.util
import os

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (GPU tier: scripts/gpu_check.sh)")
    config.addinivalue_line("markers", "torch: needs PyTorch (GPU tier: scripts/gpu_check.sh)")


def pytest_collection_modifyitems(config, items):
    if os.environ.get("TL_TEST_TIER") != "cpu":
        return
    keep, drop = [], []
    for item in items:
        marked = item.get_closest_marker("gpu") or item.get_closest_marker("torch")
        (drop if marked else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _gpu_missing():
    from tilelang import _core
    ok, why = _core.cuda.driver_available()
    if not ok:
        return "no CUDA driver: " + why
    return None if _core.cuda.device_count() > 0 else "no CUDA device"


def pytest_runtest_setup(item):
    if item.get_closest_marker("torch") and importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    if item.get_closest_marker("gpu"):
        why = _gpu_missing()
        if why:
            pytest.skip(why)
