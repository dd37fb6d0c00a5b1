"""tilelang.transform: PassConfigKey, and TileLang's IR-simplification entry points.

Every compile simplifies the IR (the pipeline's `simplify` pass); simplify_prim_func /
apply_simplify do what else TileLang's Simplify does to a function: drop the tensor parameters its
body never accesses. TileLang's other TVM passes are not provided here.
"""
import functools

from ..jit.pass_config import PassConfigKey  # noqa: F401
from ..tvm.transform import PassContext  # noqa: F401

__all__ = ["PassConfigKey", "PassContext", "simplify_prim_func", "apply_simplify"]


def apply_simplify(func, inline_let=False, model_type="device"):
    """TileLang's argument simplification: `func` without the tensor parameters its body never
    accesses (scalar parameters stay), as TileLang's Simplify(simplify_arguments=True) does; the
    expression simplification itself happens in every compile. Anything but a @T.prim_func is
    returned unchanged."""
    from .. import _core  # noqa: PLC0415
    from ..language.parser import PrimFunc  # noqa: PLC0415
    if not isinstance(func, PrimFunc):
        return func
    ir = func.ir
    keep = list(_core.used_param_buffers(ir))
    hidden = int(ir.attrs.get("tl.global_workspaces", 0) or 0)  # T.alloc_global buffers stay
    for k in range(len(keep) - hidden, len(keep)):
        keep[k] = True
    if all(keep):
        return func
    params = list(ir.params)
    n = len(params)
    new_index = {}
    for i, k in enumerate(keep):
        if k:
            new_index[i] = len(new_index)
    out_idx = None
    if func.out_idx is not None:
        m = len(new_index)
        out_idx = [new_index[i % n] - m for i in func.out_idx if i % n in new_index]
    new_ir = _core.PrimFunc(ir.name, [p for p, k in zip(params, keep) if k], ir.body, ir.attrs, ir.span)
    return PrimFunc(new_ir, func.func, out_idx or None)


def simplify_prim_func(func):
    """Decorator for a builder returning a @T.prim_func (TileLang simplifies the result; here
    every compile does, so the builder's result is returned as is)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return apply_simplify(func(*args, **kwargs))
    return wrapper
