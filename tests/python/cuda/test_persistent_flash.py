"""Persistent flash-attention forward on sm_90a (TL_ENABLE_PERSISTENT_FLASH, on by default): one
CTA per SM loops over the (q block, head, batch) tiles; the producer's TMA loads of Q (per tile, on
a full / empty mbarrier pair: src/target/cuda/tile_prologue.h), K and V run ahead into the next
tile while the consumers finish the current one (the ring's stages and phases continue across
tiles). Checked on the CPU emulator, which runs persistent kernels with 3 CTAs (so each loops over
several tiles, and here the tile count is not a multiple of 3), against numpy in float64, with the
emulator's protocol checks (reads after the full wait, overwrites after the release); and on a
Hopper GPU."""
import re

import numpy as np
import pytest

import cuda_kernels as K
from cuda_util import build, requires_nvrtc
from test_warp_specialized import KINDS, check_flash
from tilelang import _core

rng = np.random.default_rng(161)

ON = {"tl.enable_persistent_flash": True}


def flash(causal, B=2, H=2, S=256, D=64, block_N=64, stages=2):
    return K.flashattn(B, H, S, D, causal, block_M=128, block_N=block_N, num_stages=stages, threads=256)


def roles(src):
    """The consumer and producer parts of the kernel source."""
    at = src.index("tl::setmaxnreg_dec")
    return src[:at], src[at:]


@requires_nvrtc
def test_on_by_default_and_opt_out():
    """The overlapped attention kernel is persistent by default (measured faster than one CTA per
    tile on an H100, 2026-11-27: docs/PERFORMANCE.md); TL_ENABLE_PERSISTENT_FLASH=False keeps one
    CTA per tile."""
    for causal in (False, True):
        src = build(flash(causal), "sm_90a")["source"]
        assert "tile_iter" in src and "gridDim.x" in src
        src = build(flash(causal), "sm_90a", {"tl.enable_persistent_flash": False})["source"]
        assert "tile_iter" not in src and "gridDim.x" not in src


@requires_nvrtc
def test_persistent_loop_and_per_tile_q():
    """The code has the tile loop in both roles; in the tile's first iteration, after its first K
    load, the producer waits for the consumers' release of Q (parity 1 - tile_iter & 1) and loads
    it by TMA; the consumers wait for Q with parity tile_iter & 1 and release it (one arrival per
    warp) once the last Q K^T has completed, before the last P V."""
    src = build(flash(False), "sm_90a", ON)["source"]
    con, pro = roles(src)
    assert re.search(r"for \(int tile_iter = 0; tile_iter < .*gridDim\.x", con), con[:3000]
    assert re.search(r"for \(int tile_iter_1 = 0; tile_iter_1 < .*gridDim\.x", pro), pro
    # barriers: 2 groups (K, V) x 2 stages x full/empty = 8, then Q's full [8] and empty [9]
    assert "tl::mbarrier_init((&tl_mbar[8]), 1);" in src and "tl::mbarrier_init((&tl_mbar[9]), 8);" in src
    loop = pro.index("for (int k_p = 0;")
    k_load = pro.index("(&K_shared[")
    first = pro.index("if ((k_p == 0)) {")
    q_wait = pro.index("tl::mbarrier_wait((&tl_mbar[9]), (1 - (tile_iter_1 & 1)));")
    q_load = re.search(r"tl::tma_load\(tl_tmap_\d, \(&Q_shared\[0\]\), \(&tl_mbar\[8\]\)", pro).start()
    assert loop < k_load < first < q_wait < q_load < pro.index("(&V_shared[")
    assert "if ((loop_range <= 0)) {" not in pro  # a constant trip count: no tile without iterations
    assert "tl::mbarrier_wait((&tl_mbar[8]), (tile_iter & 1));" in con
    release = con.index("tl::mbarrier_arrive_warp((&tl_mbar[9]));")
    steady = con.index("for (int k = 1;")
    assert steady < release < con.rindex("tl::wgmma_gemm_rs<") and release > con.rindex("tl::wgmma_gemm_ss<")
    # Q comes by TMA only: its wgmma needs no proxy fence, and no thread copies Q
    assert all(", tl::half_t, false>((&Q_shared[0])" in ln for ln in src.splitlines() if "wgmma_gemm_ss<" in ln)
    assert not [ln for ln in src.splitlines() if "copy_vec" in ln and "(&Q_shared[" in ln]


