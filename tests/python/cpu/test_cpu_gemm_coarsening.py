"""coarsen_gemm_blocks (src/target/cpu/coarsen_gemm_blocks.h): a grid of one-GEMM blocks, such as
TileLang's GEMM example with its GPU blocks (128 x 128 x 32), runs as fewer blocks of up to
512 x 512 on cpu. Checked on random inputs against numpy in float64 (int8 exactly), against the same
kernel with the pass off (tl.disable_cpu_block_coarsening; float32 and int8 bit for bit), and on the
emitted C++ (the tile of each GEMM call, the grid)."""
import re

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T

OFF = {"tl.disable_cpu_block_coarsening": True}


def gemm_calls(src):
    """The template arguments of every tl::cpu::gemm call: [(M, N, K, trans_A, trans_B)]."""
    return re.findall(r"tl::cpu::gemm<(\d+), (\d+), (\d+), (true|false), (true|false)>", src)


def example(M, N, K, bm, bn, bk, dtype="float32", acc="float32", out=None, tb=False, epilogue=None, swizzle=True,
            stage=False):
    """TileLang's GEMM example (its examples/gemm), C in `out` (default: the accumulator's dtype);
    tb: B given as [N, K]; stage: C goes out through a shared tile (example_gemm_autotune's C_local ->
    C_shared -> C); epilogue, on C_local before the copy-out: "bias_relu" (relu(C + bias), the bias
    row staged per block as in examples/gemm_relu), "global_bias" (C + bias[column] * row, read from
    global memory at the global position), "row_index" (C + the tile-local row index, which
    differs between a fine and a coarse tile), "direct" (C * 2 stored to global by the T.Parallel
    loop itself, no copy)."""
    b_shape, b_tile = ((N, K), (bn, bk)) if tb else ((K, N), (bk, bn))

    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor(b_shape, dtype), Bias: T.Tensor((N,), acc),
             C: T.Tensor((M, N), out or acc)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_shared = T.alloc_shared((bm, bk), dtype)
            B_shared = T.alloc_shared(b_tile, dtype)
            C_local = T.alloc_fragment((bm, bn), acc)
            C_shared = T.alloc_shared((bm, bn), out or acc)
            bias_local = T.alloc_fragment((bn,), acc)
            if swizzle:
                T.use_swizzle(panel_size=4)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=3):
                T.copy(A[by * bm, k * bk], A_shared)
                if tb:
                    T.copy(B[bx * bn, k * bk], B_shared)
                else:
                    T.copy(B[k * bk, bx * bn], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=tb)
            if epilogue == "bias_relu":
                T.copy(Bias[bx * bn], bias_local)
                for i, j in T.Parallel(bm, bn):
                    C_local[i, j] = T.max(C_local[i, j] + bias_local[j], 0)
            elif epilogue == "global_bias":
                for i, j in T.Parallel(bm, bn):
                    C_local[i, j] = C_local[i, j] + Bias[bx * bn + j] * (by * bm + i)
            elif epilogue == "row_index":
                for i, j in T.Parallel(bm, bn):
                    C_local[i, j] = C_local[i, j] + i
            if epilogue == "direct":
                for i, j in T.Parallel(bm, bn):
                    C[by * bm + i, bx * bn + j] = C_local[i, j] * 2
            elif stage:
                T.copy(C_local, C_shared)
                T.copy(C_shared, C[by * bm, bx * bn])
            else:
                T.copy(C_local, C[by * bm, bx * bn])
    return gemm


def operands(M, N, K, dtype, tb, rng):
    shape_b = (N, K) if tb else (K, N)
    if dtype == "int8":
        return (rng.integers(-128, 128, (M, K)).astype(np.int8), rng.integers(-128, 128, shape_b).astype(np.int8))
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, shape_b).astype(np.float32)
    np_t = {"float32": np.float32, "bfloat16": ml_dtypes.bfloat16, "float16": np.float16}[dtype]
    return a.astype(np_t), b.astype(np_t)


def run(kernel, a, b, M, N, out_np, bias=None):
    c = np.full((M, N), 3, out_np)  # not zeros: every element must be written
    kernel(a, b, np.zeros(N, np.int32 if out_np == np.int32 else np.float32) if bias is None else bias, c)
    return c


