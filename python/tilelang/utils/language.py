"""Buffer-scope predicates and small IR helpers (TileLang's tilelang.utils.language)."""

__all__ = ["is_global", "is_shared", "is_shared_dynamic", "is_fragment", "is_local", "get_prim_func_name"]


def _scope(buffer):
    return getattr(buffer, "scope", "")


def is_global(buffer):
    return _scope(buffer) == "global"


def is_shared(buffer, allow_dynamic=True):
    s = _scope(buffer)
    return s == "shared" or (allow_dynamic and s == "shared.dyn")


def is_shared_dynamic(buffer):
    return _scope(buffer) == "shared.dyn"


def is_fragment(buffer):
    return _scope(buffer).startswith("local.fragment")


def is_local(buffer):
    return _scope(buffer) in ("local", "local.var")


def get_prim_func_name(func, default=None):
    name = getattr(func, "name", None)
    return name if name else default
