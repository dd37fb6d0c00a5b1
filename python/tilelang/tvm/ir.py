"""tvm.ir: the expression base class and stand-ins for TVM's IR module machinery."""
from .. import _core
from ._common import unsupported

__all__ = ["PrimExpr", "Range", "Op", "IRModule", "assert_structural_equal", "structural_equal"]

PrimExpr = _core.PrimExpr


class Range:
    """tvm.ir.Range(begin, end) / Range.from_min_extent(min, extent)."""

    def __init__(self, begin, end=None):
        if end is None:
            begin, end = 0, begin
        self.min = begin
        self.extent = end - begin

    @staticmethod
    def from_min_extent(min_value, extent):
        r = Range(0, 0)
        r.min, r.extent = min_value, extent
        return r


class Op:
    get = staticmethod(unsupported("tvm.ir.Op.get", "TVM operators do not exist in tilelang-cpp's IR"))


IRModule = unsupported("tvm.ir.IRModule", "pass the @T.prim_func itself to tilelang.compile")
assert_structural_equal = unsupported("tvm.ir.assert_structural_equal",
                                      "compare PrimFunc.script() texts or use tilelang._core.structural_equal")
structural_equal = unsupported("tvm.ir.structural_equal", "use tilelang._core.structural_equal")
Span = _core.Span
