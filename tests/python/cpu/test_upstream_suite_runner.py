"""scripts/upstream_suite.py --device cpu itself, on tiny programs of our own placed where the runner
extracts TileLang's (so no snapshot is needed): the cpu shim (torch.cuda.is_available() and the
device capability answered, device="cuda" tensors on the host, a kernel that names target "cuda"
compiled for the cpu), pytest's rootdir at the extracted repository (its testing/conftest.py
applies), the list's per-program options."""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# Written the way TileLang's examples are: asks torch about CUDA first, names target "cuda".
CUDA_PROGRAM = '''
import numpy as np
import torch
import tilelang
import tilelang.language as T

if not torch.cuda.is_available():
    raise RuntimeError("CUDA is not available")
major, minor = torch.cuda.get_device_capability(torch.cuda.current_device())
assert major * 10 + minor >= 80


def scale_add(M, N, block_M, block_N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j] * 2.0 + \\
                    B[by * block_M + i, bx * block_N + j]
    return main


kernel = tilelang.compile(scale_add(96, 80, 32, 16), out_idx=[2], target="cuda")
a = torch.randn(96, 80, device="cuda")
b = torch.randn(96, 80, device="cuda")
c = kernel(a, b)
ref = a.numpy().astype(np.float64) * 2 + b.numpy().astype(np.float64)
np.testing.assert_allclose(c.numpy(), ref, rtol=1e-6, atol=1e-6)
print("target", kernel.target if hasattr(kernel, "target") else "?")
'''

CONFTEST = '''
import pytest


def pytest_addoption(parser):
    parser.addoption("--run-perf", action="store_true", default=False)


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-perf"):
        return
    for item in items:
        if item.get_closest_marker("perf") is not None:
            item.add_marker(pytest.mark.skip(reason="perf"))
'''

PERF_TEST = '''
import pytest


@pytest.mark.perf
def test_only_with_run_perf():
    assert True
'''


def test_cpu_shim_and_pytest_rootdir(tmp_path):
    work = tmp_path / "work"
    base = work / "tilelang"
    (base / "examples" / "tiny").mkdir(parents=True)
    (base / "examples" / "tiny" / "cuda_program.py").write_text(CUDA_PROGRAM)
    (base / "testing" / "python" / "perf").mkdir(parents=True)
    (base / "testing" / "conftest.py").write_text(CONFTEST)
    (base / "testing" / "python" / "perf" / "test_perf_only.py").write_text(PERF_TEST)
    lst = tmp_path / "list.txt"
    lst.write_text("tilelang examples/tiny/cuda_program.py\n"
                   "tilelang testing/python/perf/test_perf_only.py pytest --run-perf\n"
                   "tilelang testing/python/perf/test_perf_only.py pytest\n")
    out_json = tmp_path / "r.json"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), TILELANG_SOURCE_DIR=ROOT)
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "upstream_suite.py"), "--device", "cpu",
                        "--list", str(lst), "--work", str(work), "--mirror", "tilelang=" + str(tmp_path / "none"),
                        "--timeout", "240", "--json", str(out_json)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.loads(out_json.read_text())
    prog, perf_on, perf_off = res["results"]
    log = (work / "logs" / "tilelang_examples_tiny_cuda_program.py.log").read_text()
    assert prog["status"] == "pass", log
    assert "target cpu" in log, log
    assert perf_on["status"] == "pass", perf_on
    # Without the option the conftest skips the only test: no pass is reported, so it fails.
    assert perf_off["status"] == "fail", perf_off
    assert res["passed"] == 2 and res["total"] == 3


# A reference computed by an autotuned Triton kernel, the way programs that compare with `fla` do:
# on the cpu run it executes in Triton's interpreter (TRITON_INTERPRET=1, set by the runner), the
# shim picks the config that launches the fewest program instances instead of timing them on a
# GPU, and torch.cuda.profiler's capture range is a no-op.
TRITON_PROGRAM = '''
import os
import numpy as np
import torch
import triton
import triton.language as tl

assert os.environ.get("TRITON_INTERPRET") == "1"
assert triton.runtime.driver.active.get_current_target().backend == "cuda"  # as torch.cuda says


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w) for b in (16, 128, 64) for w in (2, 4)],
                 key=["n"])
@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


n = 1000
x = torch.randn(n, device="cuda")
y = torch.randn(n, device="cuda")
out = torch.empty(n, device="cuda")
torch.cuda.profiler.start()
axpy[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, 1.5, n)
torch.cuda.profiler.stop()
ref = 1.5 * x.numpy().astype(np.float64) + y.numpy().astype(np.float64)
np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6, atol=1e-6)
print("chosen", axpy.best_config.kwargs["BLOCK"], axpy.best_config.num_warps)
'''


def test_cpu_shim_runs_triton_references_in_the_interpreter(tmp_path):
    pytest.importorskip("triton")
    work = tmp_path / "work"
    base = work / "tilelang"
    (base / "examples" / "tiny").mkdir(parents=True)
    (base / "examples" / "tiny" / "triton_ref.py").write_text(TRITON_PROGRAM)
    lst = tmp_path / "list.txt"
    lst.write_text("tilelang examples/tiny/triton_ref.py\n")
    out_json = tmp_path / "r.json"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), TILELANG_SOURCE_DIR=ROOT)
    env.pop("TRITON_INTERPRET", None)
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "upstream_suite.py"), "--device", "cpu",
                        "--list", str(lst), "--work", str(work), "--mirror", "tilelang=" + str(tmp_path / "none"),
                        "--timeout", "240", "--json", str(out_json)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.loads(out_json.read_text())
    log = (work / "logs" / "tilelang_examples_tiny_triton_ref.py.log").read_text()
    assert res["results"][0]["status"] == "pass", log
    # BLOCK=128 launches the fewest instances (8); the first such config in the list runs
    assert "chosen 128 2" in log, log


def _suite_module():
    import importlib
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    try:
        return importlib.import_module("upstream_suite")
    finally:
        sys.path.pop(0)


def test_solo_directive_is_not_an_option_and_runs_alone_after_the_others(tmp_path):
    import threading
    import time
    suite = _suite_module()
    lst = tmp_path / "list.txt"
    lst.write_text("puzzles ans/big.py main @solo\n"
                   "tilelang a.py\n"
                   "tilelang t.py pytest --run-perf\n"
                   "tilelang b.py main --x 1\n")
    items = suite.read_list(str(lst))
    assert [it[3] for it in items] == [(), (), ("--run-perf",), ("--x", "1")]
    assert items[0][4] == frozenset({"solo"}) and all(not it[4] for it in items[1:])

    lock = threading.Lock()
    running, peak_with_solo, order = [0], [0], []

    def fn(item):
        with lock:
            running[0] += 1
            order.append(item[1])
            if "solo" in item[4]:
                peak_with_solo[0] = running[0]
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return item[1].upper()

    res = suite.run_solo_last(fn, items, 3)
    assert res == ["ANS/BIG.PY", "A.PY", "T.PY", "B.PY"]  # the items' order
    assert order[-1] == "ans/big.py"  # after every other program
    assert peak_with_solo[0] == 1  # nothing else ran beside it


def test_unknown_directive_is_refused(tmp_path):
    suite = _suite_module()
    lst = tmp_path / "list.txt"
    lst.write_text("tilelang a.py main @alone\n")
    with pytest.raises(ValueError, match="unknown directive"):
        suite.read_list(str(lst))
