"""tilelang.carver: hardware-aware default tile configurations for GEMM-like kernels.

Architecture facts (`arch`: SM / core count, shared-memory and register capacities, bandwidth)
plus a small search (`template.MatmulTemplate(...).with_arch(arch).recommend_hints(topk)`) that
enumerates block / warp / reduction tiles and pipeline depths, keeps those that fit the hardware,
and ranks them with a roofline estimate. TileLang's carver does a larger search (its "roller");
the result has the same shape (roller.Hint objects), so autotuning code that consumes hints works
unchanged. docs/COMPATIBILITY.md says what differs. ElementwiseTemplate, GeneralReductionTemplate and
FlashAttentionTemplate rank their candidates with TileSight (tilelang.tilesight.hints, docs/TILESIGHT.md).
"""
from . import arch, roller, template  # noqa: F401
from .arch import CDNA, CPU, CUDA, TileDevice, auto_infer_current_arch, get_arch  # noqa: F401
from .roller import Hint  # noqa: F401
from .template import (ElementwiseTemplate, FlashAttentionTemplate, GEMVTemplate, GeneralReductionTemplate,  # noqa: F401
                       MatmulTemplate)
