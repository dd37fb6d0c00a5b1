"""cpu memory-bound kernels on 64M floats (256 MiB per tensor): element-wise add, row softmax and
RMSNorm written in TileLang (T.Parallel, T.reduce_*, T.exp), against numpy doing the same work in
the same run (into preallocated outputs), and against the measured copy bandwidth.

GB/s counts the bytes a kernel must move once: add reads two tensors and writes one; softmax and
RMSNorm read one and write one. Copy bandwidth is numpy's copyto (glibc memcpy, one thread) and our
own T.copy kernel (all threads)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402

ROWS, COLS = 8192, 8192  # 64M floats
BLOCK = 16384            # elements per block of the 1-D kernels
ROWS_PER_BLOCK = 2       # softmax / RMSNorm rows per block (2 x 32 KiB fragments)


def add_kernel(n, block):
    @T.prim_func
    def add(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
    return add


def copy_kernel(n, block):
    @T.prim_func
    def copy(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
            T.copy(A[bx * block:(bx + 1) * block], B[bx * block:(bx + 1) * block])
    return copy


def softmax_kernel(M, N, block_M):
    @T.prim_func
    def softmax(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            A_local = T.alloc_fragment((block_M, N), "float32")
            row_max = T.alloc_fragment((block_M,), "float32")
            row_sum = T.alloc_fragment((block_M,), "float32")
            T.copy(A[bx * block_M:(bx + 1) * block_M, :], A_local)
            T.reduce_max(A_local, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                A_local[i, j] = T.exp(A_local[i, j] - row_max[i])
            T.reduce_sum(A_local, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                A_local[i, j] /= row_sum[i]
            T.copy(A_local, B[bx * block_M:(bx + 1) * block_M, :])
    return softmax


def rms_norm_kernel(M, N, block_M, eps=1e-6):
    @T.prim_func
    def rms_norm(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            A_local = T.alloc_fragment((block_M, N), "float32")
            A_pow = T.alloc_fragment((block_M, N), "float32")
            A_powsum = T.alloc_fragment((block_M,), "float32")
            T.copy(A[bx * block_M:(bx + 1) * block_M, :], A_local)
            for i, j in T.Parallel(block_M, N):
                A_pow[i, j] = A_local[i, j] * A_local[i, j]
            T.reduce_sum(A_pow, A_powsum, dim=1)
            for i in T.Parallel(block_M):
                A_powsum[i] = T.rsqrt(A_powsum[i] / N + eps)
            for i, j in T.Parallel(block_M, N):
                A_local[i, j] *= A_powsum[i]
            T.copy(A_local, B[bx * block_M:(bx + 1) * block_M, :])
    return rms_norm


class NumpySoftmax:
    def __init__(self, x):
        self.tmp = np.empty_like(x)
        self.mx = np.empty((x.shape[0], 1), x.dtype)
        self.sm = np.empty((x.shape[0], 1), x.dtype)

    def __call__(self, x, out):
        np.max(x, axis=1, keepdims=True, out=self.mx)
        np.subtract(x, self.mx, out=self.tmp)
        np.exp(self.tmp, out=self.tmp)
        np.sum(self.tmp, axis=1, keepdims=True, out=self.sm)
        np.divide(self.tmp, self.sm, out=out)


class NumpyRMSNorm:
    def __init__(self, x, eps=1e-6):
        self.tmp = np.empty_like(x)
        self.ms = np.empty((x.shape[0], 1), x.dtype)
        self.eps = eps

    def __call__(self, x, out):
        np.multiply(x, x, out=self.tmp)
        np.mean(self.tmp, axis=1, keepdims=True, out=self.ms)
        self.ms += self.eps
        np.sqrt(self.ms, out=self.ms)
        np.divide(x, self.ms, out=out)


def main(rows=ROWS, cols=COLS, rounds=9):
    n = rows * cols
    threads = tilelang._core.hardware_threads()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    y = rng.standard_normal((rows, cols), dtype=np.float32)
    out, out_np = np.empty_like(x), np.empty_like(x)
    table = common.Table("cpu_elementwise",
                         f"cpu memory-bound kernels, {n // 2**20}M float32, {threads} threads (GB/s moved once)",
                         ["workload", "ours GB/s", "numpy GB/s", "vs numpy", "vs copy (numpy)", "vs copy (ours)"])

    copy = tilelang.compile(copy_kernel(n, BLOCK), target="cpu")
    copy(x.reshape(-1), out.reshape(-1))
    assert np.array_equal(out, x)
    copy_out = np.empty_like(x)
    # Every workload is timed in alternation with the two copies, and its ratios are paired per round.
    copies = {"copy numpy": lambda: np.copyto(copy_out, x),
              "copy ours": lambda: copy(x.reshape(-1), copy_out.reshape(-1))}

    def measure(label, nbytes, ours, peer):
        ms = common.interleaved({"ours": ours, "numpy": peer, **copies}, rounds=rounds, rep=50)
        table.add(label, common.gbps(nbytes, ms["ours"]), common.gbps(nbytes, ms["numpy"]), ms.ratio("numpy", "ours"),
                  ms.paired(lambda t: nbytes / t["ours"] / (8 * n / t["copy numpy"])),
                  ms.paired(lambda t: nbytes / t["ours"] / (8 * n / t["copy ours"])))

    measure("copy (T.copy)", 8 * n, lambda: copy(x.reshape(-1), out.reshape(-1)), lambda: np.copyto(out_np, x))

    add = tilelang.compile(add_kernel(n, BLOCK), target="cpu")
    add(x.reshape(-1), y.reshape(-1), out.reshape(-1))
    np.testing.assert_array_equal(out, x + y)
    measure("add C = A + B", 12 * n, lambda: add(x.reshape(-1), y.reshape(-1), out.reshape(-1)),
            lambda: np.add(x, y, out=out_np))

    soft = tilelang.compile(softmax_kernel(rows, cols, ROWS_PER_BLOCK), target="cpu")
    ref = NumpySoftmax(x)
    soft(x, out)
    ref(x, out_np)
    np.testing.assert_allclose(out, out_np, rtol=1e-5, atol=1e-9)
    measure("softmax (rows of 8192)", 8 * n, lambda: soft(x, out), lambda: ref(x, out_np))

    rms = tilelang.compile(rms_norm_kernel(rows, cols, ROWS_PER_BLOCK), target="cpu")
    ref2 = NumpyRMSNorm(x)
    rms(x, out)
    ref2(x, out_np)
    np.testing.assert_allclose(out, out_np, rtol=1e-5, atol=1e-6)
    measure("RMSNorm (rows of 8192)", 8 * n, lambda: rms(x, out), lambda: ref2(x, out_np))

    table.note("numpy ufuncs run on one thread; ours on all; numpy softmax / RMSNorm make several passes")
    table.note("GB/s from median times; ratios are medians over rounds of ratios paired within a round (each "
               "workload alternates with both copies); memory bandwidth on this shared VM drifts by up to 2x")
    m = common.machine()
    table.note(f"{m['cpu']}; load average at the end {m['load_average']:.1f}")
    table.finish()
    return table


if __name__ == "__main__":
    main()
