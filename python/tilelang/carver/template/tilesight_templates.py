"""Element-wise, reduction and flash-attention templates (TileLang's ElementwiseTemplate,
GeneralReductionTemplate, FlashAttentionTemplate): their hints come from tilelang.tilesight.hints,
which ranks candidate tiles with the TileSight cost model on the architecture's machine description."""
from ..roller.hint import Hint
from .base import BaseTemplate

__all__ = ["ElementwiseTemplate", "GeneralReductionTemplate", "FlashAttentionTemplate", "machine_of"]


def machine_of(arch):
    """The tilelang.tilesight machine description of a carver architecture."""
    from ...tilesight import machine as ts  # noqa: PLC0415
    if arch.platform == "CUDA":
        return ts.H100_SXM if getattr(arch, "sm_version", 0) >= 90 else ts.A100_SXM
    if arch.platform == "CPU":
        return ts.local_cpu()
    raise NotImplementedError(f"not implemented: TileSight hints for the {arch.platform} architecture")


def _hint(arch, config, block, thread, rstep=(), stages=1):
    h = Hint()
    h.arch = arch
    h.block = list(block)
    h.thread = list(thread)
    h.rstep = list(rstep)
    h.pipeline_stage = stages
    h.use_async = stages > 1
    h.use_tc = arch.platform == "CUDA" and bool(rstep)
    h.estimated_ms = config.get("estimated_ms")
    h.config = {k: v for k, v in config.items() if k not in ("estimated_ms", "bound")}
    return h


class ElementwiseTemplate(BaseTemplate):
    """out = f(inputs) over a tensor of `shape` (`dtype`)."""

    def __init__(self, shape=None, dtype="float16", inputs=2):
        super().__init__()
        if not shape:
            raise ValueError("ElementwiseTemplate needs shape (a list of ints)")
        self.shape, self.dtype, self.inputs = [int(s) for s in shape], dtype, int(inputs)

    def recommend_hints(self, topk=10):
        from ...tilesight.hints import elementwise_configs  # noqa: PLC0415
        n = 1
        for s in self.shape:
            n *= s
        cfgs = elementwise_configs(n, self.dtype, self.inputs, machine=machine_of(self.arch), topk=topk)
        return [_hint(self.arch, c, [c["block"]], [c["threads"]]) for c in cfgs]

    def get_hardware_aware_configs(self, arch=None, topk=10):
        if arch is not None:
            self.with_arch(arch)
        return self.recommend_hints(topk)


class GeneralReductionTemplate(BaseTemplate):
    """A reduction: `structure` names each axis "S" (spatial) or "R" (reduced); the kept axes are
    flattened into rows, the reduced ones into columns."""

    def __init__(self, structure=None, shape=None, dtype="float16"):
        super().__init__()
        if not structure or not shape or len(structure) != len(shape):
            raise ValueError("GeneralReductionTemplate needs structure (e.g. \"SR\") and shape of the same length")
        if any(c not in "SR" for c in structure):
            raise ValueError(f"GeneralReductionTemplate: structure letters are S and R, got {structure!r}")
        self.structure, self.shape, self.dtype = "".join(structure), [int(s) for s in shape], dtype

    def recommend_hints(self, topk=10):
        from ...tilesight.hints import reduction_configs  # noqa: PLC0415
        rows = cols = 1
        for c, s in zip(self.structure, self.shape):
            if c == "S":
                rows *= s
            else:
                cols *= s
        cfgs = reduction_configs(rows, cols, self.dtype, machine=machine_of(self.arch), topk=topk)
        return [_hint(self.arch, c, [c["block_M"]], [c["threads"]], rstep=[cols]) for c in cfgs]

    def get_hardware_aware_configs(self, arch=None, topk=10):
        if arch is not None:
            self.with_arch(arch)
        return self.recommend_hints(topk)


class FlashAttentionTemplate(BaseTemplate):
    """Flash-attention forward: softmax(Q K^T / sqrt(d)) V per (batch, head)."""

    def __init__(self, batch_size=1, num_heads=1, head_dim=1, seq_length=1, seq_kv_length=1, is_causal=False,
                 in_dtype="float16", out_dtype="float16", accum_dtype="float16"):
        super().__init__()
        self.batch_size, self.num_heads, self.head_dim = int(batch_size), int(num_heads), int(head_dim)
        self.seq_length, self.seq_kv_length = int(seq_length), int(seq_kv_length)
        self.is_causal = bool(is_causal)
        self.in_dtype, self.out_dtype, self.accum_dtype = in_dtype, out_dtype, accum_dtype

    def recommend_hints(self, topk=10):
        from ...tilesight.hints import attention_configs  # noqa: PLC0415
        cfgs = attention_configs(self.batch_size, self.num_heads, self.seq_length, self.seq_kv_length,
                                 self.head_dim, self.is_causal, self.in_dtype, machine=machine_of(self.arch),
                                 topk=topk)
        return [_hint(self.arch, c, [c["block_M"], c["block_N"]], [c["threads"]], rstep=[c["block_N"]],
                      stages=c["num_stages"]) for c in cfgs]

    def get_hardware_aware_configs(self, arch=None, topk=10):
        if arch is not None:
            self.with_arch(arch)
        return self.recommend_hints(topk)
