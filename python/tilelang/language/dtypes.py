"""Data types at the Python boundary.

A dtype is its canonical name ("float16", "int32", ...). `T.float16`-style objects are `dtype`
instances: strings that are also callable (`T.float32(0)` is a constant, `T.float16(x)` a cast).
`to_dtype` also accepts the aliases the C++ parser knows ("float", "half", ...), Python's
`bool`/`int`/`float`, numpy/ml_dtypes dtypes and torch dtypes (torch is never imported here: a
torch dtype can only exist if the caller already imported torch).
"""
import sys

from .. import _core

__all__ = ["dtype", "to_dtype", "is_float_dtype", "is_int_dtype"]


class dtype(str):
    """A dtype name that can also build values: `T.float32(0)`, `T.int8(x)`. `T.dtype(x)` takes any
    dtype spelling (an alias, a torch or numpy dtype) and gives the canonical name."""

    __slots__ = ()

    def __new__(cls, value="float32"):
        if value.__class__ is not str or value in _ALIASES or value in ("float", "double", "half", "int"):
            value = _convert(value)
        return str.__new__(cls, value)

    def __call__(self, value=None):
        if value is None:
            raise TypeError(f"T.{self}() needs a value: T.{self}(0) is a constant, T.{self}(x) a cast")
        cls = value.__class__
        if cls is int:
            return _core.make_int(value, self)
        if cls is bool or cls is float:
            return _core.make_const(self, float(value))
        return _core.make_cast(self, value)

    def __repr__(self):
        return f"T.{str.__str__(self)}"

    @property
    def bits(self):
        """Bits of one element (TileLang's dtype.bits)."""
        _, bits, lanes = _core.dtype_info(str(self))
        return bits * lanes

    @property
    def bytes(self):
        """Bytes of one element (at least 1)."""
        return max(1, self.bits // 8)

    def as_torch(self):
        """The torch dtype of the same elements (TileLang's dtype.as_torch())."""
        from ..jit.adapter import torch_dtype  # noqa: PLC0415 (torch stays optional)
        return torch_dtype(str(self))


_cache = {}


# TileLang's C-style aliases (T.long, "uint", ...) and tfloat32, which is float32 storage here: a
# gemm on float32 operands is already tf32-class or better on every target (docs/COMPATIBILITY.md).
_ALIASES = {"short": "int16", "long": "int64", "uint": "uint32", "ulong": "uint64", "ushort": "uint16",
            "tfloat32": "float32", "float32_t": "float32"}


def _convert(x):
    if isinstance(x, str):
        return _core.canonical_dtype(_ALIASES.get(str(x), str(x)))
    if x is bool:
        return "bool"
    if x is int:
        return "int32"
    if x is float:
        return "float32"
    mod = type(x).__module__
    if mod == "torch" and "torch" in sys.modules:
        name = str(x)
        if name.startswith("torch."):
            return _core.canonical_dtype(name[len("torch."):])
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            return _core.canonical_dtype(np.dtype(x).name)
        except TypeError:
            pass
    raise TypeError(f"cannot use {x!r} as a dtype; use a name such as 'float16', a T.float16-style object, "
                    "or a numpy/torch dtype")


def to_dtype(x):
    """Canonical dtype name of `x` (a string, T.float16, numpy or torch dtype)."""
    try:
        return _cache[x]
    except (KeyError, TypeError):
        pass
    d = dtype(_convert(x))
    try:
        _cache[x] = d
    except TypeError:
        pass
    return d


def is_float_dtype(name):
    return _core.dtype_info(name)[0] == "float"


def is_int_dtype(name):
    return _core.dtype_info(name)[0] in ("int", "uint")


# The T.<dtype> objects.
bool_ = dtype("bool")
int8, int16, int32, int64 = dtype("int8"), dtype("int16"), dtype("int32"), dtype("int64")
uint8, uint16, uint32, uint64 = dtype("uint8"), dtype("uint16"), dtype("uint32"), dtype("uint64")
float16, bfloat16, float32, float64 = dtype("float16"), dtype("bfloat16"), dtype("float32"), dtype("float64")
float8_e4m3 = dtype("float8_e4m3")
float8_e5m2 = dtype("float8_e5m2")
float8_e4m3fn = float8_e4m3
float8_e8m0fnu = dtype("float8_e8m0fnu")  # unsigned powers of two 2^-127..2^127 (MX scales)
float4_e2m1fn = dtype("float4_e2m1fn")  # FP4 E2M1; packed two a byte in kernel arguments (docs/FLOAT4.md)
half = float16
double = float64
float_ = float32
int_ = int32
uint_ = uint32
short = int16
long = int64
ulong = uint64
tfloat32 = float32

ALL = {
    "bool": bool_, "int8": int8, "int16": int16, "int32": int32, "int64": int64,
    "uint8": uint8, "uint16": uint16, "uint32": uint32, "uint64": uint64,
    "float16": float16, "bfloat16": bfloat16, "float32": float32, "float64": float64,
    "float8_e4m3": float8_e4m3, "float8_e4m3fn": float8_e4m3fn, "float8_e5m2": float8_e5m2,
    "float8_e8m0fnu": float8_e8m0fnu, "float4_e2m1fn": float4_e2m1fn,
    "half": half, "double": double, "float": float_, "int": int_, "uint": uint_, "short": short, "long": long,
    "ulong": ulong, "tfloat32": tfloat32,
}

# Vector (multi-lane) dtypes TileLang programs name, e.g. as test parameters: the names exist and
# describe their type (.bits counts every lane); a kernel whose buffers or values use one raises
# NotImplementedError when it is compiled (no target here generates user-visible vector types).
VECTOR = {n: dtype(n) for n in ("float16x2", "bfloat16x2", "float32x2", "float32x4", "float32x8", "int8x4")}


def _astype(self, dt):
    """TVM's `x.astype(dtype)` (TileLang's puzzles write `X[i, j].astype(accum_dtype)`)."""
    return _core.make_cast(to_dtype(dt), self)


_core.PrimExpr.astype = _astype
