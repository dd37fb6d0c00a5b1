"""T.reshape / T.view: the official puzzles' im2col convolution (a 3-D shared tile written element
by element, its 2-D reshape fed to T.gemm), a scan over a (1, n) view of a 1-D tile (TileLang issue
1001), a reshape of a fragment read element-wise, and a reshape of a kernel parameter."""
import pytest

import tilelang
import tilelang.language as T
from lang_util import DEVICE, close, randn, torch


@tilelang.jit(out_idx=[-1])
def conv1d_im2col(N, L, KL, F, BLOCK_N=8, BLOCK_L=16, flat_out=False):
    @T.prim_func
    def main(X: T.Tensor((N, L), T.float16), K: T.Tensor((KL, F), T.float16), O: T.Tensor((N, L, F), T.float16)):
        with T.Kernel(N // BLOCK_N, L // BLOCK_L, threads=128) as (pid_n, pid_l):
            X_shared = T.alloc_shared((BLOCK_N, BLOCK_L, KL), T.float16)
            K_shared = T.alloc_shared((KL, F), T.float16)
            O_local = T.alloc_fragment((BLOCK_N * BLOCK_L, F), T.float32)
            for i, j, k in T.Parallel(BLOCK_N, BLOCK_L, KL):
                X_shared[i, j, k] = T.if_then_else(pid_l * BLOCK_L + j + k < L,
                                                   X[pid_n * BLOCK_N + i, pid_l * BLOCK_L + j + k], 0)
            X_reshaped = T.reshape(X_shared, (BLOCK_N * BLOCK_L, KL))
            T.copy(K, K_shared)
            T.gemm(X_reshaped, K_shared, O_local, clear_accum=True)
            if flat_out:
                O_flat = T.reshape(O, (N * L, F))
                for i, f in T.Parallel(BLOCK_N * BLOCK_L, F):
                    O_flat[(pid_n * BLOCK_N + i // BLOCK_L) * L + pid_l * BLOCK_L + i % BLOCK_L, f] = O_local[i, f]
            else:  # the puzzle's answer: the 2-D accumulator copied out through its 3-D reshape
                O_reshaped = T.reshape(O_local, (BLOCK_N, BLOCK_L, F))
                T.copy(O_reshaped, O[pid_n * BLOCK_N, pid_l * BLOCK_L, 0])

    return main


def test_im2col_reshape_for_gemm():
    N, L, KL, F = 32, 64, 16, 32
    x = randn(N, L, dtype=torch.float16, seed=1)
    k = randn(KL, F, dtype=torch.float16, seed=2)
    ref = torch.zeros(N, L, F, dtype=torch.float64, device=DEVICE)
    for s in range(KL):
        ref[:, :L - s, :] += x[:, s:, None].double() * k[s].double()
    for flat_out in (False, True):
        close(conv1d_im2col(N, L, KL, F, flat_out=flat_out)(x, k), ref, rtol=1e-2, atol=2e-2)


@tilelang.jit(out_idx=[-1])
def scan_view(n):
    @T.prim_func
    def main(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
        with T.Kernel(1, threads=128) as _:
            smem = T.alloc_shared((n,), T.float32)
            T.copy(A, smem)
            T.cumsum(T.view(smem, (1, n)), dim=1)
            T.copy(smem, B)

    return main


def test_view_in_a_scan():
    A = randn(256, seed=3)
    close(scan_view(256)(A), torch.cumsum(A.double(), 0), rtol=1e-5, atol=1e-4)


@tilelang.jit(out_idx=[-1])
def fragment_rows(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float32), Out: T.Tensor((M * N,), T.float32)):
        with T.Kernel(1, threads=128) as _:
            frag = T.alloc_fragment((M, N), T.float32)
            T.copy(A, frag)
            flat = T.reshape(frag, (M * N,))
            for i in T.Parallel(M * N):
                Out[i] = flat[i] * 2.0

    return main


def test_reshape_of_a_fragment():
    A = randn(16, 8, seed=4)
    close(fragment_rows(16, 8)(A), A.reshape(-1) * 2)


def test_view_errors():
    with pytest.raises(NotImplementedError, match="T.view.*dtype"):
        @T.prim_func
        def bad(A: T.Tensor((64,), T.float32)):
            with T.Kernel(1, threads=32) as _:
                s = T.alloc_shared((64,), T.float32)
                T.view(s, (64,), dtype=T.int32)
    with pytest.raises(ValueError, match="has 32 elements but 's' has 64"):
        @T.prim_func
        def bad2(A: T.Tensor((64,), T.float32)):
            with T.Kernel(1, threads=32) as _:
                s = T.alloc_shared((64,), T.float32)
                v = T.reshape(s, (4, 8))
                A[0] = v[0, 0]


@tilelang.jit(out_idx=[-1])
def flat_view_of_a_parameter(KH, KW, C, F, block_K=32):
    # TileLang's convolution example reads its 4-D kernel through a 2-D tensor over the same data:
    # `kernel_flat = T.Tensor((KH * KW * C, F), dtype, kernel.data)`. (A tile op on part of such a
    # view of a kernel parameter is not implemented: the parameter keeps its shape.)
    @T.prim_func
    def main(W: T.Tensor((KH, KW, C, F), T.float32), Out: T.Tensor((KH * KW * C, F), T.float32)):
        with T.Kernel(T.ceildiv(KH * KW * C, block_K), threads=128) as bx:
            w_flat = T.Tensor((KH * KW * C, F), T.float32, W.data)
            for i, j in T.Parallel(block_K, F):
                if bx * block_K + i < KH * KW * C:
                    Out[bx * block_K + i, j] = w_flat[bx * block_K + i, j].astype(T.float32) * 2

    return main


def test_tensor_over_another_buffers_data_and_astype():
    W = randn(3, 3, 8, 16, seed=8)
    close(flat_view_of_a_parameter(3, 3, 8, 16)(W), W.reshape(-1, 16) * 2)
