"""End-to-end checks of the cuda target on TileLang-style kernels (cuda_kernels.py), against numpy in
float64 on random inputs. Every case runs twice where possible:
  - "emu": the lowered thread-level IR on the CPU emulator (no GPU; also reports shared-memory races
    and unsynchronized cp.async reads, which must be none);
  - "gpu": NVRTC + driver on the device (skipped without one).
GEMM and attention kernels also run as compiled for sm_90a, where T.gemm becomes wgmma:
  - "emu_sm90a": on the emulator (the wgmma contract of include/tl/cuda/wgmma.h: layouts, fragments,
    operand alignment);
  - "gpu_mma": on a Hopper GPU with TL_DISABLE_WGMMA, so the mma.sync path stays tested there too
    ("gpu" runs wgmma on Hopper).
"""
import ml_dtypes
import numpy as np
import pytest

import cuda_kernels as K
from cuda_util import EmuRunner, Runner, build, device_arch, has_gpu, requires_gpu, requires_nvrtc

RUNNERS = ["emu", pytest.param("gpu", marks=requires_gpu)]
# GPU tier; on a GPU that is not Hopper the mma.sync comparison run is skipped with the reason.
requires_hopper = [pytest.mark.gpu,
                   pytest.mark.skipif(has_gpu() and device_arch() != "sm_90a", reason="needs an sm_90 GPU")]
GEMM_RUNNERS = RUNNERS + ["emu_sm90a", pytest.param("gpu_mma", marks=requires_hopper)]


def run(kind, func, *args):
    if kind == "gpu":
        r = Runner(func)
    elif kind == "gpu_mma":
        r = Runner(func, configs={"tl.disable_wgmma": True})
    elif kind == "emu_sm90a":
        r = EmuRunner(func, arch="sm_90a")
    else:
        r = EmuRunner(func)
    outs = r(*args)
    if kind in ("emu", "emu_sm90a"):
        assert r.report["races"] == [], r.report["races"]
    return outs, r


def close(got, ref, rtol, atol, what=""):
    got = np.asarray(got, dtype=np.float64)
    bad = ~(np.abs(got - ref) <= atol + rtol * np.abs(ref))  # NaN is bad too
    assert not bad.any(), (f"{what}: {bad.sum()} of {bad.size} elements differ; max abs err "
                           f"{np.max(np.abs(got - ref)):.4g} at {np.unravel_index(np.argmax(np.abs(got - ref)), ref.shape)}")


def round_tf32(x):
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)


rng = np.random.default_rng(2024)


# ---- GEMM ----------------------------------------------------------------------------------------

GEMMS = {
    # name: (builder kwargs, M, N, K, dtype, rtol, atol)
    "f16_tn": (dict(trans_B=True), 256, 256, 128, np.float16),
    "f16_nn": (dict(), 256, 192, 96, np.float16),
    "f16_tt": (dict(trans_A=True, trans_B=True), 128, 256, 64, np.float16),
    "f16_nt_ragged": (dict(trans_B=True, block_M=64, block_N=64, block_K=32), 200, 136, 72, np.float16),
    "bf16": (dict(dtype="bfloat16", out_dtype="float32"), 128, 128, 64, ml_dtypes.bfloat16),
    "f32_3xtf32": (dict(dtype="float32", block_M=64, block_N=64, block_K=32), 128, 128, 64, np.float32),
    "int8": (dict(dtype="int8", accum_dtype="int32", out_dtype="int32", block_M=64, block_N=64, block_K=64), 128,
             128, 128, np.int8),
    "f16_acc16": (dict(accum_dtype="float16"), 128, 128, 64, np.float16),
    "f64_simt": (dict(dtype="float64", accum_dtype="float64", block_M=32, block_N=32, block_K=16, num_stages=2), 64,
                 96, 48, np.float64),
    "f16_swizzle": (dict(swizzle_panel=2, block_M=64, block_N=64), 256, 320, 64, np.float16),
    "f16_256threads": (dict(threads=256, trans_B=True), 256, 256, 64, np.float16),
    "f16_4stages": (dict(num_stages=4, block_K=32), 128, 128, 256, np.float16),
    # 2 stages: on sm_90a each iteration waits for its wgmma (fewer stages than the in-flight form needs)
    "f16_2stages": (dict(num_stages=2, block_M=128, block_N=256, threads=256), 256, 256, 192, np.float16),
}


