"""tilelang.distributed: one process per device, symmetric memory, and the launcher.

    import tilelang.distributed as tld

    def main():
        rank, world = tld.rank(), tld.world_size()
        x = tld.zeros((1024,), "float32")        # symmetric: every rank allocates the same tensor
        ...
        kernel(x)                               # a kernel using T.Scale("device") / remote T.copy
        tld.barrier()

    tld.launch(main, nprocs=4, device="cpu")    # or run the script under torchrun and call tld.init()

Engines (docs/DISTRIBUTED.md): process bootstrap and host collectives through torch.distributed
(gloo for the bootstrap; NCCL stays available to the program); on cuda each rank's symmetric heap is
device memory shared with its peers through CUDA IPC (peer pointers over NVLink / PCIe); on cpu it
is a shared-memory file that every rank maps. Kernels reach a peer's copy of a tensor by its offset
in the heap, so every rank must make the same allocations in the same order (checked).
"""
import atexit
import ctypes
import mmap
import os
import secrets
import shutil
import socket
import tempfile
import traceback

from .. import _core

__all__ = ["init", "finalize", "is_initialized", "rank", "world_size", "local_rank", "device", "empty", "zeros",
           "alloc_symmetric", "barrier", "launch", "DistributedError", "heap_usage", "CopyEngineAllGather"]

_ALIGN = 256
_DEFAULT_HEAP = {"cpu": 64 << 20, "cuda": 2 << 30}


class DistributedError(RuntimeError):
    """A distributed job failed: a rank raised, exited, or the ranks disagree."""


class _State:
    def __init__(self):
        self.rank = 0
        self.world = 0
        self.local_rank = 0
        self.device = None
        self.heap_size = 0
        self.base = 0
        self.bases = []
        self.offset = 0
        self.group = None
        self.owns_pg = False
        self.mmaps = []        # cpu: (file object, mmap) per rank
        self.ipc_peers = []    # cuda: peer pointers opened through IPC
        self.cuda_heap = 0
        self.tensors = []      # cpu: keep the local heap mmap alive while tensors view it


_S = _State()


def _parse_size(v):
    if isinstance(v, int):
        return v
    s = str(v).strip().upper()
    mult = 1
    for suf, m in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)):
        if s.endswith(suf + "B") or s.endswith(suf):
            s = s[: -len(suf + "B")] if s.endswith(suf + "B") else s[:-1]
            mult = m
            break
    return int(float(s) * mult)


def _torch_dist():
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:  # pragma: no cover - torch is a test dependency
        raise ImportError("tilelang.distributed needs torch (torch.distributed bootstraps the processes); "
                          "pip install torch") from e
    return torch, dist


def is_initialized():
    return _S.world > 0


def _require(what):
    if _S.world == 0:
        raise DistributedError(f"{what}: tilelang.distributed is not initialised in this process; start the ranks "
                               "with tilelang.distributed.launch(fn, nprocs) or torchrun, and call "
                               "tilelang.distributed.init() in each")


def rank():
    _require("tilelang.distributed.rank()")
    return _S.rank


def world_size():
    _require("tilelang.distributed.world_size()")
    return _S.world


def local_rank():
    _require("tilelang.distributed.local_rank()")
    return _S.local_rank


def device():
    """"cpu" or "cuda": where this job's symmetric heaps (and kernels) live."""
    _require("tilelang.distributed.device()")
    return _S.device


def heap_usage():
    """(bytes allocated, heap bytes) of this rank's symmetric heap."""
    _require("tilelang.distributed.heap_usage()")
    return _S.offset, _S.heap_size


def _all_gather(obj):
    _, dist = _torch_dist()
    out = [None] * _S.world
    dist.all_gather_object(out, obj, group=_S.group)
    return out


def _shm_dir(need):
    d = os.environ.get("TILELANG_DIST_SHM_DIR")
    cands = [d] if d else ["/dev/shm", tempfile.gettempdir()]
    for c in cands:
        if c and os.path.isdir(c) and os.access(c, os.W_OK):
            if shutil.disk_usage(c).free >= need:
                return c
    raise DistributedError(
        f"no directory with {need >> 20} MiB free for the shared-memory heaps (tried {', '.join(c for c in cands if c)}); "
        "set TILELANG_DIST_SHM_DIR or a smaller heap_size / TILELANG_DIST_HEAP")


