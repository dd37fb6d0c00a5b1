"""bf16, fp16 (each value as two bfloat16, for large calls) and int8 T.gemm on cpu through AMX tiles
(tdpbf16ps / tdpbssd) where the CPU has AMX and the OS grants the tile state, against numpy in
float64 / int64 on random inputs. The same kernels are
also run with TL_CPU_ISA=avx512 (pass config tl.cpu_isa: no AMX, no AVX512-BF16) and the results
compared, so on a machine without AMX both runs check the fallback paths and on one with AMX the
tile path is checked against numpy and against the vector path. scripts/cpu_amx_check.sh runs
these tests plus a bf16 benchmark against torch.matmul on another machine."""
import ctypes
import os
import sys

import ml_dtypes
import numpy as np
import pytest

import tilelang

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/python: kernel_zoo
import kernel_zoo as zoo  # noqa: E402


def kernel_info(k):
    lib = ctypes.CDLL(os.path.join(k.artifact_dir, "kernel.so"))
    lib.tl_kernel_isa.restype = ctypes.c_char_p
    built = ctypes.string_at(ctypes.addressof(ctypes.c_char.in_dll(lib, "tl_kernel_build_isa"))).decode()
    return lib.tl_kernel_isa().decode(), built


from host_cpu import cpu_flags  # noqa: E402  (tests/python, put on sys.path by conftest.py)


HAS_AVX512 = {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx2", "fma"} <= cpu_flags()

# M, N, K, blocks, dtype, acc, trans_B. Block shapes fit the tiles (M, N multiples of 16, K of 32
# for bf16 / 64 for int8), with 32 x 32 blocks and 16-wide remainders.
CASES = [
    (128, 96, 256, (64, 48, 64), "bfloat16", "float32", False),   # 2x2 + 2x1 tile blocks, 2 tile steps
    (80, 64, 128, (48, 64, 128), "bfloat16", "float32", True),    # 1x2 remainders, B transposed
    (256, 256, 256, (256, 256, 128), "bfloat16", "float32", False),  # the benchmark's block
    (64, 80, 256, (32, 80, 128), "int8", "int32", False),
    (96, 48, 192, (48, 48, 64), "int8", "int32", True),
    # k in several chunks of packed B: 10 tile steps per chunk (the A block's 32 KiB), fewer when N
    # is wide (the 256 KiB pack budget: 8 steps at N = 512, 3 at N = 1040 with a 2-step remainder;
    # 10 + 8 for int8)
    (512, 512, 1024, (512, 512, 1024), "bfloat16", "float32", False),
    (96, 1040, 640, (96, 1040, 640), "bfloat16", "float32", True),
    (48, 272, 1152, (48, 272, 1152), "int8", "int32", False),
    # M, N, K not multiples of the blocks (the kernel's zero-filled copies feed whole tiles)
    (200, 136, 300, (64, 64, 64), "bfloat16", "float32", False),
    (72, 40, 200, (32, 32, 64), "int8", "int32", False),
    # float16 through the bf16 tiles (two bfloat16 per value, 8 k per tile step), which GEMM calls of
    # at least 2^22 multiply-adds and 512 rows take: 3 x 1 and 2 x 2 tile blocks, B transposed, 5
    # column tiles, 33 row tiles, an odd number of tile steps (216 k: 27), several chunks of packed B;
    # smaller calls (the last three cases: 128 and 80 rows, partial blocks) keep the float32
    # multiply-adds
    (512, 256, 128, (512, 256, 64), "float16", "float32", False),
    (512, 128, 256, (512, 128, 128), "float16", "float32", True),
    (512, 160, 216, (512, 80, 216), "float16", "float32", False),
    (528, 80, 256, (528, 80, 256), "float16", "float32", True),
    (512, 512, 512, (512, 512, 256), "float16", "float32", False),
    (128, 256, 256, (128, 256, 128), "float16", "float32", True),
    (80, 256, 256, (80, 256, 256), "float16", "float32", True),
    (200, 136, 300, (64, 64, 64), "float16", "float32", False),
]


def operands(M, N, K, dtype, trans_B, rng):
    if dtype == "int8":
        a = rng.integers(-128, 128, (M, K)).astype(np.int8)
        b = rng.integers(-128, 128, (N, K) if trans_B else (K, N)).astype(np.int8)
        return a, b
    narrow = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    a = rng.uniform(-2, 2, (M, K)).astype(np.float32).astype(narrow)
    b = rng.uniform(-2, 2, (N, K) if trans_B else (K, N)).astype(np.float32).astype(narrow)
    return a, b


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[4]}-{c[0]}x{c[1]}x{c[2]}-tB{int(c[6])}")
@pytest.mark.parametrize("accumulate", [False, True], ids=["clear", "accumulate"])
def test_tile_gemm_matches_numpy(case, accumulate, rng):
    M, N, K, (bm, bn, bk), dtype, acc, tb = case
    prog = zoo.gemm(M, N, K, bm, bn, bk, dtype, acc, acc, trans_B=tb, accumulate=accumulate)
    a, b = operands(M, N, K, dtype, tb, rng)
    wide = np.int64 if dtype == "int8" else np.float64
    ref = a.astype(wide) @ (b.astype(wide).T if tb else b.astype(wide))
    c0 = (rng.integers(-1000, 1000, (M, N)) if dtype == "int8" else rng.uniform(-1, 1, (M, N))).astype(acc)
    if accumulate:
        ref = ref + c0.astype(wide)
    results = {}
    for cap in ("native", "avx512"):
        if cap == "avx512" and not HAS_AVX512:
            continue
        k = tilelang.compile(prog, target="cpu", pass_configs={"tl.cpu_isa": cap})
        c = c0.copy()
        k(a, b, c)
        if dtype == "int8":
            np.testing.assert_array_equal(c.astype(np.int64), ref)  # exact (no int32 overflow at these sizes)
        else:
            np.testing.assert_allclose(c, ref, rtol=0, atol=2e-5 * K)
        tier, built = kernel_info(k)
        results[cap] = (c, tier, built)
    tier, built = results["native"][1:]
    needed = "amx_int8" if dtype == "int8" else "amx_bf16"  # float16 runs on the bf16 tiles
    # AMX is used exactly when the kernel was compiled for it (the host reported AMX and the OS
    # granted the tile state); never under a cap.
    assert ("amx" in tier) == (needed in built.split(",")), (tier, built)
    if "avx512" in results:
        assert "amx" not in results["avx512"][1] and "amx" not in results["avx512"][2]
        if dtype == "int8":
            np.testing.assert_array_equal(results["native"][0], results["avx512"][0])


