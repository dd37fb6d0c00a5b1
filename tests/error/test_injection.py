"""Hostile text in a kernel never becomes code: a kernel name, a source-file path, a message or a
print text that holds a line break, a trailing backslash, a trigraph, a comment terminator or a
printf conversion reaches the emitted C++ / CUDA C++ / Ascend program only as escaped data. Every
kernel here still compiles, runs and computes the right result on cpu and ascend (cuda: compiles
through NVRTC), and the constructor smuggled into the name never runs."""
import atexit
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang import _core

if "TILELANG_CACHE_DIR" not in os.environ:  # a private cache, removed at exit
    os.environ["TILELANG_CACHE_DIR"] = tempfile.mkdtemp(prefix="tl-error-tests-")
    atexit.register(shutil.rmtree, os.environ["TILELANG_CACHE_DIR"], True)

MARKER_DIR = tempfile.mkdtemp(prefix="tl-injection-")
atexit.register(shutil.rmtree, MARKER_DIR, True)
MARKER = os.path.join(MARKER_DIR, "PWNED")

# Each payload tries one way out of a `//` comment or a string literal of the emitted code.
PAYLOADS = {
    "newline": "k\n#error INJECTED_NEWLINE\n",
    "carriage_return": "k\r#error INJECTED_CR\r",
    "constructor": ("k\n#include <cstdlib>\n__attribute__((constructor)) static void tl_pwn() { std::system(\"touch "
                    + MARKER + "\"); }\n//"),
    "trailing_backslash": "k\\",
    "trigraph": "k??/",
    "comment_end": "k */ #error INJECTED_COMMENT /*",
    "quote": "k\" #error INJECTED_QUOTE \"",
    "percent": "k%s%s%s%n",
    "nul": "k\x00#error INJECTED_NUL",
    "unicode_line_separator": "k\u2028#error INJECTED_U2028",
}

NVRTC = _core.cuda.nvrtc_available()[0]
TARGETS = ["cpu", "ascend"] + (["cuda"] if NVRTC else [])

KERNEL_SOURCE = '''
import tilelang.language as T


def make(msg):
    @T.prim_func
    def kernel(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
        with T.Kernel(1, threads=16) as bx:
            for i in T.Parallel(16):
                T.device_assert(A[i] > -1000.0, msg)
                B[i] = A[i] * 2.0 + 1.0
    return kernel


def make_print(msg):
    @T.prim_func
    def kernel(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
        with T.Kernel(1, threads=16) as bx:
            T.print(msg=msg)
            T.print(A[0], msg=msg)
            for i in T.Parallel(16):
                B[i] = A[i] * 2.0 + 1.0
    return kernel


def make_npu(msg):
    @T.prim_func
    def kernel(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
        T.func_attr({"enable_auto_sync": True})
        with T.Kernel(1, is_npu=True) as (cid, vid):
            x = T.alloc_ub((8,), "float32")
            T.copy(A[vid * 8], x)
            for i in T.Parallel(8):
                x[i] = x[i] * 2.0 + 1.0
            T.device_assert(vid < 2, msg)
            T.copy(x, B[vid * 8])
    return kernel
'''


def _load(directory, name="hostile_kernel"):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name + ".py")
    with open(path, "w") as f:
        f.write(KERNEL_SOURCE)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PLAIN = _load(tempfile.mkdtemp(prefix="tl-plain-"))


def _check_runs(prim_func, target):
    if target == "cuda":
        r = _core.cuda.build_func(prim_func.ir, "sm_80", {}, [])
        assert r["cubin"][:4] == b"\x7fELF"
        return r["source"]
    kernel = tilelang.compile(prim_func, out_idx=[1], target=target)
    a = np.random.default_rng(3).standard_normal(16).astype(np.float32)
    np.testing.assert_allclose(kernel(a), a * 2 + 1, rtol=1e-6)
    return kernel.get_kernel_source()


def _assert_not_code(source):
    for line in source.splitlines():
        text = line.lstrip()
        assert not text.startswith("#") or text.startswith(("#include \"tl/", "#pragma")), line
        if "system(" in line:  # only inside a comment or a string literal
            assert text.startswith("//") or '"' in line, line
    assert not os.path.exists(MARKER), "the constructor smuggled into a kernel name ran"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("payload", list(PAYLOADS))