@requires_nvrtc
def test_switch_off_by_disable_persistent():
    """TL_DISABLE_PERSISTENT wins over the switch."""
    src = build(flash(False), "sm_90a", dict(ON, **{"tl.disable_persistent": True}))["source"]
    assert "tile_iter" not in src and "tl::mbarrier_wait((&tl_mbar[8]), 0);" in src


@requires_nvrtc
def test_causal_pairs_tiles_and_counts_iterations():
    """Causal: the loop's length depends on the q block, so the ring's position is a running sum
    (tl_tile_base[0], per thread, in both roles) and Q's barrier phase the number of tiles run
    (tl_tile_base[1]); the tiles run in pairs bx, g0 - 1 - bx (the longer first), and with an odd
    number of q blocks the middle one's second tile is skipped (persistent_order.h)."""
    src = build(flash(True, S=384), "sm_90a", ON)["source"]  # 3 q blocks
    con, pro = roles(src)
    for part in (con, pro):
        assert re.search(r"for \(int tile_iter(_1)? = 0; tile_iter(_1)? < \(2 \* tl::floordiv\(\(\(\(8 - cta\)", part), part[:2000]
        assert re.search(r"tl_tile_base\[0\] = \(tl_tile_base\[0\] \+ loop_range(_1)?\);", part)
        assert re.search(r"tl_tile_base\[1\] = \(tl_tile_base\[1\] \+ 1\);", part)
        assert re.search(r"const int bx(_1)? = \(\(side(_1)? == 0\) \? \(2 - pair_b(_1)?\) : pair_b(_1)?\);", part)
        assert re.search(r"if \(\(\(side(_1)? == 0\) \|\| \(\(\(2 \* pair_b(_1)?\) \+ 1\) != 3\)\)\)", part)
    assert "tl::mbarrier_wait((&tl_mbar[8]), (tl_tile_base[1] & 1));" in con
    assert "tl::mbarrier_wait((&tl_mbar[9]), (1 - (tl_tile_base[1] & 1)));" in pro
    assert re.search(r"tl::mbarrier_wait\(\(&tl_mbar\[\(\(tl_tile_base\[0\] \+ k\) & 1\)\]\)", con)
    # an even number of q blocks: no skipped tiles, no guard
    even = build(flash(True, S=512), "sm_90a", ON)["source"]
    assert "tl_tile_base" in even and "!= 4" not in even and "(side == 0) ||" not in even


SHAPES = {  # B, H, S, block_N, stages: over the emulator's 3 CTAs
    "n64_s2_8tiles": (2, 2, 256, 64, 2),
    "n64_s3_8tiles": (2, 2, 256, 64, 3),
    "n128_9tiles": (1, 3, 384, 128, 2),
    "odd_qblocks_12tiles": (2, 2, 384, 64, 2),  # causal: 8 pairs (3, 3, 2 per CTA), 4 middle tiles skipped
    "even_qblocks_8tiles": (1, 2, 512, 64, 3),  # causal: 4 pairs (2, 1, 1 per CTA)
}


@requires_nvrtc
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_persistent_flash_values(kind, causal, shape):
    """Each CTA runs several tiles; the tile count is not a multiple of the CTA count (but for 9)."""
    B, H, S, block_N, stages = SHAPES[shape]
    f = flash(causal, B=B, H=H, S=S, block_N=block_N, stages=stages)
    check_flash(kind, f, B, H, S, 64, causal, ON)


@requires_nvrtc
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_persistent_plain_loop_values(kind, causal):
    """With TL_DISABLE_WGMMA_OVERLAP (the plain loop, persistent already where not causal) the switch
    makes Q the producer's per-tile load too; it is released after the loop."""
    cfg = dict(ON, **{"tl.disable_wgmma_overlap": True})
    f = flash(causal, S=384)
    src = build(f, "sm_90a", cfg)["source"]
    con, _ = roles(src)
    assert "tile_iter" in con and "tl::mbarrier_arrive_warp((&tl_mbar[9]));" in con
    assert "wgmma_wait_regs" not in src
    check_flash(kind, f, 2, 2, 384, 64, causal, cfg)


