"""vectorize_math_loops (src/target/cpu/vectorize_math_loops.h): an element-wise float32 loop calling
exp2 / exp is emitted as explicit 16-lane vector code (tl::cpu::vexp2 / vexp, include/tl/cpu/math.h:
vrndscaleps and vscalefps on AVX-512), the iterations past the last whole vector as scalar code.
Checked against numpy in float64 and against the same kernels built with tl.disable_cpu_vector_math
(GCC's vectorization of the scalar functions), on random values and on the special ones (infinities,
NaN, results that overflow, underflow or fall in the subnormal range), on lengths that leave a scalar
tail, and on the bench's flash-attention kernels."""
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

OFF = {"tl.disable_cpu_vector_math": True}


def softmax_parts(M, N, scale):
    """E2 = exp2(X * scale - m), E = exp(X - m) / 2 (m the row's first value, a per-row scalar), and
    a rescale of a second buffer, in T.Parallel loops over fragments."""

    @T.prim_func
    def k(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32"), E2: T.Tensor((M, N), "float32"),
          E: T.Tensor((M, N), "float32"), Z: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=1) as bx:
            S = T.alloc_fragment((M, N), "float32")
            R = T.alloc_fragment((M, N), "float32")
            O = T.alloc_fragment((M, N), "float32")
            m = T.alloc_fragment((M,), "float32")
            T.copy(X[0, 0], S)
            T.copy(Y[0, 0], O)
            for i in T.Parallel(M):
                m[i] = S[i, 0]
            for i, j in T.Parallel(M, N):
                R[i, j] = T.exp(S[i, j] - m[i]) / 2.0
            for i, j in T.Parallel(M, N):
                S[i, j] = T.exp2(S[i, j] * scale - m[i] * scale)
                O[i, j] = O[i, j] * m[i]
            T.copy(S, E2[0, 0])
            T.copy(R, E[0, 0])
            T.copy(O, Z[0, 0])

    return k


def special_inputs(rng, M, N):
    x = rng.uniform(-30, 30, (M, N)).astype(np.float32)
    flat = x.reshape(-1)
    vals = [np.inf, -np.inf, np.nan, 200.0, -200.0, 127.9, 128.0, -126.5, -140.25, -149.0, -150.5, 88.7, -103.0,
            0.0, -0.0, 1e-30, -1e-30]
    cols = np.arange(1, N)  # past column 0, which holds the row's m
    for n, v in enumerate(vals):
        flat[(n % M) * N + cols[(7 * n) % len(cols)]] = v
    return x


@pytest.mark.parametrize("M,N", [(8, 64), (5, 200), (3, 7)], ids=["whole", "tail", "short"])
def test_exp_loops_match_numpy_and_the_scalar_build(M, N, rng):
    prog = softmax_parts(M, N, 1.4426950408889634)
    on = tilelang.compile(prog, target="cpu")
    off = tilelang.compile(prog, target="cpu", pass_configs=OFF)
    assert "tl::cpu::vexp2(" in on.get_kernel_source() and "tl::cpu::vexp(" in on.get_kernel_source()
    assert "tl::cpu::vexp" not in off.get_kernel_source()
    x = special_inputs(rng, M, N)
    y = rng.standard_normal((M, N)).astype(np.float32)
    outs = []
    for kern in (on, off):
        e2, e, z = (np.zeros((M, N), np.float32) for _ in range(3))
        kern(x, y, e2, e, z)
        outs.append((e2, e, z))
    for a, b in zip(outs[0], outs[1]):  # each lane is the scalar function's value (GCC: bit for bit)
        np.testing.assert_allclose(a, b, rtol=2.5e-7, atol=0, equal_nan=True)
    e2, e, z = outs[0]
    # The functions' arguments as the kernel forms them in float32: x * scale - m * scale with the
    # multiply-add fused (-ffp-contract=fast) or not, and x - m; then exp2 / exp in float64.
    x64, m = x.astype(np.float64), x[:, :1].astype(np.float64)
    scale = np.float64(np.float32(1.4426950408889634))
    ms = (m * scale).astype(np.float32).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        args_e2 = [(x64 * scale - ms).astype(np.float32), (x * np.float32(scale)).astype(np.float32) - ms.astype(np.float32)]
        want_e2 = [np.exp2(a.astype(np.float64)) for a in args_e2]
        want_e = [np.exp((x - m.astype(np.float32)).astype(np.float64)) / 2]
    tiny = np.finfo(np.float32).tiny
    for got, wants in ((e2, want_e2), (e, want_e)):
        nan = np.isnan(wants[0])
        assert np.array_equal(np.isnan(got), nan)
        ok = np.zeros(got.shape, bool)
        for want in wants:
            with np.errstate(invalid="ignore", over="ignore"):
                big = np.abs(want) >= tiny
                ok |= big & (np.abs(got - want) <= 4e-7 * np.abs(want))  # within one ulp (0.84 at worst)
                ok |= ~big & (np.abs(got - want) <= 1.5e-45)  # subnormal or zero: within one subnormal step
                wf = want.astype(np.float32)  # overflows to inf where the result does
                ok |= np.isinf(wf) & (got == wf)
        assert np.all(ok[~nan]), (x[~ok & ~nan], got[~ok & ~nan])
    np.testing.assert_allclose(z, y * x[:, :1], rtol=1e-7)