@pytest.mark.parametrize("name", list(GEMMS))
@pytest.mark.parametrize("kind", GEMM_RUNNERS)
def test_gemm(kind, name):
    kw, M, N, Kd, dt = GEMMS[name]
    ta, tb = kw.get("trans_A", False), kw.get("trans_B", False)
    if dt == np.int8:
        A = rng.integers(-8, 8, (Kd, M) if ta else (M, Kd)).astype(dt)
        B = rng.integers(-8, 8, (N, Kd) if tb else (Kd, N)).astype(dt)
    else:
        A = rng.standard_normal((Kd, M) if ta else (M, Kd)).astype(dt)
        B = rng.standard_normal((N, Kd) if tb else (Kd, N)).astype(dt)
    out_dt = {"float32": np.float32, "int32": np.int32}.get(kw.get("out_dtype"), dt)
    C = np.zeros((M, N), out_dt)
    (_, _, Cg), _ = run(kind, K.matmul(M, N, Kd, **kw), A, B, C)
    a64, b64 = A.astype(np.float64), B.astype(np.float64)  # float32: 3xTF32, about fp32-accurate
    ref = (a64.T if ta else a64) @ (b64.T if tb else b64)
    if dt == np.int8:
        np.testing.assert_array_equal(Cg, ref.astype(np.int64))
        return
    tol = {np.float16: 1e-2, np.float32: 1e-5, np.float64: 1e-9}.get(dt, 2e-2)
    if kw.get("accum_dtype") == "float16":
        tol = 3e-2
    close(Cg, ref, tol, tol * np.sqrt(Kd), name)


@pytest.mark.parametrize("kind", RUNNERS)
def test_gemm_dynamic_m(kind):
    N, Kd = 128, 64
    f = K.matmul_dynamic_m(N, Kd)
    for m in (64, 100, 1):
        A = rng.standard_normal((m, Kd)).astype(np.float16)
        B = rng.standard_normal((Kd, N)).astype(np.float16)
        (_, _, C), _ = run(kind, f, A, B, np.zeros((m, N), np.float32))
        close(C, A.astype(np.float64) @ B.astype(np.float64), 1e-2, 0.1, f"m={m}")


# ---- row-wise kernels ------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", RUNNERS)
@pytest.mark.parametrize("shape", [(16, 256), (10, 512)])
def test_softmax(kind, shape):
    M, N = shape
    x = (rng.standard_normal((M, N)) * 3).astype(np.float32)
    (_, y), _ = run(kind, K.softmax(M, N), x, np.zeros_like(x))
    e = np.exp(x - x.max(1, keepdims=True))
    close(y, e / e.sum(1, keepdims=True), 1e-5, 1e-7, "softmax")


@pytest.mark.parametrize("kind", RUNNERS)
def test_rms_norm(kind):
    M, N = 16, 512
    x = rng.standard_normal((M, N)).astype(np.float32)
    w = rng.standard_normal(N).astype(np.float32)
    (_, _, y), _ = run(kind, K.rms_norm(M, N), x, w, np.zeros_like(x))
    x64 = x.astype(np.float64)
    close(y, x64 / np.sqrt((x64 ** 2).mean(1, keepdims=True) + 1e-6) * w, 1e-5, 1e-6, "rms_norm")


@pytest.mark.parametrize("kind", RUNNERS)
def test_layer_norm(kind):
    M, N = 16, 256
    x = rng.standard_normal((M, N)).astype(np.float16)
    g = rng.standard_normal(N).astype(np.float16)
    b = rng.standard_normal(N).astype(np.float16)
    (_, _, _, y), _ = run(kind, K.layer_norm(M, N), x, g, b, np.zeros_like(x))
    x64 = x.astype(np.float64)
    mu = x64.mean(1, keepdims=True)
    var = ((x64 - mu) ** 2).mean(1, keepdims=True)
    close(y, (x64 - mu) / np.sqrt(var + 1e-5) * g + b, 1e-2, 1e-2, "layer_norm")


# ---- element-wise, shared-memory reductions, scans, atomics ---------------------------------------

@pytest.mark.parametrize("kind", RUNNERS)
def test_elementwise_add_ragged(kind):
    M, N = 100, 300
    a = rng.standard_normal((M, N)).astype(np.float32)
    b = rng.standard_normal((M, N)).astype(np.float32)
    c = np.full((M, N), 7.0, np.float32)
    (_, _, out), _ = run(kind, K.elementwise_add(M, N), a, b, c)
    np.testing.assert_array_equal(out, a + b)


