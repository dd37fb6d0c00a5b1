"""scripts/ascend_suite.py itself, on two tiny programs of our own placed where the runner extracts
TileLang-Ascend's (so no snapshot is needed): the NPU shim (torch_npu stub, device="npu", .npu(),
torch.npu.synchronize), the program's own options, pass / fail with the first error, the table."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

GOOD = '''
import argparse
import torch
import torch_npu  # noqa: F401
import tilelang
import tilelang.language as T

p = argparse.ArgumentParser()
p.add_argument("--n", type=int, default=4096)
N = p.parse_args().n
assert N == 128, N  # the list's option reached the program


@tilelang.jit(out_idx=[-1])
def double(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_ub((N,), "float32")
            with T.Scope("V"):
                if vid == 0:
                    T.copy(A, a)
                    T.barrier_all()
                    T.tile.add(a, a, a)
                    T.barrier_all()
                    T.copy(a, B)
    return main


torch.npu.set_device(0)
a = torch.randn(N, device="npu")
b = double(N)(a.npu())
torch.npu.synchronize()
torch.testing.assert_close(b, 2 * a)
'''

BAD = '''
import torch
raise ValueError("this program fails on purpose")
'''


def test_runner_on_two_tiny_programs(tmp_path):
    work = tmp_path / "work"
    ex = work / "ascendc_pto" / "examples" / "tiny"
    ex.mkdir(parents=True)
    (ex / "good.py").write_text(GOOD)
    (ex / "bad.py").write_text(BAD)
    lst = tmp_path / "list.txt"
    lst.write_text("# two programs\nascendc_pto examples/tiny/good.py expert --n 128\n"
                   "ascendc_pto examples/tiny/bad.py developer\n")
    out_json, out_md = tmp_path / "r.json", tmp_path / "r.md"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), TILELANG_SOURCE_DIR=ROOT)
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "ascend_suite.py"), "--list", str(lst),
                        "--work", str(work), "--mirror", str(tmp_path / "none"), "--timeout", "120",
                        "--json", str(out_json), "--markdown", str(out_md)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.loads(out_json.read_text())
    assert res["passed"] == 1 and res["total"] == 2
    good, bad = res["results"]
    assert good["status"] == "pass", (work / "logs" / "ascendc_pto_examples_tiny_good.py.log").read_text()
    assert good["args"] == ["--n", "128"]
    assert bad["status"] == "fail" and bad["error"] == "ValueError: this program fails on purpose"
    md = out_md.read_text()
    assert "| expert | **1 / 1** |" in md and "| developer | **0 / 1** |" in md
