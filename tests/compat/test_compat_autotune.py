"""Item 4 of the compatibility surface: autotuning as TileLang users write it.

The AutoTuner class (from_kernel / set_compile_args / set_profile_args / run), @tilelang.autotune
stacked on @tilelang.jit (lazy and eager), a call passing the tuned parameters compiling exactly
that configuration, and do_bench(..., backend=...)."""
import itertools
import sys

import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang.autotuner import AutoTuner, set_autotune_inputs
from tilelang.profiler import do_bench


def ref_scale(x):
    return x * 2.0


def scale_kernel(N, block=64, threads=64, factor=2.0):
    @T.prim_func
    def main(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32)):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] * factor
    return main


def test_autotuner_class_from_kernel(device):
    configs = [{"block": b, "threads": t} for b, t in itertools.product([32, 64], [32, 64])]
    configs.append({"block": 64, "threads": 64, "factor": 3.0})  # compiles, fails the check

    def kernel(block=None, threads=None, factor=2.0):
        return scale_kernel(256, block, threads, factor)

    result = (AutoTuner.from_kernel(kernel=kernel, configs=configs)
              .set_compile_args(out_idx=[-1], target="auto")
              .set_profile_args(supply_type=tilelang.TensorSupplyType.Auto, ref_prog=ref_scale, skip_check=False,
                                backend="event")
              .run(warmup=1, rep=5))
    assert result.config in configs[:4]
    assert result.latency > 0 and result.ref_latency > 0
    assert result.kernel.config == result.config
    assert [r.status for r in result.results].count("check failed") == 1
    assert "main" in result.libcode
    x = torch.randn(256, device=device)
    torch.testing.assert_close(result.kernel(x), 2 * x)


@tilelang.autotune(configs=[{"block_M": 32, "block_N": 32}, {"block_M": 64, "block_N": 32}], warmup=1, rep=5,
                   verbose=False)
@tilelang.jit(out_idx=[-1])
def gemm(M, N, K, block_M=64, block_N=64, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), T.float16)
            B_s = T.alloc_shared((block_K, block_N), T.float16)
            C_l = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])
    return main


def test_autotune_over_lazy_jit_and_explicit_config(device, monkeypatch):
    kernel = gemm(64, 64, 64)
    assert kernel.config in ({"block_M": 32, "block_N": 32}, {"block_M": 64, "block_N": 32})
    a = torch.randn(64, 64, device=device).half()
    b = torch.randn(64, 64, device=device).half()
    torch.testing.assert_close(kernel(a, b), (a.float() @ b.float()).half(), rtol=1e-2, atol=1e-2)
    assert gemm.compile(64, 64, 64) is kernel  # tuned once per argument set

    # The tuned parameters given by the caller: exactly that configuration, nothing timed.
    jit_module = sys.modules["tilelang.jit"]
    compiled = []
    real = jit_module.compile
    monkeypatch.setattr(jit_module, "compile", lambda *a, **k: compiled.append(1) or real(*a, **k))
    k2 = gemm(64, 64, 64, block_M=16, block_N=16)
    assert len(compiled) == 1 and k2.config == {"block_M": 16, "block_N": 16}
    assert "latency" not in vars(k2) or k2.latency is None
    torch.testing.assert_close(k2(a, b), (a.float() @ b.float()).half(), rtol=1e-2, atol=1e-2)
    k3 = gemm(64, 64, 64, 16, 16)  # positionally too
    assert k3.config == {"block_M": 16, "block_N": 16}

    # Some of the tuned parameters given (as TileLang): the others take the builder's defaults,
    # one compilation, nothing timed.
    compiled.clear()
    k4 = gemm(64, 64, 64, block_M=16)
    assert len(compiled) == 1 and k4.config == {"block_M": 16, "block_N": 64}
    torch.testing.assert_close(k4(a, b), (a.float() @ b.float()).half(), rtol=1e-2, atol=1e-2)


def test_autotune_tunes_what_has_no_default(device):
    """A tuned parameter left out that has no default (TileLang would fail) is tuned."""
    @tilelang.autotune(configs=[{"block": 32, "threads": 32}, {"block": 64, "threads": 64}], warmup=1, rep=5,
                       verbose=False)
    @tilelang.jit(out_idx=[-1])
    def scale(N, block, threads):
        return scale_kernel(N, block, threads)

    result = scale.get_tuner_result(256, threads=64)
    assert result.config["threads"] == 64 and result.config["block"] in (32, 64)
    assert [r.config for r in result.results] == [{"block": 32}, {"block": 64}]
    x = torch.randn(256, device=device)
    torch.testing.assert_close(result.kernel(x), 2 * x)


@tilelang.autotune(configs=[{"BLOCK": 32, "threads": 32}, {"BLOCK": 64, "threads": 64}], warmup=1, rep=5,
                   ref_prog=lambda x, y: x + y, verbose=False)
@tilelang.jit
def eager_add(A, B, BLOCK: int = 32, threads: int = 32):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    B: T.Tensor((N,), T.float32)
    C = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=threads) as bx:
        for i in T.Parallel(BLOCK):
            C[bx * BLOCK + i] = A[bx * BLOCK + i] + B[bx * BLOCK + i]
    return C


def test_autotune_over_eager_jit(device):
    x = torch.randn(512, device=device)
    y = torch.randn(512, device=device)
    torch.testing.assert_close(eager_add(x, y), x + y)  # tunes, then runs the best kernel on x, y
    best = eager_add.compile(x, y)
    assert best.config in ({"BLOCK": 32, "threads": 32}, {"BLOCK": 64, "threads": 64})
    torch.testing.assert_close(eager_add(x, y, BLOCK=64, threads=64), x + y)  # an explicit config
    assert eager_add.compile(x, y, BLOCK=64, threads=64).config == {"BLOCK": 64, "threads": 64}


def test_set_autotune_inputs(device):
    x = torch.randn(128, device=device)

    def kernel(block=32):
        return scale_kernel(128, block, 32)

    with set_autotune_inputs(x):
        tuner = (AutoTuner.from_kernel(kernel, [{"block": 32}, {"block": 64}]).set_compile_args(out_idx=[1])
                 .set_profile_args(ref_prog=ref_scale))
    result = tuner.run(warmup=1, rep=3)
    assert result.kernel.config in ({"block": 32}, {"block": 64})


def test_do_bench_keyword_arguments(device):
    x = torch.randn(1000, device=device)  # on cuda, the timed function must launch CUDA work (cupti)
    for backend in ("event", "cupti", "cudagraph"):
        assert do_bench(lambda: x * 2, warmup=2, rep=5, backend=backend, return_mode="mean") > 0
    qs = do_bench(lambda: x * 2, warmup=2, rep=5, quantiles=[0.5, 0.2, 0.8])
    assert len(qs) == 3 and all(q > 0 for q in qs)
    with pytest.raises(ValueError, match="return_mode"):
        do_bench(lambda: None, return_mode="best")
