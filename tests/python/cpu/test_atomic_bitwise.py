"""T.atomic_or / T.atomic_and / T.atomic_xor on cpu (include/tl/cpu/atomic.h: the hardware
fetch-or/and/xor). Many blocks (run on several worker threads) combine random integers into four
accumulators; the bitwise ops are commutative and associative, so the result is order-independent
and checked exactly against numpy. return_prev=True is checked with one distinct bit per update:
the old values must then be a chain of growing bit sets, one per popcount 0..n-1."""
import functools

import numpy as np
import pytest

import tilelang
import tilelang.language as T

DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
OPS = ["or", "and", "xor"]
BLOCKS, THREADS = 16, 64
N = BLOCKS * THREADS


def combine_kernel(dtype, op):
    fn = {"or": T.atomic_or, "and": T.atomic_and, "xor": T.atomic_xor}[op]

    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((4,), dtype)):
        with T.Kernel(BLOCKS, threads=THREADS) as bx:
            for i in T.Parallel(THREADS):
                fn(B[i % 4], A[bx * THREADS + i])
    return main


def random_bits(rng, dtype, n, p_one):
    """n values of `dtype` whose bits are each 1 with probability p_one."""
    bits = np.dtype(dtype).itemsize * 8
    ones = rng.random((n, bits)) < p_one
    words = (ones.astype(np.uint64) << np.arange(bits, dtype=np.uint64)).sum(axis=1, dtype=np.uint64)
    return words.astype(np.dtype(dtype).str.replace("i", "u")).view(dtype)


def inputs(dtype, op, rng):
    # or: sparse bits (the result does not saturate at all ones); and: dense bits (nor at zero).
    p = {"or": 0.004, "and": 0.996, "xor": 0.5}[op]
    return random_bits(rng, dtype, N, p), random_bits(rng, dtype, 4, 0.5)


def reference(op, a, b):
    f = {"or": np.bitwise_or, "and": np.bitwise_and, "xor": np.bitwise_xor}[op]
    return np.array([functools.reduce(f, list(a[j::4]), b[j]) for j in range(4)], dtype=a.dtype)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_bitwise_atomics_many_blocks(dtype, op):
    rng = np.random.default_rng(abs(hash((dtype, op))) % 2**32)
    a, b = inputs(dtype, op, rng)
    want = reference(op, a, b)
    assert not np.array_equal(want, b)  # the inputs do change the accumulators
    k = tilelang.compile(combine_kernel(dtype, op), target="cpu")
    got = b.copy()
    k(a, got)
    np.testing.assert_array_equal(got, want)


def prev_kernel(dtype, bits):
    @T.prim_func
    def main(B: T.Tensor((1,), dtype), Prev: T.Tensor((bits,), dtype)):
        with T.Kernel(bits, threads=1) as bx:
            Prev[bx] = T.atomic_or(B[0], T.shift_left(T.cast(1, dtype), T.cast(bx, dtype)), memory_order="acq_rel",
                                   return_prev=True)
    return main


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "uint64"])
def test_atomic_or_return_prev_is_a_chain(dtype):
    bits = np.dtype(dtype).itemsize * 8
    k = tilelang.compile(prev_kernel(dtype, bits), target="cpu")
    b = np.zeros(1, dtype)
    prev = np.full(bits, 7, dtype)
    k(b, prev)
    unsigned = np.dtype(dtype).str.replace("i", "u")
    u = prev.view(unsigned).astype(np.uint64)
    assert int(b.view(unsigned)[0]) == (1 << bits) - 1  # every block's bit arrived
    for i in range(bits):
        assert (int(u[i]) >> i) & 1 == 0  # the bit each block sets was not set before its own update
    order = sorted(range(bits), key=lambda i: bin(int(u[i])).count("1"))
    assert [bin(int(u[i])).count("1") for i in order] == list(range(bits))
    for x, y in zip(order, order[1:]):  # each old value is the previous one plus that block's bit
        assert int(u[y]) == int(u[x]) | (1 << x)


def test_atomic_and_xor_return_prev():
    """One block: the old values of and / xor updates applied in sequence."""
    @T.prim_func
    def main(B: T.Tensor((2,), "int32"), P: T.Tensor((4,), "int32")):
        with T.Kernel(1, threads=1):
            P[0] = T.atomic_and(B[0], 0x0FF0, return_prev=True)
            P[1] = T.atomic_and(B[0], 0x00F0, return_prev=True)
            P[2] = T.atomic_xor(B[1], -1, return_prev=True)
            P[3] = T.atomic_xor(B[1], 0x1234, return_prev=True)
    b = np.array([0x7AB5, 0x5555], np.int32)
    p = np.zeros(4, np.int32)
    tilelang.compile(main, target="cpu")(b, p)
    assert list(p) == [0x7AB5, 0x7AB5 & 0x0FF0, 0x5555, ~0x5555]
    assert list(b) == [0x7AB5 & 0x0FF0 & 0x00F0, ~0x5555 ^ 0x1234]
