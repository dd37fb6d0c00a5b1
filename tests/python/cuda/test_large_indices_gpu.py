"""On a GPU: the 1-D float16 add of 2^31 + 2048 elements (12 GiB of device memory) is right past
element 2^31 (it died with an illegal memory access when indices were int32)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "e2e"))
from test_large_indices import BIG, add_1d  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.torch]


def test_cuda_add_past_2_31_elements():
    import torch
    import tilelang
    free, _ = torch.cuda.mem_get_info()
    assert free > 13 * 2 ** 30, f"needs 13 GiB of free device memory, {free / 2 ** 30:.1f} GiB free"
    k = tilelang.compile(add_1d(BIG, "float16"), out_idx=[2], target="cuda")
    g = torch.Generator(device="cuda").manual_seed(31)
    a = torch.randn(BIG, device="cuda", dtype=torch.float16, generator=g)
    b = torch.randn(BIG, device="cuda", dtype=torch.float16, generator=g)
    c = k(a, b)
    torch.cuda.synchronize()
    # fp16 + fp16 rounds once either way: exact agreement with torch's add.
    for s in range(0, BIG, 1 << 28):
        e = min(BIG, s + (1 << 28))
        assert torch.equal(c[s:e], a[s:e] + b[s:e]), f"wrong elements in [{s}, {e})"
    assert torch.equal(c[-4096:], a[-4096:] + b[-4096:])
