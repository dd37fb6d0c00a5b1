"""FlashMLA (DeepSeek's MLA decode kernels, https://github.com/deepseek-ai/FlashMLA) as a benchmark
peer, built from a source checkout where no wheel runs (none is published for torch 2.11). Only its
sm90 dense decode is compiled (the kernels its dense decode path launches: split-KV MLA for fp16 and
bf16, the scheduler metadata and the combine), with the flags of FlashMLA's setup.py, through
torch.utils.cpp_extension; bench/peers/flashmla_binding.cpp is the binding.

    fm = load("/path/to/FlashMLA", cutlass_include="/path/to/cutlass/include")
    out = fm.decode(q, kcache, block_table, seqlens, softmax_scale)   # see decode()

The checkout needs csrc/{api,kerutils,sm90/decode/dense,sm90/helpers.h,smxx,params.h,defines.h,utils.h}.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


class FlashMLA:
    def __init__(self, mod):
        self._mod = mod
        self._meta = []

    def decode(self, q, kcache, block_table, seqlens, softmax_scale, head_dim_v=512):
        """q [B, s_q, H, 576]; kcache [pages, 64, 1, 576] (page_block_size 64, one latent head); block_table
        [B, pages per sequence] int32; seqlens [B] int32. Returns out [B, s_q, H, 512]. The scheduler
        metadata is computed on the first call for given shapes and lengths tensor and reused afterwards, as FlashMLA's
        flash_mla_with_kvcache does with its sched_meta."""
        # The metadata splits the work by the sequence lengths: one entry per (shapes, lengths tensor
        # object); the entry keeps that tensor alive, so its memory cannot come back as another's.
        shapes = (tuple(q.shape), tuple(kcache.shape))
        for lens, shp, meta, splits in self._meta:
            if lens is seqlens and shp == shapes:
                break
        else:
            meta = splits = None
        out, _lse, new_meta, new_splits = self._mod.dense_decode_fwd(q, kcache, head_dim_v, seqlens, block_table,
                                                                     softmax_scale, False, meta, splits)
        if meta is None:
            self._meta.append((seqlens, shapes, new_meta, new_splits))
        return out


def load(src, cutlass_include=None, build_dir=None, verbose=False):
    from torch.utils.cpp_extension import load as _load
    csrc = os.path.join(src, "csrc")
    cut = cutlass_include or os.path.join(csrc, "cutlass", "include")
    incs = [csrc, os.path.join(csrc, "kerutils", "include"), os.path.join(csrc, "sm90"), cut,
            os.path.join(os.path.dirname(cut), "tools", "util", "include")]
    # CUDA 13 keeps libcu++ (cuda/std/...) under include/cccl: nvcc adds it, the host compiler of the
    # binding (which includes CUTLASS's headers) needs it named.
    from torch.utils.cpp_extension import CUDA_HOME
    if CUDA_HOME and os.path.isdir(os.path.join(CUDA_HOME, "include", "cccl")):
        incs.append(os.path.join(CUDA_HOME, "include", "cccl"))
    sources = [os.path.join(HERE, "flashmla_binding.cpp"),
               os.path.join(csrc, "smxx", "decode", "get_decoding_sched_meta", "get_decoding_sched_meta.cu"),
               os.path.join(csrc, "smxx", "decode", "combine", "combine.cu"),
               os.path.join(csrc, "sm90", "decode", "dense", "instantiations", "fp16.cu"),
               os.path.join(csrc, "sm90", "decode", "dense", "instantiations", "bf16.cu")]
    nvcc = ["-O3", "-std=c++20", "-DNDEBUG", "-D_USE_MATH_DEFINES", "-Wno-deprecated-declarations",
            "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__", "-U__CUDA_NO_HALF2_OPERATORS__",
            "-U__CUDA_NO_BFLOAT16_CONVERSIONS__", "--expt-relaxed-constexpr", "--expt-extended-lambda",
            "--use_fast_math", "-gencode", "arch=compute_90a,code=sm_90a"]
    if build_dir:
        os.makedirs(build_dir, exist_ok=True)
    mod = _load(name="flashmla_dense_decode", sources=sources, extra_include_paths=incs,
                extra_cflags=["-O3", "-std=c++20", "-DNDEBUG", "-Wno-deprecated-declarations"],
                extra_cuda_cflags=nvcc, build_directory=build_dir, verbose=verbose)
    return FlashMLA(mod)
