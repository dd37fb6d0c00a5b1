from .base import GemmWarpPolicy  # noqa: F401