def exp2_and_rescale(M, N):
    """S = exp2(X - m), O *= m on a global O that nothing else in the loop names: the rescale leaves
    the nest as a loop of its own, skipped for the rows whose m is exactly 1."""

    @T.prim_func
    def k(X: T.Tensor((M, N), "float32"), m: T.Tensor((M,), "float32"), O: T.Tensor((M, N), "float32"),
          E2: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=1) as bx:
            S = T.alloc_fragment((M, N), "float32")
            T.copy(X[0, 0], S)
            for i, j in T.Parallel(M, N):
                S[i, j] = T.exp2(S[i, j] - m[i])
                O[i, j] = O[i, j] * m[i]
            T.copy(S, E2[0, 0])

    return k


@pytest.mark.parametrize("N", [64, 37])
def test_rescale_skipped_where_the_factor_is_one_is_exact(N, rng):
    M = 8
    prog = exp2_and_rescale(M, N)
    on = tilelang.compile(prog, target="cpu")
    off = tilelang.compile(prog, target="cpu", pass_configs=OFF)
    assert "!= 1.0f" in on.get_kernel_source() and "!= 1.0f" not in off.get_kernel_source()
    x = rng.uniform(-20, 20, (M, N)).astype(np.float32)
    m = np.array([1.0, 0.5, 1.0, np.nan, -1.0, 1.0, np.inf, 3.0], np.float32)
    o0 = rng.standard_normal((M, N)).astype(np.float32)
    o0[0, :3] = [np.nan, np.inf, -0.0]  # kept as they are by a skipped row (x * 1 == x)
    o0[0, 3] = np.float32(1e-40)  # a subnormal too
    results = []
    for kern in (on, off):
        o, e2 = o0.copy(), np.zeros((M, N), np.float32)
        kern(x, m, o, e2)
        results.append((o, e2))
    with np.errstate(invalid="ignore"):
        want = o0 * m[:, None]
    for o, e2 in results:
        np.testing.assert_array_equal(o, want)  # bit for bit (NaN where NaN), skipped rows included
        assert np.signbit(o[0, 2])
        np.testing.assert_array_equal(results[0][1], results[1][1])


def scale_of_two_maxima(N, c):
    """scale = exp2(a * c - b * c), online softmax's rescale factor from the old and the new maximum."""

    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=1) as bx:
            s = T.alloc_fragment((N,), "float32")
            for i in T.Parallel(N):
                s[i] = T.exp2(A[i] * c - B[i] * c)
            T.copy(s, Y[0])

    return k


