"""tilelang.transform.simplify (see tilelang.transform)."""
from . import apply_simplify, simplify_prim_func  # noqa: F401