def init(device=None, heap_size=None, timeout=None):
    """Joins the distributed job this process belongs to (one process per device) and creates the
    symmetric heaps. Rank and world come from an initialised torch.distributed or from the
    environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT: set by launch() and by
    torchrun). `device`: "cuda" (GPU local_rank) or "cpu" (default: cuda when torch sees a GPU).
    `heap_size` (bytes, or "256M"): each rank's heap (default TILELANG_DIST_HEAP, else 64 MiB on cpu,
    2 GiB on cuda). `timeout` (seconds): how long T.barrier / T.wait wait for a peer
    (TILELANG_DIST_TIMEOUT, default 60)."""
    if _S.world:
        raise DistributedError("tilelang.distributed.init() was already called in this process")
    torch, dist = _torch_dist()
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device not in ("cpu", "cuda"):
        raise ValueError(f"tilelang.distributed.init: device must be \"cpu\" or \"cuda\", got {device!r}")
    if heap_size is None:
        heap_size = os.environ.get("TILELANG_DIST_HEAP") or _DEFAULT_HEAP[device]
    heap_size = _parse_size(heap_size)
    heap_size = (heap_size + (1 << 20) - 1) // (1 << 20) * (1 << 20)
    if heap_size < int(_core.dist_ctrl_bytes) + (1 << 20):
        raise ValueError(f"tilelang.distributed.init: heap_size {heap_size} is too small (at least 2 MiB)")
    if timeout is None:
        timeout = float(os.environ.get("TILELANG_DIST_TIMEOUT", "60"))
    owns = False
    if not dist.is_initialized():
        missing = [k for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if k not in os.environ]
        if missing:
            raise DistributedError("tilelang.distributed.init: this process is not part of a distributed job (missing "
                                   f"{', '.join(missing)}); start it with tilelang.distributed.launch(fn, nprocs) or "
                                   "torchrun")
        dist.init_process_group("gloo")
        owns = True
    world = dist.get_world_size()
    if world > int(_core.dist_max_ranks):
        raise DistributedError(f"at most {int(_core.dist_max_ranks)} ranks are supported, the job has {world}")
    _S.rank, _S.world = dist.get_rank(), world
    _S.local_rank = int(os.environ.get("LOCAL_RANK", _S.rank))
    _S.owns_pg = owns
    _S.group = None if dist.get_backend() == "gloo" else dist.new_group(backend="gloo")
    _S.device, _S.heap_size = device, heap_size
    try:
        if device == "cpu":
            _init_cpu_heaps()
        else:
            _init_cuda_heaps(torch)
        _core.dist_set_context(_S.rank, _S.world, _S.heap_size, float(timeout), 0, _S.bases)
    except BaseException:
        _teardown()
        raise
    _S.offset = int(_core.dist_ctrl_bytes)
    atexit.register(finalize)
    barrier()


