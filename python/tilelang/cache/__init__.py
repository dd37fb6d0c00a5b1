"""The on-disk kernel cache: $TILELANG_CACHE_DIR, else the user cache directory (docs/INSTALL.md)."""
import os

from .. import _core

__all__ = ["cache_dir", "clear_cache", "disable_cache", "enable_cache", "is_cache_enabled"]


def cache_dir():
    """The cache directory in effect."""
    return _core.cache_root()


def clear_cache():
    """Deletes every cached kernel and forgets kernels compiled in this process; returns the
    number of on-disk entries removed. Kernels already handed out keep working."""
    return _core.clear_cache()


def disable_cache():
    """Turns the on-disk cache off for this process (as TILELANG_DISABLE_CACHE=1 does)."""
    os.environ["TILELANG_DISABLE_CACHE"] = "1"


def enable_cache():
    os.environ.pop("TILELANG_DISABLE_CACHE", None)


def is_cache_enabled():
    return not _core.cache_disabled()
