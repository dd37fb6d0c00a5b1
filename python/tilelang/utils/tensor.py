"""Tensor helpers (TileLang's tilelang.utils.tensor): generated inputs and tolerant comparison."""
import numpy as np

from ..profiler.supply import TensorSupplyType, make_tensor

__all__ = ["TensorSupplyType", "get_tensor_supply", "torch_assert_close", "map_torch_type", "is_float8_dtype"]


def map_torch_type(intype):
    """The torch dtype of a tilelang dtype name (or T.float16-style object)."""
    from ..jit.adapter import torch_dtype
    from ..language.dtypes import to_dtype
    return torch_dtype(str(to_dtype(intype)))


def is_float8_dtype(dtype):
    return "float8" in str(dtype)


def get_tensor_supply(supply_type=TensorSupplyType.Integer):
    """A function KernelParam -> torch tensor on the current device (cuda when there is one,
    else the cpu), filled per `supply_type`."""
    def get_tensor(param):
        import torch
        from .device import get_current_device
        if not param.shape:
            raise ValueError("TensorType must have a shape; a scalar parameter cannot be generated")
        if any(not isinstance(d, int) for d in param.shape):
            raise ValueError(f"TensorType must have a static shape, got {list(param.shape)} (dynamic dimensions)")
        if str(param.dtype) == "float4_e2m1fn":  # bytes of two elements each (docs/FLOAT4.md)
            array = make_tensor(list(param.shape[:-1]) + [param.shape[-1] // 2], "uint8", supply_type)
            t = torch.from_numpy(np.ascontiguousarray(array))
            if hasattr(torch, "float4_e2m1fn_x2"):
                t = t.view(torch.float4_e2m1fn_x2)
            device = get_current_device()
            return t if device is None else t.to(device)
        array = make_tensor(param.shape, str(param.dtype), supply_type)
        dtype = map_torch_type(param.dtype)
        if array.dtype.kind == "V":
            t = torch.from_numpy(array.astype(np.float32)).to(dtype)
        else:
            t = torch.from_numpy(np.ascontiguousarray(array))
        device = get_current_device()
        return t if device is None else t.to(device)
    return get_tensor


def torch_assert_close(tensor_a, tensor_b, rtol=1e-2, atol=1e-3, max_mismatched_ratio=0.001, verbose=False,
                       equal_nan=True, check_device=True, check_dtype=True, check_layout=True, check_stride=False,
                       base_name="LHS", ref_name="RHS"):
    """Asserts that at most `max_mismatched_ratio` of the elements of two torch tensors differ by
    more than atol + rtol * |b|. Raises AssertionError with the count, the first mismatch and the
    largest differences."""
    import torch
    if check_dtype and tensor_a.dtype != tensor_b.dtype:
        raise AssertionError(f"The values for attribute 'dtype' do not match: {tensor_a.dtype} != {tensor_b.dtype}.")
    if check_device and tensor_a.device != tensor_b.device:
        raise AssertionError(f"The values for attribute 'device' do not match: {tensor_a.device} != "
                             f"{tensor_b.device}.")
    if tensor_a.shape != tensor_b.shape:
        raise AssertionError(f"The values for attribute 'shape' do not match: {tensor_a.shape} != {tensor_b.shape}.")
    if check_stride and tensor_a.stride() != tensor_b.stride():
        raise AssertionError(f"The values for attribute 'stride()' do not match: {tensor_a.stride()} != "
                             f"{tensor_b.stride()}.")
    a = tensor_a.detach().to(torch.float64) if tensor_a.dtype != torch.bool else tensor_a.detach()
    b = tensor_b.detach().to(device=a.device, dtype=a.dtype)
    mismatched = ~torch.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    n_bad = int(mismatched.sum().item())
    total = a.numel()
    allowed = int(total * max_mismatched_ratio)
    if verbose:
        print(f"Number of mismatched elements: {n_bad} / {total} (allowed: {allowed})")
    if n_bad > allowed:
        flat = int(torch.argmax(mismatched.reshape(-1).int()).item())
        idx = [int(i) for i in np.unravel_index(flat, tuple(a.shape))] if a.dim() else []
        av, bv = float(a.reshape(-1)[flat]), float(b.reshape(-1)[flat])
        diff = (a - b).abs()
        raise AssertionError(
            f"Too many mismatched elements: {n_bad} > {allowed} ({max_mismatched_ratio * 100:.2f}% allowed, but get "
            f"{n_bad / max(total, 1) * 100:.2f}%).\nFirst mismatch at index {idx}: lhs={av:.6f}, rhs={bv:.6f}"
            f"\nGreatest absolute difference: {float(diff.max())}, Greatest relative difference: "
            f"{float((diff / (b.abs() + 1e-12)).max())}\n{base_name}: {tensor_a}\n{ref_name}: {tensor_b}")
    return True