@pytest.mark.parametrize("kind", RUNNERS)
def test_elementwise_tiles(kind):
    M, N = 64, 256
    a = rng.standard_normal((M, N)).astype(np.float16)
    b = rng.standard_normal((M, N)).astype(np.float16)
    (_, _, out), _ = run(kind, K.elementwise_tiles(M, N), a, b, np.zeros_like(a))
    ref = np.maximum(a.astype(np.float32), 0).astype(np.float16) * np.float16(2) + b
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("kind", RUNNERS)
def test_shared_reductions_and_cumsum(kind):
    M, N = 32, 64
    a = rng.standard_normal((M, N)).astype(np.float32)
    (_, s, mx, c), _ = run(kind, K.column_sum_shared(M, N), a, np.zeros(N, np.float32), np.zeros(N, np.float32),
                           np.zeros((M, N), np.float32))
    close(s, a.astype(np.float64).sum(0), 1e-5, 1e-5, "reduce_sum")
    np.testing.assert_array_equal(mx, np.maximum(a.max(0), 0.5))
    close(c, np.cumsum(a.astype(np.float64), axis=0), 1e-5, 1e-5, "cumsum")


@pytest.mark.parametrize("kind", RUNNERS)
def test_atomic_add_across_blocks(kind):
    M, N = 96, 128
    a = rng.standard_normal((M, N)).astype(np.float32)
    out = np.full(N, 1.5, np.float32)
    (_, o), _ = run(kind, K.atomic_row_sums(M, N), a, out)
    close(o, 1.5 + a.astype(np.float64).sum(0), 1e-5, 1e-4, "atomic_add")


# ---- flash attention ---------------------------------------------------------------------------------

def attention_ref(q, k, v, causal):
    q64, k64, v64 = (x.astype(np.float64).transpose(0, 2, 1, 3) for x in (q, k, v))  # b h s d
    s = q64 @ k64.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return (p @ v64).transpose(0, 2, 1, 3)


FLASH_TILES = {
    # block_M, block_N, threads: one warpgroup; two warpgroups; one warpgroup with two row tiles
    "64x64": (64, 64, 128),
    "128x64_t256": (128, 64, 256),
    "128x128_t128": (128, 128, 128),
}


def _flash_cases():
    """Larger tiles are checked at dim 128, on the sm_90a emulator and the GPU (not generated elsewhere)."""
    out = []
    for runner in GEMM_RUNNERS:
        name, marks = (runner.values[0], runner.marks) if hasattr(runner, "marks") else (runner, ())
        for causal in (True, False):
            for dim in (64, 128):
                for tile in FLASH_TILES:
                    if tile == "64x64" or (dim == 128 and name != "emu"):
                        out.append(pytest.param(name, causal, dim, tile, marks=marks,
                                                id=f"{name}-{causal}-{dim}-{tile}"))
    return out


@pytest.mark.parametrize("kind,causal,dim,tile", _flash_cases())
def test_flash_attention(kind, causal, dim, tile):
    bm, bn, threads = FLASH_TILES[tile]
    B, H, S = 1, 2, 384  # a multiple of every block_N (this kernel does not mask a partial K/V block)
    shape = (B, S, H, dim)
    q, k, v = (rng.standard_normal(shape).astype(np.float16) for _ in range(3))
    f = K.flashattn(B, H, S, dim, causal, block_M=bm, block_N=bn, threads=threads)
    (_, _, _, o), _ = run(kind, f, q, k, v, np.zeros(shape, np.float16))
    close(o, attention_ref(q, k, v, causal), 2e-2, 2e-2, "flash attention")


# ---- instruction choice on sm_90a -------------------------------------------------------------------

@requires_nvrtc
def test_sm90a_gemm_instruction_choice():
    gemm = K.matmul(256, 256, 128, 128, 256, 64, threads=256)
    # Default: warp-specialized, a TMA producer warpgroup (384 threads) filling mbarrier-guarded
    # stages; the GEMM stays in flight for one iteration and releases the stage read before. Only TMA
    # writes its tiles: no proxy fence (the trailing false).
    ws = build(gemm, "sm_90a")["source"]
    assert "tl::wgmma_gemm_ss<128, 256, 64, 2, 1, false, false, 128, 128, tl::half_t, 1, tl::half_t, false>" in ws
    assert "tl::wgmma_drain<128>" in ws and "tl::tma_load(tl_tmap_0" in ws and "tl::mbarrier_wait(" in ws
    assert "__launch_bounds__(384, 1)" in ws and "cp_async" not in ws and "tl::gemm_ss<" not in ws
    assert "param tmap tl_tmap_1 tmap:1" in ws
    # Without warp specialization (or TMA): cp.async stages; the refill targets the stage read two
    # iterations ago.
    for off_ws in ({"tl.disable_warp_specialized": True}, {"tl.disable_tma_lower": True}):
        src = build(gemm, "sm_90a", configs=off_ws)["source"]
        assert "tl::wgmma_gemm_ss<128, 256, 64, 2, 1, false, false, 128, 128, tl::half_t, 1>" in src
        assert "tl::wgmma_drain<128>" in src and "tl::cp_async_wait<0>();" in src
        assert "tma_load" not in src and "__launch_bounds__(256)" in src
    sync = build(gemm, "sm_90a", configs={"tl.disable_wgmma_async": True, "tl.disable_warp_specialized": True})["source"]
    assert "tl::wgmma_gemm_ss<128, 256, 64, 2, 1, false, false, 128, 128, tl::half_t>" in sync
    assert "wgmma_drain" not in sync and "tl::cp_async_wait<1>();" in sync
    off = build(gemm, "sm_90a", configs={"tl.disable_wgmma": True})["source"]
    assert "tl::gemm_ss<" in off and "wgmma" not in off.split("*/")[-1].split("tl-launch")[0]
    assert "tl::gemm_ss<" in build(gemm, "sm_80")["source"]
    # Both flash-attention GEMMs use wgmma (register A for P V), or neither does.
    fa = build(K.flashattn(1, 2, 256, 128, True, block_M=128, block_N=64, threads=256), "sm_90a")["source"]
    assert "tl::wgmma_gemm_ss<" in fa and "tl::wgmma_gemm_rs<" in fa
    # Types without a wgmma form here keep mma.sync (int8) or the SIMT loop (float64).
    assert "tl::gemm_ss<" in build(K.matmul(128, 128, 128, 64, 64, 64, dtype="int8", accum_dtype="int32",
                                            out_dtype="int32"), "sm_90a")["source"]
    f64 = build(K.matmul(64, 64, 32, 32, 32, 16, dtype="float64", accum_dtype="float64"), "sm_90a")["source"]
    assert "gemm_ss" not in f64


