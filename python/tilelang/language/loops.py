"""Loop iterables: T.serial / range, T.unroll, T.vectorized, T.Parallel, T.Pipelined, T.Persistent.

Each is a LoopSpec; the rewritten `for` statement calls `spec.run(ctx, target_names)`, which opens
the IR loop(s), yields the loop variable(s) once (the body is run once, emitting IR) and closes them.
"""
from .. import _core
from .._core import PrimExpr, Var
from .context import LoopSpec, as_int, syntax_error

__all__ = ["serial", "Serial", "unroll", "Unroll", "vectorized", "Vectorized", "Parallel", "Pipelined",
           "Persistent", "grid", "parallel"]


def _index(v, what):
    e = _core.to_expr(v)
    if e.dtype not in ("int32", "int64", "int16", "int8", "uint8", "uint16", "uint32", "uint64"):
        raise TypeError(f"{what} must be an integer, got {e.dtype} '{e!r}'")
    return e


def _var_dtype(*exprs):
    return "int64" if any(e.dtype == "int64" for e in exprs) else "int32"


def _one_name(names, what, default="i"):
    if not names:
        return default
    if len(names) != 1:
        raise syntax_error(f"{what} yields one loop variable, but the `for` unpacks it into {len(names)} names")
    return names[0]


class _Range(LoopSpec):
    """serial / unroll / vectorized: start, stop, step."""

    kind = "serial"

    def __init__(self, start, stop=None, step=None, annotations=None, what="T.serial"):
        if stop is None:
            start, stop = 0, start
        self.what = what
        self.start = _index(start, f"{what} start")
        self.stop = _index(stop, f"{what} stop")
        self.step = None if step is None else _index(step, f"{what} step")
        self.annotations = annotations

    def run(self, ctx, names):
        name = _one_name(names, self.what)
        start, stop, step = self.start, self.stop, self.step
        dt = _var_dtype(start, stop)
        b = ctx.b
        if step is None or (step.kind == "int" and step.value == 1):
            var = Var(name, dt)
            b.enter_for(var, start, _core.make_binary("sub", stop, start), self.kind, self.annotations)
            ctx.push_frame()
            ctx.loops.append((self.kind, ctx.depth))
            yield var
            ctx.loops.pop()
            ctx.exit_frame()
            return
        # A step other than 1: the loop runs over the trip count, the user variable is a let.
        if step.kind == "int" and step.value == 0:
            raise ValueError(f"{self.what}: step must not be 0")
        if step.kind == "int" and step.value < 0:
            trips = _core.ceildiv(_core.make_binary("sub", start, stop), -step.value)
        else:
            trips = _core.ceildiv(_core.make_binary("sub", stop, start), step)
        it = Var(name + "_iter", dt)
        b.enter_for(it, 0, trips, self.kind, self.annotations)
        ctx.push_frame()
        var = Var(name, dt)
        b.let(var, start + it * step)
        ctx.loops.append((self.kind, ctx.depth))
        yield var
        ctx.loops.pop()
        ctx.exit_frame()


def serial(start, stop=None, step=None, *, annotations=None):
    """Sequential loop: T.serial(n) or T.serial(start, stop, step); `range` means the same."""
    return _Range(start, stop, step, annotations, "T.serial")


Serial = serial


class _Unroll(_Range):
    kind = "unrolled"


class _Vectorized(_Range):
    kind = "vectorized"


def unroll(start, stop=None, step=None, *, explicit=False, unroll_factor=None, annotations=None):
    """Loop to unroll: T.unroll(n)."""
    ann = dict(annotations or {})
    if unroll_factor is not None:
        ann["unroll_factor"] = int(unroll_factor)
    return _Unroll(start, stop, step, ann or None, "T.unroll")


Unroll = unroll


def vectorized(start, stop=None, *, annotations=None):
    """Loop to vectorize: T.vectorized(n)."""
    return _Vectorized(start, stop, None, annotations, "T.vectorized")


Vectorized = vectorized

_DEFAULT_NAMES = ("i", "j", "k", "l", "m", "n")


