"""Items 2 and 3 of the compatibility surface: `.compile(...)`, kernel methods, and the module-level
names TileLang programs use (cache switches, cdiv, DataType, env, testing, utils, carver, the tvm
namespace, PassConfigKey)."""
import io
import os
import subprocess
import sys
import textwrap
from contextlib import redirect_stdout

import pytest
import torch

import tilelang
import tilelang.language as T
import tilelang.testing
from tilelang import tvm
from tilelang.engine.param import KernelParam
from tilelang.jit import JITImpl, JITKernel


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M, block_N, block_K, dtype=T.float16, accum_dtype=T.float32):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_l = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])
    return main


def test_compile_and_kernel_methods(device, tmp_path):
    kernel = matmul.compile(64, 64, 64, 32, 32, 32)
    assert isinstance(matmul, JITImpl) and isinstance(kernel, JITKernel)
    assert kernel is matmul(64, 64, 64, 32, 32, 32)
    params = kernel.params
    assert all(isinstance(p, KernelParam) for p in params)
    assert [(p.dtype, list(p.shape)) for p in params] == [("float16", [64, 64])] * 3
    assert params[0].torch_dtype() == torch.float16 and not params[0].is_scalar()
    src = kernel.get_kernel_source()
    assert "main" in src
    buf = io.StringIO()
    with redirect_stdout(buf):
        kernel.print_source_code()
    assert buf.getvalue().strip() == src.strip()
    kernel.print_source_code(file=str(tmp_path / "k.src"))
    assert (tmp_path / "k.src").read_text() == src
    a = torch.randn(64, 64, device=device).half()
    b = torch.randn(64, 64, device=device).half()
    torch.testing.assert_close(kernel(a, b), (a.float() @ b.float()).half(), rtol=1e-2, atol=1e-2)
    profiler = kernel.get_profiler(tensor_supply_type=tilelang.TensorSupplyType.Normal)
    profiler.assert_allclose(lambda x, y: (x.float() @ y.float()).half(), atol=1e-2, rtol=1e-2)
    assert profiler.do_bench(backend="cupti", warmup=1, rep=5) > 0
    assert profiler.do_bench(lambda x, y: x @ y, backend="event", warmup=1, rep=5) > 0
    with pytest.raises(ValueError, match="backend"):
        profiler.do_bench(backend="nsight")
    ins = profiler._get_inputs()
    assert all(isinstance(t, torch.Tensor) for t in ins)  # torch installed: the profiler supplies torch tensors


