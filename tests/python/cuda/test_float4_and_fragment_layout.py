"""cuda: T.float4_e2m1fn kernels (global tensors packed two elements a byte, nibble loads and atomic
nibble stores; one element a byte on chip) and T.annotate_layout of fragments (TileLang's partial
and two-group reductions over user-given thread maps). Compiled for sm_80 / sm_90a with NVRTC and run
on the cuda emulator against ml_dtypes / numpy (no GPU needed); the same kernels run on a GPU through
tilelang.compile with torch tensors in test_*_gpu (scripts/gpu_check.sh)."""
import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from cuda_util import COMPILE_ARCHS, EmuRunner, build, requires_gpu, requires_nvrtc
from tilelang.utils import pack_float4, unpack_float4

E2M1 = ml_dtypes.float4_e2m1fn
rng = np.random.default_rng(0)


def emulate(func, *args):
    r = EmuRunner(func)
    out = r(*args)
    assert r.report["races"] == [], r.report["races"][:3]
    return out


def convert(N, src, dst, block=128):
    @T.prim_func
    def main(A: T.Tensor((N,), src), B: T.Tensor((N,), dst)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    B[bx * block + i] = T.cast(A[bx * block + i], dst)

    return main


def tile_copy(M, N, bm, bn, src, dst):
    @T.prim_func
    def main(A: T.Tensor((M, N), src), B: T.Tensor((M, N), dst)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            T.copy(A[by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn], B[by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn])

    return main


def staged_copy(M, N, dtype, out_dtype, bm=32, bn=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_shared = T.alloc_shared((bm, bn), dtype)
            A_frag = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], A_shared)
            T.copy(A_shared, A_frag)
            T.copy(A_frag, B[by * bm, bx * bn])

    return main


FP4_KERNELS = {
    "f32_to_fp4": lambda: convert(1024, "float32", "float4_e2m1fn"),
    "bf16_to_fp4": lambda: convert(1024, "bfloat16", "float4_e2m1fn"),
    "fp4_to_f16": lambda: convert(1024, "float4_e2m1fn", "float16"),
    "copy_fp4": lambda: tile_copy(256, 256, 128, 128, T.float4_e2m1fn, T.float4_e2m1fn),
    "copy_fp4_to_bf16": lambda: tile_copy(256, 256, 128, 128, T.float4_e2m1fn, T.bfloat16),
    "staged_fp4": lambda: staged_copy(96, 192, T.float4_e2m1fn, T.float4_e2m1fn),
}


@requires_nvrtc
@pytest.mark.parametrize("arch", COMPILE_ARCHS)
@pytest.mark.parametrize("name", list(FP4_KERNELS))
def test_fp4_kernels_compile(name, arch):
    r = build(FP4_KERNELS[name](), arch)
    assert r["cubin"][:4] == b"\x7fELF"
    src = r["source"]
    assert "tl::fp4_e2x2_t* __restrict__" in src  # packed global tensors
    if "fp4" in name.split("_to_")[-1] or name.startswith(("copy_fp4", "staged")) and name != "copy_fp4_to_bf16":
        assert "tl::fp4_packed_store" in src


def _edge_and_random(n):
    e = np.array([0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 5, 6, 7, 1e30], np.float32)
    e = np.concatenate([e, np.nextafter(e, np.float32(0)), np.nextafter(e, np.float32(np.inf)),
                        [np.inf, np.nan, 1e-45]]).astype(np.float32)
    x = np.concatenate([e, -e, rng.uniform(-8, 8, n).astype(np.float32)])
    x = np.resize(x, 1024)
    return x


def test_f32_to_fp4_on_emulator():
    x = _edge_and_random(900)
    out = emulate(convert(1024, "float32", "float4_e2m1fn"), x, np.zeros(512, np.uint8))[1]
    np.testing.assert_array_equal(out, pack_float4(x.astype(E2M1)))


def test_bf16_to_fp4_on_emulator():
    x = _edge_and_random(900).astype(ml_dtypes.bfloat16)
    out = emulate(convert(1024, "bfloat16", "float4_e2m1fn"), x, np.zeros(512, np.uint8))[1]
    np.testing.assert_array_equal(out, pack_float4(x.astype(E2M1)))


def test_fp4_to_f16_on_emulator():
    packed = np.concatenate([np.arange(256, dtype=np.uint8), rng.integers(0, 256, 256, dtype=np.uint8)])
    out = emulate(convert(1024, "float4_e2m1fn", "float16"), packed, np.zeros(1024, np.float16))[1]
    ref = unpack_float4(packed).astype(np.float16)
    np.testing.assert_array_equal(out.view(np.uint16), ref.view(np.uint16))  # -0 included


@pytest.mark.parametrize("dst", ["float4_e2m1fn", "bfloat16"])
def test_tile_copy_on_emulator(dst):
    packed = rng.integers(0, 256, (256, 128), dtype=np.uint8)
    out_init = np.zeros((256, 128), np.uint8) if dst == "float4_e2m1fn" else np.zeros((256, 256), ml_dtypes.bfloat16)
    out = emulate(tile_copy(256, 256, 128, 128, T.float4_e2m1fn, dst), packed, out_init)[1]
    if dst == "float4_e2m1fn":
        np.testing.assert_array_equal(out, packed)
    else:
        np.testing.assert_array_equal(out.astype(np.float32), unpack_float4(packed).astype(np.float32))


def test_staged_copy_on_emulator():
    packed = rng.integers(0, 256, (96, 96), dtype=np.uint8)
    out = emulate(staged_copy(96, 192, T.float4_e2m1fn, T.float4_e2m1fn), packed, np.zeros_like(packed))[1]
    np.testing.assert_array_equal(out, packed)


@requires_gpu
def test_fp4_on_gpu():
    import torch
    x = _edge_and_random(900)
    k = tilelang.compile(convert(1024, "float32", "float4_e2m1fn"), out_idx=[1], target="cuda")
    got = k(torch.from_numpy(x).cuda())
    assert got.dtype == torch.float4_e2m1fn_x2
    np.testing.assert_array_equal(got.cpu().view(torch.uint8).numpy(), pack_float4(x.astype(E2M1)))
    packed = rng.integers(-128, 128, (256, 128), dtype=np.int8)
    k = tilelang.compile(tile_copy(256, 256, 128, 128, T.float4_e2m1fn, T.float4_e2m1fn), out_idx=[1], target="cuda")
    out = k(torch.from_numpy(packed).cuda())
    assert torch.equal(out.view(torch.int8).cpu(), torch.from_numpy(packed))
    k = tilelang.compile(staged_copy(96, 192, T.float4_e2m1fn, T.float32), out_idx=[1], target="cuda")
    p2 = rng.integers(0, 256, (96, 96), dtype=np.uint8)
    out = k(torch.from_numpy(p2).cuda())
    np.testing.assert_array_equal(out.cpu().numpy(), unpack_float4(p2).astype(np.float32))


# ---- T.annotate_layout of fragments ---------------------------------------------------------------

def partial_reduce(rows=4, width=512, vector=8, fragment_threads=64):
    # TileLang's test_tilelang_language_reduce partial-reduce kernel: 64 of 128 threads hold x_frag
    # (thread j // 8, register i * 8 + j % 8); the row sums are replicated over those 64 threads.
    def x_layout(i, j):
        return j // vector, i * vector + j % vector

    @T.prim_func
    def main(x: T.Tensor((rows, width), "float32"), out: T.Tensor((rows, width), "float32")):
        with T.Kernel(1, threads=128):
            x_frag = T.alloc_fragment((rows, width), "float32")
            sum_frag = T.alloc_fragment((rows,), "float32")
            T.annotate_layout({
                x_frag: T.Fragment(x_frag.shape, forward_fn=x_layout),
                sum_frag: T.Fragment(sum_frag.shape, forward_fn=lambda i, rep: (rep, i), replicate=fragment_threads),
            })
            for i, j in T.Parallel(rows, width):
                x_frag[i, j] = x[i, j]
            T.reduce_sum(x_frag, sum_frag, dim=1)
            for i, j in T.Parallel(rows, width):
                out[i, j] = x_frag[i, j] / sum_frag[i]

    return main


def two_group_reduce(group_stride=64):
    def x_layout(i, j):
        return i * group_stride + j // 8, j % 8

    @T.prim_func
    def main(x: T.Tensor((2, 512), "float32"), out: T.Tensor((2,), "float32")):
        with T.Kernel(1, threads=128):
            x_frag = T.alloc_fragment((2, 512), "float32")
            out_frag = T.alloc_fragment((2,), "float32")
            T.annotate_layout({
                x_frag: T.Fragment(x_frag.shape, forward_fn=x_layout),
                out_frag: T.Fragment(out_frag.shape, forward_fn=lambda i, rep: (i * group_stride + rep, 0), replicate=64),
            })
            for i, j in T.Parallel(2, 512):
                x_frag[i, j] = x[i, j]
            T.reduce_sum(x_frag, out_frag, dim=1)
            for i in T.Parallel(2):
                out[i] = out_frag[i]

    return main


@requires_nvrtc
@pytest.mark.parametrize("arch", COMPILE_ARCHS)
@pytest.mark.parametrize("make", [partial_reduce, two_group_reduce], ids=["partial", "two_group"])
def test_fragment_annotation_compiles(make, arch):
    r = build(make(), arch)
    assert r["cubin"][:4] == b"\x7fELF"


def test_partial_reduce_on_emulator():
    x = rng.uniform(0.5, 1.5, (4, 512)).astype(np.float32)
    out = emulate(partial_reduce(), x, np.zeros_like(x))[1]
    ref = x.astype(np.float64) / x.astype(np.float64).sum(1, keepdims=True)
    np.testing.assert_allclose(out, ref, rtol=1e-5)


def test_two_group_reduce_on_emulator():
    x = rng.standard_normal((2, 512)).astype(np.float32)
    out = emulate(two_group_reduce(), x, np.zeros(2, np.float32))[1]
    np.testing.assert_allclose(out, x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-4)


def test_annotated_layout_is_the_one_used():
    # The thread that holds x_frag[i, j] is the annotation's (j // 8): the generated code indexes
    # x by that thread's registers, so an annotation with another map gives other code.
    def variant(thread_of):
        @T.prim_func
        def main(x: T.Tensor((4, 512), "float32"), out: T.Tensor((4, 512), "float32")):
            with T.Kernel(1, threads=128):
                f = T.alloc_fragment((4, 512), "float32")
                T.annotate_layout({f: T.Fragment(f.shape, forward_fn=thread_of)})
                for i, j in T.Parallel(4, 512):
                    f[i, j] = x[i, j] * 2
                for i, j in T.Parallel(4, 512):
                    out[i, j] = f[i, j]

        return main

    x = rng.standard_normal((4, 512)).astype(np.float32)
    a = variant(lambda i, j: (j // 8, i * 8 + j % 8))
    b = variant(lambda i, j: (j % 128, i * 4 + j // 128))
    for f in (a, b):
        np.testing.assert_array_equal(emulate(f, x, np.zeros_like(x))[1], x * 2)
    from tilelang import _core
    sa = _core.cuda.lower_func(a.ir, "sm_80")[1]
    sb = _core.cuda.lower_func(b.ir, "sm_80")[1]
    assert sa != sb


def _gemm_with_annotated_acc(layout):
    @T.prim_func
    def main(A: T.Tensor((64, 32), "float16"), B: T.Tensor((32, 64), "float16"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128):
            a_s = T.alloc_shared((64, 32), "float16")
            b_s = T.alloc_shared((32, 64), "float16")
            c = T.alloc_fragment((64, 64), "float32")
            T.annotate_layout({c: layout(c)})
            T.copy(A, a_s)
            T.copy(B, b_s)
            T.clear(c)
            T.gemm(a_s, b_s, c)
            T.copy(c, C)

    return main


def test_conflict_with_gemm_raises_layout_error_at_the_annotation():
    f = _gemm_with_annotated_acc(lambda c: T.Fragment(c.shape, forward_fn=lambda i, j: (i * 2 + j // 32, j % 32)))
    with pytest.raises(tilelang.LayoutError) as e:
        build(f, "sm_80")
    msg = str(e.value)
    assert "T.annotate_layout" in msg and "test_float4_and_fragment_layout.py" in msg and "T.gemm" in msg, msg


@pytest.mark.parametrize("fn, why", [
    (lambda i, j: (j % 128, 0), "distinct"),                        # two elements on one register
    (lambda i, j: (32 + j // 8, 1 + i * 8 + j % 8), "register 0"),  # element 0 not on register 0
    (lambda i, j: ((i * 512 + j) % 97, (i * 512 + j) // 97), "mixed radix"),  # not a radix of digits
])
def test_invalid_fragment_layouts(fn, why):
    @T.prim_func
    def main(x: T.Tensor((4, 512), "float32"), out: T.Tensor((4, 512), "float32")):
        with T.Kernel(1, threads=128):
            f = T.alloc_fragment((4, 512), "float32")
            T.annotate_layout({f: T.Fragment(f.shape, forward_fn=fn)})
            for i, j in T.Parallel(4, 512):
                f[i, j] = x[i, j]
            for i, j in T.Parallel(4, 512):
                out[i, j] = f[i, j]

    with pytest.raises(tilelang.LayoutError, match=why) as e:
        build(main, "sm_80")
    assert "test_float4_and_fragment_layout.py" in str(e.value)


def test_fragment_needing_more_threads_than_the_kernel():
    @T.prim_func
    def main(x: T.Tensor((4, 512), "float32"), out: T.Tensor((4, 512), "float32")):
        with T.Kernel(1, threads=64):
            f = T.alloc_fragment((4, 512), "float32")
            T.annotate_layout({f: T.Fragment(f.shape, forward_fn=lambda i, j: (j // 4, i * 4 + j % 4))})
            for i, j in T.Parallel(4, 512):
                f[i, j] = x[i, j]
            for i, j in T.Parallel(4, 512):
                out[i, j] = f[i, j]

    with pytest.raises(tilelang.LayoutError, match="128 threads"):
        build(main, "sm_80")


@requires_gpu
def test_fragment_annotation_on_gpu():
    import torch
    x = rng.uniform(0.5, 1.5, (4, 512)).astype(np.float32)
    k = tilelang.compile(partial_reduce(), out_idx=[1], target="cuda")
    out = k(torch.from_numpy(x).cuda()).cpu().numpy()
    np.testing.assert_allclose(out, x.astype(np.float64) / x.astype(np.float64).sum(1, keepdims=True), rtol=1e-5)
    k = tilelang.compile(two_group_reduce(), out_idx=[1], target="cuda")
    x2 = rng.standard_normal((2, 512)).astype(np.float32)
    np.testing.assert_allclose(k(torch.from_numpy(x2).cuda()).cpu().numpy(), x2.astype(np.float64).sum(1),
                               rtol=1e-5, atol=1e-4)


def _gemm_fragment_annotated(make_layout):
    @T.prim_func
    def main(x: T.Tensor((16, 16), "float32"), out: T.Tensor((16, 16), "float32")):
        with T.Kernel(1, threads=128):
            f = T.alloc_fragment((16, 16), "float32")
            T.annotate_layout({f: make_layout().repeat([2, 2], repeat_on_thread=True)})
            for i, j in T.Parallel(16, 16):
                f[i, j] = x[i, j] + 1
            for i, j in T.Parallel(16, 16):
                out[i, j] = f[i, j]

    return main


@pytest.mark.parametrize("name", ["make_gemm_fragment_8x8", "make_gemm_fragment_8x8_transposed"])
def test_gemm_fragment_helpers_annotate_fragments(name):
    import tilelang.layout as L
    x = rng.standard_normal((16, 16)).astype(np.float32)
    out = emulate(_gemm_fragment_annotated(getattr(L, name)), x, np.zeros_like(x))[1]
    np.testing.assert_array_equal(out, x + 1)


# ---- fragments on threads that do not start at 0 -------------------------------------------------

def offset_reduce(offset=32, rows=2, width=512, vector=8, threads=128):
    # TileLang's offset-thread reduction: x_frag on threads [offset, offset + width // vector) of the
    # block, the row sums and maxima replicated over the same threads; the others hold nothing.
    n = width // vector

    @T.prim_func
    def main(x: T.Tensor((rows, width), "float32"), out: T.Tensor((2, rows, width), "float32")):
        with T.Kernel(1, threads=threads):
            x_frag = T.alloc_fragment((rows, width), "float32")
            s = T.alloc_fragment((rows,), "float32")
            m = T.alloc_fragment((rows,), "float32")
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


def offset_reduce_ref(x):
    x = x.astype(np.float64)
    return np.stack([x / x.sum(1, keepdims=True), x - x.max(1, keepdims=True)])


@requires_nvrtc
@pytest.mark.parametrize("arch", COMPILE_ARCHS)
@pytest.mark.parametrize("offset, threads", [(32, 128), (64, 128), (128, 256)])
def test_offset_fragment_compiles(offset, threads, arch):
    r = build(offset_reduce(offset=offset, threads=threads), arch)
    assert r["cubin"][:4] == b"\x7fELF"


@pytest.mark.parametrize("offset, threads, width", [(32, 128, 512), (64, 128, 512), (128, 256, 1024), (32, 64, 64),
                                                    (16, 64, 128)])
def test_offset_fragment_reduce_on_emulator(offset, threads, width):
    # (16, 64, 128): 16 threads inside one warp from lane 16, a butterfly of whole 16-lane groups
    x = rng.uniform(0.5, 1.5, (2, width)).astype(np.float32)
    out = emulate(offset_reduce(offset=offset, width=width, threads=threads), x, np.zeros((2, 2, width), np.float32))[1]
    np.testing.assert_allclose(out, offset_reduce_ref(x), rtol=1e-5, atol=1e-6)


def test_offset_fragment_parallel_loops_on_emulator():
    # No reduction: a fragment on threads [16, 80) written and read by T.Parallel loops and T.copy
    @T.prim_func
    def main(x: T.Tensor((4, 256), "float32"), out: T.Tensor((4, 256), "float32")):
        with T.Kernel(1, threads=128):
            f = T.alloc_fragment((4, 256), "float32")
            T.annotate_layout({f: T.Fragment(f.shape, forward_fn=lambda i, j: (16 + j // 4, i * 4 + j % 4))})
            T.copy(x, f)
            for i, j in T.Parallel(4, 256):
                f[i, j] = f[i, j] * 3 + 1
            T.copy(f, out)

    x = rng.standard_normal((4, 256)).astype(np.float32)
    np.testing.assert_allclose(emulate(main, x, np.zeros_like(x))[1], x.astype(np.float64) * 3 + 1, rtol=1e-6, atol=1e-6)


def test_offset_fragment_misaligned_cross_warp_reduce_raises():
    # Threads [16, 80): the warps would mix participating and idle lanes (TileLang refuses it too)
    with pytest.raises(tilelang.LayoutError, match="warp-aligned participating thread range"):
        build(offset_reduce(offset=16), "sm_80")


def test_offset_fragment_beyond_the_block_raises():
    with pytest.raises(tilelang.LayoutError, match="from thread 96"):
        build(offset_reduce(offset=96), "sm_80")
