"""tvm.error: TVM's error classes are tilelang's (programs catching them catch our compile errors)."""
from .. import _core

TVMError = _core.TileLangError
InternalError = _core.TileLangError
DiagnosticError = _core.TileLangSyntaxError
OpError = _core.TileLangError

__all__ = ["TVMError", "InternalError", "DiagnosticError", "OpError"]
