"""stream_global_stores (src/target/cpu/stream_global_stores.h): a long copy of a block-local
buffer into global memory (a GEMM's C tile at the end of a block) is emitted as
tl::cpu::copy_stream, which writes whole cache lines with non-temporal stores and the unaligned
ends with plain ones. Checked against numpy on random inputs, with destinations that start off a
64-byte line (a column offset of 3 elements) and rows whose length is not a multiple of a line,
in float32, bfloat16 and int8, against the same kernel with tl.disable_cpu_stream_stores, and on
the emitted C++ (the streaming copy and the fence after it are there, or not)."""
import os

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T

OFF = {"tl.disable_cpu_stream_stores": True}


def source(kernel):
    with open(os.path.join(kernel.artifact_dir, "kernel.cc")) as f:
        return f.read()


def shift_copy(M, N, bm, dtype, col0):
    """C[:, col0:col0 + N] = A + 1 through a fragment, bm rows per block."""

    @T.prim_func
    def k(A: T.Tensor((M, N), dtype), C: T.Tensor((M, N + col0 + 5), dtype)):
        with T.Kernel(T.ceildiv(M, bm), threads=1) as bx:
            L = T.alloc_fragment((bm, N), dtype)
            T.copy(A[bx * bm, 0], L)
            for i, j in T.Parallel(bm, N):
                L[i, j] = L[i, j] + T.cast(1, dtype)
            T.copy(L, C[bx * bm, col0])

    return k


def data(shape, dtype, rng):
    if dtype == "int8":
        return rng.integers(-100, 100, shape).astype(np.int8)
    x = rng.integers(-50, 50, shape).astype(np.float32) / 4  # exact in bfloat16, and + 1 too
    return x.astype(ml_dtypes.bfloat16) if dtype == "bfloat16" else x


# (M, N, block rows, dtype, first column): rows of 1200 / 1040 / 1100 bytes (>= 1 KiB) and blocks of
# more than 512 KiB (streamed)
CASES = [(896, 300, 448, "float32", 3), (1024, 520, 512, "bfloat16", 3), (960, 1100, 480, "int8", 3),
         (896, 300, 448, "float32", 0)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[3]}-{c[0]}x{c[1]}-col{c[4]}")
def test_streamed_copy_matches_numpy(case):
    M, N, bm, dtype, col0 = case
    rng = np.random.default_rng(7)
    a = data((M, N), dtype, rng)
    out = {}
    for name, cfg in (("stream", {}), ("plain", OFF)):
        kernel = tilelang.compile(shift_copy(M, N, bm, dtype, col0), target="cpu",
                                  pass_configs={"tl.cpu_num_threads": 2, **cfg})
        src = source(kernel)
        assert ("tl::cpu::copy_stream(" in src) == (name == "stream"), src
        assert ("tl::cpu::store_fence();" in src) == (name == "stream")
        sentinel = np.array(-7, dtype=a.dtype)
        c = np.full((M, N + col0 + 5), sentinel, dtype=a.dtype)
        kernel(a, c)
        expected = (a.astype(np.float64) + 1)
        np.testing.assert_array_equal(c[:, col0:col0 + N].astype(np.float64), expected)
        assert (c[:, :col0] == sentinel).all() and (c[:, col0 + N:] == sentinel).all()  # nothing outside
        out[name] = c
    np.testing.assert_array_equal(out["stream"].view(np.uint8), out["plain"].view(np.uint8))


@pytest.mark.parametrize("M, N, bm", [(32, 64, 16), (512, 300, 256)], ids=["short-rows", "small-block"])
def test_short_rows_and_small_blocks_are_not_streamed(M, N, bm):
    # rows of 256 bytes, or 300 KiB blocks: plain stores (measured faster there)
    kernel = tilelang.compile(shift_copy(M, N, bm, "float32", 0), target="cpu")
    assert "copy_stream" not in source(kernel)
    a = data((M, N), "float32", np.random.default_rng(1))
    c = np.zeros((M, N + 5), np.float32)
    kernel(a, c)
    np.testing.assert_array_equal(c[:, :N], a + 1)


@pytest.mark.parametrize("isa", ["avx2", "portable"])
def test_streamed_copy_on_lower_isa_tiers(isa):
    # copy_stream's 32-byte (AVX) and 16-byte (SSE2) store loops, in kernels built for a lower tier
    M, N, bm, dtype, col0 = 896, 300, 448, "float32", 3
    a = data((M, N), dtype, np.random.default_rng(11))
    kernel = tilelang.compile(shift_copy(M, N, bm, dtype, col0), target="cpu",
                              pass_configs={"tl.cpu_isa": isa, "tl.cpu_num_threads": 2})
    assert "tl::cpu::copy_stream(" in source(kernel)
    c = np.full((M, N + col0 + 5), -7, dtype=np.float32)
    kernel(a, c)
    np.testing.assert_array_equal(c[:, col0:col0 + N], a + 1)
    assert (c[:, :col0] == -7).all() and (c[:, col0 + N:] == -7).all()
