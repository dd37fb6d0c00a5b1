"""Warp-specialized Hopper kernels (src/target/cuda/warp_specialize.h): on sm_90a a T.Pipelined loop's
global->shared copies move to a TMA producer warpgroup that fills a ring of mbarrier-guarded stages,
and the kernel's threads consume them with wgmma. Checked on the CPU emulator (CI: values against
numpy in float64 on random inputs, and the emulator's ordering checks: reads after the mbarrier
wait, overwrites after the consumers' release, no wait that never completes) and on a Hopper GPU.

The negative tests edit the lowered IR (printed, changed, parsed back) to break the protocol in one
place each, and expect the emulator to report exactly that: so the checks can fail."""
import re

import ml_dtypes
import numpy as np
import pytest

import cuda_kernels as K
from cuda_util import EmuRunner, Runner, build, device_arch, has_gpu, requires_nvrtc
from tilelang import _core

rng = np.random.default_rng(16)
requires_hopper = [pytest.mark.gpu,
                   pytest.mark.skipif(has_gpu() and device_arch() != "sm_90a", reason="needs an sm_90 GPU")]
KINDS = ["emu", pytest.param("gpu", marks=requires_hopper)]

GEMMS = {
    # name: (builder kwargs, M, N, K, dtype)
    "nn_128x128_s3": (dict(block_M=128, block_N=128, block_K=64, threads=256, num_stages=3), 256, 256, 256,
                      np.float16),
    "nn_128x256_s4": (dict(block_M=128, block_N=256, block_K=64, threads=256, num_stages=4), 128, 512, 384,
                      np.float16),
    "tn_s2": (dict(trans_B=True, block_M=128, block_N=128, block_K=64, threads=256, num_stages=2), 256, 128, 192,
              np.float16),
    "tt_one_warpgroup": (dict(trans_A=True, trans_B=True, block_M=64, block_N=128, block_K=64, threads=128,
                              num_stages=3), 128, 256, 128, np.float16),
    # TMA fills what lies outside the tensors with zeros: no tail code at all.
    "ragged": (dict(block_M=128, block_N=128, block_K=64, threads=256, num_stages=3), 200, 136, 328, np.float16),
    "bf16_k32": (dict(dtype="bfloat16", out_dtype="float32", block_M=128, block_N=128, block_K=32, threads=256,
                      num_stages=4), 128, 256, 160, ml_dtypes.bfloat16),
    "swizzled_blocks": (dict(block_M=64, block_N=128, block_K=64, threads=128, num_stages=3, swizzle_panel=2), 256,
                        384, 128, np.float16),
}


# float8: both operands K-major (A [M, K], B [N, K]), float accumulators, 128-byte rows.
GEMMS["fp8_e4m3"] = (dict(dtype="float8_e4m3", accum_dtype="float32", out_dtype="float32", trans_B=True, block_M=128,
                          block_N=128, block_K=128, threads=256, num_stages=3), 256, 128, 384, ml_dtypes.float8_e4m3fn)
GEMMS["fp8_e5m2_bf16_out"] = (dict(dtype="float8_e5m2", accum_dtype="float32", out_dtype="bfloat16", trans_B=True,
                                   block_M=64, block_N=128, block_K=64, threads=128, num_stages=4), 128, 256, 256,
                              ml_dtypes.float8_e5m2)


def gemm_case(name):
    kw, M, N, Kd, dt = GEMMS[name]
    ta, tb = kw.get("trans_A", False), kw.get("trans_B", False)
    A = rng.standard_normal((Kd, M) if ta else (M, Kd)).astype(dt)
    B = rng.standard_normal((N, Kd) if tb else (Kd, N)).astype(dt)
    out_dt = {"float32": np.float32, "bfloat16": ml_dtypes.bfloat16}.get(kw.get("out_dtype"), dt)
    C = np.full((M, N), np.nan, out_dt)
    a64, b64 = A.astype(np.float64), B.astype(np.float64)
    ref = (a64.T if ta else a64) @ (b64.T if tb else b64)
    return K.matmul(M, N, Kd, **kw), (A, B, C), ref


def check(got, ref, tol):
    got = np.asarray(got, dtype=np.float64)
    bad = ~(np.abs(got - ref) <= tol * (1 + np.abs(ref)))  # NaN (an unwritten element) is bad too
    assert not bad.any(), f"{bad.sum()} of {bad.size} wrong; max err {np.nanmax(np.abs(got - ref)):.4g}"


def run(kind, func, args, configs=None):
    if kind == "emu":
        r = EmuRunner(func, arch="sm_90a", configs=configs)
        outs = r(*args)
        assert r.report["races"] == [], r.report["races"]
        return outs
    return Runner(func, configs=configs)(*args)


@requires_nvrtc
@pytest.mark.parametrize("name", list(GEMMS))
@pytest.mark.parametrize("kind", KINDS)
def test_gemm(kind, name):
    f, args, ref = gemm_case(name)
    src = build(f, "sm_90a")["source"]
    assert "tl::tma_load(" in src and "cp_async" not in src, "expected the warp-specialized form"
    if "fp8" in name:
        assert "QGMMA" not in src and "#include \"tl/cuda/wgmma_ops_f8.h\"" in src
    (_, _, C) = run(kind, f, args)
    Kd = GEMMS[name][3]
    check(C, ref, 2e-2 * np.sqrt(Kd / 64))