class _Parallel(LoopSpec):
    what = "T.Parallel"

    def __init__(self, extents, coalesced_width, annotations):
        if not extents:
            raise TypeError("T.Parallel needs at least one extent")
        self.extents = [_index(e, "T.Parallel extent") for e in extents]
        for k, e in enumerate(self.extents):
            if e.kind == "int" and e.value < 0:
                raise ValueError(f"T.Parallel extent {k} is negative ({e.value}); a tile loop needs a size >= 0")
        self.coalesced_width = coalesced_width
        self.annotations = annotations

    def run(self, ctx, names):
        n = len(self.extents)
        if names and len(names) != n:
            if n == 1:
                raise syntax_error(f"T.Parallel with 1 extent yields one variable, not {len(names)}")
            if len(names) != 1:
                raise syntax_error(f"T.Parallel with {n} extents yields {n} variables, not {len(names)}")
        var_names = list(names) if len(names) == n else [_DEFAULT_NAMES[k] if k < 6 else f"i{k}" for k in range(n)]
        vars_ = []
        for k, ext in enumerate(self.extents):
            ann = None
            if k == n - 1:
                ann = dict(self.annotations or {})
                if self.coalesced_width is not None:
                    ann["coalesced_width"] = int(self.coalesced_width)
            var = Var(var_names[k], _var_dtype(ext))
            ctx.b.enter_for(var, 0, ext, "parallel", ann or None)
            ctx.push_frame()
            vars_.append(var)
        ctx.loops.append(("parallel", ctx.depth))
        yield vars_[0] if n == 1 else tuple(vars_)
        ctx.loops.pop()
        for _ in range(n):
            ctx.exit_frame()


def Parallel(*extents, coalesced_width=None, loop_layout=None, prefer_async=None, annotations=None):  # noqa: N802
    """Element-wise loop nest over a tile: `for i, j in T.Parallel(M, N)`."""
    if loop_layout is not None:
        raise NotImplementedError("not implemented: T.Parallel(loop_layout=...) (layouts are inferred)")
    return _Parallel(extents, coalesced_width, annotations)


class _Grid(LoopSpec):
    """T.grid(*extents): a nest of serial loops, one variable per extent."""

    what = "T.grid"

    def __init__(self, extents):
        if not extents:
            raise TypeError("T.grid needs at least one extent")
        self.extents = [_index(e, "T.grid extent") for e in extents]

    def run(self, ctx, names):
        n = len(self.extents)
        if names and len(names) != n and not (len(names) == 1 and n > 1):
            raise syntax_error(f"T.grid with {n} extents yields {n} variables, not {len(names)}")
        var_names = list(names) if len(names) == n else [_DEFAULT_NAMES[k] if k < 6 else f"i{k}" for k in range(n)]
        vars_ = []
        for name, ext in zip(var_names, self.extents):
            var = Var(name, _var_dtype(ext))
            ctx.b.enter_for(var, 0, ext, "serial", None)
            ctx.push_frame()
            vars_.append(var)
        ctx.loops.append(("serial", ctx.depth))
        yield vars_[0] if n == 1 else tuple(vars_)
        ctx.loops.pop()
        for _ in range(n):
            ctx.exit_frame()


def grid(*extents):
    """Nested serial loops: `for i, j in T.grid(M, N)` (TVM's spelling)."""
    return _Grid(extents)


def parallel(start, stop=None, *, annotations=None):
    """TVM's one-dimensional parallel loop `T.parallel(n)`: the same as T.Parallel(n)."""
    if stop is not None:
        s = _index(start, "T.parallel start")
        if not (s.kind == "int" and s.value == 0):
            raise NotImplementedError("not implemented: T.parallel(start, stop) with start != 0; write "
                                      "`for i in T.Parallel(stop - start)` and add start to i")
        start = stop
    return _Parallel([start], None, annotations)


class _Pipelined(LoopSpec):
    what = "T.Pipelined"

    def __init__(self, start, stop, num_stages, order, stage, cross_interval, annotations):
        if stop is None:
            start, stop = 0, start
        self.start = _index(start, "T.Pipelined start")
        self.stop = _index(stop, "T.Pipelined stop")
        num_stages = as_int(num_stages, "T.Pipelined: num_stages", 0)
        cross_interval = as_int(cross_interval, "T.Pipelined: cross_interval", 1)
        ann = dict(annotations or {})
        ann["num_stages"] = num_stages
        ann["cross_interval"] = cross_interval
        for key, val in (("order", order), ("stage", stage)):
            if val is not None:
                ann[key] = [as_int(x, f"T.Pipelined: each entry of {key}") for x in val]
        if order is not None and stage is not None and len(ann["order"]) != len(ann["stage"]):
            raise ValueError(f"T.Pipelined: order has {len(ann['order'])} entries but stage has "
                             f"{len(ann['stage'])}; give one entry per statement of the loop body")
        self.annotations = ann

    def run(self, ctx, names):
        for kind, _ in ctx.loops:
            if kind == "pipelined":
                raise syntax_error("nested T.Pipelined loops are not supported; pipeline only one loop of a "
                                   "nest (make the inner one T.serial)")
        name = _one_name(names, self.what, "k")
        var = Var(name, _var_dtype(self.start, self.stop))
        ctx.b.enter_for(var, self.start, _core.make_binary("sub", self.stop, self.start), "pipelined",
                        self.annotations)
        ctx.push_frame()
        ctx.loops.append(("pipelined", ctx.depth))
        yield var
        ctx.loops.pop()
        ctx.exit_frame()


