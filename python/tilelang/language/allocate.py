"""Buffer allocation (T.alloc_*) and kernel parameter types (T.Tensor, T.dynamic, ...)."""
import sys

from .. import _core
from .._core import PrimExpr, Var
from .context import current
from .dtypes import element_dtype, to_dtype

__all__ = ["alloc_shared", "alloc_fragment", "alloc_local", "alloc_var", "alloc_barrier", "alloc_L1",
           "alloc_ub", "alloc_UB", "alloc_L0A", "alloc_L0B", "alloc_L0C", "alloc_l1", "alloc_l0a", "alloc_l0b",
           "alloc_l0c", "alloc_l0", "alloc_L0", "alloc_global", "alloc_buffer", "reshape", "view", "alloc_reducer", "reducer_init",
           "reducer_update", "finalize_reducer", "SharedBuffer", "FragmentBuffer", "LocalBuffer", "Tensor", "Buffer", "StridedTensor", "TensorSpec", "dynamic",
           "symbolic"]


def _shape(shape):
    if isinstance(shape, (list, tuple)):
        return list(shape)
    return [shape]


def _alloc(shape, dtype, scope, what, default_name):
    ctx = current(what)
    ctx.require_kernel(what)
    name = ctx.take_hint(default_name)
    for k, d in enumerate(_shape(shape)):
        if isinstance(d, (int, PrimExpr)) and not isinstance(d, bool):
            e = _core.to_expr(d)
            if e.kind == "int" and e.value <= 0:
                raise ValueError(f"{what}: dimension {k} of buffer '{name}' is {e.value}; tile dimensions must be "
                                 f"positive (shape {_shape_text(shape)})")
    buf = ctx.b.make_buffer(name, element_dtype(dtype, what), _shape(shape), scope, None)
    ctx.b.alloc(buf)
    return buf


def _shape_text(shape):
    return "(" + ", ".join(str(d) for d in _shape(shape)) + ")"


def alloc_shared(shape, dtype, scope="shared.dyn"):
    """Block-shared tile (cuda shared memory; cpu block-local; ascend L1 or UB by use)."""
    return _alloc(shape, dtype, scope, "T.alloc_shared", "shared")


def alloc_fragment(shape, dtype, scope="local.fragment"):
    """Block-level register tile whose distribution over threads is inferred."""
    return _alloc(shape, dtype, scope, "T.alloc_fragment", "frag")


def alloc_local(shape, dtype, scope="local"):
    """Per-thread array."""
    return _alloc(shape, dtype, scope, "T.alloc_local", "local")


def alloc_var(dtype, init=None, scope="local.var"):
    """Per-thread mutable scalar. Read it as a value (`x + 1`, `x[0]`); assign with `x = v`."""
    if isinstance(init, str) and init in ("local.var", "local"):
        init, scope = None, init
    buf = _alloc([1], dtype, scope, "T.alloc_var", "var")
    if init is not None:
        current().b.emit_store(buf, [0], init)
    return buf


def alloc_barrier(arrive_count):
    """mbarrier array (cuda sm_90); one barrier per entry of `arrive_count`."""
    counts = list(arrive_count) if isinstance(arrive_count, (list, tuple)) else [arrive_count]
    buf = _alloc([len(counts)], "uint64", "barrier", "T.alloc_barrier", "barrier")
    b = current().b
    for i, c in enumerate(counts):
        b.emit_evaluate(_core.make_call("void", "tl.mbarrier_init", [buf[i], c]))
    return buf


def alloc_L1(shape, dtype):  # noqa: N802
    """Ascend cube-core L1 buffer."""
    return _alloc(shape, dtype, "L1", "T.alloc_L1", "l1")


def alloc_ub(shape, dtype):
    """Ascend vector-core unified buffer."""
    return _alloc(shape, dtype, "UB", "T.alloc_ub", "ub")


def alloc_L0A(shape, dtype):  # noqa: N802
    return _alloc(shape, dtype, "L0A", "T.alloc_L0A", "l0a")


def alloc_L0B(shape, dtype):  # noqa: N802
    return _alloc(shape, dtype, "L0B", "T.alloc_L0B", "l0b")


def alloc_L0C(shape, dtype):  # noqa: N802
    return _alloc(shape, dtype, "L0C", "T.alloc_L0C", "l0c")


