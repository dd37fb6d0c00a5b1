"""CUDA in a process forked after CUDA was initialised: the driver's state does not survive fork(),
so every cuda entry point (device queries, kernel calls) in such a child raises DeviceRuntimeError
saying to use the 'spawn' start method — not a bare RuntimeError from deep inside a framework.
On CI the driver is the fake libcuda of tests/python/cuda (no GPU needed); the GPU tier runs the
same sequence on a real device."""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from child_process import run_script

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FAKE_SOURCE = os.path.join(ROOT, "tests", "python", "cuda", "fake_libcuda.c")
CC = shutil.which("cc") or shutil.which("gcc")

# Runs in the child of the fork: each cuda entry point must refuse with the fork message.
CHILD_CHECKS = '''
def child_checks(calls):
    failures = []
    for name, call in calls:
        try:
            call()
            failures.append(name + ": no error")
        except tilelang.DeviceRuntimeError as e:
            if "forked after CUDA had been initialised" not in str(e) or "'spawn'" not in str(e):
                failures.append(name + ": " + str(e))
        except BaseException as e:
            failures.append(name + ": " + type(e).__name__ + ": " + str(e))
    return failures

def fork_and_check(calls):
    pid = os.fork()
    if pid == 0:
        failures = child_checks(calls)
        sys.stdout.write("\\n".join(failures) + "\\n")
        sys.stdout.flush()
        os._exit(1 if failures else 0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)
'''


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory):
    if CC is None:
        pytest.skip("no C compiler to build the fake driver")
    out = tmp_path_factory.mktemp("fake") / "libcuda_fake.so"
    subprocess.run([CC, "-shared", "-fPIC", "-O1", "-o", str(out), FAKE_SOURCE], check=True)
    return str(out)


def test_fork_after_cuda_init_is_a_typed_error_fake_driver(fake_driver, tmp_path):
    env = dict(os.environ, TILELANG_CUDA_DRIVER_PATH=fake_driver, TILELANG_CACHE_DIR=str(tmp_path / "cache"))
    r = run_script(textwrap.dedent('''
        import os, sys
        import tilelang
        from tilelang import _core
        cuda = _core.cuda
        ''') + CHILD_CHECKS + textwrap.dedent('''
        assert cuda.device_count() == 1          # initialises the (fake) driver in this process
        info = cuda.device_info(0)
        calls = [("device_info", lambda: cuda.device_info(0)), ("malloc", lambda: cuda.malloc(256, 0))]
        if cuda.nvrtc_available()[0]:  # a compiled cuda kernel called from the child
            import numpy as np
            import tilelang.language as T

            @T.prim_func
            def add_one(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
                with T.Kernel(2, threads=128) as bx:
                    for i in T.Parallel(128):
                        B[bx * 128 + i] = A[bx * 128 + i] + 1.0
            k = tilelang.compile(add_one, out_idx=[1], target="cuda -arch=sm_80")
            calls.append(("kernel call", lambda: k(np.ones(256, np.float32))))
        code = fork_and_check(calls)
        assert code == 0, code
        assert cuda.device_info(0)["name"] == info["name"]   # the parent is unaffected
        print("ok")
        '''), env=env)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr


@pytest.mark.gpu
def test_fork_after_cuda_init_is_a_typed_error_on_a_gpu(tmp_path):
    env = dict(os.environ, TILELANG_CACHE_DIR=str(tmp_path / "cache"))
    r = run_script(textwrap.dedent('''
        import os, sys
        import torch
        import tilelang, tilelang.language as T
        ''') + CHILD_CHECKS + textwrap.dedent('''
        @T.prim_func
        def add_one(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
            with T.Kernel(2, threads=128) as bx:
                for i in T.Parallel(128):
                    B[bx * 128 + i] = A[bx * 128 + i] + 1.0
        k = tilelang.compile(add_one, out_idx=[1], target="cuda")
        a = torch.randn(256, device="cuda")
        torch.testing.assert_close(k(a), a + 1)
        code = fork_and_check([
            ("torch call", lambda: k(a)),
            ("device_info", lambda: tilelang._core.cuda.device_info(0)),
        ])
        assert code == 0, code
        torch.testing.assert_close(k(a), a + 1)   # the parent is unaffected
        print("ok")
        '''), env=env)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr
