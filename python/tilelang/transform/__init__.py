"""tilelang.transform: PassConfigKey, and TileLang's IR-simplification entry points.

Every compile simplifies the IR (the pipeline's `simplify` pass), so simplify_prim_func /
apply_simplify return their input unchanged; TileLang's other TVM passes are not provided here.
"""
import functools

from ..jit.pass_config import PassConfigKey  # noqa: F401
from ..tvm.transform import PassContext  # noqa: F401

__all__ = ["PassConfigKey", "PassContext", "simplify_prim_func", "apply_simplify"]


def apply_simplify(func, model_type="device"):
    """Returns `func`: tilelang-cpp simplifies every function when it is compiled."""
    return func


def simplify_prim_func(func):
    """Decorator for a builder returning a @T.prim_func (TileLang simplifies the result; here
    every compile does, so the builder's result is returned as is)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return apply_simplify(func(*args, **kwargs))
    return wrapper
