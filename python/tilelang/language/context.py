"""The state of one @T.prim_func parse, and the run-time support its rewritten body calls.

The parser (parser.py) rewrites the kernel's AST once into Python code that runs natively:
expressions are evaluated by Python (operator overloading on PrimExpr builds IR), and only the
constructs whose meaning depends on compile-time vs run-time values are routed through the
`Context` methods below (`if_`, `for_`, `with_`, `assign`, `land`, ...). `T.*` functions find the
context being built with `current()` and emit through its IRBuilder.
"""
import operator
import threading

from .. import _core
from .._core import PrimExpr, Var, BufferLoad, Buffer, BufferRegion

__all__ = ["Context", "current", "current_or_none", "context_stack", "syntax_error", "Frame", "LoopSpec",
           "as_int"]

_TileLangSyntaxError = _core.TileLangSyntaxError

class _ThreadState(threading.local):
    def __init__(self):
        super().__init__()
        self.stack = []  # contexts being built on this thread (a kernel parsed while parsing one)


_state = _ThreadState()


def context_stack():
    """The calling thread's stack of contexts (each thread may parse its own kernel)."""
    return _state.stack


def current(what=None):
    """The context of the kernel being parsed; raises when none is."""
    stack = _state.stack
    if stack:
        return stack[-1]
    where = f"{what} " if what else "this primitive "
    raise _TileLangSyntaxError(f"{where}can only be used inside a @T.prim_func (or a @T.macro called from one)")


def current_or_none():
    stack = _state.stack
    return stack[-1] if stack else None


def syntax_error(msg):
    return _TileLangSyntaxError(msg)


def as_int(v, what, minimum=None):
    """A compile-time integer parameter (Python or numpy int); ValueError naming `what` otherwise."""
    try:
        if isinstance(v, bool):
            raise TypeError
        i = operator.index(v)
    except TypeError:
        raise ValueError(f"{what} must be a Python int, got {v!r}") from None
    if minimum is not None and i < minimum:
        raise ValueError(f"{what} must be >= {minimum}, got {i}")
    return i


_SCALAR_CLASSES = frozenset((PrimExpr, Var, BufferLoad, int, float, bool))
_CONST_KINDS = frozenset(("int", "float", "string"))


def is_runtime(v):
    """True for an IR value whose value is not known at parse time."""
    cls = v.__class__
    if cls is PrimExpr or cls is BufferLoad or cls is Var:
        return v.kind not in _CONST_KINDS
    if cls is Buffer:
        return v.scope == "local.var"
    return False


def _store_hook(buffer, key, value):
    """Buffer.__setitem__: `A[i, j] = v` stores; `A[a:b, :] = v` fills or copies the region."""
    ctx = current("a buffer store")
    ctx.require_kernel(f"storing into buffer '{buffer.name}'")
    target = buffer[key]
    if target.__class__ is BufferLoad:
        ctx.b.emit_store(buffer, target.indices, value)
        return
    from . import tile_ops  # noqa: PLC0415 (cycle)
    if value.__class__ in (Buffer, BufferRegion) and not (value.__class__ is Buffer and value.scope == "local.var"):
        tile_ops.copy(value, target)
    else:
        tile_ops.fill(target, value)


_core._buffer_store_hook = _store_hook


class _RuntimeIf:
    __slots__ = ()

    def __bool__(self):
        return True


_RUNTIME_IF = _RuntimeIf()

_COMPARE = {
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge, "eq": operator.eq,
    "ne": operator.ne, "is": operator.is_, "is_not": operator.is_not,
    "in": lambda a, b: a in b, "not_in": lambda a, b: a not in b,
}

_LOOP_NAMES = {"parallel": "T.Parallel", "pipelined": "T.Pipelined", "persistent": "T.Persistent",
               "unrolled": "T.unroll", "vectorized": "T.vectorized"}

# Kinds of entries on the loop stack: a Python (compile-time) loop, or an IR loop of a kind.
_STATIC = "static"