def alloc_l0(shape, dtype):
    """Ascend L0A/L0B/L0C, chosen by the buffer's position as a gemm operand."""
    return _alloc(shape, dtype, "L0", "T.alloc_l0", "l0")


alloc_UB = alloc_ub
alloc_l1 = alloc_L1
alloc_l0a = alloc_L0A
alloc_l0b = alloc_L0B
alloc_l0c = alloc_L0C
alloc_L0 = alloc_l0


# ---- parameters ------------------------------------------------------------------------------

class TensorSpec:
    """The annotation of a tensor parameter: shape, dtype and optional strides."""

    __slots__ = ("shape", "dtype", "strides", "scope")

    def __init__(self, shape, dtype="float32", strides=None, scope="global"):
        self.shape = tuple(_shape(shape))
        self.dtype = to_dtype(dtype)
        self.strides = None if strides is None else tuple(_shape(strides))
        if self.strides is not None and len(self.strides) != len(self.shape):
            raise ValueError(f"T.StridedTensor: {len(self.strides)} strides for {len(self.shape)} dimensions")
        self.scope = scope

    def make(self, name, span):
        element_dtype(self.dtype, "T.Tensor")  # a vector dtype: NotImplementedError, located by the caller
        return _core.Buffer(name, self.dtype, list(self.shape), self.scope, None if self.strides is None
                            else list(self.strides), span)

    def __repr__(self):
        s = f"T.Tensor({self.shape}, {self.dtype!r}"
        return s + (f", strides={self.strides})" if self.strides else ")")


class _BufferData:
    """`buf.data`: the storage of a buffer, for `T.Tensor(shape, dtype, buf.data)` (a view)."""

    __slots__ = ("buffer",)

    def __init__(self, buffer):
        self.buffer = buffer


_core.Buffer.data = property(_BufferData, doc="The buffer's storage (for T.Tensor(shape, dtype, buf.data)).")


class _TensorFactory:
    """`T.Tensor((M, N), "float16")` or `T.Tensor[(M, N), "float16"]`; with `data=buf.data` inside
    a kernel, a view of `buf` with that shape (as T.view)."""

    def __init__(self, name):
        self._name = name

    def __call__(self, shape, dtype="float32", data=None, strides=None, scope="global", **_):
        if data is not None:
            if data.__class__ is not _BufferData:
                raise NotImplementedError(f"not implemented: T.{self._name}(..., data={data!r}); only another "
                                          "buffer's storage (buf.data) can back a tensor declared in the body")
            if strides is not None:
                raise NotImplementedError(f"not implemented: T.{self._name}(..., data=..., strides=...) in the body")
            return view(data.buffer, shape, dtype)
        return _spec(f"T.{self._name}", shape, dtype, strides, "global" if scope in ("global", None) else scope)

    def __getitem__(self, key):
        if isinstance(key, tuple) and len(key) == 2:
            return _spec(f"T.{self._name}", key[0], key[1])
        raise TypeError(f"use {self._name}[shape, dtype], e.g. {self._name}[(M, N), 'float16']")

    def __repr__(self):
        return f"T.{self._name}"


Tensor = _TensorFactory("Tensor")
Buffer = _TensorFactory("Buffer")
# Parameter annotations of @T.macro helpers in TileLang's examples (`K_shared: T.SharedBuffer(...)`):
# documentation only there (a macro takes whatever buffer it is given).
SharedBuffer = _TensorFactory("SharedBuffer")
FragmentBuffer = _TensorFactory("FragmentBuffer")
LocalBuffer = _TensorFactory("LocalBuffer")


def _spec(what, shape, dtype, strides=None, scope="global"):
    try:
        return TensorSpec(shape, dtype, strides, scope)
    except (ValueError, TypeError) as e:
        # Annotations are evaluated by Python before @T.prim_func runs: name the annotation's line.
        f = sys._getframe(2)
        e.args = (f"{f.f_code.co_filename}:{f.f_lineno}: {what}: {e.args[0] if e.args else ''}",) + e.args[1:]
        raise


