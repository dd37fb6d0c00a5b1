"""Row softmax on the vector cores with T.tile primitives and hand-written flags, written the way
tilelang-ascend Expert kernels are: reductions with T.reduce_max / T.reduce_sum, per-row scalar
operands read by the scalar unit (hence the V->S flags), pipe_barrier("v") between dependent vector
instructions."""
import argparse

import numpy as np

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def softmax(M, N, block_M=16, dtype="float32"):
    rows = block_M // 2

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(M // block_M, is_npu=True) as (cid, vid):
            x_ub = T.alloc_ub((rows, N), dtype)
            m_ub = T.alloc_ub((rows,), dtype)
            s_ub = T.alloc_ub((rows,), dtype)
            with T.Scope("V"):
                row0 = cid * block_M + vid * rows
                T.copy(X[row0, 0], x_ub)
                T.set_flag("mte2", "v", 0)
                T.wait_flag("mte2", "v", 0)
                T.reduce_max(x_ub, m_ub, dim=-1)
                T.set_flag("v", "s", 0)
                T.wait_flag("v", "s", 0)
                for i in T.serial(rows):
                    T.tile.sub(x_ub[i, :], x_ub[i, :], m_ub[i])
                T.pipe_barrier("v")
                T.tile.exp(x_ub, x_ub)
                T.pipe_barrier("v")
                T.reduce_sum(x_ub, s_ub, dim=-1)
                T.set_flag("v", "s", 0)
                T.wait_flag("v", "s", 0)
                for i in T.serial(rows):
                    T.tile.div(x_ub[i, :], x_ub[i, :], s_ub[i])
                T.set_flag("v", "mte3", 0)
                T.wait_flag("v", "mte3", 0)
                T.copy(x_ub, Y[row0, 0])

    return main


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=128)
    ap.add_argument("--n", type=int, default=1024)
    args = ap.parse_args(argv)
    kernel = softmax(args.m, args.n)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((args.m, args.n)).astype(np.float32) * 3
    y = kernel(x)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)
    print("Kernel Output Match!")


if __name__ == "__main__":
    main()
