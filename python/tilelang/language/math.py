"""Math on scalars (usable inside T.Parallel) and the element-wise tile ops that share their names.

`T.exp(x)` on a scalar is the math call; `T.exp(src, dst)` on two buffers is the tile op
`tile.exp(dst, src)` (source first, as the Ascend Developer form writes it). Likewise `T.max(a, b)`
on scalars vs `T.max(dst, a, b)` on buffers (destination first). The argument types decide.
"""
import math as _pymath

from .. import _core
from .dtypes import to_dtype
from .tile_ops import bool_expr, is_tile_arg, tile_binary, tile_unary

__all__ = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "sigmoid", "abs", "pow", "floor", "ceil", "sin",
           "cos", "round", "trunc", "max", "min", "add", "sub", "mul", "div", "if_then_else", "Select", "cast", "Cast",
           "infinity", "max_value", "min_value", "ceildiv", "floordiv", "floormod", "truncdiv", "truncmod", "And",
           "Or", "Not", "clamp", "ieee_add", "ieee_mul", "ieee_fmaf", "ieee_fdiv", "ieee_fsqrt", "shift_left",
           "shift_right", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"]

_FLOATS = frozenset(("float16", "bfloat16", "float32", "float64", "float8_e4m3", "float8_e5m2", "float8_e8m0fnu",
                     "float4_e2m1fn"))


def _float_arg(x):
    e = _core.to_expr(x)
    if e.dtype not in _FLOATS:
        e = _core.make_cast("float32", e)
    return e


def _scalar_unary(name, keep_int=False):
    def f(x):
        e = _core.to_expr(x)
        if e.dtype not in _FLOATS:
            if keep_int:
                return e if name != "abs" else _core.make_call(e.dtype, name, [e])
            e = _core.make_cast("float32", e)
        return _core.make_call(e.dtype, name, [e])
    return f


def _dual_unary(name, tile_name=None):
    scalar = _scalar_unary(name, keep_int=name == "abs")
    op = "tile." + (tile_name or name)

    def f(*args):
        if len(args) == 1:
            return scalar(args[0])
        if len(args) == 2 and (is_tile_arg(args[0]) or is_tile_arg(args[1])):
            # Developer form, source first.
            tile_unary(op, args[1], args[0], f"T.{name}")
            return None
        raise TypeError(f"T.{name} takes one scalar (math) or two buffers (src, dst) (tile op), got "
                        f"{len(args)} argument(s)")
    f.__name__ = name
    f.__doc__ = (f"T.{name}(x): math on a scalar; T.{name}(src, dst): element-wise over a tile "
                 f"(tile op {op}).")
    return f


exp = _dual_unary("exp")
exp2 = _dual_unary("exp2")
log = _dual_unary("log")
sqrt = _dual_unary("sqrt")
rsqrt = _dual_unary("rsqrt")
tanh = _dual_unary("tanh")
sigmoid = _dual_unary("sigmoid")
abs = _dual_unary("abs")  # noqa: A001
sin = _dual_unary("sin")
cos = _dual_unary("cos")
log2 = _scalar_unary("log2")
floor = _scalar_unary("floor", keep_int=True)
ceil = _scalar_unary("ceil", keep_int=True)
round = _scalar_unary("round", keep_int=True)  # noqa: A001
trunc = _scalar_unary("trunc", keep_int=True)


def _fast(name):
    def f(x):
        e = _float_arg(x)
        return _core.make_call(e.dtype, name, [e])
    f.__name__ = name
    return f


# Fast-math intrinsics: T.__exp(x), ... (approximate; numerics default to IEEE elsewhere).
globals()["__exp"] = _fast("__exp")
globals()["__log"] = _fast("__log")
globals()["__sin"] = _fast("__sin")
globals()["__cos"] = _fast("__cos")
FAST_MATH = ("__exp", "__log", "__sin", "__cos")


def _scalar_pow(a, b):
    return _core.to_expr(a) ** b


def _dual_binary(name, scalar):
    op = "tile." + name

    def f(*args):
        if len(args) == 3 and is_tile_arg(args[0]):
            tile_binary(op, args[0], args[1], args[2], f"T.{name}")
            return None
        if len(args) >= 2 and not any(is_tile_arg(a) for a in args):
            out = scalar(args[0], args[1])
            for a in args[2:]:
                out = scalar(out, a)
            return out
        raise TypeError(f"T.{name} takes scalars (math) or a destination buffer and two sources "
                        f"T.{name}(dst, a, b) (tile op {op})")
    f.__name__ = name
    return f


max = _dual_binary("max", lambda a, b: _core.make_binary("max", a, b))  # noqa: A001
min = _dual_binary("min", lambda a, b: _core.make_binary("min", a, b))  # noqa: A001
pow = _dual_binary("pow", _scalar_pow)  # noqa: A001
add = _dual_binary("add", lambda a, b: _core.make_binary("add", a, b))
sub = _dual_binary("sub", lambda a, b: _core.make_binary("sub", a, b))
mul = _dual_binary("mul", lambda a, b: _core.make_binary("mul", a, b))
div = _dual_binary("div", lambda a, b: _core.make_binary("div", a, b))


