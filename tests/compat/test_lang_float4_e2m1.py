"""T.float4_e2m1fn, the 4-bit float of NVFP4/MXFP4 (magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6; no inf, no
NaN), as TileLang programs use it: tensors of it passed packed two elements a byte (torch
float4_e2m1fn_x2, int8 or uint8 with the last dimension halved), copied (test_tilelang_language_copy's
fp4 test), converted to and from fp16/bf16/fp32/fp64. Values are checked bit for bit against
ml_dtypes' float4_e2m1fn on random inputs and every edge case (the rounding thresholds, ties to even,
saturation to +-6, infinities, NaN, signed zeros, float subnormals)."""
import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from lang_util import DEVICE, torch
from tilelang.utils import pack_float4, unpack_float4

E2M1 = ml_dtypes.float4_e2m1fn


def _edge_values():
    m = [0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 100.0, 1e30]
    v = []
    for x in m:
        f = np.float32(x)
        v += [f, np.nextafter(f, np.float32(0)), np.nextafter(f, np.float32(np.inf))]
    v = np.array(v, dtype=np.float32)
    special = np.array([np.inf, np.nan, 1e-45, 1e-40, 0.0], dtype=np.float32)
    neg_nan = np.array([0xFFC00000], dtype=np.uint32).view(np.float32)
    return np.concatenate([v, -v, special, -special, neg_nan])


