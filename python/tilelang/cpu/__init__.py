"""tilelang.cpu: TileLang's cpu dialect namespace. `tilelang.cpu.language` is the kernel language
(the same module as tilelang.language)."""
from . import language  # noqa: F401
