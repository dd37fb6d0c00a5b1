"""TVM-style (TIR scripting) constructs that TileLang programs use, given their meaning here.

TileLang kernels are sometimes written the TVM way instead of with T.Kernel; this module gives
those forms the meaning they have in TVM, expressed with this project's own IR:

* `for bx in T.thread_binding(n, thread="blockIdx.x")` / `"threadIdx.x"` (and y, z): loops bound to
  the launch indices. The outermost one opens a kernel (as `with T.Kernel(...)` would) and each
  nested one adds its dimension to it (IRBuilder::set_kernel_dim); the body is per-thread code,
  exactly as inside T.Kernel. Dimensions never bound have extent 1.
* `A_ptr: T.handle` / `A: T.ptr` parameters and `T.match_buffer(A_ptr, shape, dtype)` /
  `T.make_tensor(A, shape, dtype)`: a pointer parameter whose tensor view is declared in the body.
  The parameter becomes that tensor parameter (its shape and dtype are checked at each call, as
  for any T.Tensor parameter: stricter than TileLang, which passes the bare pointer).
* `with T.attr(T.comm_reducer(combine, [identity]), "reduce_scope", ...)` around
  `T.evaluate(T.tvm_thread_allreduce(n, value, cond, out, *thread_vars))`: TVM's cross-thread
  all-reduce. Every thread contributes `value`; the threads that differ only in the listed thread
  indices form a group, and every member of a group gets `combine` folded over the group's values
  (in thread order) in `out`. Lowered here, target-neutrally, through a block-shared workspace:
  each thread stores its value, a barrier, each thread folds its group's values, a barrier (the
  workspace may be reused). The combine function is TVM's: a Python function of IR values.
* `T.tvm_warp_shuffle(mask, value, src_lane, width, warp_size)`: CUDA's __shfl_sync: the value of
  lane `(lane // width) * width + src_lane % width` of the caller's warp. Lowered, target-neutrally,
  through a block-shared workspace (store, barrier, read, barrier): unlike a warp shuffle it is a
  block-wide step, so every thread of the block must reach it (uniform control flow, as in
  TileLang's examples); a divergent call is not supported.
* `T.reinterpret(x, dtype="handle")`: only the opaque handle TVM's all-reduce idiom passes as the
  attribute value (other reinterpretations stay not implemented).
"""
from .. import _core
from .._core import Buffer, BufferLoad, Var
from .context import Frame, KernelInfo, LoopSpec, current, syntax_error
from .dtypes import to_dtype

__all__ = ["thread_binding", "handle", "ptr", "match_buffer", "make_tensor", "attr", "comm_reducer",
           "tvm_thread_allreduce", "tvm_warp_shuffle", "reinterpret", "HandleParam", "PointerType", "sblock", "reads",
           "writes"]

_SyntaxError = _core.TileLangSyntaxError


# ---- pointer parameters ----------------------------------------------------------------------------

class PointerType:
    """`T.handle` / `T.ptr`: the annotation of a pointer parameter (`def f(A_ptr: T.handle)`).
    Calling it (`T.ptr()`) gives a stand-in value for such a parameter where a compile-time
    configuration lists every argument (`f.par_compile([{"A": T.ptr(), "M": 1024, ...}])`)."""

    def __init__(self, name):
        self.name = name

    def __call__(self, dtype=None, storage_scope="global", **_):
        return _PointerValue(self.name, dtype)

    def __repr__(self):
        return f"T.{self.name}"


class _PointerValue:
    __slots__ = ("kind", "dtype")

    def __init__(self, kind, dtype):
        self.kind = kind
        self.dtype = dtype

    def __repr__(self):
        return f"T.{self.kind}()"

    def __hash__(self):
        return hash(("tl.pointer", self.kind))

    def __eq__(self, other):
        return isinstance(other, _PointerValue) and other.kind == self.kind


handle = PointerType("handle")
ptr = PointerType("ptr")


