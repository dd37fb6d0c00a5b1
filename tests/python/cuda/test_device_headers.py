"""The device headers (include/tl/cuda) and the mma layouts (src/layout), checked on the GPU
against numpy / ml_dtypes references; on machines without a GPU every kernel here is still
compiled for sm_80 and sm_90a (test_sources_compile)."""
import fractions
import math
import re

import ml_dtypes
import numpy as np
import pytest

from cuda_util import (COMPILE_ARCHS, DeviceArray, compile_module, cuda, device_arch, has_gpu, requires_gpu,
                       requires_nvrtc)
from tilelang import _core

HEADER = '#include "tl/cuda/all.h"\nusing namespace tl;\n'
SOURCES = {}  # name -> source, for the compile-only test


def source(name):
    def wrap(fn):
        SOURCES[name] = fn()
        return fn

    return wrap


# ------------------------------------------------------------------------------------------------
# mma.sync: the layout library's fragment tables drive the hardware instruction.

MMA = {
    # dtype: (numpy storage, C++ type, K, A elems/thread, B elems/thread, accumulator, instruction)
    "float16": (np.float16, "half_t", 16, 8, 4, "float", "mma_m16n8k16_f16f16f32"),
    "bfloat16": (ml_dtypes.bfloat16, "bfloat16_t", 16, 8, 4, "float", "mma_m16n8k16_bf16bf16f32"),
    "float32": (np.float32, "float", 8, 4, 2, "float", "mma_m16n8k8_tf32tf32f32"),
    "int8": (np.int8, "int8_t", 32, 16, 8, "int32_t", "mma_m16n8k32_s8s8s32"),
}


def mma_source(dtype):
    _, ctype, k, na, nb, acc, instr = MMA[dtype]
    if dtype == "float32":
        load = (f"for (int i = 0; i < {na}; ++i) ar[i] = f32_to_tf32(A[a_idx[lane * {na} + i]]);\n"
                f"  for (int i = 0; i < {nb}; ++i) br[i] = f32_to_tf32(B[b_idx[lane * {nb} + i]]);")
    else:
        load = (f"{ctype} a[{na}], b[{nb}];\n"
                f"  for (int i = 0; i < {na}; ++i) a[i] = A[a_idx[lane * {na} + i]];\n"
                f"  for (int i = 0; i < {nb}; ++i) b[i] = B[b_idx[lane * {nb} + i]];\n"
                f"  memcpy(ar, a, sizeof(a));\n  memcpy(br, b, sizeof(b));")
    return HEADER + f"""
extern "C" __global__ void mma_test(const {ctype}* A, const {ctype}* B, const {acc}* C, {acc}* D,
                                    const int* a_idx, const int* b_idx, const int* c_idx) {{
  const int lane = threadIdx.x;
  uint32_t ar[4], br[2];
  {load}
  {acc} c[4], d[4];
  for (int i = 0; i < 4; ++i) c[i] = C[c_idx[lane * 4 + i]];
  {instr}(d, ar, br, c);
  for (int i = 0; i < 4; ++i) D[c_idx[lane * 4 + i]] = d[i];
}}
"""


for _dt in MMA:
    SOURCES[f"mma_{_dt}"] = mma_source(_dt)


def index_table(operand, dtype, cols):
    rows = cuda.mma_fragment_table(operand, dtype)
    per_lane = max(r[1] for r in rows) + 1
    table = np.zeros((32, per_lane), np.int32)
    for lane, reg, row, col in rows:
        table[lane, reg] = row * cols + col
    return table


def round_tf32(x):
    """cvt.rna.tf32.f32: keep 10 mantissa bits, ties away from zero."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x1000) & 0xFFFFE000
    return bits.astype(np.uint32).view(np.float32)


@requires_gpu
@pytest.mark.parametrize("dtype", list(MMA))
def test_mma_fragments_on_hardware(dtype):
    storage, _, k, na, nb, acc, _ = MMA[dtype]
    rng = np.random.default_rng(7)
    if dtype == "int8":
        A = rng.integers(-128, 128, (16, k)).astype(np.int8)
        B = rng.integers(-128, 128, (k, 8)).astype(np.int8)
        C = rng.integers(-1000, 1000, (16, 8)).astype(np.int32)
    else:
        A = rng.standard_normal((16, k)).astype(storage)
        B = rng.standard_normal((k, 8)).astype(storage)
        C = rng.standard_normal((16, 8)).astype(np.float32)
    a_idx, b_idx, c_idx = index_table("A", dtype, k), index_table("B", dtype, 8), index_table("C", dtype, 8)
    assert a_idx.shape == (32, na) and b_idx.shape == (32, nb) and c_idx.shape == (32, 4)
    mod, _ = compile_module(SOURCES[f"mma_{dtype}"])
    dA, dB, dC = DeviceArray(A), DeviceArray(B), DeviceArray(C)
    dD = DeviceArray.empty((16, 8), C.dtype)
    idx = [DeviceArray(t) for t in (a_idx, b_idx, c_idx)]
    mod.launch("mma_test", [1], [32], [dA.arg(), dB.arg(), dC.arg(), dD.arg()] + [t.arg() for t in idx])
    D = dD.numpy()
    if dtype == "int8":
        np.testing.assert_array_equal(D, A.astype(np.int64) @ B.astype(np.int64) + C)
        return
    a64, b64 = A.astype(np.float64), B.astype(np.float64)
    if dtype == "float32":
        a64, b64 = round_tf32(A).astype(np.float64), round_tf32(B).astype(np.float64)
    ref = a64 @ b64 + C
    bound = 1e-5 * (np.abs(a64) @ np.abs(b64) + np.abs(C)) + 1e-6
    assert np.all(np.abs(D - ref) <= bound), np.max(np.abs(D - ref))


# ------------------------------------------------------------------------------------------------
# ldmatrix

@source("ldmatrix")
def _ldmatrix_source():
    kernels = []
    for num in (1, 2, 4):
        for trans in (0, 1):
            kernels.append(f"""
extern "C" __global__ void ldsm_{num}_{trans}(const unsigned short* src, unsigned* out) {{
  __shared__ alignas(16) unsigned short s[4 * 64];
  for (int i = threadIdx.x; i < 256; i += 32) s[i] = src[i];
  __syncthreads();
  const int t = threadIdx.x;
  uint32_t r[4] = {{0, 0, 0, 0}};
  ldmatrix<{num}, {"true" if trans else "false"}>(r, s + ((t / 8) % {num}) * 64 + (t % 8) * 8);
  for (int m = 0; m < 4; ++m) out[t * 4 + m] = r[m];
}}""")
    return HEADER + "\n".join(kernels)


@requires_gpu
@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [0, 1])
def test_ldmatrix(num, trans):
    mod, _ = compile_module(SOURCES["ldmatrix"])
    src = np.arange(256, dtype=np.uint16) * 3 + 1
    d_src, d_out = DeviceArray(src), DeviceArray.empty((32, 4), np.uint32)
    mod.launch(f"ldsm_{num}_{trans}", [1], [32], [d_src.arg(), d_out.arg()])
    out = d_out.numpy()
    mats = src.reshape(4, 8, 8)
    for t in range(32):
        for m in range(num):
            r, c = t // 4, 2 * (t % 4)
            lo, hi = (mats[m, c, r], mats[m, c + 1, r]) if trans else (mats[m, r, c], mats[m, r, c + 1])
            assert out[t, m] == int(lo) | (int(hi) << 16), (t, m)


# ------------------------------------------------------------------------------------------------
# cp.async with zero fill

@source("cp_async")
def _cp_async_source():
    body = []
    for nbytes in (4, 8, 16):
        body.append(f"""
extern "C" __global__ void cp_{nbytes}(const uint8_t* src, uint8_t* out, int n_valid, int predicated) {{
  __shared__ alignas(16) uint8_t s[128 * 16];
  const int t = threadIdx.x;
  for (int i = t; i < 128 * 16; i += 128) s[i] = 0xAB;
  __syncthreads();
  const bool valid = t < n_valid;
  if (predicated) {{
    cp_async_zfill<{nbytes}>(s + t * {nbytes}, valid ? src + t * {nbytes} : src, valid);
  }} else if (valid) {{
    cp_async<{nbytes}>(s + t * {nbytes}, src + t * {nbytes});
  }}
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();
  for (int i = t; i < 128 * 16; i += 128) out[i] = s[i];
}}""")
    return HEADER + "\n".join(body)


@requires_gpu
@pytest.mark.parametrize("nbytes", [4, 8, 16])
@pytest.mark.parametrize("predicated", [0, 1])
def test_cp_async(nbytes, predicated):
    mod, _ = compile_module(SOURCES["cp_async"])
    rng = np.random.default_rng(nbytes)
    src = rng.integers(1, 255, 128 * 16, dtype=np.uint8)
    n_valid = 77
    d_src, d_out = DeviceArray(src), DeviceArray.empty(128 * 16, np.uint8)
    mod.launch(f"cp_{nbytes}", [1], [128], [d_src.arg(), d_out.arg(), ("i32", n_valid), ("i32", predicated)])
    out = d_out.numpy()
    np.testing.assert_array_equal(out[: n_valid * nbytes], src[: n_valid * nbytes])
    tail = out[n_valid * nbytes: 128 * nbytes]
    np.testing.assert_array_equal(tail, 0 if predicated else 0xAB)
    np.testing.assert_array_equal(out[128 * nbytes:], 0xAB)


# ------------------------------------------------------------------------------------------------
# Reductions

ALLREDUCE_CASES = [
    # (extent, stride, threads): warp butterflies, partial warps, warps + shared, shared only
    (4, 1, 128), (32, 1, 128), (8, 4, 128), (2, 16, 64), (16, 1, 48), (4, 32, 128), (128, 1, 128),
    (8, 16, 128), (3, 16, 48), (6, 1, 96), (5, 8, 40), (2, 64, 256), (7, 1, 7),
]
ALLREDUCE_TYPES = {"float": np.float32, "double": np.float64, "half_t": np.float16, "int32_t": np.int32}


def _ar_name(op, e, s, t, ct):
    return f"ar_{op}_{e}_{s}_{t}_{ct}"


@source("allreduce")
def _allreduce_source():
    out = [HEADER]
    for e, s, t in ALLREDUCE_CASES:
        for ct in ALLREDUCE_TYPES:
            for op in ("SumOp", "MaxOp"):
                out.append(f"""
