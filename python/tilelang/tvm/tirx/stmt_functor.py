"""tvm.tirx.stmt_functor: TVM's IR visitors (not provided; importable so modules that import them load)."""
from .._common import unsupported

_ALT = "inspect the IR with PrimFunc.script() or tilelang._core's Stmt fields"
ir_transform = unsupported("tvm.tirx.stmt_functor.ir_transform", _ALT)
post_order_visit = unsupported("tvm.tirx.stmt_functor.post_order_visit", _ALT)
pre_order_visit = unsupported("tvm.tirx.stmt_functor.pre_order_visit", _ALT)
substitute = unsupported("tvm.tirx.stmt_functor.substitute", _ALT)