def _init_cpu_heaps():
    token = _all_gather(secrets.token_hex(8))[0]
    d = _shm_dir(_S.heap_size)
    path = os.path.join(d, f"tilelang-dist-{token}-{_S.rank}")
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    try:
        os.ftruncate(fd, _S.heap_size)
        try:
            os.posix_fallocate(fd, 0, _S.heap_size)  # fail here, not with SIGBUS in a kernel, when short of space
        except (AttributeError, OSError) as e:
            if isinstance(e, OSError):
                raise DistributedError(f"cannot reserve the {_S.heap_size >> 20} MiB shared-memory heap in {d}: {e}; "
                                       "set TILELANG_DIST_SHM_DIR or a smaller heap") from e
    finally:
        os.close(fd)
    paths = _all_gather(path)
    try:
        for p in paths:
            fd = os.open(p, os.O_RDWR)
            try:
                mm = mmap.mmap(fd, _S.heap_size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            finally:
                os.close(fd)
            _S.mmaps.append(mm)
        _S.bases = [ctypes.addressof(ctypes.c_char.from_buffer(mm)) for mm in _S.mmaps]
    finally:
        _all_gather(True)  # every rank mapped every file: the names can go
        try:
            os.unlink(path)
        except OSError:
            pass
    _S.base = _S.bases[_S.rank]


def _init_cuda_heaps(torch):
    if not torch.cuda.is_available():
        raise DistributedError("tilelang.distributed.init(device=\"cuda\"): torch sees no GPU")
    n = torch.cuda.device_count()
    share = os.environ.get("TILELANG_DIST_SHARE_GPU", "0") not in ("", "0")
    if _S.local_rank >= n and not share:
        raise DistributedError(f"rank {_S.rank} has LOCAL_RANK {_S.local_rank} but this node has {n} GPU(s); "
                               "start one process per GPU (or set TILELANG_DIST_SHARE_GPU=1 to let several ranks "
                               "share a GPU, for testing)")
    dev = _S.local_rank % n
    _S.local_rank = dev
    torch.cuda.set_device(dev)
    torch.cuda.init()
    cu = _core.cuda
    _S.cuda_heap = cu.malloc(_S.heap_size, dev)
    cu.memset(_S.cuda_heap, 0, _S.heap_size, dev)
    handles = _all_gather(bytes(cu.ipc_get_handle(_S.cuda_heap, dev)))
    bases = []
    for r, h in enumerate(handles):
        if r == _S.rank:
            bases.append(_S.cuda_heap)
        else:
            p = cu.ipc_open_handle(h, dev)
            _S.ipc_peers.append(p)
            bases.append(p)
    _S.bases = bases
    _S.base = _S.cuda_heap


def _to_torch_dtype(dtype):
    import torch
    if isinstance(dtype, torch.dtype):
        return dtype
    from ..jit.adapter import torch_dtype
    from ..language.dtypes import to_dtype
    try:
        return torch_dtype(str(to_dtype(dtype)))
    except ValueError as e:
        raise TypeError(f"tilelang.distributed.empty: {e}") from None


class _CudaView:
    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False), "version": 3,
                                         "strides": None}


def empty(shape, dtype="float32"):
    """A tensor in symmetric memory (torch; on this rank's device). Collective: every rank makes the
    same calls in the same order (checked), so a tensor has the same offset in every heap and a
    kernel reaches a peer's copy of it. Memory is released by finalize()."""
    import torch
    _require("tilelang.distributed.empty()")
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"tilelang.distributed.empty: negative dimension in {shape}")
    tdt = _to_torch_dtype(dtype)
    count = 1
    for s in shape:
        count *= s
    nbytes = count * torch.empty((), dtype=tdt).element_size()
    off = _S.offset
    ask = (off, nbytes, shape, str(tdt))
    asks = _all_gather(ask)
    for r, a in enumerate(asks):
        if a != ask:
            raise DistributedError(f"symmetric allocation mismatch: rank {_S.rank} allocates {shape} {tdt} at offset "
                                   f"{off}, rank {r} allocates {a[2]} {a[3]} at offset {a[0]}; every rank must make "
                                   "the same tilelang.distributed.empty/zeros calls in the same order")
    end = off + max(nbytes, 1)
    if end > _S.heap_size:
        raise DistributedError(f"the symmetric heap is full: {nbytes} more bytes needed, {_S.heap_size - off} of "
                               f"{_S.heap_size} left; pass a larger heap_size to init/launch (or TILELANG_DIST_HEAP)")
    _S.offset = (end + _ALIGN - 1) // _ALIGN * _ALIGN
    if _S.device == "cpu":
        flat = torch.frombuffer(_S.mmaps[_S.rank], dtype=torch.uint8, count=max(nbytes, 1), offset=off)
    else:
        flat = torch.as_tensor(_CudaView(_S.base + off, max(nbytes, 1)), device=f"cuda:{_S.local_rank}")
    return flat[:nbytes].view(tdt).reshape(shape)


alloc_symmetric = empty


def zeros(shape, dtype="float32"):
    """empty() filled with zeros (on this rank; call barrier() before peers may read it)."""
    t = empty(shape, dtype)
    t.zero_()
    return t


def barrier():
    """Host barrier of all ranks, after this rank's device work is done."""
    _require("tilelang.distributed.barrier()")
    torch, dist = _torch_dist()
    if _S.device == "cuda":
        torch.cuda.synchronize()
    dist.barrier(group=_S.group)


def _teardown():
    try:
        _core.dist_set_context(0, 0, 0, 0.0, 0, [])
    except Exception:  # noqa: BLE001
        pass
    dev = _S.local_rank
    for p in _S.ipc_peers:
        try:
            _core.cuda.ipc_close_handle(p, dev)
        except Exception:  # noqa: BLE001
            pass
    _S.ipc_peers = []
    if _S.cuda_heap:
        try:
            _core.cuda.free(_S.cuda_heap, dev)
        except Exception:  # noqa: BLE001
            pass
        _S.cuda_heap = 0
    for mm in _S.mmaps:
        try:
            mm.close()
        except (BufferError, ValueError):
            pass  # a tensor still views it: the mapping goes with the process
    _S.mmaps = []
    _S.bases = []
    _S.world = 0


