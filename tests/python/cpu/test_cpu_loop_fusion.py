"""fuse_elementwise_loops (src/target/cpu/fuse_elementwise_loops.h): adjacent element-wise loop nests
over one iteration space run as one nest on cpu, and a staging buffer used only inside one fused
iteration becomes a scalar. Checked end to end against numpy in float64 on random inputs, with the
pass on and off (tl.disable_cpu_loop_fusion): the rms_norm, softmax and layer_norm examples in
float32 and bfloat16, and random chains of element-wise tile statements (in place, into other
fragments, with weights, shifted reads that must not be fused, row reductions in between, ragged
last blocks); and on the emitted C++ (the fused kernels have fewer loops)."""
import importlib.util
import os
import re

import ml_dtypes
import numpy as np
import pytest

import tilelang

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
OFF = {"tl.disable_cpu_loop_fusion": True}


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def example(name):
    return load(os.path.join(ROOT, "examples", name, f"example_{name}.py"), f"fusion_example_{name}")


def loops(kernel):
    return len(re.findall(r"\bfor \(", kernel.get_kernel_source()))


def np_type(dtype):
    return ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float32


def check(out, ref, dtype):
    out = out.astype(np.float64)
    r = 2e-2 if dtype == "bfloat16" else 1e-5
    np.testing.assert_allclose(out, ref, rtol=r, atol=r * np.abs(ref).max())


def both(prog, args, out_shape, dtype, ref):
    """Runs `prog` with fusion on and off; checks both against `ref`; returns the loop counts."""
    counts = {}
    for name, cfg in (("on", {}), ("off", OFF)):
        kernel = tilelang.compile(prog, target="cpu", pass_configs={"tl.cpu_num_threads": 2, **cfg})
        out = np.full(out_shape, np.nan, dtype=np_type(dtype))
        kernel(*args, out)
        check(out, ref, dtype)
        counts[name] = loops(kernel)
    return counts


SHAPES = [(64, 256), (10, 200)]  # the second: a ragged last block


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("M, N", SHAPES)
def test_rms_norm(M, N, dtype):
    ex = example("rms_norm")
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((M, N)) * rng.uniform(0.1, 10, (M, 1))).astype(np_type(dtype))
    w = rng.uniform(0.5, 1.5, N).astype(np_type(dtype))
    counts = both(ex.rms_norm(M, N, block_M=4, eps=1e-6, dtype=dtype), (x, w), (M, N), dtype,
                  ex.reference(x, w, 1e-6))
    assert counts["on"] < counts["off"], counts


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("M, N", SHAPES)
def test_softmax(M, N, dtype):
    ex = example("softmax")
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((M, N)) * 4).astype(np_type(dtype))
    counts = both(ex.softmax(M, N, block_M=8, dtype=dtype), (a,), (M, N), dtype, ex.reference(a))
    assert counts["on"] < counts["off"], counts


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("M, N", SHAPES)
def test_layer_norm(M, N, dtype):
    ex = example("layer_norm")
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((M, N)) * 3 + 5).astype(np_type(dtype))
    g = rng.uniform(0.5, 1.5, N).astype(np_type(dtype))
    b = rng.uniform(-1, 1, N).astype(np_type(dtype))
    counts = both(ex.layer_norm(M, N, block_M=4, eps=1e-5, dtype=dtype), (x, g, b), (M, N), dtype,
                  ex.reference(x, g, b, 1e-5))
    assert counts["on"] < counts["off"], counts


# ---- random chains of element-wise tile statements --------------------------------------------

HEADER = '''import tilelang.language as T


def build():
    @T.prim_func
    def main(A: T.Tensor(({M}, {N}), "{dt}"), W: T.Tensor(({N},), "{dt}"), B: T.Tensor(({M}, {N}), "{dt}")):
        with T.Kernel(T.ceildiv({M}, {bm}), threads=1) as bx:
            S = T.alloc_shared(({bm}, {N}), "{dt}")
            Ws = T.alloc_shared(({N},), "{dt}")
            r = T.alloc_fragment(({bm},), "float32")
{frags}
            T.copy(A[bx * {bm}, 0], S)
            T.copy(W, Ws)
            T.copy(S, f0)
'''


