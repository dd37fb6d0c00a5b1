"""T.float8_e8m0fnu, the exponent-only 8-bit type of MX scale factors (2^-127 .. 2^127, 0xFF NaN; no
zero, no sign), as TileLang programs use it: tensors of it copied (test_tilelang_language_copy's
fp8_e8m0 test), floats converted to it and back. Values are checked bit for bit against ml_dtypes'
float8_e8m0fnu on random inputs and on the edge cases (halfway points, the ends of the range,
zero, negatives, infinities, NaN)."""
import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from lang_util import DEVICE, torch

E8M0 = ml_dtypes.float8_e8m0fnu


def _edge_values():
    v = [0.0, -0.0, 1.0, 1.5, 1.4999999, 1.5000001, 3.0, 6.0, 0.75, 2.0 ** -127, 2.0 ** -128, 1.5 * 2.0 ** -127,
         1.4999 * 2.0 ** -127, 0.75 * 2.0 ** -127, 1e-45, 2.0 ** 127, 1.4999 * 2.0 ** 127, 1.5 * 2.0 ** 127,
         np.inf, -np.inf, np.nan, -1.0, -2.0 ** -130, 2.0 ** -126, 1.5 * 2.0 ** -126, 448.0, 0.001]
    return np.array(v, dtype=np.float32)


def _inputs(n, seed):
    rng = np.random.default_rng(seed)
    # random magnitudes over the whole float32 exponent range, a few negative, plus the edge cases
    mags = np.exp2(rng.uniform(-140, 127.99, n)).astype(np.float32) * rng.choice([1, 1, 1, -1], n).astype(np.float32)
    return np.concatenate([_edge_values(), mags, np.exp2(rng.integers(-127, 128, 64)).astype(np.float32) * 1.5])


@tilelang.jit(out_idx=[1])
def convert(N, src, dst, block=128):
    @T.prim_func
    def main(A: T.Tensor((N,), src), B: T.Tensor((N,), dst)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    B[bx * block + i] = T.cast(A[bx * block + i], dst)

    return main


@tilelang.jit(out_idx=[1])
def tile_copy(M, N, dtype, bm=32, bn=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_shared = T.alloc_shared((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], A_shared)
            T.copy(A_shared, B[by * bm, bx * bn])

    return main


def _bits(a):
    return np.asarray(a).view(np.uint8)


def _to_torch_e8m0(bits):
    return torch.from_numpy(bits.copy()).view(torch.float8_e8m0fnu).to(DEVICE)


@pytest.mark.parametrize("src", ["float32", "float64"])
def test_float_to_e8m0_rounds_as_ml_dtypes(src):
    x = _inputs(3000, seed=1).astype(src)
    ref = x.astype(E8M0)
    got = convert(x.size, src, "float8_e8m0fnu")(torch.from_numpy(x).to(DEVICE))
    assert got.dtype == torch.float8_e8m0fnu
    got_bits = got.cpu().view(torch.uint8).numpy()
    bad = np.nonzero(got_bits != _bits(ref))[0]
    assert bad.size == 0, f"{bad.size} mismatches, e.g. {x[bad[:5]]} -> {got_bits[bad[:5]]} != {_bits(ref)[bad[:5]]}"


def test_e8m0_to_float_every_code():
    codes = np.arange(256, dtype=np.uint8)
    ref = codes.view(E8M0).astype(np.float32)
    got = convert(256, "float8_e8m0fnu", "float32")(_to_torch_e8m0(codes)).cpu().numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_array_equal(got[~np.isnan(ref)], ref[~np.isnan(ref)])


def test_copy_keeps_every_code():
    # test_tilelang_language_copy's fp8_e8m0 case: random codes through shared memory and back
    rng = np.random.default_rng(2)
    bits = rng.integers(0, 256, (96, 192), dtype=np.uint8)
    out = tile_copy(96, 192, T.float8_e8m0fnu)(_to_torch_e8m0(bits))
    assert out.dtype == torch.float8_e8m0fnu
    np.testing.assert_array_equal(out.cpu().view(torch.uint8).numpy(), bits)


def test_numpy_arrays_of_ml_dtypes_e8m0():
    if DEVICE != "cpu":
        pytest.skip("numpy arrays are host memory")
    x = _inputs(500, seed=3)
    got = convert(x.size, "float32", "float8_e8m0fnu")(x)
    assert got.dtype == E8M0
    np.testing.assert_array_equal(_bits(got), _bits(x.astype(E8M0)))


@tilelang.jit(out_idx=[2])
def mx_dequant(M, N, group=32):
    # x * 2^scale per group of `group` columns, the way MX formats scale their blocks
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), S: T.Tensor((M, N // group), T.float8_e8m0fnu),
             Y: T.Tensor((M, N), T.float32)):
        with T.Kernel(M, threads=128) as bx:
            for j in T.Parallel(N):
                Y[bx, j] = X[bx, j] * T.cast(S[bx, j // group], T.float32)

    return main


def test_scales_in_arithmetic():
    rng = np.random.default_rng(4)
    M, N = 16, 256
    x = rng.standard_normal((M, N)).astype(np.float32)
    s = rng.integers(100, 150, (M, N // 32), dtype=np.uint8)
    got = mx_dequant(M, N)(torch.from_numpy(x).to(DEVICE), _to_torch_e8m0(s)).cpu().numpy()
    ref = x * np.repeat(s.view(E8M0).astype(np.float32), 32, axis=1)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("value", [1.5, 3.0, 0.7, 2.0 ** -130, 1e38, 2.9e38])
def test_constants_round_as_ml_dtypes(value):
    @tilelang.jit(out_idx=[0])
    def fill(N):
        @T.prim_func
        def main(B: T.Tensor((N,), T.float8_e8m0fnu)):
            with T.Kernel(1, threads=32):
                for i in T.Parallel(N):
                    B[i] = T.cast(T.float32(value), T.float8_e8m0fnu)

        return main

    got = fill(8)().cpu().view(torch.uint8).numpy()
    np.testing.assert_array_equal(got, np.full(8, _bits(np.array([value], np.float32).astype(E8M0))[0]))


def test_limits():
    assert T.float8_e8m0fnu == "float8_e8m0fnu"
    assert T.max_value(T.float8_e8m0fnu).value == float(ml_dtypes.finfo(E8M0).max)
    assert T.min_value(T.float8_e8m0fnu).value == float(ml_dtypes.finfo(E8M0).tiny)
    with pytest.raises(TypeError, match="no infinity"):
        T.infinity(T.float8_e8m0fnu)
