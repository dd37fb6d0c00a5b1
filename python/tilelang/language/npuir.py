"""The vector operations of TileLang-Ascend's npuir branch (`T.vadd(A, B, C)`, `T.vexp(A, B)`,
`T.vbrc(src, dst)`, `T.vcast(src, dst)`, ...), mapped onto this project's T.tile.* primitives.

The npuir spellings put the destination LAST (T.tile.* put it first) and broadcast an operand whose
extents are 1 where the destination's are not (`T.vsub(scores, row_max, scores)` with row_max
[M, 1]): such an operand is first broadcast (T.tile.broadcast) into the destination or, when the
destination is also the other operand, into a scratch tile of the destination's scope.
"""
import math

from .._core import BufferRegion
from . import tile as _tile
from . import tile_ops as _ops
from .allocate import _alloc
from .tile_ops import copy as _copy

__all__ = ["vadd", "vsub", "vmul", "vdiv", "vmax", "vmin", "vpow", "vexp", "vln", "vsqrt", "vrsqrt", "vabs",
           "vrelu", "vsigmoid", "vrec", "vtanh", "vexp2", "vlog2", "vbrc", "vcast", "load_nd2nz", "store_nz2nd",
           "store_fixpipe"]

_ROUND_MODES = {"rint": "CAST_RINT", "round": "CAST_ROUND", "floor": "CAST_FLOOR", "ceil": "CAST_CEIL",
                "trunc": "CAST_TRUNC", "odd": "CAST_ODD", "none": "CAST_NONE"}


def _const_int(e):
    if e.__class__ is int:
        return e
    return e.value if getattr(e, "kind", None) == "int" else None


def _same_extent(a, b):
    ia, ib = _const_int(a), _const_int(b)
    if ia is not None and ib is not None:
        return ia == ib
    return str(a) == str(b)


def _region(x, what):
    r = _ops.operand(x, what)
    if r.__class__ is not BufferRegion:
        raise TypeError(f"{what}: '{x!r}' is a single element; pass the buffer or a region (A[a:b, c:d])")
    return r


def _needs_broadcast(src, dst):
    """True when src must be broadcast to dst's extents (ranks equal, unit extents where dst's differ)."""
    se, de = list(src.extents), list(dst.extents)
    if len(se) != len(de) or all(_same_extent(s, d) for s, d in zip(se, de)):
        return False
    return all(_same_extent(s, d) or _ops._is_one(s) for s, d in zip(se, de))


def _same_region(a, b):
    return a.buffer.same_as(b.buffer)


def _binary(name, tile_name):
    tile_op = getattr(_tile, tile_name)

    def f(A, B, C):  # noqa: N803
        what = f"T.v{name}"
        dst = _region(C, f"{what} destination")
        if not _ops.is_tile_arg(A):
            raise TypeError(f"{what}: the first operand must be a tile (a buffer or a region), got {A!r}")
        a = _region(A, f"{what} first operand")
        b = _region(B, f"{what} second operand") if _ops.is_tile_arg(B) else B
        bcast_a = _needs_broadcast(a, dst)
        bcast_b = b.__class__ is BufferRegion and _needs_broadcast(b, dst)
        if not bcast_a and not bcast_b:
            tile_op(dst, a, b)
            return
        if bcast_a and bcast_b:
            raise NotImplementedError(f"{what}: both operands broadcast to the destination; broadcast one of "
                                      f"them first with T.vbrc")
        small, other = (a, b) if bcast_a else (b, a)
        if other.__class__ is BufferRegion and _same_region(other, dst):
            scratch = _alloc(list(dst.extents), dst.buffer.dtype, dst.buffer.scope, what, f"{name}_brc")
            tmp = BufferRegion.full(scratch)
        else:
            tmp = dst
        _tile.broadcast(tmp, small)
        if bcast_a:
            tile_op(dst, tmp, b)
        else:
            tile_op(dst, a, tmp)

    f.__name__ = "v" + name
    f.__doc__ = f"C = A {name} B element-wise (npuir spelling, destination last; B may be a scalar; an " \
                f"operand with unit extents is broadcast)."
    return f