extern "C" __global__ void {_ar_name(op, e, s, t, ct)}(const {ct}* x, {ct}* y) {{
  __shared__ {ct} ws[{t}];
  const int tid = threadIdx.x, i = blockIdx.x * {t} + tid;
  y[i] = allreduce<{op}, {e}, {s}, {t}>(x[i], tid, ws);
}}""")
    out.append("""
extern "C" __global__ void warp_width_sum(const float* x, float* y, int width) {
  y[threadIdx.x] = warp_allreduce_width<SumOp>(x[threadIdx.x], width, warp_mask_for(blockDim.x, 0));
}""")
    return "\n".join(out)


@requires_gpu
@pytest.mark.parametrize("case", ALLREDUCE_CASES, ids=lambda c: "x".join(map(str, c)))
def test_allreduce(case):
    e, s, t = case
    mod, _ = compile_module(SOURCES["allreduce"])
    rng = np.random.default_rng(e * 1000 + s * 10 + t)
    blocks = 3
    for ct, npt in ALLREDUCE_TYPES.items():
        for op in ("SumOp", "MaxOp"):
            if npt == np.int32:
                x = rng.integers(-1000, 1000, blocks * t).astype(np.int32)
            else:
                x = (rng.standard_normal(blocks * t) * 4).astype(npt)
            dx, dy = DeviceArray(x), DeviceArray.empty(blocks * t, npt)
            mod.launch(_ar_name(op, e, s, t, ct), [blocks], [t], [dx.arg(), dy.arg()])
            y = dy.numpy()
            xb = x.reshape(blocks, t).astype(np.float64)
            yb = y.reshape(blocks, t)
            for tid in range(t):
                base = tid - ((tid // s) % e) * s
                members = [base + i * s for i in range(e)]
                vals = xb[:, members]
                ref = vals.sum(axis=1) if op == "SumOp" else vals.max(axis=1)
                if op == "MaxOp" or npt == np.int32:
                    np.testing.assert_array_equal(yb[:, tid].astype(np.float64), ref, err_msg=f"{ct} {op} t{tid}")
                else:
                    tol = {np.float16: 2e-2, np.float32: 1e-5, np.float64: 1e-12}[npt]
                    np.testing.assert_allclose(yb[:, tid].astype(np.float64), ref, rtol=tol,
                                               atol=tol * np.abs(vals).sum(axis=1).max(), err_msg=f"{ct} t{tid}")
                # Every member of a group gets the same bits.
                assert np.all(yb[:, members] == yb[:, [base]]), (ct, op, tid)


@requires_gpu
@pytest.mark.parametrize("threads", [32, 20])
def test_warp_allreduce_any_width(threads):
    mod, _ = compile_module(SOURCES["allreduce"])
    x = np.random.default_rng(threads).standard_normal(threads).astype(np.float32)
    dx = DeviceArray(x)
    for width in range(1, threads + 1):
        dy = DeviceArray.empty(threads, np.float32)
        mod.launch("warp_width_sum", [1], [threads], [dx.arg(), dy.arg(), ("i32", width)])
        np.testing.assert_allclose(dy.numpy(), np.full(threads, x[:width].astype(np.float64).sum()), rtol=1e-5,
                                   atol=1e-5, err_msg=f"width {width}")


# ------------------------------------------------------------------------------------------------
# Atomics

@source("atomics")
def _atomics_source():
    out = [HEADER]
    for ct in ("float", "double", "half_t", "bfloat16_t"):
        out.append(f"""
extern "C" __global__ void atomic_add_{ct}({ct}* acc, const {ct}* x, int n_acc) {{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomic_add(acc + i % n_acc, x[i]);
}}""")
    for op in ("max", "min"):
        out.append(f"""
