"""Rank programs for the distributed tests (module level, so spawned ranks can import them)."""
import os
import sys

import torch

import tilelang
import tilelang.distributed as tld
import tilelang.language as T

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "distributed"))


def _target():
    return "cpu" if tld.device() == "cpu" else "cuda"


def _dev():
    return "cpu" if tld.device() == "cpu" else f"cuda:{tld.local_rank()}"


def _rand(shape, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g) * 2 - 1).to(dtype)


def examples_all():
    import example_distributed as ex
    return ex.run_all()


def allreduce_only():
    import example_distributed as ex
    return ex.check_allreduce(1024 * tld.world_size(), num_blocks=3, block=128)


def allgather_gemm_only():
    import example_distributed as ex
    return ex.check_allgather_gemm(64, 48, 32, blocks=(32, 32, 16), dtype=torch.float32)


def allgather_gemm_ce_only(chunks_per_rank=1):
    import example_distributed as ex
    return ex.check_allgather_gemm_ce(64, 48, 32, blocks=(32, 32, 16), chunks_per_rank=chunks_per_rank,
                                      dtype=torch.float32)


def err_copy_engine_misuse():
    """CopyEngineAllGather's typed errors, collected (every rank makes the same calls)."""
    msgs = []
    plain = torch.zeros((4 * tld.world_size(), 4))
    try:
        tld.CopyEngineAllGather(plain)
    except tld.DistributedError as e:
        msgs.append(str(e))
    try:
        tld.CopyEngineAllGather(tld.empty((3, 4), "float32"), chunks_per_rank=2)
    except ValueError as e:
        msgs.append(str(e))
    ag = tld.CopyEngineAllGather(tld.zeros((2 * tld.world_size(), 4), "float32"))
    try:
        ag.finish()
    except tld.DistributedError as e:
        msgs.append(str(e))
    ag.start()
    try:
        ag.start()
    except tld.DistributedError as e:
        msgs.append(str(e))
    ag.finish()
    return msgs