class HandleParam:
    """The value of a pointer parameter while the function is parsed: T.match_buffer /
    T.make_tensor turn it into the tensor parameter that replaces it in the signature."""

    __slots__ = ("name", "buffer")

    def __init__(self, name):
        self.name = name
        self.buffer = None

    def resolve(self, func_name):
        if self.buffer is None:
            raise _SyntaxError(f"pointer parameter '{self.name}' of '{func_name}' is never given a tensor view; "
                               f"write `X = T.match_buffer({self.name}, shape, dtype)` (or T.make_tensor) in the body")
        return self.buffer

    def _fail(self, *_a, **_k):
        raise _SyntaxError(f"'{self.name}' is a pointer parameter: view it as a tensor first with "
                           f"`X = T.match_buffer({self.name}, shape, dtype)` (or T.make_tensor)")

    __getitem__ = __setitem__ = __add__ = __radd__ = __mul__ = __iter__ = __index__ = __int__ = _fail

    def __repr__(self):
        return f"<pointer parameter {self.name}>"


def _view(what, pointer, shape, dtype, strides):
    from .allocate import TensorSpec  # noqa: PLC0415 (cycle)
    ctx = current(what)
    if not isinstance(pointer, HandleParam):
        raise TypeError(f"{what}: the first argument must be a pointer parameter (annotated T.handle or T.ptr), "
                        f"got {pointer!r}")
    if pointer.buffer is not None:
        raise _SyntaxError(f"{what}: pointer parameter '{pointer.name}' already has a tensor view; view it once")
    if ctx.kernels:
        raise _SyntaxError(f"{what} declares a tensor parameter: call it before the kernel body (outside "
                           "T.Kernel / T.thread_binding loops)")
    dims = list(shape) if isinstance(shape, (list, tuple)) else [shape]
    spec = TensorSpec(dims, dtype, strides)
    pointer.buffer = spec.make(pointer.name, ctx.span)
    return pointer.buffer


def match_buffer(param, shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global",
                 align=-1, offset_factor=0, buffer_type="", axis_separators=None):
    """`A = T.match_buffer(A_ptr, (M, N), dtype)`: the tensor a T.handle parameter points to."""
    if data is not None or elem_offset not in (None, 0) or scope != "global" or axis_separators:
        raise NotImplementedError("T.match_buffer: only (handle, shape, dtype[, strides]) is implemented; "
                                  "data=, elem_offset=, scope= and axis_separators= are not")
    return _view("T.match_buffer", param, shape, dtype, strides)


def make_tensor(pointer, shape, dtype="float32", strides=None):
    """`A = T.make_tensor(A_ptr, (M, N), dtype)`: the tensor a T.ptr parameter points to."""
    return _view("T.make_tensor", pointer, shape, dtype, strides)


# ---- T.thread_binding --------------------------------------------------------------------------------

_TAGS = {"blockIdx.x": (False, 0), "blockIdx.y": (False, 1), "blockIdx.z": (False, 2),
         "threadIdx.x": (True, 0), "threadIdx.y": (True, 1), "threadIdx.z": (True, 2)}


class _BindingKernel(KernelInfo):
    """The kernel a T.thread_binding loop opened; `bound` holds the (is_thread, dim) set so far."""

    __slots__ = ("bound",)


class _ThreadBinding(LoopSpec):
    what = "T.thread_binding"

    def __init__(self, start, stop, thread):
        if stop is None:
            start, stop = 0, start
        if thread not in _TAGS:
            raise NotImplementedError(f"T.thread_binding(thread={thread!r}): only blockIdx.x/y/z and threadIdx.x/y/z "
                                      "are implemented (no virtual threads)")
        self.start = _core.to_expr(start)
        self.stop = _core.to_expr(stop)
        self.thread = thread

    def run(self, ctx, names):
        if len(names) > 1:
            raise syntax_error(f"T.thread_binding yields one loop variable, but the `for` unpacks it into {len(names)}")
        if getattr(ctx, "probe", False):  # an eager probe ends where the kernel begins (language/eager.py)
            from .eager import _ProbeDone  # noqa: PLC0415
            raise _ProbeDone()
        is_thread, dim = _TAGS[self.thread]
        extent = _core.make_binary("sub", self.stop, self.start)
        if extent.kind == "int" and extent.value <= 0:
            raise ValueError(f"T.thread_binding({self.thread}): the extent must be positive, got {extent.value}")
        opened = False
        if not ctx.kernels:
            ctx.b.enter_kernel([], [], [], [], {})
            ctx.push_frame(is_with=True)
            info = _BindingKernel([], [], [], [], False)
            info.bound = set()
            ctx.kernels.append(info)
            opened = True
        info = ctx.kernels[-1]
        if not isinstance(info, _BindingKernel):
            raise syntax_error("T.thread_binding inside `with T.Kernel(...)`: the kernel already binds its launch "
                               "indices; use T.get_thread_binding(dim) / T.get_block_binding(dim)")
        if (is_thread, dim) in info.bound:
            raise syntax_error(f"T.thread_binding: {self.thread} is bound twice in one kernel")
        extents = info.threads if is_thread else info.grid
        variables = info.thread_vars if is_thread else info.block_vars
        prefix = "t" if is_thread else "b"
        while len(extents) < dim:  # unbound lower dimensions have extent 1
            k = len(extents)
            one, v = _core.make_int(1), Var(prefix + "xyz"[k])
            ctx.b.set_kernel_dim(is_thread, k, one, v)
            extents.append(one)
            variables.append(v)
        name = names[0] if names else prefix + "xyz"[dim]
        v = Var(name if self.start.kind == "int" and self.start.value == 0 else name + "_idx")
        ctx.b.set_kernel_dim(is_thread, dim, extent, v)
        if dim < len(extents):
            extents[dim], variables[dim] = extent, v
        else:
            extents.append(extent)
            variables.append(v)
        info.bound.add((is_thread, dim))
        value = v
        if not (self.start.kind == "int" and self.start.value == 0):
            value = Var(name)
            ctx.b.let(value, self.start + v)
        yield value
        if opened:
            if not info.grid:
                ctx.b.set_kernel_dim(False, 0, 1, Var("bx"))
            if not info.threads:
                ctx.b.set_kernel_dim(True, 0, 1, Var("tx"))
            ctx.kernels.pop()
            ctx.exit_frame()