extern "C" __global__ void atomic_{op}_float(float* acc, const float* x, int n_acc) {{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomic_{op}(acc + i % n_acc, x[i]);
}}""")
    return "\n".join(out)


@requires_gpu
@pytest.mark.parametrize("ctype,npt", [("float", np.float32), ("double", np.float64), ("half_t", np.float16),
                                       ("bfloat16_t", ml_dtypes.bfloat16)])
@pytest.mark.parametrize("software", [False, True], ids=["native", "compute_80"])
def test_atomic_add(ctype, npt, software):
    # compute_80 PTX, JIT-compiled by the driver, runs the pre-sm_90 paths (bf16 compare-and-swap).
    mod, _ = compile_module(SOURCES["atomics"], arch="sm_80", ptx=True) if software else compile_module(
        SOURCES["atomics"])
    rng = np.random.default_rng(3)
    n_acc, n = 7, 64 * 7 * 8
    # Small integers keep every partial sum exact in 16-bit floats: any order gives the same result.
    x = rng.integers(-2, 3, n).astype(npt) if npt in (np.float16, ml_dtypes.bfloat16) else rng.standard_normal(n).astype(npt)
    acc0 = rng.integers(-3, 4, n_acc).astype(npt)
    dacc, dx = DeviceArray(acc0), DeviceArray(x)
    mod.launch(f"atomic_add_{ctype}", [n // 64], [64], [dacc.arg(), dx.arg(), ("i32", n_acc)])
    got = dacc.numpy().astype(np.float64)
    ref = acc0.astype(np.float64) + x.astype(np.float64).reshape(-1, n_acc).sum(axis=0)
    if npt in (np.float16, ml_dtypes.bfloat16):
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-4)


@requires_gpu
@pytest.mark.parametrize("op", ["max", "min"])
def test_atomic_max_min_float(op):
    mod, _ = compile_module(SOURCES["atomics"])
    x = np.random.default_rng(5).standard_normal(4096).astype(np.float32)
    n_acc = 5
    init = np.full(n_acc, -np.inf if op == "max" else np.inf, np.float32)
    dacc, dx = DeviceArray(init), DeviceArray(x)
    mod.launch(f"atomic_{op}_float", [32], [128], [dacc.arg(), dx.arg(), ("i32", n_acc)])
    # Element i goes to accumulator i % n_acc (4096 is not a multiple of 5: the slices differ in length).
    pick = np.max if op == "max" else np.min
    ref = np.array([pick(x[k::n_acc]) for k in range(n_acc)], np.float32)
    np.testing.assert_array_equal(dacc.numpy(), ref)


# ------------------------------------------------------------------------------------------------
# Conversions: every 16-bit / 8-bit pattern to float, and rounding from float (ties included)

FORMATS = {
    # name: (C++ type, bits type, numpy type, largest finite)
    "f16": ("half_t", np.uint16, np.float16, 65504.0),
    "bf16": ("bfloat16_t", np.uint16, ml_dtypes.bfloat16, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)),
    "e4m3": ("fp8_e4m3_t", np.uint8, ml_dtypes.float8_e4m3fn, 448.0),
    "e5m2": ("fp8_e5m2_t", np.uint8, ml_dtypes.float8_e5m2, 57344.0),
}


@source("conversions")
def _conversion_source():
    out = [HEADER]
    for name, (ct, _, _, _) in FORMATS.items():
        bits = "unsigned short" if ct in ("half_t", "bfloat16_t") else "unsigned char"
        out.append(f"""