@pytest.mark.parametrize("trans_B", [False, True], ids=["B", "Bt"])
def test_float16_gemm_infinities_and_nan(trans_B, rng):
    """float16 inputs with inf, -inf and NaN among finite values and zeros: inf * finite is inf,
    inf * 0 and NaN * x are NaN, inf - inf is NaN, as numpy computes in float64 (the AMX path splits
    each value into two bfloat16; an infinity must never meet the zero low part of a finite value)."""
    M, N, K = 512, 128, 256  # one GEMM call of 2^24 multiply-adds, 512 rows: the tile path where there is AMX
    prog = zoo.gemm(M, N, K, 512, 128, 256, "float16", "float32", "float32", trans_B=trans_B)
    a = rng.uniform(-2, 2, (M, K)).astype(np.float16)
    b = rng.uniform(-2, 2, (N, K) if trans_B else (K, N)).astype(np.float16)
    a[0, 3] = np.inf          # row 0: inf times B's row / column 3
    a[1, 5] = -np.inf
    a[2, 7] = np.nan
    a[3, 1] = np.inf          # row 3: inf + (-inf) in every column
    a[3, 2] = -np.inf
    bk = b.T if trans_B else b  # [K, N] view
    bk[1:3] = np.abs(bk[1:3])  # row 3's inf * b[1] - inf * b[2]: inf - inf in every column
    bk[3, 4] = 0.0            # (0, 4): inf * 0 -> NaN
    bk[5, 6] = np.inf         # (1, 6): -inf * inf -> -inf; column 6: inf elsewhere
    bk[9, 10] = 0.0
    bk[9, 11] = np.inf        # column 11: inf * finite for every row but 0..3
    with np.errstate(invalid="ignore"):
        ref = a.astype(np.float64) @ bk.astype(np.float64)
    assert np.isnan(ref[0, 4]) and np.isinf(ref[1, 6]) and np.isnan(ref[3]).all()
    for cap in ("native", "avx512"):
        if cap == "avx512" and not HAS_AVX512:
            continue
        k = tilelang.compile(prog, target="cpu", pass_configs={"tl.cpu_isa": cap})
        c = np.zeros((M, N), np.float32)
        k(a, b, c)
        np.testing.assert_array_equal(np.isnan(c), np.isnan(ref), err_msg=cap)
        np.testing.assert_array_equal(np.isposinf(c), np.isposinf(ref), err_msg=cap)
        np.testing.assert_array_equal(np.isneginf(c), np.isneginf(ref), err_msg=cap)
        fin = np.isfinite(ref)
        np.testing.assert_allclose(c[fin], ref[fin], rtol=0, atol=2e-5 * K, err_msg=cap)


sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "bench"))
import cpu_flash  # noqa: E402  (the benchmark's kernel: TileLang's flash-attention example, dtype a parameter)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dim,blocks,threads", [(128, (64, 64), 1), (64, (64, 64), 2), (64, (128, 64), 1)])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_flash_attention_matches_numpy(dim, blocks, threads, causal, dtype, rng):
    """Every block of a head multiplies by the same K and V blocks: with AMX their packs are made by
    the head's first block and reused by the others in the launch (the pack cache, 16 KiB a pack at
    D = 128); values against numpy in float64 and, where the CPU has AVX-512, against the same kernel
    built without AMX / AVX512-BF16 (tl.cpu_isa=avx512). Two launches on new K / V at the same
    addresses: the second must not reuse the first one's packs."""
    b, h, s = 1, 3, 384
    prog = cpu_flash.flashattn(b, h, s, dim, causal, *blocks, dtype)
    narrow = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    q, k, v, k2, v2 = (rng.standard_normal((b, h, s, dim)).astype(np.float32).astype(narrow) for _ in range(5))
    outs = {}
    for cap in ("native", "avx512"):
        if cap == "avx512" and not HAS_AVX512:
            continue
        kern = tilelang.compile(prog, target="cpu", pass_configs={"tl.cpu_isa": cap, "tl.cpu_num_threads": threads})
        kk, vv = k.copy(), v.copy()
        for launch in range(2):
            if launch:  # the same arrays, new values
                kk[...], vv[...] = k2, v2
            o = np.empty_like(q)
            kern(q, kk, vv, o)
            ref = cpu_flash.reference(q, kk, vv, causal)
            err = np.abs(o.astype(np.float64) - ref).max() / np.abs(ref).max()
            assert err < 2e-2, (cap, launch, err)
        outs[cap] = o
    if "avx512" in outs:
        np.testing.assert_allclose(outs["native"].astype(np.float32), outs["avx512"].astype(np.float32),
                                   rtol=0, atol=3e-2)
