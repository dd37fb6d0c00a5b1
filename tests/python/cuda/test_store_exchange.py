"""Fragment stores with lanes exchanging their groups (src/target/cuda/cuda_copy.cc,
store_fragment_exchanged; include/tl/cuda/copy.h, tl::store_exchange): the mma / wgmma accumulator
stored to global memory with one 16-byte store per lane instead of 4-byte ones. Checked for the
form chosen (source), and for values on the emulator and, in the GPU tier, on the device, against
float64 references; the fallback (ragged tiles, TL_DISABLE_STORE_EXCHANGE) keeps the old stores.
On sm_90a the warp-specialized GEMMs here store through TMA by default (test_tma_store.py): they are
compiled with TL_DISABLE_TMA_STORE, the register store this file is about.
"""
import re

import ml_dtypes
import numpy as np
import pytest

import cuda_kernels as K
from cuda_util import EmuRunner, Runner, build, device_arch, has_gpu, requires_nvrtc

rng = np.random.default_rng(1607)
KINDS = ["emu", pytest.param("gpu", marks=pytest.mark.gpu)]
DT = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32}

# name: (arch, matmul kwargs, M, N, K, the store form expected)
CASES = {
    "wgmma_fp16": ("sm_90a", dict(block_M=128, block_N=256, block_K=64, threads=256, num_stages=3), 256, 512, 128,
                   "tl::store_exchange<4, 2, 4>"),
    "wgmma_bf16": ("sm_90a", dict(dtype="bfloat16", block_M=128, block_N=128, block_K=64, threads=256, num_stages=3),
                   128, 256, 192, "tl::store_exchange<4, 2, 4>"),
    "wgmma_fp32_out": ("sm_90a", dict(out_dtype="float32", block_M=64, block_N=128, block_K=64, threads=128,
                                      num_stages=2), 128, 256, 128, "tl::store_exchange<2, 2, 4>"),
    "mma_fp16": ("sm_80", dict(block_M=128, block_N=128, block_K=32, threads=128, num_stages=3), 256, 256, 96,
                 "tl::store_exchange<4, 2, 4>"),
    # Rows and columns past the tensor: the stores keep their bounds guards, no exchange.
    "mma_ragged": ("sm_80", dict(block_M=64, block_N=64, block_K=32, threads=128, num_stages=2), 100, 72, 64, None),
}


def base_configs(arch):
    return {"tl.disable_tma_store": True} if arch == "sm_90a" else {}


def case(name):
    arch, kw, M, N, Kd, form = CASES[name]
    dt = DT[kw.get("dtype", "float16")]
    A = rng.standard_normal((M, Kd)).astype(dt)
    B = rng.standard_normal((Kd, N)).astype(dt)
    C = np.full((M, N), np.nan, DT[kw.get("out_dtype") or kw.get("dtype", "float16")])
    ref = A.astype(np.float64) @ B.astype(np.float64)
    return arch, K.matmul(M, N, Kd, **kw), (A, B, C), ref, form


def check(got, ref, kd):
    got = np.asarray(got, dtype=np.float64)
    tol = 2e-2 * np.sqrt(kd / 64)
    bad = ~(np.abs(got - ref) <= tol * (1 + np.abs(ref)))  # NaN (an element never written) is bad too
    assert not bad.any(), f"{bad.sum()} of {bad.size} wrong; max err {np.nanmax(np.abs(got - ref)):.4g}"


@requires_nvrtc
@pytest.mark.parametrize("name", list(CASES))
def test_store_form(name):
    arch, f, _, _, form = case(name)
    src = build(f, arch, base_configs(arch))["source"]
    if form is None:
        assert "store_exchange" not in src
    else:
        assert form in src, re.findall(r"tl::(copy_cast|copy_vec|store_exchange)<[^>]*>", src)[:4]
        # The lane index passed is the lane's place in its group of 4 (or 2) lanes.
        assert re.search(r"store_exchange<\d, 2, 4>\(.*\(tx & [13]\)\);", src)
    off = build(f, arch, configs=dict(base_configs(arch), **{"tl.disable_store_exchange": True}))["source"]
    assert "store_exchange" not in off


@requires_nvrtc
@pytest.mark.parametrize("exchange", [True, False])
@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("kind", KINDS)
def test_store_values(kind, name, exchange):
    arch, f, args, ref, _ = case(name)
    if kind == "gpu" and (not has_gpu() or (arch == "sm_90a" and device_arch() != "sm_90a")):
        pytest.skip("needs an sm_90a GPU for wgmma")
    configs = dict(base_configs(arch), **({} if exchange else {"tl.disable_store_exchange": True}))
    if kind == "emu":
        r = EmuRunner(f, arch=arch, configs=configs)
        (_, _, C) = r(*args)
        assert r.report["races"] == [], r.report["races"]
    else:
        (_, _, C) = Runner(f, configs=configs)(*args)
    check(C, ref, CASES[name][4])