def if_then_else(cond, true_value, false_value):
    """cond ? a : b; only the chosen side is evaluated at run time."""
    return _core.make_select(bool_expr(cond, "if_then_else condition"), true_value, false_value)


Select = if_then_else


def cast(value, dtype):
    """Converts `value` to `dtype`."""
    if isinstance(value, str) and not isinstance(dtype, str):
        value, dtype = dtype, value  # T.Cast(dtype, value) spelling
    dt = to_dtype(dtype)
    if _core.dtype_info(str(dt))[2] > 1:
        raise NotImplementedError(f"T.cast: casting to the vector type {dt} is not implemented; cast each lane to its "
                                  f"scalar type and store the lanes as consecutive elements")
    return _core.make_cast(dt, value)


Cast = cast  # TVM's spelling: T.Cast(dtype, value)


def infinity(dtype):
    d = to_dtype(dtype)
    if d not in _FLOATS or d in ("float8_e8m0fnu", "float4_e2m1fn"):
        raise TypeError(f"T.infinity: {d} has no infinity; use T.max_value")
    return _core.make_float(_pymath.inf, d)


_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38,
              "float64": 1.7976931348623157e308, "float8_e4m3": 448.0, "float8_e5m2": 57344.0,
              "float8_e8m0fnu": 2.0 ** 127, "float4_e2m1fn": 6.0}


def max_value(dtype):
    d = to_dtype(dtype)
    kind, bits, _ = _core.dtype_info(d)
    if kind == "float":
        return _core.make_float(_FLOAT_MAX[d], d)
    if kind == "bool":
        return _core.make_bool(True)
    if kind == "uint":
        return _core.make_int((1 << bits) - 1 if bits < 64 else -1, d)
    return _core.make_int((1 << (bits - 1)) - 1, d)


def min_value(dtype):
    d = to_dtype(dtype)
    kind, bits, _ = _core.dtype_info(d)
    if d == "float8_e8m0fnu":  # unsigned: the smallest value is 2^-127
        return _core.make_float(2.0 ** -127, d)
    if kind == "float":
        return _core.make_float(-_FLOAT_MAX[d], d)
    if kind == "bool":
        return _core.make_bool(False)
    if kind == "uint":
        return _core.make_int(0, d)
    return _core.make_int(-(1 << (bits - 1)), d)


def ceildiv(a, b):
    return _core.ceildiv(a, b)


def floordiv(a, b):
    return _core.make_binary("floordiv", a, b)


def floormod(a, b):
    return _core.make_binary("floormod", a, b)


def truncdiv(a, b):
    return _core.make_binary("div", a, b)


def truncmod(a, b):
    return _core.make_binary("mod", a, b)


def And(*args):  # noqa: N802
    """Logical and of run-time conditions."""
    out = bool_expr(args[0], "T.And")
    for a in args[1:]:
        out = _core.make_binary("and", out, bool_expr(a, "T.And"))
    return out


def Or(*args):  # noqa: N802
    """Logical or of run-time conditions."""
    out = bool_expr(args[0], "T.Or")
    for a in args[1:]:
        out = _core.make_binary("or", out, bool_expr(a, "T.Or"))
    return out


def Not(x):  # noqa: N802
    return _core.make_unary("not", bool_expr(x, "T.Not"))


def clamp(x, min_val, max_val):
    """min(max(x, min_val), max_val), TileLang's T.clamp (keyword names as there)."""
    return _core.make_binary("max", _core.make_binary("min", x, max_val), min_val)


_ROUNDING = ("rn", "rz", "ru", "rd")


def _ieee(name, arity):
    def f(*args, rounding_mode="rn"):
        if len(args) == arity + 1 and isinstance(args[-1], str):
            args, rounding_mode = args[:-1], args[-1]
        if len(args) != arity:
            raise TypeError(f"T.{name} takes {arity} value(s) and rounding_mode")
        if rounding_mode not in _ROUNDING:
            raise ValueError(f"T.{name}: rounding_mode must be one of {', '.join(_ROUNDING)}, got {rounding_mode!r}")
        vals = [_float_arg(a) for a in args]
        return _core.make_call(vals[0].dtype, name, vals + [_core.make_string(rounding_mode)])
    f.__name__ = name
    return f


ieee_add = _ieee("ieee_add", 2)
ieee_mul = _ieee("ieee_mul", 2)
ieee_fmaf = _ieee("ieee_fmaf", 3)
ieee_fdiv = _ieee("ieee_fdiv", 2)
ieee_fsqrt = _ieee("ieee_fsqrt", 1)


# ---- bit operations (TVM's names for <<, >>, &, |, ^, ~) ---------------------------------------------

def shift_left(x, y):
    return _core.make_binary("shl", x, y)


def shift_right(x, y):
    return _core.make_binary("shr", x, y)


def bitwise_and(x, y):
    return _core.make_binary("bitand", x, y)


def bitwise_or(x, y):
    return _core.make_binary("bitor", x, y)


def bitwise_xor(x, y):
    return _core.make_binary("bitxor", x, y)


def bitwise_not(x):
    return _core.make_unary("bitnot", x)
