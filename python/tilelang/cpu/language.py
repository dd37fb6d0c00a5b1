"""`from tilelang.cpu import language as T`: the same module as tilelang.language."""
import sys

from .. import language as _language

sys.modules[__name__] = _language