extern "C" __global__ void {name}_to_f32(const {bits}* in, float* out, int n) {{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<float>({ct}::from_bits(in[i]));
}}
extern "C" __global__ void f32_to_{name}(const float* in, {bits}* out, int n) {{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = {ct}(in[i]).bits;
}}
extern "C" __global__ void f64_to_{name}(const double* in, {bits}* out, int n) {{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = {ct}(in[i]).bits;
}}""")
    return "\n".join(out)


def _run_map(mod, name, x, out_dtype):
    dx, dy = DeviceArray(x), DeviceArray.empty(x.shape, out_dtype)
    mod.launch(name, [(x.size + 255) // 256], [256], [dx.arg(), dy.arg(), ("i32", x.size)])
    return dy.numpy()


def _rounding_inputs(npt, bits_t):
    """Every finite value of the format, the midpoints between neighbours (round-to-even ties),
    points just off the midpoints, random floats over the whole range, and specials."""
    vals = np.arange(np.iinfo(bits_t).max + 1, dtype=bits_t).view(npt).astype(np.float64)
    vals = np.unique(vals[np.isfinite(vals)])
    mids = (vals[:-1] + vals[1:]) / 2
    rng = np.random.default_rng(11)
    rand = rng.standard_normal(20000) * np.exp2(rng.integers(-30, 20, 20000))
    x = np.concatenate([vals, mids, np.nextafter(mids.astype(np.float32), np.float32(np.inf)),
                        np.nextafter(mids.astype(np.float32), np.float32(-np.inf)), rand,
                        [np.inf, -np.inf, np.nan, 1e30, -1e30, 0.0, -0.0]])
    return x.astype(np.float32)


@requires_gpu
@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("software", [False, True], ids=["native", "compute_80"])
def test_conversions(fmt, software):
    ct, bits_t, npt, fmax = FORMATS[fmt]
    mod, _ = compile_module(SOURCES["conversions"], arch="sm_80", ptx=True) if software else compile_module(
        SOURCES["conversions"])
    # Decoding every bit pattern.
    patterns = np.arange(np.iinfo(bits_t).max + 1, dtype=bits_t)
    got = _run_map(mod, f"{fmt}_to_f32", patterns, np.float32)
    ref = patterns.view(npt).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_array_equal(got[~np.isnan(ref)], ref[~np.isnan(ref)])
    # Rounding from float: nearest even; fp8 saturates to the largest finite value (PTX .satfinite).
    x = _rounding_inputs(npt, bits_t)
    got = _run_map(mod, f"f32_to_{fmt}", x, bits_t).view(npt).astype(np.float64)
    xr = np.clip(x, -fmax, fmax) if fmt in ("e4m3", "e5m2") else x
    ref = xr.astype(npt).astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    ok = ~np.isnan(ref)
    bad = np.nonzero(got[ok] != ref[ok])[0]
    assert bad.size == 0, f"{bad.size} mismatches, e.g. {x[ok][bad[:5]]} -> {got[ok][bad[:5]]} != {ref[ok][bad[:5]]}"


@requires_gpu
@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("software", [False, True], ids=["native", "compute_80"])
def test_f64_conversions_round_once(fmt, software):
    """double -> narrow float rounds once: values a hair off a midpoint of the narrow format would
    round the wrong way through a float round-to-nearest step."""
    ct, bits_t, npt, fmax = FORMATS[fmt]
    mod, _ = compile_module(SOURCES["conversions"], arch="sm_80", ptx=True) if software else compile_module(
        SOURCES["conversions"])
    vals = np.arange(np.iinfo(bits_t).max + 1, dtype=bits_t).view(npt).astype(np.float64)
    vals = np.unique(vals[np.isfinite(vals)])
    mids = (vals[:-1] + vals[1:]) / 2
    rng = np.random.default_rng(5)
    pick = rng.choice(mids.size, min(mids.size, 400), replace=False)
    x = np.concatenate([mids[pick] * (1 + 1e-12), mids[pick] * (1 - 1e-12), mids[pick]])
    got = _run_map(mod, f"f64_to_{fmt}", x, bits_t).view(npt).astype(np.float64)
    ref = np.array([_round_exact(fractions.Fraction(min(max(v, -fmax), fmax)) if fmt in ("e4m3", "e5m2")
                                 else fractions.Fraction(v), npt) for v in x])
    bad = np.nonzero(got != ref)[0]
    assert bad.size == 0, f"{bad.size} mismatches, e.g. {x[bad[:4]]} -> {got[bad[:4]]} != {ref[bad[:4]]}"


@source("e8m0")
def _e8m0_source():
    return HEADER + """
extern "C" __global__ void e8m0_to_f32(const unsigned char* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<float>(fp8_e8_t::from_bits(in[i]));
}
extern "C" __global__ void f32_to_e8m0(const float* in, unsigned char* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fp8_e8_t(in[i]).bits;
}
extern "C" __global__ void f64_to_e8m0(const double* in, unsigned char* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fp8_e8_t(in[i]).bits;
}"""


@requires_gpu
def test_e8m0_conversions():
    """float8_e8m0fnu (tl::fp8_e8_t): every code to float, and float/double to it as ml_dtypes
    rounds (to the nearest power of two, 1.5 up; zero, negatives, inf, NaN and overflow to NaN)."""
    mod, _ = compile_module(SOURCES["e8m0"])
    codes = np.arange(256, dtype=np.uint8)
    got = _run_map(mod, "e8m0_to_f32", codes, np.float32)
    ref = codes.view(ml_dtypes.float8_e8m0fnu).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_array_equal(got[~np.isnan(ref)], ref[~np.isnan(ref)])
    rng = np.random.default_rng(12)
    x = np.concatenate([np.exp2(rng.uniform(-140, 130, 20000)), -np.exp2(rng.uniform(-20, 20, 100)),
                        np.exp2(np.arange(-127, 128)) * 1.5, np.exp2(np.arange(-127, 128)),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 2.0 ** -149]])
    for name, arr in (("f32_to_e8m0", x.astype(np.float32)), ("f64_to_e8m0", x.astype(np.float64))):
        got = _run_map(mod, name, arr, np.uint8)
        np.testing.assert_array_equal(got, arr.astype(ml_dtypes.float8_e8m0fnu).view(np.uint8))


@source("e2m1")
def _e2m1_source():
    return HEADER + """