def test_difference_of_products_with_a_common_factor_is_exact_for_equal_operands(rng):
    """Both products are rounded before the subtraction (no fused multiply-add), so equal maxima give
    a scale of exactly 1 (which lets the guarded rescale skip the row) and the rest is exp2 of the
    difference of the rounded products."""
    N, c = 200, np.float32(0.12751743)
    kern = tilelang.compile(scale_of_two_maxima(N, float(c)), target="cpu")
    assert "tl::cpu::vrounded(" in kern.get_kernel_source()
    a = rng.uniform(-60, 60, N).astype(np.float32)
    b = a.copy()
    b[1::3] += rng.uniform(0, 5, len(b[1::3])).astype(np.float32)  # the maximum grew in every third row
    y = np.zeros(N, np.float32)
    kern(a, b, y)
    same = a == b
    assert np.all(y[same] == 1.0)
    arg = (a * c).astype(np.float32) - (b * c).astype(np.float32)  # float32 products and difference
    np.testing.assert_allclose(y[~same], np.exp2(arg[~same].astype(np.float64)), rtol=4e-7)


def exp_rows_dynamic():
    """Rows of a run-time length (int64 indices): the vector steps, then a partial step of n % 16."""
    M, N = T.dynamic("m"), T.dynamic("n")

    @T.prim_func
    def k(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(M, threads=1) as bx:
            for j in T.Parallel(N):
                Y[bx, j] = T.exp2(X[bx, j] * 0.5) + T.exp(X[bx, j] * 0.25)

    return k


def test_dynamic_row_lengths(rng):
    kern = tilelang.compile(exp_rows_dynamic(), target="cpu")
    assert "tl::cpu::vexp2(" in kern.get_kernel_source() and "tl::cpu::vload_n<" in kern.get_kernel_source()
    for m, n in ((5, 37), (3, 64), (4, 1), (2, 0), (3, 200)):
        x = rng.uniform(-50, 50, (m, n)).astype(np.float32)
        y = np.full((m, n), np.nan, np.float32)
        kern(x, y)
        x64 = x.astype(np.float64)
        np.testing.assert_allclose(y, np.exp2(x64 * 0.5) + np.exp(x64 * 0.25), rtol=1e-6)


def exp_of_index(N):
    """A loop whose exp2 argument is the loop index converted to float: not of the vector forms, it
    stays scalar code (and still computes the right values)."""

    @T.prim_func
    def k(Y: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=1) as bx:
            S = T.alloc_fragment((N,), "float32")
            for j in T.Parallel(N):
                S[j] = T.exp2(T.cast(j, "float32") * -0.25)
            T.copy(S, Y[0])

    return k


def test_loops_outside_the_vector_forms_stay_scalar():
    kern = tilelang.compile(exp_of_index(40), target="cpu")
    assert "tl::cpu::vexp" not in kern.get_kernel_source() and "tl::cpu::exp2(" in kern.get_kernel_source()
    y = np.zeros(40, np.float32)
    kern(y)
    np.testing.assert_allclose(y, np.exp2(np.arange(40) * -0.25), rtol=4e-7)


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_flash_attention_with_vector_exp2(dtype, causal, rng):
    b, h, s, d = 1, 2, 256, 64
    bm, bn = cpu_flash.CPU_CONFIG[dtype]
    prog = cpu_flash.flashattn(b, h, s, d, causal, bm, bn, dtype)
    on = tilelang.compile(prog, target="cpu")
    off = tilelang.compile(prog, target="cpu", pass_configs=OFF)
    assert "tl::cpu::vexp2(" in on.get_kernel_source()
    assert "!= 1.0f" in on.get_kernel_source()  # the rescale of acc_o, guarded (in the exp2 nest's place or alone)
    npdt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float32
    q, k, v = (rng.standard_normal((b, h, s, d)).astype(np.float32).astype(npdt) for _ in range(3))
    o_on, o_off = np.empty_like(q), np.empty_like(q)
    on(q, k, v, o_on)
    off(q, k, v, o_off)
    ref = cpu_flash.reference(q, k, v, causal)
    tol = 2e-2 if dtype == "bfloat16" else 1e-5
    for o in (o_on, o_off):
        assert np.abs(o.astype(np.float64) - ref).max() / np.abs(ref).max() < tol
    np.testing.assert_allclose(o_on.astype(np.float32), o_off.astype(np.float32), rtol=0,
                               atol=1e-5 if dtype == "float32" else 1e-2)
