"""tilelang.cuda: TileLang's CUDA dialect namespace. `tilelang.cuda.language` is the kernel language
(tilelang.language already holds the CUDA extensions tilelang-cpp provides)."""
from . import intrinsics, language  # noqa: F401
