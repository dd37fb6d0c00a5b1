"""tvm.ffi / tvm_ffi: the global-function registry, as far as TileLang programs use it.

TileLang programs look up and chain compile callbacks ("tilelang_callback_cuda_postproc", ...)
through it; those names resolve to tilelang.engine.callback's registry. Other global functions are
TVM's and do not exist here.
"""
from ..engine import callback as _callback
from ._common import unsupported

__all__ = ["get_global_func", "register_global_func", "register_func", "get_global_func_names"]

_FUNCS = {}


def get_global_func(name, allow_missing=False):
    func = _callback.registered_callbacks().get(name) or _FUNCS.get(name)
    if func is None and not allow_missing:
        raise ValueError(f"global function {name!r} is not registered (tilelang-cpp has no TVM global functions)")
    return func


def register_global_func(name, f=None, override=False):
    def deco(func):
        if name.startswith("tilelang_callback_"):
            return _callback._register(name, func, override)
        if name in _FUNCS and not override:
            raise ValueError(f"global function {name!r} is already registered")
        _FUNCS[name] = func
        return func
    return deco(f) if f is not None else deco


register_func = register_global_func


def get_global_func_names():
    return sorted(set(_FUNCS) | set(_callback.registered_callbacks()))


Function = object
Object = object
Array = list
Map = dict
register_object = unsupported("tvm_ffi.register_object", "tilelang-cpp has no TVM object system")
