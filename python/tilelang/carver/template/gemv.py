"""GEMVTemplate: y[N] = W[N, K] @ x[K]: a reduction over K per output element."""
import math

from ..roller.hint import Hint
from .base import BaseTemplate

__all__ = ["GEMVTemplate"]


class GEMVTemplate(BaseTemplate):
    def __init__(self, N=None, K=None, in_dtype="float16", out_dtype="float16", accum_dtype="float32",
                 with_bias=False):
        super().__init__()
        if None in (N, K):
            raise ValueError("GEMVTemplate needs N and K")
        self.N, self.K = int(N), int(K)
        self.in_dtype, self.out_dtype, self.accum_dtype = in_dtype, out_dtype, accum_dtype
        self.with_bias = with_bias

    def recommend_hints(self, topk=10):
        arch = self.arch
        out = []
        for bn in (1, 2, 4, 8, 16, 32):
            for rk in (32, 64, 128, 256, 512):
                if rk > max(self.K, 32):
                    continue
                threads = bn * min(rk, 128) if arch.platform == "CUDA" else 1
                if threads > arch.max_threads_per_block:
                    continue
                blocks = math.ceil(self.N / bn)
                waves = math.ceil(blocks / max(arch.compute_max_core, 1))
                out.append((waves, -threads, bn, rk))
        out.sort()
        hints = []
        for _waves, _t, bn, rk in out[:topk]:
            h = Hint()
            h.arch = arch
            h.block = [bn]
            h.rstep = [rk]
            h.thread = [bn, min(rk, 128) if arch.platform == "CUDA" else 1]
            hints.append(h)
        return hints
