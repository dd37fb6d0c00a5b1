"""Generic TileLang spellings on the ascend target: alloc_shared / alloc_fragment with scope
inference and T.gemm (no T.Scope at all), the A3 model, and the Ascend form of T.use_swizzle."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T


def compile_ascend(func, configs=None, target="ascend"):
    return tilelang._core.ascend.compile(func.ir, configs or {}, target)


def developer_gemm(M, N, K, block_M=64, block_N=64, K_L1=64):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel((M // block_M) * (N // block_N), threads=1, is_npu=True) as cid:
            bx = cid // (N // block_N)
            by = cid % (N // block_N)
            A_s = T.alloc_shared((block_M, K_L1), "float16")
            B_s = T.alloc_shared((K_L1, block_N), "float16")
            C_f = T.alloc_fragment((block_M, block_N), "float")
            for k in T.Pipelined(K // K_L1, num_stages=2):
                T.copy(A[bx * block_M, k * K_L1], A_s)
                T.copy(B[k * K_L1, by * block_N], B_s)
                T.gemm(A_s, B_s, C_f, initC=(k == 0))
            T.copy(C_f, C[bx * block_M, by * block_N])
    return main


@pytest.mark.parametrize("target", ["ascend", "ascend -model=A3"])
def test_developer_gemm_with_scope_inference(target):
    M, N, K = 128, 128, 256
    k = compile_ascend(developer_gemm(M, N, K), target=target)
    src = k.source
    assert "alloc A_s: L1 float16[2, 64, 64]" in src  # shared -> L1 (feeds the cube), 2 stages
    assert "alloc C_f: L0C float32[64, 64]" in src   # fragment -> L0C (gemm operand C)
    assert 'attr "scope" = "C"' in src               # placed on the cube core
    rng = np.random.default_rng(8)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    k.launch([a, b, c])
    np.testing.assert_allclose(c.astype(np.float64), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-2, atol=0.1)
    assert k.info()["model"] == ("A3" if "A3" in target else "A2")


def test_ascend_use_swizzle_visits_every_tile_once():
    M = N = 512
    bm = bn = 128

    @T.prim_func
    def main(Out: T.Tensor((16,), "int32")):
        with T.Kernel(16, is_npu=True) as (cid, vid):
            o = T.alloc_ub((1,), "int32")
            with T.Scope("V"):
                if vid == 0:
                    t = T.use_swizzle(cid, M, N, 256, bm, bn, off=2)
                    o[0] = t
                    T.set_flag("s", "mte3", 0)
                    T.wait_flag("s", "mte3", 0)
                    T.copy(o, Out[cid])
    k = compile_ascend(main)
    out = np.full(16, -1, np.int32)
    k.launch([out])
    assert sorted(out.tolist()) == list(range(16))
    assert out.tolist() != list(range(16))  # remapped


def test_add_family_and_gpu_swizzle_form_on_ub():
    @T.prim_func
    def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32"), C: T.Tensor((128,), "float32")):
        T.func_attr({"enable_auto_sync": True})
        with T.Kernel(1, is_npu=True) as (cid, vid):
            T.use_swizzle(4, order="row")  # GPU rasterization form: no effect on the NPU
            a = T.alloc_ub((64,), "float32")
            b = T.alloc_ub((64,), "float32")
            c = T.alloc_ub((64,), "float32")
            T.copy(A[vid * 64], a)
            T.copy(B[vid * 64], b)
            with T.Scope("V"):
                T.add(c, a, b)
                T.mul(c, c, 2.0)
                T.exp(c, c)  # Developer spelling: source first
                T.max(c, c, b)
            T.copy(c, C[vid * 64])
    k = compile_ascend(main)
    rng = np.random.default_rng(11)
    a = rng.standard_normal(128).astype(np.float32)
    b = rng.standard_normal(128).astype(np.float32)
    c = np.zeros(128, np.float32)
    k.launch([a, b, c])
    np.testing.assert_allclose(c, np.maximum(np.exp(2 * (a + b)), b), rtol=1e-5)


def test_parallel_select_becomes_compare_and_select():
    """T.if_then_else(x <cmp> y, a, b) in a T.Parallel over UB tiles: tile.compare into a byte mask,
    then tile.select (TileLang-Ascend's npuir vectorization_in_parallel example writes it), with a
    scalar `a` filled into a tile, a scalar left operand swapping the comparison; NaN inputs pick
    `b` as the scalar form does."""
    @T.prim_func
    def main(A: T.Tensor((16, 64), "float32"), B: T.Tensor((16, 64), "float32"), C: T.Tensor((16, 64), "float32"),
             D: T.Tensor((16, 64), "float32")):
        T.func_attr({"enable_auto_sync": True})
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_ub((8, 64), "float32")
            b = T.alloc_ub((8, 64), "float32")
            c = T.alloc_ub((8, 64), "float32")
            d = T.alloc_ub((8, 64), "float32")
            T.copy(A[vid * 8, 0], a)
            T.copy(B[vid * 8, 0], b)
            for i, j in T.Parallel(8, 64):
                c[i, j] = T.if_then_else(a[i, j] + b[i, j] > 1.0, -2.78, b[i, j] + 3.14 * a[i, j])
            for i, j in T.Parallel(8, 64):
                d[i, j] = T.if_then_else(0.5 <= a[i, j], a[i, j], b[i, j])
            T.copy(c, C[vid * 8, 0])
            T.copy(d, D[vid * 8, 0])
    k = compile_ascend(main)
    src = k.source
    assert src.count("tile.compare(") == 2 and src.count("tile.select(") == 2 and "parallel(" not in src, src
    rng = np.random.default_rng(31)
    a = rng.standard_normal((16, 64)).astype(np.float32)
    b = rng.standard_normal((16, 64)).astype(np.float32)
    a[3, 5] = np.nan
    c = np.zeros((16, 64), np.float32)
    d = np.zeros((16, 64), np.float32)
    k.launch([a, b, c, d])
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_allclose(c, np.where(a64 + b64 > 1.0, -2.78, b64 + 3.14 * a64), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d, np.where(0.5 <= a64, a64, b64), rtol=1e-6)


def test_parallel_elementwise_becomes_vector_ops():
    @T.prim_func
    def main(A: T.Tensor((16, 64), "float32"), B: T.Tensor((16, 64), "float32")):
        T.func_attr({"enable_auto_sync": True})
        with T.Kernel(1, is_npu=True) as (cid, vid):
            x = T.alloc_ub((8, 64), "float32")
            y = T.alloc_ub((8, 64), "float32")
            T.copy(A[vid * 8, 0], x)
            for i, j in T.Parallel(8, 64):
                y[i, j] = T.exp(x[i, j] * 2.0) + x[i, j] - 1.0
            for i, j in T.Parallel(8, 64):
                y[i, j] = 1.0 / y[i, j] - x[j % 8, i]  # transposed access: stays a scalar loop
            T.copy(y, B[vid * 8, 0])
    k = compile_ascend(main)
    src = k.source
    assert "tile.exp(par_tmp" in src and "tile.sub(y[0 :+ 8, 0 :+ 64]" in src
    assert src.count("parallel(") == 2  # only the second nest keeps its loops
    a = np.random.default_rng(12).standard_normal((16, 64)).astype(np.float32)
    b = np.zeros((16, 64), np.float32)
    k.launch([a, b])
    for v in range(2):
        x = a[v * 8:(v + 1) * 8].astype(np.float64)
        y = np.exp(x * 2) + x - 1
        y = 1.0 / y - np.array([[x[j % 8, i] for j in range(64)] for i in range(8)])
        np.testing.assert_allclose(b[v * 8:(v + 1) * 8], y, rtol=1e-4, atol=1e-5)
