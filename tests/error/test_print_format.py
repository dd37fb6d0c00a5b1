"""Messages are data, never printf formats: T.print(msg=...) prints its text as is (a `%s` in it
reads nothing), and T.printf's format is checked against its arguments when the kernel is built —
a conversion that would read or write memory it was not given (%s, %n, `*`, a missing argument,
a float for %d) is a typed error at the user's line. The kernels that print run in a child process,
so a regression shows as a failed test, not a crashed test run."""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

import tilelang
import tilelang.language as T
from tilelang import _core

if "TILELANG_CACHE_DIR" not in os.environ:  # a private cache, removed at exit
    os.environ["TILELANG_CACHE_DIR"] = tempfile.mkdtemp(prefix="tl-error-tests-")
    atexit.register(shutil.rmtree, os.environ["TILELANG_CACHE_DIR"], True)

HERE = os.path.abspath(__file__)
HOSTILE = "100%s of %n %d%%s"


def line_of(marker):
    with open(HERE) as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith("# " + marker):
                return n
    raise AssertionError(marker)


def run_child(body, target):
    """Runs `body` (which defines `kernel`) in a fresh interpreter, compiles and calls the kernel;
    returns its stdout. A signal in the child fails the test with the child's output."""
    script = f"""
import numpy as np, tilelang, tilelang.language as T
{body}
k = tilelang.compile(kernel, target={target!r})
a = np.arange(4, dtype=np.float32)
k(a)
"""
    with tempfile.TemporaryDirectory(prefix="tl-print-") as d:
        path = os.path.join(d, "kernel_script.py")  # @T.prim_func reads the kernel's source file
        with open(path, "w") as f:
            f.write(script)
        r = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert r.returncode == 0, f"child exited with {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    return r.stdout


def _message_kernel(npu):
    if npu:
        return f"""
@T.prim_func
def kernel(A: T.Tensor((4,), "float32")):
    with T.Kernel(1, is_npu=True) as (cid, vid):
        with T.Scope("V"):
            T.print(msg={HOSTILE!r})
"""
    return f"""
@T.prim_func
def kernel(A: T.Tensor((4,), "float32")):
    with T.Kernel(1) as bx:
        T.print(msg={HOSTILE!r})
"""


def _scalar_kernel(npu):
    head = "with T.Kernel(1, is_npu=True) as (cid, vid):\n        with T.Scope(\"V\"):\n            " if npu else \
        "with T.Kernel(1) as bx:\n        if True:\n            "
    return f"""
@T.prim_func
def kernel(A: T.Tensor((4,), "float32")):
    {head}T.print(A[1], msg={HOSTILE!r})
"""


@pytest.mark.parametrize("target", ["cpu", "ascend"])
def test_print_message_prints_itself(target):
    out = run_child(_message_kernel(target == "ascend"), target)
    assert HOSTILE in out, out


@pytest.mark.parametrize("target", ["cpu", "ascend"])
def test_print_scalar_message_prints_itself(target):
    out = run_child(_scalar_kernel(target == "ascend"), target)
    assert f"msg='{HOSTILE}'" in out and "value=1" in out, out


def test_print_message_on_cuda_is_an_escaped_format():
    if not _core.cuda.nvrtc_available()[0]:
        pytest.skip("NVRTC not available")

    @T.prim_func
    def kernel(A: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            T.print(msg=HOSTILE)
    src = _core.cuda.build_func(kernel.ir, "sm_80", {}, [])["source"]
    assert 'printf("100%%s of %%n %%d%%%%s\\n")' in src, src


@pytest.mark.parametrize("target", ["cpu", "ascend"])
def test_printf_prints_checked_conversions(target):
    head = "with T.Kernel(1, is_npu=True) as (cid, vid):\n        with T.Scope(\"V\"):\n            " if target == \
        "ascend" else "with T.Kernel(1) as bx:\n        if True:\n            "
    body = f"""
@T.prim_func
def kernel(A: T.Tensor((4,), "float32")):
    {head}T.printf("i=%d u=%lu x=%#x c=%c f=%6.2f g=%g pct=%% end\\n", T.int32(-7), T.uint32(4000000000), T.int16(255),
                   T.int8(65), A[3] * 1.5, T.float16(0.5))
"""
    out = run_child(body, target)
    expected = "i=%d u=%u x=%#x c=%c f=%6.2f g=%g pct=%% end" % (-7, 4000000000, 255, 65, 4.5, 0.5)
    assert expected in out, out


def printf_kernel(fmt, *make_args):
    @T.prim_func
    def kernel(A: T.Tensor((4,), "float32")):
        with T.Kernel(1) as bx:
            T.printf(fmt, *[m(A) for m in make_args])  # printf-call
    return kernel


@pytest.mark.parametrize("fmt,args,error,pattern", [
    ("%s\n", [lambda A: T.int32(1)], ValueError, "%s is not supported"),
    ("%s%s%s\n", [], ValueError, "%s is not supported"),
    ("%n\n", [lambda A: T.int32(1)], ValueError, "%n is not allowed (it writes to memory)"),
    ("%*d\n", [lambda A: T.int32(1)], ValueError, "'*' widths are not supported"),
    ("%.*f\n", [lambda A: A[0]], ValueError, "'*' precisions are not supported"),
    ("%1$d\n", [lambda A: T.int32(1)], ValueError, "positional arguments"),
    ("%99999d\n", [lambda A: T.int32(1)], ValueError, "limited to 1024"),
    ("%q\n", [lambda A: T.int32(1)], ValueError, 'conversion "%q\\n" in the format "%q\\n": unknown conversion'),
    ("x=%ll", [lambda A: T.int32(1)], ValueError, "ends inside a conversion"),
    ("%y\n", [lambda A: T.int32(1)], ValueError, "unknown conversion"),
    ("50%", [], ValueError, "lone '%'"),
    ("%d %d\n", [lambda A: T.int32(1)], TypeError, "2 conversion(s) but 1 argument(s)"),
    ("%d\n", [lambda A: T.int32(1), lambda A: T.int32(2)], TypeError, "1 conversion(s) but 2 argument(s)"),
    ("%d\n", [lambda A: A[0]], TypeError, "argument 1 (float32) for conversion \"%d\" must be an integer or bool"),
    ("%f\n", [lambda A: T.int32(1)], TypeError, "argument 1 (int32) for conversion \"%f\" must be floating-point"),
    ("%p\n", [lambda A: T.int32(1)], TypeError, "must be a pointer"),
    ("a\0%d\n", [lambda A: T.int32(1)], ValueError, "NUL character"),
])
def test_bad_printf_format_is_a_typed_error_at_the_line(fmt, args, error, pattern):
    with pytest.raises(error) as info:
        printf_kernel(fmt, *args)
    message = str(info.value)
    assert pattern in message, message
    assert f"{HERE}:{line_of('printf-call')}:" in message, message


def test_printf_format_is_checked_by_the_ir_constructor():
    """Every producer of IR (frontend, textual IR, a pass) goes through the same check."""
    with pytest.raises(ValueError, match="%s is not supported"):
        _core.make_call("void", "tl.printf", [_core.make_string("%s")])
    with pytest.raises(TypeError, match="format must be a string constant"):
        _core.make_call("void", "tl.printf", [_core.make_int(1, "int32")])
    ok = _core.make_call("void", "tl.printf", [_core.make_string("%d\n"), _core.make_int(3, "int64")])
    assert "tl.printf" in _core.print_expr(ok)
