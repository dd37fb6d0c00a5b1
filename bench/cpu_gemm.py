"""cpu GEMM: the TileLang tiled GEMM (T.copy into shared tiles, T.gemm on tiles, T.Pipelined over K)
compiled for cpu, against numpy (OpenBLAS) and oneDNN in the same run.

  fp32 C = A @ B at 512 / 1024 / 2048 / 4096: vs numpy float32 matmul (and oneDNN f32 matmul when
  libdnnl is installed);
  bf16 A, B with an fp32 C: vs oneDNN's bf16 matmul when libdnnl is installed, else vs numpy fp32
  (numpy has no bf16 GEMM; the row says which peer it is).

The block configuration is the cpu one documented in docs/PERFORMANCE.md (CPU_CONFIG below): the
kernel source is TileLang's, only block_M / block_N / block_K differ from the GPU examples.
"""
import ctypes
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402

# block_M, block_N, block_K for cpu (a sweep on this machine: 128x128x32 (the GPU examples' tiles)
# reaches ~1.25x numpy at 2048, 128..256 x 256 x 64..128 ~1.5-1.7x): a 256 x 256 fp32 C tile (256 KiB,
# on the heap, in L2) amortizes the copies of A and B tiles over twice the work of a 128-row tile,
# B_shared rows are 4 micro-kernel strips wide, and 64 (bf16: 128) k per step keeps a micro-kernel
# strip of B in L1. 2048 / 256 squared = 64 blocks for 2 workers. T.use_swizzle(panel_size=4), as in
# TileLang's GEMM examples, groups the block order by 4 rows of tiles (their A tiles stay in L3).
CPU_CONFIG = {"float32": (256, 256, 64), "bfloat16": (256, 256, 128)}


def matmul(M, N, K, block_M, block_N, block_K, dtype="float32", accum_dtype="float32"):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), accum_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.use_swizzle(panel_size=4)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])
    return gemm


class OneDNN:
    """oneDNN matmul through bench/cpu_onednn.c, or None when libdnnl is not installed."""

    @staticmethod
    def load():
        src = os.path.join(common.HERE, "cpu_onednn.c")
        lib = os.path.join(common.ROOT, "build", "bench", "libcpu_onednn.so")
        if not os.path.exists("/usr/include/oneapi/dnnl/dnnl.h"):
            return None
        if not os.path.exists(lib) or os.path.getmtime(lib) < os.path.getmtime(src):
            os.makedirs(os.path.dirname(lib), exist_ok=True)
            r = subprocess.run(["gcc", "-O2", "-shared", "-fPIC", src, "-o", lib, "-ldnnl"], capture_output=True,
                               text=True)
            if r.returncode != 0:
                print(f"  oneDNN peer unavailable: {r.stderr.strip()[:300]}")
                return None
        dll = ctypes.CDLL(lib)
        dll.onednn_matmul_create.restype = ctypes.c_void_p
        dll.onednn_matmul_create.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_long, ctypes.c_int]
        dll.onednn_matmul_impl.restype = ctypes.c_char_p
        dll.onednn_matmul_impl.argtypes = [ctypes.c_void_p]
        dll.onednn_matmul_run.restype = ctypes.c_int
        dll.onednn_matmul_run.argtypes = [ctypes.c_void_p] * 4
        return dll

    def __init__(self, dll, m, n, k, bf16):
        self.dll = dll
        self.h = dll.onednn_matmul_create(m, n, k, 1 if bf16 else 0)
        if not self.h:
            raise RuntimeError("oneDNN could not create the matmul primitive")
        self.impl = dll.onednn_matmul_impl(self.h).decode()

    def __call__(self, a, b, c):
        if self.dll.onednn_matmul_run(self.h, a.ctypes.data, b.ctypes.data, c.ctypes.data) != 0:
            raise RuntimeError("oneDNN matmul failed")


def check(c, a, b, what, rtol):
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = np.abs(c - ref).max() / max(np.abs(ref).max(), 1e-30)
    if not err < rtol:
        raise AssertionError(f"{what}: relative error {err:.2e} exceeds {rtol:.0e}")
    return err