extern "C" __global__ void e2m1_to_f32(const unsigned char* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<float>(fp4_e2_t::from_bits(in[i]));
}
extern "C" __global__ void f32_to_e2m1(const float* in, unsigned char* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fp4_e2_t(in[i]).bits;
}
extern "C" __global__ void f64_to_e2m1(const double* in, unsigned char* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fp4_e2_t(in[i]).bits;
}
extern "C" __global__ void f16_to_e2m1(const unsigned short* in, unsigned char* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fp4_e2_t(half_t::from_bits(in[i])).bits;
}
// Packed nibbles: thread i rewrites element i of a packed array (neighbours share bytes).
extern "C" __global__ void e2m1_packed_negate(unsigned char* inout, unsigned char* unused, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  fp4_e2x2_t* p = reinterpret_cast<fp4_e2x2_t*>(inout);
  if (i < n) fp4_packed_store(p, i, fp4_e2_t::from_bits(static_cast<uint8_t>(fp4_packed_load(p, i).bits ^ 8u)));
}"""


@requires_gpu
def test_e2m1_conversions():
    """float4_e2m1fn (tl::fp4_e2_t): every code to float, and float/double/half to it as ml_dtypes
    rounds (nearest, ties to the even code, +-6 on overflow and for infinities, NaN to a zero of the
    opposite sign); packed nibble stores from neighbouring threads do not clobber each other."""
    mod, _ = compile_module(SOURCES["e2m1"])
    codes = np.arange(16, dtype=np.uint8)
    got = _run_map(mod, "e2m1_to_f32", codes, np.float32)
    np.testing.assert_array_equal(got, codes.view(ml_dtypes.float4_e2m1fn).astype(np.float32))
    np.testing.assert_array_equal(np.signbit(got), codes >= 8)
    rng = np.random.default_rng(13)
    edges = np.array([0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 5, 6, 7, 1e30], np.float32)
    edges = np.concatenate([edges, np.nextafter(edges, np.float32(0)), np.nextafter(edges, np.float32(np.inf))])
    x = np.concatenate([edges, -edges, rng.uniform(-8, 8, 20000), [np.inf, -np.inf, np.nan, -np.nan, 1e-45]])
    for name, arr in (("f32_to_e2m1", x.astype(np.float32)), ("f64_to_e2m1", x.astype(np.float64) * (1 + 1e-12))):
        got = _run_map(mod, name, arr, np.uint8)
        np.testing.assert_array_equal(got, arr.astype(ml_dtypes.float4_e2m1fn).view(np.uint8))
    h = x.astype(np.float16)
    got = _run_map(mod, "f16_to_e2m1", h.view(np.uint16), np.uint8)
    np.testing.assert_array_equal(got, h.astype(ml_dtypes.float4_e2m1fn).view(np.uint8))
    packed = rng.integers(0, 256, 4096, dtype=np.uint8)
    d = DeviceArray(packed)
    mod.launch("e2m1_packed_negate", [32], [256], [d.arg(), d.arg(), ("i32", 8192)])
    np.testing.assert_array_equal(d.numpy(), packed ^ 0x88)


# ------------------------------------------------------------------------------------------------
# 16-bit arithmetic: one correctly rounded operation each

@source("arith16")
def _arith_source():
    out = [HEADER]
    for ct in ("half_t", "bfloat16_t"):
        out.append(f"""
extern "C" __global__ void arith_{ct}(const {ct}* a, const {ct}* b, const {ct}* c, unsigned short* out, int n) {{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[0 * n + i] = (a[i] + b[i]).bits;
  out[1 * n + i] = (a[i] - b[i]).bits;
  out[2 * n + i] = (a[i] * b[i]).bits;
  out[3 * n + i] = (a[i] / b[i]).bits;
  out[4 * n + i] = fma(a[i], b[i], c[i]).bits;
  out[5 * n + i] = (-a[i]).bits;
  {ct} acc = a[i];
  acc += b[i];
  acc *= 2.0f;
  out[6 * n + i] = acc.bits;
}}""")
    return "\n".join(out)


def _round_exact(fr, npt):
    """Rounds an exact rational to the format (nearest even) through the format's neighbours."""
    info = ml_dtypes.finfo(npt)
    if fr == 0:
        return 0.0
    mant = info.nmant
    emin = int(info.minexp)
    e = max(math.floor(math.log2(abs(fr))) if fr != 0 else emin, emin)
    # Adjust e for log2 rounding at powers of two.
    while abs(fr) >= fractions.Fraction(2) ** (e + 1):
        e += 1
    while e > emin and abs(fr) < fractions.Fraction(2) ** e:
        e -= 1
    ulp = fractions.Fraction(2) ** (e - mant)
    q = fr / ulp
    n = math.floor(q)
    rem = q - n
    if rem > fractions.Fraction(1, 2) or (rem == fractions.Fraction(1, 2) and n % 2 == 1):
        n += 1
    val = float(n * ulp)
    return val if abs(val) <= float(info.max) else math.copysign(math.inf, val)


