"""Kernel variants for the lowering tests of the copy-engine all-gather GEMM (test_distributed.py)."""
import tilelang.language as T


def gemm_wait_with_global_addend(M, N, K, block_M=128, block_N=256, block_K=64):
    """C = A @ B + D after a T.wait: the consumers read D (global) themselves, so the wait must hold
    them too (it stays before the warp roles split)."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), D: T.Tensor((M, N), "float32"),
             C: T.Tensor((M, N), "float32"), flags: T.Tensor((4,), "uint32"), epoch: T.int32):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), "float16")
            B_s = T.alloc_shared((block_K, block_N), "float16")
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.wait(flags[by % 4], epoch)
            T.copy(D[by * block_M, bx * block_N], C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main
