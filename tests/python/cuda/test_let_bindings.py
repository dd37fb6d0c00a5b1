"""Values bound inside loop bodies (Python assignments such as `offsets = bx * 2048 + i`, which become
let-bindings) and min/max of mixed-width operands, on target cuda: lowering duplicates loop bodies
(one copy of a T.Parallel body per register, pipeline prologue/epilogue, unswitched masks), and the
generated C++ must still declare each binding once per scope. Each kernel is compiled with NVRTC
for sm_80 and sm_90a (CI, no GPU), run on the emulator of lowered cuda IR and on cpu, against numpy.

Regression tests of issue 11 (1): NVRTC rejected such kernels with "has already been declared in
the current scope" and "more than one instance of overloaded function tl::max"."""
import re

import ml_dtypes
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from cuda_util import COMPILE_ARCHS, EmuRunner, build, requires_nvrtc

rng = np.random.default_rng(11)


def musa_elementwise_add(N, num_per_thread=8, threads=256, dtype="bfloat16"):
    """The element-wise kernel of TileLang's material (docs/deeplearning_operators/elementwise.md)."""

    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, threads * num_per_thread), threads=threads) as (b_x):
            for i, j in T.Parallel(threads, num_per_thread):
                offsets = (b_x * threads + i) * num_per_thread
                C[offsets + j] = A[offsets + j] + B[offsets + j]

    return main


def let_chain_tail(N, block=256, threads=128):
    """Two dependent bindings, one a loaded value used twice, under a ragged tail."""

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            for i in T.Parallel(block):
                idx = bx * block + i
                v = A[idx]
                w = v * v + 1.0
                if idx < N:
                    B[idx] = w - v
    return main


def let_in_serial(N, block=128, steps=4):
    """A binding in a T.Parallel body inside a serial loop, and one in the serial loop's body."""

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block * steps), threads=64) as bx:
            for k in T.serial(steps):
                base = (bx * steps + k) * block
                for i in T.Parallel(block):
                    v = A[base + i]
                    B[base + i] = v * 2.0 + v
    return main


def let_in_unroll(N, block=128, steps=4):
    @T.prim_func
    def main(A: T.Tensor((N,), "float16"), B: T.Tensor((N,), "float16")):
        with T.Kernel(T.ceildiv(N, block * steps), threads=64) as bx:
            for k in T.unroll(steps):
                base = (bx * steps + k) * block
                for i in T.Parallel(block):
                    v = A[base + i]
                    B[base + i] = v * v - v
    return main


def let_in_vectorized(N, block=64, vec=4):
    """T.vectorized inside T.Parallel, the binding in the innermost body."""

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block * vec), threads=32) as bx:
            for i in T.Parallel(block):
                row = (bx * block + i) * vec
                for j in T.vectorized(vec):
                    x = A[row + j]
                    B[row + j] = x * x + x
    return main


