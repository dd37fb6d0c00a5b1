"""Runs the multi-device kernels of kernels.py on `--nprocs` ranks and checks each against torch
(all-gather + GEMM fused and with the copy-engine all-gather, GEMM + reduce-scatter, all-reduce).

    python examples/distributed/example_distributed.py --nprocs 2 --device cpu
    python examples/distributed/example_distributed.py --nprocs 2 --device cuda   # 2 GPUs
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tilelang  # noqa: E402
import tilelang.distributed as tld  # noqa: E402
from kernels import allgather_gemm, allgather_gemm_ce, allreduce, gemm_reduce_scatter  # noqa: E402


def _dev():
    return "cpu" if tld.device() == "cpu" else f"cuda:{tld.local_rank()}"


def _target():
    return "cpu" if tld.device() == "cpu" else "cuda"


def _rand(shape, seed, dtype):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g, dtype=torch.float32) * 2 - 1).to(dtype)


def check_allgather_gemm(M_loc, N, K, blocks=(64, 64, 32), dtype=torch.float16, calls=2):
    r, w = tld.rank(), tld.world_size()
    bm, bn, bk = blocks
    name = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32"}[dtype]
    kernel = tilelang.compile(allgather_gemm(M_loc, N, K, w, bm, bn, bk, dtype=name, num_stages=2, threads=128),
                              target=_target())
    A = tld.empty((w * M_loc, K), dtype)
    flags = tld.zeros((w * M_loc // bm,), "uint64")
    B = _rand((K, N), 1000, dtype).to(_dev())
    C = torch.empty((w * M_loc, N), dtype=dtype, device=_dev())
    shards = [_rand((M_loc, K), 10 + s, dtype) for s in range(w)]
    A[r * M_loc:(r + 1) * M_loc].copy_(shards[r])
    tld.barrier()
    for epoch in range(1, calls + 1):
        kernel(A, B, C, flags, epoch)
        tld.barrier()
    ref = torch.cat(shards).double() @ B.cpu().double()
    err = (C.cpu().double() - ref).abs().max().item()
    assert err < 2e-2 * K ** 0.5, f"rank {r}: allgather_gemm max error {err}"
    return err


def check_allgather_gemm_ce(M_loc, N, K, blocks=(64, 64, 32), chunks_per_rank=2, dtype=torch.float16, calls=3,
                            threads=128, num_stages=2):
    """The copy-engine all-gather (tilelang.distributed.CopyEngineAllGather) under a GEMM that waits per
    chunk; new rows of A on every call (the helper's barriers make rewriting them safe)."""
    r, w = tld.rank(), tld.world_size()
    bm, bn, bk = blocks
    name = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32"}[dtype]
    kernel = tilelang.compile(allgather_gemm_ce(M_loc, N, K, w, chunks_per_rank, bm, bn, bk, dtype=name,
                                                num_stages=num_stages, threads=threads, panel=2),
                              target=_target())
    A = tld.empty((w * M_loc, K), dtype)
    ag = tld.CopyEngineAllGather(A, chunks_per_rank=chunks_per_rank)
    B = _rand((K, N), 1000, dtype).to(_dev())
    C = torch.empty((w * M_loc, N), dtype=dtype, device=_dev())
    err = 0.0
    for call in range(calls):
        shards = [_rand((M_loc, K), 100 * call + 10 + s, dtype) for s in range(w)]
        A[r * M_loc:(r + 1) * M_loc].copy_(shards[r])
        C.fill_(float("nan"))
        epoch = ag.start()
        kernel(A, B, C, ag.flags, epoch)
        ag.finish()
        ref = torch.cat(shards).double() @ B.cpu().double()
        got = C.cpu().double()
        assert not got.isnan().any(), f"rank {r}: allgather_gemm_ce call {call} left elements unwritten"
        err = max(err, (got - ref).abs().max().item())
        assert torch.equal(A.cpu(), torch.cat(shards)), f"rank {r}: the gathered A differs on call {call}"
    tol = (2e-2 if dtype != torch.float32 else 1e-4) * K ** 0.5
    assert err < tol, f"rank {r}: allgather_gemm_ce max error {err}"
    return err


def check_gemm_reduce_scatter(M, N, K_loc, blocks=(64, 64, 32), dtype=torch.float16, calls=2):
    r, w = tld.rank(), tld.world_size()
    bm, bn, bk = blocks
    name = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32"}[dtype]
    kernel = tilelang.compile(gemm_reduce_scatter(M, N, K_loc, w, bm, bn, bk, dtype=name, num_stages=2, threads=128),
                              target=_target())
    stage = tld.empty((M, N), "float32")
    recv = tld.empty((w, M // w, N), "float32")
    flags = tld.zeros((M // w // bm, (N + bn - 1) // bn), "uint64")
    As = [_rand((M, K_loc), 20 + s, dtype) for s in range(w)]
    Bs = [_rand((K_loc, N), 40 + s, dtype) for s in range(w)]
    A, B = As[r].to(_dev()), Bs[r].to(_dev())
    out = torch.empty((M // w, N), dtype=dtype, device=_dev())
    tld.barrier()
    for epoch in range(1, calls + 1):
        kernel(A, B, out, stage, recv, flags, epoch)
        tld.barrier()
    full = sum(a.double() @ b.double() for a, b in zip(As, Bs))
    ref = full[r * (M // w):(r + 1) * (M // w)]
    err = (out.cpu().double() - ref).abs().max().item()
    assert err < 2e-2 * (w * K_loc) ** 0.5, f"rank {r}: gemm_reduce_scatter max error {err}"
    return err


def check_allreduce(N, num_blocks=4, block=256, calls=2):
    r, w = tld.rank(), tld.world_size()
    kernel = tilelang.compile(allreduce(N, w, num_blocks=num_blocks, block=block, threads=128), target=_target())
    X = tld.empty((N,), "float32")
    Y = tld.zeros((N,), "float32")
    stage = tld.empty((w, N // w), "float32")
    xs = [_rand((N,), 60 + s, torch.float32) for s in range(w)]
    X.copy_(xs[r])
    tld.barrier()
    for _ in range(calls):
        kernel(X, Y, stage)
        tld.barrier()
    ref = sum(x.double() for x in xs)
    err = (Y.cpu().double() - ref).abs().max().item()
    assert err < 1e-5 * w, f"rank {r}: allreduce max error {err}"
    return err


def run_all(small=True):
    out = {}
    out["allgather_gemm"] = check_allgather_gemm(128, 96, 64)
    out["allgather_gemm_ce"] = check_allgather_gemm_ce(128, 96, 64)
    out["gemm_reduce_scatter"] = check_gemm_reduce_scatter(128 * tld.world_size(), 96, 64)
    out["allreduce"] = check_allreduce(2048 * tld.world_size())
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nprocs", type=int, default=2)
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    a = p.parse_args()
    results = tld.launch(run_all, a.nprocs, device=a.device)
    for r, res in enumerate(results):
        print(f"rank {r}: " + ", ".join(f"{k} max error {v:.2e}" for k, v in res.items()))
    print("Kernel Output Match!")  # each check above raises (naming the rank) when it does not


if __name__ == "__main__":
    main()
