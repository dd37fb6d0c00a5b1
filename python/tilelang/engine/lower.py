"""tilelang.lower: compile a @T.prim_func and return its artifact (sources, parameters).

TileLang's lower() runs its pass pipeline and returns a CompiledArtifact without loading the
kernel. Here it compiles through tilelang.compile (so the artifact is also cached) and returns the
same facts. The target comes from the `target` argument, else from an enclosing
`with tvm.target.Target(...)` scope, else "auto"; pass configs from an enclosing
`with tvm.transform.PassContext(config=...)`.
"""
from dataclasses import dataclass, field
from typing import Any, List

__all__ = ["lower", "CompiledArtifact"]


@dataclass
class CompiledArtifact:
    kernel_source: str
    host_source: str
    params: List[Any]
    kernel: Any = None
    device_mod: Any = None
    host_mod: Any = None
    rt_mod: Any = None
    extra: dict = field(default_factory=dict)


def lower(func_or_mod, target=None, target_host=None, runtime_only=False, enable_host_codegen=False,
          enable_device_compile=False, **kwargs):
    from ..jit import compile as _compile
    from ..tvm.target import Target
    from ..tvm.transform import PassContext
    if target is not None and not isinstance(target, Target):
        target = Target(target)  # TileLang's spellings ("c", "llvm", ...); None: compile reads the scope
    ctx = PassContext.current()
    configs = dict(ctx.config) if ctx is not None and ctx.config else None
    out_idx = kwargs.get("out_idx")
    kernel = _compile(func_or_mod, out_idx=out_idx, target=target, pass_configs=configs)
    return CompiledArtifact(kernel.get_kernel_source(), kernel.get_host_source(), kernel.params, kernel=kernel)
