"""Ascend fractal layouts for T.annotate_layout: `T.annotate_layout({A_L1: make_zn_layout(A_L1)})`."""
from ..layout import NamedLayout

__all__ = ["make_zn_layout", "make_nz_layout"]


def make_zn_layout(buffer):
    """zN fractal layout: 16-row x (32 bytes / element) fractals, stored column of fractals first."""
    return NamedLayout("zn", buffer)


def make_nz_layout(buffer):
    """nZ fractal layout (the transposed arrangement of zN)."""
    return NamedLayout("nz", buffer)
