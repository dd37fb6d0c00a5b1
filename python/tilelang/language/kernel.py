"""T.Kernel, T.Scope and the launch-variable helpers."""
from .. import _core
from .._core import Var
from .context import Frame, KernelInfo, current, syntax_error

__all__ = ["Kernel", "ClusterKernel", "Scope", "block_rank_in_cluster", "cluster_sync", "get_thread_binding", "get_thread_bindings", "get_block_binding",
           "get_block_bindings", "get_thread_extent", "get_thread_extents", "get_block_extent",
           "get_block_extents", "get_warp_idx", "get_warp_idx_sync", "get_lane_idx", "get_warp_group_idx"]

_BLOCK_NAMES = ("bx", "by", "bz")
_THREAD_NAMES = ("tx", "ty", "tz")


_MAX_GRID_EXTENT = 2 ** 31 - 1  # block indices are int32 (CUDA's gridDim.x limit)
_MAX_THREADS = 1024  # threads per block on every CUDA GPU


def _extent(v, what, maximum=None):
    e = _core.to_expr(v)
    if e.dtype not in ("int32", "int64", "int16", "int8", "uint8", "uint16", "uint32", "uint64"):
        raise TypeError(f"{what} must be an integer, got {e.dtype} '{e!r}'")
    if e.kind == "int" and e.value <= 0:
        raise ValueError(f"{what} must be positive, got {e.value}")
    if e.kind == "int" and maximum is not None and e.value > maximum:
        raise ValueError(f"{what} is {e.value}, more than the maximum {maximum}")
    return e


class Kernel(Frame):
    """`with T.Kernel(gx, gy, threads=128) as (bx, by):` — a grid of blocks.

    Ascend: `T.Kernel(n, is_npu=True) as (cid, vid)` (Expert form: grid [n, 2], vid is the vector
    sub-core) and `T.Kernel(n, threads=1|2, is_npu=True) as cid` (Developer form).
    """

    def __init__(self, *blocks, threads=None, is_npu=False, prelude=None, is_cpu=False, cluster_dims=None,
                 cta_cluster=None):
        if len(blocks) == 1 and isinstance(blocks[0], (list, tuple)):
            blocks = tuple(blocks[0])
        if len(blocks) > 3:
            raise ValueError(f"T.Kernel takes 1 to 3 grid extents, got {len(blocks)}")
        self.blocks = blocks
        self.threads = threads
        self.is_npu = bool(is_npu)
        self.prelude = prelude
        if cluster_dims is not None and cta_cluster is not None:
            raise ValueError("T.Kernel takes cluster_dims= (TileLang's name) or cta_cluster= (TileScale's), not both")
        self.cluster = _cluster_size(cluster_dims if cluster_dims is not None else cta_cluster)

    def __enter__(self):
        ctx = current("T.Kernel")
        if ctx.kernels:
            raise syntax_error("T.Kernel cannot be nested inside another T.Kernel")
        targets = self._targets
        grid = [_extent(g, f"T.Kernel grid extent {k}", _MAX_GRID_EXTENT) for k, g in enumerate(self.blocks)]
        attrs = {}
        threads, thread_vars = [], []
        if self.is_npu:
            attrs["is_npu"] = True
            if len(grid) != 1:
                raise ValueError(f"T.Kernel(is_npu=True) takes exactly one grid extent (the number of logical "
                                 f"blocks), got {len(grid)}")
            if self.threads is None:
                # Expert form: one logical block = 1 cube core + 2 vector cores; vid is the vector core.
                names = targets if len(targets) == 2 else ((targets[0], "vid") if targets else ("cid", "vid"))
                block_vars = [Var(names[0]), Var(names[1])]
                grid.append(_core.make_int(2))
                attrs["npu_vid"] = True
            else:
                if self.threads not in (1, 2) or isinstance(self.threads, bool):
                    raise ValueError(f"T.Kernel(is_npu=True, threads=...) takes threads=1 or threads=2 (vector cores "
                                     f"per cube core), got {self.threads!r}")
                if len(targets) > 1:
                    raise syntax_error("the Developer form T.Kernel(n, threads=1|2, is_npu=True) binds one variable "
                                       f"(the block id), not {len(targets)}; drop threads= for the Expert form "
                                       "`as (cid, vid)`")
                block_vars = [Var(targets[0] if targets else "cid")]
                attrs["npu_threads"] = int(self.threads)
        else:
            if not grid:
                grid = [_core.make_int(1)]
            names = targets if len(targets) == len(grid) else _BLOCK_NAMES[:len(grid)]
            if targets and len(targets) != len(grid) and len(targets) != 1:
                raise syntax_error(f"T.Kernel has {len(grid)} grid dimension(s) but `as` unpacks "
                                   f"{len(targets)} names")
            block_vars = [Var(n) for n in names]
            t = 128 if self.threads is None else self.threads
            tl = list(t) if isinstance(t, (list, tuple)) else [t]
            if not 1 <= len(tl) <= 3:
                raise ValueError(f"T.Kernel threads must be an int or a list of 1 to 3 ints, got {t!r}")
            threads = [_extent(x, "T.Kernel threads") for x in tl]
            if all(x.kind == "int" for x in threads):
                total = 1
                for x in threads:
                    total *= x.value
                if total > _MAX_THREADS:
                    raise ValueError(f"T.Kernel threads={t!r}: {total} threads per block, more than the "
                                     f"{_MAX_THREADS} a block can have; use fewer threads and give each more work")
            thread_vars = [Var(_THREAD_NAMES[k]) for k in range(len(threads))]
        if self.prelude is not None:
            attrs["prelude"] = str(self.prelude)
        if self.cluster > 1:
            if self.is_npu:
                raise ValueError("thread-block clusters (cluster_dims=) are a CUDA launch form; Ascend kernels have none")
            if grid[0].kind == "int" and grid[0].value % self.cluster:
                raise ValueError(f"T.Kernel(cluster_dims={self.cluster}): the first grid extent ({grid[0].value}) must be "
                                 f"a multiple of the cluster size; round the grid up and guard the extra blocks")
            if grid[0].kind != "int":
                raise NotImplementedError("T.Kernel(cluster_dims=...) with a run-time first grid extent: the cluster "
                                          "size must divide it, which only a constant extent proves")
            attrs["cluster_dims"] = self.cluster
        ctx.b.enter_kernel(grid, block_vars, threads, thread_vars, attrs)
        ctx.push_frame(is_with=True)
        ctx.kernels.append(KernelInfo(grid, block_vars, threads, thread_vars, self.is_npu, self.cluster))
        ctx.flush_before_kernel(self.is_npu)
        if len(targets) == 1 and len(block_vars) == 2 and self.is_npu:
            return block_vars[0]
        return block_vars[0] if len(block_vars) == 1 else tuple(block_vars)

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            ctx = current()
            ctx.kernels.pop()
            ctx.exit_frame()
        return False


