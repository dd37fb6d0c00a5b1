"""Configuration hints from the machine description (what TileLang's carver does with its roller).

Each generator enumerates the tile parameters of a canonical kernel shape, describes each candidate
as the KernelProfile its TileLang kernel would have (the same counts analysis.py takes from IR), drops
those that do not fit the machine, and ranks the rest with the cost model. They return config dicts
in the keyword names the examples' builders use, best first:

    gemm_configs(M, N, K)                   -> {"block_M", "block_N", "block_K", "num_stages", "threads"}
    attention_configs(B, H, Sq, Skv, D)     -> {"block_M", "block_N", "num_stages", "threads"}
    reduction_configs(M, N)                 -> {"block_M", "threads"}     (reduce over N, rows per block)
    elementwise_configs(numel)              -> {"block", "threads"}       (elements per block)

Entry point per kernel kind: the function of its name; `topk` bounds the result and `machine` (or
`target`) picks the description.
"""
import itertools
import math

from .analysis import GemmInfo, KernelProfile, _bits
from .machine import CpuMachine, CudaMachine, machine_for
from .model import estimate_profile

__all__ = ["gemm_configs", "attention_configs", "reduction_configs", "elementwise_configs", "gemm_profile",
           "attention_profile"]


def _m(machine, target):
    m = machine_for(target, machine)
    if not isinstance(m, (CudaMachine, CpuMachine)):
        raise NotImplementedError(f"not implemented: TileSight hints for {m.name}; hints cover cuda and cpu "
                                  "(for ascend, estimate candidate kernels with tilelang.tilesight.rank or "
                                  "tilelang.autotune(top_k=...))")
    return m


def gemm_profile(M, N, K, block_M, block_N, block_K, num_stages=2, threads=128, in_dtype="float16",
                 out_dtype="float16", accum_dtype="float32"):
    """The KernelProfile of the canonical tiled GEMM (A, B tiles copied to shared memory per k step,
    T.gemm into a fragment accumulator, the accumulator copied out)."""
    eb, ob, ab = _bits(in_dtype) / 8, _bits(out_dtype) / 8, _bits(accum_dtype) / 8
    iters = math.ceil(K / block_K)
    grid = (math.ceil(N / block_N), math.ceil(M / block_M))
    p = KernelProfile(name=f"gemm_{block_M}x{block_N}x{block_K}_s{num_stages}_t{threads}", grid=grid,
                      threads=threads)
    p.tensor_flops = 2.0 * block_M * block_N * block_K * iters
    p.global_read_bytes = (block_M + block_N) * block_K * eb * iters
    p.global_write_bytes = block_M * block_N * ob
    p.global_round_trips = 2 * iters
    p.pipeline_stages = num_stages
    p.pipeline_iters = iters
    p.shared_bytes = int((block_M + block_N) * block_K * eb * max(1, num_stages if num_stages > 1 else 1))
    p.fragment_bytes = int(block_M * block_N * ab)
    p.shared_read_bytes = (block_M + block_N) * block_K * eb * iters
    p.gemms = [GemmInfo(block_M, block_N, block_K, in_dtype, "shared", "shared", iters)]
    p.global_buffer_bytes = (M * K + K * N) * eb + M * N * ob
    p.copy_bytes_by_path = {"global->shared": p.global_read_bytes}
    p.copy_count_by_path = {"global->shared": 2.0 * iters}
    return p


def gemm_configs(M, N, K, in_dtype="float16", out_dtype="float16", accum_dtype="float32", machine=None,
                 target="auto", topk=10):
    """Ranked GEMM tile configurations for C[M, N] = A[M, K] @ B[K, N]."""
    m = _m(machine, target)
    gpu = isinstance(m, CudaMachine)
    blocks = (32, 64, 128, 256) if gpu else (16, 32, 64, 128, 256)
    ks = (32, 64, 128) if gpu else (32, 64, 128, 256)
    stages = (1, 2, 3, 4) if gpu else (1,)
    threads_opts = (128, 256) if gpu else (128,)
    scored = []
    for bm, bn, bk, st, th in itertools.product(blocks, blocks, ks, stages, threads_opts):
        if bm > max(16, M) * 2 or bn > max(16, N) * 2 or bk > max(16, K) * 2:
            continue
        if gpu and bm * bn // (th // 32) < 16 * 16:
            continue
        est = estimate_profile(gemm_profile(M, N, K, bm, bn, bk, st, th, in_dtype, out_dtype, accum_dtype), m)
        if est.fits:
            scored.append((est.time_s, -(bm * bn), st, {"block_M": bm, "block_N": bn, "block_K": bk,
                                                        "num_stages": st, "threads": th}, est))
    scored.sort(key=lambda t: t[:3])
    return [dict(c, estimated_ms=e.time_ms, bound=e.bound) for *_, c, e in scored[:topk]]


