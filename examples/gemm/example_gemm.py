"""Tiled GEMM C = A @ B (or A @ B^T with transpose_B) in float32, float16 and bfloat16.

The classic TileLang GEMM: each block owns a block_M x block_N tile of C, accumulated in a float32
fragment while a T.Pipelined loop walks K, staging tiles of A and B through shared memory (on GPUs
the copies of the next iterations overlap the T.gemm of the current one). The accumulator is
converted to the output dtype by the final T.copy.
"""
import argparse
import sys

import numpy as np

import tilelang
import tilelang.language as T


def matmul(M, N, K, block_M=64, block_N=64, block_K=32, dtype="float16", accum_dtype="float32",
           transpose_B=False, num_stages=2, threads=128):
    B_shape = (N, K) if transpose_B else (K, N)
    B_shared_shape = (block_N, block_K) if transpose_B else (block_K, block_N)

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared(B_shared_shape, dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                if transpose_B:
                    T.copy(B[bx * block_N, k * block_K], B_shared)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=transpose_B)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


# --- host side: random inputs, numpy reference in float64 ------------------------------------------

# ~ a few ulps of the output dtype; float32 allows for the GPU's fp32 GEMM (3xTF32 on tensor cores), whose
# error grows with K like an fp32 dot product's, not like one rounding of the result.
TOLERANCE = {"float32": 1e-3, "float16": 2e-3, "bfloat16": 1.6e-2}


def numpy_dtype(name):
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def run(M, N, K, dtype, transpose_B, block_M, block_N, block_K, target, rng):
    kernel = tilelang.jit(out_idx=[-1], target=target)(matmul)(
        M, N, K, block_M, block_N, block_K, dtype, transpose_B=transpose_B)
    a = rng.uniform(-1, 1, (M, K)).astype(numpy_dtype(dtype))
    b = rng.uniform(-1, 1, (N, K) if transpose_B else (K, N)).astype(numpy_dtype(dtype))
    c = kernel(a, b).astype(np.float64)
    b64 = b.astype(np.float64)
    ref = a.astype(np.float64) @ (b64.T if transpose_B else b64)
    tol = TOLERANCE[dtype]
    name = f"{dtype} GEMM {M}x{N}x{K}{' (transpose_B)' if transpose_B else ''}"
    if np.allclose(c, ref, rtol=tol, atol=tol):
        return True
    err = np.abs(c - ref)
    worst = np.unravel_index(int(np.argmax(err)), err.shape)
    print(f"{name}: Kernel Output Mismatch: max abs error {err.max():.3e} at {worst}: "
          f"got {c[worst]!r}, expected {ref[worst]!r}")
    return False


def main(M=1024, N=1024, K=1024, block_M=64, block_N=64, block_K=32, dtypes=("float32", "float16", "bfloat16"),
         transposes=(False, True), target="auto"):
    rng = np.random.default_rng(0)
    ok = True
    for dtype in dtypes:
        for transpose_B in transposes:
            ok &= run(M, N, K, dtype, transpose_B, block_M, block_N, block_K, target, rng)
    if not ok:
        sys.exit(1)
    print("Kernel Output Match!")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=1024)
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--k", type=int, default=1024)
    parser.add_argument("--dtype", choices=["float32", "float16", "bfloat16"], default=None,
                        help="one dtype (default: all three)")
    parser.add_argument("--target", default="auto")
    args = parser.parse_args()
    main(args.m, args.n, args.k, dtypes=(args.dtype,) if args.dtype else ("float32", "float16", "bfloat16"),
         target=args.target)
