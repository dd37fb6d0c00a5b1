"""Argument and result records of the autotuner (TileLang's names)."""
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from ..profiler import TensorSupplyType

__all__ = ["CompileArgs", "ProfileArgs", "AutotuneResult", "ConfigResult"]


@dataclass(frozen=True)
class CompileArgs:
    """How each configuration is compiled (tilelang.compile's options)."""
    out_idx: Any = None
    execution_backend: str = "auto"
    target: Any = "auto"
    target_host: Any = None
    verbose: bool = False
    pass_configs: Optional[Dict[str, Any]] = None
    compile_flags: Any = None
    workspace_idx: Any = None

    def compile_program(self, program, pass_configs=None):
        from ..jit import compile as _compile
        configs = dict(self.pass_configs or {})
        configs.update(pass_configs or {})
        out_idx = None if getattr(program, "out_idx", None) is not None else self.out_idx
        return _compile(program, out_idx=out_idx, target=self.target, pass_configs=configs or None,
                        verbose=self.verbose, execution_backend=self.execution_backend,
                        compile_flags=self.compile_flags, workspace_idx=self.workspace_idx)

    def __hash__(self):
        return hash(repr(self))


@dataclass(frozen=True)
class ProfileArgs:
    """How each configuration is checked and timed. warmup / rep are time budgets in ms (as in
    tilelang.profiler.do_bench); `backend` is accepted for compatibility (one timing method)."""
    warmup: float = 25
    rep: float = 100
    timeout: float = 30
    backend: str = "event"
    supply_type: TensorSupplyType = TensorSupplyType.Auto
    ref_prog: Optional[Callable] = None
    supply_prog: Optional[Callable] = None
    rtol: float = 1e-2
    atol: float = 1e-2
    max_mismatched_ratio: float = 0.01
    skip_check: bool = False
    manual_check_prog: Optional[Callable] = None
    cache_input_tensors: bool = False

    def __hash__(self):
        return hash(repr(self))


@dataclass
class ConfigResult:
    """What happened to one configuration."""
    config: Dict[str, Any]
    latency: Optional[float] = None  # ms; None when the config was skipped
    status: str = "ok"               # "ok", "compile error", "check failed", "timeout", "run error",
                                     # with top_k: "does not fit" (dropped before compiling), "not measured"
    message: str = ""
    estimate: Any = None             # with top_k: the tilelang.tilesight Estimate that ranked it


@dataclass
class AutotuneResult:
    """The best configuration and its kernel; `results` has every configuration's outcome."""
    latency: Optional[float] = None
    config: Optional[Dict[str, Any]] = None
    ref_latency: Optional[float] = None
    libcode: Optional[str] = None
    func: Any = None
    kernel: Any = None
    results: List[ConfigResult] = field(default_factory=list)

    def skipped(self):
        return [r for r in self.results if r.status != "ok"]
