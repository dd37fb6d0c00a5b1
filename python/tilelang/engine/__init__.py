"""tilelang.engine: lower() and the compile-callback registry (TileLang's names)."""
from .callback import (  # noqa: F401
    register_c_postproc,
    register_cuda_postproc,
    register_cuda_postproc_callback,
    register_hip_postproc,
)
from .lower import CompiledArtifact, lower  # noqa: F401
from .param import KernelParam  # noqa: F401
