"""ascend: T.async_copy is a plain copy (GM -> UB here) and T.ptx_wait_group does nothing; the
pipe syncs come from TL_ASCEND_AUTO_SYNC as for T.copy. Run on the Ascend simulator."""
import numpy as np

import tilelang
import tilelang.language as T


def test_async_copy_is_a_copy_on_ascend():
    @T.prim_func
    def main(A: T.Tensor((128, 128), "float16"), B: T.Tensor((128, 128), "float16")):
        with T.Kernel(2, is_npu=True) as (cid, vid):
            s = T.alloc_shared((32, 128), "float16")
            with T.Scope("V"):
                T.async_copy(A[cid * 64 + vid * 32, 0], s)
                T.ptx_commit_group()
                T.ptx_wait_group(0)
                T.copy(s, B[cid * 64 + vid * 32, 0])

    k = tilelang.compile(main, target="ascend", pass_configs={"tl.ascend_auto_sync": True})
    a = np.random.default_rng(5).standard_normal((128, 128)).astype(np.float16)
    b = np.zeros_like(a)
    k(a, b)
    np.testing.assert_array_equal(b, a)
