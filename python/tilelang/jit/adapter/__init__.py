"""dtype and tensor helpers for the profiler (tensor supply, result checks).

Kernel calls run entirely in C++ (src/bindings/runtime_bind.cc, src/bindings/torch_tensor.cc): outputs
are torch tensors on the inputs' device for torch callers and numpy arrays otherwise, and cuda kernels
launch on torch's current stream.
"""
import numpy as np

_NUMPY_NAMES = {
    "bool": "bool", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "float16": "float16", "float32": "float32", "float64": "float64",
}
_ML_DTYPES = {"bfloat16": "bfloat16", "float8_e4m3": "float8_e4m3fn", "float8_e5m2": "float8_e5m2",
              "float8_e8m0fnu": "float8_e8m0fnu", "float4_e2m1fn": "float4_e2m1fn"}
_TORCH_NAMES = {
    "bool": "bool", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8",
    "uint16": "uint16", "uint32": "uint32", "uint64": "uint64", "float16": "float16", "bfloat16": "bfloat16",
    "float32": "float32", "float64": "float64", "float8_e4m3": "float8_e4m3fn", "float8_e5m2": "float8_e5m2",
    "float8_e8m0fnu": "float8_e8m0fnu", "float4_e2m1fn": "float4_e2m1fn_x2",  # two elements a byte
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
