"""Row softmax in Developer mode: shared buffers, T.reduce_max / T.reduce_sum and T.Parallel with
row broadcasts; no scopes, no flags, no vid. The compiler puts the buffers in UB, gives each of the
two vector cores half of the rows, turns each T.Parallel into per-row vector instructions and
inserts the syncs. The example prints the simulated time next to the Expert softmax
(softmax_tile.py: hand-written flags and per-row T.tile ops) on the same problem."""
import argparse

import numpy as np

import tilelang
import tilelang.language as T

import softmax_tile


@tilelang.jit(out_idx=[-1], target="npuir")
def softmax(M, N, block_M=16, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(M // block_M, is_npu=True) as cid:
            x = T.alloc_shared((block_M, N), dtype)
            m = T.alloc_shared((block_M,), dtype)
            s = T.alloc_shared((block_M,), dtype)
            T.copy(X[cid * block_M, 0], x)
            T.reduce_max(x, m, dim=-1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = T.exp(x[i, j] - m[i])
            T.reduce_sum(x, s, dim=-1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] / s[i]
            T.copy(x, Y[cid * block_M, 0])

    return main


def run(M, N, seed=6):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((M, N)).astype(np.float32) * 3
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    cycles = {}
    for name, k in (("developer", softmax(M, N)), ("expert", softmax_tile.softmax(M, N))):
        y = k(x)
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)
        cycles[name] = k.info()["cycles"]
    return cycles


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=128)
    ap.add_argument("--n", type=int, default=1024)
    args = ap.parse_args(argv)
    cycles = run(args.m, args.n)
    print(f"simulated cycles (A2): developer {cycles['developer']:.0f}, expert {cycles['expert']:.0f} "
          f"({cycles['developer'] / cycles['expert']:.3f}x)")
    print("Kernel Output Match!")


if __name__ == "__main__":
    main()