def let_nested(M, N, bm=16, bn=32):
    """Nested T.Parallel (2-D) with bindings, plus a fragment written through a bound index."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            F = T.alloc_fragment((bm, bn), "float32")
            for i, j in T.Parallel(bm, bn):
                r = by * bm + i
                c = bx * bn + j
                a = A[r, c]
                F[i, j] = a * 3.0 - a
            for i, j in T.Parallel(bm, bn):
                r = by * bm + i
                B[r, bx * bn + j] = F[i, j]
    return main


def let_pipelined(M, N, bm=32, bk=32, stages=2):
    """Row sums through a pipelined loop whose body binds values after the copy."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), S: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            A_s = T.alloc_shared((bm, bk), "float32")
            acc = T.alloc_fragment((bm, bk), "float32")
            row = T.alloc_fragment((bm,), "float32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(N, bk), num_stages=stages):
                T.copy(A[bx * bm, k * bk], A_s)
                for i, j in T.Parallel(bm, bk):
                    v = A_s[i, j]
                    acc[i, j] += v * 0.5 + v * 0.5
            T.reduce_sum(acc, row, dim=1)
            for i in T.Parallel(bm):
                S[bx * bm + i] = row[i]
    return main


def let_masked(N, bm=32, bn=32):
    """A causal-style mask (unswitched into two copies of the nest) with a bound value."""

    @T.prim_func
    def main(A: T.Tensor((N, N), "float32"), B: T.Tensor((N, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(N, bm), threads=128) as (bx, by):
            for i, j in T.Parallel(bm, bn):
                r = by * bm + i
                c = bx * bn + j
                v = A[r, c]
                B[r, c] = T.if_then_else(r >= c, v + v, -v)
    return main


def minmax_mixed(N, dtype, lo, hi, block=128):
    """min/max between a loaded narrow value (and arithmetic on it) and integer constants."""

    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype),
             D: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=64) as bx:
            for i in T.Parallel(block):
                a = A[bx * block + i]
                C[bx * block + i] = T.max(T.min(a, hi), lo)
                D[bx * block + i] = T.min(a + B[bx * block + i], hi) + T.max(-a, lo)
    return main


def _bf16(x):
    return x.astype(ml_dtypes.bfloat16)


def _ref_minmax(a, b, lo, hi, dtype):
    # The IR's integer arithmetic wraps at the type's width (a + b, -a in int8 stay int8).
    a, b = a.astype(dtype), b.astype(dtype)
    with np.errstate(over="ignore"):
        c = np.maximum(np.minimum(a, dtype(hi)), dtype(lo))
        d = (np.minimum((a + b).astype(dtype), dtype(hi)) + np.maximum((-a).astype(dtype), dtype(lo))).astype(dtype)
    return c, d


N1 = 2048 * 3 + 512


def _cases():
    """name -> (kernel, inputs, reference outputs by parameter index, tolerance)."""
    a = rng.standard_normal(N1).astype(np.float32)
    b = rng.standard_normal(N1).astype(np.float32)
    ab, bb = _bf16(a), _bf16(b)
    h = rng.standard_normal(2048).astype(np.float16)
    m = rng.standard_normal((48, 96)).astype(np.float32)
    p = rng.standard_normal((64, 100)).astype(np.float32)
    q = rng.standard_normal((80, 80)).astype(np.float32)
    cases = {
        "musa_elementwise": (musa_elementwise_add(N1), [ab, bb, _bf16(np.zeros(N1))],
                             {2: _bf16(ab.astype(np.float32) + bb.astype(np.float32))}, 0),
        "chain_tail": (let_chain_tail(1000), [a[:1000], np.zeros(1000, np.float32)],
                       {1: a[:1000] * a[:1000] + 1 - a[:1000]}, 1e-6),
        "serial": (let_in_serial(1024 + 512), [a[:1536], np.zeros(1536, np.float32)], {1: a[:1536] * 3}, 1e-6),
        "unroll": (let_in_unroll(2048), [h, np.zeros(2048, np.float16)],
                   {1: (h * h - h).astype(np.float16)}, 2e-3),
        "vectorized": (let_in_vectorized(1024), [a[:1024], np.zeros(1024, np.float32)],
                       {1: a[:1024] * a[:1024] + a[:1024]}, 1e-6),
        "nested": (let_nested(48, 96), [m, np.zeros_like(m)], {1: 2 * m}, 1e-6),
        "pipelined": (let_pipelined(64, 100), [p, np.zeros(64, np.float32)], {1: p.astype(np.float64).sum(1)}, 1e-4),
        "masked": (let_masked(80), [q, np.zeros_like(q)],
                   {1: np.where(np.arange(80)[:, None] >= np.arange(80)[None, :], 2 * q, -q)}, 1e-6),
    }
    for dtype, lo, hi in [(np.int8, -3, 40), (np.uint8, 7, 200), (np.int16, -300, 1000)]:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, int(info.max) + 1, 512).astype(dtype)
        y = rng.integers(info.min, int(info.max) + 1, 512).astype(dtype)
        c, d = _ref_minmax(x, y, lo, hi, dtype)
        name = np.dtype(dtype).name
        cases[f"minmax_{name}"] = (minmax_mixed(512, name, lo, hi), [x, y, np.zeros_like(x), np.zeros_like(x)],
                                   {2: c, 3: d}, 0)
    return cases


CASES = _cases()


def _check(outs, refs, tol, what):
    for i, ref in refs.items():
        got = np.asarray(outs[i])
        if tol == 0:
            np.testing.assert_array_equal(got, ref, err_msg=f"{what}: output {i}")
        else:
            np.testing.assert_allclose(got.astype(np.float64), np.asarray(ref, np.float64), rtol=tol, atol=tol,
                                       err_msg=f"{what}: output {i}")


@requires_nvrtc
@pytest.mark.parametrize("arch", COMPILE_ARCHS)
@pytest.mark.parametrize("name", list(CASES))
def test_compiles_with_nvrtc(name, arch):
    func = CASES[name][0]
    r = build(func, arch)
    assert r["cubin"][:4] == b"\x7fELF"


@pytest.mark.parametrize("name", list(CASES))
def test_runs_on_cuda_emulator(name):
    func, args, refs, tol = CASES[name]
    runner = EmuRunner(func)
    outs = runner(*[np.array(x, copy=True) for x in args])
    assert runner.report["races"] == []
    _check(outs, refs, tol, f"{name} (cuda emulator)")


@pytest.mark.parametrize("name", list(CASES))
def test_runs_on_cpu(name):
    func, args, refs, tol = CASES[name]
    kernel = tilelang.compile(func, target="cpu")
    outs = [np.array(x, copy=True) for x in args]
    kernel(*outs)
    _check(outs, refs, tol, f"{name} (cpu)")


@requires_nvrtc
def test_each_binding_is_declared_once_per_scope():
    """The element-wise kernel binds `offsets` in every one of its 8 register copies: each copy
    gets its own C++ name (or scope), so no name is declared twice in one block."""
    src = build(musa_elementwise_add(N1), "sm_80")["source"]
    body = src.split("{", 1)[1]
    seen = [set()]
    for line in body.splitlines():
        m = re.match(r"\s*const [\w:]+ (\w+) = ", line)
        if m:
            assert m.group(1) not in seen[-1], f"'{m.group(1)}' declared twice in one scope:\n{src}"
            seen[-1].add(m.group(1))
        for ch in line:
            if ch == "{":
                seen.append(set())
            elif ch == "}" and len(seen) > 1:
                seen.pop()
    assert "offsets" in src
