"""The examples under examples/ (TileLang GPU style, written for every target) on cuda.

Without a GPU (CI): every kernel an example compiles is also compiled for sm_80 and sm_90a through
tilelang.compile (lowering, codegen, NVRTC), and the example then runs on cpu and must print
"Kernel Output Match!". With a GPU: each example runs unchanged (target "auto" picks cuda) and must
print it."""
import glob
import importlib.util
import inspect
import os
import sys

import pytest

import tilelang
from cuda_util import COMPILE_ARCHS, requires_gpu, requires_nvrtc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# examples/*.py and examples/<kernel>/example_*.py; the Ascend examples are written for that target.
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "*.py")) +
                  [p for p in glob.glob(os.path.join(ROOT, "examples", "*", "example_*.py"))
                   if os.sep + "ascend" + os.sep not in p])


def load(path):
    name = "example_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_main(mod):
    """main() with its defaults; main(argv) style entry points get an empty argument list."""
    sig = inspect.signature(mod.main)
    if any(p.default is inspect.Parameter.empty for p in sig.parameters.values()):
        mod.main([])
    else:
        mod.main()


def clear_memos(mod):
    jit_module = sys.modules["tilelang.jit"]
    for obj in vars(mod).values():
        if isinstance(obj, jit_module.JITFunction):
            obj.clear_memo()


@requires_nvrtc
@pytest.mark.parametrize("path", EXAMPLES, ids=[os.path.basename(p) for p in EXAMPLES])
def test_example_compiles_for_cuda_and_matches_on_cpu(path, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    jit_module = sys.modules["tilelang.jit"]
    real = jit_module.compile
    compiled = []

    def compile_for_cuda_then_cpu(prim_func, **kw):
        for arch in COMPILE_ARCHS:
            k = real(prim_func, **dict(kw, target=f"cuda -arch={arch}"))
            assert "__global__" in k.get_kernel_source()
            compiled.append(arch)
        return real(prim_func, **dict(kw, target="cpu"))

    monkeypatch.setattr(jit_module, "compile", compile_for_cuda_then_cpu)
    monkeypatch.setattr(tilelang, "compile", compile_for_cuda_then_cpu)
    mod = load(path)
    clear_memos(mod)
    try:
        run_main(mod)
    finally:
        clear_memos(mod)
    assert compiled, "the example compiled no kernel"
    assert "Kernel Output Match!" in capsys.readouterr().out


@requires_gpu
@pytest.mark.parametrize("path", EXAMPLES, ids=[os.path.basename(p) for p in EXAMPLES])
def test_example_matches_on_gpu(path, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    mod = load(path)
    clear_memos(mod)
    run_main(mod)
    out = capsys.readouterr().out
    assert "Kernel Output Match!" in out, out
    assert "target: cuda" in out or "cuda" in out, out
