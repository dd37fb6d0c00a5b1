"""The typed exceptions of tilelang (defined in C++, src/ir/error.h; bound in src/bindings/errors.cc).

TileLangError is the base of all of them except the standard ValueError, TypeError and
NotImplementedError, which the compiler also raises for bad values, types and unsupported features.
"""
from ._core import (  # noqa: F401
    ArgumentError,
    CompileError,
    DeviceRuntimeError,
    LayoutError,
    ResourceError,
    SyncError,
    TileLangError,
    TileLangSyntaxError,
    VerifyError,
)

__all__ = ["TileLangError", "TileLangSyntaxError", "LayoutError", "ResourceError", "ArgumentError", "SyncError",
           "VerifyError", "CompileError", "DeviceRuntimeError"]
