"""Device helpers (TileLang's tilelang.utils.device)."""
import os

__all__ = ["get_current_device", "get_available_cpu_count", "IS_CUDA"]


def _torch_cuda():
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


IS_CUDA = _torch_cuda()
IS_MPS = False


def get_current_device():
    """torch's current CUDA device index when CUDA is available, else None (the cpu)."""
    if _torch_cuda():
        import torch
        return torch.cuda.current_device()
    return None


def get_available_cpu_count():
    """CPU cores available to this process (its affinity mask), at least 1."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:
        n = os.cpu_count()
    return max(1, n or 1)
