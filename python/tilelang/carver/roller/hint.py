"""Hint: one recommended tile configuration."""
from .rasterization import NoRasterization

__all__ = ["Hint"]


class Hint:
    """`block` (output tile per block), `warp` (output tile per warp), `rstep` (reduction step),
    `thread` (threads along each block dimension), `pipeline_stage`, `rasterization_plan`,
    `use_tc` (tensor-core instructions), plus the search's estimate `estimated_ms`."""

    def __init__(self):
        self.arch = None
        self.use_tc = False
        self.block = []
        self.thread = []
        self.warp = []
        self.rstep = []
        self.reduce_thread = []
        self.rasterization_plan = NoRasterization()
        self.cached_tensors = []
        self.pipeline_stage = 1
        self.use_async = False
        self.block_reduction_depth = None
        self.estimated_ms = None

    @property
    def threads(self):
        n = 1
        for t in self.thread:
            n *= t
        return n

    def to_dict(self):
        d = {"block": list(self.block), "warp": list(self.warp), "rstep": list(self.rstep),
             "thread": list(self.thread), "pipeline_stage": self.pipeline_stage, "use_tc": self.use_tc,
             "rasterization_plan": repr(self.rasterization_plan)}
        if self.block_reduction_depth is not None:
            d["block_reduction_depth"] = self.block_reduction_depth
        return d

    @classmethod
    def from_dict(cls, dic):
        h = cls()
        for k, v in dic.items():
            if k != "rasterization_plan":
                setattr(h, k, v)
        return h

    def __repr__(self):
        return str(self.to_dict())