def test_cache_switches_cdiv_datatype_env(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    tilelang.disable_cache()
    try:
        assert not tilelang.is_cache_enabled() and not tilelang.env.is_cache_enabled()
    finally:
        tilelang.enable_cache()
    assert tilelang.is_cache_enabled()
    assert tilelang.env.TILELANG_CACHE_DIR == str(tmp_path)
    from tilelang.env import env
    assert env is tilelang.env
    assert tilelang.cdiv(10, 4) == 3 and tilelang.cdiv(8, 4) == 2
    assert tilelang.next_power_of_2(33) == 64 and tilelang.math.next_power_of_2(1) == 1
    for name, bits in [("float16", 16), ("bfloat16", 16), ("float32", 32), ("int8", 8), ("uint64", 64)]:
        d = tilelang.DataType(name)
        assert d.bits == bits and d.lanes == 1 and d == name
    assert tvm.DataType(T.float16).bits == 16 and tvm.DataType(torch.bfloat16) == "bfloat16"


def test_testing_helpers():
    a = torch.randn(1000)
    b = a.clone()
    b[:3] += 1.0  # 0.3% of the elements off
    assert tilelang.testing.torch_assert_close(a, b, max_mismatched_ratio=0.01)
    with pytest.raises(AssertionError, match="Too many mismatched elements: 3"):
        tilelang.testing.torch_assert_close(a, b, max_mismatched_ratio=0.001)
    tilelang.testing.set_random_seed(7)
    x = torch.randn(4)
    tilelang.testing.set_random_seed(7)
    assert torch.equal(x, torch.randn(4))

    def marks(f):
        return [m.name for m in getattr(f, "pytestmark", [])]

    def f():
        return 1

    def g():
        return 2

    assert marks(tilelang.testing.requires_cuda(f)) == ["skipif"]
    assert marks(tilelang.testing.requires_cuda_compute_version_ge(8, 0)(g)) == ["skipif"]
    assert tilelang.testing.requires_package("numpy")(f)() == 1


def test_requires_cuda_decisions_in_a_fresh_process():
    # Without a CUDA device requires_cuda skips; TILELANG_TESTING_CUDA_ON_CPU=1 runs the test on
    # the cpu, with compute capability 8.0 (sm_90-only tests still skip).
    code = textwrap.dedent("""
        import tilelang.testing as tt
        def skipped(deco):
            def test():
                pass
            return deco(test).pytestmark[0].args[0]
        print(skipped(tt.requires_cuda), skipped(tt.requires_cuda_compute_version_ge(8, 0)),
              skipped(tt.requires_cuda_compute_version_ge(9, 0)), skipped(tt.requires_rocm))
    """)
    from tilelang import _core
    if _core.cuda_available():
        pytest.skip("this machine has a CUDA device")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    env.pop("TILELANG_TESTING_CUDA_ON_CPU", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True", "True", "True"]
    env["TILELANG_TESTING_CUDA_ON_CPU"] = "1"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "True", "True"]


def test_utils():
    from tilelang.utils.tensor import TensorSupplyType, get_tensor_supply, torch_assert_close
    from tilelang.utils.target import determine_target
    assert TensorSupplyType is tilelang.TensorSupplyType
    assert torch_assert_close is not None
    supply = get_tensor_supply(TensorSupplyType.Integer)
    t = supply(KernelParam("A", True, "int32", (4, 8), (), "input"))
    assert t.dtype == torch.int32 and t.shape == (4, 8) and set(t.unique().tolist()) <= {-2, -1, 0, 1, 2}
    u = get_tensor_supply(TensorSupplyType.Uniform)(KernelParam("A", True, "float16", (64,), (), "input"))
    assert u.dtype == torch.float16 and float(u.abs().max()) <= 1.0 and float(u.std()) > 0.3
    assert determine_target("c") == "cpu" and determine_target("llvm") == "cpu"
    assert determine_target("auto") in ("cpu", "cuda") or determine_target("auto").startswith("cuda")


def test_carver_recommends_tiles_that_compile_and_run(device):
    from tilelang.carver.arch import CPU, CUDA, auto_infer_current_arch, driver
    from tilelang.carver.roller.rasterization import NoRasterization
    from tilelang.carver.template import MatmulTemplate
    arch = auto_infer_current_arch()
    assert driver.get_num_sms() >= 1 and arch.compute_max_core == driver.get_num_sms()
    cuda_model = CUDA("cuda -arch=sm_90a")
    assert cuda_model.sm_version == 90 and cuda_model.compute_max_core >= 1
    for target_arch in (cuda_model, CPU()):
        hints = MatmulTemplate(M=256, N=256, K=256, in_dtype=T.float16, out_dtype=T.float16,
                               accum_dtype=T.float32).with_arch(target_arch).recommend_hints(topk=4)
        assert 1 <= len(hints) <= 4
        for h in hints:
            bm, bn = h.block
            wm, wn = h.warp
            smem = (bm + bn) * h.rstep[0] * 2 * max(h.pipeline_stage, 1)
            assert bm % wm == 0 and bn % wn == 0 and smem <= target_arch.smem_cap
        ests = [h.estimated_ms for h in hints]
        assert ests == sorted(ests)
    # The best hint for this machine, used as TileLang's autotune example uses it, gives a correct kernel.
    h = MatmulTemplate(M=128, N=128, K=128, in_dtype=T.float16, out_dtype=T.float16,
                       accum_dtype=T.float32).with_arch(arch).recommend_hints(topk=1)[0]
    assert h.rasterization_plan is not NoRasterization  # an instance, as in TileLang
    kernel = matmul(128, 128, 128, h.block[0], h.block[1], h.rstep[0])
    a = torch.randn(128, 128, device=device).half()
    b = torch.randn(128, 128, device=device).half()
    torch.testing.assert_close(kernel(a, b), (a.float() @ b.float()).half(), rtol=1e-2, atol=1e-2)


def test_tvm_namespace_and_lower():
    import tvm as tvm_alias  # the alias tilelang installs when no real TVM is there
    assert tvm_alias is tvm
    from tvm import DataType, tirx  # noqa: F401
    assert isinstance(tvm.tirx.const(3, "int32"), tvm.tirx.PrimExpr)
    n = tvm.tirx.Var("n", "int32")
    assert isinstance(n, tvm.tirx.Var)

    @T.prim_func
    def inc(A: T.Tensor((32,), T.float32), B: T.Tensor((32,), T.float32)):
        with T.Kernel(1, threads=32):
            for i in T.Parallel(32):
                B[i] = A[i] + 1.0

    with tvm.target.Target("c"):
        artifact = tilelang.lower(inc)
    assert "inc" in artifact.kernel_source and artifact.kernel.target == "cpu"
    with tvm.target.Target("c"):  # TileLang's cpu GEMM test compiles so on a GPU machine too
        k = tilelang.compile(inc, out_idx=[-1])
    assert str(k.target).startswith("cpu")
    with tvm.transform.PassContext(config={"tirx.disable_vectorize": True}), tvm.target.Target("llvm"):
        artifact = tilelang.lower(inc)
    assert artifact.kernel.pass_configs.get("tir.disable_vectorize") is True
    with pytest.raises(NotImplementedError, match="tvm.IRModule"):
        tvm.IRModule({})
    with pytest.raises(NotImplementedError, match="post_order_visit"):
        from tvm.tirx.stmt_functor import post_order_visit
        post_order_visit(None, None)
    assert tvm.error.InternalError is tilelang.TileLangError


def test_target_given_as_a_tvm_config_dict():
    """TileLang accepts TVM's config form of a target (`@tilelang.jit(target={"kind": "cuda", "arch":
    "sm_75"})`, in its atomic tests): the same target as its string form; a bad kind is a ValueError."""
    from tilelang.jit.kernel import _normalize_target

    assert _normalize_target({"kind": "cuda", "arch": "sm_90"}) == "cuda -arch=sm_90"
    assert _normalize_target({"kind": "c"}) == "cpu"

    @tilelang.jit(target={"kind": "llvm"})
    def twice(A):
        N = T.const("N")
        A: T.Tensor((N,), T.float32)
        B = T.empty((N,), T.float32)
        with T.Kernel(1, threads=32):
            for i in T.Parallel(N):
                B[i] = A[i] * 2.0
        return B

    a = torch.randn(37)
    b = twice(a)
    torch.testing.assert_close(b, a * 2.0, rtol=0, atol=0)
    assert str(twice.compile(N=37).target).startswith("cpu")
    with pytest.raises(ValueError, match="unknown target kind"):
        _normalize_target({"kind": "metal"})


def test_pass_config_keys_of_tilelang(device):
    # TileLang's keys: ours take effect; TVM-only tuning keys are accepted and have no effect.
    @tilelang.jit(out_idx=[-1], pass_configs={
        tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True,
        tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True,
        tilelang.PassConfigKey.TL_DISABLE_OUT_OF_BOUND_WARNING: True,
        tilelang.PassConfigKey.TL_DISABLE_DATA_RACE_CHECK: True,
        "tl.Simplify": {"transitively_prove_inequalities": True},
    })
    def copy(N):
        @T.prim_func
        def main(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32)):
            with T.Kernel(1, threads=32):
                for i in T.Parallel(N):
                    B[i] = A[i]
        return main

    k = copy(64)
    assert k.pass_configs == {"tl.disable_warp_specialized": True, "tl.disable_tma_lower": True}
    x = torch.randn(64, device=device)
    torch.testing.assert_close(k(x), x)
    with pytest.warns(UserWarning, match="tl.device_compile_flags"):
        from tilelang.jit.pass_config import normalize_pass_configs
        assert normalize_pass_configs({tilelang.PassConfigKey.TL_DEVICE_COMPILE_FLAGS: ["-O3"]}) == {}
    with pytest.raises(ValueError):
        normalize_pass_configs({"tl.no_such_key": True})
    from tilelang.transform import PassConfigKey
    assert PassConfigKey is tilelang.PassConfigKey