def main(sizes=(512, 1024, 2048, 4096), rounds=5):
    import ml_dtypes
    threads = tilelang._core.hardware_threads()
    table = common.Table("cpu_gemm", f"cpu GEMM, {threads} threads (GFLOP/s; ratio = ours / peer, same run)",
                         ["workload", "config", "ours GFLOP/s", "peer", "peer GFLOP/s", "ratio", "vs oneDNN f32"])
    dnnl = OneDNN.load()
    rng = np.random.default_rng(0)
    for n in sizes:
        bm, bn, bk = CPU_CONFIG["float32"]
        kernel = tilelang.compile(matmul(n, n, n, bm, bn, bk), target="cpu")
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        c, c_np = np.empty((n, n), np.float32), np.empty((n, n), np.float32)
        kernel(a, b, c)
        if n <= 2048:  # a float64 reference of 4096^3 takes too long for a benchmark run
            check(c, a, b, f"fp32 GEMM {n}", 1e-5)
        fns = {"ours": lambda: kernel(a, b, c), "numpy": lambda: np.matmul(a, b, out=c_np)}
        if dnnl:
            d = OneDNN(dnnl, n, n, n, False)
            c_d = np.empty((n, n), np.float32)
            fns["onednn"] = lambda: d(a, b, c_d)
        ms = common.interleaved(fns, rounds=rounds if n < 4096 else max(2, rounds // 2))
        flops = 2.0 * n ** 3
        vs_dnnl = f"{ms.ratio('onednn', 'ours'):.2f}" if dnnl else "n/a"
        table.add(f"fp32 {n}^3", f"{bm}x{bn}x{bk}", common.gflops(flops, ms["ours"]), "numpy",
                  common.gflops(flops, ms["numpy"]), ms.ratio("numpy", "ours"), vs_dnnl)
        if dnnl and n == sizes[0]:
            table.note(f"oneDNN f32 implementation: {d.impl}")

    # bf16 inputs, fp32 accumulation and output.
    for n in [s for s in sizes if s in (1024, 2048)]:
        bm, bn, bk = CPU_CONFIG["bfloat16"]
        kernel = tilelang.compile(matmul(n, n, n, bm, bn, bk, dtype="bfloat16"), target="cpu")
        a = rng.standard_normal((n, n), dtype=np.float32).astype(ml_dtypes.bfloat16)
        b = rng.standard_normal((n, n), dtype=np.float32).astype(ml_dtypes.bfloat16)
        c, c_peer = np.empty((n, n), np.float32), np.empty((n, n), np.float32)
        kernel(a, b, c)
        check(c, a.astype(np.float32), b.astype(np.float32), f"bf16 GEMM {n}", 1e-5)
        fns = {"ours": lambda: kernel(a, b, c)}
        if dnnl:
            d = OneDNN(dnnl, n, n, n, True)
            d(a, b, c_peer)
            check(c_peer, a.astype(np.float32), b.astype(np.float32), f"oneDNN bf16 GEMM {n}", 1e-5)
            fns["peer"] = lambda: d(a, b, c_peer)
            peer = "oneDNN bf16"
            if n == 1024:
                table.note(f"oneDNN bf16 implementation: {d.impl}")
        else:
            af, bf = a.astype(np.float32), b.astype(np.float32)
            fns["peer"] = lambda: np.matmul(af, bf, out=c_peer)
            peer = "numpy fp32 (no oneDNN)"
        ms = common.interleaved(fns, rounds=rounds)
        flops = 2.0 * n ** 3
        table.add(f"bf16 {n}^3 (fp32 acc)", f"{bm}x{bn}x{bk}", common.gflops(flops, ms["ours"]), peer,
                  common.gflops(flops, ms["peer"]), ms.ratio("peer", "ours"), "")
    table.note("GFLOP/s from median times; ratio = median over rounds of the paired time ratios")
    m = common.machine()
    table.note(f"{m['cpu']}; {m['blas']}; load average at the end {m['load_average']:.1f}")
    table.finish()
    return table


if __name__ == "__main__":
    main()
