"""tilelang-cpp: a tile-level kernel language with a C++ compiler."""
from . import _core  # noqa: F401

__version__ = _core.__version__