class _StridedTensorFactory:
    """`T.StridedTensor(shape, strides, dtype)` or `T.StridedTensor[shape, strides, dtype]`: a tensor
    parameter with explicit element strides (entries may be dynamic)."""

    def __call__(self, shape, strides, dtype="float32"):
        return _spec("T.StridedTensor", shape, dtype, strides)

    def __getitem__(self, key):
        if isinstance(key, tuple) and len(key) == 3:
            return _spec("T.StridedTensor", key[0], key[2], key[1])
        raise TypeError("use StridedTensor[shape, strides, dtype], e.g. StridedTensor[(M, N), (ld, 1), 'float16']")

    def __repr__(self):
        return "T.StridedTensor"


StridedTensor = _StridedTensorFactory()


def dynamic(name, dtype="int32"):
    """A dynamic dimension bound at call time: `M = T.dynamic("m")`."""
    return Var(str(name), to_dtype(dtype))


symbolic = dynamic


def alloc_global(shape, dtype, scope="global"):
    """A device-memory tensor private to this kernel call (scratch shared by all blocks and by the
    kernels of one function, e.g. split-K partial results): it becomes a hidden trailing parameter
    that the runtime allocates, zero-filled, at each call (like workspace_idx). Allowed inside or
    before `with T.Kernel`."""
    ctx = current("T.alloc_global")
    name = ctx.take_hint("global_buf")
    for k, d in enumerate(_shape(shape)):
        e = _core.to_expr(d)
        if e.kind == "int" and e.value <= 0:
            raise ValueError(f"T.alloc_global: dimension {k} of buffer '{name}' is {e.value}; dimensions must be "
                             f"positive (shape {_shape_text(shape)})")
    buf = TensorSpec(shape, dtype).make(name, ctx.span)
    ctx.global_workspaces.append(buf)
    return buf


_SCOPES = {"global": alloc_global, "shared": alloc_shared, "shared.dyn": alloc_shared,
           "local.fragment": alloc_fragment, "local": alloc_local}


def alloc_buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global", align=-1,
                 offset_factor=0, buffer_type="", axis_separators=None):
    """TVM's allocation by scope name: "shared"/"shared.dyn" -> T.alloc_shared, "local.fragment" ->
    T.alloc_fragment, "local" -> T.alloc_local, "local.var" -> T.alloc_var, "global" -> T.alloc_global."""
    if data is not None or strides is not None or elem_offset is not None:
        raise NotImplementedError("not implemented: T.alloc_buffer with data/strides/elem_offset (a TVM buffer "
                                  "declaration over existing memory); allocate with T.alloc_shared/fragment/local")
    if scope == "local.var":
        return alloc_var(dtype)
    fn = _SCOPES.get(scope)
    if fn is None:
        raise ValueError(f"T.alloc_buffer: unknown scope {scope!r}; expected one of "
                         f"{', '.join(sorted(list(_SCOPES) + ['local.var']))}")
    return fn(shape, dtype)


def _view(src, shape, dtype, what):
    ctx = current(what)
    if src.__class__ is not _core.Buffer:
        raise NotImplementedError(f"not implemented: {what} of {type(src).__name__} {src!r}; reshape a whole buffer "
                                  "(a region's elements are not contiguous)")
    if src.scope == "local.var":
        raise TypeError(f"{what}: '{src.name}' is a T.alloc_var scalar")
    dt = src.dtype if dtype is None else to_dtype(dtype)
    if dt != src.dtype:
        raise NotImplementedError(f"not implemented: {what}(..., dtype={dt!r}) of the {src.dtype} buffer '{src.name}' "
                                  "(reinterpreting bytes); views keep the dtype here: convert with T.copy into a "
                                  f"buffer of dtype {dt}")
    shape = _shape(src.shape if shape is None else shape)
    name = ctx.take_hint(src.name + "_view")
    buf = ctx.b.make_buffer(name, dt, shape, src.scope, None)
    if src.scope != "global":
        ctx.require_kernel(what)
        ctx.b.alloc(buf)
    ctx.views.append((buf, src))
    return buf


def reshape(src, shape):
    """The same elements as `src` (row-major order) seen with another shape; writes through either
    are seen by the other (docs/COMPATIBILITY.md: how views are resolved)."""
    return _view(src, shape, None, "T.reshape")


def view(src, shape=None, dtype=None):
    """Like T.reshape; `dtype` must be the buffer's own (reinterpreting bytes is not supported)."""
    return _view(src, shape, dtype, "T.view")


