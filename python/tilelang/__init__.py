"""tilelang-cpp: a tile-level kernel language with a C++ compiler."""
from . import _core  # noqa: F401

__version__ = _core.__version__

# --- frontend (language, layouts, errors) ---------------------------------------------------------
from . import errors, intrinsics, language, layout, primitives  # noqa: E402,F401
from .errors import (  # noqa: E402,F401
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
from .language import GemmWarpPolicy  # noqa: E402,F401
# --- end frontend ---------------------------------------------------------------------------------

# --- runtime: compile, jit, Kernel, profiler, autotuner, cache ------------------------------------
from . import cache, profiler  # noqa: E402,F401
from .autotuner import autotune  # noqa: E402,F401
from .jit import JITKernel, Kernel, KernelParam, compile, jit  # noqa: E402,F401
from .jit.pass_config import PassConfigKey  # noqa: E402,F401
from .profiler import Profiler, TensorSupplyType  # noqa: E402,F401
# --- end runtime ----------------------------------------------------------------------------------
