"""A small TVM-compatibility namespace: what TileLang user programs touch of TVM, not TVM itself.

`from tilelang import tvm` (and `import tvm` after `import tilelang`, when no real TVM is
installed) gives:

* `tvm.DataType(dtype)` (`.bits`, `.lanes`, `.type_code`, compares equal to the dtype's name);
* `tvm.target.Target(...)` as a `with` scope read by tilelang.lower / compile, and
  `tvm.transform.PassContext(config=...)` as a scope whose config reaches tilelang.lower;
* `tvm.tirx` / `tvm.ir`: this project's IR classes under TVM's names (`Var`, `PrimExpr`,
  `Buffer`, `BufferLoad`, `BufferRegion`) and expression helpers (`const`, `floordiv`, ...);
* `tvm.error.InternalError` / `tvm.TVMError` (= tilelang.TileLangError);
* `tvm.get_global_func` / `tvm_ffi.get_global_func` (the compile-callback registry).

Everything else of TVM (IRModule, passes, the arith analyzer, TVMScript, ...) is TVM's own
machinery: those names exist so that modules importing them load, and raise NotImplementedError
naming the TVM API when used. docs/COMPATIBILITY.md ("the tvm namespace") lists them.
"""
from .. import _core
from . import error, ffi, ir, target, tirx, transform  # noqa: F401
from ._common import DataType, unsupported
from .error import TVMError  # noqa: F401

__all__ = ["DataType", "target", "transform", "tirx", "ir", "error", "ffi", "TVMError", "get_global_func",
           "register_global_func", "IRModule", "arith", "script", "runtime", "testing", "te", "compile"]

__version__ = "0.0.0-tilelang-cpp-compat"

get_global_func = ffi.get_global_func
register_global_func = ffi.register_global_func

IRModule = unsupported("tvm.IRModule", "pass the @T.prim_func itself to tilelang.compile / tilelang.lower")
compile = unsupported("tvm.compile", "use tilelang.compile")  # noqa: A001
build = unsupported("tvm.build", "use tilelang.compile")


class _Unsupported:
    """A TVM submodule this namespace does not provide: any attribute raises NotImplementedError."""

    def __init__(self, name, alternative):
        self._name, self._alternative = name, alternative

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return unsupported(f"{self._name}.{attr}", self._alternative)

    def __repr__(self):
        return f"<tilelang-cpp stand-in for {self._name} (not provided)>"


arith = _Unsupported("tvm.arith", "tilelang-cpp's arithmetic analysis is internal (C++)")
script = _Unsupported("tvm.script", "write kernels with @T.prim_func")
runtime = _Unsupported("tvm.runtime", "kernels take torch / numpy / DLPack tensors directly")
testing = _Unsupported("tvm.testing", "use tilelang.testing")
te = _Unsupported("tvm.te", "write kernels with @T.prim_func")
relax = _Unsupported("tvm.relax", "tilelang-cpp compiles kernels, not models")