def _unary(name, tile_name):
    tile_op = getattr(_tile, tile_name)

    def f(A, B):  # noqa: N803
        tile_op(B, A)

    f.__name__ = "v" + name
    f.__doc__ = f"B = {tile_name}(A) element-wise (npuir spelling, destination last)."
    return f


vadd = _binary("add", "add")
vsub = _binary("sub", "sub")
vmul = _binary("mul", "mul")
vdiv = _binary("div", "div")
vmax = _binary("max", "max")
vmin = _binary("min", "min")
vpow = _binary("pow", "pow")
vexp = _unary("exp", "exp")
vln = _unary("ln", "ln")
vsqrt = _unary("sqrt", "sqrt")
vrsqrt = _unary("rsqrt", "rsqrt")
vabs = _unary("abs", "abs")
vrelu = _unary("relu", "relu")
vsigmoid = _unary("sigmoid", "sigmoid")
vrec = _unary("rec", "reciprocal")
vtanh = _unary("tanh", "tanh")


def vexp2(A, B, Tmp):  # noqa: N803
    """B = 2 ** A, as npuir computes it: Tmp = A * ln 2, B = exp(Tmp)."""
    _tile.mul(Tmp, A, math.log(2.0))
    _tile.exp(B, Tmp)


def vlog2(A, B, Tmp):  # noqa: N803
    """B = log2(A), as npuir computes it: Tmp = ln(A), B = Tmp / ln 2."""
    _tile.ln(Tmp, A)
    _tile.mul(B, Tmp, 1.0 / math.log(2.0))


def vbrc(src, dst):
    """dst = src broadcast: a scalar fills dst; a tile with unit extents is repeated along them."""
    if _ops.is_tile_arg(src):
        _tile.broadcast(dst, src)
    else:
        _tile.fill(dst, src)


def vcast(src, dst, size=None, round_mode="rint"):
    """dst = src converted to dst's dtype with npuir's rounding mode ("rint", "round", "floor", "ceil",
    "trunc", "odd", "none")."""
    if size is not None:
        raise NotImplementedError("T.vcast(..., size=...): pass regions of the wanted size instead")
    mode = _ROUND_MODES.get(str(round_mode).lower())
    if mode is None:
        raise ValueError(f"T.vcast: round_mode must be one of {', '.join(_ROUND_MODES)}, got {round_mode!r}")
    _tile.cast(dst, src, mode)


def _sized_copy(src, dst, size):
    if size is None:
        _copy(src, dst)
    else:
        _copy(src, dst, list(size))


def load_nd2nz(src, dst, size=None):
    """GM -> L1 copy (npuir names the ND -> NZ fractal conversion, which the simulator's L1 layout does)."""
    _sized_copy(src, dst, size)


def store_nz2nd(src, dst, size=None):
    """L1/L0C -> GM copy (the NZ -> ND conversion of npuir)."""
    _sized_copy(src, dst, size)


def store_fixpipe(src, dst, size=None, enable_nz2nd=False, channel_split=False, pre_relu_mode=""):
    """L0C -> GM (or L1) through the fix pipe: converts to dst's dtype; pre_relu_mode "relu" applies a ReLU."""
    if channel_split:
        raise NotImplementedError("T.store_fixpipe(..., channel_split=True) is not implemented")
    if pre_relu_mode not in ("", "relu"):
        raise NotImplementedError(f"T.store_fixpipe(..., pre_relu_mode={pre_relu_mode!r}) is not implemented "
                                  f"(only \"\" and \"relu\")")
    if size is None:
        _copy(src, dst, enable_relu=pre_relu_mode == "relu")
    else:
        _copy(src, dst, list(size), enable_relu=pre_relu_mode == "relu")
