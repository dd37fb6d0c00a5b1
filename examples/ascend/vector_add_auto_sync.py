"""The Expert vector add with no flags at all: TL_ASCEND_AUTO_SYNC inserts the MTE2->V and V->MTE3
set_flag/wait_flag pairs (kernel.get_kernel_source() shows them). The GM<->UB copies are left
outside the T.Scope, as many tilelang-ascend kernels do: the compiler places them on the vector
cores because they use UB."""
import argparse

import numpy as np

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1], pass_configs={tilelang.PassConfigKey.TL_ASCEND_AUTO_SYNC: True})
def vec_add(N, block_N, dtype="float16"):
    n_num = (N + block_N - 1) // block_N  # the last block reads/writes a partial tile (tails are guarded)
    half = block_N // 2

    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(n_num, is_npu=True) as (cid, vid):
            a_ub = T.alloc_ub((half,), dtype)
            b_ub = T.alloc_ub((half,), dtype)
            c_ub = T.alloc_ub((half,), dtype)
            T.copy(A[cid * block_N + vid * half], a_ub)
            T.copy(B[cid * block_N + vid * half], b_ub)
            with T.Scope("V"):
                T.tile.add(c_ub, a_ub, b_ub)
            T.copy(c_ub, C[cid * block_N + vid * half])

    return main




def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=16384)
    ap.add_argument("--block", type=int, default=2048)
    args = ap.parse_args(argv)
    kernel = vec_add(args.n, args.block)
    rng = np.random.default_rng(1)
    a = rng.standard_normal(args.n).astype(np.float16)
    b = rng.standard_normal(args.n).astype(np.float16)
    c = kernel(a, b)
    ref = (a.astype(np.float32) + b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(c.astype(np.float32), ref.astype(np.float32), rtol=1e-3, atol=1e-3)
    print("Kernel Output Match!")


if __name__ == "__main__":
    main()