def thread_binding(start, stop=None, thread=None, *, annotations=None):
    """`for tx in T.thread_binding(128, thread="threadIdx.x")`: a loop bound to a launch index."""
    if thread is None:
        raise TypeError("T.thread_binding needs thread=\"blockIdx.x\" / \"threadIdx.x\" (or y, z)")
    if annotations:
        raise NotImplementedError("T.thread_binding(annotations=...) is not implemented")
    return _ThreadBinding(start, stop, thread)


# ---- cross-thread all-reduce -------------------------------------------------------------------------

class _HandleValue:
    """The opaque value of `T.reinterpret(x, dtype="handle")` (TVM's reduce_scope attribute value)."""

    def __repr__(self):
        return "<handle>"


def reinterpret(value, dtype=None):
    """Only `T.reinterpret(x, dtype="handle")`, the opaque attribute value of TVM's all-reduce idiom."""
    if dtype is not None and str(dtype) == "handle":
        return _HandleValue()
    raise NotImplementedError("not implemented: T.reinterpret is bit reinterpretation of a value (only the "
                              "dtype=\"handle\" form of TVM's all-reduce idiom is provided); convert values "
                              "with T.cast")


class CommReducer:
    """`T.comm_reducer(lambda x, y: x + y, [identity])`: TVM's commutative reducer: `combine` takes
    the n accumulated values then the n new ones and returns the n combined values."""

    def __init__(self, combine, identity):
        self.combine = combine
        self.identity = list(identity) if isinstance(identity, (list, tuple)) else [identity]

    def apply(self, acc, new):
        out = self.combine(*acc, *new)
        out = list(out) if isinstance(out, (list, tuple)) else [out]
        if len(out) != len(acc):
            raise ValueError(f"T.comm_reducer: the combine function returned {len(out)} values for "
                             f"{len(acc)} reduced values")
        return out


def comm_reducer(combine, identity):
    return CommReducer(combine, identity)


class _AttrScope(Frame):
    """`with T.attr(node, key, value):` — only the reduce_scope of a T.comm_reducer is meaningful
    here; its body is emitted in place."""

    def __init__(self, node, key, value):
        self.node = node
        self.key = key
        self.value = value

    def __enter__(self):
        ctx = current("T.attr")
        ctx.require_kernel("T.attr")
        stack = ctx.__dict__.setdefault("_tl_reducers", [])
        stack.append(self.node)
        ctx.b.enter_scope()
        ctx.push_frame(is_with=True)
        return None

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            ctx = current()
            ctx._tl_reducers.pop()
            ctx.exit_frame()
        return False


def attr(node, key, value):
    """`with T.attr(T.comm_reducer(...), "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):`
    around T.tvm_thread_allreduce. Other TVM attributes are not implemented."""
    if isinstance(node, CommReducer) and key == "reduce_scope":
        return _AttrScope(node, key, value)
    raise NotImplementedError(f"not implemented: T.attr({node!r}, {key!r}, ...): only the \"reduce_scope\" of a "
                              "T.comm_reducer (TVM's all-reduce idiom) is provided; other TVM attributes have no "
                              "meaning here (launch sizes come from T.Kernel, pragmas from loop annotations)")


