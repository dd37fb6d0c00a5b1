"""Kernel templates the carver recommends tiles for (TileLang's tilelang.carver.template)."""
from .base import BaseTemplate  # noqa: F401
from .gemv import GEMVTemplate  # noqa: F401
from .matmul import MatmulTemplate  # noqa: F401
from .tilesight_templates import ElementwiseTemplate, FlashAttentionTemplate, GeneralReductionTemplate  # noqa: F401
