"""convert_bf16_rows (src/target/cpu/convert_bf16_rows.h): a float32 value rounded into a block-local
bfloat16 buffer inside an element-wise loop nest (flash attention's P) becomes one row conversion
after the nest, tl::cpu::convert_bf16 (vcvtne2ps2bf16 where the CPU has AVX512-BF16, denormal blocks
rounded element by element). The results must be bit for bit those of the plain stores: checked
against the same kernels built with tl.disable_cpu_convert_rows and against ml_dtypes' rounding, on
random values and on the special ones (ties, values that round up into the next binade or to inf,
denormals alone and among normal values, infinities, NaN), and on the bench's flash-attention kernel."""
import os
import sys

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "bench"))
import cpu_flash  # noqa: E402  (the benchmark's kernel: TileLang's flash-attention example, dtype a parameter)

OFF = {"tl.disable_cpu_convert_rows": True}


def scaled_cast(M, N):
    """P = bfloat16(X * 2) through a float32 fragment; P also feeds a GEMM, so it stays a buffer (the
    cast store is then a statement of the fused nest, as in flash attention)."""

    @T.prim_func
    def k(X: T.Tensor((M, N), "float32"), W: T.Tensor((N, 16), "bfloat16"), Y: T.Tensor((M, N), "bfloat16"),
          C: T.Tensor((M, 16), "float32")):
        with T.Kernel(1, threads=1) as bx:
            S = T.alloc_fragment((M, N), "float32")
            P = T.alloc_fragment((M, N), "bfloat16")
            Cl = T.alloc_fragment((M, 16), "float32")
            T.copy(X[0, 0], S)
            for i, j in T.Parallel(M, N):
                S[i, j] = S[i, j] * 2.0
            T.copy(S, P)
            T.clear(Cl)
            T.gemm(P, W, Cl)
            T.copy(P, Y[0, 0])
            T.copy(Cl, C[0, 0])

    return k


def special_values(rng, n):
    f32 = np.float32
    tiny = np.finfo(f32).tiny
    bits = np.array([0x3F808000, 0x3F818000, 0x3F80FFFF, 0x3F7FFFFF, 0x7F7FFFFF, 0x7F7F8000, 0x7F7F7FFF,
                     0x00000001, 0x00400000, 0x007FFFFF, 0x80000001, 0x00008000, 0x00018000],
                    dtype=np.uint32).view(f32)
    vals = np.concatenate([bits, [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, tiny, -tiny, tiny / 2, 1e-40]])
    x = rng.standard_normal(n).astype(f32)
    x[: len(vals)] = vals.astype(f32)
    x[200:232] = rng.uniform(-1, 1, 32).astype(f32) * np.float32(1e-39)  # a whole block of denormals
    x[300] = np.float32(3e-39)  # one denormal among normal values
    return x


@pytest.mark.parametrize("M,N", [(64, 64), (32, 48)])
def test_row_conversion_matches_the_plain_stores_bit_for_bit(M, N, rng):
    prog = scaled_cast(M, N)
    on = tilelang.compile(prog, target="cpu")
    off = tilelang.compile(prog, target="cpu", pass_configs=OFF)
    assert "tl::cpu::convert_bf16(" in on.get_kernel_source()
    assert "tl::cpu::convert_bf16(" not in off.get_kernel_source()
    x = special_values(rng, M * N).reshape(M, N) / np.float32(2)  # the kernel doubles it back, exactly
    w = rng.standard_normal((N, 16)).astype(np.float32).astype(ml_dtypes.bfloat16)
    outs = []
    for kern in (on, off):
        y = np.zeros((M, N), ml_dtypes.bfloat16)
        c = np.zeros((M, 16), np.float32)
        kern(x, w, y, c)
        outs.append(y.view(np.uint16))
    np.testing.assert_array_equal(outs[0], outs[1])
    doubled = (x * np.float32(2)).astype(np.float32)
    want = doubled.astype(ml_dtypes.bfloat16).view(np.uint16)
    finite = ~np.isnan(doubled)
    np.testing.assert_array_equal(outs[0][finite], want[finite])
    assert np.all((outs[0][~finite] & 0x7FC0) == 0x7FC0)  # NaN stays a quiet NaN


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_flash_attention_p_conversion_bit_for_bit(causal, rng):
    b, h, s, d = 1, 2, 256, 64
    prog = cpu_flash.flashattn(b, h, s, d, causal, 64, 64, "bfloat16")
    on = tilelang.compile(prog, target="cpu")
    off = tilelang.compile(prog, target="cpu", pass_configs=OFF)
    assert "tl::cpu::convert_bf16(" in on.get_kernel_source()
    q, k, v = (rng.standard_normal((b, h, s, d)).astype(np.float32).astype(ml_dtypes.bfloat16) for _ in range(3))
    o_on, o_off = np.empty_like(q), np.empty_like(q)
    on(q, k, v, o_on)
    off(q, k, v, o_off)
    np.testing.assert_array_equal(o_on.view(np.uint16), o_off.view(np.uint16))
    ref = cpu_flash.reference(q, k, v, causal)
    assert np.abs(o_on.astype(np.float64) - ref).max() / np.abs(ref).max() < 2e-2