def _cluster_size(dims):
    """The number of CTAs of a cluster from TileLang's cluster_dims (an int or 1 to 3 ints): clusters
    along the first grid dimension only (2, (2,), (2, 1, 1), ...), at most 8 CTAs (CUDA's portable
    cluster size)."""
    if dims is None:
        return 1
    d = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    if not 1 <= len(d) <= 3 or not all(isinstance(x, int) and not isinstance(x, bool) for x in d):
        raise ValueError(f"cluster_dims must be an int or 1 to 3 ints, got {dims!r}")
    d += [1] * (3 - len(d))
    if d[1] != 1 or d[2] != 1:
        raise NotImplementedError(f"cluster_dims={tuple(d)}: clusters along the second or third grid dimension are "
                                  "not implemented; cluster along the first (e.g. cluster_dims=(2, 1, 1)) and "
                                  "order the grid so that the blocks sharing operand tiles are neighbours in x")
    if d[0] not in (1, 2, 4, 8):
        raise ValueError(f"cluster_dims={tuple(d)}: a cluster has 1, 2, 4 or 8 CTAs (CUDA's portable sizes)")
    return d[0]


def ClusterKernel(*blocks, cluster_dims, threads=None, prelude=None):  # noqa: N802
    """TileLang's `with T.ClusterKernel(gx, gy, cluster_dims=2, threads=256) as (bx, by):` — T.Kernel
    launched in thread-block clusters of `cluster_dims` CTAs along x (sm_90). The blocks bx = c*k ..
    c*k + c - 1 form cluster k; on sm_90a a pipelined T.gemm multicasts the operand tiles the CTAs of a
    cluster share (docs/TARGET_CUDA.md). On cpu the clusters only group block indices."""
    return Kernel(*blocks, threads=threads, prelude=prelude, cluster_dims=cluster_dims)


def block_rank_in_cluster():
    """The rank (int32) of this block in its thread-block cluster: bx % cluster size (0 without clusters)."""
    info = current("T.block_rank_in_cluster").kernel("T.block_rank_in_cluster")
    if info.cluster <= 1:
        return _core.make_int(0)
    return info.block_vars[0] % info.cluster


