"""T.annotate_safe_value as TileLang programs write it: the value that out-of-bounds reads of a
global tensor give in T.copy (tiles reaching past the tensor's end, element copies in a
T.Parallel), converted to the element type, in force to the end of the enclosing block; without it,
0."""
import pytest

import tilelang
import tilelang.language as T
from lang_util import DEVICE, close, randn, torch


@tilelang.jit(out_idx=[1])
def padded_copy(M, N, PM, PN, bm, bn, src_dtype=T.float32, dst_dtype=T.float32, pad=None):
    @T.prim_func
    def main(A: T.Tensor((M, N), src_dtype), B: T.Tensor((PM, PN), dst_dtype)):
        with T.Kernel(T.ceildiv(PN, bn), T.ceildiv(PM, bm), threads=128) as (bx, by):
            if pad is not None:
                T.annotate_safe_value({A: pad})
            T.copy(A[by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn], B[by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn])

    return main


def _padded_ref(a, PM, PN, fill, dtype):
    ref = torch.full((PM, PN), fill, dtype=dtype)
    ref[:a.shape[0], :a.shape[1]] = a.to(dtype)
    return ref


@pytest.mark.parametrize("pad", [-99, 2.5, None])
def test_tile_copy_fills_out_of_bounds_reads(pad):
    M, N, PM, PN = 70, 75, 96, 96
    A = randn(M, N, seed=3)
    B = padded_copy(M, N, PM, PN, 32, 32, pad=pad)(A)
    close(B.cpu(), _padded_ref(A.cpu(), PM, PN, 0 if pad is None else pad, torch.float32), rtol=0, atol=0)


def test_fill_is_converted_to_the_destination_type():
    M, N, PM, PN = 70, 75, 96, 96
    A = randn(M, N, seed=4)
    B = padded_copy(M, N, PM, PN, 32, 32, dst_dtype=T.float16, pad=-99.3)(A)
    assert B.dtype == torch.float16
    ref = _padded_ref(A.cpu(), PM, PN, -99.3, torch.float16)
    torch.testing.assert_close(B.cpu(), ref, rtol=1e-3, atol=1e-3)


@tilelang.jit(out_idx=[1])
def elementwise_padded(M, N, PM, PN):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float32), B: T.Tensor((PM, PN), T.float32)):
        with T.Kernel(1, threads=128):
            T.annotate_safe_value({A: -7})
            for i, j in T.Parallel(PM, PN):
                T.copy(A[i, j], B[i, j])

    return main


def test_element_copies_in_a_parallel_loop():
    A = randn(10, 13, seed=5)
    if DEVICE == "cuda":
        # Not implemented on cuda: a tile op inside T.Parallel is refused there (docs/COMPATIBILITY.md).
        with pytest.raises(tilelang.LayoutError, match="tile ops cannot appear inside a T.Parallel loop"):
            elementwise_padded(10, 13, 16, 16)(A)
        return
    B = elementwise_padded(10, 13, 16, 16)(A)
    close(B.cpu(), _padded_ref(A.cpu(), 16, 16, -7, torch.float32), rtol=0, atol=0)


@tilelang.jit(out_idx=[2])
def scoped(M, N, B_):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.int32), flag: T.Tensor((1,), T.int32), Out: T.Tensor((2, B_, B_), T.int32)):
        with T.Kernel(1, threads=128):
            inner = T.alloc_shared((B_, B_), T.int32)
            outer = T.alloc_shared((B_, B_), T.int32)
            T.annotate_safe_value({A: -1})
            if flag[0] > 0:                      # a block of its own: its annotation ends with it
                T.annotate_safe_value({A: -99})
                T.copy(A[0:B_, 0:B_], inner)
            T.copy(A[0:B_, 0:B_], outer)
            for i, j in T.Parallel(B_, B_):
                Out[0, i, j] = inner[i, j]
                Out[1, i, j] = outer[i, j]

    return main


def test_the_annotation_ends_with_its_block():
    M = N = 60
    A = torch.arange(M * N, dtype=torch.int32).reshape(M, N).to(DEVICE)
    flag = torch.ones(1, dtype=torch.int32).to(DEVICE)
    out = scoped(M, N, 64)(A, flag).cpu()
    for k, fill in ((0, -99), (1, -1)):
        assert torch.equal(out[k, :M, :N], A.cpu())
        assert (out[k, M:, :] == fill).all() and (out[k, :, N:] == fill).all()


def test_bad_annotations_are_typed_errors():
    def build(value, shared=False):
        @T.prim_func
        def main(A: T.Tensor((8,), T.float32), B: T.Tensor((8,), T.float32)):
            with T.Kernel(1, threads=32):
                S = T.alloc_shared((8,), T.float32)
                T.annotate_safe_value({S if shared else A: value})
                T.copy(A, B)
        return main

    with pytest.raises(TypeError, match="must be a number or a PrimExpr"):
        build("x")
    with pytest.raises(ValueError, match="only reads of global"):
        build(1.0, shared=True)


def test_sblock_scopes_the_annotation():
    """`with T.sblock(...)` (TVM's block, T.reads / T.writes ignored) is a lexical scope: the inner
    block's value applies to the copy inside it only; after it, the outer block's value applies."""
    M = N = 20
    BM = BN = 32

    @T.prim_func
    def main(A: T.Tensor((M, N), T.int32), Inner: T.Tensor((BM, BN), T.int32), Outer: T.Tensor((BM, BN), T.int32)):
        with T.Kernel(1, threads=128):
            inner = T.alloc_shared((BM, BN), T.int32)
            outer = T.alloc_shared((BM, BN), T.int32)
            with T.sblock("outer"):
                T.reads()
                T.writes()
                T.annotate_safe_value({A: -1})
                with T.sblock("inner"):
                    T.reads(A[0:BM, 0:BN])
                    T.writes(inner[0:BM, 0:BN])
                    T.annotate_safe_value({A: -99})
                    T.copy(A[0:BM, 0:BN], inner)
                T.copy(A[0:BM, 0:BN], outer)
            T.copy(inner, Inner)
            T.copy(outer, Outer)

    kernel = tilelang.compile(main, target="cpu" if DEVICE == "cpu" else "auto")
    a = torch.arange(M * N, dtype=torch.int32, device=DEVICE).reshape(M, N)
    got_inner = torch.zeros(BM, BN, dtype=torch.int32, device=DEVICE)
    got_outer = torch.zeros(BM, BN, dtype=torch.int32, device=DEVICE)
    kernel(a, got_inner, got_outer)
    for got, pad in ((got_inner, -99), (got_outer, -1)):
        want = torch.full((BM, BN), pad, dtype=torch.int32)
        want[:M, :N] = a.cpu()
        assert torch.equal(got.cpu(), want)
