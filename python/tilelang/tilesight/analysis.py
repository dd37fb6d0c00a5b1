"""IR analysis: one walk over a kernel's tile-level IR that counts, per block of the grid, the work of
every tile op and loop (FLOPs by kind, global / shared bytes moved, global round trips) and the
on-chip footprint (shared memory with pipeline multi-versioning, fragments, Ascend L1 / L0 / UB).

Entry: `analyze(func, dyn=None) -> KernelProfile`. No compilation, no run: the input is the IR the
frontend produced (the same object tilelang.compile lowers), read through tilelang._core's IR classes.
Loop bounds that depend on the block index (causal attention) are evaluated at the average block;
dynamic dimensions need a value (`dyn={"M": 4096}`).
"""
import dataclasses
import functools
import math
from typing import Dict, List, Optional

from .. import _core

__all__ = ["KernelProfile", "GemmInfo", "analyze"]

_TRANSCENDENTAL = {"exp", "exp2", "log", "log2", "ln", "sqrt", "rsqrt", "tanh", "sigmoid", "sin", "cos", "pow",
                   "__exp", "__log", "__sin", "__cos", "silu", "reciprocal", "div", "ieee_fdiv", "ieee_fsqrt"}
_IGNORED_OPS = {"annotate_layout", "annotate_address", "print", "dump_tensor"}
_SHARED = ("shared", "shared.dyn")
_ASCEND_SCOPES = ("L1", "UB", "L0A", "L0B", "L0C", "L0")


def _bits(dtype):
    return _bits_of(str(dtype))


@functools.lru_cache(maxsize=None)
def _bits_of(name):
    # a handful of dtype names per process; each lookup was a call into _core per tile op
    try:
        return int(_core.dtype_info(name)[1])
    except Exception:  # noqa: BLE001
        return 32


def _nbytes(dtype):
    return max(1, _bits(dtype)) / 8.0


@dataclasses.dataclass
class GemmInfo:
    """One T.gemm (or Ascend gemm_v0 / mma) site: its shape, operand dtype and scopes, and how many
    times one block runs it."""
    M: int
    N: int
    K: int
    dtype: str
    a_scope: str
    b_scope: str
    count: float


@dataclasses.dataclass
class KernelProfile:
    """What one kernel does, per block of its grid (counts are averages over blocks)."""
    name: str
    grid: tuple
    threads: int
    is_npu: bool = False
    tensor_flops: float = 0.0            # gemm multiply-adds x 2
    vector_flops: float = 0.0            # element-wise / reduction arithmetic (CUDA cores, cpu SIMD, Ascend vector)
    transcendental_ops: float = 0.0      # exp, log, sqrt, ... results
    global_read_bytes: float = 0.0
    global_write_bytes: float = 0.0
    shared_read_bytes: float = 0.0       # tile-op reads of shared memory (gemm operands, copies out)
    global_round_trips: float = 0.0      # global->on-chip copies issued (each waits for memory once)
    shared_bytes: int = 0                # shared-memory footprint with pipeline stages
    fragment_bytes: int = 0              # register fragments of the whole block
    local_bytes: int = 0                 # per-thread locals (T.alloc_local / alloc_var)
    scope_bytes: Dict[str, int] = dataclasses.field(default_factory=dict)   # Ascend L1 / UB / L0* footprints
    pipeline_stages: int = 1             # the deepest T.Pipelined num_stages
    pipeline_iters: float = 0.0          # trip count per block of the pipelined (or main serial) loop
    gemms: List[GemmInfo] = dataclasses.field(default_factory=list)
    vector_by_op: Dict[tuple, float] = dataclasses.field(default_factory=dict)  # (op, bits) -> elements
    copy_bytes_by_path: Dict[str, float] = dataclasses.field(default_factory=dict)  # "global->shared", ...
    copy_count_by_path: Dict[str, float] = dataclasses.field(default_factory=dict)
    vector_calls_by_op: Dict[tuple, float] = dataclasses.field(default_factory=dict)
    global_buffer_bytes: float = 0.0     # sum of the tensor parameters' sizes (the unique DRAM footprint)
    # per global buffer read: [bytes per block, the grid dimensions its addresses depend on]
    global_reads: Dict[str, list] = dataclasses.field(default_factory=dict)
    swizzle_panel: int = 0               # T.use_swizzle(panel_size) of the GPU form (block order)
    vector_lanes: int = 0                # Ascend Expert form: vector sub-cores per block (vid extent)
    # slowest block's work / the average block's (from loop bounds and branches that depend on the
    # block index); decides a single wave's time, where nothing rebalances the blocks
    imbalance: float = 1.0
    # cuda: what the compiler will do with the kernel (read from its lowering, tilesight.estimate):
    # warp-specialized (a producer warpgroup added; one block per SM), persistent tiles.
    warp_specialized: bool = False
    persistent: bool = False
    lowered_local_bytes: int = 0         # per-thread register arrays of the lowered kernel (0: unknown)
    lowering_error: str = ""             # the cuda lowering rejects the kernel (it would not compile)
    notes: List[str] = dataclasses.field(default_factory=list)

    @property
    def num_blocks(self):
        n = 1
        for g in self.grid:
            n *= g
        return n

    @property
    def global_bytes(self):
        return self.global_read_bytes + self.global_write_bytes

    def total(self, field):
        """A per-block count over the whole grid."""
        return getattr(self, field) * self.num_blocks


