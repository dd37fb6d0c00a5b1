"""Every example under examples/ runs on cpu at small sizes (tails included) and prints
"Kernel Output Match!"; each example's check does fail, with a non-zero exit, when the kernel
computes something else; and, where NVRTC is available, every kernel of every example also
compiles for cuda (sm_80 and sm_90a), so the same files run unchanged on a GPU."""
import glob
import importlib.util
import os
import sys

import pytest

import tilelang

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
EXAMPLES = os.path.join(ROOT, "examples")

# Small sizes, most of them not multiples of the blocks, so the tails run too.
SMALL = {
    "elementwise_add": dict(M=37, N=53, block_N_1d=256, block_M=16, block_N=32),
    "gemm": dict(M=100, N=72, K=80, block_M=32, block_N=32, block_K=16),
    "gemm_relu": dict(M=70, N=96, K=48, block_M=32, block_N=32, block_K=16),
    "gemm_persistent": dict(M=100, N=130, K=48, block_M=32, block_N=32, block_K=16, num_workers=3, group_size=2),
    "softmax": dict(M=45, N=203, block_M=8),
    "rms_norm": dict(M=37, N=160, block_M=4),
    "layer_norm": dict(M=37, N=160, block_M=4),
    "reduce": dict(M=75, N=96, block_M=16),
    "cumsum": dict(M=45, N=70, block=16),
    "flash_attention": dict(batch=1, heads=2, seq_len=100, dim=32, block_M=64, block_N=64),
    "mla_decode": dict(batch=2, heads=64, kv_len=100, dim=64, pe_dim=32, block_N=64, block_H=64),
}


def example_files():
    """examples/<kernel>/example_<kernel>.py (the Ascend examples run on their own target; the
    distributed ones start several processes: tests/python/distributed runs them)."""
    files = sorted(glob.glob(os.path.join(EXAMPLES, "*", "example_*.py")))
    return [f for f in files if os.path.basename(os.path.dirname(f)) not in ("ascend", "distributed")]


def load(name):
    path = os.path.join(EXAMPLES, name, f"example_{name}.py")
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_example_is_listed():
    names = [os.path.basename(os.path.dirname(f)) for f in example_files()]
    for f in example_files():
        assert os.path.basename(f) == f"example_{os.path.basename(os.path.dirname(f))}.py", f
    assert sorted(names) == sorted(SMALL), "give every example small sizes in SMALL"


@pytest.mark.parametrize("name", sorted(SMALL))
def test_example_matches_reference(name, capsys):
    load(name).main(**SMALL[name], target="cpu")
    out = capsys.readouterr().out
    assert out.strip().endswith("Kernel Output Match!"), out
    assert "Mismatch" not in out, out


class CorruptingKernel:
    """A compiled kernel that is handed its first input with one element changed."""

    def __init__(self, kernel):
        self.kernel = kernel

    def __call__(self, first, *rest):
        first = first.copy()
        first.flat[0] += 100
        return self.kernel(first, *rest)

    def __getattr__(self, name):
        return getattr(self.kernel, name)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_example_reports_a_wrong_result(name, capsys, monkeypatch):
    """The example must notice when its kernel's result is not that of its inputs."""
    jit_module = sys.modules["tilelang.jit"]
    real_compile = jit_module.compile
    monkeypatch.setattr(jit_module, "compile", lambda *a, **kw: CorruptingKernel(real_compile(*a, **kw)))
    with pytest.raises(SystemExit) as info:
        load(name).main(**SMALL[name], target="cpu")
    assert info.value.code not in (0, None)
    out = capsys.readouterr().out
    assert "Kernel Output Mismatch" in out and "Kernel Output Match!" not in out, out


def nvrtc_available():
    cuda = getattr(tilelang._core, "cuda", None)
    return cuda is not None and cuda.nvrtc_available()[0]


@pytest.mark.skipif(not nvrtc_available(), reason="NVRTC not available (the cuda target cannot compile here)")
@pytest.mark.parametrize("name", sorted(SMALL))
def test_example_kernels_compile_for_cuda(name, capsys, monkeypatch):
    """Each kernel the example builds goes through the whole cuda pipeline (layouts, lowering, NVRTC);
    the example then runs on cpu as usual."""
    jit_module = sys.modules["tilelang.jit"]
    real_compile = jit_module.compile
    archs = []

    def compile_for_cuda_too(prim_func, **kw):
        for arch in ("sm_80", "sm_90a"):
            k = real_compile(prim_func, **dict(kw, target=f"cuda -arch={arch}"))
            assert "__global__" in k.get_kernel_source()
            archs.append(arch)
        return real_compile(prim_func, **kw)

    monkeypatch.setattr(jit_module, "compile", compile_for_cuda_too)
    load(name).main(**SMALL[name], target="cpu")
    assert archs and "Kernel Output Match!" in capsys.readouterr().out


def test_mla_decode_paged_cache_matches_reference(capsys):
    """examples/mla_decode with a paged cache (shuffled pages, the last one partly used) on cpu."""
    load("mla_decode").main(**dict(SMALL["mla_decode"], page_size=64), target="cpu")
    assert capsys.readouterr().out.strip().endswith("Kernel Output Match!")
