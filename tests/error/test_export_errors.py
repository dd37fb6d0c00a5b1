"""kernel.export_library (docs/AOT.md) refuses what it cannot do with typed errors that say why and
what to do: a bad path or entry name (ValueError / TypeError), kernels the export does not cover
(NotImplementedError: ascend, T.alloc_global workspaces, cuda TMA tensor maps, cuda
T.device_assert), and a library that is not there is never half-written."""
import atexit
import os
import shutil
import tempfile

import pytest

import tilelang
import tilelang.language as T
from tilelang import _core

if "TILELANG_CACHE_DIR" not in os.environ:  # a private cache, removed at exit
    os.environ["TILELANG_CACHE_DIR"] = tempfile.mkdtemp(prefix="tl-error-tests-")
    atexit.register(shutil.rmtree, os.environ["TILELANG_CACHE_DIR"], True)


def _copy(n=64):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                B[i] = A[i]
    return main


@pytest.fixture(scope="module")
def cpu_kernel():
    return tilelang.compile(_copy(), target="cpu")


def test_file_name_must_end_in_so(cpu_kernel, tmp_path):
    with pytest.raises(ValueError, match=r"must end in \.so"):
        cpu_kernel.export_library(str(tmp_path / "copy.dll"))
    with pytest.raises(ValueError, match=r"must end in \.so"):
        cpu_kernel.export_library(str(tmp_path / ".so"))
    assert os.listdir(tmp_path) == []


def test_missing_directory(cpu_kernel, tmp_path):
    with pytest.raises(ValueError, match=r"directory '.*nowhere' .* does not exist"):
        cpu_kernel.export_library(str(tmp_path / "nowhere" / "copy.so"))


def test_path_is_a_directory(cpu_kernel, tmp_path):
    (tmp_path / "d.so").mkdir()
    with pytest.raises(ValueError, match="is a directory"):
        cpu_kernel.export_library(str(tmp_path / "d.so"))


def test_path_and_name_types(cpu_kernel, tmp_path):
    with pytest.raises(TypeError, match="takes a file path"):
        cpu_kernel.export_library(42)
    with pytest.raises(TypeError, match="name must be a string"):
        cpu_kernel.export_library(str(tmp_path / "copy.so"), name=3)


@pytest.mark.parametrize("file, name", [("main.so", None), ("1copy.so", None), ("my-copy.so", None),
                                        ("copy.so", "int"), ("copy.so", "tl_copy"), ("copy.so", "a b")])
def test_entry_name_must_be_a_usable_c_identifier(cpu_kernel, tmp_path, file, name):
    with pytest.raises(ValueError, match=r"cannot name the C entry point .*pass name="):
        cpu_kernel.export_library(str(tmp_path / file), name=name)
    assert os.listdir(tmp_path) == []


def test_name_overrides_the_file_stem(cpu_kernel, tmp_path):
    header = cpu_kernel.export_library(str(tmp_path / "main.so"), name="copy64")
    assert "int32_t copy64(float* A, float* B);" in open(header).read()
    assert sorted(os.listdir(tmp_path)) == ["main.h", "main.so"]


def test_ascend_is_not_exported(tmp_path):
    @T.prim_func
    def main(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
        with T.Kernel(1, threads=1, is_npu=True) as cid:
            a = T.alloc_shared((256,), "float32")
            T.copy(A[0], a)
            T.copy(a, B[0])

    k = tilelang.compile(main, target="ascend", pass_configs={"tl.ascend_auto_sync": True})
    with pytest.raises(NotImplementedError, match="export_library for target 'ascend"):
        k.export_library(str(tmp_path / "copy.so"))
    assert os.listdir(tmp_path) == []


def test_global_workspace_is_not_exported(tmp_path):
    @T.prim_func
    def main(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        part = T.alloc_global((64,), "float32")
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(64):
                part[i] = A[i] * 2.0
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(64):
                B[i] = part[i]

    k = tilelang.compile(main, target="cpu")
    with pytest.raises(NotImplementedError, match=r"global workspaces \(T.alloc_global\)"):
        k.export_library(str(tmp_path / "ws.so"))


requires_nvrtc = pytest.mark.skipif(not _core.cuda.nvrtc_available()[0],
                                    reason="NVRTC not available: " + str(_core.cuda.nvrtc_available()[1]))


@requires_nvrtc
def test_cuda_tma_kernel_is_not_exported(tmp_path):
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                    "examples", "aot"))
    try:
        import export_gemm
    finally:
        sys.path.pop(0)
    k = tilelang.compile(export_gemm.gemm_kernel(), target="cuda -arch=sm_90a")
    if "tmap" not in k.get_host_source():
        pytest.fail("expected the sm_90a GEMM to use TMA tensor maps")
    with pytest.raises(NotImplementedError, match=r"TMA tensor maps .*cuda -arch=sm_90.*cuda -arch=sm_80"):
        k.export_library(str(tmp_path / "gemm.so"))
    assert os.listdir(tmp_path) == []


@requires_nvrtc
def test_cuda_device_assert_is_not_exported(tmp_path):
    @T.prim_func
    def main(A: T.Tensor((64,), "float32"), limit: T.float32):
        with T.Kernel(1, threads=32) as bx:
            for i in T.serial(64):
                T.device_assert(A[i] < limit, "A must stay below the limit")

    k = tilelang.compile(main, target="cuda -arch=sm_80")
    with pytest.raises(NotImplementedError, match="T.device_assert"):
        k.export_library(str(tmp_path / "check.so"))
