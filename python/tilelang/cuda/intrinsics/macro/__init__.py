"""Stand-ins for TileLang's macro generators (see tilelang.cuda.intrinsics)."""
from . import mma_macro_generator, wgmma_macro_generator  # noqa: F401