# dtype, accumulator, C dtype, M, N, K, threads, the coarse tile expected (rows, columns)
CASES = [
    ("float32", "float32", None, 512, 512, 256, 1, (256, 256)),       # 16 blocks -> 4 of 256 x 256
    ("float32", "float32", None, 1024, 512, 128, 1, (512, 256)),      # 32 -> 4 of 512 x 256
    ("bfloat16", "float32", "bfloat16", 512, 1024, 192, 1, (512, 256)),  # a tie: the taller tile
    ("float16", "float32", "float16", 1024, 1024, 128, 2, (512, 256)),  # 2 workers: at least 8 blocks
    ("int8", "int32", None, 512, 512, 256, 1, (256, 256)),
    ("int8", "int32", None, 768, 640, 256, 1, (384, 128)),  # 6 x 5 blocks: no divisor of 5 fits 512 columns
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[3]}x{c[4]}x{c[5]}-t{c[6]}")
def test_example_blocks_coarsened_match_numpy_and_the_fine_grid(case, rng):
    dtype, acc, out, M, N, K, threads, (tm, tn) = case
    prog = example(M, N, K, 128, 128, 32, dtype, acc, out)
    coarse = tilelang.compile(prog, target="cpu", pass_configs={"tl.cpu_num_threads": threads})
    fine = tilelang.compile(prog, target="cpu", pass_configs={**OFF, "tl.cpu_num_threads": threads})
    assert gemm_calls(coarse.get_kernel_source()) == [(str(tm), str(tn), str(K), "false", "false")]
    assert gemm_calls(fine.get_kernel_source()) == [("128", "128", str(K), "false", "false")]
    a, b = operands(M, N, K, dtype, False, rng)
    out_np = {None: np.int32 if acc == "int32" else np.float32, "bfloat16": ml_dtypes.bfloat16,
              "float16": np.float16}[out]
    c1, c2 = run(coarse, a, b, M, N, out_np), run(fine, a, b, M, N, out_np)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if dtype == "int8":
        np.testing.assert_array_equal(c1.astype(np.int64), ref.astype(np.int64))
    elif out is None:
        np.testing.assert_allclose(c1, ref, rtol=0, atol=2e-6 * K)
    else:  # one rounding of the float32 sum into the output type
        np.testing.assert_allclose(c1.astype(np.float64), ref, rtol=1e-2 if out == "bfloat16" else 2e-3,
                                   atol=1e-2)
    if dtype in ("float32", "int8"):
        np.testing.assert_array_equal(c1, c2)
    else:
        np.testing.assert_allclose(c1.astype(np.float64), c2.astype(np.float64), rtol=1e-2, atol=1e-2)


def test_staged_through_shared_memory(rng):
    """example_gemm_autotune's epilogue: C_local -> C_shared (float16) -> C; B as [N, K]."""
    M, N, K = 512, 1024, 128
    prog = example(M, N, K, 128, 128, 32, "float16", "float32", "float16", tb=True, stage=True)
    k = tilelang.compile(prog, target="cpu", pass_configs={"tl.cpu_num_threads": 1})
    assert gemm_calls(k.get_kernel_source()) == [("512", "256", str(K), "false", "true")]
    a, b = operands(M, N, K, "float16", True, rng)
    c = run(k, a, b, M, N, np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3, atol=1e-2)


def test_transposed_b_and_no_swizzle(rng):
    M, N, K = 512, 512, 160
    prog = example(M, N, K, 128, 128, 32, tb=True, swizzle=False)
    k = tilelang.compile(prog, target="cpu", pass_configs={"tl.cpu_num_threads": 1})
    assert gemm_calls(k.get_kernel_source()) == [("256", "256", str(K), "false", "true")]
    a, b = operands(M, N, K, "float32", True, rng)
    c = run(k, a, b, M, N, np.float32)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64).T, rtol=0, atol=2e-6 * K)


@pytest.mark.parametrize("epilogue", ["bias_relu", "global_bias", "direct"])
def test_element_wise_epilogues_coarsened(epilogue, rng):
    """An epilogue on C_local that depends on the block only through the global row / column (a bias
    row staged per block, relu; a T.Parallel loop storing to global itself) runs on the coarse tile."""
    M, N, K = 512, 512, 96
    prog = example(M, N, K, 128, 128, 32, epilogue=epilogue)
    coarse = tilelang.compile(prog, target="cpu", pass_configs={"tl.cpu_num_threads": 1})
    fine = tilelang.compile(prog, target="cpu", pass_configs={**OFF, "tl.cpu_num_threads": 1})
    assert gemm_calls(coarse.get_kernel_source()) == [("256", "256", str(K), "false", "false")]
    a, b = operands(M, N, K, "float32", False, rng)
    bias = rng.uniform(-2, 2, N).astype(np.float32)
    c1, c2 = run(coarse, a, b, M, N, np.float32, bias), run(fine, a, b, M, N, np.float32, bias)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if epilogue == "bias_relu":
        ref = np.maximum(ref + bias, 0)
    elif epilogue == "global_bias":
        ref = ref + bias[None, :] * np.arange(M)[:, None]
    else:
        ref = ref * 2
    if epilogue == "bias_relu":
        assert (ref == 0).mean() > 0.2  # the clamp is exercised
    np.testing.assert_allclose(c1, ref, rtol=1e-6, atol=5e-6 * K)
    np.testing.assert_array_equal(c1, c2)


@pytest.mark.parametrize("variant", ["row_index", "partial_tiles", "few_blocks", "many_workers"])
def test_grids_left_as_written(variant, rng):
    """Not coarsened: an epilogue that uses the tile-local row index (its value differs between a fine
    and a coarse tile), partial tiles (the staging copies stay: they zero-fill), a grid that already
    has no more blocks than 4 per worker. Values still match numpy."""
    M, N, K, threads, kw = 512, 512, 128, 1, {}
    if variant == "row_index":
        kw["epilogue"] = "row_index"
    elif variant == "partial_tiles":
        M, N = 500, 260
    elif variant == "few_blocks":
        M, N = 256, 256
    else:
        threads = 4  # 16 blocks = 4 per worker
    k = tilelang.compile(example(M, N, K, 128, 128, 32, **kw), target="cpu", pass_configs={"tl.cpu_num_threads": threads})
    calls = gemm_calls(k.get_kernel_source())
    assert calls and all(c[:2] == ("128", "128") for c in calls), calls
    a, b = operands(M, N, K, "float32", False, rng)
    c = run(k, a, b, M, N, np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if variant == "row_index":
        ref = ref + (np.arange(M) % 128)[:, None]
    np.testing.assert_allclose(c, ref, rtol=0, atol=2e-6 * K)
