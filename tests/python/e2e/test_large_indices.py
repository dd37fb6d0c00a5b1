"""Index arithmetic past 2^31 elements (compile-only, every target's source): static extents that
can exceed int32 make the index arithmetic 64-bit where it can overflow (and only there); dynamic
extents get a call-time limit (a typed error past it); tl.config_index_bitwidth=64 makes all index
arithmetic 64-bit; a CUDA grid beyond the device limits is a typed error. The runs past 2^31
elements are tests/slow/test_indices_past_2_31.py (cpu) and
tests/python/cuda/test_large_indices_gpu.py (GPU).

Regression tests of issue 11 (5): a 1-D add of 2^31 + 2048 elements computed `bx * 1024 + i` in
int32 (cpu: every element wrong, no error; cuda: an illegal memory access), and a literal index
above 2^31 wrapped to a negative int32."""
import re

import numpy as np
import pytest

import tilelang
import tilelang.language as T

BIG = 2 ** 31 + 2048


def add_1d(N, dtype="int8", block=1024):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=256) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
    return main


def tail_read(N, block=1024):
    """Reads the last block of A through a constant offset above 2^31."""
    off = N - block

    @T.prim_func
    def main(A: T.Tensor((N,), "int8"), C: T.Tensor((block,), "int8")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(block):
                C[i] = A[i + off]
    return main


def source(func, target, configs=None):
    return tilelang.compile(func, target=target, pass_configs=configs).get_kernel_source()


def cuda_source(func, configs=None):
    from tilelang import _core
    ir = func.ir if hasattr(func, "ir") else func
    return _core.cuda.lower_func(ir, "sm_80")[1] if not configs else \
        _core.cuda.build_func(ir, "sm_80", configs, [])["source"]


def test_cpu_index_past_2_31_is_64_bit():
    src = source(add_1d(BIG), "cpu")
    stores = [ln for ln in src.splitlines() if "C[" in ln and "=" in ln]
    assert stores and all("int64_t(bx)" in ln for ln in stores), "\n".join(stores)


def test_cuda_index_past_2_31_is_64_bit():
    src = cuda_source(add_1d(BIG, "float16"))
    stores = [ln for ln in src.splitlines() if re.search(r"\bC\[", ln)]
    assert stores and all("static_cast<long long>(bx)" in ln for ln in stores), "\n".join(stores)


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_small_kernels_keep_32_bit_indices(target):
    src = source(add_1d(1 << 20), "cpu") if target == "cpu" else cuda_source(add_1d(1 << 20))
    assert "int64_t(bx)" not in src and "long long>(bx)" not in src


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_literal_index_above_2_31_does_not_wrap(target):
    f = tail_read(BIG)
    src = source(f, "cpu") if target == "cpu" else cuda_source(f)
    line = next(ln for ln in src.splitlines() if re.search(r"\bA\[", ln))
    assert str(BIG - 1024) in line and "-2147" not in line, line


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_config_index_bitwidth_64_widens_everything(target):
    cfg = {"tl.config_index_bitwidth": 64}
    src = source(add_1d(1 << 20), "cpu", cfg) if target == "cpu" else cuda_source(add_1d(1 << 20), cfg)
    assert ("int64_t(bx)" in src) if target == "cpu" else ("long long>(bx)" in src), src


def add_dynamic(dtype="int8", block=1024):
    n = T.dynamic("n")

    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, block), threads=256) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] + 1
    return main


def test_dynamic_extent_past_the_32_bit_range_is_a_typed_error():
    k = tilelang.compile(add_dynamic(), target="cpu")
    # 32-bit index arithmetic in the kernel, valid up to n = 2^30 - 1 (bx * 1024 + i < 2^31).
    assert "int64_t(bx)" not in k.get_kernel_source()
    a = np.arange(5000).astype(np.int8)
    b = np.zeros_like(a)
    k(a, b)
    np.testing.assert_array_equal(b, (a + 1).astype(np.int8))
    # Past the limit: np.empty only reserves address space (the check runs before the launch).
    huge_a = np.empty(2 ** 30 + 7, np.int8)
    huge_b = np.empty(2 ** 30 + 7, np.int8)
    with pytest.raises(tilelang.ArgumentError, match=r"dynamic variable 'n' is 1073741831, beyond \+-1073741823.*"
                                                     r"tl.config_index_bitwidth"):
        k(huge_a, huge_b)
    # With 64-bit indices there is no limit (the source says so; running it would need 2 GiB).
    k64 = tilelang.compile(add_dynamic(), target="cpu", pass_configs={"tl.config_index_bitwidth": 64})
    assert "int64_t(bx)" in k64.get_kernel_source()


def test_cuda_grid_beyond_the_device_limit_is_a_typed_error():
    @T.prim_func
    def wide(A: T.Tensor((16,), "float32")):
        with T.Kernel(4, 70000, threads=32) as (bx, by):
            A[bx] = 1.0

    with pytest.raises(tilelang.ResourceError, match="grid dimension 1 has 70000 blocks; CUDA allows at most 65535"):
        cuda_source(wide)