class KernelInfo:
    __slots__ = ("grid", "block_vars", "threads", "thread_vars", "is_npu", "cluster")

    def __init__(self, grid, block_vars, threads, thread_vars, is_npu, cluster=1):
        self.grid = grid
        self.block_vars = block_vars
        self.threads = threads
        self.thread_vars = thread_vars
        self.is_npu = is_npu
        self.cluster = cluster  # CTAs per thread-block cluster (along x), 1 without clusters


class Frame:
    """A `with` target inside a kernel (T.Kernel, T.Scope). `_targets` holds the names of its
    `as` targets (a tuple; empty without `as`), set by Context.with_."""

    _targets = ()

    def __enter__(self):
        raise NotImplementedError

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            current().exit_frame()
        return False


class LoopSpec:
    """The iterable of an IR `for` (T.serial, T.Parallel, ...). Only `for` statements of a kernel
    may iterate it; `run` is a generator that opens the loop, yields its variable(s) once, then
    closes it."""

    what = "loop"

    def __iter__(self):
        raise _TileLangSyntaxError(
            f"{self.what} can only be used as the iterable of a `for` statement inside @T.prim_func "
            "(not in a comprehension or another iteration)")

    def run(self, ctx, names):  # pragma: no cover - abstract
        raise NotImplementedError