def attention_profile(batch, heads, seq_q, seq_kv, dim, block_M, block_N, num_stages=2, threads=128,
                      is_causal=False, dtype="float16"):
    """The KernelProfile of the canonical flash-attention forward (one block per block_M query rows of a
    head: Q in shared memory, K / V tiles streamed, S = Q K^T and O += P V on tensor cores, online
    softmax on the fragments)."""
    eb = _bits(dtype) / 8
    iters = math.ceil(seq_kv / block_N)
    if is_causal:
        iters = max(1.0, (iters + math.ceil(block_M / block_N)) / 2.0)
    grid = (math.ceil(seq_q / block_M), heads, batch)
    p = KernelProfile(name=f"flash_fwd_{block_M}x{block_N}_s{num_stages}_t{threads}", grid=grid, threads=threads)
    p.tensor_flops = 2 * 2.0 * block_M * block_N * dim * iters
    p.vector_flops = block_M * block_N * 6.0 * iters + block_M * dim * 2.0 * iters
    p.transcendental_ops = block_M * block_N * iters + block_M * iters
    p.global_read_bytes = block_M * dim * eb + 2 * block_N * dim * eb * iters
    p.global_write_bytes = block_M * dim * eb
    p.global_round_trips = 1 + 2 * iters
    p.pipeline_stages = num_stages
    p.pipeline_iters = iters
    p.shared_bytes = int(block_M * dim * eb + 2 * block_N * dim * eb * max(1, num_stages) + block_M * dim * eb)
    p.fragment_bytes = int(block_M * block_N * (4 + eb) + block_M * dim * 4 + block_M * 4 * 4)
    p.shared_read_bytes = (block_M * dim + 2 * block_N * dim) * eb * iters
    p.gemms = [GemmInfo(block_M, block_N, dim, dtype, "shared", "shared", iters),
               GemmInfo(block_M, dim, block_N, dtype, "fragment", "shared", iters)]
    p.global_buffer_bytes = batch * heads * (2 * seq_q + 2 * seq_kv) * dim * eb
    return p


def attention_configs(batch, heads, seq_q, seq_kv, dim, is_causal=False, dtype="float16", machine=None,
                      target="auto", topk=10):
    """Ranked flash-attention forward configurations."""
    m = _m(machine, target)
    gpu = isinstance(m, CudaMachine)
    scored = []
    for bm, bn, st, th in itertools.product((32, 64, 128, 256), (32, 64, 128, 256), (1, 2, 3) if gpu else (1,),
                                            (128, 256) if gpu else (128,)):
        if bm > max(seq_q, 16) * 2 or bn > max(seq_kv, 16) * 2:
            continue
        est = estimate_profile(attention_profile(batch, heads, seq_q, seq_kv, dim, bm, bn, st, th, is_causal, dtype), m)
        if est.fits:
            scored.append((est.time_s, -bm, st, {"block_M": bm, "block_N": bn, "num_stages": st, "threads": th}, est))
    scored.sort(key=lambda t: t[:3])
    return [dict(c, estimated_ms=e.time_ms, bound=e.bound) for *_, c, e in scored[:topk]]


def _rowwise_profile(name, rows, cols, block_rows, threads, dtype, flops_per_elem, out_cols):
    eb = _bits(dtype) / 8
    p = KernelProfile(name=name, grid=(math.ceil(rows / block_rows),), threads=threads)
    p.vector_flops = block_rows * cols * flops_per_elem
    p.global_read_bytes = block_rows * cols * eb
    p.global_write_bytes = block_rows * out_cols * eb
    p.global_round_trips = 1
    p.pipeline_iters = 1
    p.fragment_bytes = int(block_rows * min(cols, 4096) * 4)
    p.global_buffer_bytes = rows * (cols + out_cols) * eb
    return p


def reduction_configs(M, N, dtype="float32", machine=None, target="auto", topk=10):
    """Ranked configurations of a row reduction out[M] = reduce(x[M, N], axis=1)."""
    m = _m(machine, target)
    gpu = isinstance(m, CudaMachine)
    scored = []
    for br, th in itertools.product((1, 2, 4, 8, 16, 32, 64, 128), (32, 64, 128, 256, 512) if gpu else (1,)):
        if br > max(M, 1) * 2:
            continue
        est = estimate_profile(_rowwise_profile("reduce", M, N, br, th, dtype, 1.0, 1), m)
        if est.fits:
            scored.append((est.time_s, -br, th, {"block_M": br, "threads": th}, est))
    scored.sort(key=lambda t: t[:3])
    return [dict(c, estimated_ms=e.time_ms, bound=e.bound) for *_, c, e in scored[:topk]]


def elementwise_configs(numel, dtype="float32", inputs=2, machine=None, target="auto", topk=10):
    """Ranked configurations of an element-wise kernel over `numel` elements with `inputs` operands."""
    m = _m(machine, target)
    gpu = isinstance(m, CudaMachine)
    eb = _bits(dtype) / 8
    scored = []
    for blk, th in itertools.product((256, 512, 1024, 2048, 4096, 8192, 16384, 65536),
                                     (128, 256, 512) if gpu else (1,)):
        if gpu and blk < th:
            continue
        if blk > max(numel, 256) * 2:
            continue
        p = KernelProfile(name="elementwise", grid=(math.ceil(numel / blk),), threads=th)
        p.vector_flops = blk
        p.global_read_bytes = blk * eb * inputs
        p.global_write_bytes = blk * eb
        p.global_round_trips = 1
        p.pipeline_iters = 1
        p.fragment_bytes = int(blk * eb * (inputs + 1))
        p.global_buffer_bytes = numel * eb * (inputs + 1)
        est = estimate_profile(p, m)
        if est.fits:
            scored.append((est.time_s, -blk, th, {"block": blk, "threads": th}, est))
    scored.sort(key=lambda t: t[:3])
    return [dict(c, estimated_ms=e.time_ms, bound=e.bound) for *_, c, e in scored[:topk]]

