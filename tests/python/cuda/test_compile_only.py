"""CI without a GPU: every kernel of cuda_kernels.py and every example under examples/ compiles
through the cuda backend (lower + codegen + NVRTC) for sm_80 and sm_90a, without spills."""
import glob
import importlib.util
import os

import pytest

import cuda_kernels as K
from cuda_util import COMPILE_ARCHS, build, requires_nvrtc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
KERNELS = K.all_kernels()


@requires_nvrtc
@pytest.mark.parametrize("arch", COMPILE_ARCHS)
@pytest.mark.parametrize("name", list(KERNELS))
def test_kernel_compiles(name, arch):
    r = build(KERNELS[name], arch)
    assert r["cubin"][:4] == b"\x7fELF"
    for u in r["usage"]:
        assert u["spill_store_bytes"] == 0, (name, u)
        assert u["stack_frame_bytes"] == 0 or name == "assert_positive", (name, u)


def _example_kernels():
    """(example file, kernel) pairs: each example module may expose `kernels()` returning
    prim_funcs (or builders' results) for compile checks; otherwise it is skipped here and runs in
    the GPU check."""
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.py"), recursive=True)):
        out.append(path)
    return out


@requires_nvrtc
@pytest.mark.parametrize("arch", COMPILE_ARCHS)
@pytest.mark.parametrize("path", _example_kernels() or ["<none>"])
def test_example_compiles(path, arch):
    if path == "<none>":
        pytest.skip("no examples/ in this tree yet")
    spec = importlib.util.spec_from_file_location("example_mod", path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except SystemExit:
        pass
    funcs = mod.kernels() if hasattr(mod, "kernels") else []
    if not funcs:
        pytest.skip("the example exposes no kernels() for compile-only checks")
    for f in funcs:
        build(f, arch)
