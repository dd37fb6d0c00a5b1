"""Ascend per-core memory capacities (A2): UB 192 KiB, L1 512 KiB, L0A/L0B 64 KiB, L0C 128 KiB.
A kernel that fills a memory exactly compiles and runs; one that overflows it is a compile-time
ResourceError naming the memory, every buffer in it with its size, and the capacity."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import ResourceError

KiB = 1024


def compile_ascend(func, configs=None, target="ascend"):
    return tilelang._core.ascend.compile(func.ir, configs or {}, target)


def vec_add(M, N, block_M, block_N, dtype="float32"):
    """TileLang-Ascend's own element-wise example (examples/elementwise/elementwise_add.py), unmodified
    in substance: three UB tiles of (block_M / 2) x block_N per vector core."""
    m_num, n_num = M // block_M, N // block_N
    VEC_NUM = 2

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(m_num * n_num, is_npu=True) as (cid, vid):
            bx = cid // n_num
            by = cid % n_num
            a_ub = T.alloc_ub((block_M // VEC_NUM, block_N), dtype)
            b_ub = T.alloc_ub((block_M // VEC_NUM, block_N), dtype)
            c_ub = T.alloc_ub((block_M // VEC_NUM, block_N), dtype)
            with T.Scope("V"):
                T.copy(A[bx * block_M + vid * block_M // VEC_NUM, by * block_N], a_ub)
                T.copy(B[bx * block_M + vid * block_M // VEC_NUM, by * block_N], b_ub)
                T.barrier_all()
                T.tile.add(c_ub, a_ub, b_ub)
                T.barrier_all()
                T.copy(c_ub, C[bx * block_M + vid * block_M // VEC_NUM, by * block_N])
    return main


@pytest.mark.parametrize("model", ["A2", "A3"])
def test_ub_exactly_full_compiles_and_runs(model):
    # 128 x 256 fp32 blocks: 3 x (64 x 256 x 4 B) = 3 x 64 KiB = 192 KiB, all of UB.
    M, N = 256, 512
    k = compile_ascend(vec_add(M, N, 128, 256), target=f"ascend -model={model}")
    info = k.info()
    assert info["capacity_bytes.UB"] == 192 * KiB
    assert info["peak_bytes.UB"] == 192 * KiB
    rng = np.random.default_rng(15)
    a = rng.standard_normal((M, N)).astype(np.float32)
    b = rng.standard_normal((M, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    k.launch([a, b, c])
    np.testing.assert_allclose(c, a.astype(np.float64) + b.astype(np.float64), rtol=1e-6)


def test_capacities_are_the_physical_sizes():
    info = compile_ascend(vec_add(256, 256, 128, 256)).info()
    assert info["capacity_bytes.UB"] == 192 * KiB
    assert info["capacity_bytes.L1"] == 512 * KiB
    assert info["capacity_bytes.L0A"] == 64 * KiB
    assert info["capacity_bytes.L0B"] == 64 * KiB
    assert info["capacity_bytes.L0C"] == 128 * KiB


def test_ub_one_row_over_is_a_compile_time_error_naming_buffers():
    # 3 x (65 x 256 x 4 B) = 199680 > 196608.
    with pytest.raises(ResourceError) as e:
        compile_ascend(vec_add(260, 256, 130, 256))
    msg = str(e.value)
    assert "UB over capacity" in msg and "196608" in msg and "199680" in msg
    for name in ("a_ub", "b_ub", "c_ub"):
        assert f"'{name}' float32[65, 256] = 66560 bytes" in msg, msg


def cube_kernel(l1_rows, l0c_rows, l0a_rows=None):
    """A cube-only kernel with an L1 tile of l1_rows x 512 fp16, an L0C tile of l0c_rows x 256 fp32
    and (optionally) an L0A tile of l0a_rows x 256 fp16 (rows are multiples of the 16-row fractal)."""
    @T.prim_func
    def main(A: T.Tensor((l1_rows, 512), "float16"), C: T.Tensor((l0c_rows, 256), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a_l1 = T.alloc_L1((l1_rows, 512), "float16")
            c_l0 = T.alloc_L0C((l0c_rows, 256), "float32")
            if l0a_rows:
                a_l0 = T.alloc_L0A((l0a_rows, 256), "float16")
            with T.Scope("C"):
                T.copy(A[0, 0], a_l1)
                if l0a_rows:
                    T.copy(a_l1[0:l0a_rows, 0:256], a_l0)
                T.copy(c_l0, C[0, 0])
    return main


def test_l1_l0a_l0c_exactly_full_compile():
    k = compile_ascend(cube_kernel(512, 128, 128), {"tl.ascend_auto_sync": True})
    info = k.info()
    assert info["peak_bytes.L1"] == 512 * KiB
    assert info["peak_bytes.L0C"] == 128 * KiB
    assert info["peak_bytes.L0A"] == 64 * KiB


@pytest.mark.parametrize("l1,l0c,l0a,mem,need", [
    (528, 128, None, "L1", 528 * 512 * 2),
    (16, 144, None, "L0C", 144 * 256 * 4),
    (144, 16, 144, "L0A", 144 * 256 * 2),
])
def test_cube_memories_over_capacity(l1, l0c, l0a, mem, need):
    with pytest.raises(ResourceError) as e:
        compile_ascend(cube_kernel(l1, l0c, l0a), {"tl.ascend_auto_sync": True})
    msg = str(e.value)
    assert f"{mem} over capacity" in msg and f"need {need} bytes" in msg, msg
    name = {"L1": "a_l1", "L0C": "c_l0", "L0A": "a_l0"}[mem]
    assert f"'{name}'" in msg
