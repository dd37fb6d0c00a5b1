"""stream_global_stores (src/target/cpu/stream_global_stores.h): a long copy of a block-local
buffer into global memory (a GEMM's C tile at the end of a block) is emitted as
tl::cpu::copy_stream, which writes whole cache lines with non-temporal stores and the unaligned
ends with plain ones. Checked against numpy on random inputs, with destinations that start off a
64-byte line (a column offset of 3 elements) and rows whose length is not a multiple of a line,
in float32, bfloat16 and int8 (and float32 rounded into bfloat16, special values included, as in
TileLang's GEMM examples' copy-out), against the same kernel with tl.disable_cpu_stream_stores, and on
the emitted C++ (the streaming copy and the fence after it are there, or not)."""

import importlib.util
import os

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T

OFF = {"tl.disable_cpu_stream_stores": True}


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
        src = kernel.get_kernel_source()
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
    # (the large-output rule off: a host whose last-level cache were smaller than C would stream it)
    kernel = tilelang.compile(shift_copy(M, N, bm, "float32", 0), target="cpu",
                              pass_configs={"tl.cpu_stream_min_output_bytes": 1 << 40})
    assert "copy_stream" not in kernel.get_kernel_source()
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
    assert "tl::cpu::copy_stream(" in kernel.get_kernel_source()
    c = np.full((M, N + col0 + 5), -7, dtype=np.float32)
    kernel(a, c)
    np.testing.assert_array_equal(c[:, col0:col0 + N], a + 1)
    assert (c[:, :col0] == -7).all() and (c[:, col0 + N:] == -7).all()


def round_copy(M, N, bm, col0, dtype="bfloat16"):
    """C (bfloat16 or float16)[:, col0:col0 + N] = A (float32) through a float32 fragment: the
    copy-out of a float32 accumulator into a narrow C, as in TileLang's GEMM examples."""

    @T.prim_func
    def k(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N + col0 + 5), dtype)):
        with T.Kernel(T.ceildiv(M, bm), threads=1) as bx:
            L = T.alloc_fragment((bm, N), "float32")
            T.copy(A[bx * bm, 0], L)
            T.copy(L, C[bx * bm, col0])

    return k


def rounding_data(shape, rng):
    """float32 bit patterns that exercise bfloat16 rounding: random values, exact ties (odd and even
    kept bit), values that round up into the next binade or to infinity, denormals, infinities, NaNs."""
    u = rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32)
    flat = u.reshape(-1)
    idx = np.arange(flat.size)
    flat[idx % 7 == 1] = (flat[idx % 7 == 1] & 0xFFFF0000) | 0x8000  # ties
    flat[idx % 11 == 2] = (flat[idx % 11 == 2] & 0x807FFFFF) | 0x7F800000  # infinities and NaNs
    flat[idx % 13 == 3] &= 0x807FFFFF  # denormals and zeros
    flat[idx % 17 == 4] = 0x7F7FFFFF  # the largest float: rounds to infinity
    flat[idx % 19 == 5] = (flat[idx % 19 == 5] & 0x80000000) | 0x3F7FFFFF  # rounds up to 1.0
    return u.view(np.float32)


def half_rounding_data(shape, rng):
    """float32 bit patterns for float16 rounding: exponents 2^-27 .. 2^17 (float16's subnormals,
    normals and overflow), exact ties at float16's last place, 65520 (rounds to inf) and the float
    just below it (to 65504), infinities and NaNs."""
    u = rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32)
    flat = u.reshape(-1)
    idx = np.arange(flat.size)
    e = (np.uint32(127 - 27) + (flat >> np.uint32(23)) % np.uint32(45)) & np.uint32(0xFF)
    flat[:] = (flat & np.uint32(0x807FFFFF)) | (e << np.uint32(23))
    flat[idx % 7 == 1] = (flat[idx % 7 == 1] & 0xFFFFE000) | 0x1000  # ties
    flat[idx % 11 == 2] = (flat[idx % 11 == 2] & 0x807FFFFF) | 0x7F800000  # infinities and NaNs
    flat[idx % 17 == 4] = 0x477FF000
    flat[idx % 19 == 5] = 0x477FEFFF
    return u.view(np.float32)


