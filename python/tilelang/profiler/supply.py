"""Random kernel inputs: tilelang.TensorSupplyType."""
from enum import Enum

import numpy as np

from ..jit.adapter import numpy_dtype


class TensorSupplyType(Enum):
    """How the profiler fills input tensors (TileLang's semantics)."""
    Integer = 1  # small integers: [-2, 3), unsigned [0, 3), float8 [-128, 128)
    Uniform = 2  # uniform in [-1, 1)
    Normal = 3   # normal, mean -1, std 1 (TileLang's normal_(-1.0, 1.0))
    Randn = 4    # standard normal
    Zero = 5
    One = 6
    Auto = 7     # floats: Normal; unsigned: [0, 3); bool: random; float8: Integer; other ints: [-2, 3)


_rng = np.random.default_rng(20240601)


def _is_float(dtype):
    return dtype.startswith("float") or dtype == "bfloat16"


def make_tensor(shape, dtype, supply=TensorSupplyType.Auto, rng=None):
    """A numpy array of `shape` and tilelang dtype name `dtype` filled per `supply`."""
    rng = rng or _rng
    shape = tuple(int(s) for s in shape)
    target = numpy_dtype(dtype)
    unsigned = dtype.startswith("uint")
    fp8 = dtype.startswith("float8")
    if supply == TensorSupplyType.Auto:
        if dtype == "bool":
            return rng.integers(0, 2, size=shape).astype(bool)
        if unsigned:
            supply = TensorSupplyType.Integer
        elif fp8:
            supply = TensorSupplyType.Integer
        elif _is_float(dtype):
            supply = TensorSupplyType.Normal
        else:
            supply = TensorSupplyType.Integer
    if dtype == "int8" and supply in (TensorSupplyType.Uniform, TensorSupplyType.Normal):
        return np.ones(shape, dtype=target)
    if supply == TensorSupplyType.Integer:
        if unsigned or dtype == "bool":
            values = rng.integers(0, 3 if dtype != "bool" else 2, size=shape)
        elif fp8:
            values = rng.integers(-128, 128, size=shape)
        else:
            values = rng.integers(-2, 3, size=shape)
    elif supply == TensorSupplyType.Uniform:
        values = rng.uniform(-1.0, 1.0, size=shape)
    elif supply == TensorSupplyType.Normal:
        values = rng.normal(-1.0, 1.0, size=shape)
    elif supply == TensorSupplyType.Randn:
        values = rng.standard_normal(size=shape)
    elif supply == TensorSupplyType.Zero:
        values = np.zeros(shape)
    elif supply == TensorSupplyType.One:
        values = np.ones(shape)
    else:
        raise ValueError(f"unknown tensor supply type {supply!r}")
    return np.asarray(values).astype(target)


_TORCH_GENERATORS = {}  # device -> torch.Generator (seeded as _rng, one stream per device)


def _torch_generator(torch, device):
    key = str(device)
    g = _TORCH_GENERATORS.get(key)
    if g is None:
        g = torch.Generator(device=device)
        g.manual_seed(20240601)
        _TORCH_GENERATORS[key] = g
    return g


def make_torch_tensor(shape, dtype, supply=TensorSupplyType.Auto, device="cuda"):
    """make_tensor's values (the same distributions per `supply`), drawn by torch on `device` with a
    seeded generator: on a GPU, filling the inputs of a large kernel takes milliseconds instead of
    the seconds numpy takes on the host (flash attention B8 H16 S4096 D128: three 64 Mi-element
    inputs, ~5 s in numpy) -- a cost every autotuning run paid before timing its first config.
    Raises ValueError for a dtype torch has no type for (the caller then uses make_tensor)."""
    import torch
    from ..jit.adapter import torch_dtype
    shape = tuple(int(s) for s in shape)
    target = torch_dtype(dtype)
    gen = _torch_generator(torch, device)
    unsigned = dtype.startswith("uint")
    fp8 = dtype.startswith("float8")
    if supply == TensorSupplyType.Auto:
        if dtype == "bool":
            return torch.randint(0, 2, shape, generator=gen, device=device).to(torch.bool)
        supply = TensorSupplyType.Normal if _is_float(dtype) and not fp8 else TensorSupplyType.Integer
    if dtype == "int8" and supply in (TensorSupplyType.Uniform, TensorSupplyType.Normal):
        return torch.ones(shape, dtype=target, device=device)
    work = torch.float64 if dtype == "float64" else torch.float32
    if supply == TensorSupplyType.Integer:
        lo, hi = (0, 3 if dtype != "bool" else 2) if (unsigned or dtype == "bool") else (-128, 128) if fp8 else (-2, 3)
        values = torch.randint(lo, hi, shape, generator=gen, device=device, dtype=torch.int64)
        if fp8:
            values = values.to(work)
    elif supply == TensorSupplyType.Uniform:
        values = torch.empty(shape, dtype=work, device=device).uniform_(-1.0, 1.0, generator=gen)
    elif supply == TensorSupplyType.Normal:
        values = torch.empty(shape, dtype=work, device=device).normal_(-1.0, 1.0, generator=gen)
    elif supply == TensorSupplyType.Randn:
        values = torch.randn(shape, generator=gen, device=device, dtype=work)
    elif supply == TensorSupplyType.Zero:
        return torch.zeros(shape, dtype=target, device=device)
    elif supply == TensorSupplyType.One:
        return torch.ones(shape, dtype=target, device=device)
    else:
        raise ValueError(f"unknown tensor supply type {supply!r}")
    if dtype == "bool":
        return values.to(torch.bool)
    return values.to(target)
