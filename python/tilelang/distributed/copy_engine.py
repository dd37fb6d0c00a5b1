"""All-gather by the copy engines, with a ready flag per chunk (docs/DISTRIBUTED.md, "Copy-engine
all-gather").

    ag = tld.CopyEngineAllGather(A, chunks_per_rank=2)   # A symmetric, [world * rows, ...]
    A[rank * rows:(rank + 1) * rows].copy_(my_rows)
    epoch = ag.start()                 # copies begin on a side stream; returns at once
    kernel(A, B, C, ag.flags, epoch)   # its blocks T.wait(flags[chunk], epoch) before reading a chunk
    ag.finish()

The rows of every rank are pulled into the local copy of A by cuMemcpyAsync on a side stream
(the GPU's copy engines: no SM time), one chunk at a time, in the order the kernel consumes them
(the next rank's rows first); after each chunk a stream memory operation (cuStreamWriteValue32,
with its system-wide fence) sets that chunk's flag to the call's epoch, so a kernel running at the
same time on the compute stream may wait per tile for just the chunk it needs. Flags are local
(no stream memory operation writes a peer's memory) and never reset: the epoch grows by one each
call. On cpu the copy is a memcpy on a helper thread that sets the flag with a release store.

Ordering, per call: start() runs a device barrier on the current stream (every rank has written its
rows and finished its previous call, so the rows about to be pulled are final and nobody still
reads this rank's copy); the same kernel then sets the flags of this rank's own chunks (its rows are
in place), so a consumer kernel launched next on the current stream starts its own tiles without
depending on the side stream; start() then forks the side stream. finish() runs a second barrier on
the side stream after the pulls (no rank overwrites its rows while a peer still pulls them) and
makes the current stream wait for it. A rank may rewrite its rows after finish() returns (in stream
order). Neither barrier can be dropped: the first orders a peer's writes of its rows before this
rank pulls them, the second this rank's pulls before the peer's next writes. The first stays on the
current stream: on the side stream it would need an SM while a persistent consumer kernel holds them
all and waits for the chunks that come after it. The second may wait for an SM: the consumer does
not depend on it.
"""
import threading

from . import _require, _S, DistributedError

__all__ = ["CopyEngineAllGather"]


_BARRIER = {}


def _barrier_kernel(n):
    """The kernel start() and finish() run on the compute stream (cuda), compiled once per flag count n
    (_barrier_func)."""
    if n not in _BARRIER:
        import tilelang
        _BARRIER[n] = tilelang.compile(_barrier_func(n), target="cuda")
    return _BARRIER[n]


def _barrier_func(n):
    """The barrier of a helper with n flags, on its own counter `sync` (a symmetric uint64): one block
    adds 1 to every rank's counter (after the block's and the stream's earlier writes: T.signal) and
    waits until its own reaches `target` (the number of the helper's barriers so far times the world
    size), then sets flags[first, first + count) to epoch (start: this rank's own chunks, whose rows
    are in place; finish: count 0). Its own counter, not T.barrier's per-block counters: finish()'s
    barrier runs on the side stream, possibly beside a kernel of the compute stream that uses
    T.barrier. Setting the own flags here, on the compute stream before the consumer kernel, instead
    of on the side stream lets the consumer's first tiles start without waiting for the side stream to
    pass its event."""
    import tilelang.language as T

    @T.prim_func
    def tl_ce_allgather_barrier(sync: T.Tensor((1,), "uint64"), flags: T.Tensor((n,), "uint32"), target: T.int64,
                                first: T.int32, count: T.int32, epoch: T.int32):
        with T.Kernel(1, threads=32) as bx:
            with T.Scale("device") as (rank, world):
                for i in T.serial(world):
                    T.signal(sync[0], 1, dst=(rank + i) % world, op="add")
                T.wait(sync[0], target, cmp="ge")
                tx = T.get_thread_binding(0)
                for j in T.serial(T.ceildiv(count, 32)):
                    if j * 32 + tx < count:
                        flags[first + j * 32 + tx] = T.cast(epoch, "uint32")

    return tl_ce_allgather_barrier


