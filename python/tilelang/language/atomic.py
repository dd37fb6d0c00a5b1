"""Atomics beyond T.atomic_add (tile_ops.py): T.atomic_max / T.atomic_min (scalar and tile forms),
T.atomic_or / T.atomic_and / T.atomic_xor (bitwise, scalar form on integer elements, as in TileLang),
T.atomic_addx2 / T.atomic_addx4 (two / four consecutive elements), T.atomic_load, T.atomic_store.

As in TileLang, an element `A[i, j]` is a value, never a tile origin: with an element destination
and a scalar (or element) value the op is the scalar atomic, which returns the old value when
`return_prev=True`; with a buffer or region on either side it is the element-wise tile op.
"""
from .. import _core
from .._core import BufferLoad
from .context import current
from .tile_ops import _pair, emit_tile_op, is_tile_arg, region_of

__all__ = ["atomic_max", "atomic_min", "atomic_or", "atomic_and", "atomic_xor", "atomic_addx2", "atomic_addx4",
           "atomic_load", "atomic_store"]

# The C++ memory-order numbers (TileLang's ids): 0 relaxed ... 5 seq_cst.
_ORDERS = {"relaxed": 0, "consume": 1, "acquire": 2, "release": 3, "acq_rel": 4, "seq_cst": 5}
_LOAD_ORDERS = ("relaxed", "consume", "acquire", "seq_cst")
_STORE_ORDERS = ("relaxed", "release", "seq_cst")


def _order(memory_order, allowed, what):
    if memory_order is None:
        return None
    if memory_order not in allowed:
        raise ValueError(f"{what}: {what[2:]} does not support memory_order {memory_order!r}; use one of "
                         f"{', '.join(allowed)}")
    return _ORDERS[memory_order]


def _emit(call, what):
    ctx = current(what)
    ctx.require_kernel(what)
    ctx.b.emit_evaluate(call)


def _rmw(kind, dst, value, memory_order, return_prev):
    what = f"T.atomic_{kind}"
    _order(memory_order, tuple(_ORDERS), what)
    if dst.__class__ is BufferLoad and not is_tile_arg(value):
        v = _core.make_cast(dst.dtype, _core.to_expr(value))
        call = _core.make_call(dst.dtype, f"tl.atomic_{kind}_scalar", [dst, v])
        if return_prev:
            return call
        _emit(call, what)
        return None
    if return_prev:
        raise ValueError(f"{what}: return_prev=True is only supported for the scalar form (an element destination "
                         "and a scalar value)")
    if is_tile_arg(value):
        d, s = _pair(dst, value, f"{what} destination", f"{what} value")
    else:
        d = region_of(dst, f"{what} destination")
        s = _core.to_expr(value)
    attrs = {"memory_order": memory_order} if memory_order is not None else None
    emit_tile_op(f"atomic_{kind}", [d, s], attrs, what)
    return None


def atomic_max(dst, value, memory_order=None, return_prev=False):
    """dst = max(dst, value) atomically (element or tile form)."""
    return _rmw("max", dst, value, memory_order, return_prev)


def atomic_min(dst, value, memory_order=None, return_prev=False):
    """dst = min(dst, value) atomically (element or tile form)."""
    return _rmw("min", dst, value, memory_order, return_prev)


def _bitwise(kind, dst, value, memory_order, return_prev):
    """The scalar bitwise atomic `tl.atomic_<kind>_scalar(dst, value)` on one integer element.
    TileLang provides only the scalar form (an element destination, a scalar value)."""
    what = f"T.atomic_{kind}"
    _order(memory_order, tuple(_ORDERS), what)
    if dst.__class__ is not BufferLoad or is_tile_arg(value):
        raise NotImplementedError(f"{what}: only the scalar form is supported (an element destination such as "
                                  f"A[i] and a scalar value), as in TileLang; loop over the tile with T.Parallel "
                                  f"and apply {what} per element")
    from .dtypes import is_int_dtype  # noqa: PLC0415
    dt = str(dst.dtype)
    if not is_int_dtype(dt):
        raise TypeError(f"{what}: the destination must have an integer dtype (int8-64, uint8-64), got {dt}; "
                        f"bitwise atomics have no meaning on {dt} (reinterpret the bits as an integer tensor, or "
                        f"use T.atomic_add / T.atomic_max / T.atomic_min)")
    val = _core.to_expr(value)
    if not is_int_dtype(str(val.dtype)) and str(val.dtype) != "bool":
        raise TypeError(f"{what}: the value must be an integer, got {val.dtype}")
    call = _core.make_call(dst.dtype, f"tl.atomic_{kind}_scalar", [dst, _core.make_cast(dst.dtype, val)])
    if return_prev:
        return call
    _emit(call, what)
    return None


