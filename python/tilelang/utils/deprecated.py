"""@deprecated(reason): warns once when the decorated function is called."""
import functools
import warnings


def deprecated(reason="", alternative=None, *_args, **_kwargs):
    def deco(func):
        @functools.wraps(func)
        def wrapper(*a, **k):
            msg = f"{func.__name__} is deprecated" + (f": {reason}" if reason else "")
            if alternative:
                msg += f"; use {alternative}"
            warnings.warn(msg, DeprecationWarning, stacklevel=2)
            return func(*a, **k)
        return wrapper
    if callable(reason):
        f, reason = reason, ""
        return deco(f)
    return deco
