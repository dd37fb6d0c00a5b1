"""Bitwise atomics as TileLang's tests write them (testing/python/cpu/test_tilelang_cpu_atomic.py,
testing/python/language/test_tilelang_language_atomic.py): T.atomic_or / T.atomic_and /
T.atomic_xor on one integer element, T.int32-style dtype objects, memory_order, a scalar kernel
parameter as the mask, out_idx outputs; then many blocks on one element."""
import functools

import tilelang
import tilelang.language as T
from lang_util import DEVICE, torch

REDUCE = {"or": torch.bitwise_or, "and": torch.bitwise_and, "xor": torch.bitwise_xor}


@tilelang.jit(out_idx=[2])
def fold_one_block(N, dtype=T.int32, op="or"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), Init: T.Tensor((1,), dtype), B: T.Tensor((1,), dtype)):
        with T.Kernel(1):
            B[0] = Init[0]
            for i in T.Parallel(N):
                if op == "or":
                    T.atomic_or(B[0], A[i])
                elif op == "and":
                    T.atomic_and(B[0], A[i], memory_order="relaxed")
                else:
                    T.atomic_xor(B[0], A[i])

    return main


def _bits(n, p, seed, dtype=torch.int32):
    g = torch.Generator().manual_seed(seed)
    ones = torch.rand(n, 31, generator=g) < p
    return (ones.to(torch.int64) << torch.arange(31)).sum(1).to(dtype)


def test_atomic_bitwise_one_block():
    N = 32
    for op, p in (("or", 0.05), ("and", 0.95), ("xor", 0.5)):
        A = _bits(N, p, seed=len(op))
        Init = _bits(1, 0.5, seed=9)
        out = fold_one_block(N, op=op)(A.to(DEVICE), Init.to(DEVICE))
        expected = functools.reduce(REDUCE[op], list(A.unbind()), Init[0].clone())
        torch.testing.assert_close(out.cpu(), expected.reshape((1,)))


@tilelang.jit(out_idx=[0])
def or_mask(mask_dtype=T.int32):
    @T.prim_func
    def main(A: T.Tensor((1,), T.int32), mask: mask_dtype):
        with T.Kernel(1, threads=32):
            A[0] = 0
            T.atomic_or(A[0], mask, memory_order="release")

    return main


def test_atomic_or_scalar_parameter():
    assert int(or_mask()(0x1234)[0]) == 0x1234


@tilelang.jit
def flags(N, block=64):
    # Each block sets its bit in Seen[bx // 64] and clears it in Cleared: many blocks on few words.
    @T.prim_func
    def main(Seen: T.Tensor((N // 64,), T.int64), Cleared: T.Tensor((N // 64,), T.int64),
             Toggled: T.Tensor((1,), T.int64)):
        with T.Kernel(N, threads=block) as bx:
            for i in T.Parallel(block):
                if i == 0:
                    T.atomic_or(Seen[bx // 64], T.shift_left(T.int64(1), T.Cast("int64", bx % 64)))
                    T.atomic_and(Cleared[bx // 64], ~T.shift_left(T.int64(1), T.Cast("int64", bx % 64)))
                T.atomic_xor(Toggled[0], T.Cast("int64", bx * block + i))

    return main


def test_atomic_bitwise_flags_many_blocks():
    N = 256
    seen = torch.zeros(N // 64, dtype=torch.int64, device=DEVICE)
    cleared = torch.full((N // 64,), -1, dtype=torch.int64, device=DEVICE)
    toggled = torch.zeros(1, dtype=torch.int64, device=DEVICE)
    flags(N)(seen, cleared, toggled)
    assert seen.cpu().tolist() == [-1] * (N // 64)
    assert cleared.cpu().tolist() == [0] * (N // 64)
    assert int(toggled[0]) == functools.reduce(lambda x, y: x ^ y, range(N * 64))