class CopyEngineAllGather:
    """All-gather of the row chunks of a symmetric tensor by the copy engines (cpu: a helper thread),
    each chunk followed by its ready flag. Collective: every rank constructs it with the same tensor.

    `buf`: a tensor from tilelang.distributed.empty/zeros (contiguous) of `world * rows` rows; rank r
    fills rows [r * rows, (r + 1) * rows) before start(). `chunks_per_rank`: how many pieces (and
    flags) each rank's rows are cut into (rows must divide evenly); more pieces let a consumer start
    on the first rows of a peer sooner.

    `flags`: symmetric uint32 tensor of world * chunks_per_rank entries; chunk c (rows
    [c * chunk_rows, (c + 1) * chunk_rows)) is ready when flags[c] >= the epoch start() returned."""

    def __init__(self, buf, chunks_per_rank=1):
        import torch
        from . import empty, zeros
        _require("tilelang.distributed.CopyEngineAllGather")
        if not isinstance(buf, torch.Tensor):
            raise TypeError(f"CopyEngineAllGather: buf must be a torch tensor from tilelang.distributed.empty, got "
                            f"{type(buf).__name__}")
        if not isinstance(chunks_per_rank, int) or chunks_per_rank < 1:
            raise ValueError(f"CopyEngineAllGather: chunks_per_rank must be a positive int, got {chunks_per_rank!r}")
        w = _S.world
        if buf.dim() < 1 or buf.shape[0] % (w * chunks_per_rank):
            raise ValueError(f"CopyEngineAllGather: buf's first dimension ({tuple(buf.shape)}) must be a multiple of "
                             f"world * chunks_per_rank = {w} * {chunks_per_rank}")
        if not buf.is_contiguous():
            raise ValueError("CopyEngineAllGather: buf must be contiguous")
        off = buf.data_ptr() - _S.base
        nbytes = buf.numel() * buf.element_size()
        if off < 0 or off + nbytes > _S.heap_size:
            raise DistributedError("CopyEngineAllGather: buf is not in symmetric memory: allocate it with "
                                   "tilelang.distributed.empty / zeros")
        self.buf = buf
        self.world, self.rank = w, _S.rank
        self.chunks_per_rank = chunks_per_rank
        self.rows = buf.shape[0] // w
        self.chunk_rows = self.rows // chunks_per_rank
        self.flags = empty((w * chunks_per_rank,), "uint32")
        self.flags.view(torch.int32).zero_()  # (torch's unsigned 32-bit kernels are few on some versions)
        self.epoch = 0
        self._off, self._nbytes = off, nbytes
        # cpu: each rank's copy of buf as a tensor of this process (its mapping); cuda: raw addresses
        # (cuMemcpyAsync takes unified addresses; a torch view of peer memory would be placed on the
        # peer's device).
        self._peers = [self._view(p) for p in range(w)] if _S.device == "cpu" else None
        self._row_bytes = nbytes // buf.shape[0]
        self._thread = None
        self._error = None
        self._side = None
        self._started = False
        if _S.device == "cuda":
            self._side = torch.cuda.Stream(device=f"cuda:{_S.local_rank}")
            self._bar_kernel = _barrier_kernel(w * chunks_per_rank)
            self._sync = zeros((1,), "uint64")  # the barriers' counter (_barrier_func)
            self._bars = 0
        from . import barrier
        barrier()  # every rank's flags are zero before any start()

    def _view(self, p):
        """Rank p's copy of buf on cpu: a tensor over this process's mapping of p's heap."""
        import torch
        flat = torch.frombuffer(_S.mmaps[p], dtype=torch.uint8, count=max(self._nbytes, 1), offset=self._off)
        return flat[:self._nbytes].view(self.buf.dtype).reshape(self.buf.shape)

    def _bar(self, first, count, epoch):
        """The helper's next barrier on the current stream (cuda), then flags[first, first + count) = epoch."""
        self._bars += 1
        self._bar_kernel(self._sync, self.flags, self._bars * self.world, first, count, epoch)

    def _chunks(self):
        """(source peer, chunk index) in arrival order: the next rank's rows first."""
        for i in range(1, self.world):
            p = (self.rank + i) % self.world
            for j in range(self.chunks_per_rank):
                yield p, p * self.chunks_per_rank + j

    def start(self):
        """Starts the copies (returns at once) and returns this call's epoch, the value the flags reach."""
        if self._started:
            raise DistributedError("CopyEngineAllGather.start: the previous call has not been finished (call finish())")
        self._started = True
        self.epoch += 1
        e = self.epoch
        cr = self.chunk_rows
        if _S.device == "cpu":
            from . import barrier
            from .. import _core
            barrier()
            base = self.flags.data_ptr()
            for j in range(self.chunks_per_rank):  # this rank's own rows are in place
                _core.dist_store_release_u32(base + 4 * (self.rank * self.chunks_per_rank + j), e)

            def pull():
                try:
                    for p, c in self._chunks():
                        self.buf[c * cr:(c + 1) * cr].copy_(self._peers[p][c * cr:(c + 1) * cr])
                        _core.dist_store_release_u32(base + 4 * c, e)
                except BaseException as ex:  # noqa: BLE001 - raised by finish()
                    self._error = ex

            self._error = None
            self._thread = threading.Thread(target=pull, name="tl-ce-allgather", daemon=True)
            self._thread.start()
            return e
        import torch
        from .. import _core
        dev = _S.local_rank
        main = torch.cuda.current_stream()
        # On `main`: every rank's rows are final and every previous call finished; then this rank's own
        # chunks are marked ready (in stream order before the consumer kernel).
        self._bar(self.rank * self.chunks_per_rank, self.chunks_per_rank, e)
        side = self._side
        side.wait_stream(main)
        sh = side.cuda_stream
        for op in self._side_ops(e, _S.bases):
            if op[0] == "copy":
                _core.cuda.memcpy_async(op[1], op[2], op[3], sh, dev)
            else:
                _core.cuda.stream_write_value32(sh, op[1], op[2], dev)
        return e

    def _side_ops(self, e, bases):
        """The side stream's work for epoch e (cuda), in order: per peer chunk in arrival order ("copy",
        dst, src, bytes) and its ("flag", address, e). (This rank's own chunks are marked ready by start()'s
        barrier kernel on the compute stream.) `bases`: every rank's heap base in this process."""
        ops = []
        flags = self.flags.data_ptr()
        cb = self.chunk_rows * self._row_bytes
        for p, c in self._chunks():
            ops.append(("copy", bases[self.rank] + self._off + c * cb, bases[p] + self._off + c * cb, cb))
            ops.append(("flag", flags + 4 * c, e))
        return ops

    def finish(self):
        """Ends the call: the copies are complete (the current stream waits for them on cuda) and, after
        a barrier of all ranks, every rank may overwrite its rows again."""
        if not self._started:
            raise DistributedError("CopyEngineAllGather.finish without start()")
        self._started = False
        if _S.device == "cpu":
            self._thread.join()
            self._thread = None
            from . import barrier
            barrier()
            if self._error is not None:
                raise DistributedError(f"CopyEngineAllGather: a copy failed on rank {self.rank}: {self._error}")
            return
        import torch
        main = torch.cuda.current_stream()
        # The second barrier on the side stream, after this rank's pulls: it meets the peers' as soon as
        # every rank has pulled, usually while the consumer kernel still runs (its one warp fits beside
        # a persistent GEMM's CTA, else it runs when that ends: nothing waits for it but `main`, below),
        # so the current stream does not launch it after the consumer.
        with torch.cuda.stream(self._side):
            self._bar(0, 0, self.epoch)
        main.wait_stream(self._side)
