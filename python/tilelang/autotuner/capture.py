"""`with tilelang.autotuner.set_autotune_inputs(a, b):` — tune on these inputs instead of generated ones."""
import threading

__all__ = ["set_autotune_inputs", "get_autotune_inputs", "AutotuneInputsCapture"]

_local = threading.local()


def _stack():
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


class AutotuneInputsCapture:
    __slots__ = ("tensors",)

    def __init__(self, tensors):
        self.tensors = tensors

    def __enter__(self):
        _stack().append(self)

    def __exit__(self, exc_type, exc, tb):
        _stack().pop()


def set_autotune_inputs(*args):
    """The kernel inputs autotuning runs every configuration on (instead of generated tensors);
    `set_autotune_inputs([a, b])` or `set_autotune_inputs(a, b)`."""
    tensors = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
    return AutotuneInputsCapture(tensors)


def get_autotune_inputs():
    """The innermost captured inputs, or None."""
    s = _stack()
    return s[-1].tensors if s else None