def test_kernel_name_is_never_code(payload, target):
    kernel = PLAIN.make_npu("ok").func if target == "ascend" else PLAIN.make("ok").func
    kernel.__name__ = PAYLOADS[payload]
    f = T.prim_func(kernel)
    assert f.name == PAYLOADS[payload]
    _assert_not_code(_check_runs(f, target))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("payload", list(PAYLOADS))
def test_assert_message_is_never_code(payload, target):
    make = PLAIN.make_npu if target == "ascend" else PLAIN.make
    _assert_not_code(_check_runs(make(PAYLOADS[payload]), target))


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "ascend"])
@pytest.mark.parametrize("payload", list(PAYLOADS))
def test_print_message_is_never_code(payload, target, capfd):
    _assert_not_code(_check_runs(PLAIN.make_print(PAYLOADS[payload]), target))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("payload", ["newline", "carriage_return", "trailing_backslash", "comment_end", "quote",
                                     "percent", "trigraph"])
def test_source_path_is_never_code(payload, target, tmp_path):
    # The kernel's file lives in a directory whose name is the payload (a NUL cannot be in a path).
    directory = str(tmp_path / PAYLOADS[payload].replace("/", "_"))
    module = _load(directory, "hostile_path_" + payload)
    f = (module.make_npu if target == "ascend" else module.make)("ok")
    _assert_not_code(_check_runs(f, target))


def test_constructor_in_name_does_not_run_when_loaded_again():
    """A fresh process loads the kernel from the disk cache: the library's constructors would run
    at dlopen, so the marker file proves the name never became code there either."""
    script = f"""
import importlib.util, numpy as np, tilelang, tilelang.language as T
spec = importlib.util.spec_from_file_location("hostile_kernel", {PLAIN.__file__!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
kernel = module.make("ok").func
kernel.__name__ = {PAYLOADS["constructor"]!r}
k = tilelang.compile(T.prim_func(kernel), out_idx=[1], target="cpu")
a = np.arange(16, dtype=np.float32)
assert (k(a) == a * 2 + 1).all()
print("hit" if k.cache_hit else "miss")
"""
    env = dict(os.environ)
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "hit"
    assert not os.path.exists(MARKER)


# ---- names that are C++ keywords or names of the C / CUDA headers (issue 13 red team, finding 6) --
# Valid Python identifiers that C++ / CUDA C++ reserves: each is a parameter, a shared buffer and a
# loop variable; both code generators rename them (one list: target/c_source.h).
CXX_NAMES = [
    "alignas", "alignof", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "case", "catch", "char", "char8_t",
    "char16_t", "char32_t", "compl", "concept", "const", "consteval", "constexpr", "constinit", "const_cast",
    "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast", "enum",
    "explicit", "export", "extern", "float", "friend", "goto", "inline", "int", "long", "mutable", "namespace",
    "new", "noexcept", "not_eq", "nullptr", "operator", "or_eq", "private", "protected", "public", "register",
    "reinterpret_cast", "requires", "short", "signed", "sizeof", "static", "static_assert", "static_cast",
    "struct", "switch", "template", "this", "thread_local", "throw", "typedef", "typeid", "typename", "union",
    "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "xor", "xor_eq", "NULL", "EOF", "errno",
    "offsetof", "INFINITY", "std", "main", "printf", "sqrt", "min", "max", "size_t", "int32_t",
    # CUDA built-ins and vector types
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "half", "half2", "float4", "int2", "uint4",
]


def _keyword_kernels(tmp_path, names):
    params = ", ".join(f'{n}: T.Tensor((16,), "float32")' for n in names)
    total = " + ".join(f"{n}[j]" for n in names)
    src = f'''
import tilelang.language as T

@T.prim_func
def by_param({params}, C: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=16) as bx:
        for j in T.Parallel(16):
            C[j] = {total}

@T.prim_func
def by_buffer(A: T.Tensor((16,), "float32"), C: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=16) as bx:
'''
    for n in names:
        src += f'        {n} = T.alloc_shared((16,), "float32")\n'
    for n in names:
        src += f'        for {n}_i in T.Parallel(16):\n            {n}[{n}_i] = A[{n}_i]\n'
    src += f'        for j in T.Parallel(16):\n            C[j] = {total}\n'
    src += '''
@T.prim_func
def by_loop_var(A: T.Tensor((16,), "float32"), C: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=16) as bx:
'''
    for n in names:
        src += f'        for {n} in T.Parallel(16):\n            C[{n}] = A[{n}] + 1.0\n'
    path = tmp_path / "keyword_kernels.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("keyword_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "ascend"])
