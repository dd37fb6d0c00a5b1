"""Tile hints (TileLang's tilelang.carver.roller): what a search recommends."""
from . import rasterization  # noqa: F401
from .hint import Hint  # noqa: F401
from .rasterization import NoRasterization, Rasterization2DColumn, Rasterization2DRow  # noqa: F401
