"""The compatibility tier: programs written the way TileLang's public examples and puzzles are
(eager @tilelang.jit, autotune stacked on jit, tilelang.testing, torch tensors in and out).

They run in `make test` on the cpu (torch CPU tensors) and in scripts/gpu_check.sh on cuda
(TL_COMPAT_DEVICE=cuda: tensors on the GPU, kernels compiled for it by target "auto")."""
import os

import pytest


def compat_device():
    return os.environ.get("TL_COMPAT_DEVICE", "cpu")


@pytest.fixture
def device():
    dev = compat_device()
    if dev == "cuda":
        import torch
        if not torch.cuda.is_available():
            pytest.skip("TL_COMPAT_DEVICE=cuda but torch sees no CUDA device")
    return dev


@pytest.fixture(autouse=True)
def _seed():
    import torch
    torch.manual_seed(0)
