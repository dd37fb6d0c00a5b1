"""tilelang-cpp: a tile-level kernel language with a C++ compiler."""
from . import _core  # noqa: F401

__version__ = _core.__version__

# --- runtime: compile, jit, Kernel, profiler, autotuner, cache (runtime engineer's block) -------
from . import cache  # noqa: E402,F401
from .autotuner import autotune  # noqa: E402,F401
from .jit import JITKernel, Kernel, KernelParam, compile, jit  # noqa: E402,F401
from .jit.pass_config import PassConfigKey  # noqa: E402,F401
from .profiler import Profiler, TensorSupplyType  # noqa: E402,F401
from . import profiler  # noqa: E402,F401
from ._core import (  # noqa: E402,F401
    ArgumentError, CompileError, DeviceRuntimeError, TileLangError)
# --- end of the runtime block --------------------------------------------------------------------