@requires_nvrtc
def test_causal_mask_is_unswitched():
    # The causal mask runs only on the blocks the diagonal cuts: elsewhere the nest is the plain fill.
    src = build(K.flashattn(1, 2, 256, 64, True), "sm_90a")["source"]
    assert "((((bx * 64) - (k * 64)) + (-63)) >= 0)" in src


# ---- device_assert -------------------------------------------------------------------------------------

@requires_gpu
def test_device_assert_raises():
    from tilelang import _core
    r = Runner(K.assert_positive(64))
    a = np.arange(64, dtype=np.float32)
    r(a, 100.0)  # passes
    with pytest.raises(_core.DeviceRuntimeError, match="A must stay below the limit"):
        r(a, 10.0)
    r(a, 100.0)  # the context survives


def test_device_assert_in_emulator():
    r = EmuRunner(K.assert_positive(64))
    r(np.arange(64, dtype=np.float32), 10.0)
    assert "A must stay below the limit" in r.report["device_assert"]
    r(np.arange(64, dtype=np.float32), 100.0)
    assert r.report["device_assert"] == ""


# ---- the checks themselves can fail ---------------------------------------------------------------

def test_emulator_reports_races_without_thread_sync():
    """With insert_thread_sync off, the emulator must see the races the barriers prevent."""
    M, N, Kd = 64, 64, 64
    A = rng.standard_normal((M, Kd)).astype(np.float16)
    B = rng.standard_normal((Kd, N)).astype(np.float16)
    r = EmuRunner(K.matmul(M, N, Kd, 64, 64, 32, num_stages=1),
                  configs={"tl.disable_thread_storage_sync": True})
    r(A, B, np.zeros((M, N), np.float16))
    assert r.report["races"], "expected races without __syncthreads"
    assert any("without a barrier" in x for x in r.report["races"])


def test_layout_conflict_is_a_layout_error():
    import tilelang.language as T
    from tilelang import _core

    @T.prim_func
    def bad(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 64), "float16")
            B_s = T.alloc_shared((64, 64), "float16")
            acc = T.alloc_fragment((64, 64), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.clear(acc)
            T.gemm(A_s, B_s, acc)
            for i, j in T.Parallel(64, 64):
                acc[i, j] = acc[j, i]  # a transpose needs data from other threads
            T.copy(acc, C)

    with pytest.raises(_core.LayoutError, match="acc.*shared"):
        cuda_lower(bad)


def test_shared_memory_over_the_limit_is_a_resource_error():
    from tilelang import _core
    f = K.matmul(512, 512, 512, 256, 256, 64, num_stages=4)
    with pytest.raises(_core.ResourceError, match="A_shared.*bytes"):
        cuda_lower(f)


def cuda_lower(f, arch="sm_80"):
    from tilelang import _core
    return _core.cuda.lower_func(f.ir, arch)


@pytest.mark.parametrize("kind", RUNNERS)
def test_parallel_tails_are_guarded(kind):
    M, N = 77, 200
    a = rng.standard_normal((M, N)).astype(np.float32)
    b = rng.standard_normal((M, N)).astype(np.float32)
    (_, _, c), _ = run(kind, K.elementwise_unguarded(M, N), a, b, np.zeros((M, N), np.float32))
    np.testing.assert_array_equal(c, a * 2 + b)
