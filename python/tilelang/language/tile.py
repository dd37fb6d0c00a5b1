"""T.tile.*: Ascend vector primitives on whole tiles, destination first: `T.tile.add(dst, a, b)`,
`T.tile.exp(dst, src)`. On other targets they lower to loops, so kernels still run."""
from .. import _core
from .._core import BufferLoad
from . import tile_ops as _ops

_BINARY = ("add", "sub", "mul", "div", "max", "min", "pow")
_UNARY = ("exp", "ln", "log", "abs", "reciprocal", "sqrt", "rsqrt", "relu", "sigmoid", "silu", "sin", "cos", "neg",
          "exp2", "tanh")
_OTHER = ("transpose", "broadcast", "sort", "topk", "reduce_sum", "reduce_max", "reduce_min", "leaky_relu",
          "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_lshift", "bitwise_rshift", "clamp_max",
          "clamp_min", "clamp", "round", "gather_mask", "gatherb", "gather", "brcb", "createvecindex",
          "arith_progression", "sort32", "merge_sort", "init_sort_buf", "mul_add_dst", "row_expand_mul")

_CAST_MODES = ("CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC", "CAST_ODD")
_CMP_MODES = ("EQ", "NE", "GT", "GE", "LT", "LE")


def _binary(name):
    def f(dst, src0, src1):
        _ops.tile_binary("tile." + name, dst, src0, src1, f"T.tile.{name}")
    f.__name__ = name
    f.__doc__ = f"dst = src0 {name} src1 element-wise (src1 may be a scalar)."
    return f


def _unary(name):
    def f(dst, src):
        _ops.tile_unary("tile." + name, dst, src, f"T.tile.{name}")
    f.__name__ = name
    f.__doc__ = f"dst = {name}(src) element-wise."
    return f


def _arg(x, what):
    if _ops.is_tile_arg(x):
        return _ops.region_of(x, what)
    if x.__class__ is BufferLoad:
        return x
    return _core.to_expr(x)


def _other(name):
    def f(*args, **kwargs):
        what = f"T.tile.{name}"
        targs, attrs = [], {}
        for k, a in enumerate(args):
            if isinstance(a, str):
                attrs[f"arg{k}"] = a
            else:
                targs.append(_arg(a, what))
        attrs.update(kwargs)
        _ops.emit_tile_op("tile." + name, targs, attrs or None, what)
    f.__name__ = name
    f.__doc__ = f"Ascend vector primitive {name}: arguments in the user's order (destination first)."
    return f


for _n in _BINARY:
    globals()[_n] = _binary(_n)
for _n in _UNARY:
    globals()[_n] = _unary(_n)
for _n in _OTHER:
    globals()[_n] = _other(_n)


def fill(buffer, value):
    """Sets a tile to `value` (a scalar, or a one-element tile: its element, as TileLang-Ascend allows)."""
    if value.__class__ is _core.Buffer and value.scope != "local.var" and all(_ops._is_one(e) for e in value.shape):
        value = value[tuple(0 for _ in value.shape)] if len(value.shape) > 1 else value[0]
    _ops.fill(buffer, value)


def clear(buffer):
    _ops.fill(buffer, 0)


def _mode(mode, allowed, prefix, what):
    m = str(mode).upper()
    if prefix and not m.startswith(prefix):
        m = prefix + m
    if m not in allowed:
        raise ValueError(f"{what}: mode must be one of {', '.join(allowed)}, got {mode!r}")
    return m


def cast(dst, src, mode="CAST_NONE", count=None):
    """dst = src converted to dst's dtype with rounding `mode`."""
    d, s = _ops._pair(dst, src, "T.tile.cast destination", "T.tile.cast source")
    _ops.emit_tile_op("tile.cast", [d, s], {"mode": _mode(mode, _CAST_MODES, "CAST_", "T.tile.cast")}, "T.tile.cast")


def axpy(dst, src, scalar):
    """dst += scalar * src."""
    d, s = _ops._pair(dst, src, "T.tile.axpy destination", "T.tile.axpy source")
    _ops.emit_tile_op("tile.axpy", [d, s, _core.to_expr(scalar)], None, "T.tile.axpy")


def compare(dst, src0, src1, mode):
    """dst = (src0 mode src1) as a mask; mode is EQ, NE, GT, GE, LT or LE."""
    d, a = _ops._pair(dst, src0, "T.tile.compare destination", "T.tile.compare first source")
    b = _ops.operand(src1, "T.tile.compare second source") if _ops.is_tile_arg(src1) else _core.to_expr(src1)
    _ops.emit_tile_op("tile.compare", [d, a, b], {"mode": _mode(mode, _CMP_MODES, "", "T.tile.compare")},
                      "T.tile.compare")


def select(dst, mask, src0, src1, mode="VSEL_TENSOR_TENSOR_MODE"):
    """dst = mask ? src0 : src1 element-wise."""
    d, a = _ops._pair(dst, src0, "T.tile.select destination", "T.tile.select first source")
    m = _ops.region_of(mask, "T.tile.select mask")
    b = _ops.operand(src1, "T.tile.select second source") if _ops.is_tile_arg(src1) else _core.to_expr(src1)
    _ops.emit_tile_op("tile.select", [d, m, a, b], {"mode": str(mode)}, "T.tile.select")


def atomic_add(dst, src):
    """dst += src atomically (UB or L0C to global memory on Ascend)."""
    _ops.atomic_add(dst, src)