class _SBlockScope(Frame):
    """`with T.sblock("name"):` — TVM's block as a lexical scope inside a kernel: its body is emitted
    in place, and what is scoped to a block ends with it (T.annotate_safe_value). Block iteration
    variables (T.axis.*) are not provided."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        ctx = current("T.sblock")
        ctx.require_kernel("T.sblock")
        ctx.b.enter_scope()
        ctx.push_frame(is_with=True)
        return None


def sblock(name="", no_realize=False):
    """`with T.sblock("name"):` — a lexical scope (see _SBlockScope)."""
    if not isinstance(name, str):
        raise TypeError(f"T.sblock: the block name must be a string, got {type(name).__name__}")
    return _SBlockScope(name)


def reads(*regions):
    """TVM's declaration of a block's inputs: accepted and ignored (dependencies come from the body)."""


def writes(*regions):
    """TVM's declaration of a block's outputs: accepted and ignored (dependencies come from the body)."""


def _as_element(x, what):
    if x.__class__ is BufferLoad:
        return x.buffer, list(x.indices)
    if x.__class__ is Buffer and x.scope in ("local.var", "local"):
        return x, [0]
    raise TypeError(f"T.tvm_thread_allreduce: {what} must be a buffer element (buf[i]) or a T.alloc_var, got {x!r}")


def tvm_thread_allreduce(*args, dtype="handle"):
    """TVM's all-reduce: `T.tvm_thread_allreduce(n, v_1..v_n, cond, out_1..out_n, *thread_vars)`
    inside `with T.attr(T.comm_reducer(...), "reduce_scope", ...)` (see the module doc)."""
    ctx = current("T.tvm_thread_allreduce")
    info = ctx.kernel("T.tvm_thread_allreduce")
    reducers = ctx.__dict__.get("_tl_reducers") or []
    if not reducers:
        raise _SyntaxError("T.tvm_thread_allreduce must be inside `with T.attr(T.comm_reducer(...), "
                           "\"reduce_scope\", ...)`, which gives its combine function")
    reducer = reducers[-1]
    if not args:
        raise TypeError("T.tvm_thread_allreduce(n, values..., cond, outputs..., thread_vars...)")
    n = _core.to_expr(args[0])
    if n.kind != "int" or n.value < 1:
        raise ValueError(f"T.tvm_thread_allreduce: the number of reduced values must be a constant >= 1, got {n!r}")
    n = int(n.value)
    if len(args) < 2 * n + 3:
        raise TypeError(f"T.tvm_thread_allreduce: {n} value(s), a condition, {n} output(s) and at least one "
                        f"thread variable expected, got {len(args) - 1} arguments")
    if len(reducer.identity) != n:
        raise ValueError(f"T.tvm_thread_allreduce reduces {n} value(s) but the T.comm_reducer has "
                         f"{len(reducer.identity)} identity value(s)")
    values = [_core.to_expr(v) for v in args[1:1 + n]]
    cond = args[1 + n]
    c = _core.to_expr(cond)
    if not (c.kind == "int" and c.value == 1):
        raise NotImplementedError("T.tvm_thread_allreduce: only the condition True is implemented")
    outs = [_as_element(o, "an output") for o in args[2 + n:2 + 2 * n]]
    rvars = list(args[2 + 2 * n:])
    if info.is_npu:
        raise NotImplementedError("T.tvm_thread_allreduce is a GPU/CPU thread construct; Ascend kernels have no "
                                  "threads")
    # The reduced thread dimensions: consecutive ones, so that each group is
    # { base + i * stride : 0 <= i < extent } in the linear thread index.
    tvars = list(info.thread_vars)
    dims = []
    for v in rvars:
        k = next((i for i, t in enumerate(tvars) if t.same_as(v)), None) if isinstance(v, Var) else None
        if k is None:
            raise ValueError(f"T.tvm_thread_allreduce: {v!r} is not a thread index of the enclosing kernel "
                             "(T.get_thread_binding(dim) / a threadIdx T.thread_binding variable)")
        dims.append(k)
    dims = sorted(set(dims))
    if dims != list(range(dims[0], dims[0] + len(dims))):
        raise NotImplementedError("T.tvm_thread_allreduce over non-adjacent thread dimensions is not implemented")
    ext = []
    for e in info.threads:
        e = _core.to_expr(e)
        if e.kind != "int":
            raise NotImplementedError("T.tvm_thread_allreduce needs a compile-time thread count")
        ext.append(int(e.value))
    total = 1
    for e in ext:
        total *= e
    stride = 1
    for e in ext[:dims[0]]:
        stride *= e
    extent = 1
    for d in dims:
        extent *= ext[d]
    lin = _core.make_int(0)
    s = 1
    for v, e in zip(tvars, ext):
        lin = lin + v * s
        s *= e
    pos = _core.make_int(0)
    s = 1
    for d in dims:
        pos = pos + tvars[d] * s
        s *= ext[d]
    base = lin - pos * stride
    b = ctx.b
    from .builtins import sync_threads  # noqa: PLC0415
    work = []
    for k in range(n):
        ws = b.make_buffer(f"red_buf{k}", values[k].dtype, [total], "shared.dyn", None)
        b.alloc(ws)
        work.append(ws)
    for k in range(n):
        b.emit_store(work[k], [lin], values[k])
    sync_threads()
    # Every member folds the group's values in the same order: bit-identical results.
    acc = [work[k][base] for k in range(n)]
    accs = []
    for k in range(n):
        a = b.make_buffer(f"red_acc{k}", values[k].dtype, [1], "local", None)
        b.alloc(a)
        accs.append(a)
        b.emit_store(a, [0], acc[k])
    if extent > 1:
        i = Var("red_i")
        b.enter_for(i, 1, extent - 1, "serial", None)
        new = [work[k][base + i * stride] for k in range(n)]
        combined = reducer.apply([a[0] for a in accs], new)
        for k in range(n):
            b.emit_store(accs[k], [0], _core.make_cast(values[k].dtype, _core.to_expr(combined[k])))
        b.exit()
    sync_threads()  # the workspace may be reused right after
    for k, (buf, idx) in enumerate(outs):
        b.emit_store(buf, idx, _core.make_cast(buf.dtype, accs[k][0]))
    return None


# ---- warp shuffle ----------------------------------------------------------------------------------

def _linear_thread(what):
    ctx = current(what)
    info = ctx.kernel(what)
    if info.is_npu:
        raise NotImplementedError(f"{what} is a GPU/CPU thread construct; Ascend kernels have no threads")
    ext = []
    for e in info.threads:
        e = _core.to_expr(e)
        if e.kind != "int":
            raise NotImplementedError(f"{what} needs a compile-time thread count")
        ext.append(int(e.value))
    lin = _core.make_int(0)
    s = 1
    for v, e in zip(info.thread_vars, ext):
        lin = lin + v * s
        s *= e
    return ctx, lin, s


def tvm_warp_shuffle(mask, value, src_lane, width, warp_size=32):
    """`T.tvm_warp_shuffle(mask, v, src_lane, width, warp_size)`: the value `v` of lane
    `(lane // width) * width + src_lane % width` of the calling thread's warp (CUDA __shfl_sync);
    see the module doc for how it is lowered."""
    from .builtins import sync_threads  # noqa: PLC0415
    ctx, lin, total = _linear_thread("T.tvm_warp_shuffle")
    ws_ = _core.to_expr(warp_size)
    wd = _core.to_expr(width)
    if ws_.kind != "int" or ws_.value not in (1, 2, 4, 8, 16, 32):
        raise ValueError(f"T.tvm_warp_shuffle: warp_size must be a power of two up to 32, got {warp_size!r}")
    if wd.kind == "int" and (wd.value < 1 or wd.value > ws_.value or wd.value & (wd.value - 1)):
        raise ValueError(f"T.tvm_warp_shuffle: width must be a power of two <= warp_size, got {width!r}")
    v = _core.to_expr(value)
    b = ctx.b
    ws = b.make_buffer("shfl_buf", v.dtype, [total], "shared.dyn", None)
    b.alloc(ws)
    got = b.make_buffer("shfl_val", v.dtype, [1], "local", None)
    b.alloc(got)
    lane = lin % ws_
    src = lin - lane + lane // wd * wd + _core.to_expr(src_lane) % wd
    b.emit_store(ws, [lin], v)
    sync_threads()
    b.emit_store(got, [0], ws[src])
    sync_threads()  # the workspace may be reused right after
    return got[0]