def tiles_put_get():
    """2-d tiles (with partial edge tiles), a strided column, put and get, several dtypes."""
    r, w = tld.rank(), tld.world_size()
    M, N, bm, bn = 50, 70, 16, 32

    @T.prim_func
    def put_get(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16"), G: T.Tensor((M, N), "float16"),
                col: T.Tensor((M,), "int32"), Ci: T.Tensor((M, 4), "int32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=32) as (bx, by):
            with T.Scale("device") as rank, world:
                nxt = (rank + 1) % world
                prv = (rank + world - 1) % world
                T.copy(A[by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn], B[by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn],
                       dst=nxt)
                T.copy(A[by * bm, bx * bn], G[by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn], src=prv)
                if bx == 0 and by == 0:
                    T.copy(Ci[0:M, 2], col[0:M], src=nxt)

    k = tilelang.compile(put_get, target=_target())
    A = tld.empty((M, N), torch.float16)
    B = tld.zeros((M, N), torch.float16)
    G = tld.zeros((M, N), torch.float16)
    col = tld.zeros((M,), torch.int32)
    Ci = tld.empty((M, 4), torch.int32)
    A.copy_(_rand((M, N), 100 + r, torch.float16))
    Ci.copy_(torch.randint(-1000, 1000, (M, 4), generator=torch.Generator().manual_seed(200 + r), dtype=torch.int32))
    tld.barrier()
    k(A, B, G, col, Ci)
    tld.barrier()
    prv, nxt = (r - 1) % w, (r + 1) % w
    assert torch.equal(B.cpu(), _rand((M, N), 100 + prv, torch.float16)), "put"
    assert torch.equal(G.cpu(), _rand((M, N), 100 + prv, torch.float16)), "get"
    want_col = torch.randint(-1000, 1000, (M, 4), generator=torch.Generator().manual_seed(200 + nxt),
                             dtype=torch.int32)[:, 2]
    assert torch.equal(col.cpu(), want_col), "strided get"
    return True


def ping_pong(rounds=20):
    """Rank 0 and rank 1 pass a counter back and forth with T.signal / T.wait, many times in one
    kernel; the data put before each signal must be visible after the wait."""
    r = tld.rank()

    @T.prim_func
    def pp(data: T.Tensor((64,), "float32"), flag: T.Tensor((2,), "int64"), out: T.Tensor((rounds,), "float32"),
           base: T.int64):
        with T.Kernel(1, threads=32) as bx:
            with T.Scale("device") as rank, world:
                for i in T.serial(rounds):
                    if rank == i % 2:
                        if i > 0:
                            T.wait(flag[rank], base + i, cmp="ge")
                        for j in T.Parallel(64):
                            data[j] = data[j] + 1.0
                        T.copy(data[0:64], data[0:64], dst=1 - rank)
                        T.signal(flag[1 - rank], base + i + 1, dst=1 - rank)
                        out[i] = data[5]
                    else:
                        T.wait(flag[rank], base + i + 1, cmp="ge")

    k = tilelang.compile(pp, target=_target())
    data = tld.zeros((64,), torch.float32)
    flag = tld.zeros((2,), torch.int64)
    out = torch.zeros(rounds, dtype=torch.float32, device=_dev())
    tld.barrier()
    for call in range(2):
        k(data, flag, out, call * rounds)
        tld.barrier()
    mine = [i for i in range(rounds) if i % 2 == r]
    # Each round adds 1 to the value passed on: after round i (of call c) it is c*rounds + i + 1.
    want = torch.tensor([rounds + i + 1 for i in mine], dtype=torch.float32)
    assert torch.equal(out.cpu()[mine], want), (out, want)
    return True


def barrier_rounds(blocks=6, rounds=5):
    """Each block writes its round number into the next rank's inbox, barriers, and reads what the
    previous rank wrote (a missing barrier shows as a stale value)."""
    @T.prim_func
    def br(mine: T.Tensor((blocks, 16), "int32"), inbox: T.Tensor((blocks, 16), "int32"),
           seen: T.Tensor((blocks, rounds), "int32")):
        with T.Kernel(blocks, threads=32) as bx:
            with T.Scale("device") as rank, world:
                for i in T.serial(rounds):
                    for j in T.Parallel(16):
                        mine[bx, j] = (i + 1) * 100 + rank
                    T.copy(mine[bx, 0:16], inbox[bx, 0:16], dst=(rank + 1) % world)
                    T.barrier()
                    seen[bx, i] = inbox[bx, 3]
                    T.barrier()

    k = tilelang.compile(br, target=_target())
    mine = tld.zeros((blocks, 16), torch.int32)
    inbox = tld.zeros((blocks, 16), torch.int32)
    seen = torch.zeros((blocks, rounds), dtype=torch.int32, device=_dev())
    tld.barrier()
    k(mine, inbox, seen)
    tld.barrier()
    prv = (tld.rank() - 1) % tld.world_size()
    want = torch.tensor([[(i + 1) * 100 + prv for i in range(rounds)]] * blocks, dtype=torch.int32)
    assert torch.equal(seen.cpu(), want), seen
    return True


# ---- error cases (each returns the message it saw) ----------------------------------------------

def _shift_kernel(n=256):
    @T.prim_func
    def shift(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            with T.Scale("device") as rank, world:
                T.copy(A[0:n], B[0:n], dst=(rank + 1) % world)
    return shift


def err_not_symmetric():
    k = tilelang.compile(_shift_kernel(), target=_target())
    A = torch.ones(256, device=_dev())
    B = torch.zeros(256, device=_dev())  # ordinary memory: peers cannot reach it
    try:
        k(A, B)
    except RuntimeError as e:
        return str(e)
    return "no error"


def err_mismatched_alloc():
    try:
        tld.empty((128 + tld.rank(),), "float32")
    except tld.DistributedError as e:
        return str(e)
    return "no error"


def err_peer_missing():
    """Rank 1 never enters the kernel: rank 0's T.barrier must time out with a clear error."""
    @T.prim_func
    def b(A: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            with T.Scale("device") as rank, world:
                T.barrier()

    k = tilelang.compile(b, target=_target())
    A = tld.zeros((4,), "float32")
    msg = "rank 1 skipped"
    if tld.rank() == 0:
        try:
            k(A)
            msg = "no error"
        except RuntimeError as e:
            msg = str(e)
    tld.barrier()
    return msg


def err_peer_out_of_range():
    @T.prim_func
    def bad(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            with T.Scale("device") as rank, world:
                T.copy(A[0:8], B[0:8], dst=world + 3)

    k = tilelang.compile(bad, target=_target())
    A, B = tld.zeros((8,), "float32"), tld.zeros((8,), "float32")
    try:
        k(A, B)
    except RuntimeError as e:
        return str(e)
    return "no error"


def raise_on_rank_1():
    if tld.rank() == 1:
        raise ValueError("planted failure on rank 1")
    return tld.rank()


def copy_engine_side_ops(chunks_per_rank=2):
    """The cuda side stream's work (CopyEngineAllGather._side_ops), checked on cpu ranks against the
    rows it must move: every peer chunk copied once from the peer's heap into the same rows here, in
    arrival order (rank + 1 first), each followed by its own flag; this rank's own flags are not the
    side stream's (start()'s barrier kernel sets them on the compute stream)."""
    r, w = tld.rank(), tld.world_size()
    A = tld.empty((4 * w * chunks_per_rank, 6), "float16")
    ag = tld.CopyEngineAllGather(A, chunks_per_rank=chunks_per_rank)
    bases = [(1 << 40) + (p << 32) for p in range(w)]  # distinct fake heap bases: only addresses are computed
    off = A.data_ptr() - tld._S.base
    row = 6 * 2
    ops = ag._side_ops(7, bases)
    f0 = ag.flags.data_ptr()
    want = []
    for i in range(1, w):
        p = (r + i) % w
        for j in range(chunks_per_rank):
            c = p * chunks_per_rank + j
            cb = 4 * row
            want += [("copy", bases[r] + off + c * cb, bases[p] + off + c * cb, cb), ("flag", f0 + 4 * c, 7)]
    assert ops == want, ops
    return True
