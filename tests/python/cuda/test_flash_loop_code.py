"""The instructions of the sm_90a flash-attention loop per KV block (issue 16; docs/PERFORMANCE.md,
"Instructions per KV block"): the generated source and its PTX (NVRTC, no GPU needed) no longer
carry the per-element overheads that made our kernel execute 44% more instructions than cuDNN's:
exp2f's subnormal handling, P cast element by element (re-packed by PRMT before the P V wgmma),
reductions started from the identity, a shuffle mask computed at run time. Where cuobjdump is
available (PATH or TL_CUOBJDUMP) the SASS of the loop is counted too. Values: the emulator runs the
same kernels against numpy (test_warp_specialized.py::test_flash_attention*, and below)."""
import os
import re
import sys

import numpy as np
import pytest

import cuda_kernels as K
from cuda_util import EmuRunner, build, requires_nvrtc
from tilelang import _core
import tilelang.language as T

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench"))
import flash_loop_counts as FLC  # noqa: E402

pytestmark = requires_nvrtc
rng = np.random.default_rng(1616)


def flash_src(causal=False, configs=None, **kw):
    shape = dict(block_M=128, block_N=128, num_stages=2, threads=256)
    shape.update(kw)
    f = K.flashattn(1, 2, 512, 128, causal, **shape)
    cfg = {"tl.disable_persistent": True}
    cfg.update(configs or {})
    return build(f, "sm_90a", cfg)["source"]


def ptx_of(src):
    return _core.cuda.compile(src, "kernel.cu", "sm_90a", False, True, [])["ptx"]


def test_exp2_is_one_hardware_instruction():
    """Float T.exp2 is ex2.approx.ftz.f32 (one MUFU.EX2); exp2f's ex2.approx.f32 costs a compare and
    two predicated multiplies more per element. TL_DISABLE_EXP2_FTZ keeps exp2f."""
    ptx = ptx_of(flash_src())
    loop = "\n".join(FLC.ptx_main_loop(ptx))
    assert loop.count("ex2.approx.ftz.f32") >= 64 and "ex2.approx.f32" not in ptx
    src = flash_src(configs={"tl.disable_exp2_ftz": True})
    assert src.splitlines()[1] == "#define TL_EXP2_SUBNORMAL 1"
    ptx = ptx_of(src)
    assert "ex2.approx.f32" in ptx and "ex2.approx.ftz.f32" not in ptx


def test_p_is_cast_in_packed_pairs():
    """T.copy(acc_s, acc_s_cast) converts pairs of registers into one f16x2 register."""
    src = flash_src()
    assert "static_cast<tl::half_t>(acc_s[" not in src
    assert re.search(r"tl::copy_cast<2>\(\(&acc_s_cast\[\(2 \* u_\d+\)\]\), \(&acc_s\[\(2 \* u_\d+\)\]\)\);", src)


def test_row_reductions_start_from_their_first_element():
    src = flash_src()
    assert "tl::max((-tl::numeric_limits<float>::infinity()), acc_s[" not in src
    assert "((0.0f) + acc_s[" not in src
    assert "tl::max(tl::max(acc_s[0], acc_s[1]), acc_s[4])" in src
    assert "((acc_s[0] + acc_s[1]) + acc_s[4])" in src


@pytest.mark.parametrize("defer", [True, False])
def test_quad_shuffles_use_the_full_mask(defer):
    """Blocks of whole warps shuffle under the constant full mask: no divergence check per shuffle.
    Per KV block: 2 x 2 for the row maxima, and 2 x 2 for the row sums unless they are deferred to
    after the loop (TL_DISABLE_DEFERRED_ROW_SUM keeps them in it)."""
    ptx = ptx_of(flash_src(configs={} if defer else {"tl.disable_deferred_row_sum": True}))
    loop = FLC.ptx_main_loop(ptx)
    full = set(re.findall(r"mov\.[ub]32\s+(%r\d+), -1;", ptx)) | {"-1"}
    shfl = [x for x in loop if x.startswith("shfl.sync.bfly")]
    assert len(shfl) == (4 if defer else 8), shfl
    for x in shfl:
        assert x.rstrip(";").split(",")[-1].strip() in full, x
    assert not any("activemask" in x or x.startswith("match") for x in loop)


@pytest.mark.skipif(not FLC.cuobjdump(), reason="no cuobjdump (set TL_CUOBJDUMP to count SASS)")
def test_sass_loop_per_kv_block():
    """B8 H16 S4096 D128's loop (bench/flash_loop_counts.py): 812 SASS instructions per KV block
    before (2026-11-27), 501 after, 491 with the row sums deferred (4 SHFL.BFLY, their FADDs);
    none of the removed forms is back."""
    src, _, cubin, _ = FLC.flash_kernel()
    body = FLC.sass_main_loop(FLC.sass_of(cubin))
    assert len(body) <= 500, len(body)
    assert body.count("SHFL.BFLY") == 4
    for op in ("FSETP.GEU.AND", "PRMT", "MATCH.ANY", "BRA.DIV"):
        assert op not in body, op
    assert body.count("R2UR") <= 2  # 16 before: a copy of the Q descriptor before every Q K^T wgmma
    assert body.count("MUFU.EX2") == 66 and body.count("HGMMA.64x128x16.F32") == 16


