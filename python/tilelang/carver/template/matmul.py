"""MatmulTemplate: C[M, N] = A[M, K] @ B[K, N] (B transposed by default, as TileLang's)."""
import itertools
import math

from ...language.dtypes import to_dtype
from ... import _core
from ..roller.hint import Hint
from ..roller.rasterization import NoRasterization, Rasterization2DRow
from .base import BaseTemplate

__all__ = ["MatmulTemplate"]


def _bytes(dtype):
    return max(1, _core.dtype_info(str(to_dtype(dtype)))[1] // 8)


class MatmulTemplate(BaseTemplate):
    def __init__(self, M=None, N=None, K=None, trans_A=False, trans_B=True, in_dtype="float16", out_dtype="float16",
                 accum_dtype="float16", with_bias=False):
        super().__init__()
        if None in (M, N, K):
            raise ValueError("MatmulTemplate needs M, N and K")
        self.M, self.N, self.K = int(M), int(N), int(K)
        self.trans_A, self.trans_B = trans_A, trans_B
        self.in_dtype, self.out_dtype, self.accum_dtype = in_dtype, out_dtype, accum_dtype
        self.with_bias = with_bias

    def _candidates(self):
        arch = self.arch
        gpu = arch.platform == "CUDA"
        blocks = [32, 64, 128, 256] if gpu else [16, 32, 64, 128]
        ksteps = [32, 64] if gpu else [32, 64, 128]
        stages = [1, 2, 3, 4] if gpu else [1]
        warps = [(1, 1), (1, 2), (2, 1), (2, 2), (2, 4), (4, 2)] if gpu else [(1, 1)]
        for bm, bn, bk, st, (wm, wn) in itertools.product(blocks, blocks, ksteps, stages, warps):
            if bm > max(self.M, 16) * 2 or bn > max(self.N, 16) * 2 or bk > max(self.K, 16) * 2:
                continue
            if bm % wm or bn % wn or (gpu and (bm // wm < 16 or bn // wn < 16)):
                continue
            yield bm, bn, bk, st, wm, wn

    def _estimate(self, bm, bn, bk, stages, wm, wn):
        """(ms, smem bytes) of one configuration under a roofline model, or None if it does not fit."""
        arch = self.arch
        ein, eacc = _bytes(self.in_dtype), _bytes(self.accum_dtype)
        smem = (bm * bk + bk * bn) * ein * max(1, stages)
        if smem > arch.smem_cap:
            return None
        threads = wm * wn * arch.warp_size
        if threads > arch.max_threads_per_block:
            return None
        # accumulator registers per thread (CUDA): stay well under the 255-register limit
        if arch.platform == "CUDA" and bm * bn * eacc // 4 // max(threads, 1) > 128:
            return None
        tiles = math.ceil(self.M / bm) * math.ceil(self.N / bn)
        waves = math.ceil(tiles / max(arch.compute_max_core, 1))
        kt = math.ceil(self.K / bk) * bk
        flops_per_core = arch.peak_tflops * 1e12 / max(arch.compute_max_core, 1)
        compute = 2.0 * bm * bn * kt / flops_per_core
        traffic = (bm + bn) * kt * ein / (arch.bandwidth[0] * 1e9 / max(arch.compute_max_core, 1))
        # Pipelining overlaps loads with math; without it they add up.
        per_tile = max(compute, traffic) if stages > 1 else compute + traffic
        waste = (math.ceil(self.M / bm) * bm * math.ceil(self.N / bn) * bn) / (self.M * self.N)
        return waves * per_tile * 1e3 * waste, smem

    def recommend_hints(self, topk=10):
        """Up to `topk` Hints, best estimate first."""
        scored = []
        for bm, bn, bk, st, wm, wn in self._candidates():
            est = self._estimate(bm, bn, bk, st, wm, wn)
            if est is None:
                continue
            ms, smem = est
            # Ties: prefer larger tiles (fewer blocks), then fewer stages.
            scored.append((ms, -(bm * bn), st, (bm, bn, bk, st, wm, wn)))
        scored.sort()
        hints = []
        for ms, _, _, (bm, bn, bk, st, wm, wn) in scored[:topk]:
            h = Hint()
            h.arch = self.arch
            h.use_tc = self.arch.platform == "CUDA" and self.arch.sm_version >= 70
            h.block = [bm, bn]
            h.warp = [bm // wm, bn // wn]
            h.thread = [wm, wn * self.arch.warp_size]
            h.rstep = [bk]
            h.pipeline_stage = st
            h.use_async = st > 1
            tiles_n = math.ceil(self.N / bn)
            h.rasterization_plan = Rasterization2DRow(10) if tiles_n >= 16 else NoRasterization()
            h.estimated_ms = ms
            hints.append(h)
        return hints

    def get_hardware_aware_configs(self, arch=None, topk=10):
        if arch is not None:
            self.with_arch(arch)
        return self.recommend_hints(topk)
