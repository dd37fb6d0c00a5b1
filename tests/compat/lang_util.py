"""Shared by the tests/compat language tests: kernels are written the way TileLang's public examples
are (`@tilelang.jit(out_idx=...)` builders returning a `@T.prim_func`, torch tensors in and out)
and compiled for the default target ("auto"). `make test` runs them with torch CPU tensors on the
cpu target; scripts/gpu_check.sh sets TL_COMPAT_DEVICE=cuda (tensors on the GPU, kernels for it)."""
import os

import pytest

torch = pytest.importorskip("torch")

DEVICE = os.environ.get("TL_COMPAT_DEVICE", "cpu")
if DEVICE == "cuda" and not torch.cuda.is_available():
    pytest.skip("TL_COMPAT_DEVICE=cuda but torch sees no CUDA device", allow_module_level=True)


def randn(*shape, dtype=None, seed=None):
    g = torch.Generator().manual_seed(seed) if seed is not None else None
    return torch.randn(*shape, generator=g, dtype=torch.float32).to(dtype or torch.float32).to(DEVICE)


def close(got, ref, rtol=1e-5, atol=1e-5):
    torch.testing.assert_close(got.to(torch.float64).cpu(), ref.to(torch.float64).cpu(), rtol=rtol, atol=atol)
