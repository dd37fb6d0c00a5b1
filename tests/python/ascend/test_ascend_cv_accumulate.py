"""Developer mode: a gemm accumulator that vector code rescales between accumulating gemms (flash
attention's `acc_o *= correction; acc_o += P @ V`). The split gives the cube a fresh accumulator per
gemm and the vector core adds the product to its copy. Values against numpy (float64) on random
inputs, on the simulator with its checker on."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangSyntaxError


def rescaled_accumulation(M, N, K, steps, runtime_init=False):
    @T.prim_func
    def main(A: T.Tensor((steps, M, K), "float16"), B: T.Tensor((steps, K, N), "float16"),
             S: T.Tensor((steps, M, 1), "float32"), O: T.Tensor((M, N), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, _):
            a = T.alloc_shared((M, K), "float16")
            b = T.alloc_shared((K, N), "float16")
            s = T.alloc_fragment((M, 1), "float32")
            acc = T.alloc_fragment((M, N), "float32")
            T.vbrc(0.5, acc)                         # the vector core starts the accumulator
            for k in T.serial(steps):
                T.copy(A[k, :, :], a)
                T.copy(B[k, :, :], b)
                T.copy(S[k, :, :], s)
                T.vmul(acc, s, acc)                  # rescaled by the vector core ...
                if runtime_init:
                    T.gemm(a, b, acc, initC=(k == 0))  # marker: runtime-init
                else:
                    T.gemm(a, b, acc, initC=False)   # ... and accumulated by the cube
            T.vmul(acc, 2.0, acc)
            T.copy(acc, O)

    return main


@pytest.mark.parametrize("M,N,K,steps", [(64, 64, 32, 3), (32, 128, 64, 4)])
def test_vector_rescaled_gemm_accumulator_matches_numpy(M, N, K, steps):
    k = tilelang.compile(rescaled_accumulation(M, N, K, steps), target="npuir")
    rng = np.random.default_rng(M + N + K + steps)
    a = rng.standard_normal((steps, M, K)).astype(np.float16)
    b = rng.standard_normal((steps, K, N)).astype(np.float16)
    s = rng.uniform(0.5, 1.5, (steps, M, 1)).astype(np.float32)
    out = np.zeros((M, N), np.float32)
    k(a, b, s, out)
    ref = np.full((M, N), 0.5)
    for i in range(steps):
        ref = ref * s[i].astype(np.float64) + a[i].astype(np.float64) @ b[i].astype(np.float64)
    np.testing.assert_allclose(out, 2.0 * ref, rtol=1e-4, atol=1e-3)


def test_run_time_initc_on_a_vector_modified_accumulator_fails_closed():
    with pytest.raises(TileLangSyntaxError, match="initC decided at run time") as e:
        tilelang.compile(rescaled_accumulation(32, 32, 32, 2, runtime_init=True), target="npuir")
    assert "'acc' (L0C)" in str(e.value)


def test_cube_started_accumulator_then_rescaled_in_a_loop():
    """acc = A0 @ B0 on the cube (initC=True), then per step acc = acc * s + A @ B: the first gemm
    computes into the fresh accumulator too, so no iteration reads a stale L0C value."""
    M, N, K, steps = 32, 64, 32, 3

    @T.prim_func
    def main(A: T.Tensor((steps + 1, M, K), "float16"), B: T.Tensor((steps + 1, K, N), "float16"),
             S: T.Tensor((steps, M, 1), "float32"), O: T.Tensor((M, N), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, _):
            a = T.alloc_shared((M, K), "float16")
            b = T.alloc_shared((K, N), "float16")
            s = T.alloc_fragment((M, 1), "float32")
            acc = T.alloc_fragment((M, N), "float32")
            T.copy(A[0, :, :], a)
            T.copy(B[0, :, :], b)
            T.gemm(a, b, acc, initC=True)
            for k in T.serial(steps):
                T.copy(A[k + 1, :, :], a)
                T.copy(B[k + 1, :, :], b)
                T.copy(S[k, :, :], s)
                T.vmul(acc, s, acc)
                T.gemm(a, b, acc, initC=False)
            T.copy(acc, O)

    kern = tilelang.compile(main, target="npuir")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((steps + 1, M, K)).astype(np.float16)
    b = rng.standard_normal((steps + 1, K, N)).astype(np.float16)
    s = rng.uniform(0.5, 1.5, (steps, M, 1)).astype(np.float32)
    out = np.zeros((M, N), np.float32)
    kern(a, b, s, out)
    f = lambda x: x.astype(np.float64)  # noqa: E731
    ref = f(a[0]) @ f(b[0])
    for i in range(steps):
        ref = ref * f(s[i]) + f(a[i + 1]) @ f(b[i + 1])
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-3)
