"""TileLang's CUDA intrinsic helpers (tilelang.cuda.intrinsics).

`get_swizzle_layout` / `make_mma_swizzle_layout` (the XOR swizzle of 16-byte vectors that keeps
MMA operand loads free of shared-memory bank conflicts) are provided as T.Layout index maps. The
macro generators (`macro.*`) are internals of TileLang's TVM-based GEMM lowering: tilelang-cpp lowers
T.gemm in C++, so their classes exist only so that code importing them loads, and raise
NotImplementedError when used (docs/COMPATIBILITY.md).
"""
from . import macro  # noqa: F401

__all__ = ["get_swizzle_layout", "make_mma_swizzle_layout"]


def _bits(dtype):
    from ... import _core
    from ...language.dtypes import to_dtype
    return _core.dtype_info(str(to_dtype(dtype)))[1]


def get_swizzle_layout(row_idx, col_idx, row_size, dtype, swizzle_bytes=None):
    """(column tile, row, swizzled column) of element (row_idx, col_idx) of a row of `row_size`
    elements: within each group of `swizzle_bytes` (default min(128, row bytes)), the 16-byte vector
    index is XORed with the row index (mod 8), scaled to the number of vectors in the group."""
    bits = _bits(dtype)
    row_bytes = bits * int(row_size) // 8
    if row_bytes % 32:
        raise ValueError(f"get_swizzle_layout: a row of {row_size} {dtype} elements is {row_bytes} bytes; the "
                         "swizzle needs a multiple of 32 bytes")
    if swizzle_bytes is None:
        swizzle_bytes = min(128, row_bytes)
    per_vector = 128 // bits            # elements per 16-byte vector
    vectors = int(swizzle_bytes) // 16  # vectors per swizzle group
    vec = col_idx // per_vector
    within = col_idx % per_vector
    group = vec // vectors
    v = vec % vectors
    src = (row_idx % 8) // (8 // vectors)
    return group, row_idx, (v ^ src) * per_vector + within


def make_mma_swizzle_layout(shared_buf, is_smooth=False):
    """A T.Layout that swizzles the last two dimensions of `shared_buf` with get_swizzle_layout
    (the identity when `is_smooth` or when a row is not a multiple of 64 bytes)."""
    from ...layout import Layout
    shape = list(shared_buf.shape)
    last = int(shape[-1])
    bits = _bits(shared_buf.dtype)
    if is_smooth or (last * bits) % 512:
        return Layout(shape, lambda *idx: list(idx))

    group_elems = min(128, last * bits // 8) * 8 // bits  # elements per swizzle group

    def swizzle(*idx):
        # The same permutation as TileLang's 3-D (group, row, column) form, kept 2-D: each row stays
        # contiguous and its swizzle groups follow one another.
        i, j = idx[-2:]
        group, row, col = get_swizzle_layout(i, j, last, shared_buf.dtype)
        return [*idx[:-2], row, group * group_elems + col]

    return Layout(shape, swizzle)
