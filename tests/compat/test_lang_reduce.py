"""Reductions as TileLang's examples write them: T.reduce_sum / max / min / abssum / absmax (dim,
clear=False), T.cumsum (reverse), and reducers — T.alloc_reducer accumulated inside T.Parallel
(`acc[i] += ...` or T.reducer_update) and completed by T.finalize_reducer (the gemv example's
`gemv_alloc_reducer`, and TileLang's test with a loop shorter than the block)."""
import tilelang
import tilelang.language as T
from lang_util import DEVICE, close, randn, torch


@tilelang.jit(out_idx=[-1])
def reductions(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float32), Out: T.Tensor((6, M), T.float32)):
        with T.Kernel(1, threads=128) as _:
            a = T.alloc_fragment((M, N), T.float32)
            r = T.alloc_fragment((M,), T.float32)
            T.copy(A, a)
            T.reduce_sum(a, r, dim=1)
            T.copy(r, Out[0, :])
            T.reduce_max(a, r, dim=-1)
            T.copy(r, Out[1, :])
            T.reduce_min(a, r, dim=1)
            T.copy(r, Out[2, :])
            T.reduce_abssum(a, r, dim=1)
            T.copy(r, Out[3, :])
            T.reduce_absmax(a, r, dim=1)
            T.copy(r, Out[4, :])
            T.fill(r, 1.0)
            T.reduce_sum(a, r, dim=1, clear=False)
            T.copy(r, Out[5, :])

    return main


def test_reduce_forms():
    M, N = 64, 32
    A = randn(M, N, seed=1).double()
    out = reductions(M, N)(A.float())
    ref = torch.stack([A.sum(1), A.amax(1), A.amin(1), A.abs().sum(1), A.abs().amax(1), A.sum(1) + 1])
    close(out, ref, rtol=1e-5, atol=1e-4)


@tilelang.jit(out_idx=[-1])
def scans(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float32), Out: T.Tensor((2, M, N), T.float32)):
        with T.Kernel(1, threads=128) as _:
            s = T.alloc_shared((M, N), T.float32)
            d = T.alloc_shared((M, N), T.float32)
            T.copy(A, s)
            T.cumsum(s, d, dim=1)
            T.copy(d, Out[0, :, :])
            T.cumsum(s, dim=0, reverse=True)
            T.copy(s, Out[1, :, :])

    return main


def test_cumsum_forms():
    A = randn(16, 32, seed=2).double()
    out = scans(16, 32)(A.float())
    close(out[0], A.cumsum(1), rtol=1e-5, atol=1e-4)
    close(out[1], A.flip(0).cumsum(0).flip(0), rtol=1e-5, atol=1e-4)


@tilelang.jit(out_idx=[-1])
def gemv_alloc_reducer(M, N, block_M=64, block_N=64, num_stages=2, threads=128, dtype=T.float16, accum=T.float):
    @T.prim_func
    def main(a: T.Tensor((M, N), dtype), x: T.Tensor((N,), dtype), o: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as i0_m:
            o_reducer = T.alloc_reducer(block_M, accum, replication="all")
            T.clear(o_reducer)
            for i0_n in T.Pipelined(T.ceildiv(N, block_N), num_stages=num_stages):
                a_smem = T.alloc_shared((block_M, block_N), dtype)
                T.copy(a[i0_m * block_M, i0_n * block_N], a_smem)
                a_frag = T.alloc_fragment((block_M, block_N), dtype)
                T.copy(a_smem, a_frag)
                x_frag = T.alloc_fragment(block_N, dtype)
                T.copy(x[i0_n * block_N], x_frag)
                for i1_m, i1_n in T.Parallel(block_M, block_N):
                    o_reducer[i1_m] += a_frag[i1_m, i1_n] * x_frag[i1_n]
            T.finalize_reducer(o_reducer)
            T.copy(o_reducer, o[i0_m * block_M])

    return main


def test_gemv_with_alloc_reducer():
    M, N = 256, 512
    a = randn(M, N, dtype=torch.float16, seed=3)
    x = randn(N, dtype=torch.float16, seed=4)
    close(gemv_alloc_reducer(M, N)(a, x), a.double() @ x.double(), rtol=1e-2, atol=5e-2)


@tilelang.jit(out_idx=[-1])
def reducer_v2(M, N, op):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float32), Out: T.Tensor((M,), T.float32)):
        with T.Kernel(1, threads=128) as _:
            a = T.alloc_fragment((M, N), T.float32)
            acc = T.alloc_reducer((M,), T.float32, op=op)
            res = T.alloc_fragment((M,), T.float32)
            T.copy(A, a)
            T.reducer_init(acc, 0.25)
            for i, j in T.Parallel(M, N):
                T.reducer_update(acc[i], a[i, j])
            T.finalize_reducer(acc, res)
            T.copy(res, Out)

    return main


def test_reducer_init_update_finalize():
    A = randn(32, 64, seed=5).double()
    close(reducer_v2(32, 64, "sum")(A.float()), A.sum(1) + 0.25, rtol=1e-5, atol=1e-4)
    close(reducer_v2(32, 64, "max")(A.float()), A.amax(1).clamp(min=0.25))
    close(reducer_v2(32, 64, "min")(A.float()), A.amin(1).clamp(max=0.25))


@tilelang.jit(out_idx=[-1])
def short_loop_reducer(extent, threads=128):
    @T.prim_func
    def main(A: T.Tensor((extent,), T.float32), B: T.Tensor((1,), T.float32)):
        with T.Kernel(1, threads=threads):
            src = T.alloc_fragment((extent,), T.float32)
            T.copy(A, src)
            total = T.alloc_reducer((1,), T.float32, replication="all")
            T.clear(total)
            for i in T.Parallel(extent):
                total[0] += src[i]
            T.finalize_reducer(total)
            if T.get_thread_binding() == 0:
                B[0] = total[0]

    return main


def test_reducer_with_a_loop_shorter_than_the_block():
    A = torch.arange(1, 9, dtype=torch.float32, device=DEVICE)
    assert float(short_loop_reducer(8)(A)[0]) == 36.0