@pytest.mark.parametrize("kind", KINDS)
def test_gemm_dynamic_m(kind):
    """The tensor maps' dims come from the call (here a dynamic number of rows)."""
    f = K.matmul_dynamic_m(128, 128, block_M=64, block_N=128, block_K=64, num_stages=3)
    for m in (64, 100):
        A = rng.standard_normal((m, 128)).astype(np.float16)
        B = rng.standard_normal((128, 128)).astype(np.float16)
        C = np.full((m, 128), np.nan, np.float32)
        (_, _, Cg) = run(kind, f, (A, B, C))
        check(Cg, A.astype(np.float64) @ B.astype(np.float64), 1e-3)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_flash_attention(kind, causal):
    """K and V are two producer groups (Q K^T starts before V has landed)."""
    B, H, S, D = 1, 2, 256, 64
    f = K.flashattn(B, H, S, D, causal, block_M=128, block_N=64, num_stages=2, threads=256)
    # One CTA per tile (the persistent default has its own tests: test_persistent_flash.py).
    src = build(f, "sm_90a", ONE_CTA_PER_TILE)["source"]
    # K, V and, where every block runs the same iterations (not causal), Q before the loop
    assert src.count("tl::mbarrier_arrive_expect_tx(") == (2 if causal else 3)
    # No warpgroup ping-pong by default (slower than lockstep on an H100: docs/PERFORMANCE.md).
    assert "named_barrier_sync((2" not in src and "named_barrier_arrive" not in src
    check_flash(kind, f, B, H, S, D, causal, ONE_CTA_PER_TILE)


