"""tilelang-cpp: a tile-level kernel language with a C++ compiler."""
import importlib as _importlib
import os as _os
import sys as _sys

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
from .layout import Fragment, Layout  # noqa: E402,F401
# --- end frontend ---------------------------------------------------------------------------------

# --- runtime: compile, jit, Kernel, profiler, autotuner, cache ------------------------------------
from . import cache, profiler  # noqa: E402,F401
from .autotuner import autotune  # noqa: E402,F401
from .jit import JITImpl, JITKernel, Kernel, KernelParam, compile, jit, par_compile  # noqa: E402,F401
from .jit.pass_config import PassConfigKey  # noqa: E402,F401
from .profiler import Profiler, TensorSupplyType  # noqa: E402,F401
from .cache import clear_cache, disable_cache, enable_cache, is_cache_enabled  # noqa: E402,F401
# --- end runtime ----------------------------------------------------------------------------------

# --- TileLang's module-level surface (docs/COMPATIBILITY.md) --------------------------------------
from .env import env  # noqa: E402,F401
from .math import cdiv, next_power_of_2  # noqa: E402,F401
from .language import dtypes  # noqa: E402,F401
from . import tvm  # noqa: E402,F401
from .tvm import DataType  # noqa: E402,F401
from .engine import lower, register_c_postproc, register_cuda_postproc, register_hip_postproc  # noqa: E402,F401

# Imported on first use (they pull in pytest, or are rarely needed).
_LAZY_SUBMODULES = ("testing", "utils", "carver", "engine", "transform", "autotuner", "math", "tilesight")


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        return _importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'tilelang' has no attribute '{name}'")


def set_log_level(level):
    """TileLang's logging control; tilelang-cpp reports through exceptions and `verbose=True`."""
    import logging
    logging.getLogger(__name__).setLevel(level if not isinstance(level, str) else level.upper())


def _install_tvm_alias():
    """`import tvm` after `import tilelang` gives tilelang.tvm (as TileLang's bundled TVM would),
    unless a real TVM is installed or TILELANG_NO_TVM_ALIAS=1."""
    if _os.environ.get("TILELANG_NO_TVM_ALIAS", "").lower() in ("1", "true", "yes", "on"):
        return
    import importlib.util
    if "tvm" not in _sys.modules and importlib.util.find_spec("tvm") is None:
        _sys.modules["tvm"] = tvm
        for sub in ("target", "transform", "tirx", "tirx.stmt_functor", "ir", "error", "ffi"):
            _sys.modules[f"tvm.{sub}"] = _importlib.import_module(f".tvm.{sub}", __name__)
    if "tvm_ffi" not in _sys.modules and importlib.util.find_spec("tvm_ffi") is None:
        _sys.modules["tvm_ffi"] = tvm.ffi


_install_tvm_alias()
# --- end TileLang's module-level surface ----------------------------------------------------------