@requires_gpu
@pytest.mark.parametrize("ctype,npt", [("half_t", np.float16), ("bfloat16_t", ml_dtypes.bfloat16)])
def test_16bit_arithmetic(ctype, npt):
    mod, _ = compile_module(SOURCES["arith16"])
    rng = np.random.default_rng(13)
    n = 3000
    a = (rng.standard_normal(n) * np.exp2(rng.integers(-6, 6, n))).astype(npt)
    b = (rng.standard_normal(n) * np.exp2(rng.integers(-6, 6, n))).astype(npt)
    c = (rng.standard_normal(n) * np.exp2(rng.integers(-6, 6, n))).astype(npt)
    b[b == 0] = npt(1.0)
    da, db, dc = DeviceArray(a), DeviceArray(b), DeviceArray(c)
    dout = DeviceArray.empty((7, n), np.uint16)
    mod.launch(f"arith_{ctype}", [(n + 127) // 128], [128], [da.arg(), db.arg(), dc.arg(), dout.arg(), ("i32", n)])
    got = dout.numpy().view(npt).astype(np.float64)
    a64, b64, c64 = a.astype(np.float64), b.astype(np.float64), c.astype(np.float64)
    # float64 is wide enough that rounding its +,-,*,/ result once more is exact rounding.
    np.testing.assert_array_equal(got[0], (a64 + b64).astype(npt).astype(np.float64))
    np.testing.assert_array_equal(got[1], (a64 - b64).astype(npt).astype(np.float64))
    np.testing.assert_array_equal(got[2], (a64 * b64).astype(npt).astype(np.float64))
    np.testing.assert_array_equal(got[3], (a64 / b64).astype(npt).astype(np.float64))
    fma_ref = [_round_exact(fractions.Fraction(x) * fractions.Fraction(y) + fractions.Fraction(z), npt)
               for x, y, z in zip(a64[:600], b64[:600], c64[:600])]
    np.testing.assert_array_equal(got[4][:600], np.array(fma_ref))
    np.testing.assert_array_equal(got[5], -a64)
    step = (a64 + b64).astype(npt).astype(np.float64)
    np.testing.assert_array_equal(got[6], (step * 2.0).astype(np.float32).astype(npt).astype(np.float64))


# ------------------------------------------------------------------------------------------------
# Math functions

MATH_FUNCS = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "sin": np.sin, "cos": np.cos, "round": np.round, "floor": np.floor, "abs": np.abs,
    "fast_exp": np.exp,
}


@source("math")
def _math_source():
    out = [HEADER]
    for f in MATH_FUNCS:
        out.append(f"""
extern "C" __global__ void math_{f}(const float* x, float* y, const half_t* hx, half_t* hy, int n) {{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {{ y[i] = tl::{f}(x[i]); hy[i] = tl::{f}(hx[i]); }}
}}""")
    return "\n".join(out)


@requires_gpu
@pytest.mark.parametrize("fn", list(MATH_FUNCS))
def test_math(fn):
    mod, _ = compile_module(SOURCES["math"])
    rng = np.random.default_rng(17)
    positive = fn in ("log", "log2", "sqrt", "rsqrt")
    x = rng.uniform(0.01, 20, 4096) if positive else rng.uniform(-10, 10, 4096)
    x[:8] = [0.5, 1.5, 2.5, -0.5, -2.5, 3.0, 1.0, 2.0] if not positive else x[:8]
    x = x.astype(np.float32)
    hx = x.astype(np.float16)
    dx, dy, dhx, dhy = DeviceArray(x), DeviceArray.empty(x.shape, np.float32), DeviceArray(hx), DeviceArray.empty(
        x.shape, np.float16)
    mod.launch(f"math_{fn}", [16], [256], [dx.arg(), dy.arg(), dhx.arg(), dhy.arg(), ("i32", x.size)])
    ref = MATH_FUNCS[fn](x.astype(np.float64))
    rtol = 1e-5 if fn == "fast_exp" else 2e-6
    atol = 2e-6 if fn in ("sin", "cos", "tanh") else 0
    np.testing.assert_allclose(dy.numpy(), ref, rtol=rtol, atol=atol)
    href = MATH_FUNCS[fn](hx.astype(np.float64))
    # One rounding to half on top of a few-ulp float result: within one half ulp of the exact value.
    np.testing.assert_allclose(dhy.numpy().astype(np.float64), href, rtol=2 ** -10, atol=2 ** -14)


# ------------------------------------------------------------------------------------------------
# device_assert, printf, dynamic shared memory, architecture mismatch

@source("debug")
def _debug_source():
    return HEADER + r"""
extern "C" __global__ void check_positive(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    device_assert(x[i] > 0.0f, "example.py", 42, "x must be positive");
    y[i] = sqrtf(fabsf(x[i]));
  }
}
extern "C" __global__ void say(float v, int k) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    print_value("value", v);
    print_value("count", k);
    print_value("half", half_t(1.5f));
  }
}
extern "C" __global__ void big_smem(float* out, int n) {
  extern __shared__ float s[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = static_cast<float>(i);
  __syncthreads();
  out[threadIdx.x] = s[n - 1 - threadIdx.x];
}
"""


@requires_gpu
def test_device_assert_raises_and_process_survives():
    mod, _ = compile_module(SOURCES["debug"])
    assert mod.has_error_slot
    n = 4096
    x = np.abs(np.random.default_rng(1).standard_normal(n)).astype(np.float32) + 0.1
    x[1000] = -1.0  # block 3, thread 232 with 256 threads per block
    dx, dy = DeviceArray(x), DeviceArray.empty(n, np.float32)
    mod.launch("check_positive", [n // 256], [256], [dx.arg(), dy.arg(), ("i32", n)])
    with pytest.raises(_core.DeviceRuntimeError) as info:
        mod.check_device_errors("check_positive")
    msg = str(info.value)
    assert msg == ("device_assert failed in kernel 'check_positive' at example.py:42 (block (3, 0, 0), thread "
                   "(232, 0, 0)): x must be positive"), msg
    # The slot was cleared and the context is healthy: a good launch passes and computes.
    x[1000] = 4.0
    dx2 = DeviceArray(x)
    mod.launch("check_positive", [n // 256], [256], [dx2.arg(), dy.arg(), ("i32", n)])
    mod.check_device_errors("check_positive")
    np.testing.assert_allclose(dy.numpy(), np.sqrt(x), rtol=1e-6)


@requires_gpu
def test_printf(capfd):
    mod, _ = compile_module(SOURCES["debug"])
    mod.launch("say", [2], [32], [("f32", 2.5), ("i32", 7)])
    cuda.synchronize(0)
    out = capfd.readouterr().out
    assert "value: block (0, 0, 0) thread (0, 0, 0): 2.500000 (float32)" in out, out
    assert "count: block (0, 0, 0) thread (0, 0, 0): 7 (int32)" in out, out
    assert "1.500000 (float16)" in out, out
    assert out.count("value:") == 1


@requires_gpu
def test_dynamic_shared_memory_beyond_48k():
    mod, _ = compile_module(SOURCES["debug"])
    info = cuda.device_info(0)
    smem = min(150 * 1024, info["max_smem_per_block_optin"])
    n = smem // 4
    dout = DeviceArray.empty(256, np.float32)
    mod.launch("big_smem", [1], [256], [dout.arg(), ("i32", n)], smem=smem)
    np.testing.assert_array_equal(dout.numpy(), (n - 1 - np.arange(256)).astype(np.float32))
    with pytest.raises(_core.ResourceError, match="shared memory"):
        mod.launch("big_smem", [1], [256], [dout.arg(), ("i32", n)], smem=info["max_smem_per_block_optin"] + 1024)


@requires_gpu
def test_wrong_architecture_is_explained():
    info = cuda.device_info(0)
    other = "sm_80" if info["cc"][0] != 8 else "sm_90"
    r = cuda.compile(SOURCES["debug"], arch=other)
    with pytest.raises(_core.DeviceRuntimeError, match="another architecture"):
        cuda.Module(r["cubin"], 0)


@requires_gpu
def test_device_facts():
    info = cuda.device_info(0)
    assert info["sm_count"] > 0 and info["cc"][0] >= 8
    assert device_arch() in ("sm_80", "sm_86", "sm_87", "sm_89", "sm_90a")
    p = cuda.malloc(1024, 0)
    assert cuda.pointer_device(p) == 0
    cuda.free(p, 0)


# ------------------------------------------------------------------------------------------------
# Compile-only (CI has NVRTC but no GPU)

@requires_nvrtc
@pytest.mark.parametrize("arch", COMPILE_ARCHS)
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_sources_compile(name, arch):
    r = cuda.compile(SOURCES[name], name=name + ".cu", arch=arch)
    assert r["cubin"][:4] == b"\x7fELF"
    for u in r["usage"]:
        assert u["spill_store_bytes"] == 0, (u, r["log"])


def _cuobjdump():
    import shutil
    return shutil.which("cuobjdump") or (shutil.which("cuobjdump", path="/usr/local/cuda/bin"))


@requires_nvrtc
@pytest.mark.gpu  # cuobjdump comes with the GPU machine
@pytest.mark.skipif(_cuobjdump() is None, reason="cuobjdump not installed")
@pytest.mark.parametrize("arch", COMPILE_ARCHS)
def test_sass_uses_tensor_cores_without_local_memory(tmp_path, arch):
    import subprocess
    for dtype, op in (("float16", "HMMA"), ("bfloat16", "HMMA"), ("float32", "HMMA"), ("int8", "IMMA")):
        r = cuda.compile(SOURCES[f"mma_{dtype}"], arch=arch)
        path = tmp_path / f"mma_{dtype}_{arch}.cubin"
        path.write_bytes(r["cubin"])
        sass = subprocess.run([_cuobjdump(), "-sass", str(path)], capture_output=True, text=True, check=True).stdout
        assert re.search(rf"\b{op}\.", sass), sass[:2000]
        assert not re.search(r"\b(LDL|STL)\b", sass), "local memory in " + dtype
