"""Target-neutral language features of issue 12 on the Ascend simulator: T.alloc_global (a
runtime-allocated GM scratch tensor) and T.reshape of a UB tile (element accesses through the
view, tile copies through the base)."""
import numpy as np

import tilelang
import tilelang.language as T


def test_alloc_global_and_reshape_on_ascend():
    M = 2048

    @T.prim_func
    def main(A: T.Tensor((M,), "float32"), B: T.Tensor((M,), "float32")):
        part = T.alloc_global((M,), "float32")
        with T.Kernel(M // 256, threads=1, is_npu=True) as cid:
            a = T.alloc_shared((256,), "float32")
            T.copy(A[cid * 256], a)
            a2 = T.reshape(a, (16, 16))
            for i, j in T.Parallel(16, 16):
                a2[i, j] = a2[i, j] * 2.0 + T.cast(j, "float32")
            T.copy(a, part[cid * 256])
            b = T.alloc_shared((256,), "float32")
            T.copy(part[cid * 256], b)
            T.copy(b, B[cid * 256])

    k = tilelang.compile(main, out_idx=[-1], target="ascend", pass_configs={"tl.ascend_auto_sync": True})
    assert [p.role for p in k.params] == ["input", "output", "workspace"]
    a = np.random.default_rng(1).random(M).astype(np.float32)
    np.testing.assert_allclose(k(a), 2 * a + np.tile(np.arange(16, dtype=np.float32), M // 16), rtol=1e-6)