def finalize():
    """Leaves the job: waits for every rank, frees the heaps (tensors from empty() become invalid)."""
    if _S.world == 0:
        return
    torch, dist = _torch_dist()
    try:
        if _S.device == "cuda":
            torch.cuda.synchronize()
        dist.barrier(group=_S.group)
    except Exception:  # noqa: BLE001 - a peer is gone; still release what this process holds
        pass
    owns = _S.owns_pg
    _teardown()
    if owns and dist.is_initialized():
        dist.destroy_process_group()


# ---- the launcher -------------------------------------------------------------------------------

def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _child(r, nprocs, port, fn, args, kwargs, dev, heap_size, timeout, q):
    os.environ.update({"RANK": str(r), "LOCAL_RANK": str(r), "WORLD_SIZE": str(nprocs), "LOCAL_WORLD_SIZE": str(nprocs),
                       "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    try:
        init(device=dev, heap_size=heap_size, timeout=timeout)
        out = fn(*args, **kwargs)
        finalize()
        q.put((r, True, out))
    except BaseException as e:  # noqa: BLE001 - reported to the parent
        q.put((r, False, f"{type(e).__name__}: {e}\n{traceback.format_exc()}"))
        q.close()
        q.join_thread()  # the report reaches the parent before this process ends
        os._exit(1)


def launch(fn, nprocs, *args, device="cpu", heap_size=None, timeout=None, join_timeout=None, share_gpu=False,
           **kwargs):
    """Runs fn(*args, **kwargs) in `nprocs` new processes (ranks 0..nprocs-1 of one job on this
    node, each initialised with init(device, heap_size, timeout)) and returns their results, by rank.
    A rank that raises or exits makes launch raise DistributedError naming it (the others are
    stopped). fn must be importable (a module-level function). share_gpu=True lets ranks share
    GPUs when there are more ranks than GPUs (rank r uses GPU r % count; for testing)."""
    if share_gpu:
        os.environ["TILELANG_DIST_SHARE_GPU"] = "1"
    import multiprocessing as mp
    if not isinstance(nprocs, int) or nprocs < 1:
        raise ValueError(f"tilelang.distributed.launch: nprocs must be a positive int, got {nprocs!r}")
    if nprocs > int(_core.dist_max_ranks):
        raise ValueError(f"tilelang.distributed.launch: at most {int(_core.dist_max_ranks)} ranks, got {nprocs}")
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_child, args=(r, nprocs, port, fn, args, kwargs, device, heap_size, timeout, q),
                         daemon=False) for r in range(nprocs)]
    for p in procs:
        p.start()
    results, errors = {}, {}
    import queue as _queue
    import time
    deadline = None if join_timeout is None else time.monotonic() + join_timeout
    try:
        while len(results) + len(errors) < nprocs:
            try:
                r, ok, payload = q.get(timeout=0.5)
                (results if ok else errors)[r] = payload
                if not ok:
                    break
                continue
            except _queue.Empty:
                pass
            dead = [r for r, p in enumerate(procs) if p.exitcode not in (None, 0) and r not in errors and r not in results]
            if dead:
                # Drain what the dead rank may have sent.
                try:
                    while True:
                        r, ok, payload = q.get(timeout=0.2)
                        (results if ok else errors)[r] = payload
                except _queue.Empty:
                    pass
                for r in dead:
                    if r not in errors and r not in results:
                        errors[r] = f"exited with code {procs[r].exitcode} without a Python exception"
                break
            if deadline is not None and time.monotonic() > deadline:
                errors[-1] = f"the job did not finish within {join_timeout} s"
                break
    finally:
        if errors:
            for p in procs:
                if p.is_alive():
                    p.terminate()
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
                p.join()
    if errors:
        first = min(errors)
        who = "the launcher" if first == -1 else f"rank {first}"
        raise DistributedError(f"distributed job of {nprocs} ranks failed: {who}: {errors[first]}")
    return [results[r] for r in range(nprocs)]


from .copy_engine import CopyEngineAllGather  # noqa: E402 - uses the state above
