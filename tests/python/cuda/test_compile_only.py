"""CI without a GPU: every kernel of cuda_kernels.py compiles
through the cuda backend (lower + codegen + NVRTC) for sm_80 and sm_90a, without spills."""
import os

import pytest

import cuda_kernels as K
from cuda_util import COMPILE_ARCHS, build, requires_nvrtc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
KERNELS = K.all_kernels()


@requires_nvrtc
@pytest.mark.parametrize("arch", COMPILE_ARCHS)
@pytest.mark.parametrize("name", list(KERNELS))
def test_kernel_compiles(name, arch):
    r = build(KERNELS[name], arch)
    assert r["cubin"][:4] == b"\x7fELF"
    for u in r["usage"]:
        assert u["spill_store_bytes"] == 0, (name, u)
        assert u["stack_frame_bytes"] == 0 or name == "assert_positive", (name, u)

# The examples under examples/ are compiled for sm_80 and sm_90a by
# tests/python/examples/test_examples.py (test_example_kernels_compile_for_cuda).
