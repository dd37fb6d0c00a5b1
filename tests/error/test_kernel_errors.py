"""Mistakes a kernel author makes while building a kernel: out-of-range sizes, tiles that do not
fit their op, allocations the target cannot hold, misplaced constructs, wrong call arguments.
Each raises a typed error whose message names the culprit (op, buffer, shape, parameter) and the
kernel source line, and the process keeps compiling and running kernels afterwards."""
import atexit
import importlib.util
import os
import shutil
import tempfile

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangSyntaxError

if "TILELANG_CACHE_DIR" not in os.environ:  # a private cache, removed at exit
    os.environ["TILELANG_CACHE_DIR"] = tempfile.mkdtemp(prefix="tl-error-tests-")
    atexit.register(shutil.rmtree, os.environ["TILELANG_CACHE_DIR"], True)

HERE = os.path.abspath(__file__)


def line_of(marker):
    with open(HERE) as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith("# " + marker):
                return n
    raise AssertionError(marker)


def at(marker):
    return f"{HERE}:{line_of(marker)}:"


def compile_cpu(prim_func, **kw):
    return tilelang.compile(prim_func, target="cpu", **kw)


def matmul(M, N, K, block_M=32, block_N=32, block_K=16, dtype="float16"):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])
    return gemm


def still_works():
    """A good kernel compiles and computes the right result after the error."""
    k = compile_cpu(matmul(40, 24, 20), out_idx=[-1])
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (40, 20)).astype(np.float16)
    b = rng.uniform(-1, 1, (20, 24)).astype(np.float16)
    np.testing.assert_allclose(k(a, b), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)


def check(action, exc_type, marker, *fragments):
    with pytest.raises(exc_type) as info:
        action()
    msg = str(info.value)
    if marker is not None:
        assert msg.startswith(at(marker)), msg
    for frag in fragments:
        assert frag in msg, f"{frag!r} not in {msg!r}"
    still_works()
    return msg


def one_kernel(body_kind, value):
    """Small kernels with one bad construct, selected by body_kind (one source line per case)."""
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), X: T.Tensor((64,), "int32")):
        if body_kind == "grid":
            with T.Kernel(value, threads=128) as bx:  # bad-grid
                A[0, 0] = 1.0
        elif body_kind == "threads":
            with T.Kernel(1, threads=value) as bx:  # bad-threads
                A[0, 0] = 1.0
        elif body_kind == "alloc":
            with T.Kernel(1, threads=128) as bx:
                S = T.alloc_shared(value, "float32")  # bad-alloc
                T.copy(A[0, 0], S)
        elif body_kind == "parallel":
            with T.Kernel(1, threads=128) as bx:
                for i in T.Parallel(value):  # bad-parallel
                    A[0, i] = 1.0
        elif body_kind == "persistent":
            with T.Kernel(4, threads=128) as bx:
                for t in T.Persistent([16], value, bx):  # bad-persistent
                    X[t] = 1
        elif body_kind == "stages":
            with T.Kernel(1, threads=128) as bx:
                for k in T.Pipelined(4, num_stages=value):  # bad-stages
                    A[k, 0] = 1.0
    return main


# --- out-of-range sizes -----------------------------------------------------------------------------

@pytest.mark.parametrize("grid,fragment", [(0, "T.Kernel grid extent 0 must be positive, got 0"),
                                           (-2, "T.Kernel grid extent 0 must be positive, got -2"),
                                           (2 ** 31 + 5, "grid extent 0 is 2147483653, more than the maximum "
                                                         "2147483647")])
def test_grid_extent_out_of_range(grid, fragment):
    check(lambda: one_kernel("grid", grid), ValueError, "bad-grid", fragment)


@pytest.mark.parametrize("threads,fragment", [(0, "T.Kernel threads must be positive, got 0"),
                                              (-32, "T.Kernel threads must be positive, got -32"),
                                              ([64, 32], "T.Kernel threads=[64, 32]: 2048 threads per block, more "
                                                         "than the 1024 a block can have")])
def test_threads_out_of_range(threads, fragment):
    check(lambda: one_kernel("threads", threads), ValueError, "bad-threads", fragment)


@pytest.mark.parametrize("shape,fragment", [((0, 32), "dimension 0 of buffer 'S' is 0"),
                                            ((32, -16), "dimension 1 of buffer 'S' is -16")])
def test_tile_dimension_zero_or_negative(shape, fragment):
    check(lambda: one_kernel("alloc", shape), ValueError, "bad-alloc", "T.alloc_shared: ", fragment,
          "tile dimensions must be positive")