@requires_nvrtc
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_persistent_with_consumer_q_copy(kind, causal):
    """With TL_DISABLE_PROLOGUE_TMA too, the consumers copy Q at each tile's start (thread stores;
    the emulator checks the block barrier and the proxy fence before the next Q K^T)."""
    cfg = dict(ON, **{"tl.disable_prologue_tma": True})
    f = flash(causal, S=384)
    src = build(f, "sm_90a", cfg)["source"]
    assert "tile_iter" in src and "tl_mbar[9]" not in src
    assert [ln for ln in src.splitlines() if "copy_vec" in ln and "(&Q_shared[" in ln]
    check_flash(kind, f, 2, 2, 384, 64, causal, cfg)


@requires_nvrtc
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_example_source(kind, causal):
    """examples/flash_attention ([B, H, S, D], O stored through shared memory: each tile's epilogue
    writes O_shared again) takes the same form from its unchanged source."""
    from test_warp_specialized import check, load_example, run
    ex = load_example("flash_attention")
    B, H, S, D = 2, 2, 384, 64
    f = ex.flashattn(B, H, S, D, causal, block_M=128, block_N=64, num_stages=2, threads=256)
    src = build(f, "sm_90a", ON)["source"]
    assert "tile_iter" in src and "tl::mbarrier_arrive_warp((&tl_mbar[9]));" in src
    q, k, v = (rng.standard_normal((B, H, S, D)).astype(np.float16) for _ in range(3))
    o = np.full((B, H, S, D), np.nan, np.float16)
    (_, _, _, out) = run(kind, f, (q, k, v, o), ON)
    check(out, ex.reference(q, k, v, causal), 1e-2)


# ---- the emulator's checks fail where the per-tile Q protocol is broken ------------------------------

def lowered_text(causal=False):
    f = flash(causal)
    low, _ = _core.cuda.lower_func(f.ir, "sm_90a", ON)
    return _core.canonical_text(low)


def emulate(text):
    q, k, v = (rng.standard_normal((2, 256, 2, 64)).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    return _core.cuda.emulate_lowered(_core.parse_ir(text), [("ptr", x.ctypes.data) for x in (q, k, v, o)])


def q_barrier_lines(text):
    """The producer's waits for Q's release (in the tile's first iteration, and for a tile without
    iterations, where the trip count is not constant) and the consumers' release (Q's empty barrier:
    the last one)."""
    n = int(re.search(r"alloc (b\d+): shared uint64\[(\d+)\]", text).group(2))
    bar = re.search(r"alloc (b\d+): shared uint64\[", text).group(1)
    empty = f"cuda.address_of<handle>({bar}[{n - 1}], 3)"
    wait = [ln for ln in text.splitlines() if "cuda.mbarrier_wait<void>(" + empty in ln]
    release = [ln for ln in text.splitlines() if "cuda.mbarrier_arrive_warp<void>(" + empty in ln]
    assert 1 <= len(wait) <= 2 and len(release) == 1, (wait, release)
    return wait, release[0]


@requires_nvrtc
@pytest.mark.parametrize("causal", [False, True])
def test_intact_per_tile_q_has_no_findings(causal):
    assert emulate(lowered_text(causal))["races"] == []


@requires_nvrtc
@pytest.mark.parametrize("causal", [False, True])
def test_loading_q_before_its_release_is_reported(causal):
    text = lowered_text(causal)
    waits, _ = q_barrier_lines(text)
    assert len(waits) == (2 if causal else 1)
    for wait in waits:
        text = text.replace(wait + "\n", "")
    races = emulate(text)["races"]
    assert any("overwrites" in r and "without releasing it" in r for r in races), races[:3]


@requires_nvrtc
@pytest.mark.parametrize("causal", [False, True])
def test_releasing_q_before_the_last_q_kt_is_reported(causal):
    """The release moved to the start of the steady loop (the next tile's Q could land under a Q K^T)."""
    text = lowered_text(causal)
    _, release = q_barrier_lines(text)
    lines = text.splitlines()
    at = lines.index(release)
    steady = next(i for i, ln in enumerate(lines) if re.search(r"for v\d+: int32 in serial\(1, ", ln))
    assert steady < at
    lines.insert(steady, lines.pop(at))
    races = emulate("\n".join(lines))["races"]
    assert any("overwrites" in r and "without releasing it" in r for r in races), races[:3]