def atomic_or(dst, value, memory_order=None, return_prev=False):
    """dst |= value atomically on one integer element; return_prev=True returns the old value."""
    return _bitwise("or", dst, value, memory_order, return_prev)


def atomic_and(dst, value, memory_order=None, return_prev=False):
    """dst &= value atomically on one integer element; return_prev=True returns the old value."""
    return _bitwise("and", dst, value, memory_order, return_prev)


def atomic_xor(dst, value, memory_order=None, return_prev=False):
    """dst ^= value atomically on one integer element; return_prev=True returns the old value."""
    return _bitwise("xor", dst, value, memory_order, return_prev)


def _addxn(n, dst, value, return_prev):
    """`n` consecutive elements along the last dimension, starting at the element `dst`."""
    what = f"T.atomic_addx{n}"

    def run_of(x, role):
        if x.__class__ is BufferLoad:
            idx = list(x.indices)
            return _core.BufferRegion(x.buffer, [(i, 1) for i in idx[:-1]] + [(idx[-1], n)])
        r = region_of(x, f"{what} {role}")
        return r
    d = run_of(dst, "destination")
    if is_tile_arg(value) or value.__class__ is BufferLoad:
        s = run_of(value, "value")
    else:
        s = _core.to_expr(value)
    if return_prev:
        return _addxn_prev(n, d, s, what)
    emit_tile_op("atomic_add", [d, s], None, what)


def _lane(region, k, n, what, role):
    """Element k of a run of n elements along the last dimension of `region`."""
    ext = [_core.to_expr(e) for e in region.extents]
    if any(e.kind != "int" for e in ext) or ext[-1].value != n or any(e.value != 1 for e in ext[:-1]):
        raise ValueError(f"{what}: the {role} must be {n} consecutive elements along the last dimension, "
                         f"got {region!r}")
    idx = list(region.mins)
    idx[-1] = idx[-1] + k
    return region.buffer[tuple(idx)]


def _addxn_prev(n, d, s, what):
    """return_prev=True: each lane's atomic add, returning its old value, issued once here; the old
    values are returned as a per-thread array of n elements (assign it to a slice, `Prev[0:2] = ...`).
    Each lane is its own atomic (TileLang's 16-bit x4 form is per pair too): the old values are
    those each lane's add saw."""
    from .allocate import alloc_local  # noqa: PLC0415
    ctx = current(what)
    ctx.require_kernel(what)
    dtype = d.buffer.dtype
    prev = alloc_local([n], dtype)
    for k in range(n):
        dk = _lane(d, k, n, what, "destination")
        vk = _lane(s, k, n, what, "value") if s.__class__ is _core.BufferRegion else s
        call = _core.make_call(dtype, "tl.atomic_add_scalar", [dk, _core.make_cast(dtype, _core.to_expr(vk))])
        ctx.b.emit_store(prev, [k], call)
    return _core.BufferRegion.full(prev)


def atomic_addx2(dst, value, return_prev=False):
    """Adds value[k:k+2] to dst[..., j:j+2] atomically (a packed atomic on GPUs that have one).
    return_prev=True returns the two old values (`Prev[0:2] = T.atomic_addx2(D[0:2], V[0:2], return_prev=True)`)."""
    return _addxn(2, dst, value, return_prev)


def atomic_addx4(dst, value, return_prev=False):
    """Adds value[k:k+4] to dst[..., j:j+4] atomically; return_prev=True returns the four old values."""
    return _addxn(4, dst, value, return_prev)


def atomic_load(src, memory_order="seq_cst"):
    """The value of the element `src`, read atomically with `memory_order`."""
    if src.__class__ is not BufferLoad:
        raise TypeError(f"T.atomic_load takes one element (A[i, j]), got {type(src).__name__}")
    order = _order(memory_order, _LOAD_ORDERS, "T.atomic_load")
    return _core.make_call(src.dtype, "tl.atomic_load", [src, _core.make_int(order, "int32")])


def atomic_store(dst, src, memory_order="seq_cst"):
    """Writes `src` into the element `dst` atomically with `memory_order`."""
    if dst.__class__ is not BufferLoad:
        raise TypeError(f"T.atomic_store takes one element (A[i, j]) as destination, got {type(dst).__name__}")
    order = _order(memory_order, _STORE_ORDERS, "T.atomic_store")
    v = _core.make_cast(dst.dtype, _core.to_expr(src))
    _emit(_core.make_call("void", "tl.atomic_store", [dst, v, _core.make_int(order, "int32")]), "T.atomic_store")