class _Walker:
    def __init__(self, func, dyn):
        self.func = func
        self.dyn = dict(dyn or {})
        self.env = {}                    # hash(var) -> value (float), the average block's values
        self.p = KernelProfile(name=getattr(func, "name", "kernel"), grid=(1,), threads=1)
        self.allocs = []                 # (buffer, scope, bytes)
        self.staged = set()              # hash(buffer) of shared / L1 buffers filled inside a pipelined loop
        self.pipe_depth = []             # num_stages of the enclosing pipelined loops
        self.pipe_mult = []              # trip-count multiplier at each pipelined loop
        self.main_loop_iters = 0.0
        self.dep = {}                    # hash(var) -> grid dimensions its value depends on
        self.block_dim = {}              # hash(block var) -> its grid dimension
        self.let_expr = {}               # hash(let var) -> its value expression
        self.loops = []                  # enclosing loops: (dependency marker, min, trip count)
        for v in getattr(func, "dynamic_vars", []) or []:
            name = v.name
            if name in self.dyn:
                self.env[hash(v)] = float(self.dyn[name])

    # ---- expressions ---------------------------------------------------------------------------------
    def value(self, e, over=None):
        """The value of an index expression at the average block (None: unknown); `over` pins grid
        dimensions to given block indices."""
        if e is None:
            return None
        if isinstance(e, (int, float)):
            return float(e)
        try:
            kind = e.kind
        except AttributeError:
            return None
        if kind in ("int", "float"):
            v = e.value
            return float(v) if v is not None else None
        if kind == "var":
            h = hash(e)
            if over:
                dim = self.block_dim.get(h)
                if dim is not None and dim in over:
                    return float(over[dim])
                if ("L", h) in over:
                    return float(over[("L", h)])
                if h in self.let_expr and self.dep.get(h):
                    return self.value(self.let_expr[h], over)
            return self.env.get(h)
        if kind == "cast":
            return self.value(e.operands[0], over)
        if kind == "select":
            c, t, f = (self.value(x, over) for x in e.operands)
            if c is None:
                return None if t is None or f is None else (t + f) / 2
            return t if c else f
        if kind == "binary":
            a, b = (self.value(x, over) for x in e.operands)
            if a is None or b is None:
                return None
            op = e.op
            try:
                if op == "add":
                    return a + b
                if op == "sub":
                    return a - b
                if op == "mul":
                    return a * b
                if op in ("div", "floordiv"):
                    return a / b if "float" in e.dtype else math.floor(a / b) if a == int(a) else a / b
                if op in ("mod", "floormod"):
                    return a % b
                if op == "min":
                    return min(a, b)
                if op == "max":
                    return max(a, b)
                if op in ("lt", "le", "gt", "ge", "eq", "ne"):
                    return float({"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b, "eq": a == b,
                                  "ne": a != b}[op])
                if op == "and":
                    return float(bool(a) and bool(b))
                if op == "or":
                    return float(bool(a) or bool(b))
            except ZeroDivisionError:
                return None
            return None
        return None

    def deps(self, e):
        """The grid dimensions an expression depends on (through block variables and lets)."""
        try:
            kind = e.kind
        except AttributeError:
            return frozenset()
        if kind == "var":
            return self.dep.get(hash(e), frozenset())
        if kind in ("int", "float", "string"):
            return frozenset()
        out = frozenset()
        for x in e.operands:
            out |= self.deps(x)
        return out

    def record_read(self, buf, nbytes, indices):
        d = frozenset()
        for x in indices:
            d |= self.deps(x)
        d = frozenset(x for x in d if isinstance(x, int))
        key = buf.name + "#" + str(hash(buf))
        ent = self.p.global_reads.setdefault(key, [0.0, frozenset()])
        ent[0] += nbytes
        ent[1] = ent[1] | d

    def block_stats(self, e, per_block_loops=False):
        """(average over the grid's blocks, slowest block / average) of `e` when it depends on the
        block index, else (its value, 1). With `per_block_loops`, each block's value is itself the
        average over the enclosing loops' iterations that `e` depends on (a branch inside a loop).
        At most ~16K evaluations: blocks and iterations are sampled evenly beyond that."""
        deps = self.deps(e)
        dims = sorted(d for d in deps if isinstance(d, int))
        loops = [lp for lp in self.loops if lp[0] in deps] if per_block_loops else []
        if not dims and not loops:
            return self.value(e), 1.0
        sizes = [max(1, int(self.p.grid[d])) if d < len(self.p.grid) else 1 for d in dims]
        total = 1
        for n in sizes:
            total *= n
        iters = 1
        loop_pts = []
        for mark, lo, n in loops:
            k = max(1, min(int(n), 64))
            pts = [lo + (n - 1) * (i / (k - 1) if k > 1 else 0.5) for i in range(k)] if n > 1 else [lo]
            loop_pts.append((mark, [round(x) for x in pts]))
            iters *= len(pts)
        step = max(1, math.ceil(total / max(1, 16384 // iters)))
        per_block = []
        for lin in range(0, total, step):
            over, r = {}, lin
            for d, n in zip(dims, sizes):
                over[d], r = r % n, r // n
            acc, cnt = 0.0, 0
            combos = [over]
            for mark, pts in loop_pts:
                combos = [{**c, mark: x} for c in combos for x in pts]
            for c in combos:
                v = self.value(e, c)
                if v is None:
                    return self.value(e), 1.0
                acc += v
                cnt += 1
            per_block.append(acc / cnt)
        if not per_block:
            return self.value(e), 1.0
        avg = sum(per_block) / len(per_block)
        worst = max(per_block)
        return avg, (worst / avg if avg > 0 else 1.0)

    def block_average(self, e):
        """The average of `e` over the blocks of the grid (see block_stats); records the imbalance."""
        avg, imb = self.block_stats(e)
        self.p.imbalance = max(self.p.imbalance, imb)
        return avg

    def extent(self, e, what):
        if getattr(e, "kind", None) == "int" and e.value is not None:
            return max(0.0, float(e.value))   # a constant: the same for every block
        v = self.block_average(e)
        if v is None:
            raise ValueError(f"tilesight: the {what} '{e!r}' of kernel {self.p.name} has no static value; pass "
                             "the dynamic dimensions as dyn={'name': value} to estimate it")
        return max(0.0, v)

    def expr_work(self, e, mult):
        """Counts the arithmetic of a scalar expression evaluated `mult` times and its loads."""
        kind = e.kind
        if kind == "load":
            buf = e.buffer
            scope = buf.scope
            nb = _nbytes(buf.dtype) * mult
            if scope == "global":
                self.p.global_read_bytes += nb
                if nb:
                    self.record_read(buf, nb, e.operands)
            elif scope in _SHARED:
                self.p.shared_read_bytes += nb
            for x in e.operands:
                if x.kind not in ("int", "var"):
                    self.expr_work(x, 0.0)   # index arithmetic: free (address generation)
            return
        if kind == "binary":
            if e.op in ("add", "sub", "mul", "min", "max") and "float" in e.dtype:
                self.p.vector_flops += mult
            elif e.op in ("div",) and "float" in e.dtype:
                self.p.transcendental_ops += mult
            elif e.op not in ("add", "sub", "mul"):
                self.p.vector_flops += mult * 0.5 if "int" not in e.dtype else 0.0
        elif kind == "call":
            if e.op in _TRANSCENDENTAL:
                self.p.transcendental_ops += mult
            else:
                self.p.vector_flops += mult
        elif kind in ("select", "unary"):
            self.p.vector_flops += mult
        for x in e.operands:
            self.expr_work(x, mult)

    # ---- regions ---------------------------------------------------------------------------------
    def region(self, r):
        ext = [self.extent(x, "region extent") for x in r.extents]
        n = 1.0
        for x in ext:
            n *= x
        return ext, n

    # ---- statements -------------------------------------------------------------------------------
    def walk(self, s, mult):
        k = s.kind
        if k == "seq":
            for x in s.seq:
                self.walk(x, mult)
        elif k == "let":
            self.env[hash(s.var)] = self.value(s.value)
            self.dep[hash(s.var)] = self.deps(s.value)
            self.let_expr[hash(s.var)] = s.value
            self.walk(s.body, mult)
        elif k == "attr":
            self.walk(s.body, mult)
        elif k == "allocate":
            b = s.buffer
            n = 1.0
            for d in b.shape:
                n *= self.extent(d, f"shape of buffer {b.name}")
            self.allocs.append((b, b.scope, n * _nbytes(b.dtype)))
            self.walk(s.body, mult)
        elif k == "kernel":
            self.kernel(s, mult)
        elif k == "for":
            self.loop(s, mult)
        elif k == "if":
            # the fraction of blocks taking the branch when the condition depends on the block only
            c, imb = self.block_stats(s.cond, per_block_loops=True)
            self.p.imbalance = max(self.p.imbalance, imb)
            if c is None:
                self.walk(s.then_case, mult)
            else:
                c = min(1.0, max(0.0, c))
                if c > 0:
                    self.walk(s.then_case, mult * c)
                if s.else_case is not None and c < 1:
                    self.walk(s.else_case, mult * (1 - c))
        elif k == "store":
            b = s.buffer
            nb = _nbytes(b.dtype) * mult
            if b.scope == "global":
                self.p.global_write_bytes += nb
            self.expr_work(s.value, mult)
        elif k == "tile_op":
            self.tile_op(s, mult)
        # evaluate / loop_control: no data movement the model counts

    def kernel(self, s, mult):
        grid = [self.extent(g, "grid extent") for g in s.grid]
        threads = [self.extent(t, "thread extent") for t in (s.threads or [])]
        self.p.grid = tuple(int(round(g)) for g in grid)
        t = 1
        for x in threads:
            t *= int(round(x))
        self.p.threads = max(1, t)
        attrs = s.attrs or {}
        self.p.is_npu = bool(attrs.get("is_npu", False))
        if self.p.is_npu and attrs.get("npu_vid", False) and len(self.p.grid) > 1:
            # Expert form: the second "grid" dimension is the vector sub-core (vid) of one AI core
            self.p.vector_lanes = int(self.p.grid[1])
            self.p.grid = self.p.grid[:1]
        for i, (v, g) in enumerate(zip(s.block_vars or [], grid)):
            self.env[hash(v)] = (g - 1) / 2.0
            self.dep[hash(v)] = frozenset([i])
            self.block_dim[hash(v)] = i
        try:
            self.p.swizzle_panel = int(attrs.get("use_swizzle_panel", 0) or 0)
        except (TypeError, ValueError):
            self.p.swizzle_panel = 0
        for v, g in zip(s.thread_vars or [], threads):
            self.env[hash(v)] = (g - 1) / 2.0
        self.walk(s.body, mult)

    def loop(self, s, mult):
        lo = self.value(s.min)
        n = self.extent(s.extent, f"extent of loop {s.var.name}")
        self.env[hash(s.var)] = (lo or 0.0) + max(n - 1, 0) / 2.0
        mark = ("L", hash(s.var))
        self.dep[hash(s.var)] = frozenset([mark])
        self.loops.append((mark, lo or 0.0, n))
        try:
            self._loop_body(s, mult, n)
        finally:
            self.loops.pop()

    def _loop_body(self, s, mult, n):
        kind = s.for_kind
        if kind == "pipelined":
            ann = s.annotations or {}
            stages = int(ann.get("num_stages", 1) or 1)
            self.p.pipeline_stages = max(self.p.pipeline_stages, stages)
            self.pipe_depth.append(stages)
            self.main_loop_iters = max(self.main_loop_iters, n * mult)
            self.walk(s.body, mult * n)
            self.pipe_depth.pop()
            return
        if kind == "serial" and not self.pipe_depth:
            self.main_loop_iters = max(self.main_loop_iters, n * mult) if self._has_copy(s.body) else \
                self.main_loop_iters
        self.walk(s.body, mult * n)

    def _has_copy(self, s):
        text = repr(s)
        return "copy(" in text or "T.copy" in text

    def tile_op(self, s, mult):
        op = s.op
        args = s.args
        attrs = s.attrs or {}
        regions = [a for a in args if hasattr(a, "extents")]
        if op in _IGNORED_OPS:
            return
        if op == "copy":
            src, dst = regions[0], regions[1]
            _, n = self.region(src)
            sb, db = src.buffer, dst.buffer
            rbytes, wbytes = n * _nbytes(sb.dtype) * mult, n * _nbytes(db.dtype) * mult
            path = f"{sb.scope}->{db.scope}"
            self.p.copy_bytes_by_path[path] = self.p.copy_bytes_by_path.get(path, 0.0) + rbytes
            self.p.copy_count_by_path[path] = self.p.copy_count_by_path.get(path, 0.0) + mult
            if sb.scope == "global":
                self.p.global_read_bytes += rbytes
                self.p.global_round_trips += mult
                self.record_read(sb, rbytes, src.mins)
                if self.pipe_depth and self.pipe_depth[-1] > 1:
                    self.staged.add(hash(db))
            elif sb.scope in _SHARED:
                self.p.shared_read_bytes += rbytes
            if db.scope == "global":
                self.p.global_write_bytes += wbytes
            return
        if op in ("gemm", "gemm_v0", "mma"):
            a, b, c = regions[0], regions[1], regions[2]
            cext = [x for x in self.region(c)[0] if x != 1] or [1.0]
            aext = [x for x in self.region(a)[0] if x != 1] or [1.0]
            M = cext[-2] if len(cext) >= 2 else 1.0
            N = cext[-1]
            if len(aext) >= 2:
                K = aext[-2] if attrs.get("transpose_A", False) else aext[-1]
            else:
                K = aext[-1]
            self.p.tensor_flops += 2.0 * M * N * K * mult
            self.p.gemms.append(GemmInfo(int(M), int(N), int(K), a.buffer.dtype, a.buffer.scope, b.buffer.scope,
                                         mult))
            for r, ext in ((a, M * K), (b, K * N)):
                if r.buffer.scope in _SHARED:
                    self.p.shared_read_bytes += ext * _nbytes(r.buffer.dtype) * mult
                elif r.buffer.scope == "global":
                    self.p.global_read_bytes += ext * _nbytes(r.buffer.dtype) * mult
            return
        if not regions:
            return
        _, n = self.region(regions[0])
        name = op[5:] if op.startswith("tile.") else op
        if op in ("reduce", "cumsum"):
            _, n = self.region(regions[0])
            name = f"reduce_{attrs.get('type', 'sum')}" if op == "reduce" else op
        key = (name, _bits(regions[-1].buffer.dtype))
        self.p.vector_by_op[key] = self.p.vector_by_op.get(key, 0.0) + n * mult
        self.p.vector_calls_by_op[key] = self.p.vector_calls_by_op.get(key, 0.0) + mult
        if name in _TRANSCENDENTAL:
            self.p.transcendental_ops += n * mult
        elif op != "fill":
            self.p.vector_flops += n * mult
        if op.startswith("atomic"):
            dst = regions[0]
            self.p.global_read_bytes += n * _nbytes(dst.buffer.dtype) * mult
            self.p.global_write_bytes += n * _nbytes(dst.buffer.dtype) * mult
        for r in regions:
            if r.buffer.scope == "global" and not op.startswith("atomic"):
                self.p.global_read_bytes += n * _nbytes(r.buffer.dtype) * mult

    # ---- entry ------------------------------------------------------------------------------------
    def run(self):
        f = self.func
        total = 0.0
        for prm in f.params:
            if hasattr(prm, "shape") and hasattr(prm, "scope"):
                n = 1.0
                for d in prm.shape:
                    v = self.value(d)
                    if v is None:
                        raise ValueError(f"tilesight: parameter {prm.name} of {self.p.name} has a dynamic shape; "
                                         "pass dyn={'name': value} for its dimensions")
                    n *= v
                total += n * _nbytes(prm.dtype)
        self.p.global_buffer_bytes = total
        self.walk(f.body, 1.0)
        p = self.p
        p.pipeline_iters = self.main_loop_iters
        for b, scope, nbytes in self.allocs:
            if scope in _SHARED:
                stages = p.pipeline_stages if hash(b) in self.staged else 1
                p.shared_bytes += int(nbytes * stages)
            elif scope == "fragment":
                p.fragment_bytes += int(nbytes)
            elif scope in ("local", "local.var"):
                p.local_bytes += int(nbytes)
            elif scope in _ASCEND_SCOPES:
                stages = p.pipeline_stages if hash(b) in self.staged else 1
                p.scope_bytes[scope] = p.scope_bytes.get(scope, 0) + int(nbytes * stages)
        return p


def analyze(func, dyn: Optional[dict] = None) -> KernelProfile:
    """The KernelProfile of `func` (a @T.prim_func, a tilelang._core.PrimFunc, or a compiled kernel)."""
    prim = _prim_of(func)
    return _Walker(prim, dyn).run()


def _prim_of(func):
    prim_type = _core.PrimFunc
    if isinstance(func, prim_type):
        return func
    for attr in ("ir", "func"):
        v = getattr(func, attr, None)
        if isinstance(v, prim_type):
            return v
    pf = getattr(func, "prim_func", None)
    if pf is not None and pf is not func:
        return _prim_of(pf)
    raise TypeError(f"tilesight: expected a @T.prim_func, a PrimFunc or a compiled kernel, got {type(func).__name__}")