class Context:
    """One kernel being built. The methods without a leading underscore are called by the
    rewritten kernel body (see parser.py)."""

    def __init__(self, name):
        self.name = name
        self.b = _core.IRBuilder()
        self.depth = 0            # open IR frames (if / for / with / kernel)
        self.frame_ids = [0]      # frame_ids[d]: id of the open frame at depth d
        self.frame_is_with = [True]
        self._next_frame = 1
        self.loops = []           # (kind, depth) of enclosing loops, innermost last
        self.kernels = []         # KernelInfo of enclosing T.Kernel frames
        self.func_attrs = {}
        self.global_workspaces = []  # T.alloc_global buffers: hidden trailing parameters
        self.views = []              # (view, base) buffer pairs of T.reshape / T.view
        self.reducers = {}           # T.alloc_reducer buffer -> [op, T.reducer_init value]
        self.safe_values = []        # T.annotate_safe_value: (depth, frame id, buffer, value)
        self.span = None          # span of the statement being run
        # T.printf / T.dump_tensor written before the T.Kernel block: (span, what, emit), placed
        # at the start of the next NPU kernel (TileLang-Ascend runs them on every core).
        self.before_kernel = []
        self.macro_cache = {}
        self.macro_stack = []     # macros being expanded, outermost first (recursion check)
        self._hint = None

    def finish_func(self, name, params, attrs, span):
        """The IR function: `params`, then the T.alloc_global buffers (hidden trailing parameters the
        runtime allocates; attribute tl.global_workspaces counts them), with T.reshape / T.view
        buffers folded into their storage (transform/resolve_buffer_views.h)."""
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            e = ValueError(f"{span}: the kernel name {ascii(name)} is not valid Unicode text: it holds a lone "
                           "surrogate (as os.fsdecode or errors='surrogateescape' make of bytes that are not UTF-8); "
                           "give the function a name that is (set __name__)")
            e._tl_located = True  # located at the def, not at the last statement
            raise e from None
        self.flush_before_kernel(False)
        attrs = dict(attrs)
        if self.global_workspaces:
            attrs["tl.global_workspaces"] = len(self.global_workspaces)
        ir = self.b.finish_func(name, list(params) + self.global_workspaces, attrs, span)
        if self.views:
            try:
                ir = _core.resolve_buffer_views(ir, self.views)
            except Exception as e:
                e._tl_located = True  # the message names the statement or buffer it is about
                raise
        return ir

    # ---- frames ----------------------------------------------------------------------------------
    def push_frame(self, is_with=False):
        """Records an opened IR frame; `is_with` for T.Kernel / T.Scope, whose `with` statement
        closes them even when the body returns early."""
        self.depth += 1
        fid = self._next_frame
        self._next_frame += 1
        if len(self.frame_ids) > self.depth:
            self.frame_ids[self.depth] = fid
            self.frame_is_with[self.depth] = is_with
        else:
            self.frame_ids.append(fid)
            self.frame_is_with.append(is_with)

    def pop_frame(self):
        self.depth -= 1

    def exit_frame(self):
        self.b.exit()
        self.depth -= 1

    def in_npu_body(self, what, emit):
        """Runs `emit` for `what` (T.printf, T.dump_tensor) inside a kernel; outside one, where
        TileLang-Ascend's whole function is the kernel: after an NPU kernel it joins the end of that
        kernel's body, before one it is kept for the start of the next (flush_before_kernel)."""
        if self.kernels:
            emit()
        elif self.b.reopen_last_npu_kernel():
            emit()
            self.b.exit()
        else:
            self.before_kernel.append((self.span, what, emit))

    def flush_before_kernel(self, npu):
        """Emits what in_npu_body kept (entering an NPU kernel), or reports the first of it where
        it cannot go (another kind of kernel, or none)."""
        pending, self.before_kernel = self.before_kernel, []
        if not pending:
            return
        here = self.span
        for span, what, emit in pending:
            self.at(span)
            if not npu:
                raise _TileLangSyntaxError(f"{what} must be inside a `with T.Kernel(...)` block (outside one, it "
                                           "is accepted only next to an NPU kernel, T.Kernel(..., is_npu=True))")
            emit()
        self.at(here)

    def require_kernel(self, what):
        if not self.kernels:
            raise _TileLangSyntaxError(f"{what} must be inside a `with T.Kernel(...)` block")

    def kernel(self, what):
        if not self.kernels:
            raise _TileLangSyntaxError(f"{what} must be inside a `with T.Kernel(...)` block")
        return self.kernels[-1]

    # ---- names -----------------------------------------------------------------------------------
    def hint(self, name):
        """Remembers the assignment target's name for the buffer the right-hand side allocates."""
        self._hint = name
        return name

    def take_hint(self, default):
        h = self._hint
        self._hint = None
        return h or default

    def at(self, span):
        self.span = span
        self.b.set_span(span)

    def bind(self, names, name, value):
        """`name = value`: an IR value becomes a let-bound variable; anything else stays a Python
        value (compile-time constant)."""
        self._hint = None
        cls = value.__class__
        if cls is PrimExpr or cls is BufferLoad:
            if value.kind not in _CONST_KINDS:
                old = names.get(name)
                if old is not None and old[2] and old[1] < self.depth and self.frame_ids[old[1]] == old[0]:
                    raise _TileLangSyntaxError(
                        f"'{name}' was assigned outside this loop/if and is assigned a run-time value inside "
                        "it. Kernel variables are immutable bindings, so the new value would not be seen "
                        f"after the block. Declare it with `{name} = T.alloc_var(dtype, init=...)` and "
                        "assign to it instead (or use a buffer element).")
                var = Var(name, value.dtype)
                self.b.let(var, value)
                value = var
            names[name] = (self.frame_ids[self.depth], self.depth, True, None)
        elif cls is Buffer and value.scope == "local.var":
            names[name] = (self.frame_ids[self.depth], self.depth, False, value)
        elif cls is int or cls is float or cls is bool or cls is Var:
            names[name] = (self.frame_ids[self.depth], self.depth, True, None)
        elif name in names:
            del names[name]
        return value

    def assign(self, names, name, value):
        """`name = value`: a store when `name` is an alloc_var buffer, else a binding."""
        rec = names.get(name)
        if rec is not None and rec[3] is not None and self.frame_ids[rec[1]] == rec[0] and rec[1] <= self.depth:
            # A scalar value is stored; anything else (a new buffer, a Python object) rebinds the name.
            if value.__class__ in _SCALAR_CLASSES:
                self._hint = None
                self.b.emit_store(rec[3], [0], value)
                return rec[3]
        return self.bind(names, name, value)

    def ann_assign(self, names, name, dt, value):
        """`name: dtype = value` binds a value of that dtype."""
        from .dtypes import to_dtype  # noqa: PLC0415
        d = to_dtype(dt)
        if value.__class__ in (int, float, bool):
            value = _core.make_const(d, float(value)) if value.__class__ is not int else _core.make_int(value, d)
            names.pop(name, None)
            return value
        return self.bind(names, name, _core.make_cast(d, value))

    def forget(self, names, targets):
        for t in targets:
            names.pop(t, None)

    def macro_params(self, names, params):
        for k, v in params.items():
            if v.__class__ is Buffer and v.scope == "local.var":
                names[k] = (self.frame_ids[self.depth], self.depth, False, v)

    def unpack(self, value, n):
        try:
            items = tuple(value)
        except TypeError:
            raise TypeError(f"cannot unpack a {type(value).__name__} into {n} names") from None
        if len(items) != n:
            raise ValueError(f"cannot unpack {len(items)} values into {n} names")
        return items

    # ---- conditions ------------------------------------------------------------------------------
    def cond(self, test):
        """A condition: Python bool for compile-time values, a PrimExpr for run-time ones."""
        cls = test.__class__
        if cls is bool:
            return test
        if cls is PrimExpr or cls is BufferLoad or cls is Var:
            if test.kind in _CONST_KINDS:
                return bool(test.value)
            return test
        if cls is Buffer:
            if test.scope == "local.var":
                return _core.to_expr(test)
            raise TypeError(f"buffer '{test.name}' cannot be used as a condition; compare one of its elements")
        return bool(test)

    def if_(self, test):
        c = self.cond(test)
        if c.__class__ is bool:
            return c
        self.b.enter_if(c)
        self.push_frame()
        return _RUNTIME_IF

    def else_(self, c):
        if c is _RUNTIME_IF:
            self.b.enter_else()
            fid = self._next_frame
            self._next_frame += 1
            self.frame_ids[self.depth] = fid
            return True
        return not c

    def endif(self, c):
        if c is _RUNTIME_IF:
            self.b.exit()
            self.depth -= 1

    def static_cond(self, test):
        """The condition of a `while`: only compile-time values are allowed."""
        c = self.cond(test)
        if c.__class__ is bool:
            return c
        raise _TileLangSyntaxError(
            f"`while` on the run-time condition '{c!r}' is not supported (loops need a bound); "
            "write `for i in T.serial(max_iters):` with `if not cond: break`")

    def land(self, first, *rest):
        """`a and b and ...` with Python short-circuiting on compile-time values."""
        return self._short_circuit(True, first, rest)

    def lor(self, first, *rest):
        """`a or b or ...` with Python short-circuiting on compile-time values."""
        return self._short_circuit(False, first, rest)

    def _short_circuit(self, is_and, first, rest):
        """`and` / `or` over `first` and the thunks `rest`: compile-time operands decide as in Python
        (a falsy one ends an `and`, a truthy one an `or`); run-time ones are combined in the IR."""
        acc = None
        v = first
        i = 0
        while True:
            c = self.cond(v) if is_runtime(v) or v.__class__ is PrimExpr else v
            if c.__class__ is PrimExpr or c.__class__ is BufferLoad or c.__class__ is Var:
                acc = c if acc is None else _core.make_binary("and" if is_and else "or", acc, c)
            elif bool(c) != is_and:
                return v if acc is None else _core.make_bool(not is_and)
            if i == len(rest):
                break
            v = rest[i]()
            i += 1
        return v if acc is None else acc

    def lnot(self, v):
        c = self.cond(v)
        if c.__class__ is bool:
            return not c
        return _core.make_unary("not", c)

    def cmp_chain(self, first, *rest):
        """`a < b <= c`: each operand evaluated once, the comparisons combined with `and`."""
        acc = None
        left = first
        for k in range(0, len(rest), 2):
            right = rest[k + 1]()
            c = self.cond(_COMPARE[rest[k]](left, right))
            if c.__class__ is bool:
                if not c:
                    return False if acc is None else _core.make_bool(False)
            else:
                acc = c if acc is None else _core.make_binary("and", acc, c)
            left = right
        return True if acc is None else acc

    def ifexp(self, test, a, b):
        c = self.cond(test)
        if c.__class__ is bool:
            return a() if c else b()
        return _core.make_select(c, a(), b())

    def assert_(self, test, msg=None):
        c = self.cond(test)
        if c.__class__ is bool:
            if not c:
                raise AssertionError(msg) if msg is not None else AssertionError()
            return
        self.require_kernel("a run-time assert")
        m = "" if msg is None else str(msg)
        self.b.emit_evaluate(_core.make_call("void", "tl.device_assert", [c, _core.make_string(m)]))

    # ---- loops -----------------------------------------------------------------------------------
    def range_(self, *args):
        from .loops import serial  # noqa: PLC0415
        return serial(*args)

    def for_(self, names, it, targets):
        for t in targets:
            names.pop(t, None)
        if isinstance(it, LoopSpec):
            return it.run(self, targets)
        if it.__class__ is range:
            from .loops import serial  # noqa: PLC0415
            return serial(it.start, it.stop, it.step).run(self, targets)
        if is_runtime(it) or it.__class__ in (Buffer, BufferRegion, PrimExpr):
            raise _TileLangSyntaxError(
                f"cannot iterate over {it!r}; use `for i in T.serial(n)` (or range, T.Parallel, T.Pipelined)")
        return self._static_loop(it)

    def static_range(self, *args):
        """`range` inside a comprehension: unrolled at parse time, so its bounds must be known."""
        for a in args:
            if is_runtime(a):
                raise _TileLangSyntaxError(
                    f"a comprehension cannot iterate over range(...) with the run-time bound '{a!r}': "
                    "comprehensions are unrolled at parse time; write a `for i in T.serial(n):` statement")
        return range(*args)

    def _static_loop(self, it):
        self.loops.append((_STATIC, self.depth))
        try:
            yield from it
        finally:
            self.loops.pop()

    def loop_push_static(self):
        self.loops.append((_STATIC, self.depth))

    def loop_pop(self):
        self.loops.pop()

    def brk(self, is_break):
        """`break`/`continue`: True when the innermost loop is a Python loop (the rewritten code
        then runs a real break/continue), False after emitting an IR break/continue."""
        word = "break" if is_break else "continue"
        if not self.loops:
            raise _TileLangSyntaxError(f"'{word}' outside a loop")
        kind, depth = self.loops[-1]
        if kind == _STATIC:
            if self.depth > depth:
                raise _TileLangSyntaxError(
                    f"'{word}' inside a run-time if cannot leave a compile-time (Python) loop; iterate "
                    "with T.serial instead so the loop exists at run time")
            return True
        if kind != "serial":
            raise _TileLangSyntaxError(
                f"'{word}' is only allowed in serial loops (range / T.serial), not in a {_LOOP_NAMES[kind]} loop")
        self.b.emit_loop_control(is_break)
        return False

    def ret_check(self, depth0):
        # Returning out of `with T.Kernel/T.Scope` blocks is exact (their __exit__ closes them and
        # nothing after the return runs at all); out of a run-time if or loop it is not.
        for d in range(depth0 + 1, self.depth + 1):
            if not self.frame_is_with[d]:
                raise _TileLangSyntaxError(
                    "`return` inside a run-time if or loop is not supported (the kernel cannot leave "
                    "early at run time); restructure the code with if/else")

    def with_(self, names, obj, targets):
        if not isinstance(obj, Frame):
            raise _TileLangSyntaxError(
                f"`with` of a {type(obj).__name__} object is not supported inside @T.prim_func; "
                "use `with T.Kernel(...)` or `with T.Scope(\"C\"|\"V\")`")
        for t in targets:
            names.pop(t, None)
        obj._targets = targets
        return obj
