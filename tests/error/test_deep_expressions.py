"""Deep expressions never crash the compiler: an expression as deep as the IR admits
(_core.MAX_EXPR_DEPTH) compiles and computes the right value on every target, from a thread with a
small stack too; a deeper one — 10,000 or 200,000 terms, built by Python code in the kernel, written
out in the kernel's source, or in textual IR — is a typed error at the user's line. Each case runs in
a child process, so a stack overflow would fail the test rather than end the test run."""
import textwrap

import pytest

from tilelang import _core
from child_process import run_script

MAX = _core.MAX_EXPR_DEPTH
NVRTC = _core.cuda.nvrtc_available()[0]

# A chain of `terms` loads added left to right: depth terms + 1 (a load over a constant index is 2).
PRELUDE = """
import threading
import numpy as np, tilelang, tilelang.language as T
from tilelang import _core

def chain(A, terms):
    e = A[0]
    for i in range(1, terms):
        e = e + A[i % 4]
    return e

def expected(a, terms):
    return float(sum(np.float64(a[i % 4]) for i in range(terms)))
"""

KERNELS = {
    "cpu": """
def build(terms):
    @T.prim_func
    def k(A: T.Tensor((4,), "float32"), B: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=4) as bx:
            B[0] = chain(A, terms)  # the-deep-line
    return k

def run(terms):
    k = tilelang.compile(build(terms), out_idx=[1], target="cpu")
    a = np.arange(1, 5, dtype=np.float32) / 8
    return float(k(a)[0]), expected(a, terms)
""",
    "ascend": """
def build(terms):
    @T.prim_func
    def k(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
        T.func_attr({"enable_auto_sync": True})
        with T.Kernel(1, is_npu=True) as (cid, vid):
            x = T.alloc_ub((4,), "float32")
            T.copy(A[vid * 4], x)
            with T.Scope("V"):
                x[1] = chain(x, terms)  # the-deep-line
            T.copy(x, B[vid * 4])
    return k

def run(terms):
    k = tilelang.compile(build(terms), target="ascend")
    a = np.arange(1, 9, dtype=np.float32) / 8
    b = np.zeros(8, np.float32)
    k(a, b)
    return float(b[1]), expected(a, terms)
""",
    "cuda": """
def build(terms):
    @T.prim_func
    def k(A: T.Tensor((4,), "float32"), B: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            B[0] = chain(A, terms)  # the-deep-line
    return k

def run(terms):  # compile only (NVRTC): no GPU in CI
    r = _core.cuda.build_func(build(terms).ir, "sm_80", {}, [])
    assert r["cubin"][:4] == b"\\x7fELF"
    return 1.0, 1.0
""",
}

KERNELS["cuda_gpu"] = KERNELS["cuda"].split("def run(terms)")[0] + """
def run(terms):  # on a GPU (the GPU tier)
    k = tilelang.compile(build(terms), out_idx=[1], target="cuda")
    a = np.arange(1, 5, dtype=np.float32) / 8
    return float(k(a)[0]), expected(a, terms)
"""

TARGETS = ["cpu", "ascend"] + (["cuda"] if NVRTC else [])


def child(target, body):
    return run_script(PRELUDE + KERNELS[target] + textwrap.dedent(body), timeout=600)


@pytest.mark.parametrize("target", TARGETS)
def test_deepest_admitted_expression_compiles_and_runs(target):
    r = child(target, f"""
    got, want = run({MAX - 1})
    assert abs(got - want) <= 1e-3 * abs(want), (got, want)
    print("ok")
    """)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr


@pytest.mark.parametrize("target", TARGETS)
def test_deepest_expression_compiles_from_a_thread_with_a_small_stack(target):
    """Lowering, code generation and NVRTC run on a large stack of their own
    (runtime/large_stack.h), whatever the calling thread's stack."""
    r = child(target, f"""
    threading.stack_size(1 << 20)
    out = []
    def work():
        try:
            out.append(run({MAX - 1}))
        except BaseException as e:
            out.append(e)
    t = threading.Thread(target=work)
    t.start()
    t.join()
    got, want = out[0]
    assert abs(got - want) <= 1e-3 * abs(want), (got, want)
    print("ok")
    """)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr


@pytest.mark.parametrize("terms", [MAX, 10_000, 200_000])
@pytest.mark.parametrize("target", TARGETS)
def test_deeper_expression_is_a_resource_error_at_the_line(target, terms):
    r = child(target, f"""
    try:
        run({terms})
    except tilelang.ResourceError as e:
        print("ResourceError:", e)
    """)
    assert r.returncode == 0, r.stderr
    assert "ResourceError:" in r.stdout, r.stdout + r.stderr
    assert f"nested {MAX + 1} operations deep exceeds tilelang's limit of {MAX}" in r.stdout
    assert "child_script.py:" in r.stdout and "acc = T.alloc_var" in r.stdout


@pytest.mark.parametrize("terms", [600, 1500])
def test_deep_expression_in_kernel_source_is_a_syntax_error(terms):
    """Written out in the source, the expression is parsed by Python's ast: past its recursion limit
    the kernel parser reports the statement instead of a bare RecursionError."""
    expr = " + ".join(f"A[{i % 4}]" for i in range(terms))
    r = run_script(f"""
import tilelang, tilelang.language as T
try:
    @T.prim_func
    def k(A: T.Tensor((4,), "float32"), B: T.Tensor((4,), "float32")):
        with T.Kernel(1) as bx:
            B[0] = {expr}
except tilelang.TileLangSyntaxError as e:
    print("TileLangSyntaxError:", e)
""")
    assert r.returncode == 0, r.stderr
    assert "TileLangSyntaxError:" in r.stdout and "child_script.py:7:" in r.stdout, r.stdout
    assert "nests too deeply" in r.stdout


@pytest.mark.parametrize("depth", [MAX + 1, 200_000])
def test_deep_textual_ir_is_a_syntax_error(depth):
    """The textual IR parser refuses nesting past the same depth, with parentheses or without."""
    r = run_script(f"""
from tilelang import _core
import tilelang
body = "(" * {depth} + "x" + ")" * {depth}
flat = " + ".join(["x"] * {depth})
for expr in (body, flat):
    text = "func @f(x: int32) {{\\n  evaluate " + expr + "\\n}}\\n"
    try:
        _core.parse_ir(text, "deep.tir")
        print("parsed")
    except tilelang.TileLangSyntaxError as e:
        print("TileLangSyntaxError:", str(e)[:200])
""")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2 and all(l.startswith("TileLangSyntaxError: deep.tir:2:") for l in lines), r.stdout


@pytest.mark.gpu
def test_deepest_admitted_expression_runs_on_a_gpu():
    r = child("cuda_gpu", f"""
    got, want = run({MAX - 1})
    assert abs(got - want) <= 1e-3 * abs(want), (got, want)
    print("ok")
    """)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr
