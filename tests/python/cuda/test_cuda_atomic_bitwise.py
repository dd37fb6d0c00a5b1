"""T.atomic_or / T.atomic_and / T.atomic_xor on cuda (include/tl/cuda/atomic.h): atomicOr/And/Xor
for 32- and 64-bit integers; 8- and 16-bit integers use the 32-bit atomic on the enclosing word with
the operand shifted into place (other bits 0 for or/xor, 1 for and). Compile-only for sm_80 and
sm_90a for every dtype and op (NVRTC); run on the cuda emulator (no GPU) and on a GPU against the
numpy reference of tests/python/cpu/test_atomic_bitwise.py: four accumulators share one 32-bit word
for the narrow types, so a clobbered neighbour shows."""
import os
import sys

import numpy as np
import pytest

import tilelang.language as T
from cuda_util import COMPILE_ARCHS, EmuRunner, Runner, build, requires_gpu, requires_nvrtc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cpu"))
from test_atomic_bitwise import DTYPES, OPS, combine_kernel, inputs, random_bits, reference  # noqa: E402


def prev_kernel(dtype):
    @T.prim_func
    def main(B: T.Tensor((4,), dtype), V: T.Tensor((128,), dtype), P: T.Tensor((128,), dtype)):
        with T.Kernel(1, threads=128):
            for i in T.Parallel(128):
                P[i] = T.atomic_xor(B[i % 4], V[i], memory_order="release", return_prev=True)
    return main


@requires_nvrtc
@pytest.mark.parametrize("arch", COMPILE_ARCHS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_bitwise_atomics_compile(arch, dtype):
    for op in OPS:
        built = build(combine_kernel(dtype, op), arch)
        assert f"tl::atomic_{op}(" in built["source"]
    built = build(prev_kernel(dtype), arch)
    assert "tl::atomic_xor(" in built["source"]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "uint64"])
def test_bitwise_atomics_on_the_emulator(dtype, op):
    rng = np.random.default_rng(abs(hash((dtype, op, "emu"))) % 2**32)
    a, b = inputs(dtype, op, rng)
    got = EmuRunner(combine_kernel(dtype, op))(a, b)[1]
    np.testing.assert_array_equal(got, reference(op, a, b))


def check_prev(dtype, run):
    """xor return_prev, 32 updates per accumulator in one block. Order-independent checks: the final
    value; and the old values form a path of states from the initial to the final value: as
    multisets, {initial} + {old ^ update} == {old} + {final} for each accumulator."""
    rng = np.random.default_rng(5)
    b, v = random_bits(rng, dtype, 4, 0.5), random_bits(rng, dtype, 128, 0.5)
    got_b, _, p = run(prev_kernel(dtype))(b, v, np.zeros(128, dtype))
    np.testing.assert_array_equal(got_b, reference("xor", v, b))
    for j in range(4):
        prevs, vals = p[j::4], v[j::4]
        assert sorted([b[j]] + list(prevs ^ vals)) == sorted(list(prevs) + [got_b[j]]), j


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint32", "int64"])
def test_xor_return_prev_on_the_emulator(dtype):
    check_prev(dtype, EmuRunner)


@requires_gpu
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_bitwise_atomics_on_gpu(dtype, op):
    rng = np.random.default_rng(abs(hash((dtype, op, "gpu"))) % 2**32)
    a, b = inputs(dtype, op, rng)
    got = Runner(combine_kernel(dtype, op))(a, b)[1]
    np.testing.assert_array_equal(got, reference(op, a, b))


@requires_gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_xor_return_prev_on_gpu(dtype):
    check_prev(dtype, Runner)
