"""Compile callbacks (TileLang's register_cuda_postproc, ...).

TileLang lets a program rewrite the generated CUDA / HIP / C source before it is compiled. Here the
source is generated and compiled in C++ in one step, so registered callbacks are kept (a later
tvm_ffi.get_global_func("tilelang_callback_cuda_postproc") returns them) but NOT applied: a
UserWarning says so once per callback kind. docs/COMPATIBILITY.md lists this difference.
"""
import warnings

__all__ = ["register_cuda_postproc", "register_hip_postproc", "register_c_postproc",
           "register_cuda_postproc_callback", "registered_callbacks"]

_CALLBACKS = {}


def registered_callbacks():
    return dict(_CALLBACKS)


def _register(name, func, override=True):
    if not callable(func):
        raise TypeError(f"{name}: expected a callable (code, target) -> code, got {type(func).__name__}")
    if name in _CALLBACKS and not override:
        raise ValueError(f"a callback is already registered as {name}")
    if name not in _CALLBACKS:
        warnings.warn(f"tilelang-cpp keeps the {name} callback but does not apply it: generated sources are "
                      "compiled unmodified (docs/COMPATIBILITY.md)", UserWarning, stacklevel=3)
    _CALLBACKS[name] = func
    return func


def register_cuda_postproc(func, override=True):
    return _register("tilelang_callback_cuda_postproc", func, override)


def register_hip_postproc(func, override=True):
    return _register("tilelang_callback_hip_postproc", func, override)


def register_c_postproc(func, override=True):
    return _register("tilelang_callback_c_postproc", func, override)


def register_cuda_postproc_callback(func=None, override=True):
    """Decorator form: @register_cuda_postproc_callback or @register_cuda_postproc_callback()."""
    if func is None or isinstance(func, bool):
        ov = override if func is None else func
        return lambda f: register_cuda_postproc(f, ov)
    return register_cuda_postproc(func, override)