def Pipelined(start, stop=None, num_stages=0, order=None, stage=None, sync=None, group=None,  # noqa: N802
              cross_interval=1, annotations=None):
    """Software-pipelined loop: copies of iteration i+s overlap the compute of iteration i."""
    return _Pipelined(start, stop, num_stages, order, stage, cross_interval, annotations)


class _Persistent(LoopSpec):
    what = "T.Persistent"

    def __init__(self, domain, wave_size, index, group_size):
        if isinstance(domain, (PrimExpr, int)):
            domain = [domain]
        self.domain = [_index(d, "T.Persistent domain entry") for d in domain]
        if not self.domain:
            raise ValueError("T.Persistent: the domain must have at least one dimension")
        for k, d in enumerate(self.domain):
            if d.kind == "int" and d.value < 0:
                raise ValueError(f"T.Persistent: domain entry {k} is negative ({d.value})")
        self.wave_size = _index(wave_size, "T.Persistent wave_size")
        if self.wave_size.kind == "int" and self.wave_size.value <= 0:
            raise ValueError(f"T.Persistent: wave_size (the number of workers) must be positive, got "
                             f"{self.wave_size.value}")
        self.index = _index(index, "T.Persistent index")
        self.group_size = as_int(group_size, "T.Persistent: group_size", 1)

    def run(self, ctx, names):
        dom = self.domain
        n = len(dom)
        if names and len(names) != n and not (len(names) == 1 and n > 1):
            raise syntax_error(f"T.Persistent over a {n}-dimensional domain yields {n} variables, not {len(names)}")
        var_names = list(names) if len(names) == n else [f"tile{k}" for k in range(n)]
        b = ctx.b
        total = dom[0]
        for d in dom[1:]:
            total = total * d
        waves = _core.ceildiv(total, self.wave_size)
        dt = _var_dtype(total, self.wave_size, self.index)
        wave = Var("wave", dt)
        ann = {"wave_size": self.wave_size, "domain": list(dom), "group_size": self.group_size}
        b.enter_for(wave, 0, waves, "persistent", ann)
        ctx.push_frame()
        tile = Var("tile", dt)
        b.let(tile, wave * self.wave_size + self.index)
        coords = self._decode(tile, dom)
        vars_ = []
        for name, c in zip(var_names, coords):
            v = Var(name, c.dtype)
            b.let(v, c)
            vars_.append(v)
        b.enter_if(tile < total)
        ctx.push_frame()
        ctx.loops.append(("persistent", ctx.depth))
        yield vars_[0] if n == 1 else tuple(vars_)
        ctx.loops.pop()
        ctx.exit_frame()
        ctx.exit_frame()

    def _decode(self, tile, dom):
        """Tile id -> coordinates. Consecutive tiles walk `group_size` rows of the first dimension
        before moving to the next column (better L2 reuse of the operand tiles); the remaining
        dimensions are flattened into the column index, row-major."""
        if len(dom) == 1:
            return [tile]
        rows = dom[0]
        cols = dom[1]
        for d in dom[2:]:
            cols = cols * d
        g = self.group_size
        per_group = cols * g
        first_row = (tile // per_group) * g
        # Clamped to >= 1: past the last tile (skipped by the guard) it must not divide by zero.
        group_rows = _core.make_binary("max", _core.make_binary("min", rows - first_row, g), 1)
        in_group = tile % per_group
        row = first_row + in_group % group_rows
        col = in_group // group_rows
        inner = []
        for d in reversed(dom[2:]):
            inner.append(col % d)
            col = col // d
        return [row, col] + inner[::-1]


def Persistent(domain, wave_size, index, group_size=8):  # noqa: N802
    """Persistent tile schedule: `for bx, by in T.Persistent([mt, nt], workers, worker_id)`."""
    return _Persistent(domain, wave_size, index, group_size)
