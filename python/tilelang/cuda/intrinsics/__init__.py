"""TileLang's CUDA intrinsic emitters (tilelang.cuda.intrinsics): internals of TileLang's TVM-based
GEMM lowering. tilelang-cpp lowers T.gemm in C++; these modules exist so that code importing them
loads, and their classes raise NotImplementedError when used (docs/COMPATIBILITY.md)."""
from . import macro  # noqa: F401