def test_module_level_names_of_libraries():
    # Names TileKernels / TileOPs reach for at import time.
    from tilelang.autotuner.tuner import AutoTuneImpl, AutoTuner  # noqa: F401
    from tilelang.jit.adapter.tvm_ffi import TVMFFIKernelAdapter
    from tilelang.profiler.bench import do_bench  # noqa: F401
    from tilelang.utils.device import get_current_device  # noqa: F401
    from tilelang.utils.tensor import get_tensor_supply  # noqa: F401
    assert not isinstance(matmul.compile(64, 64, 64, 32, 32, 32), TVMFFIKernelAdapter)
    import dataclasses
    assert "jit_impl" in [f.name for f in dataclasses.fields(AutoTuneImpl)]


def test_mma_swizzle_layout(device):
    from tilelang.cuda.intrinsics import get_swizzle_layout, make_mma_swizzle_layout
    # get_swizzle_layout permutes the 16-byte vectors of each row (64 fp16 = 128 bytes).
    for row in range(16):
        cols = [get_swizzle_layout(row, c, 64, "float16") for c in range(64)]
        assert all(g == 0 and r == row for g, r, _ in cols)
        assert sorted(c for _, _, c in cols) == list(range(64))
        assert [c for _, _, c in cols][:8] == [((row % 8) ^ 0) * 8 + k for k in range(8)]

    @tilelang.jit(out_idx=[-1])
    def mm(M, N, K, bm=64, bn=64, bk=64):
        @T.prim_func
        def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
            with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
                A_s = T.alloc_shared((bm, bk), T.float16)
                B_s = T.alloc_shared((bk, bn), T.float16)
                C_l = T.alloc_fragment((bm, bn), T.float32)
                T.annotate_layout({A_s: make_mma_swizzle_layout(A_s), B_s: make_mma_swizzle_layout(B_s)})
                T.clear(C_l)
                for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                    T.copy(A[by * bm, k * bk], A_s)
                    T.copy(B[k * bk, bx * bn], B_s)
                    T.gemm(A_s, B_s, C_l)
                T.copy(C_l, C[by * bm, bx * bn])
        return main

    a = torch.randn(128, 128, device=device).half()
    b = torch.randn(128, 128, device=device).half()
    torch.testing.assert_close(mm(128, 128, 128)(a, b), a.float() @ b.float(), rtol=1e-3, atol=1e-3)
