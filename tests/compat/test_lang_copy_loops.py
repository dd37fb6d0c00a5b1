"""T.copy forms and loops as TileLang's examples write them: slices with a run-time start, element
origins, negative constant indices, ragged tails (sizes that the tile does not divide), a
Developer-style size list; T.serial with a step, T.unroll, T.vectorized, T.grid, T.Pipelined with
order/stage, T.Persistent, T.use_swizzle, T.Kernel with a thread list and with no grid."""
import tilelang
import tilelang.language as T
from lang_util import DEVICE, close, randn, torch


@tilelang.jit(out_idx=[-1])
def copy_forms(M, N, bm=32, bn=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float32), B: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            s = T.alloc_shared((bm, bn), T.float32)
            f = T.alloc_fragment((bm, bn), T.float32)
            T.copy(A[by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn], s)   # slices (ragged at the edges)
            T.copy(s, f)
            for i, j in T.Parallel(bm, bn):
                f[i, j] = f[i, j] + s[-1, -1] * 0.0 + 1.0                 # negative constant indices
            T.copy(f, B[by * bm, bx * bn])                                 # element origin

    return main


def test_copy_forms_with_ragged_tails():
    M, N = 100, 70
    A = randn(M, N, seed=1)
    close(copy_forms(M, N)(A), A + 1)


@tilelang.jit(out_idx=[-1])
def loops(N, block=64):
    @T.prim_func
    def main(A: T.Tensor((N,), T.float32), Out: T.Tensor((N, 4), T.float32)):
        with T.Kernel(T.ceildiv(N, block), threads=[32, 2]) as bx:
            acc = T.alloc_var(T.float32, init=0)
            for i in T.serial(0, block, 2):          # a step
                acc += A[bx * block + i]
            for i in T.unroll(block):
                Out[bx * block + i, 0] = acc
            for i in T.vectorized(block):
                Out[bx * block + i, 1] = A[bx * block + i] * 2.0
            for i, j in T.grid(block // 8, 8):
                Out[bx * block + i * 8 + j, 2] = T.cast(i * 8 + j, T.float32)
            for i in range(block):
                Out[bx * block + i, 3] = A[bx * block + block - 1 - i]

    return main


def test_loop_kinds():
    N, b = 256, 64
    A = randn(N, seed=2)
    out = loops(N, b)(A)
    a = A.double().reshape(-1, b)
    close(out[:, 0], a[:, 0::2].sum(1).repeat_interleave(b), rtol=1e-5, atol=1e-4)
    close(out[:, 1], A * 2)
    close(out[:, 2], torch.arange(b, device=DEVICE).repeat(N // b).double())
    close(out[:, 3], a.flip(1).reshape(-1))


@tilelang.jit(out_idx=[-1])
def pipelined_gemm(M, N, K, bm=64, bn=64, bk=32, stages=3, persistent=False, swizzle=False):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(4 if persistent else T.ceildiv(N, bn), 1 if persistent else T.ceildiv(M, bm),
                      threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), T.float16)
            B_s = T.alloc_shared((bk, bn), T.float16)
            C_f = T.alloc_fragment((bm, bn), T.float32)
            if swizzle:
                T.use_swizzle(panel_size=2)
            if persistent:
                for tm, tn in T.Persistent([T.ceildiv(M, bm), T.ceildiv(N, bn)], 4, bx):
                    T.clear(C_f)
                    for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                        T.copy(A[tm * bm, k * bk], A_s)
                        T.copy(B[k * bk, tn * bn], B_s)
                        T.gemm(A_s, B_s, C_f)
                    T.copy(C_f, C[tm * bm, tn * bn])
            else:
                T.clear(C_f)
                for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages, order=[-1, 0, 1], stage=[0, 0, 1]):
                    T.copy(A[by * bm, k * bk], A_s)
                    T.copy(B[k * bk, bx * bn], B_s)
                    T.gemm(A_s, B_s, C_f)
                T.copy(C_f, C[by * bm, bx * bn])

    return main


def test_pipelined_persistent_swizzled_gemm():
    M, N, K = 192, 128, 96
    A = randn(M, K, dtype=torch.float16, seed=3)
    B = randn(K, N, dtype=torch.float16, seed=4)
    ref = A.double() @ B.double()
    for kw in (dict(), dict(persistent=True), dict(swizzle=True)):
        close(pipelined_gemm(M, N, K, **kw)(A, B), ref, rtol=1e-3, atol=1e-2)


@tilelang.jit(out_idx=[-1])
def single_block(N):
    @T.prim_func
    def main(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32)):
        with T.Kernel(threads=64):
            for i in T.Parallel(N):
                B[i] = T.max(A[i], 0.0)

    return main


