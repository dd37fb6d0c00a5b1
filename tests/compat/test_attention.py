"""Attention kernels written like TileLang's flash-attention examples (issue 12, item 6):

- forward with fast math on (TL_ENABLE_FAST_MATH), plain and under @tilelang.autotune: on cpu the
  exp2 of the kernel headers was wrong under -ffast-math (flash attention off by ~0.1);
- backward (preprocess; dK/dV kernel with dQ accumulated by `T.atomic_add(dQ[...], dq[i, j])` inside
  T.Parallel through a layout annotated on the global dQ; postprocess reading it back): a LayoutError on cuda (the element value was taken for a tile) and a
  wrong result on cpu (fast math);
- block-sparse attention (`if block_mask[k] != 0:` around the whole step): a SyncError on cuda
  (a per-thread buffer was always thread-dependent) and a wrong result on cpu (fast math).
The cuda lowering of the backward and block-sparse kernels also runs on the cuda emulator in CI:
tests/python/cuda/test_compat_kernels.py.
"""
import math

from attention_kernels import (blocksparse_attention, bwd_dkdv, bwd_postprocess, bwd_preprocess, configs,
                               flash_fwd, flash_fwd_tuned)
from lang_util import DEVICE, close, torch


def ref_attention(q, k, v, causal, mask=None):
    s = torch.einsum("bhqd,bhkd->bhqk", q.double(), k.double()) / math.sqrt(q.shape[-1])
    if causal:
        n = q.shape[2]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=s.device).tril().logical_not(), float("-inf"))
    if mask is not None:
        s = s.masked_fill(mask.logical_not(), float("-inf"))
    return torch.einsum("bhqk,bhkd->bhqd", torch.softmax(s, -1), v.double())


def _qkv(shape, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=g).half().to(DEVICE) for _ in range(3)]


def test_flash_fwd_fast_math():
    for causal in (False, True):
        q, k, v = _qkv((1, 2, 128, 64), 1)
        o, _ = flash_fwd(1, 2, 128, 64, causal)(q, k, v)
        close(o, ref_attention(q, k, v, causal), rtol=1e-2, atol=1e-2)


def test_flash_fwd_autotuned():
    q, k, v = _qkv((1, 1, 128, 64), 2)
    kernel = flash_fwd_tuned(1, 1, 128, 64, True)
    assert kernel.config in configs()
    o, _ = kernel(q, k, v)
    close(o, ref_attention(q, k, v, True), rtol=1e-2, atol=1e-2)


def test_attention_backward():
    B, H, N, D = 1, 2, 128, 64
    for causal in (False, True):
        g = torch.Generator().manual_seed(7)
        q, k, v, do = [torch.randn(B, H, N, D, generator=g).half().to(DEVICE) for _ in range(4)]
        o, lse = flash_fwd(B, H, N, D, causal)(q, k, v)
        delta = bwd_preprocess(B, H, N, D)(o, do)
        dq = torch.zeros(B, H, N, D, dtype=torch.float32, device=DEVICE)
        dk = torch.empty(B, H, N, D, dtype=torch.float16, device=DEVICE)
        dv = torch.empty(B, H, N, D, dtype=torch.float16, device=DEVICE)
        bwd_dkdv(B, H, N, D, causal)(q, k, v, do, lse, delta, dq, dk, dv)
        dq = bwd_postprocess(B, H, N, D)(dq)

        qr, kr, vr = (x.double().requires_grad_() for x in (q, k, v))
        ref = ref_attention(qr, kr, vr, causal)
        ref.backward(do.double())
        close(o, ref.detach(), rtol=1e-2, atol=1e-2)
        close(dq, qr.grad, rtol=2e-2, atol=2e-2)
        close(dk, kr.grad, rtol=2e-2, atol=2e-2)
        close(dv, vr.grad, rtol=2e-2, atol=2e-2)


def block_mask_for(B, H, nb, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, H, nb, nb, generator=g)
    x[..., 0] = 100  # every query block keeps its first key block (no empty rows)
    idx = torch.topk(x, 2, dim=-1).indices
    mask = torch.zeros(B, H, nb, nb, dtype=torch.bool).scatter_(-1, idx, True)
    return mask.tril()


def test_blocksparse_attention():
    B, H, N, D, blk = 1, 2, 256, 64, 64
    nb = N // blk
    for causal in (True, False):
        q, k, v = _qkv((B, H, N, D), 3)
        mask = block_mask_for(B, H, nb, 4)
        out = blocksparse_attention(B, H, N, D, nb, causal)(q, k, v, mask.to(DEVICE))
        full = torch.kron(mask.to(torch.float64), torch.ones(blk, blk, dtype=torch.float64)).bool().to(DEVICE)
        close(out, ref_attention(q, k, v, causal, full), rtol=1e-2, atol=1e-2)

