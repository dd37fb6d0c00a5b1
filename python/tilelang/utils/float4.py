"""float4_e2m1fn tensors as kernel arguments (docs/FLOAT4.md).

A float4_e2m1fn kernel parameter of shape (..., N) takes its elements packed two a byte, as TileLang
does: element 2k in the low nibble of byte k of each row, so the tensor passed is (..., N // 2) bytes
(torch.float4_e2m1fn_x2, int8 or uint8). numpy has no packed type (ml_dtypes.float4_e2m1fn arrays hold
one element a byte); these helpers convert between the two.
"""
import numpy as np

__all__ = ["pack_float4", "unpack_float4"]


def pack_float4(values):
    """Packs values (floats, rounded as ml_dtypes rounds, or an ml_dtypes.float4_e2m1fn array) into
    uint8 bytes of two elements each; the last dimension must be even and is halved."""
    import ml_dtypes  # noqa: PLC0415
    a = np.asarray(values)
    if a.dtype != np.dtype(ml_dtypes.float4_e2m1fn):
        a = a.astype(np.float32).astype(ml_dtypes.float4_e2m1fn)
    if a.ndim == 0 or a.shape[-1] % 2 != 0:
        raise ValueError(f"pack_float4: the last dimension must be even (two elements a byte), got shape {a.shape}")
    codes = a.view(np.uint8) & np.uint8(0xF)
    return np.ascontiguousarray(codes[..., 0::2] | (codes[..., 1::2] << np.uint8(4)))


def unpack_float4(packed):
    """The ml_dtypes.float4_e2m1fn array (last dimension doubled) of packed bytes (a uint8/int8 numpy
    array, or a torch tensor of float4_e2m1fn_x2 / int8 / uint8, copied to the host)."""
    import ml_dtypes  # noqa: PLC0415
    if type(packed).__module__.startswith("torch"):
        import torch  # noqa: PLC0415
        packed = packed.detach().cpu().contiguous().view(torch.uint8).numpy()
    b = np.asarray(packed)
    if b.dtype not in (np.uint8, np.int8):
        raise TypeError(f"unpack_float4: expects packed bytes (uint8 or int8), got {b.dtype}")
    b = b.view(np.uint8)
    out = np.empty(b.shape[:-1] + (b.shape[-1] * 2,), dtype=np.uint8)
    out[..., 0::2] = b & np.uint8(0xF)
    out[..., 1::2] = b >> np.uint8(4)
    return out.view(ml_dtypes.float4_e2m1fn)
