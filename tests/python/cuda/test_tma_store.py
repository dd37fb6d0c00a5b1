"""TMA-store epilogues (issue 16, src/target/cuda/ws_tma_store.h): on sm_90a the README GEMM's
`T.copy(C_local, C[by * BM, bx * BN])` after a warp-specialized loop stages the tile in shared memory
(128-byte swizzle, in 64-column chunks over two buffers where the whole tile does not fit beside the
stages) and one consumer thread stores it with cp.async.bulk.tensor; in the persistent form the store
runs under the next tile's main loop, waited for (wait_group.read) only before the next epilogue
writes the staging buffer again. TL_DISABLE_TMA_STORE (and TL_DISABLE_TMA_LOWER) keep the register
store; sm_80 is unchanged.

Tiers: the code form (NVRTC compiles every kernel here, no GPU needed); values on the CPU emulator
against numpy in float64, whose checks also see the protocol (fence before the store, the barrier,
the read wait before the staging buffer is written again, the wait before the block exits: the
negative tests break each in the lowered IR and expect the report); values on a Hopper GPU against
torch (GPU tier)."""
import re

import ml_dtypes
import numpy as np
import pytest

import cuda_kernels as K
import tilelang.language as T
from cuda_util import EmuRunner, Runner, build, device_arch, has_gpu, requires_nvrtc
from tilelang import _core

pytestmark = requires_nvrtc
rng = np.random.default_rng(1617)
requires_hopper = [pytest.mark.gpu,
                   pytest.mark.skipif(has_gpu() and device_arch() != "sm_90a", reason="needs an sm_90 GPU")]
NO_TMA_STORE = {"tl.disable_tma_store": True}
NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32}


def gemm(M, N, Kd, bm=128, bn=128, bk=64, threads=256, stages=3, dtype="float16", out_dtype=None, **kw):
    return K.zoo.gemm(M, N, Kd, bm, bn, bk, dtype, "float32", out_dtype, num_stages=stages, threads=threads, **kw)


