"""CI without a GPU: every kernel of cuda_kernels.py compiles
through the cuda backend (lower + codegen + NVRTC) for sm_80 and sm_90a, without spills."""
import os
import re

import pytest

from tilelang import _core

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


def _longest_repeated_run(src):
    """The longest run of consecutive source lines that are equal once integer constants are
    blanked out (`C_local[0] = 0; C_local[1] = 0; ...`)."""
    best, cur, prev = 0, 0, None
    for line in src.splitlines():
        norm = re.sub(r"\d+", "#", line.strip())
        if norm in ("}", "{"):  # the closing braces of nested blocks
            norm = ""
        cur = cur + 1 if norm and norm == prev else 1
        prev = norm
        best = max(best, cur)
    return best


@pytest.mark.parametrize("arch", COMPILE_ARCHS)
@pytest.mark.parametrize("name", list(KERNELS))
def test_regular_runs_are_loops(name, arch):
    """Statements that differ only in affine integer constants are emitted as `#pragma unroll`
    loops (reroll_loops), not spelled out: a GEMM's fragment clear is one loop, not 128 stores.
    (Issue 11, item 2: the source was 3.7x larger.)"""
    src = _core.cuda.lower_func(KERNELS[name].ir, arch)[1].split("/* tl-launch")[0]  # the kernel, not its launch data
    assert _longest_repeated_run(src) < 4, src


def _copy_1d(n, threads):
    import tilelang.language as T

    @T.prim_func
    def main(A: T.Tensor((n,), "float16"), B: T.Tensor((n,), "float16")):
        with T.Kernel(1, threads=threads) as _:
            T.copy(A, B)

    return main


def test_long_loops_are_not_fully_unrolled():
    """TileLang's copy puzzle (one thread copies 2^18 halves): fully unrolled, the 32768-trip copy
    loop took NVRTC minutes. Long loops that index no register array get a partial unroll; short
    loops and loops over register arrays (a fragment clear) stay fully unrolled."""
    src = _core.cuda.lower_func(_copy_1d(1 << 18, 1).ir, "sm_90a")[1]
    assert re.search(r"#pragma unroll 4\s*\n\s*for \(int \w+ = 0; \w+ < 32768;", src), src
    short = _core.cuda.lower_func(_copy_1d(256, 1).ir, "sm_90a")[1]
    assert re.search(r"#pragma unroll\s*\n\s*for \(int \w+ = 0; \w+ < 32;", short), short
    for name in ("gemm_f16_nn", "flash_d128"):  # register arrays: every loop fully unrolled
        src = _core.cuda.lower_func(KERNELS[name].ir, "sm_90a")[1]
        assert "#pragma unroll 4" not in src, src


@requires_nvrtc
def test_long_copy_compiles_quickly():
    r = build(_copy_1d(1 << 18, 1), "sm_90a")
    assert r["cubin"][:4] == b"\x7fELF"


def _mla_like(heads=64, dim=512, block_n=64, seqlen=1024):
    import tilelang.language as T

    @T.prim_func
    def main(Q: T.Tensor((132, heads, dim), "float16"), KV: T.Tensor((132, seqlen, dim), "float16"),
             Output: T.Tensor((132, heads, dim), "float16")):
        with T.Kernel(132, threads=256) as bid:
            Q_shared = T.alloc_shared((heads, dim), "float16")
            KV_shared = T.alloc_shared((block_n, dim), "float16")
            S_shared = T.alloc_shared((heads, block_n), "float16")
            O_shared = T.alloc_shared((heads, dim), "float16")
            acc_s = T.alloc_fragment((heads, block_n), "float32")
            acc_o = T.alloc_fragment((heads, dim), "float32")
            T.copy(Q[bid, 0:heads, :], Q_shared)
            T.fill(acc_o, 0)
            for k in T.Pipelined(seqlen // block_n, num_stages=2):
                T.copy(KV[bid, k * block_n:(k + 1) * block_n, :], KV_shared)
                T.gemm(Q_shared, KV_shared, acc_s, transpose_B=True, clear_accum=True)
                T.copy(acc_s, S_shared)
                T.gemm(S_shared, KV_shared, acc_o)
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bid, 0:heads, :])

    return main


@requires_nvrtc
def test_epilogue_buffer_reuses_pipeline_stages_when_persistent_form_does_not_fit():
    """TileLang's MLA decode: Q (64 KiB) + 2 KV stages (128 KiB) + O (64 KiB) do not fit the 227 KiB
    of an sm_90a block when every buffer stays live across a persistent tile loop; one tile per
    block, O takes the stages' bytes after the main loop (the warp-specialized branches run at once)."""
    src = _core.cuda.lower_func(_mla_like().ir, "sm_90a")[1]
    smem = int(re.search(r"^smem (\d+)", src, re.M).group(1))
    assert smem <= 232448, smem
    assert "tile_iter" not in src  # the persistent form was given up
    r = build(_mla_like(), "sm_90a")
    assert r["cubin"][:4] == b"\x7fELF"


@requires_nvrtc
def test_parallel_over_a_bounded_runtime_extent_compiles():
    """TileLang's test_tilelang_language_parallel: `T.Parallel(T.min(valid_len, max_len))`."""
    import tilelang.language as T

    @T.prim_func
    def main(A: T.Tensor((512,), "float32"), B: T.Tensor((512,), "float32"), valid_len: T.int32):
        with T.Kernel(1, threads=256) as _:
            for i in T.Parallel(512):
                B[i] = 0.0
            span = T.min(valid_len, 512)
            for i in T.Parallel(span):
                B[i] = A[i] - 1.0

    r = build(main, "sm_90a")
    assert r["cubin"][:4] == b"\x7fELF"
    assert re.search(r"< span|span\)", r["source"]), r["source"]
