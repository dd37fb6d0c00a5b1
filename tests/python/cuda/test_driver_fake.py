"""The driver layer (src/target/cuda/driver.cc) against a fake libcuda (fake_libcuda.c): runs on
machines without a GPU, so the call sequence, the kernel-argument marshalling, image validation
and the device_assert path are checked in CI. Each case runs in a fresh process because the
driver is loaded once per process."""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from cuda_util import has_nvrtc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

CC = shutil.which("cc") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler to build the fake driver")


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory):
    out = tmp_path_factory.mktemp("fake") / "libcuda_fake.so"
    subprocess.run([CC, "-shared", "-fPIC", "-O1", "-o", str(out), os.path.join(HERE, "fake_libcuda.c")], check=True)
    return str(out)


def run_with_fake(fake_driver, body):
    code = textwrap.dedent("""
        import ctypes, os, sys
        import numpy as np
        sys.path.insert(0, os.path.join(os.environ["TL_ROOT"], "python"))
        from tilelang import _core
        cuda = _core.cuda
        fake = ctypes.CDLL(os.environ["TILELANG_CUDA_DRIVER_PATH"])
    """) + textwrap.dedent(body)
    env = dict(os.environ, TILELANG_CUDA_DRIVER_PATH=fake_driver, TL_ROOT=ROOT, TILELANG_SOURCE_DIR=ROOT)
    p = subprocess.run([sys.executable, "-X", "faulthandler", "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def test_driver_resolution_and_device_facts(fake_driver):
    out = run_with_fake(fake_driver, """
        facts = cuda.driver_facts()
        assert facts["version"] == 13000 and facts["resolution"] == "cuGetProcAddress_v2", facts
        assert facts["path"].endswith("libcuda_fake.so"), facts
        assert cuda.device_count() == 1
        info = cuda.device_info(0)
        assert info["arch"] == "sm_90" and info["sm_count"] == 132 and info["name"] == "Fake H200", info
        try:
            cuda.device_info(3)
            raise SystemExit("expected an error for device 3")
        except _core.DeviceRuntimeError as e:
            assert "device 3 does not exist" in str(e), e
        print("ok")
    """)
    assert "ok" in out


def test_memory_round_trip(fake_driver):
    run_with_fake(fake_driver, """
        data = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
        p = cuda.malloc(data.nbytes, 0)
        cuda.memcpy_htod(p, data.tobytes(), 0)
        back = np.frombuffer(cuda.memcpy_dtoh(p, data.nbytes, 0), np.float32)
        np.testing.assert_array_equal(back, data)
        cuda.memset(p, 0, data.nbytes, 0)
        assert not np.frombuffer(cuda.memcpy_dtoh(p, data.nbytes, 0), np.float32).any()
        cuda.free(p, 0)
    """)


def test_malformed_images_are_rejected_before_the_driver(fake_driver):
    run_with_fake(fake_driver, """
        for image, part in [(b"", "neither a cubin"), (b"\\x7fELF\\x02\\x01" + b"\\0" * 10, "truncated ELF header"),
                            (b"\\x7fELF" + b"\\x02\\x01" + b"\\0" * 58, "not a CUDA cubin"),
                            (b"garbage" * 10, "neither a cubin")]:
            try:
                cuda.Module(image, 0)
                raise SystemExit("expected ValueError for %r" % image[:8])
            except ValueError as e:
                assert part in str(e), (part, str(e))
        print("ok")
    """)


@pytest.mark.skipif(not has_nvrtc(), reason="NVRTC not available")
def test_module_launch_marshals_arguments_and_reports_asserts(fake_driver):
    run_with_fake(fake_driver, """
        src = '#include "tl/cuda/all.h"\\n' + '''
        extern "C" __global__ void k(float* out, int n, long long m, float s, double d) {
          tl::device_assert(n > 0, "x.py", 1, "n positive");
          if (threadIdx.x == 0) out[0] = n + m + s + d;
        }'''
        r = cuda.compile(src, name="k.cu", arch="sm_90a")
        mod = cuda.Module(r["cubin"], 0)
        assert mod.has_error_slot
        fake.fake_set_nargs(5)
        mod.launch("k", [3, 2], [128], [("ptr", 0x1234560), ("i32", -7), ("i64", 1 << 40), ("f32", 1.5),
                                         ("f64", -2.25)], smem=64 * 1024)
        grid = (ctypes.c_uint * 3)(); block = (ctypes.c_uint * 3)(); smem = ctypes.c_uint(); args = (ctypes.c_uint64 * 16)()
        fake.fake_last_launch(grid, block, ctypes.byref(smem), args)
        assert list(grid) == [3, 2, 1] and list(block) == [128, 1, 1] and smem.value == 64 * 1024
        assert args[0] == 0x1234560
        assert ctypes.c_int32(args[1] & 0xFFFFFFFF).value == -7
        assert args[2] == 1 << 40
        assert np.frombuffer(np.uint64(args[3]).tobytes()[:4], np.float32)[0] == 1.5
        assert np.frombuffer(np.uint64(args[4]).tobytes(), np.float64)[0] == -2.25
        try:
            mod.launch("missing_kernel", [1], [1], [])
            raise SystemExit("expected an error for a missing kernel")
        except _core.DeviceRuntimeError as e:
            assert "CUDA_ERROR_NOT_FOUND" in str(e) and "missing_kernel" in str(e), e
        try:
            mod.launch("k", [1], [1], [], smem=300 * 1024)
            raise SystemExit("expected ResourceError")
        except _core.ResourceError as e:
            assert "307200 bytes of shared memory" in str(e), e
        fake.fake_fail_next_assert(42)
        try:
            mod.check_device_errors("k")
            raise SystemExit("expected the device_assert failure")
        except _core.DeviceRuntimeError as e:
            assert "fake.py:42" in str(e) and "fake failure" in str(e), e
        mod.check_device_errors("k")  # the slot was cleared
        del mod
        print("ok")
    """)


@pytest.mark.skipif(not has_nvrtc(), reason="NVRTC not available")
def test_tensor_maps_are_encoded_only_when_a_tensor_changes(fake_driver):
    """Warp-specialized kernels take TMA tensor maps encoded at launch: each is encoded at the first
    launch and again only when its tensor's pointer (or, for symbolic shapes, its dims) changes;
    the launch passes the map of the tensor it was given."""
    run_with_fake(fake_driver, """
        sys.path.insert(0, os.path.join(os.environ["TL_ROOT"], "tests", "python", "cuda"))
        import cuda_kernels as K
        from cuda_util import build
        fake.fake_tmap_encodes.restype = ctypes.c_int
        grid = (ctypes.c_uint * 3)(); block = (ctypes.c_uint * 3)(); smem = ctypes.c_uint(); args = (ctypes.c_uint64 * 16)()

        def launch(kern, slots):
            kern.launch(slots)
            fake.fake_last_launch(grid, block, ctypes.byref(smem), args)

        # The register-store epilogue: the maps of the two loads only (the TMA store's below).
        b = build(K.matmul(256, 256, 256, 128, 128, 64, num_stages=3, threads=256), "sm_90a",
                  {"tl.disable_tma_store": True})
        assert "tmap" in b["meta"], b["meta"]
        kern = cuda.Kernel(b["cubin"], b["meta"], b["num_params"], b["num_dyn"])
        fake.fake_set_nargs(5)
        A, B, C, A2 = 0x100000, 0x200000, 0x300000, 0x400000
        launch(kern, [("ptr", A), ("ptr", B), ("ptr", C)])
        assert fake.fake_tmap_encodes() == 2 and list(args[:5]) == [A, B, C, A, B], list(args[:5])
        assert block[0] == 384, list(block)
        launch(kern, [("ptr", A), ("ptr", B), ("ptr", C)])
        assert fake.fake_tmap_encodes() == 2 and list(args[3:5]) == [A, B]
        launch(kern, [("ptr", A2), ("ptr", B), ("ptr", C)])
        assert fake.fake_tmap_encodes() == 3 and list(args[3:5]) == [A2, B], list(args[3:5])

        # The TMA-store epilogue (the default): C's map too, after the loads'.
        b = build(K.matmul(256, 256, 256, 128, 128, 64, num_stages=3, threads=256), "sm_90a")
        kern = cuda.Kernel(b["cubin"], b["meta"], b["num_params"], b["num_dyn"])
        fake.fake_set_nargs(6)
        launch(kern, [("ptr", A), ("ptr", B), ("ptr", C)])
        assert fake.fake_tmap_encodes() == 6 and list(args[:6]) == [A, B, C, A, B, C], list(args[:6])
        launch(kern, [("ptr", A), ("ptr", B), ("ptr", C)])
        assert fake.fake_tmap_encodes() == 6
        fake.fake_set_nargs(5)

        f = K.matmul_dynamic_m(128, 128, block_M=64, block_N=128, block_K=64, num_stages=3)
        b = build(f, "sm_90a")
        kern = cuda.Kernel(b["cubin"], b["meta"], b["num_params"], b["num_dyn"])
        n0 = fake.fake_tmap_encodes()
        launch(kern, [("ptr", A), ("ptr", B), ("ptr", C), ("i64", 64)])
        n1 = fake.fake_tmap_encodes()
        assert n1 - n0 == 3, (n0, n1)  # A, B and (the TMA store's) C
        launch(kern, [("ptr", A), ("ptr", B), ("ptr", C), ("i64", 64)])
        assert fake.fake_tmap_encodes() == n1
        launch(kern, [("ptr", A), ("ptr", B), ("ptr", C), ("i64", 100)])  # A's and C's maps have m rows
        assert fake.fake_tmap_encodes() == n1 + 2

        # A thread that has not launched yet has no current context: the launch makes the device's
        # current there before encoding (the autotuner times kernels in its own thread).
        import threading
        errors = []
        def other_thread():
            try:
                launch(kern, [("ptr", A2), ("ptr", B), ("ptr", C), ("i64", 100)])
            except Exception as e:  # noqa: BLE001
                errors.append(e)
        th = threading.Thread(target=other_thread)
        th.start(); th.join()
        assert not errors, errors
        assert fake.fake_tmap_encodes() == n1 + 3  # A2's map
        print("ok")
    """)