def gemm_staged(M, N, Kd, bm=128, bn=128, bk=64, threads=256, stages=3, dtype="float16"):
    """The README GEMM with the epilogue staged through shared memory by the program itself."""
    @T.prim_func
    def main(A: T.Tensor((M, Kd), dtype), B: T.Tensor((Kd, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((bm, bk), dtype)
            B_shared = T.alloc_shared((bk, bn), dtype)
            C_shared = T.alloc_shared((bm, bn), dtype)
            C_local = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(Kd, bk), num_stages=stages):
                T.copy(A[by * bm, k * bk], A_shared)
                T.copy(B[k * bk, bx * bn], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * bm, bx * bn])
    return main


def src_of(f, configs=None, arch="sm_90a"):
    return build(f, arch, configs)["source"]


def epilogue(src):
    """The consumer code after the main loop's last release (the final wait included)."""
    return src[src.index("tl::wgmma_drain"):src.index("} else {\n    tl::setmaxnreg_dec")]


# ---- code form ---------------------------------------------------------------------------------

def test_persistent_chunks_overlap_the_next_tile():
    """128 x 256 fp16 tiles, 4 stages: the whole tile (64 KiB) does not fit beside the stages (192
    KiB), so four 64-column chunks alternate between two 16 KiB buffers, each written by stmatrix
    (16 bytes per lane: 8 accumulator registers converted to four packed pairs). Before a chunk is written,
    thread 0 waits until at most one store still reads (the one of the other buffer), then a barrier;
    after it a proxy fence, a barrier, and thread 0's store and commit. The tile's last wait is the
    next tile's first: none at the end of the tile loop, one wait<0> after it."""
    src = src_of(gemm(1024, 1024, 512, 128, 256, 64, stages=4, swizzle_panel=8))
    assert "persistent 1" in src
    ep = epilogue(src)
    assert ep.count("tl::tma_store(") == 4 and ep.count("tl::tma_store_commit();") == 4
    assert "store_exchange" not in src
    chunk = re.compile(
        r"if \(\(tx == 0\)\) \{\s*tl::tma_store_wait<1>\(\);\s*\}\s*tl::sync_block\(\);\s*#pragma unroll\s*"
        r"for \([^\n]*\n(\s*tl::stmatrix_x4_cast\(\(&C_local_tma_stage(\d)\[[^\n]*\n)\s*\}\s*"
        r"tl::fence_proxy_async\(\);\s*tl::sync_block\(\);\s*if \(\(tx == 0\)\) \{\s*"
        r"tl::tma_store\(tl_tmap_\d, \(&C_local_tma_stage(\d)\[0\]\), \(\(?bx \* 256\)( \+ (\d+)\))?, \(by \* 128\)\);\s*"
        r"tl::tma_store_commit\(\);\s*\}")
    found = [(m.group(2), m.group(3), m.group(5) or "0") for m in chunk.finditer(ep)]
    assert found == [("0", "0", "0"), ("1", "1", "64"), ("0", "0", "128"), ("1", "1", "192")], found
    tail = src[src.rindex("tl::tma_store_commit();"):src.index("} else {\n    tl::setmaxnreg_dec")]
    assert re.fullmatch(r"tl::tma_store_commit\(\);\s*\}\s*\}\s*if \(\(tx == 0\)\) \{\s*tl::tma_store_wait<0>\(\);"
                        r"\s*\}\s*", tail), tail
    assert re.search(r"smem (\d+)", src) and int(re.search(r"smem (\d+)", src).group(1)) <= 227 * 1024
    # The store's tensor map, after the loads' (A, B): C (parameter 2), fp16, 128-byte swizzle, box 64 x 128.
    assert "tmap tl_tmap_2 2 6 128 2 64 128" in src


def test_stmatrix_switch():
    """TL_DISABLE_STMATRIX: the chunks are written by converted pairs (4-byte st.shared, conflict-free
    under the 128-byte swizzle); the PTX has stmatrix only without it."""
    f = gemm(1024, 1024, 512, 128, 256, 64, stages=4)
    on, off = build(f, "sm_90a", {}), build(f, "sm_90a", {"tl.disable_stmatrix": True})
    assert epilogue(on["source"]).count("tl::stmatrix_x4_cast(") == 4 and "copy_cast" not in epilogue(on["source"])
    assert "stmatrix" not in off["source"] and epilogue(off["source"]).count("tl::copy_cast<2>(") == 8
    ptx = [_core.cuda.compile(b["source"], "kernel.cu", "sm_90a", False, True, [])["ptx"] for b in (on, off)]
    assert "stmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx[0] and "stmatrix" not in ptx[1]


def test_whole_tile_in_one_buffer():
    """128 x 128 tiles, 3 stages: the 32 KiB tile fits beside the stages: one buffer, one wait<0>
    per tile before it is written, two boxes (two 128-byte panels) in one bulk group."""
    src = src_of(gemm(512, 512, 256))
    ep = epilogue(src)
    assert ep.count("tl::tma_store_wait<0>();") == 2 and "tma_store_wait<1>" not in src  # per tile, at the end
    assert ep.count("tl::tma_store(") == 2 and ep.count("tl::tma_store_commit();") == 1
    assert "C_local_tma_stage[" in ep and "C_local_tma_stage0" not in ep
    assert ep.index("tl::tma_store_wait<0>();") < ep.index("C_local_tma_stage[") < ep.index("tl::tma_store(")


def test_one_cta_per_tile_waits_only_before_reuse():
    """One CTA per tile (TL_DISABLE_PERSISTENT): the first chunk of each buffer needs no wait; the
    third waits for the first's reads."""
    src = src_of(gemm(1024, 1024, 512, 128, 256, 64, stages=4), {"tl.disable_persistent": True})
    assert "persistent 1" not in src
    ep = epilogue(src)
    assert ep.count("tl::tma_store(") == 4 and ep.count("tl::tma_store_wait<1>();") == 2
    assert ep.index("tl::tma_store_wait<1>();") > ep.index("tl::tma_store(")


def test_one_staging_buffer_when_two_do_not_fit():
    """256 x 128 tiles, 4 stages (192 KiB): one 32 KiB chunk buffer fits, two do not."""
    src = src_of(gemm(1024, 1024, 512, 256, 128, 64, stages=4))
    ep = epilogue(src)
    assert ep.count("tl::tma_store(") == 2 and ep.count("tl::tma_store_wait<0>();") == 3  # 2 chunks, the end
    assert "C_local_tma_stage0" not in ep


@pytest.mark.parametrize("out_dtype,box", [("float32", "7 128 2 32 128"), ("bfloat16", "9 128 2 64 128")])
def test_output_types(out_dtype, box):
    src = src_of(gemm(512, 512, 256, out_dtype=out_dtype))
    assert "tl::tma_store(" in src and f"tmap tl_tmap_2 2 {box}" in src


def test_program_staged_tile():
    """T.copy(C_shared, C[...]): the program's own shared tile is the staging buffer; the wait goes
    before its first write after the loop (persistent form)."""
    src = src_of(gemm_staged(512, 512, 256))
    ep = epilogue(src)
    assert ep.count("tl::tma_store(") == 1 and "(&C_shared[0])" in ep
    assert ep.index("tl::tma_store_wait<0>();") < ep.index("C_shared[") < ep.index("tl::fence_proxy_async();")


@pytest.mark.parametrize("causal", [False, True])
def test_attention_output_tile(causal):
    """Flash attention's `T.copy(acc_o, Output[bz, bx * BM:(bx + 1) * BM, by, :])`: a 4-D tensor whose
    region has one other non-unit extent: rank-4 boxes {64, 1, 128, 1} (the 128-column tile in two
    128-byte panels), the whole tile staged (32 KiB beside Q and the K / V stages), written by
    stmatrix after the wait for the previous tile's store (persistent form)."""
    f = K.flashattn(1, 2, 512, 128, causal, block_M=128, block_N=128, num_stages=2, threads=256)
    src = src_of(f)
    assert "persistent 1" in src and "tmap tl_tmap_3 3 6 128 4 64 1 128 1" in src
    assert re.search(r"tl::tma_store\(tl_tmap_3, \(&acc_o_tma_stage\[0\]\), 0, by, \(bx \* 128\), bz\);", src)
    assert re.search(r"tl::tma_store\(tl_tmap_3, \(&acc_o_tma_stage\[8192\]\), 64, by, \(bx \* 128\), bz\);", src)
    i = src.index("tl::tma_store_wait<0>();")
    assert i < src.index("tl::stmatrix_x4_cast((&acc_o_tma_stage[") < src.index("tl::fence_proxy_async();")
    assert "tma_store" not in src_of(f, NO_TMA_STORE)


@pytest.mark.parametrize("configs", [NO_TMA_STORE, {"tl.disable_tma_lower": True}])
def test_switches_restore_the_register_store(configs):
    src = src_of(gemm(1024, 1024, 512, 128, 256, 64, stages=4), configs)
    assert "tma_store" not in src and "fence_proxy_async" not in src and "store_exchange" in src
    assert ("tl::tma_load(" in src) == ("tl.disable_tma_lower" not in configs)


def test_sm80_unchanged():
    src = src_of(gemm(512, 512, 256, threads=128, stages=3), arch="sm_80")
    assert "tma_store" not in src and "fence_proxy_async" not in src


def test_not_tma_eligible_keeps_the_register_store():
    """A row of 200 bytes (N = 100 fp16) is no multiple of 16: no tensor map for C (B is [N, K])."""
    src = src_of(gemm(256, 100, 256, 128, 128, 64, trans_B=True))
    assert "tl::tma_load(" in src and "tma_store" not in src


def test_accumulating_gemm_keeps_the_register_store_when_persistent():
    """C += A @ B reads C before the loop: in the persistent form the next tile's read could meet a
    store still in flight, so the copy keeps the register store."""
    src = src_of(gemm(512, 512, 256, accumulate=True))
    assert "persistent 1" in src and "tma_store" not in src
    src = src_of(gemm(512, 512, 256, accumulate=True), {"tl.disable_persistent": True})
    assert "tl::tma_store(" in src


# ---- values on the emulator ----------------------------------------------------------------------

def gemm_values(f, M, N, Kd, dtype, out_dtype, configs=None, kind="emu"):
    A = rng.standard_normal((M, Kd)).astype(NP[dtype])
    B = rng.standard_normal((Kd, N)).astype(NP[dtype])
    C = np.full((M, N), np.nan, NP[out_dtype])
    if kind == "emu":
        r = EmuRunner(f, arch="sm_90a", configs=configs)
        (_, _, got) = r(A, B, C)
        assert r.report["races"] == [], r.report["races"]
    else:
        (_, _, got) = Runner(f, configs=configs)(A, B, C)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    got = np.asarray(got, dtype=np.float64)
    tol = (2e-2 if out_dtype != "float32" else 1e-3) * np.sqrt(Kd / 64)
    bad = ~(np.abs(got - ref) <= tol * (1 + np.abs(ref)))  # NaN (an element never stored) is bad too
    assert not bad.any(), f"{bad.sum()} of {bad.size} wrong; max err {np.nanmax(np.abs(got - ref)):.4g}"


EMU_CASES = {
    # name: (M, N, K, tile kwargs, dtype, out dtype, configs)
    "fp16_persistent": (384, 384, 192, {}, "float16", "float16", None),
    "bf16_persistent": (384, 384, 192, {}, "bfloat16", "bfloat16", None),
    "fp16_fp32_out": (256, 384, 128, {}, "float16", "float32", None),
    # partial tiles at the right and bottom edges: TMA drops what falls outside C
    "fp16_ragged": (200, 328, 136, {}, "float16", "float16", None),
    "bf16_ragged_chunks": (136, 520, 128, dict(bn=256, stages=4), "bfloat16", "bfloat16", None),
    "fp16_chunks_persistent": (256, 1024, 128, dict(bn=256, stages=4), "float16", "float16", None),
    "fp16_chunks_one_cta_per_tile": (256, 512, 128, dict(bn=256, stages=4), "float16", "float16",
                                     {"tl.disable_persistent": True}),
    "fp16_one_warpgroup": (256, 384, 128, dict(bm=64, threads=128), "float16", "float16", None),
    "fp16_chunks_no_stmatrix": (256, 1024, 128, dict(bn=256, stages=4), "float16", "float16",
                                {"tl.disable_stmatrix": True}),
}


@pytest.mark.parametrize("name", list(EMU_CASES))
def test_values_on_the_emulator(name):
    M, N, Kd, kw, dt, odt, cfg = EMU_CASES[name]
    f = gemm(M, N, Kd, dtype=dt, out_dtype=odt, **kw)
    assert "tl::tma_store(" in src_of(f, cfg)
    gemm_values(f, M, N, Kd, dt, odt, cfg)


def test_program_staged_values_on_the_emulator():
    f = gemm_staged(392, 264, 128)
    assert "tl::tma_store(" in src_of(f)
    gemm_values(f, 392, 264, 128, "float16", "float16")


# ---- the emulator sees a broken protocol ----------------------------------------------------------

def lowered(M=384, N=384, Kd=128, **kw):
    f = gemm(M, N, Kd, **kw)
    low, _ = _core.cuda.lower_func(f.ir, "sm_90a", {})
    return f, _core.canonical_text(low)


def emulate(f, text):
    M, Kd = f.params[0].shape
    N = f.params[1].shape[1]
    A = rng.standard_normal((M, Kd)).astype(np.float16)
    B = rng.standard_normal((Kd, N)).astype(np.float16)
    C = np.zeros((M, N), np.float16)
    return _core.cuda.emulate_lowered(_core.parse_ir(text), [("ptr", x.ctypes.data) for x in (A, B, C)])


def drop_line(text, needle, which):
    lines = text.splitlines()
    hits = [i for i, ln in enumerate(lines) if needle in ln]
    assert hits, needle
    del lines[hits[which]]
    return "\n".join(lines)


def test_intact_epilogue_has_no_findings():
    f, text = lowered()
    assert text.count("cuda.tma_store<void>(") == 2
    assert emulate(f, text)["races"] == []


def test_missing_fence_is_reported():
    f, text = lowered()
    races = emulate(f, drop_line(text, "cuda.fence_proxy_async()", 0))["races"]
    assert any("TMA store" in r and "without fence.proxy.async" in r for r in races), races


def test_missing_barrier_before_the_store_is_reported():
    f, text = lowered()
    lines = text.splitlines()
    fence = next(i for i, ln in enumerate(lines) if "cuda.fence_proxy_async()" in ln)
    assert "tl.sync_threads()" in lines[fence + 1]
    del lines[fence + 1]
    races = emulate(f, "\n".join(lines))["races"]
    assert any("without a barrier in between" in r for r in races), races


def test_missing_read_wait_is_reported():
    """Three tiles per CTA: the next tile's epilogue overwrites the staging buffer the last store
    may still read."""
    f, text = lowered()
    races = emulate(f, drop_line(text, "cuda.tma_store_wait<void>(0)", 0))["races"]
    assert any("that a TMA store of thread 0 still reads" in r for r in races), races


def test_missing_barrier_after_the_read_wait_is_reported():
    f, text = lowered()
    lines = text.splitlines()
    wait = next(i for i, ln in enumerate(lines) if "cuda.tma_store_wait<void>(0)" in ln)
    sync = next(i for i in range(wait, len(lines)) if "tl.sync_threads()" in lines[i])
    del lines[sync]
    races = emulate(f, "\n".join(lines))["races"]
    assert any("other threads read without a barrier" in r for r in races), races


def test_exit_without_the_final_wait_is_reported():
    f, text = lowered()
    with pytest.raises(Exception, match="ends the block with TMA stores"):
        emulate(f, drop_line(text, "cuda.tma_store_wait<void>(0)", -1))


# ---- values on a Hopper GPU against torch (GPU tier) ----------------------------------------------

GPU_CASES = [
    # M, N, K, tile kwargs, dtype
    (2048, 2048, 1024, dict(bn=256, stages=4, swizzle_panel=8), "float16"),
    (2048, 2048, 1024, dict(bn=256, stages=4, swizzle_panel=8), "bfloat16"),
    (1000, 1064, 520, dict(bn=256, stages=4), "float16"),  # partial edge tiles
    (1000, 1064, 520, {}, "bfloat16"),
    (4096, 4096, 512, dict(bm=256, bn=128, stages=4), "float16"),
]


@pytest.mark.parametrize("configs", [None, {"tl.disable_persistent": True}, NO_TMA_STORE])
@pytest.mark.parametrize("case", range(len(GPU_CASES)))
@pytest.mark.parametrize("kind", [pytest.param("gpu", marks=requires_hopper)])
def test_values_on_gpu_against_torch(kind, case, configs):
    torch = pytest.importorskip("torch")
    M, N, Kd, kw, dt = GPU_CASES[case]
    f = gemm(M, N, Kd, dtype=dt, **kw)
    r = Runner(f, configs=configs)
    assert ("tl::tma_store(" in r.source) == (configs != NO_TMA_STORE)
    A = torch.randn(M, Kd, dtype=torch.float32).to(getattr(torch, dt))
    B = torch.randn(Kd, N, dtype=torch.float32).to(getattr(torch, dt))
    C = np.full((M, N), np.nan, NP[dt])
    np_in = [x.view(torch.int16).numpy().view(NP[dt]) for x in (A, B)]
    (_, _, got) = r(np_in[0], np_in[1], C)
    ref = (A.double() @ B.double()).numpy()
    got = np.asarray(got, dtype=np.float64)
    bad = ~(np.abs(got - ref) <= 2e-2 * np.sqrt(Kd / 64) * (1 + np.abs(ref)))
    assert not bad.any(), f"{bad.sum()} of {bad.size} wrong; max err {np.nanmax(np.abs(got - ref)):.4g}"