def test_block_size_computed_to_zero():
    """A tile size derived from a configuration (block_M // warps with too many warps) reaches 0."""
    def build(block_M=16, warps=32):
        @T.prim_func
        def main(A: T.Tensor((64, 64), "float32")):
            with T.Kernel(4, threads=128) as bx:
                rows = T.alloc_fragment((block_M // warps, 64), "float32")  # bad-derived
                T.copy(A[bx * 16, 0], rows)
        return main
    check(build, ValueError, "bad-derived", "T.alloc_fragment: dimension 0 of buffer 'rows' is 0")


def test_negative_parallel_extent():
    check(lambda: one_kernel("parallel", -4), ValueError, "bad-parallel", "T.Parallel extent 0 is negative (-4)")


def test_persistent_without_workers():
    # Used to compile a division by zero that killed the process (SIGILL) at the first call.
    check(lambda: one_kernel("persistent", 0), ValueError, "bad-persistent",
          "T.Persistent: wave_size (the number of workers) must be positive, got 0")


def test_negative_pipeline_stages():
    check(lambda: one_kernel("stages", -1), ValueError, "bad-stages", "T.Pipelined: num_stages must be >= 0, got -1")


def test_integer_division_by_constant_zero():
    """Used to compile into a trap instruction that killed the process at the first call."""
    def build(groups=0):
        @T.prim_func
        def main(X: T.Tensor((64,), "int32")):
            with T.Kernel(1, threads=128) as bx:
                for i in T.Parallel(64):
                    X[i] = X[i] // groups  # bad-div
        return main
    check(lambda: compile_cpu(build()), ValueError, "bad-div", "integer division by zero in 'floordiv(X[i], 0)'")


def test_integer_division_by_runtime_zero():
    """A divisor that is 0 only at run time (and INT_MIN / -1) used to raise SIGFPE and end the process;
    it is now a DeviceRuntimeError after the launch, and the kernel keeps working for good inputs."""
    @T.prim_func
    def main(X: T.Tensor((64,), "int32"), D: T.Tensor((64,), "int32"), Q: T.Tensor((64,), "int32"),
             R: T.Tensor((64,), "int32")):
        with T.Kernel(2, threads=128) as bx:
            for i in T.Parallel(32):
                Q[bx * 32 + i] = X[bx * 32 + i] // D[bx * 32 + i]
                R[bx * 32 + i] = T.truncmod(X[bx * 32 + i], D[bx * 32 + i])
    kernel = compile_cpu(main)
    rng = np.random.default_rng(3)
    x = rng.integers(-1000, 1000, 64).astype(np.int32)
    d = rng.integers(1, 50, 64).astype(np.int32) * rng.choice([-1, 1], 64).astype(np.int32)
    q, r = np.empty(64, np.int32), np.empty(64, np.int32)
    for bad_x, bad_d in ((5, 0), (np.iinfo(np.int32).min, -1)):
        xb, db = x.copy(), d.copy()
        xb[40], db[40] = bad_x, bad_d
        with pytest.raises(tilelang.DeviceRuntimeError, match="integer division by zero"):
            kernel(xb, db, q, r)
    kernel(x, d, q, r)  # the process and the kernel still work
    np.testing.assert_array_equal(q, x // d)
    np.testing.assert_array_equal(r, np.fmod(x, d))


# --- tiles that do not fit their op ----------------------------------------------------------------

def test_copy_tile_shape_mismatch():
    def build():
        @T.prim_func
        def main(A: T.Tensor((64, 64), "float32")):
            with T.Kernel(1, threads=128) as bx:
                S = T.alloc_shared((32, 32), "float32")
                F = T.alloc_fragment((16, 32), "float32")
                T.copy(A[0:32, 0:32], S)
                T.copy(S, F)  # bad-copy
        return main
    check(build, ValueError, "bad-copy", "T.copy: src S[0:32, 0:32] (shared float32[32, 32]) and dst F[0:16, 0:32] "
          "(fragment float32[16, 32]) have different shapes [32, 32] and [16, 32]")


def test_copy_region_outside_a_shared_tile():
    def build():
        @T.prim_func
        def main(A: T.Tensor((64, 64), "float32")):
            with T.Kernel(1, threads=128) as bx:
                S = T.alloc_shared((32, 32), "float32")
                T.copy(A[0:32, 0:32], S[16:48, 0:32])  # bad-copy-oob
        return main
    check(build, ValueError, "bad-copy-oob", "T.copy: dst S[16:48, 0:32] (shared float32[32, 32]) lies outside the "
          "buffer in dimension 0 (16:48 of 32)")


def gemm_kernel(a_tile, b_tile, c_tile, ab_dtype="float16", c_dtype="float32", transpose_B=False):
    @T.prim_func
    def main(A: T.Tensor((128, 128), ab_dtype)):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared(a_tile, ab_dtype)
            B_s = T.alloc_shared(b_tile, ab_dtype)
            C_l = T.alloc_fragment(c_tile, c_dtype)
            T.gemm(A_s, B_s, C_l, transpose_B=transpose_B)  # bad-gemm
    return main


@pytest.mark.parametrize("tiles,fragments", [
    (((64, 32), (16, 64), (64, 64)), ["T.gemm: the K extent (reduction) of A (32) and B (16) differ",
                                      "B B_s[0:16, 0:64] (shared float16[16, 64])"]),
    (((64, 32), (32, 64), (32, 64)), ["T.gemm: the M extent (rows) of A (64) and C (32) differ",
                                      "C C_l[0:32, 0:64] (fragment float32[32, 64])"]),
    (((64, 32), (32, 48), (64, 64)), ["T.gemm: the N extent (columns) of B (48) and C (64) differ",
                                      "B B_s[0:32, 0:48] (shared float16[32, 48])"]),
])
def test_gemm_tile_shape_mismatch(tiles, fragments):
    check(lambda: gemm_kernel(*tiles), ValueError, "bad-gemm", *fragments)


def test_gemm_transpose_b_with_an_untransposed_tile():
    check(lambda: gemm_kernel((64, 32), (32, 64), (64, 64), transpose_B=True), ValueError, "bad-gemm",
          "T.gemm: the K extent (reduction) of A (32) and B (64) differ",
          "looks not transposed: drop transpose_B=True")


def test_gemm_unsupported_dtypes():
    check(lambda: gemm_kernel((64, 32), (32, 64), (64, 64), "int8", "float16"), TypeError, "bad-gemm",
          "T.gemm: unsupported dtypes A int8, B int8, C float16")


@pytest.mark.parametrize("dst_shape,dim,exc,fragment", [
    ((32,), 1, ValueError, "T.reduce: dst R[0:32] (fragment float32[32]) must have src's shape [64, 32] without "
                           "dimension 1, i.e. [64], but has [32]"),
    ((64,), 2, ValueError, "T.reduce_max: dim 2 is out of range for a 2-dimensional operand"),
])
def test_reduce_errors(dst_shape, dim, exc, fragment):
    def build():
        @T.prim_func
        def main(A: T.Tensor((64, 32), "float32")):
            with T.Kernel(1, threads=128) as bx:
                S = T.alloc_fragment((64, 32), "float32")
                R = T.alloc_fragment(dst_shape, "float32")
                T.copy(A, S)
                T.reduce_max(S, R, dim=dim)  # bad-reduce
        return main
    check(build, exc, "bad-reduce", fragment)


def test_cumsum_shape_mismatch():
    def build():
        @T.prim_func
        def main(A: T.Tensor((64, 32), "float32")):
            with T.Kernel(1, threads=128) as bx:
                S = T.alloc_fragment((64, 32), "float32")
                D = T.alloc_fragment((32, 64), "float32")
                T.cumsum(S, D, dim=1)  # bad-cumsum
        return main
    check(build, ValueError, "bad-cumsum", "T.cumsum: src S[0:64, 0:32] (fragment float32[64, 32]) and dst "
          "D[0:32, 0:64] (fragment float32[32, 64]) have different shapes")


# --- what the target cannot hold or run ------------------------------------------------------------

def test_one_gib_shared_tile_on_cpu():
    def build():
        @T.prim_func
        def main(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=128) as bx:
                S = T.alloc_shared((1 << 28,), "float32")  # bad-huge
                T.copy(A, S[0:64])
                T.copy(S[0:64], A)
        return main
    check(lambda: compile_cpu(build()), tilelang.ResourceError, "bad-huge",
          "buffer 'S' (shared float32[268435456]) needs 1073741824 bytes (1024 MiB)",
          "limited to 256 MiB on target cpu; use smaller tiles")


def test_block_local_buffers_over_the_cpu_limit_together():
    def build():
        @T.prim_func
        def main(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=128) as bx:
                S = T.alloc_shared((8192, 4100), "float32")
                F = T.alloc_fragment((8192, 4100), "float32")  # bad-sum
                T.copy(A, S[0, 0:64])
                T.copy(S[0, 0:64], F[0, 0:64])
                T.copy(F[0, 0:64], A)
        return main
    check(lambda: compile_cpu(build()), tilelang.ResourceError, "bad-sum",
          "the kernel's block-local buffers need 268697600 bytes (256 MiB) per block", "buffer 'S'", "buffer 'F'")


def test_size_overflowing_64_bits():
    """Used to wrap around to a 1-element array and write out of bounds."""
    def build():
        @T.prim_func
        def main(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=128) as bx:
                S = T.alloc_shared((1 << 40, 1 << 30), "float32")  # bad-overflow
                S[0, 0] = A[0]
        return main
    check(lambda: compile_cpu(build()), tilelang.ResourceError, "bad-overflow", "needs more than 2^63 bytes")


def test_alloc_l1_on_cpu():
    def build():
        @T.prim_func
        def main(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=128) as bx:
                L = T.alloc_L1((64,), "float32")  # bad-l1
                T.copy(A, L)
        return main
    check(lambda: compile_cpu(build()), NotImplementedError, "bad-l1",
          "not implemented: buffer 'L' in memory scope L1 on target cpu", "or compile for target 'ascend'")


def test_run_time_sized_buffer_of_negative_size():
    """A block-local buffer sized by a scalar parameter: fine for n > 0, reported for n < 0."""
    def build():
        @T.prim_func
        def main(A: T.Tensor((64,), "float32"), n: T.int32):
            with T.Kernel(1, threads=128) as bx:
                S = T.alloc_shared((n,), "float32")
                for i in T.serial(n):
                    S[i] = A[i] * 2.0
                for i in T.serial(n):
                    A[i] = S[i]
        return main
    k = compile_cpu(build())
    a = np.arange(64, dtype=np.float32)
    k(a, 10)
    np.testing.assert_array_equal(a[:12], [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 10, 11])
    check(lambda: k(a, -5), tilelang.DeviceRuntimeError, None, "kernel 'main' failed: cannot allocate -5 elements "
          "for buffer 'S'")
    k(a, 1)  # the kernel itself keeps working
    assert a[0] == 0.0 and a[1] == 2.0


# --- misplaced constructs --------------------------------------------------------------------------

def test_nested_kernel():
    def build():
        @T.prim_func
        def main(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=128) as bx:
                with T.Kernel(2, threads=128) as by:  # bad-nested-kernel
                    A[by] = 1.0
        return main
    check(build, TileLangSyntaxError, "bad-nested-kernel", "T.Kernel cannot be nested inside another T.Kernel")


def test_pipelined_inside_the_pipelined_k_loop():
    def build(block=16):
        @T.prim_func
        def main(A: T.Tensor((64, 64), "float16")):
            with T.Kernel(1, threads=128) as bx:
                A_s = T.alloc_shared((block, block), "float16")
                for k in T.Pipelined(4, num_stages=2):
                    for kk in T.Pipelined(4, num_stages=2):  # bad-nested-pipelined
                        T.copy(A[k * block, kk * block], A_s)
        return main
    check(build, TileLangSyntaxError, "bad-nested-pipelined", "nested T.Pipelined loops are not supported",
          "make the inner one T.serial")


def test_misspelled_buffer_name():
    def build():
        @T.prim_func
        def main(A: T.Tensor((64, 64), "float32")):
            with T.Kernel(1, threads=128) as bx:
                A_shared = T.alloc_shared((32, 32), "float32")
                T.copy(A[0, 0], A_shraed)  # noqa: F821  # bad-name
        return main
    check(build, NameError, "bad-name", "name 'A_shraed' is not defined")


# --- calls with the wrong arrays -------------------------------------------------------------------

@pytest.fixture(scope="module")
def gemm_fp16():
    return compile_cpu(matmul(64, 32, 48), out_idx=[-1])


def test_numpy_array_of_the_wrong_dtype(gemm_fp16):
    a32 = np.ones((64, 48), np.float32)
    b = np.ones((48, 32), np.float16)
    check(lambda: gemm_fp16(a32, b), tilelang.ArgumentError, None, "parameter 'A'", "expects dtype float16, got float32")
    bf = np.ones((48, 32), ml_dtypes.bfloat16)
    check(lambda: gemm_fp16(a32.astype(np.float16), bf), tilelang.ArgumentError, None, "parameter 'B'",
          "expects dtype float16, got bfloat16")
    c = gemm_fp16(a32.astype(np.float16), b)
    np.testing.assert_array_equal(c, np.full((64, 32), 48.0, np.float32))


def test_numpy_array_of_the_wrong_shape(gemm_fp16):
    check(lambda: gemm_fp16(np.ones((64, 47), np.float16), np.ones((48, 32), np.float16)), tilelang.ArgumentError,
          None, "parameter 'A'", "dimension 1 (48) must be 48, got 47")


@pytest.mark.torch
def test_torch_tensor_of_the_wrong_dtype(gemm_fp16):
    import torch
    a = torch.ones((64, 48), dtype=torch.bfloat16)
    b = torch.ones((48, 32), dtype=torch.float16)
    check(lambda: gemm_fp16(a, b), tilelang.ArgumentError, None, "parameter 'A'", "expects dtype float16, got bfloat16")
    c = gemm_fp16(a.to(torch.float16), b)
    assert torch.equal(c, torch.full((64, 32), 48.0))