def chain(rng, M, N, bm, dtype, nfrag=4, steps=6):
    """Source of a random chain over fragments f0..f{nfrag-1} and its float64 numpy reference."""
    frags = "\n".join(f'            f{k} = T.alloc_fragment(({bm}, {N}), "float32")' for k in range(nfrag))
    lines = [HEADER.format(M=M, N=N, bm=bm, dt=dtype, frags=frags)]
    a = np.zeros((M, N))  # placeholder: the reference is a list of numpy steps over the inputs
    ops = []
    live = [0]
    for _ in range(steps):
        kind = rng.choice(["map", "map", "map", "weight", "shift", "reduce"])
        src = int(rng.choice(live))
        other = int(rng.choice(live))
        dst = src if rng.random() < 0.4 else int(rng.integers(0, nfrag))
        c = round(float(rng.uniform(0.5, 1.5)), 3)
        body = "            for i, j in T.Parallel({bm}, {N}):\n                f{d}[i, j] = {e}\n"
        if kind == "map":
            fn = rng.choice(["add", "mul", "tanh", "max"])
            e, f = {"add": (f"f{src}[i, j] + f{other}[i, j] * {c}", lambda v, s, o, c=c: s + o * c),
                    "mul": (f"f{src}[i, j] * {c} - f{other}[i, j]", lambda v, s, o, c=c: s * c - o),
                    "tanh": (f"T.tanh(f{src}[i, j] * {c})", lambda v, s, o, c=c: np.tanh(s * c)),
                    "max": (f"T.max(f{src}[i, j], f{other}[i, j] * {c})", lambda v, s, o, c=c: np.maximum(s, o * c))}[fn]
            ops.append((dst, src, other, f))
        elif kind == "weight":
            e = f"f{src}[i, j] * Ws[j] + {c}"
            ops.append((dst, src, other, lambda v, s, o, c=c: s * v["W"][None, :] + c))
        elif kind == "shift":  # reads the next column: not fusable with the nest that wrote f{src}
            if dst == src:
                dst = (src + 1) % nfrag
            e = f"f{src}[i, (j + 1) % {N}] * {c}"
            ops.append((dst, src, other, lambda v, s, o, c=c: np.roll(s, -1, axis=1) * c))
        else:  # a row sum between element-wise nests
            lines.append(f"            T.reduce_sum(f{src}, r, dim=1)\n")
            e = f"f{src}[i, j] - r[i] * {round(c / N, 6)}"
            ops.append((dst, src, other, lambda v, s, o, c=round(c / N, 6): s - s.sum(axis=1, keepdims=True) * c))
        lines.append(body.format(bm=bm, N=N, d=dst, e=e))
        if dst not in live:
            live.append(dst)
        last = dst
    lines.append(f"            T.copy(f{last}, B[bx * {bm}, 0])\n\n    return main\n")

    def reference(x, w):
        v = {"W": w.astype(np.float64)}
        f = [None] * nfrag
        f[0] = x.astype(np.float64)
        for dst, src, other, fn in ops:
            f[dst] = fn(v, f[src], f[other])
        return f[last]

    del a
    return "".join(lines), reference


@pytest.mark.parametrize("seed", range(8))
def test_random_elementwise_chain(seed, tmp_path):
    rng = np.random.default_rng(100 + seed)
    dtype = ["float32", "bfloat16"][seed % 2]
    M, N, bm = [(16, 64, 4), (10, 48, 4), (24, 40, 8), (8, 128, 8)][seed % 4]
    src, reference = chain(rng, M, N, bm, dtype)
    path = tmp_path / f"chain_{seed}.py"
    path.write_text(src)
    prog = load(str(path), f"fusion_chain_{seed}").build()
    x = rng.uniform(-2, 2, (M, N)).astype(np_type(dtype))
    w = rng.uniform(0.5, 1.5, N).astype(np_type(dtype))
    counts = both(prog, (x, w), (M, N), dtype, reference(x, w))
    assert counts["on"] <= counts["off"], (counts, src)
