"""A reduction whose result's fragment layout is decided first by a T.Parallel loop (TileLang's
flash-decoding combine kernel: `T.reduce_max(lse[num_split, M] -> lse_max[M], dim=0)` with lse_max
also read in loops laid out by other fragments): the source is laid out from the result (each thread
reduces its own registers), and a row `lse[k, :]` (k a run-time loop index) copies into an [M]
fragment without moving data between threads. Compiled for sm_80 / sm_90a and run on the cuda
emulator against numpy."""
import numpy as np
import pytest

import tilelang.language as T
from cuda_util import EmuRunner, requires_nvrtc


def combine(num_split=4, block_M=64, dim=32, seqlen=128):
    @T.prim_func
    def main(glse: T.Tensor([num_split, seqlen], "float16"), part: T.Tensor([seqlen, num_split, dim], "float16"),
             out: T.Tensor([seqlen, dim], "float16")):
        with T.Kernel(T.ceildiv(seqlen, block_M), threads=128) as bx:
            po = T.alloc_fragment([block_M, dim], "float16")
            acc = T.alloc_fragment([block_M, dim], "float32")
            lse = T.alloc_fragment([num_split, block_M], "float16")
            split = T.alloc_fragment([block_M], "float32")
            logsum = T.alloc_fragment([block_M], "float32")
            lmax = T.alloc_fragment([block_M], "float32")
            scale = T.alloc_fragment([block_M], "float32")
            T.clear(logsum)
            T.clear(acc)
            T.copy(glse[:, bx * block_M:(bx + 1) * block_M], lse)
            T.reduce_max(lse, lmax, dim=0, clear=True)
            for k in T.Pipelined(num_split):
                T.copy(lse[k, :], split)
                for i in T.Parallel(block_M):
                    logsum[i] += T.exp2(split[i] - lmax[i])
            for i in T.Parallel(block_M):
                logsum[i] = T.log2(logsum[i]) + lmax[i]
            for k in T.Pipelined(num_split, num_stages=2):
                T.copy(part[bx * block_M:(bx + 1) * block_M, k, :], po)
                for i in T.Parallel(block_M):
                    split[i] = lse[k, i]
                for i in T.Parallel(block_M):
                    scale[i] = T.exp2(split[i] - logsum[i])
                for i, j in T.Parallel(block_M, dim):
                    acc[i, j] += po[i, j] * scale[i]
            T.copy(acc, out[bx * block_M, 0])
    return main


def reference(glse, part):
    g = glse.astype(np.float64)
    m = g.max(axis=0)
    logsum = np.log2(np.exp2(g - m).sum(axis=0)) + m
    scale = np.exp2(g - logsum)                            # [num_split, seqlen]
    return np.einsum("ks,skd->sd", scale, part.astype(np.float64))


@requires_nvrtc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_combine_on_emulator(arch):
    rng = np.random.default_rng(7)
    glse = rng.uniform(-4, 4, (4, 128)).astype(np.float16)
    part = rng.uniform(-1, 1, (128, 4, 32)).astype(np.float16)
    r = EmuRunner(combine(), arch=arch)
    out = r(glse, part, np.zeros((128, 32), np.float16))[2]
    assert r.report["races"] == [], r.report["races"][:3]
    np.testing.assert_allclose(out.astype(np.float64), reference(glse, part), atol=2e-2, rtol=2e-2)