@pytest.mark.parametrize("isa", [None, "avx2"], ids=["host", "avx2"])
@pytest.mark.parametrize("col0", [3, 0])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_float32_to_narrow_copy_is_streamed_and_rounds_like_a_cast(isa, col0, dtype):
    # rows of 520 bfloat16 / float16 (1040 bytes), blocks of 512 x 520 x 2 bytes (520 KiB): streamed
    M, N, bm = 1024, 520, 512
    narrow = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16
    a = rounding_data((M, N), np.random.default_rng(5))
    if dtype == "float16":
        a = half_rounding_data((M, N), np.random.default_rng(5))
    out = {}
    for name, cfg in (("stream", {}), ("plain", OFF)):
        extra = {"tl.cpu_isa": isa} if isa else {}
        kernel = tilelang.compile(round_copy(M, N, bm, col0, dtype), target="cpu",
                                  pass_configs={"tl.cpu_num_threads": 2, **cfg, **extra})
        assert ("tl::cpu::copy_stream(" in kernel.get_kernel_source()) == (name == "stream")
        c = np.full((M, N + col0 + 5), 0xABCD, dtype=np.uint16).view(narrow)
        kernel(a, c)
        got = c[:, col0:col0 + N]
        nan = np.isnan(a)
        assert np.isnan(got.astype(np.float32))[nan].all()  # NaN stays NaN
        with np.errstate(over="ignore"):
            expected = a.astype(narrow)  # round to nearest even (ml_dtypes / numpy)
        np.testing.assert_array_equal(got.view(np.uint16)[~nan], expected.view(np.uint16)[~nan])
        bits = c.view(np.uint16)
        assert (bits[:, :col0] == 0xABCD).all() and (bits[:, col0 + N:] == 0xABCD).all()  # nothing outside
        out[name] = c
    np.testing.assert_array_equal(out["stream"].view(np.uint16), out["plain"].view(np.uint16))


def gemm_bf16_out(M, N, K, bm, bn, bk):
    """TileLang's GEMM example (bfloat16 A, B and C; float32 accumulator)."""

    @T.prim_func
    def k(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "bfloat16")
            B_s = T.alloc_shared((bk, bn), "bfloat16")
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for kk in T.Pipelined(T.ceildiv(K, bk), num_stages=3):
                T.copy(A[by * bm, kk * bk], A_s)
                T.copy(B[kk * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * bm, bx * bn])

    return k


def test_bfloat16_gemm_copy_out_is_streamed():
    M, N, K = 1024, 1024, 256
    rng = np.random.default_rng(9)
    a = rng.standard_normal((M, K), dtype=np.float32).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((K, N), dtype=np.float32).astype(ml_dtypes.bfloat16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    out = {}
    for name, cfg in (("stream", {}), ("plain", OFF)):
        kernel = tilelang.compile(gemm_bf16_out(M, N, K, 512, 512, 128), target="cpu",
                                  pass_configs={"tl.cpu_num_threads": 2, **cfg})
        assert ("tl::cpu::copy_stream(" in kernel.get_kernel_source()) == (name == "stream")
        c = np.empty((M, N), ml_dtypes.bfloat16)
        kernel(a, b, c)
        # float32 accumulation, then one rounding to bfloat16 (relative 2^-8) of each element
        np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2**-8, atol=1e-5 * np.abs(ref).max())
        out[name] = c
    np.testing.assert_array_equal(out["stream"].view(np.uint16), out["plain"].view(np.uint16))


def rms_norm_example():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    spec = importlib.util.spec_from_file_location("stream_rms_norm", os.path.join(root, "examples", "rms_norm",
                                                                                   "example_rms_norm.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_kernel_without_gemm_streams_an_output_larger_than_the_caches(dtype):
    # examples/rms_norm, 4 rows a block: its copy of x into Y (4 rows of 4160 bytes a block, starting off
    # a 64-byte line) is far below 512 KiB, but with Y counted larger than the caches
    # (tl.cpu_stream_min_output_bytes 64 KiB; by default the host's last-level cache) it is streamed;
    # the result is bit for bit the plain build's and matches numpy in float64
    ex = rms_norm_example()
    npdt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float32
    M, N = 48, 4160 // np.dtype(npdt).itemsize  # (a ragged last block guards its copy: not a plain row copy)
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((M, N)) * rng.uniform(0.1, 10, (M, 1))).astype(np.float32).astype(npdt)
    w = rng.uniform(0.5, 1.5, N).astype(np.float32).astype(npdt)
    ref = ex.reference(x, w, 1e-6)
    outs = {}
    for name, cfg in (("stream", {"tl.cpu_stream_min_output_bytes": 64 << 10}),
                      ("plain", {"tl.cpu_stream_min_output_bytes": 1 << 40})):
        kernel = tilelang.compile(ex.rms_norm(M, N, block_M=4, eps=1e-6, dtype=dtype), target="cpu",
                                  pass_configs={"tl.cpu_num_threads": 2, **cfg})
        assert ("tl::cpu::copy_stream(" in kernel.get_kernel_source()) == (name == "stream"), name
        y = np.full((M, N), np.nan, np.float32).astype(npdt)
        kernel(x, w, y)
        r = 2e-2 if dtype == "bfloat16" else 1e-5
        np.testing.assert_allclose(y.astype(np.float64), ref, rtol=r, atol=r * np.abs(ref).max())
        outs[name] = y
    np.testing.assert_array_equal(outs["stream"].view(np.uint8), outs["plain"].view(np.uint8))