def _inputs(n, seed):
    rng = np.random.default_rng(seed)
    near = rng.uniform(-8, 8, n).astype(np.float32)  # the whole code range, densely
    wide = (np.exp2(rng.uniform(-30, 30, n // 4)) * rng.choice([-1, 1], n // 4)).astype(np.float32)
    x = np.concatenate([_edge_values(), near, wide])
    return x[: x.size - x.size % 2]  # packed two a byte: an even count


def _bytes(t):
    """The packed bytes of a kernel result (torch float4_e2m1fn_x2 / int8 / uint8, or numpy uint8)."""
    if isinstance(t, np.ndarray):
        return t.view(np.uint8)
    return t.cpu().view(torch.uint8).numpy()


def _to_torch_fp4(packed):
    t = torch.from_numpy(np.ascontiguousarray(packed))
    if hasattr(torch, "float4_e2m1fn_x2"):
        t = t.view(torch.float4_e2m1fn_x2)
    return t.to(DEVICE)


@tilelang.jit(out_idx=[1])
def convert(N, src, dst, block=128):
    @T.prim_func
    def main(A: T.Tensor((N,), src), B: T.Tensor((N,), dst)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    B[bx * block + i] = T.cast(A[bx * block + i], dst)

    return main


def tilelang_copy(M, N, block_M, block_N, src_dtype, dst_dtype):
    # test_tilelang_language_copy's kernel: a global-to-global T.copy of tiles
    @T.prim_func
    def main(A: T.Tensor((M, N), src_dtype), B: T.Tensor((M, N), dst_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            T.copy(A[by * block_M:(by + 1) * block_M, bx * block_N:(bx + 1) * block_N],
                   B[by * block_M:(by + 1) * block_M, bx * block_N:(bx + 1) * block_N])

    return main


@tilelang.jit(out_idx=[1])
def staged_copy(M, N, dtype, out_dtype, bm=32, bn=64):
    # through shared memory and a fragment (one element a byte on chip), with a cast on the way out
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_shared = T.alloc_shared((bm, bn), dtype)
            A_frag = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], A_shared)
            T.copy(A_shared, A_frag)
            T.copy(A_frag, B[by * bm, bx * bn])

    return main


@pytest.mark.parametrize("src", ["float32", "float16", "bfloat16", "float64"])
def test_float_to_e2m1_rounds_as_ml_dtypes(src):
    x32 = _inputs(4000, seed=1)
    if src == "bfloat16":
        x = x32.astype(ml_dtypes.bfloat16)
        t = torch.from_numpy(x.view(np.uint16).view(np.int16)).view(torch.bfloat16)
    else:
        x = x32.astype(src)
        t = torch.from_numpy(x)
    ref = pack_float4(x.astype(E2M1))
    got = convert(x.size, src, "float4_e2m1fn")(t.to(DEVICE))
    if hasattr(torch, "float4_e2m1fn_x2"):
        assert got.dtype == torch.float4_e2m1fn_x2
    assert tuple(got.shape) == (x.size // 2,)
    got_b = _bytes(got)
    bad = np.nonzero(got_b != ref)[0]
    assert bad.size == 0, f"{bad.size} mismatches, e.g. {x[2 * bad[:3]]}, {x[2 * bad[:3] + 1]} -> " \
                          f"{got_b[bad[:3]]} != {ref[bad[:3]]}"


@pytest.mark.parametrize("dst", ["float32", "float16", "bfloat16", "float64"])
def test_e2m1_to_float_every_code(dst):
    rng = np.random.default_rng(5)
    packed = np.concatenate([np.arange(256, dtype=np.uint8), rng.integers(0, 256, 512, dtype=np.uint8)])
    ref = unpack_float4(packed).astype(np.float64)
    got = convert(packed.size * 2, "float4_e2m1fn", dst)(_to_torch_fp4(packed))
    got = got.cpu().to(torch.float64).numpy()
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))  # -0 stays -0


def test_copy_keeps_every_code():
    # test_tilelang_language_copy's fp4 case: int8 bytes in, the same bytes out
    M, N = 256, 256
    prog = tilelang_copy(M, N, 128, 128, T.float4_e2m1fn, T.float4_e2m1fn)
    kernel = tilelang.compile(prog, out_idx=[1])
    g = torch.Generator().manual_seed(3)
    dummy = torch.randint(-128, 128, (M, N // 2), generator=g, dtype=torch.int8).to(DEVICE)
    out = kernel(dummy)
    assert tuple(out.shape) == (M, N // 2)
    assert torch.equal(out.view(torch.int8).cpu(), dummy.cpu())


@pytest.mark.parametrize("dst", [T.float16, T.bfloat16, T.float32])
def test_copy_with_cast(dst):
    # test_tilelang_language_copy's fp4 -> fp16 / bf16 copies, values checked
    M, N = 128, 256
    kernel = tilelang.compile(tilelang_copy(M, N, 64, 128, T.float4_e2m1fn, dst), out_idx=[1])
    rng = np.random.default_rng(4)
    packed = rng.integers(0, 256, (M, N // 2), dtype=np.uint8)
    out = kernel(torch.from_numpy(packed.view(np.int8)).to(DEVICE))
    assert out.dtype == getattr(torch, str(dst))
    np.testing.assert_array_equal(out.cpu().to(torch.float64).numpy(), unpack_float4(packed).astype(np.float64))


@pytest.mark.parametrize("out_dtype", ["float4_e2m1fn", "float32"])
def test_staged_copy_through_shared_and_fragment(out_dtype):
    M, N = 96, 192  # several blocks, the last one partly outside the tensor
    rng = np.random.default_rng(6)
    packed = rng.integers(0, 256, (M, N // 2), dtype=np.uint8)
    out = staged_copy(M, N, T.float4_e2m1fn, out_dtype)(_to_torch_fp4(packed))
    if out_dtype == "float4_e2m1fn":
        np.testing.assert_array_equal(_bytes(out), packed)
    else:
        np.testing.assert_array_equal(out.cpu().numpy(), unpack_float4(packed).astype(np.float32))


@tilelang.jit(out_idx=[2])
def scaled_quant(M, N, bm=16):
    # y = fp4(x * s[row]) computed in a fragment: arithmetic on dequantized values, rounding once
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float4_e2m1fn), S: T.Tensor((M,), T.float32), Y: T.Tensor((M, N), T.float4_e2m1fn)):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            acc = T.alloc_fragment((bm, N), T.float32)
            for i, j in T.Parallel(bm, N):
                acc[i, j] = T.cast(X[bx * bm + i, j], T.float32) * S[bx * bm + i]
            for i, j in T.Parallel(bm, N):
                Y[bx * bm + i, j] = T.cast(acc[i, j], T.float4_e2m1fn)

    return main


def test_arithmetic_on_dequantized_values():
    M, N = 48, 64
    rng = np.random.default_rng(7)
    packed = rng.integers(0, 256, (M, N // 2), dtype=np.uint8)
    s = rng.choice([0.25, 0.5, 0.75, 1.5, 2.0, 3.0], M).astype(np.float32)
    out = scaled_quant(M, N)(_to_torch_fp4(packed), torch.from_numpy(s).to(DEVICE))
    ref = pack_float4((unpack_float4(packed).astype(np.float32) * s[:, None]).astype(E2M1))
    np.testing.assert_array_equal(_bytes(out), ref)


@pytest.mark.parametrize("value", [0.25, 0.26, 0.75, 1.25, 2.5, 5.0, 5.5, 7.0, -3.5, 1e9, -0.1])
def test_constants_round_as_ml_dtypes(value):
    @tilelang.jit(out_idx=[0])
    def fill(N):
        @T.prim_func
        def main(B: T.Tensor((N,), T.float4_e2m1fn)):
            with T.Kernel(1, threads=32):
                for i in T.Parallel(N):
                    B[i] = T.cast(T.float32(value), T.float4_e2m1fn)

        return main

    got = _bytes(fill(8)())
    np.testing.assert_array_equal(got, pack_float4(np.full(8, value, np.float32).astype(E2M1)))


def test_numpy_packed_bytes_and_helpers():
    if DEVICE != "cpu":
        pytest.skip("numpy arrays are host memory")
    x = _inputs(600, seed=8)
    got = convert(x.size, "float32", "float4_e2m1fn")(x)
    assert got.dtype == np.uint8 and got.shape == (x.size // 2,)  # numpy callers get the packed bytes
    np.testing.assert_array_equal(got, pack_float4(x))
    back = convert(x.size, "float4_e2m1fn", "float32")(got)
    np.testing.assert_array_equal(back, unpack_float4(got).astype(np.float32))
    with pytest.raises(Exception, match="pack_float4"):
        convert(x.size, "float4_e2m1fn", "float32")(x.astype(E2M1))  # one element a byte: refused


def test_argument_checks():
    k = convert(64, "float4_e2m1fn", "float32")
    with pytest.raises(Exception, match="must be 64"):
        k(torch.zeros(64, dtype=torch.uint8).to(DEVICE))  # 64 bytes are 128 elements
    with pytest.raises(Exception, match="packed two elements a byte"):
        k(torch.zeros(32, dtype=torch.float16).to(DEVICE))
    with pytest.raises(Exception, match="odd"):
        convert(63, "float32", "float4_e2m1fn")(torch.zeros(63, dtype=torch.float32).to(DEVICE))


def test_limits():
    assert T.float4_e2m1fn == "float4_e2m1fn"
    assert T.float4_e2m1fn.bits == 4
    assert T.max_value(T.float4_e2m1fn).value == float(ml_dtypes.finfo(E2M1).max) == 6.0
    assert T.min_value(T.float4_e2m1fn).value == -6.0
    with pytest.raises(TypeError, match="no infinity"):
        T.infinity(T.float4_e2m1fn)
    if hasattr(torch, "float4_e2m1fn_x2"):
        assert T.float4_e2m1fn.as_torch() is torch.float4_e2m1fn_x2


def test_pack_unpack_round_trip():
    rng = np.random.default_rng(9)
    b = rng.integers(0, 256, (3, 10), dtype=np.uint8)
    u = unpack_float4(b)
    assert u.dtype == E2M1 and u.shape == (3, 20)
    np.testing.assert_array_equal(u[:, 0::2].view(np.uint8), b & 0xF)
    np.testing.assert_array_equal(pack_float4(u), b)
    with pytest.raises(ValueError, match="even"):
        pack_float4(np.zeros((2, 3), np.float32))


def test_ascend_refuses_float4():
    @T.prim_func
    def main(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float4_e2m1fn")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            for i in T.Parallel(256):
                B[i] = T.cast(A[i], "float4_e2m1fn")

    with pytest.raises(NotImplementedError, match="float4_e2m1fn parameter 'B' on target ascend"):
        tilelang.compile(main, out_idx=[1], target="ascend")
