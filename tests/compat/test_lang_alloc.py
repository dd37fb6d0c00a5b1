"""Allocation primitives: T.alloc_var (with init), T.alloc_local, T.alloc_shared / T.alloc_fragment,
T.alloc_global (a runtime-allocated scratch tensor shared by the kernels of one function),
T.alloc_buffer (TVM's spelling, by scope)."""
import tilelang
import tilelang.language as T
from lang_util import DEVICE, close, randn, torch


@tilelang.jit(out_idx=[-1])
def row_max_with_var(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), Out: T.Tensor((M,), "float32")):
        with T.Kernel(M, threads=32) as bx:
            best = T.alloc_var("float32", init=-T.infinity("float32"))
            count = T.alloc_var(T.int32, init=0)
            for j in T.serial(N):
                if A[bx, j] > best:
                    best = A[bx, j]
                    count += 1
            Out[bx] = best + T.cast(count, "float32") * 0.0

    return main


def test_alloc_var_with_init():
    A = randn(16, 40, seed=1)
    close(row_max_with_var(16, 40)(A), A.amax(1))


@tilelang.jit(out_idx=[-1])
def split_sum(M, N, num_split):
    # TileLang's flash-decoding pattern: partial results of a split kernel in a T.alloc_global
    # tensor, combined by a second kernel of the same function.
    chunk = N // num_split

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), Out: T.Tensor((M,), "float32")):
        partial = T.alloc_global((num_split, M), "float32")
        with T.Kernel(num_split, threads=128) as s:
            a = T.alloc_fragment((M, chunk), "float32")
            acc = T.alloc_fragment((M,), "float32")
            T.copy(A[0, s * chunk], a)
            T.reduce_sum(a, acc, dim=1)
            T.copy(acc, partial[s, 0])
        with T.Kernel(1, threads=128) as _:
            total = T.alloc_fragment((M,), "float32")
            T.clear(total)
            for s in T.serial(num_split):
                for i in T.Parallel(M):
                    total[i] += partial[s, i]
            T.copy(total, Out)

    return main


def test_alloc_global_between_kernels():
    M, N, S = 64, 512, 4
    k = split_sum(M, N, S)
    assert [p.role for p in k.params] == ["input", "output", "workspace"]
    for seed in (1, 2):  # the scratch tensor is fresh (zeroed) at every call
        A = randn(M, N, seed=seed)
        close(k(A), A.double().sum(1), rtol=1e-5, atol=1e-4)


@tilelang.jit(out_idx=[-1])
def local_and_buffer(N, block=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), Out: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            s = T.alloc_buffer((block,), "float32", scope="shared.dyn")
            loc = T.alloc_local((2,), "float32")
            tx = T.get_thread_binding()
            s[tx] = A[bx * block + tx]
            loc[0] = s[block - 1 - tx]
            loc[1] = loc[0] * 2.0
            Out[bx * block + tx] = loc[1]

    return main


def test_alloc_local_and_alloc_buffer():
    N, b = 256, 64
    A = randn(N, seed=3)
    ref = (A.reshape(-1, b).flip(1) * 2).reshape(-1)
    close(local_and_buffer(N, b)(A), ref)


@tilelang.jit(out_idx=[-1])
def naive_gemv(N, K, BLOCK_N=128, BLOCK_K=64):
    # TileLang's examples/gemv naive_gemv: thread-level code (T.get_thread_binding), a T.clear of a
    # T.alloc_local register, shared tiles written and read without an explicit barrier (the
    # compiler places them: cuda insert_thread_sync, cpu serialize_threads).
    @T.prim_func
    def main(A: T.Tensor((K,), T.float16), B: T.Tensor((N, K), T.float16), C: T.Tensor((N,), T.float16)):
        with T.Kernel(T.ceildiv(N, BLOCK_N)) as bn:
            tn = T.get_thread_binding(0)
            A_shared = T.alloc_shared((BLOCK_K,), T.float16)
            B_shared = T.alloc_shared((BLOCK_N, BLOCK_K), T.float16)
            C_reg = T.alloc_local((1,), T.float)
            T.clear(C_reg)
            for bk in T.serial(T.ceildiv(K, BLOCK_K)):
                for tk in T.serial(BLOCK_K):
                    A_shared[tk] = A[bk * BLOCK_K + tk]
                    B_shared[tn, tk] = B[bn * BLOCK_N + tn, bk * BLOCK_K + tk]
                for tk in T.serial(BLOCK_K):
                    C_reg[0] += A_shared[tk].astype(T.float) * B_shared[tn, tk].astype(T.float)
            C[bn * BLOCK_N + tn] = C_reg[0]

    return main


def test_thread_level_gemv():
    N, K = 256, 256
    a = randn(K, dtype=torch.float16, seed=11)
    b = randn(N, K, dtype=torch.float16, seed=12)
    close(naive_gemv(N, K)(a, b), b.double() @ a.double(), rtol=1e-2, atol=5e-2)


@tilelang.jit(out_idx=[-1])
def splitk_gemv(N, K, BLOCK_N=32, BLOCK_K=64, reduce_threads=16):
    # TileLang's examples/gemv splitk_gemv: a 2-D thread block, partial dot products combined with
    # T.atomic_add into a shared accumulator, read back by every thread.
    TILE_K = T.ceildiv(BLOCK_K, reduce_threads)

    @T.prim_func
    def main(A: T.Tensor((K,), T.float16), B: T.Tensor((N, K), T.float16), C: T.Tensor((N,), T.float16)):
        with T.Kernel(T.ceildiv(N, BLOCK_N), threads=(BLOCK_N, reduce_threads)) as bn:
            tn = T.get_thread_binding(0)
            tk = T.get_thread_binding(1)
            A_local = T.alloc_local((TILE_K,), T.float16)
            B_local = T.alloc_local((TILE_K,), T.float16)
            C_shared = T.alloc_shared((BLOCK_N,), T.float)
            C_accum = T.alloc_local((1,), T.float)
            if tk == 0:
                C_shared[tn] = 0
            T.clear(C_accum)
            for bk in T.serial(T.ceildiv(K, BLOCK_K)):
                for k in T.serial(TILE_K):
                    A_local[k] = A[bk * BLOCK_K + tk * TILE_K + k]
                    B_local[k] = B[bn * BLOCK_N + tn, bk * BLOCK_K + tk * TILE_K + k]
                for k in T.serial(TILE_K):
                    C_accum[0] += A_local[k].astype(T.float) * B_local[k].astype(T.float)
            T.atomic_add(C_shared[tn], C_accum[0])
            C[bn * BLOCK_N + tn] = C_shared[tn]

    return main


def test_split_k_gemv_with_shared_atomics():
    N, K = 128, 256
    a = randn(K, dtype=torch.float16, seed=13)
    b = randn(N, K, dtype=torch.float16, seed=14)
    close(splitk_gemv(N, K)(a, b), b.double() @ a.double(), rtol=1e-2, atol=5e-2)
