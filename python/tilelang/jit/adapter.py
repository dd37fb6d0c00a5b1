"""Glue between the C++ runtime and Python tensor frameworks.

Kernel calls run in C++ (src/bindings/runtime_bind.cc). Outputs of calls made with numpy arrays are
allocated there with numpy; for other frameworks the runtime calls `allocate` below, so a torch
caller gets torch tensors on its inputs' device.
"""
import numpy as np

from .. import _core

_NUMPY_NAMES = {
    "bool": "bool", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "float16": "float16", "float32": "float32", "float64": "float64",
}
_ML_DTYPES = {"bfloat16": "bfloat16", "float8_e4m3": "float8_e4m3fn", "float8_e5m2": "float8_e5m2"}
_TORCH_NAMES = {
    "bool": "bool", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8",
    "uint16": "uint16", "uint32": "uint32", "uint64": "uint64", "float16": "float16", "bfloat16": "bfloat16",
    "float32": "float32", "float64": "float64", "float8_e4m3": "float8_e4m3fn", "float8_e5m2": "float8_e5m2",
}


def numpy_dtype(name):
    """The numpy dtype for a tilelang dtype name (ml_dtypes types for bfloat16 / float8)."""
    if name in _NUMPY_NAMES:
        return np.dtype(_NUMPY_NAMES[name])
    if name in _ML_DTYPES:
        import ml_dtypes
        return np.dtype(getattr(ml_dtypes, _ML_DTYPES[name]))
    raise ValueError(f"no numpy dtype for {name!r}")


def torch_dtype(name):
    import torch
    attr = _TORCH_NAMES.get(name)
    if attr is None or not hasattr(torch, attr):
        raise ValueError(f"this torch build has no dtype for {name!r}")
    return getattr(torch, attr)


def is_torch_tensor(x):
    return type(x).__module__.startswith("torch") and hasattr(x, "device")


def allocate(like, shape, dtype_name, zero):
    """Allocates an output/workspace in the framework of `like` (a caller's tensor)."""
    if is_torch_tensor(like):
        import torch
        fn = torch.zeros if zero else torch.empty
        return fn(tuple(shape), dtype=torch_dtype(dtype_name), device=like.device)
    # Frameworks without an allocator here get numpy arrays (host memory).
    fn = np.zeros if zero else np.empty
    return fn(tuple(shape), dtype=numpy_dtype(dtype_name))


def to_numpy(x):
    """A numpy view/copy of a kernel argument or result (torch tensors are copied to the host)."""
    if isinstance(x, np.ndarray):
        return x
    if is_torch_tensor(x):
        t = x.detach().cpu()
        if t.dtype.is_floating_point and t.element_size() < 4 and str(t.dtype) not in ("torch.float16",):
            t = t.float()  # bfloat16 / float8 have no numpy dtype
        return t.numpy()
    return np.asarray(x)


_core._set_tensor_allocator(allocate)


def current_stream(like, device):
    """The caller's current CUDA stream for cuda kernels (torch: torch.cuda.current_stream)."""
    if is_torch_tensor(like):
        import torch
        get_raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if get_raw is not None:
            return int(get_raw(device))
        return int(torch.cuda.current_stream(device).cuda_stream)
    return 0


_core._set_stream_getter(current_stream)