def test_kernel_with_no_grid():
    A = randn(200, seed=5)
    close(single_block(200)(A), A.clamp(min=0))


@tilelang.jit
def outer_add(A, B, BLOCK_N: int = 64, BLOCK_M: int = 64):
    # TileLang's outer-product puzzle: both vectors copied into fragments, then broadcast in a
    # 2-d T.Parallel (the fragments must follow the loop's thread layout, not the copies').
    N, M = T.const("N, M")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((M,), T.float16)
    C = T.empty((N, M), T.float16)
    with T.Kernel(N // BLOCK_N, M // BLOCK_M, threads=256) as (pid_n, pid_m):
        A_local = T.alloc_fragment((BLOCK_N,), T.float16)
        B_local = T.alloc_fragment((BLOCK_M,), T.float16)
        C_local = T.alloc_fragment((BLOCK_N, BLOCK_M), T.float16)
        T.copy(A[pid_n * BLOCK_N], A_local)
        T.copy(B[pid_m * BLOCK_M], B_local)
        for i, j in T.Parallel(BLOCK_N, BLOCK_M):
            C_local[i, j] = A_local[i] + B_local[j]
        T.copy(C_local, C[pid_n * BLOCK_N, pid_m * BLOCK_M])
    return C


def test_broadcast_fragments_follow_the_loop():
    A = randn(256, seed=5).half()
    B = randn(128, seed=6).half()
    C = outer_add(A, B)
    close(C.double(), (A.double()[:, None] + B.double()[None, :]).half().double(), rtol=1e-3, atol=1e-3)


@tilelang.jit
def matmul_in_fragments(A, B, BLOCK_M: int = 64, BLOCK_N: int = 64, BLOCK_K: int = 32):
    # TileLang's matrix puzzle (naive form): both operands copied into fragments, then T.gemm.
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=128) as (pid_n, pid_m):
        A_local = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float16)
        B_local = T.alloc_fragment((BLOCK_K, BLOCK_N), T.float16)
        C_local = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(C_local)
        for k in T.Serial(K // BLOCK_K):
            T.copy(A[pid_m * BLOCK_M, k * BLOCK_K], A_local)
            T.copy(B[k * BLOCK_K, pid_n * BLOCK_N], B_local)
            T.gemm(A_local, B_local, C_local)
        T.copy(C_local, C[pid_m * BLOCK_M, pid_n * BLOCK_N])
    return C


def test_gemm_of_two_fragments():
    A = randn(128, 96, seed=7).half()
    B = randn(96, 64, seed=8).half()
    C = matmul_in_fragments(A, B)
    close(C.double(), A.double() @ B.double(), rtol=2e-2, atol=5e-2)


def test_copy_between_regions_of_different_shapes():
    """TileLang's rule: the copy runs over the region in the lower-level memory (the source when both
    are global), the other region keeping its start; a global source smaller than its fragment
    destination is read as large as the fragment. A destination smaller than the source it is
    below in memory level stays refused (tests/error/test_kernel_errors.py)."""
    M, N = 32, 16

    @T.prim_func
    def cols(A: T.Tensor((M, N), T.float32), B: T.Tensor((M, N), T.float32)):
        with T.Kernel(1, threads=128):
            T.copy(A[:, :2], B[:, 3:6])  # two columns, into B[:, 3:5]

    @T.prim_func
    def rows(A: T.Tensor((M, N), T.float32), B: T.Tensor((M, N), T.float32)):
        with T.Kernel(1, threads=128):
            f = T.alloc_fragment((16, N), T.float32)
            T.copy(A[8:12, :], f)  # the fragment's 16 rows: A[8:24, :]
            T.copy(f, B[0:16, :])

    A = randn(M, N, seed=3)
    for prog, expect in ((cols, lambda a, b: b.__setitem__((slice(None), slice(3, 5)), a[:, :2])),
                         (rows, lambda a, b: b.__setitem__((slice(0, 16), slice(None)), a[8:24, :]))):
        kernel = tilelang.compile(prog, target="cpu" if DEVICE == "cpu" else "auto")
        B = torch.full((M, N), 7.0, device=A.device)
        want = B.clone()
        expect(A, want)
        kernel(A, B)
        close(B, want)
