"""T.im2col: the patch matrix tile of a 2-d convolution (TileLang's T.im2col / T.c2d_im2col).

`T.im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad)` fills the tile `col`
(block_M x block_K) with rows `nhw_step * block_M + i` of the im2col matrix of the NHWC image
`img` and its columns `c_step * block_K + j`:

    pixel p = nhw_step * block_M + i  ->  n = p // (OH * OW), oh = p // OW % OH, ow = p % OW
    column k = c_step * block_K + j   ->  c = k % C, kw = k // C % kernel, kh = k // (C * kernel)
    col[i, j] = img[n, oh * stride + kh * dilation - pad, ow * stride + kw * dilation - pad, c]

with 0 where the image position is in the padding or p / k is past the end (the out-of-bounds
fill of TileLang's TMA im2col load). The column order (kh, kw, c) matches a (KH, KW, C, F) weight
tensor viewed as (KH * KW * C, F). TileLang lowers it to a Hopper TMA im2col copy; here it is a
T.Parallel gather over the tile (every target), which TileLang's divisibility condition on C does
not constrain.
"""
from .. import _core
from .._core import Buffer, BufferRegion
from .context import current

__all__ = ["im2col", "c2d_im2col"]


def _buffer(x, what):
    if x.__class__ is Buffer:
        return x
    if x.__class__ is BufferRegion:
        return x.buffer
    raise TypeError(f"T.im2col: {what} must be a buffer, got {x!r}")


def _const(v, what):
    e = _core.to_expr(v)
    if e.kind != "int":
        raise ValueError(f"T.im2col: {what} must be a compile-time integer, got {v!r}")
    return int(e.value)


def im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad, eviction_policy=None, annotations=None):
    """col[i, j] = the im2col matrix of the NHWC image `img` at row nhw_step * block_M + i and
    column c_step * block_K + j (see the module doc)."""
    from .loops import Parallel  # noqa: PLC0415
    from .math import if_then_else  # noqa: PLC0415
    ctx = current("T.im2col")
    ctx.require_kernel("T.im2col")
    img = _buffer(img, "the image")
    col = _buffer(col, "the column tile")
    if len(img.shape) != 4:
        raise ValueError(f"T.im2col: the image '{img.name}' must be NHWC (4 dimensions), got shape {img.shape}")
    if len(col.shape) != 2:
        raise ValueError(f"T.im2col: the column tile '{col.name}' must have 2 dimensions, got {col.shape}")
    K, S, D, P = (_const(v, w) for v, w in ((kernel, "kernel"), (stride, "stride"), (dilation, "dilation"),
                                             (pad, "pad")))
    if K < 1 or S < 1 or D < 1 or P < 0:
        raise ValueError(f"T.im2col: kernel, stride and dilation must be >= 1 and pad >= 0, got "
                         f"kernel={K}, stride={S}, dilation={D}, pad={P}")
    N, H, W, C = img.shape
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    block_m, block_k = col.shape
    b = ctx.b
    spec = Parallel(block_m, block_k)
    gen = spec.run(ctx, ("im2col_i", "im2col_j"))
    i, j = next(gen)
    p = nhw_step * block_m + i
    k = c_step * block_k + j
    n = p // (OH * OW)
    oh = p // OW % OH
    ow = p % OW
    c = k % C
    kw = k // C % K
    kh = k // (C * K)
    h = oh * S + kh * D - P
    w = ow * S + kw * D - P
    inside = _core.make_binary("and", p < N * OH * OW, k < K * K * C)
    inside = _core.make_binary("and", inside, _core.make_binary("and", h >= 0, h < H))
    inside = _core.make_binary("and", inside, _core.make_binary("and", w >= 0, w < W))
    zero = _core.make_cast(col.dtype, 0)
    # Clamped indices keep the (unselected) load in bounds.
    hc = _core.make_select(inside, h, 0)
    wc = _core.make_select(inside, w, 0)
    nc = _core.make_select(inside, n, 0)
    b.emit_store(col, [i, j], if_then_else(inside, _core.make_cast(col.dtype, img[nc, hc, wc, c]), zero))
    for _ in gen:
        pass


c2d_im2col = im2col