@pytest.mark.skipif(not FLC.cuobjdump(), reason="no cuobjdump (set TL_CUOBJDUMP to count SASS)")
def test_sass_loop_per_kv_block_causal():
    """Causal (both versions of the unswitched mask nest counted): 704 SASS instructions per KV
    block with the previous session's code (FLC.PREVIOUS: no loop fence elision, no zero-starting
    wgmma, row sums every block), 663 now: no proxy fence (MEMBAR), no clearing of S (CS2R) and 4
    of the 8 shuffles left in the loop."""
    _, _, cubin, _ = FLC.flash_kernel(True)
    body = FLC.sass_main_loop(FLC.sass_of(cubin))
    assert len(body) <= 680, len(body)
    for op in ("CS2R", "MEMBAR.ALL.CTA", "FENCE.VIEW.ASYNC.S"):
        assert op not in body, op
    assert body.count("SHFL.BFLY") == 4 and body.count("HGMMA.64x128x16.F32") == 16
    _, _, cubin, _ = FLC.flash_kernel(True, FLC.PREVIOUS)
    old = FLC.sass_main_loop(FLC.sass_of(cubin))
    assert "CS2R" in old and body.count("SHFL.BFLY") < old.count("SHFL.BFLY") and len(old) > len(body) + 30


@pytest.mark.parametrize("causal", [False, True])
def test_before_variant_of_the_gpu_ab_still_applies(causal):
    """bench/gpu_hopper_variants.py flash times the old kernel (flash_before) next to the new one: the
    edits must still find what they revert, and the result must compile to the old instruction forms."""
    src, _, _, _ = FLC.flash_kernel(causal, FLC.PREVIOUS)
    old = FLC.flash_before(src)
    assert "static_cast<tl::half_t>(acc_s[" in old and "tl::copy_cast<2>" not in old
    assert "tl::max(tl::max((-tl::numeric_limits<float>::infinity()), acc_s[0]), acc_s[1])" in old
    assert "(((0.0f) + acc_s[0]) + acc_s[1])" in old
    ptx = ptx_of(old)
    assert "ex2.approx.f32" in ptx and "ex2.approx.ftz.f32" not in ptx
    if FLC.cuobjdump():
        r = _core.cuda.compile(old, "kernel.cu", "sm_90a", False, False, [])
        body = FLC.sass_main_loop(FLC.sass_of(r["cubin"]))
        assert "R2UR" in body and "FSETP.GEU.AND" in body
        assert causal or "PRMT" in body  # P carried across the back-edge only in the overlapped loop


def cast_pairs(M, N, out_dtype):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), out_dtype)):
        with T.Kernel(1, threads=128):
            a = T.alloc_fragment((M, N), "float32")
            b = T.alloc_fragment((M, N), out_dtype)
            T.copy(A, a)
            for i, j in T.Parallel(M, N):
                a[i, j] = a[i, j] * 3.0
            T.copy(a, b)
            T.copy(b, B)
    return main


@pytest.mark.parametrize("out_dtype", ["float16", "bfloat16", "float8_e4m3"])
def test_fragment_cast_in_groups_matches_numpy(out_dtype):
    """The grouped conversion (pairs into 16-bit types, fours into 8-bit ones) on the emulator."""
    import ml_dtypes
    np_t = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float8_e4m3": ml_dtypes.float8_e4m3fn}[out_dtype]
    f = cast_pairs(64, 32, out_dtype)
    src = build(f, "sm_90a")["source"]
    assert f"tl::copy_cast<{2 if out_dtype != 'float8_e4m3' else 4}>" in src
    x = rng.uniform(-4, 4, (64, 32)).astype(np.float32)
    out = np.zeros((64, 32), np_t)
    r = EmuRunner(f, arch="sm_90a")
    (_, got) = r(x, out)
    ref = (x * np.float32(3.0)).astype(np_t)
    np.testing.assert_array_equal(np.asarray(got).astype(np.float64), ref.astype(np.float64))


def exp2_kernel(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=128):
            for i in T.Parallel(n):
                B[i] = T.exp2(A[i])
    return main


@pytest.mark.gpu
@pytest.mark.parametrize("subnormal", [False, True])
def test_exp2_results_on_the_gpu(subnormal):
    """Within [-126, 128) both forms are exp2f's (2 ulp); below -126 the default gives +0 and
    TL_DISABLE_EXP2_FTZ the subnormal; -inf, inf and NaN as exp2f."""
    from cuda_util import Runner
    x = np.concatenate([np.linspace(-149.5, 127.9, 4093), [-np.inf, np.inf, np.nan]]).astype(np.float32)
    cfg = {"tl.disable_exp2_ftz": True} if subnormal else {}
    (_, got) = Runner(exp2_kernel(x.size), configs=cfg)(x, np.zeros_like(x))
    ref = np.exp2(x.astype(np.float64))
    normal = (x >= -126) & np.isfinite(x)
    assert np.all(np.abs(got[normal] - ref[normal]) <= 2.5 * np.spacing(ref[normal].astype(np.float32)))
    low = (x < -126) & np.isfinite(x)
    if subnormal:
        assert np.all(np.abs(got[low] - ref[low]) <= 2.0 ** -149 * 2)
    else:
        assert np.all(got[low] == 0)
    assert got[-3] == 0 and got[-2] == np.inf and np.isnan(got[-1])
