"""tests/python/tilesight: a private kernel cache (tests/python/private_cache.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from private_cache import _private_cache, rng  # noqa: E402,F401  (fixtures)
