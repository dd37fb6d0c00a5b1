"""TileLang programs that put a fragment on threads that do not start at 0 (T.Fragment maps
`offset + ...`, as TileLang's offset-thread reduction test does) and that stage tiles with
T.async_copy + T.ptx_wait_group (a hand-written cp.async pipeline), written as TileLang's tests
write them, checked against float64 references on random inputs. `make test` runs them on the cpu
target (where T.async_copy is a plain copy and the layouts are hints); scripts/gpu_check.sh on cuda
(cp.async, the thread-offset reductions)."""
import tilelang
import tilelang.language as T
from lang_util import DEVICE, close, randn, torch


@tilelang.jit(out_idx=[-1])
def offset_thread_reduce(rows, width, offset, vector=8, threads=128):
    n = width // vector

    @T.prim_func
    def main(x: T.Tensor((rows, width), T.float32), out: T.Tensor((2, rows, width), T.float32)):
        with T.Kernel(1, threads=threads):
            x_frag = T.alloc_fragment((rows, width), T.float32)
            s = T.alloc_fragment((rows,), T.float32)
            m = T.alloc_fragment((rows,), T.float32)
            T.annotate_layout({
                x_frag: T.Fragment(x_frag.shape, forward_fn=lambda i, j: (offset + j // vector, i * vector + j % vector)),
                s: T.Fragment(s.shape, forward_fn=lambda i, rep: (offset + rep, i), replicate=n),
                m: T.Fragment(m.shape, forward_fn=lambda i, rep: (offset + rep, i), replicate=n),
            })
            for i, j in T.Parallel(rows, width):
                x_frag[i, j] = x[i, j]
            T.reduce_sum(x_frag, s, dim=1)
            T.reduce_max(x_frag, m, dim=1)
            for i, j in T.Parallel(rows, width):
                out[0, i, j] = x_frag[i, j] / s[i]
                out[1, i, j] = x_frag[i, j] - m[i]

    return main


def test_offset_thread_reduce():
    for rows, width, offset, threads in [(2, 512, 32, 128), (4, 256, 64, 128), (2, 1024, 128, 256)]:
        x = randn(rows, width, seed=rows + offset).abs().double() + 0.5
        out = offset_thread_reduce(rows, width, offset, threads=threads)(x.float())
        ref = torch.stack([x / x.sum(1, keepdim=True), x - x.amax(1, keepdim=True)])
        close(out, ref, rtol=1e-5, atol=1e-6)


@tilelang.jit(out_idx=[-1])
def async_staged(M, N, bm, bn):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float16), B: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            s = T.alloc_shared((bm, bn), T.float16)
            f = T.alloc_fragment((bm, bn), T.float32)
            T.async_copy(A[by * bm, bx * bn], s)
            T.ptx_wait_group(0)
            T.copy(s, f)
            for i, j in T.Parallel(bm, bn):
                f[i, j] = f[i, j] * 2 + 1
            T.copy(f, B[by * bm, bx * bn])

    return main


@tilelang.jit(out_idx=[-1])
def async_double_buffered(M, K, bm, bk):
    nk = K // bk

    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), Out: T.Tensor((M,), T.float32)):
        with T.Kernel(M // bm, threads=128) as bx:
            s0 = T.alloc_shared((bm, bk), T.float16)
            s1 = T.alloc_shared((bm, bk), T.float16)
            tile = T.alloc_fragment((bm, bk), T.float32)
            acc = T.alloc_fragment((bm,), T.float32)
            T.clear(acc)
            T.async_copy(A[bx * bm, 0], s0)
            for k2 in T.serial(nk // 2):
                T.async_copy(A[bx * bm, (2 * k2 + 1) * bk], s1)
                T.ptx_wait_group(1)
                T.copy(s0, tile)
                T.reduce_sum(tile, acc, dim=1, clear=False)
                T.async_copy(A[bx * bm, T.min(2 * k2 + 2, nk - 1) * bk], s0)
                T.ptx_wait_group(1)
                T.copy(s1, tile)
                T.reduce_sum(tile, acc, dim=1, clear=False)
            T.ptx_wait_group(0)
            T.copy(acc, Out[bx * bm])

    return main


def test_async_copy_staged():
    A = randn(192, 160, seed=5, dtype=torch.float16)
    B = async_staged(192, 160, 64, 64)(A)  # ragged tiles: the copy guards the edges
    close(B, A.double() * 2 + 1, rtol=1e-6, atol=1e-6)


def test_async_copy_double_buffered():
    A = randn(128, 256, seed=6, dtype=torch.float16)
    out = async_double_buffered(128, 256, 64, 32)(A)
    close(out, A.double().sum(1), rtol=1e-4, atol=1e-3)


def test_async_copy_element():
    # One element to one element without annotations: a plain store, as in TileLang
    @tilelang.jit(out_idx=[-1])
    def k():
        @T.prim_func
        def main(A: T.Tensor((4,), T.float32), B: T.Tensor((4,), T.float32)):
            with T.Kernel(1, threads=32):
                s = T.alloc_shared((4,), T.float32)
                for i in T.serial(4):
                    T.async_copy(A[i], s[i])
                T.ptx_wait_group(0)
                for i in T.serial(4):
                    B[i] = s[i] * 3
        return main

    A = randn(4, seed=7)
    close(k()(A), A.double() * 3, rtol=1e-6, atol=1e-6)