@pytest.mark.parametrize("disable", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_flash_attention_q_by_tma(kind, disable):
    """The copy of Q before the loop is the producer's: a TMA load on an mbarrier of its own that the
    consumers wait for before the loop, and the Q K^T wgmma needs no proxy fence. With
    TL_DISABLE_PROLOGUE_TMA the consumers copy Q themselves (thread stores, a block barrier)."""
    B, H, S, D = 1, 2, 256, 64
    f = K.flashattn(B, H, S, D, False, block_M=128, block_N=64, num_stages=2, threads=256)
    configs = dict(ONE_CTA_PER_TILE, **({"tl.disable_prologue_tma": True} if disable else {}))
    src = build(f, "sm_90a", configs)["source"]
    q_tma = [ln for ln in src.splitlines() if "tl::tma_load(" in ln and "(&Q_shared[" in ln]
    q_threads = [ln for ln in src.splitlines() if "copy_vec" in ln and "(&Q_shared[" in ln]
    if disable:
        assert not q_tma and q_threads
        assert src.count("tl::mbarrier_arrive_expect_tx(") == 2
    else:
        assert q_tma and not q_threads
        assert src.count("tl::mbarrier_arrive_expect_tx(") == 3
        # the consumers wait for Q (phase 0 of the barrier after the 2 groups x 2 stages x 2 kinds)
        assert "tl::mbarrier_wait((&tl_mbar[8]), 0);" in src
        assert src.index("tl::mbarrier_wait((&tl_mbar[8]), 0);") < src.index("wgmma_gemm_ss")
    check_flash(kind, f, B, H, S, D, False, configs)


@pytest.mark.parametrize("kind", KINDS)
def test_flash_attention_pingpong(kind):
    """TL_ENABLE_WARPGROUP_PINGPONG: the two consumer warpgroups take turns around the two GEMMs."""
    B, H, S, D = 1, 2, 256, 64
    f = K.flashattn(B, H, S, D, True, block_M=128, block_N=64, num_stages=2, threads=256)
    configs = {"tl.enable_warpgroup_pingpong": True}
    src = build(f, "sm_90a", configs)["source"]
    assert src.count("tl::named_barrier_sync((2 + (tx >> 7)), 256);") == 2
    check_flash(kind, f, B, H, S, D, True, configs)


@pytest.mark.parametrize("shape", [(128, 64, 2, False), (128, 128, 2, False), (128, 64, 3, False)])
@pytest.mark.parametrize("kind", KINDS)
def test_flash_attention_overlap(kind, shape):
    """FA3's intra-warpgroup overlap (default): iteration k issues Q K_k^T, rescales O, issues
    P_{k-1} V_{k-1}, waits for the first GEMM (wgmma.wait_group 1), runs the softmax of S_k while
    the second GEMM runs, and waits for it (wait_group 0) before casting P_k; the first block's
    softmax runs before the loop, the last P V after it. TL_DISABLE_WGMMA_OVERLAP: each GEMM waited
    for where it is issued."""
    block_M, block_N, stages, causal = shape
    B, H, S, D = 1, 2, 384, 64
    f = K.flashattn(B, H, S, D, causal, block_M=block_M, block_N=block_N, num_stages=stages, threads=256)
    src = build(f, "sm_90a")["source"]
    loop = src[src.index("for (int k = 1;"):]
    issue_qk = loop.index("tl::wgmma_gemm_ss<")
    issue_pv = loop.index("tl::wgmma_gemm_rs<")
    wait1 = loop.index("tl::wgmma_wait_regs<1, ")
    wait0 = loop.index("tl::wgmma_wait_regs<0, ")
    assert issue_qk < issue_pv < wait1 < loop.index("tl::allreduce<tl::MaxOp") < wait0, loop[:3000]
    issued = re.compile(r", -1(, tl::half_t, false)?>\(")  # kPending = -1 (with or without the fence flag)
    assert issued.search(loop[issue_qk:issue_pv]) and issued.search(loop[issue_pv:wait1])
    assert src.count("tl::wgmma_gemm_ss<") == 2 and src.count("tl::wgmma_gemm_rs<") == 2  # + before / after
    check_flash(kind, f, B, H, S, D, causal)
    off = {"tl.disable_wgmma_overlap": True}
    plain = build(f, "sm_90a", off)["source"]
    assert "wgmma_wait_regs" not in plain and not issued.search(plain)
    check_flash(kind, f, B, H, S, D, causal, off)


@pytest.mark.parametrize("kind", KINDS)
def test_causal_flash_attention_is_overlapped(kind):
    """A loop whose trip count depends on the block (causal attention: one iteration for the first
    block) runs overlapped too (8-13% faster than the plain schedule on an H100, 2026-11-27);
    TL_DISABLE_WGMMA_OVERLAP gives the plain one. Values are the reference's either way."""
    B, H, S, D = 1, 2, 384, 64
    f = K.flashattn(B, H, S, D, True, block_M=128, block_N=64, num_stages=2, threads=256)
    src = build(f, "sm_90a")["source"]
    assert "tl::tma_load(" in src and "tl::wgmma_wait_regs<1, " in src and "tl::wgmma_wait_regs<0, " in src
    check_flash(kind, f, B, H, S, D, True)
    off = {"tl.disable_wgmma_overlap": True}
    plain = build(f, "sm_90a", off)["source"]
    assert "wgmma_wait_regs" not in plain and not re.search(r", -1(, tl::half_t, false)?>\(", plain)
    check_flash(kind, f, B, H, S, D, True, off)


@pytest.mark.parametrize("elide", [True, False])
@pytest.mark.parametrize("kind", KINDS)
def test_causal_loop_skips_the_proxy_fence(kind, elide):
    """Causal attention copies Q with the consumers' thread stores: the peeled first iteration's
    Q K^T wgmma fences the async proxy, the steady loop's does not (nothing writes Q again); the
    emulator accepts a fence-free wgmma only on bytes TMA wrote or a fenced wgmma read since their
    last store. TL_DISABLE_LOOP_PROXY_FENCE_ELISION keeps the fence in every iteration."""
    B, H, S, D = 1, 2, 384, 64
    f = K.flashattn(B, H, S, D, True, block_M=128, block_N=64, num_stages=2, threads=256)
    configs = dict(ONE_CTA_PER_TILE, **({} if elide else {"tl.disable_loop_proxy_fence_elision": True}))
    src = build(f, "sm_90a", configs)["source"]
    ss = [ln.strip() for ln in src.splitlines() if "tl::wgmma_gemm_ss<" in ln]
    assert len(ss) == 2 and ", -1" not in ss[0] and ", -1" in ss[1], ss
    assert "tl::half_t>(" in ss[0]  # the peel: fenced (kProxyFence defaults to true)
    assert (", tl::half_t, false>((&Q_shared[0])" in ss[1]) == elide, ss
    check_flash(kind, f, B, H, S, D, True, configs)


@pytest.mark.parametrize("fold", [True, False])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_accumulator_init_folds_into_the_wgmma(kind, causal, fold):
    """The clear of S (T.clear) or its causal mask initialization (select(mask, 0, -inf)) just before
    S = Q K^T becomes the GEMM's own zero start (wgmma scale-d = 0: no register clearing), the mask
    applied to its result after it (select(mask, S, -inf)). TL_DISABLE_WGMMA_ZERO_INIT: as written."""
    B, H, S, D = 1, 2, 384, 64
    f = K.flashattn(B, H, S, D, causal, block_M=128, block_N=64, num_stages=2, threads=256)
    configs = {} if fold else {"tl.disable_wgmma_zero_init": True}
    src = build(f, "sm_90a", configs)["source"]
    ss = [ln.strip() for ln in src.splitlines() if "tl::wgmma_gemm_ss<" in ln]
    assert ss and all(ln.endswith("(&acc_s[0]), 0);") == fold for ln in ss), ss
    clears = re.findall(r"acc_s\[\w+\] = \(0\.0f\);", src)
    assert bool(clears) != fold, clears
    if causal:
        # the mask: before the GEMM as the initial value, or after it on the GEMM's result
        assert ("? acc_s[" in src) == fold and ("? (0.0f) : (-tl::numeric_limits<float>::infinity())" in src) != fold
    check_flash(kind, f, B, H, S, D, causal, configs)


@pytest.mark.parametrize("configs", [{}, {"tl.disable_deferred_row_sum": True},
                                     {"tl.disable_wgmma_overlap": True},  # plain loop, persistent
                                     {"tl.disable_wgmma_overlap": True, "tl.disable_deferred_row_sum": True}])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_row_sum_is_combined_once_after_the_loop(kind, causal, configs):
    """FA3's running row sum: the loop keeps each thread's partial sums of P's rows (no quad shuffles
    for T.reduce_sum) and logsum = logsum * scale + partial per thread; one all-reduce of logsum
    after the loop. The row maximum is still combined every iteration. TL_DISABLE_DEFERRED_ROW_SUM:
    the shuffles in every iteration."""
    B, H, S, D = 1, 2, 384, 64
    f = K.flashattn(B, H, S, D, causal, block_M=128, block_N=64, num_stages=2, threads=256)
    defer = "tl.disable_deferred_row_sum" not in configs
    src = build(f, "sm_90a", configs)["source"]
    loop = src[src.index("for (int k = 1;") if "for (int k = 1;" in src else src.index("for (int k = 0;"):]
    loop = loop[:loop.index("tl::store_exchange") if "tl::store_exchange" in loop else len(loop)]
    sums = re.findall(r"(\w+)\[\d\] = tl::allreduce<tl::SumOp, 4, 1, 256>", src)
    maxes = re.findall(r"tl::allreduce<tl::MaxOp, 4, 1, 256>", loop)
    assert maxes, loop[:2000]
    if defer:
        assert sums == ["logsum", "logsum"], sums
        after = src[src.index("logsum[0] = tl::allreduce<tl::SumOp"):]
        assert "acc_o[" in after and "/ logsum[0]" in after  # the sum is complete before O / l
    else:
        assert sums and "logsum" not in sums, sums
    check_flash(kind, f, B, H, S, D, causal, configs)


def test_fence_free_wgmma_after_a_new_store_is_reported():
    """The peel's fence covers the stores before it only: a store to Q between the peel and the
    loop (made here by editing the lowered text) must make the loop's fence-free wgmma a race."""
    text = lowered_flash_text({"tl.disable_persistent": True, "tl.disable_prologue_tma": True}, causal=True)
    assert emulate_flash_text(text)["races"] == []
    q = re.search(r"alloc (b\d+): shared float16\[128, 64\]", text).group(1)  # Q_shared
    loop = re.search(r"\n( *)(for (v\d+): int32 in serial\(1, )", text)
    assert loop, text
    ind, tid = loop.group(1), re.search(r"thread_vars=\[(v\d+): int32\]", text).group(1)
    store = f"{ind}{q}[{tid}] = {q}[{tid}]\n{ind}evaluate tl.sync_threads()\n"
    bad = text[:loop.start() + 1] + store + text[loop.start() + 1:]
    races = emulate_flash_text(bad)["races"]
    assert any("without fence.proxy.async" in r for r in races), races


def test_reading_an_in_flight_accumulator_is_reported():
    """Without the wait for Q K^T, the softmax reads S while its wgmma may still write it."""
    text = lowered_flash_text({"tl.disable_persistent": True})
    wait = only_line(text, "tl::wgmma_wait_regs<1, ")
    assert emulate_flash_text(text)["races"] == []
    races = emulate_flash_text(text.replace(wait + "\n", ""))["races"]
    assert any("in-flight wgmma owns" in r for r in races), races


# The one-CTA-per-tile form of attention-like (overlapped) loops, which are persistent by default.
ONE_CTA_PER_TILE = {"tl.enable_persistent_flash": False}

def check_flash(kind, f, B, H, S, D, causal, configs=None):
    q, k, v = (rng.standard_normal((B, S, H, D)).astype(np.float16) for _ in range(3))
    o = np.full((B, S, H, D), np.nan, np.float16)
    (_, _, _, out) = run(kind, f, (q, k, v, o), configs)
    q64, k64, v64 = (x.astype(np.float64).transpose(0, 2, 1, 3) for x in (q, k, v))
    s = q64 @ k64.transpose(0, 1, 3, 2) / np.sqrt(D)
    if causal:
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    ref = ((p / p.sum(-1, keepdims=True)) @ v64).transpose(0, 2, 1, 3)
    check(out, ref, 1e-2)


# ---- the emulator's ordering checks fail where the protocol is broken -------------------------------

def lowered_gemm_text(Kd=512, configs=None):
    """A GEMM of Kd / 64 iterations over 3 stages, lowered for sm_90a, as IR text."""
    f = K.matmul(128, 128, Kd, 128, 128, 64, num_stages=3, threads=256)
    low, _ = _core.cuda.lower_func(f.ir, "sm_90a", configs or {})
    return f, _core.canonical_text(low)


def emulate_text(f, text):
    Kd = f.params[0].shape[1]
    A = rng.standard_normal((128, Kd)).astype(np.float16)
    B = rng.standard_normal((Kd, 128)).astype(np.float16)
    C = np.zeros((128, 128), np.float16)
    slots = [("ptr", x.ctypes.data) for x in (A, B, C)]
    return _core.cuda.emulate_lowered(_core.parse_ir(text), slots)


def lowered_flash_text(configs, causal=False):
    """Flash attention B1 H2 S256 D64 (block 128 x 64, 2 stages, 256 threads), lowered for sm_90a, as IR text."""
    f = K.flashattn(1, 2, 256, 64, causal, block_M=128, block_N=64, num_stages=2, threads=256)
    low, _ = _core.cuda.lower_func(f.ir, "sm_90a", configs)
    return _core.canonical_text(low)


def emulate_flash_text(text):
    q, k, v = (rng.standard_normal((1, 256, 2, 64)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    return _core.cuda.emulate_lowered(_core.parse_ir(text), [("ptr", x.ctypes.data) for x in (q, k, v, o)])


def only_line(text, needle, without=None):
    lines = [ln for ln in text.splitlines() if needle in ln and (without is None or without not in ln)]
    assert len(lines) == 1, (needle, lines)
    return lines[0]


FULL_WAIT = dict(needle="evaluate cuda.mbarrier_wait<void>", without="1 - floormod")  # the consumers'
EMPTY_WAIT = dict(needle=", 3), 1 - floormod")  # the producer's (parity ^ 1)


def test_intact_protocol_has_no_findings():
    f, text = lowered_gemm_text()
    assert emulate_text(f, text)["races"] == []


def test_read_before_the_full_wait_is_reported():
    # As many iterations as stages: without the wait the consumers would otherwise run ahead of the
    # producer's parity waits, which then hang (as they would on the GPU).
    f, text = lowered_gemm_text(192)
    wait = only_line(text, **FULL_WAIT)
    races = emulate_text(f, text.replace(wait + "\n", ""))["races"]
    assert races and "before waiting for the mbarrier phase its TMA copy completes" in races[0], races


def test_releasing_a_stage_wgmma_still_reads_is_reported():
    f, text = lowered_gemm_text()
    # Release the stage just issued (still read by the wgmma left in flight) instead of the one before.
    bad = re.sub(r"floormod\((v\d+) - 1, 3\)", r"floormod(\1, 3)", text)
    bad = re.sub(r"if \((v\d+) > 0\)", r"if (\1 >= 0)", bad)
    assert bad != text
    races = emulate_text(f, bad)["races"]
    assert any("in-flight wgmma" in r for r in races), races


def test_release_before_the_reads_is_reported():
    # Synchronous GEMM: the consumers release a stage after reading it; here before.
    f, text = lowered_gemm_text(configs={"tl.disable_wgmma_async": True})
    lines = text.splitlines()
    arrive = next(i for i, ln in enumerate(lines) if "cuda.mbarrier_arrive_warp<void>" in ln)
    gemm = next(i for i, ln in enumerate(lines) if "tl::wgmma_gemm_ss" in ln)
    assert gemm < arrive
    lines.insert(gemm - 1, lines.pop(arrive))  # before the gemm's cuda.group attr
    races = emulate_text(f, "\n".join(lines))["races"]
    assert any("without releasing it" in r for r in races), races


def test_producer_not_waiting_for_the_release_hangs():
    # It refills every stage at once: the consumers' parity waits then see phases two ahead.
    f, text = lowered_gemm_text()
    wait = only_line(text, **EMPTY_WAIT)
    with pytest.raises(Exception, match="never completes"):
        emulate_text(f, text.replace(wait + "\n", ""))


def test_missing_release_hangs():
    f, text = lowered_gemm_text()
    arrive = only_line(text, "evaluate cuda.mbarrier_arrive_warp<void>", without="+ 7, 3)")  # the in-loop release
    with pytest.raises(Exception, match="never completes"):
        emulate_text(f, text.replace(arrive + "\n", ""))


def test_wrong_transaction_count_hangs():
    f, text = lowered_gemm_text()
    line = only_line(text, "cuda.mbarrier_expect_tx")
    with pytest.raises(Exception, match="never completes"):
        emulate_text(f, text.replace(line, line.replace("32768)", "32770)")))


def test_unbalanced_pingpong_is_reported():
    text = lowered_flash_text({"tl.enable_warpgroup_pingpong": True})
    last = only_line(text, "evaluate cuda.named_barrier_sync<void>(2, 256)")
    assert emulate_flash_text(text)["races"] == []
    with pytest.raises(Exception, match="named barrier 2 ends the block"):
        emulate_flash_text(text.replace(last + "\n", ""))


def load_example(name):
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", name, f"example_{name}.py")
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("persistent", [True, False])
@pytest.mark.parametrize("kv_len", [192, 100])
@pytest.mark.parametrize("kind", KINDS)
def test_mla_decode(kind, kv_len, persistent):
    """examples/mla_decode at its default configuration (block_N 64, 2 stages: the plain loop, not
    FA3's overlap, test_mla_decode_is_not_overlapped_at_two_stages): three GEMMs, P through shared
    memory, reductions across warpgroups; the latent cache (4-D TMA boxes of 8 panels) and the
    rotary keys are two producer groups. Q and its rotary part are the producer's TMA loads (two
    more groups): per tile in the persistent form (the default), once before the loop with
    TL_DISABLE_PERSISTENT (one CTA per tile)."""
    ex = load_example("mla_decode")
    B, H, D, P = 2, 64, 512, 64
    f = ex.mla_decode(B, H, kv_len, D, P, block_N=64, block_H=64)
    configs = {} if persistent else {"tl.disable_persistent": True}
    src = build(f, "sm_90a", configs)["source"]
    assert src.count("tl::mbarrier_arrive_expect_tx(") == 4
    assert ("tile_iter" in src) == persistent and "named_barrier_sync((2" not in src
    q = rng.standard_normal((B, H, D)).astype(np.float16)
    q_pe = rng.standard_normal((B, H, P)).astype(np.float16)
    kv = rng.standard_normal((B, kv_len, D)).astype(np.float16)
    k_pe = rng.standard_normal((B, kv_len, P)).astype(np.float16)
    o = np.full((B, H, D), np.nan, np.float16)
    out = run(kind, f, (q, q_pe, kv, k_pe, o), configs)[4]
    check(out, ex.reference(q, q_pe, kv, k_pe), 1e-2)


@pytest.mark.parametrize("kind", KINDS)
def test_mla_decode_paged(kind):
    """Paged cache: the TMA coordinates of each block come from the block table (read by the
    producer thread); pages are shuffled, the last one partly past kv_len."""
    ex = load_example("mla_decode")
    B, H, D, P, kv_len, page = 2, 64, 512, 64, 160, 128
    q = rng.standard_normal((B, H, D)).astype(np.float16)
    q_pe = rng.standard_normal((B, H, P)).astype(np.float16)
    kv = rng.standard_normal((B, kv_len, D)).astype(np.float16)
    k_pe = rng.standard_normal((B, kv_len, P)).astype(np.float16)
    kv_pool, k_pe_pool, table, num_pages = ex.paged_cache(kv, k_pe, page, rng)
    f = ex.mla_decode(B, H, kv_len, D, P, block_N=64, block_H=64, page_size=page, num_pages=num_pages)
    src = build(f, "sm_90a")["source"]  # persistent by default: Q and Q_pe per tile by TMA as well
    assert src.count("tl::mbarrier_arrive_expect_tx(") == 4 and "block_table[" in src and "tile_iter" in src
    o = np.full((B, H, D), np.nan, np.float16)
    out = run(kind, f, (q, q_pe, kv_pool, k_pe_pool, table, o))[5]
    check(out, ex.reference(q, q_pe, kv, k_pe), 1e-2)


# FA3's overlap takes MLA's loop only with 3 or more stages (c_kv's stage is read by the score GEMMs
# and by P c_kv: ws_overlap.h), so at block_N 32 (4 stages of c_kv and k_pe fit the shared memory).
MLA_OVERLAP_CASES = {
    # name: (batch, heads, kv_len, page_size, num_stages, configs)
    "h128_persistent": (1, 128, 160, None, 4, {}),
    "tail_one_cta_per_tile": (2, 64, 100, None, 3, ONE_CTA_PER_TILE),
    "one_block": (1, 64, 20, None, 3, {}),
    "paged_tail": (2, 64, 160, 128, 4, {}),
    # The tail mask not folded into the first wgmma: it stays in A1, before the score GEMMs.
    "tail_no_zero_init": (1, 64, 100, None, 3, {"tl.disable_wgmma_zero_init": True}),
}


def mla_overlap_case(ex, name):
    B, H, kv_len, page, stages, configs = MLA_OVERLAP_CASES[name]
    kw = dict(block_N=32, block_H=64, num_stages=stages)
    D, P = 512, 64
    q = rng.standard_normal((B, H, D)).astype(np.float16)
    q_pe = rng.standard_normal((B, H, P)).astype(np.float16)
    kv = rng.standard_normal((B, kv_len, D)).astype(np.float16)
    k_pe = rng.standard_normal((B, kv_len, P)).astype(np.float16)
    o = np.full((B, H, D), np.nan, np.float16)
    if page is None:
        f = ex.mla_decode(B, H, kv_len, D, P, **kw)
        args = (q, q_pe, kv, k_pe, o)
    else:
        kv_pool, k_pe_pool, table, num_pages = ex.paged_cache(kv, k_pe, page, rng)
        f = ex.mla_decode(B, H, kv_len, D, P, page_size=page, num_pages=num_pages, **kw)
        args = (q, q_pe, kv_pool, k_pe_pool, table, o)
    return f, args, ex.reference(q, q_pe, kv, k_pe), configs


ISSUED = re.compile(r", -1(, tl::half_t, false)?>\(")  # kPending = -1 (with or without the fence flag)


@pytest.mark.parametrize("name", list(MLA_OVERLAP_CASES))
@pytest.mark.parametrize("kind", KINDS)
def test_mla_decode_overlap(kind, name):
    """FA3's overlap for a loop of three GEMMs (ws_overlap.h): MLA's two score GEMMs (Q c_kv^T,
    Q_pe k_pe^T, both into acc_s) are the first group, P goes through shared memory (FullCol: each
    warpgroup's P c_kv wgmma reads the columns both stored), and c_kv's stage is read by the first and
    the third GEMM. Iteration k issues both score GEMMs, rescales O and issues P_{k-1} c_kv_{k-1},
    waits for the scores (wait_group 1) and runs the softmax (its cross-warpgroup reductions) while
    that GEMM runs, then waits for it (wait_group 0), releases c_kv's stage of k - 1, meets the other
    warpgroup and only then stores P_k. TL_DISABLE_WGMMA_OVERLAP: the plain loop, each GEMM waited
    for where it is issued. Values against numpy in float64 either way (tails, one block, paged).
    At block_N 32 with 3 or 4 stages: at 2 the overlap is refused for this loop."""
    ex = load_example("mla_decode")
    f, args, ref, configs = mla_overlap_case(ex, name)
    built = build(f, "sm_90a", configs)
    src = built["source"]
    # ptxas keeps the wgmma asynchronous (no C7514-like "wgmma.mma_async instructions are serialized").
    assert "serialized" not in built["log"], built["log"]
    # The steady loop (k = 1 ..), then the last P c_kv. The source is the same on the emulator and
    # on a GPU (the persistent grid is sized at launch): with one block of the cache the persistent
    # kernel still has the steady loop, empty (k < 1 + 0), inside its loop over tiles.
    loop = src[src.index("for (int k = 1;"):]
    gemms = [m.start() for m in re.finditer(r"tl::wgmma_gemm_ss<", loop)][:3]
    qk, qpe, pv = gemms
    operand_a = [loop[g:].split(">(", 1)[1].split(",", 1)[0] for g in gemms]
    assert operand_a == ["(&Q_shared[0])", "(&Q_pe_shared[0])", "(&P_shared[0])"], loop[:4000]
    assert all(ISSUED.search(loop[g:g + 200]) for g in gemms), loop[:4000]
    wait1 = loop.index("tl::wgmma_wait_regs<1, ")
    wait0 = loop.index("tl::wgmma_wait_regs<0, ")
    red = loop.index("tl::allreduce<tl::MaxOp")
    store_p = loop.index("P_shared[", wait1)  # the first write of P_k (stmatrix)
    assert qk < qpe < pv < wait1 < red < wait0 < store_p, loop[:4000]
    # After the wait for P_{k-1} c_kv_{k-1}: c_kv's stage of k - 1 goes back to the producer and the
    # consumers meet before anyone overwrites P.
    between = loop[wait0:store_p]
    assert "tl::mbarrier_arrive_warp(" in between and "tl::sync_block();" in between, between
    out = run(kind, f, args, configs)[-1]
    check(out, ref, 1e-2)
    off = dict(configs, **{"tl.disable_wgmma_overlap": True})
    plain = build(f, "sm_90a", off)["source"]
    assert "wgmma_wait_regs" not in plain and not ISSUED.search(plain)
    out = run(kind, f, args, off)[-1]
    check(out, ref, 1e-2)


@pytest.mark.parametrize("block_N, page", [(64, None), (64, 64), (32, None)])
def test_mla_decode_is_not_overlapped_at_two_stages(block_N, page):
    """c_kv's stage is read by the score GEMMs and by P c_kv: FA3's overlap would hold it until
    P_k c_kv_k completes in iteration k + 1, one iteration longer than the plain loop, so with 2
    stages the producer could not load block k + 1 during iteration k. On an H100 (2026-11-27, B132
    H128 kv 8192, block_N 64) the overlapped loop ran 356-419 TFLOPS per round, the plain one
    390-484 (docs/PERFORMANCE.md): at 2 stages plan_overlap refuses it and the loop is the one
    TL_DISABLE_WGMMA_OVERLAP gives; at 3 stages it is overlapped."""
    ex = load_example("mla_decode")
    B, H, kv_len, D, P = 2, 64, 256, 512, 64
    kw = dict(page_size=page, num_pages=B * kv_len // page) if page else {}

    def source(stages, configs=None):
        f = ex.mla_decode(B, H, kv_len, D, P, block_N=block_N, block_H=64, num_stages=stages, **kw)
        return build(f, "sm_90a", configs)["source"]
    src = source(2)
    assert "wgmma_wait_regs" not in src and not ISSUED.search(src)
    assert src == source(2, {"tl.disable_wgmma_overlap": True})
    if block_N == 32:  # (3 stages of block_N 64 exceed the shared memory)
        assert ISSUED.search(source(3)) and "tl::wgmma_wait_regs<1, " in source(3)


def lowered_mla_text(configs=None):
    ex = load_example("mla_decode")
    f, args, ref, _ = mla_overlap_case(ex, "tail_one_cta_per_tile")
    low, _ = _core.cuda.lower_func(f.ir, "sm_90a", configs or ONE_CTA_PER_TILE)
    return _core.canonical_text(low), args, ref


def test_mla_overwriting_p_before_the_other_warpgroup_waited_is_reported():
    """The barrier after the wait for P_{k-1} c_kv_{k-1} is what keeps one warpgroup's store of P_k
    off the bytes the other warpgroup's wgmma still reads (the softmax's reductions ran while it was
    in flight): without it the emulator reports the store."""
    text, args, ref = lowered_mla_text()
    lines = text.splitlines()
    wait0 = next(i for i, ln in enumerate(lines) if "tl::wgmma_wait_regs<0, " in ln)
    sync = next(i for i in range(wait0, len(lines)) if "tl.sync_threads" in lines[i])
    assert not any("P_shared" in ln for ln in lines[wait0:sync]), lines[wait0:sync + 1]
    slots = [("ptr", x.ctypes.data) for x in args]
    assert _core.cuda.emulate_lowered(_core.parse_ir(text), slots)["races"] == []
    check(args[-1], ref, 1e-2)
    bad = "\n".join(lines[:sync] + lines[sync + 1:])
    races = _core.cuda.emulate_lowered(_core.parse_ir(bad), slots)["races"]
    assert any("without a barrier in between (a wgmma operand)" in r for r in races), races


def test_block_table_copies_are_pipelined_with_cp_async():
    """sm_80 form of the same: the block-table-addressed copies are producers of the cp.async
    pipeline (refilled k + S - 1 ahead, under the refill guard)."""
    ex = load_example("mla_decode")
    B, H, D, P, kv_len, page = 2, 64, 64, 32, 200, 64
    q = rng.standard_normal((B, H, D)).astype(np.float16)
    q_pe = rng.standard_normal((B, H, P)).astype(np.float16)
    kv = rng.standard_normal((B, kv_len, D)).astype(np.float16)
    k_pe = rng.standard_normal((B, kv_len, P)).astype(np.float16)
    kv_pool, k_pe_pool, table, num_pages = ex.paged_cache(kv, k_pe, page, rng)
    f = ex.mla_decode(B, H, kv_len, D, P, block_N=64, block_H=64, num_stages=3, page_size=page, num_pages=num_pages)
    src = build(f, "sm_80")["source"]
    assert "cp_async" in src and "block_table[" in src
    r = EmuRunner(f, arch="sm_80")
    out = r(q, q_pe, kv_pool, k_pe_pool, table, np.full((B, H, D), np.nan, np.float16))[5]
    assert r.report["races"] == [], r.report["races"]
    check(out, ex.reference(q, q_pe, kv, k_pe), 1e-2)


def test_tma_only_operands_skip_the_proxy_fence():
    # Both tiles come from the producer's TMA copies only: the wgmma needs no fence.proxy.async.
    f, text = lowered_gemm_text()
    gemm = only_line(text, "tl::wgmma_gemm_ss")
    assert "tl::half_t, 1, tl::half_t, false>" in gemm, gemm
    # Flash attention: K, V and (before the loop, on its own barrier) Q come from TMA: both GEMMs
    # skip the fence. With TL_DISABLE_PROLOGUE_TMA, Q is an ordinary copy of the consumers: the P V
    # GEMM (V) skips the fence, the Q K^T GEMM keeps it.
    fa = K.flashattn(1, 2, 256, 64, False, block_M=128, block_N=64, num_stages=2, threads=256)
    # (The loop's GEMMs are issued only, kPending = -1: see test_flash_attention_overlap.)
    unfenced = re.compile(r", false(, -1)?>\(")
    # The steady loop's Q K^T (issued only, ", -1") skips it as well unless
    # TL_DISABLE_LOOP_PROXY_FENCE_ELISION: the peeled first iteration's fence covers Q's stores.
    no_elision = {"tl.disable_prologue_tma": True, "tl.disable_loop_proxy_fence_elision": True}
    for configs, q_fenced, loop_fenced in (({}, False, False), ({"tl.disable_prologue_tma": True}, True, False),
                                           (no_elision, True, True)):
        src = build(fa, "sm_90a", configs)["source"]
        ss = [ln for ln in src.splitlines() if "tl::wgmma_gemm_ss<" in ln]
        rs = [ln for ln in src.splitlines() if "tl::wgmma_gemm_rs<" in ln]
        assert ss and rs and all(unfenced.search(ln) for ln in rs), (configs, rs)
        for ln in ss:
            fenced = loop_fenced if ", -1" in ln else q_fenced
            assert bool(unfenced.search(ln)) != fenced, (configs, ss)


def test_wgmma_without_fence_reading_thread_stores_is_reported():
    # The cp.async form writes the tiles with ordinary (generic-proxy) copies: a wgmma told to skip
    # the proxy fence must be reported by the emulator.
    f, text = lowered_gemm_text(configs={"tl.disable_warp_specialized": True})
    only_line(text, "tl::wgmma_gemm_ss")
    assert emulate_text(f, text)["races"] == []
    bad = re.sub(r"(tl::wgmma_gemm_ss<[^>]*?tl::half_t)(, 1)?>",
                 lambda m: m.group(1) + (m.group(2) or ", 0") + ", tl::half_t, false>", text)
    assert bad != text and "tl::half_t, false>" in bad
    races = emulate_text(f, bad)["races"]
    assert any("without fence.proxy.async" in r for r in races), races