def test_cxx_reserved_names_compile_and_compute(target, tmp_path):
    import keyword
    assert not any(keyword.iskeyword(n) for n in CXX_NAMES)
    kernels = _keyword_kernels(tmp_path, CXX_NAMES)
    if target == "cuda":  # NVRTC compiles what the host can't run
        for f in (kernels.by_param, kernels.by_buffer, kernels.by_loop_var):
            r = _core.cuda.build_func(f.ir, "sm_80", {}, [])
            assert r["cubin"][:4] == b"\x7fELF"
        return
    rng = np.random.default_rng(13)
    ins = [rng.standard_normal(16).astype(np.float32) for _ in CXX_NAMES]
    out = tilelang.compile(kernels.by_param, out_idx=[-1], target=target)(*ins)
    np.testing.assert_allclose(out, np.sum([a.astype(np.float64) for a in ins], axis=0), rtol=1e-5, atol=1e-5)
    a = ins[0]
    out = tilelang.compile(kernels.by_buffer, out_idx=[1], target=target)(a)
    np.testing.assert_allclose(out, a.astype(np.float64) * len(CXX_NAMES), rtol=1e-5)
    out = tilelang.compile(kernels.by_loop_var, out_idx=[1], target=target)(a)
    np.testing.assert_allclose(out, a.astype(np.float64) + 1, rtol=1e-6)


# ---- text that is not valid Unicode (finding 7): paths escaped, names and messages refused ------

SURROGATE_SOURCE = '''
import tilelang.language as T

def make(msg=None, which=None):
    @T.prim_func
    def kernel(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
        with T.Kernel(1, threads=16) as bx:
            s = T.alloc_shared((16,), "float32")
            if which == "print":
                T.print(msg=msg)  # message-print
            if which == "print_buffer":
                T.print(s, msg=msg)  # message-print_buffer
            if which == "assert":
                T.device_assert(A[0] > -1.0, msg)  # message-assert
            if which == "printf":
                T.printf(msg)  # message-printf
            for i in T.Parallel(16):
                B[i] = A[i] * 2.0 + 1.0
    return kernel
'''


def _load_source(directory, text, name):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name + ".py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path


def test_kernel_under_a_directory_whose_name_is_not_utf8_compiles(tmp_path):
    directory = os.fsdecode(os.fsencode(str(tmp_path)) + b"/dir_\xff\xfe")
    module, path = _load_source(directory, SURROGATE_SOURCE, "nonutf8_kernel")
    kernel = tilelang.compile(module.make(), out_idx=[1], target="cpu")
    a = np.random.default_rng(7).standard_normal(16).astype(np.float32)
    np.testing.assert_allclose(kernel(a), a.astype(np.float64) * 2 + 1, rtol=1e-6)
    # Locations show the bytes escaped.
    with pytest.raises(ValueError) as info:
        module.make("x\udcff", "assert")
    assert str(info.value).startswith(str(tmp_path) + "/dir_\\xff\\xfe/nonutf8_kernel.py:"), str(info.value)


def test_kernel_name_with_a_lone_surrogate_is_a_value_error_at_the_def():
    def k(A: T.Tensor((16,), "float32")):  # surrogate-name
        with T.Kernel(1, threads=16) as bx:
            A[0] = 1.0
    k.__name__ = "k\udcff"
    with pytest.raises(ValueError) as info:
        T.prim_func(k)
    message = str(info.value)
    here = os.path.abspath(__file__)
    line = next(n for n, t in enumerate(open(here), 1) if t.rstrip().endswith("# surrogate-name"))
    assert message.startswith(f"{here}:{line}:"), message
    assert "the kernel name 'k\\udcff' is not valid Unicode text: it holds a lone surrogate" in message


@pytest.mark.parametrize("which", ["print", "print_buffer", "assert", "printf"])
def test_message_with_a_lone_surrogate_is_a_value_error_at_its_line(which, tmp_path):
    module, path = _load_source(str(tmp_path), SURROGATE_SOURCE, "surrogate_messages")
    with pytest.raises(ValueError) as info:
        module.make("x\udcff\n", which)
    message = str(info.value)
    line = next(n for n, t in enumerate(open(path), 1) if t.rstrip().endswith(f"# message-{which}"))
    assert message.startswith(f"{path}:{line}:"), message
    assert "'x\\udcff\\n' is not valid Unicode text: it holds a lone surrogate" in message, message