def cluster_sync():
    """A barrier of every thread of every CTA of the cluster (barrier.cluster arrive + wait; CUDA
    sm_90). Also orders shared-memory writes before it with reads after it across the cluster."""
    ctx = current("T.cluster_sync")
    info = ctx.kernel("T.cluster_sync")
    if info.cluster <= 1:
        raise ValueError("T.cluster_sync() in a kernel without clusters: launch with T.Kernel(..., cluster_dims=2) "
                         "(or T.ClusterKernel), or use T.sync_threads() for a block barrier")
    ctx.b.emit_evaluate(_core.make_call("void", "tl.cluster_sync", []))


class Scope(Frame):
    """`with T.Scope("C"):` cube-core code; `with T.Scope("V"):` vector-core code (Ascend)."""

    def __init__(self, name):
        n = str(name)
        canon = {"c": "C", "cube": "C", "v": "V", "vector": "V"}.get(n.lower())
        if canon is None:
            raise ValueError(f"T.Scope takes \"C\" (cube core) or \"V\" (vector core), got {name!r}")
        self.name = canon

    def __enter__(self):
        ctx = current("T.Scope")
        ctx.require_kernel("T.Scope")
        ctx.b.enter_attr("scope", self.name)
        ctx.push_frame(is_with=True)
        return None


def _thread_info(what):
    info = current(what).kernel(what)
    if info.is_npu:
        raise syntax_error(f"{what} is a GPU/CPU launch variable; Ascend kernels have no threads (use the block id)")
    return info


def get_thread_binding(dim=0):
    """The thread index of dimension `dim` of the enclosing T.Kernel."""
    info = _thread_info("T.get_thread_binding")
    if not 0 <= dim < len(info.thread_vars):
        raise ValueError(f"T.get_thread_binding: dim {dim} out of range; the kernel has "
                         f"{len(info.thread_vars)} thread dimension(s)")
    return info.thread_vars[dim]


def get_thread_bindings():
    return list(_thread_info("T.get_thread_bindings").thread_vars)


def get_block_binding(dim=0):
    """The block index of dimension `dim` of the enclosing T.Kernel."""
    info = current("T.get_block_binding").kernel("T.get_block_binding")
    if not 0 <= dim < len(info.block_vars):
        raise ValueError(f"T.get_block_binding: dim {dim} out of range; the kernel has "
                         f"{len(info.block_vars)} grid dimension(s)")
    return info.block_vars[dim]


def get_block_bindings():
    return list(current("T.get_block_bindings").kernel("T.get_block_bindings").block_vars)


def get_thread_extent(dim=0):
    info = _thread_info("T.get_thread_extent")
    if not 0 <= dim < len(info.threads):
        raise ValueError(f"T.get_thread_extent: dim {dim} out of range")
    return info.threads[dim]


def get_thread_extents():
    return list(_thread_info("T.get_thread_extents").threads)


def get_block_extent(dim=0):
    info = current("T.get_block_extent").kernel("T.get_block_extent")
    if not 0 <= dim < len(info.grid):
        raise ValueError(f"T.get_block_extent: dim {dim} out of range")
    return info.grid[dim]


def get_block_extents():
    return list(current("T.get_block_extents").kernel("T.get_block_extents").grid)


def get_warp_idx(warp_size=32):
    """Warp index of the current thread (thread x // warp_size)."""
    return get_thread_binding(0) // warp_size


get_warp_idx_sync = get_warp_idx


def get_lane_idx(warp_size=32):
    """Lane of the current thread within its warp."""
    return get_thread_binding(0) % warp_size


def get_warp_group_idx(warp_size=32, warps_per_group=4):
    return get_thread_binding(0) // (warp_size * warps_per_group)


class KernelLaunchFrame:
    """TileLang's class of the open `with T.Kernel(...)` frame: `KernelLaunchFrame.Current()` is the
    innermost one while a kernel is parsed (None outside any)."""

    @classmethod
    def Current(cls):  # noqa: N802 (TileLang's name)
        from .context import current_or_none  # noqa: PLC0415
        ctx = current_or_none()
        return cls() if ctx is not None and ctx.kernels else None

    def get_thread_extents(self):
        """(x, y, z) thread extents (1 for dimensions the kernel does not have)."""
        ext = get_thread_extents()
        return list(ext) + [1] * (3 - len(ext))

    def get_block_extents(self):
        ext = get_block_extents()
        return list(ext) + [1] * (3 - len(ext))

    def get_thread_binding(self, dim=0):
        return get_thread_binding(dim)

    def get_block_binding(self, dim=0):
        return get_block_binding(dim)

    def get_num_threads(self):
        n = 1
        for e in self.get_thread_extents():
            n *= e
        return n
