"""Multi-device tile programming (TileScale's surface; docs/DISTRIBUTED.md).

    with T.Kernel(n // bn, threads=128) as bx:
        with T.Scale("device") as (rank, world):       # or: `as rank, world`
            T.copy(A[bx * bn], B[bx * bn], dst=(rank + 1) % world)   # put into the peer's B
            T.barrier()

One process per device (tilelang.distributed.launch / torchrun). Tensors that peers read or write
live in symmetric memory (tilelang.distributed.empty / zeros). The operators are collective over the
block: every thread of a block executes them (on cpu a block is one worker thread).
"""
from .. import _core
from .context import Frame, current
from .tile_ops import _Origin, emit_tile_op, operand

__all__ = ["Scale", "get_rank", "get_num_ranks", "barrier", "signal", "wait", "remote_copy"]

_CMPS = ("eq", "ne", "ge", "gt", "le", "lt")


def get_rank():
    """This device's rank (int32) in the distributed job; TileScale's T.get_rank()."""
    return _core.make_call("int32", "tl.dist.rank", [])


def get_num_ranks():
    """The number of devices (int32) of the distributed job; TileScale's T.get_num_ranks()."""
    return _core.make_call("int32", "tl.dist.world", [])


class Scale(Frame):
    """`with T.Scale("device") as (rank, world):` code that addresses the other devices of the job.

    It binds the device's rank and the number of devices; remote T.copy (`dst=peer` / `src=peer`),
    T.barrier, T.signal and T.wait may be used inside (and, for convenience, anywhere in a kernel).

    `with T.Scale("cta_cluster") as (rank, size):` in a kernel launched in thread-block clusters
    (`T.Kernel(..., cta_cluster=2)` / `cluster_dims=`) binds the block's rank in its cluster and the
    cluster size. The CTAs of a cluster cooperate on a pipelined T.gemm: on sm_90a each loads its
    share of the operand tiles they have in common and multicasts it to all (docs/DISTRIBUTED.md).
    """

    def __init__(self, level="device"):
        lv = str(level)
        if lv not in ("device", "cta_cluster"):
            raise ValueError(f"T.Scale takes \"device\" or \"cta_cluster\", got {level!r}")
        self.level = lv

    def __enter__(self):
        ctx = current("T.Scale")
        ctx.require_kernel("T.Scale")
        if self.level == "cta_cluster":
            from .kernel import block_rank_in_cluster
            info = ctx.kernel("T.Scale")
            if info.cluster <= 1:
                raise ValueError("T.Scale(\"cta_cluster\") in a kernel without clusters: launch it with "
                                 "T.Kernel(..., cta_cluster=2) (or cluster_dims=2)")
            return block_rank_in_cluster(), _core.make_int(info.cluster)
        return get_rank(), get_num_ranks()

    def __exit__(self, exc_type, exc, tb):
        return False  # no IR scope: the bound ranks and sizes are expressions


def _kernel(what):
    ctx = current(what)
    info = ctx.kernel(what)
    if info.is_npu:
        raise NotImplementedError(f"{what} is not implemented on Ascend kernels (distributed operators run on cpu "
                                  "and cuda)")
    return info


def _int_expr(v, what):
    e = _core.to_expr(v)
    if not str(e.dtype).startswith(("int", "uint")):
        raise TypeError(f"{what} must be an integer expression, got {e.dtype} '{e!r}'")
    return e


def _linear_block(info):
    lin = None
    stride = None
    for v, g in zip(info.block_vars, info.grid):
        term = v if stride is None else v * stride
        lin = term if lin is None else lin + term
        stride = g if stride is None else stride * g
    return lin if lin is not None else _core.to_expr(0)


def barrier():
    """All devices meet: block b of every rank waits until block b of every other rank arrives, and
    the writes (local and remote) each made before are visible to all after it."""
    info = _kernel("T.barrier")
    emit_tile_op("dist.barrier", [_core.make_cast("int64", _core.to_expr(_linear_block(info)))], None, "T.barrier")


def _flag(flag, what):
    r = operand(flag, f"{what} flag")
    if r.__class__ is _Origin:
        r = _core.BufferRegion(r.buffer, [(i, 1) for i in r.indices])
    return r


def signal(flag, value=1, dst=None, op="set"):
    """Sets (op="set") or adds to (op="add") the element `flag` on device `dst` (this device when
    None) after every write this block made before — TileScale/NVSHMEM's put-with-signal."""
    _kernel("T.signal")
    if op not in ("set", "add"):
        raise ValueError(f"T.signal: op must be \"set\" or \"add\", got {op!r}")
    pe = get_rank() if dst is None else _int_expr(dst, "T.signal dst")
    emit_tile_op("dist.signal", [_flag(flag, "T.signal"), _int_expr(value, "T.signal value"), pe], {"op": op},
                 "T.signal")


def wait(flag, value=1, cmp="ge"):
    """Waits until this device's element `flag` compares true with `value` (cmp: "eq", "ne", "ge",
    "gt", "le", "lt"); the peer's writes made before its T.signal are visible after it."""
    _kernel("T.wait")
    if cmp not in _CMPS:
        raise ValueError(f"T.wait: cmp must be one of {', '.join(_CMPS)}, got {cmp!r}")
    emit_tile_op("dist.wait", [_flag(flag, "T.wait"), _int_expr(value, "T.wait value")], {"cmp": cmp}, "T.wait")


def remote_copy(s, d, dst_pe=None, src_pe=None):
    """T.copy(src, dst, dst=peer) / T.copy(src, dst, src=peer), with regions already resolved."""
    _kernel("T.copy")
    if (dst_pe is None) == (src_pe is None):
        raise TypeError("T.copy takes one of dst=peer (put into the peer's tensor) or src=peer (get from it)")
    put = dst_pe is not None
    pe = _int_expr(dst_pe if put else src_pe, "T.copy peer")
    emit_tile_op("dist.copy", [s, d, pe], {"direction": "put" if put else "get"}, "T.copy")