# ---- reducers ------------------------------------------------------------------------------------

_REDUCER_OPS = ("sum", "max", "min")


def alloc_reducer(shape, dtype, op="sum", replication=None):
    """A fragment that T.Parallel iterations combine into (`acc[i] += v`, or T.reducer_update):
    each thread accumulates its iterations into its own copy; T.finalize_reducer combines the copies
    with `op` (sum, max, min). `replication` ("all" / "none", TileLang's legacy knob) is accepted."""
    if op not in _REDUCER_OPS:
        raise NotImplementedError(f"not implemented: T.alloc_reducer(op={op!r}); supported ops: "
                                  f"{', '.join(_REDUCER_OPS)} (accumulate bitwise ops in a fragment per thread "
                                  "and combine them with T.reduce_* instead)")
    if replication not in (None, "all", "none"):
        raise ValueError(f"T.alloc_reducer: replication must be 'all', 'none' or None, got {replication!r}")
    ctx = current("T.alloc_reducer")
    buf = _alloc(shape, dtype, "local.fragment", "T.alloc_reducer", "reducer")
    ctx.reducers[buf] = [op, None]  # op, the T.reducer_init value
    return buf


def _reducer(ctx, buf, what):
    info = ctx.reducers.get(buf) if buf.__class__ is _core.Buffer else None
    if info is None:
        raise TypeError(f"{what}: {buf!r} is not a reducer; allocate it with T.alloc_reducer")
    return info


def _identity(op, dtype):
    from .math import infinity, max_value, min_value  # noqa: PLC0415 (cycle)
    if op == "sum":
        return _core.make_cast(dtype, 0)
    kind = _core.dtype_info(dtype)[0]
    if op == "max":
        return -infinity(dtype) if kind == "float" else min_value(dtype)
    return infinity(dtype) if kind == "float" else max_value(dtype)


def reducer_init(reducer, init=None):
    """Starts a reduction: every copy of the reducer holds the op's identity; `init` (optional) is
    combined into every result exactly once, at T.finalize_reducer."""
    from .tile_ops import fill  # noqa: PLC0415 (cycle)
    ctx = current("T.reducer_init")
    info = _reducer(ctx, reducer, "T.reducer_init")
    info[1] = None if init is None else _core.make_cast(reducer.dtype, _core.to_expr(init))
    fill(reducer, _identity(info[0], reducer.dtype))


def reducer_update(target, value):
    """Combines `value` into the reducer element `target` (`acc[i, j]`)."""
    ctx = current("T.reducer_update")
    if target.__class__ is not _core.BufferLoad:
        raise TypeError("T.reducer_update takes an element of the reducer as its first argument (acc[i])")
    op = _reducer(ctx, target.buffer, "T.reducer_update")[0]
    v = _core.make_cast(target.dtype, _core.to_expr(value))
    new = target + v if op == "sum" else _core.make_binary(op, target, v)
    ctx.require_kernel("T.reducer_update")
    ctx.b.emit_store(target.buffer, target.indices, new)


def finalize_reducer(reducer, dst=None, batch=1, annotations=None):
    """Combines the copies of the reducer (all threads end with the result). With `dst` (TileLang's
    second form) the result, combined with the T.reducer_init value, is copied into `dst`."""
    from .tile_ops import check_batch, emit_tile_op  # noqa: PLC0415 (cycle)
    ctx = current("T.finalize_reducer")
    op, init = _reducer(ctx, reducer, "T.finalize_reducer")
    total = 1
    for d in reducer.shape:
        e = _core.to_expr(d)
        total = total * e.value if (total is not None and e.kind == "int") else None
    check_batch(batch, total, "T.finalize_reducer")
    emit_tile_op("finalize_reducer", [_core.BufferRegion.full(reducer)], {"op": op}, "T.finalize_reducer")
    if dst is None:
        return
    if init is not None:
        from .tile_ops import tile_binary  # noqa: PLC0415
        tile_binary({"sum": "tile.add", "max": "tile.max", "min": "tile.min"}[op], reducer, reducer, init,
                    "T.finalize_reducer")
    from .tile_ops import copy  # noqa: PLC0415
    copy(reducer, dst)
