"""tvm.tirx (TVM's TIR): this project's IR classes and expression helpers under TVM's names."""
from ... import _core
from .._common import unsupported
from . import stmt_functor  # noqa: F401

__all__ = ["Var", "SizeVar", "PrimExpr", "Buffer", "BufferLoad", "BufferRegion", "PrimFunc", "IntImm", "FloatImm",
           "const", "floordiv", "floormod", "truncdiv", "truncmod", "all", "any", "And", "Or", "Not", "Cast",
           "Select", "if_then_else", "max", "min", "stmt_functor", "decl_buffer"]

Var = _core.Var
SizeVar = _core.Var
PrimExpr = _core.PrimExpr
Buffer = _core.Buffer
BufferLoad = _core.BufferLoad
BufferRegion = _core.BufferRegion
Stmt = _core.Stmt
Span = _core.Span


def _T():
    import tilelang.language as T
    return T


def PrimFunc(*args, **kwargs):  # noqa: N802
    raise NotImplementedError("not implemented: constructing tvm.tirx.PrimFunc directly; write a @T.prim_func")


def IntImm(dtype, value, span=None):  # noqa: N802
    return _core.make_int(int(value), str(dtype))


def FloatImm(dtype, value, span=None):  # noqa: N802
    return _core.make_const(str(dtype), float(value))


def const(value, dtype=None, span=None):
    if dtype is None:
        dtype = "bool" if isinstance(value, bool) else "int32" if isinstance(value, int) else "float32"
    if isinstance(value, int) and not isinstance(value, bool) and str(dtype).startswith(("int", "uint")):
        return _core.make_int(value, str(dtype))
    return _core.make_const(str(dtype), float(value))


def floordiv(a, b, span=None):
    return _T().floordiv(a, b)


def floormod(a, b, span=None):
    return _T().floormod(a, b)


def truncdiv(a, b, span=None):
    return _T().truncdiv(a, b)


def truncmod(a, b, span=None):
    return _T().truncmod(a, b)


def And(a, b, span=None):  # noqa: N802
    return _T().And(a, b)


def Or(a, b, span=None):  # noqa: N802
    return _T().Or(a, b)


def Not(a, span=None):  # noqa: N802
    return _T().Not(a)


def all(*args, span=None):  # noqa: A001
    out = args[0]
    for a in args[1:]:
        out = _T().And(out, a)
    return out


def any(*args, span=None):  # noqa: A001
    out = args[0]
    for a in args[1:]:
        out = _T().Or(out, a)
    return out


def Cast(dtype, value, span=None):  # noqa: N802
    return _T().cast(value, dtype)


def Select(cond, a, b, span=None):  # noqa: N802
    return _T().Select(cond, a, b)


def if_then_else(cond, a, b, span=None):
    return _T().if_then_else(cond, a, b)


def max(a, b, span=None):  # noqa: A001
    return _T().max(a, b)


def min(a, b, span=None):  # noqa: A001
    return _T().min(a, b)


decl_buffer = unsupported("tvm.tirx.decl_buffer", "declare buffers with T.Tensor / T.alloc_* in a @T.prim_func")
transform = type("transform", (), {"__getattr__": lambda self, n: unsupported(
    f"tvm.tirx.transform.{n}", "tilelang-cpp's passes are C++ (tools/tl-opt runs them)")})()


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return unsupported(f"tvm.tirx.{name}", "tilelang-cpp provides only the expression names listed in "
                                          "docs/COMPATIBILITY.md")
