"""Tile operators: T.copy, T.gemm, T.fill, T.clear, T.reduce_*, T.cumsum, T.atomic_add, T.gemm_v0,
T.mma. Each normalizes the user's spelling into the one form of docs/TILE_OPS.md and emits a
TileOpNode at the current statement's span.

Operands are Buffers (whole), regions (`A[a:b, :]`) or element origins (`A[i, j]`, whose extents
come from the other operand or from a Developer-form size list).
"""
from enum import IntEnum

from .. import _core
from .._core import Buffer, BufferLoad, BufferRegion
from .context import as_int, current

__all__ = ["copy", "gemm", "fill", "clear", "reduce", "reduce_sum", "reduce_max", "reduce_min", "reduce_abssum",
           "reduce_absmax", "cumsum", "atomic_add", "gemm_v0", "mma", "GemmWarpPolicy", "emit_tile_op",
           "region_of", "is_tile_arg", "operand", "complete_origin", "bool_expr"]


class GemmWarpPolicy(IntEnum):
    """How T.gemm splits the block's warps over the C tile."""

    Square = 0
    FullRow = 1
    FullCol = 2

    def __str__(self):
        return self.name


class _Origin:
    """An element `A[i, j]` used as a tile operand: the tile's corner; extents come later."""

    __slots__ = ("buffer", "indices")

    def __init__(self, buffer, indices):
        self.buffer = buffer
        self.indices = indices


def _is_one(e):
    return e.__class__ is int and e == 1 or (e.__class__ is not int and e.kind == "int" and e.value == 1)


def is_tile_arg(x):
    """True for values that are tiles (not scalars): buffers other than alloc_var, and regions."""
    cls = x.__class__
    return cls is BufferRegion or (cls is Buffer and x.scope != "local.var")


def operand(x, what):
    """Buffer -> full region; region -> itself; BufferLoad -> _Origin."""
    cls = x.__class__
    if cls is BufferRegion:
        return x
    if cls is Buffer:
        return BufferRegion.full(x)
    if cls is BufferLoad:
        return _Origin(x.buffer, x.indices)
    raise TypeError(f"{what} must be a buffer, a region (A[a:b, ...]) or a tile origin (A[i, j]), "
                    f"got {type(x).__name__} {x!r}")


def complete_origin(origin, extents, what):
    """The region of `origin`'s buffer starting at its indices with `extents` (taken from the
    other operand): unit extents are dropped or added on the left to match the rank."""
    buf = origin.buffer
    nd = buf.ndim
    ext = list(extents)
    if len(ext) > nd:
        while len(ext) > nd and _is_one(ext[0]):
            ext.pop(0)
        if len(ext) > nd:
            ext = [e for e in ext if not _is_one(e)]
        if len(ext) > nd:
            raise ValueError(f"{what}: a {len(ext)}-dimensional tile cannot start at an element of the "
                             f"{nd}-dimensional buffer '{buf.name}'; give a region with slices instead")
    ext = [1] * (nd - len(ext)) + ext
    return BufferRegion(buf, list(zip(origin.indices, ext)))


def _sized(x, sizes, what):
    """Developer form: a whole buffer or an origin cut to `sizes` (trailing dimensions)."""
    cls = x.__class__
    if cls is BufferRegion:
        return x
    if cls is Buffer:
        return complete_origin(_Origin(x, [0] * x.ndim), sizes, what)
    if cls is BufferLoad:
        return complete_origin(_Origin(x.buffer, x.indices), sizes, what)
    raise TypeError(f"{what} must be a buffer, a region or a tile origin, got {type(x).__name__}")


def region_of(x, what):
    r = operand(x, what)
    if r.__class__ is _Origin:
        raise TypeError(f"{what}: '{x!r}' is a single element; pass the buffer or a region (A[a:b, c:d])")
    return r


def _trailing(origin, other):
    """TileLang-Ascend's copy of a tile to or from an element of a lower-rank buffer
    (`T.copy(x[k], x_L1)` with x 1-D and x_L1 [16, n]): the origin takes the other side's trailing
    extents and the copy covers only that part of the other tile (its leading dimensions cut to
    one row: x_L1[0:1, 0:n]). None when the ordinary matching applies."""
    nd = origin.buffer.ndim
    ext = list(other.extents)
    if sum(1 for e in ext if not _is_one(e)) <= nd or len(ext) <= nd:
        return None
    cut = BufferRegion(other.buffer, [(m, e if d >= len(ext) - nd else 1)
                                      for d, (m, e) in enumerate(zip(other.mins, ext))])
    return BufferRegion(origin.buffer, list(zip(origin.indices, ext[len(ext) - nd:]))), cut


def _const(e):
    if e.__class__ is int:
        return e
    return e.value if getattr(e, "kind", None) == "int" else None


def _padded_load(src, dst):
    """TileLang-Ascend's GM -> on-chip copy of n elements into a longer vector tile
    (`T.copy(gamma[g, 0:cpg], gamma_ub, pad_value=0.0)` with gamma_ub [cpg_padded, 1]): the n
    elements fill the start of the tile and the rest takes the pad value. Returns the destination's
    two parts (copied, padded), or None when the shapes are not of that form."""
    if src.buffer.scope != "global" or dst.buffer.scope == "global":
        return None
    se = [e for e in src.extents if not _is_one(e)]
    dims = [k for k, e in enumerate(dst.extents) if not _is_one(e)]
    if len(se) != 1 or len(dims) != 1:
        return None
    n, j = _const(se[0]), dims[0]
    m = _const(dst.extents[j])
    if n is None or m is None or m <= n:
        return None
    mins, ext = list(dst.mins), list(dst.extents)
    head = BufferRegion(dst.buffer, [(mn, n if k == j else e) for k, (mn, e) in enumerate(zip(mins, ext))])
    tail = BufferRegion(dst.buffer, [(mn + n if k == j else mn, m - n if k == j else e)
                                     for k, (mn, e) in enumerate(zip(mins, ext))])
    return head, tail


def _pair(a, b, what_a, what_b, trailing=False):
    """Two operands matched element by element: an origin takes the other side's extents.
    `trailing` (T.copy): an origin of lower rank than the other tile takes its trailing extents."""
    ra, rb = operand(a, what_a), operand(b, what_b)
    oa, ob = ra.__class__ is _Origin, rb.__class__ is _Origin
    if oa and ob:
        ra = BufferRegion(ra.buffer, [(i, 1) for i in ra.indices])
        rb = BufferRegion(rb.buffer, [(i, 1) for i in rb.indices])
    elif oa:
        t = _trailing(ra, rb) if trailing else None
        if t:
            return t
        ra = complete_origin(ra, rb.extents, what_a)
    elif ob:
        t = _trailing(rb, ra) if trailing else None
        if t:
            return t[1], t[0]
        rb = complete_origin(rb, ra.extents, what_b)
    return ra, rb


def bool_expr(v, what):
    """A run-time or constant condition as a bool PrimExpr."""
    cls = v.__class__
    if cls is bool:
        return _core.make_bool(v)
    e = _core.to_expr(v)
    if e.dtype != "bool":
        e = _core.make_binary("ne", e, 0)
    return e


def emit_tile_op(op, args, attrs=None, what=None):
    ctx = current(what or f"T.{op}")
    ctx.require_kernel(what or f"T.{op}")
    ctx.b.emit_tile_op(op, args, attrs)


def _size_list(x):
    return isinstance(x, (list, tuple)) and not isinstance(x, str)


# ---- copy / gemm ---------------------------------------------------------------------------------

_NO_ARG = object()


def _scope_level(buffer):
    scope = buffer.scope  # "global", "shared", "fragment", "local" (TileLang's "local.fragment" is "fragment")
    return 2 if scope in ("fragment", "local", "local.fragment") else 1 if scope.startswith("shared") else 0


def _copy_loop_domain(s, d):
    """TileLang's rule for a copy between two explicit regions of different constant shapes with
    the same number of non-unit extents: the copy runs over the region in the lower-level memory
    (fragment < shared < global; the source when both are alike), the other region keeping its
    start (`T.copy(A[:, :2], B[:, :3])` copies two columns). Where that region is smaller than the
    source in some dimension the regions stay as written and the op's shape check refuses them,
    as TileLang refuses them."""
    def const(e):
        return e if e.__class__ is int else (e.value if e.kind == "int" else None)
    cs, cd = [const(e) for e in s.extents], [const(e) for e in d.extents]
    if None in cs or None in cd:
        return s, d
    ns = [i for i, e in enumerate(cs) if e != 1]
    nd = [i for i, e in enumerate(cd) if e != 1]
    if len(ns) != len(nd) or all(cs[i] == cd[j] for i, j in zip(ns, nd)):
        return s, d
    if _scope_level(s.buffer) >= _scope_level(d.buffer):  # over the source: the destination follows
        ext = list(cd)
        for i, j in zip(ns, nd):
            ext[j] = cs[i]
        return s, BufferRegion(d.buffer, list(zip(d.mins, ext)))
    if any(cd[j] < cs[i] for i, j in zip(ns, nd)):
        return s, d
    ext = list(cs)
    for i, j in zip(ns, nd):
        ext[i] = cd[j]
    return BufferRegion(s.buffer, list(zip(s.mins, ext))), d


def copy(*args, size=None, coalesced_width=None, disable_tma=False, eviction_policy=None,
         enable_relu=False, transpose=False, pad_value=None, annotations=None, loop_layout=None,
         src=_NO_ARG, dst=_NO_ARG):
    """Tile copy between any two memories: `T.copy(A[by*bm, k*bk], A_shared)`.

    `size` is the Developer form's explicit extents (`T.copy(src, dst, [m, n])`).
    With both operands given positionally, `dst=peer` copies into device `peer`'s copy of the
    destination and `src=peer` reads device `peer`'s copy of the source (T.Scale("device"),
    docs/DISTRIBUTED.md); otherwise `src=` / `dst=` name the operands.
    """
    if len(args) > 3:
        raise TypeError(f"T.copy takes at most 3 positional arguments (src, dst, size), got {len(args)}")
    args = list(args)
    if len(args) == 3:
        if size is not None:
            raise TypeError("T.copy got the size both positionally and as size=")
        size = args.pop()
    dst_pe = src_pe = None
    if len(args) == 2:
        src_op, dst_op = args
        dst_pe = None if dst is _NO_ARG else dst
        src_pe = None if src is _NO_ARG else src
    elif len(args) == 1:
        if src is not _NO_ARG:
            raise TypeError("T.copy got the source both positionally and as src=")
        if dst is _NO_ARG:
            raise TypeError("T.copy(src, dst): the destination is missing")
        src_op, dst_op = args[0], dst
    else:
        if src is _NO_ARG or dst is _NO_ARG:
            raise TypeError("T.copy(src, dst): both operands are needed")
        src_op, dst_op = src, dst
    src, dst = src_op, dst_op
    if dst_pe is not None or src_pe is not None:
        from .distributed import remote_copy
        if size is not None:
            raise TypeError("T.copy with a peer (dst=/src=) takes no size list")
        s, d = _pair(src, dst, "T.copy src", "T.copy dst")
        remote_copy(s, d, dst_pe=dst_pe, src_pe=src_pe)
        return
    if size is not None:
        if not _size_list(size):
            raise TypeError(f"T.copy: the third argument is the Developer-form size list [m, n], got {size!r}")
        s = _sized(src, list(size), "T.copy src")
        d = _sized(dst, list(size), "T.copy dst")
    else:
        # TileLang-Ascend's extents rule for an origin of lower rank (NPU kernels only; TileLang
        # itself refuses it, as the other targets do).
        ctx = current("T.copy")
        npu = bool(ctx.kernels) and ctx.kernels[-1].is_npu
        s, d = _pair(src, dst, "T.copy src", "T.copy dst", trailing=npu)
        if not npu and not transpose:  # (a transposing copy's tiles differ in shape by design)
            s, d = _copy_loop_domain(s, d)
        split = _padded_load(s, d) if npu else None
        if split:
            d, tail = split
            pad = 0 if pad_value is None else pad_value
            emit_tile_op("fill", [tail, _core.make_cast(tail.buffer.dtype, _core.to_expr(pad))], None, "T.copy")
    attrs = dict(annotations or {})
    if disable_tma:
        attrs["disable_tma"] = True
    if coalesced_width is not None:
        attrs["coalesced_width"] = int(coalesced_width)
    if eviction_policy is not None:
        attrs["eviction_policy"] = str(eviction_policy)
    if enable_relu:
        attrs["enable_relu"] = True
    if transpose:
        attrs["transpose"] = True
    if pad_value is None:
        from .builtins import safe_value_of  # noqa: PLC0415
        pad_value = safe_value_of(current("T.copy"), s.buffer)
    if pad_value is not None:
        attrs["pad_value"] = _core.to_expr(pad_value)
    emit_tile_op("copy", [s, d], attrs or None, "T.copy")


def async_copy(src, dst, *, coalesced_width=None, annotations=None, loop_layout=None):
    """Asynchronous global -> shared tile copy that the program waits for itself (TileLang's
    T.async_copy): on cuda cp.async groups then one commit (cp.async.commit_group), with no wait;
    write `T.ptx_wait_group(n)` before the data is used (a barrier before other threads read it
    is inserted as for any shared-memory write). On the cpu and Ascend targets it is a plain copy
    (complete when it returns; T.ptx_wait_group does nothing there). A T.Pipelined loop that
    contains one is the program's own pipeline and runs as a serial loop. One element to one
    element without annotations is a plain store, as in TileLang."""
    if (src.__class__ is _core.BufferLoad and dst.__class__ is _core.BufferLoad and not annotations
            and coalesced_width is None and loop_layout is None):
        ctx = current("T.async_copy")
        ctx.require_kernel("T.async_copy")
        ctx.b.emit_store(dst.buffer, dst.indices, _core.make_cast(dst.buffer.dtype, src))
        return
    attrs = dict(annotations or {})
    attrs.update({"async": True, "async_commit": True, "disable_tma": True})
    if coalesced_width is not None:
        attrs["coalesced_width"] = int(coalesced_width)
    s, d = _pair(src, dst, "T.async_copy src", "T.async_copy dst")
    emit_tile_op("copy", [s, d], attrs, "T.async_copy")


_POLICIES = {"Square": "Square", "FullRow": "FullRow", "FullCol": "FullCol"}


def _policy(p):
    if isinstance(p, IntEnum) and type(p).__name__ == "GemmWarpPolicy":
        return p.name
    if isinstance(p, str) and p in _POLICIES:
        return p
    if isinstance(p, int) and not isinstance(p, bool) and 0 <= p <= 2:
        return GemmWarpPolicy(p).name
    raise ValueError(f"T.gemm: policy must be a GemmWarpPolicy (Square, FullRow, FullCol), got {p!r}")


def gemm(A, B, C, transpose_A=False, transpose_B=False, policy=GemmWarpPolicy.Square,  # noqa: N803
         clear_accum=False, k_pack=1, wg_wait=0, mbar=None, initC=None, size=None,  # noqa: N803
         a_transpose=None, b_transpose=None):
    """C (+)= op(A) @ op(B). `clear_accum=True` (or `initC=True`, which may be a run-time
    expression) overwrites C. Developer form: `T.gemm(A, B, C, [m, k, n], initC=...)`;
    `a_transpose=` / `b_transpose=` are TileLang-Ascend npuir's names of transpose_A / transpose_B."""
    if a_transpose is not None:
        transpose_A = a_transpose
    if b_transpose is not None:
        transpose_B = b_transpose
    if _size_list(transpose_A):
        size, transpose_A = transpose_A, False
    if not isinstance(transpose_A, bool) or not isinstance(transpose_B, bool):
        raise TypeError("T.gemm: transpose_A and transpose_B must be Python bools")
    if size is not None:
        if len(size) != 3:
            raise ValueError(f"T.gemm: the size list is [m, k, n], got {list(size)!r}")
        m, k, n = size
        ra = _sized(A, [k, m] if transpose_A else [m, k], "T.gemm A")
        rb = _sized(B, [n, k] if transpose_B else [k, n], "T.gemm B")
        rc = _sized(C, [m, n], "T.gemm C")
    else:
        ra, rb, rc = region_of(A, "T.gemm A"), region_of(B, "T.gemm B"), region_of(C, "T.gemm C")
    k_pack = as_int(k_pack, "T.gemm: k_pack", 1)
    clear = bool_expr(clear_accum, "clear_accum")
    if initC is not None:
        init = bool_expr(initC, "initC")
        clear = init if (clear.kind == "int" and not clear.value) else _core.make_binary("or", clear, init)
    attrs = {"transpose_A": transpose_A, "transpose_B": transpose_B, "policy": _policy(policy),
             "clear_accum": clear, "k_pack": k_pack}
    emit_tile_op("gemm", [ra, rb, rc], attrs, "T.gemm")


def gemm_v0(A, B, C, transpose_A=False, transpose_B=False, init=False):  # noqa: N803
    """Ascend Expert: self-synchronising gemm macro on L1 operands into an L0C accumulator."""
    attrs = {"transpose_A": bool(transpose_A), "transpose_B": bool(transpose_B), "init": bool_expr(init, "init")}
    emit_tile_op("gemm_v0", [region_of(A, "T.gemm_v0 A"), region_of(B, "T.gemm_v0 B"),
                             region_of(C, "T.gemm_v0 C")], attrs, "T.gemm_v0")


def mma(A, B, C, init=False):  # noqa: N803
    """Ascend Expert: one cube instruction C (+)= A @ B on L0A/L0B/L0C operands, no sync."""
    emit_tile_op("mma", [region_of(A, "T.mma A"), region_of(B, "T.mma B"), region_of(C, "T.mma C")],
                 {"init": bool_expr(init, "init")}, "T.mma")


# ---- fill / reduce / scan / atomics --------------------------------------------------------------

def fill(buffer, value):
    """Sets every element of a buffer or region to `value` (cast to the buffer's dtype)."""
    r = operand(buffer, "T.fill destination")
    if r.__class__ is _Origin:
        r = BufferRegion(r.buffer, [(i, 1) for i in r.indices])
    v = _core.make_cast(r.buffer.dtype, _core.to_expr(value))
    emit_tile_op("fill", [r, v], None, "T.fill")


def clear(buffer):
    """Sets a buffer or region to zero."""
    fill(buffer, 0)


def norm_dim(region, dim, what, unit_dim_ok=False):
    """A user dimension (of the buffer's rank, negative counts from the end) -> its index among
    the region's non-unit ("squeezed") dimensions. With unit_dim_ok, a dimension of extent 1 next
    to longer ones gives None (the squeezed operands cannot name it; a reduction or scan along it
    is element-wise)."""
    ext = region.extents
    nd = len(ext)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{what}: dim must be a Python int, got {dim!r}")
    d = dim + nd if dim < 0 else dim
    if not 0 <= d < nd:
        raise ValueError(f"{what}: dim {dim} is out of range for a {nd}-dimensional operand")
    units = [_is_one(e) for e in ext]
    if all(units):
        return 0
    if units[d]:
        if unit_dim_ok:
            return None
        raise ValueError(f"{what}: dim {dim} has extent 1 in '{region!r}'; reduce over a dimension with more "
                         "than one element")
    return sum(1 for k in range(d) if not units[k])


def _real_shape(src, dst, dim, real_shape, what):
    """TileLang-Ascend's `real_shape=[rows, cols]`: reduce only the leading [rows, cols] of a 2-D
    source into the first rows (dim=-1) or cols (dim=0) elements of the destination."""
    if not isinstance(real_shape, (list, tuple)) or len(real_shape) != 2 or len(src.extents) != 2:
        raise ValueError(f"{what}: real_shape is [rows, cols] of a 2-D source, got {real_shape!r} for a "
                         f"{len(src.extents)}-D source")
    src = BufferRegion(src.buffer, [(m, r) for m, r in zip(src.mins, real_shape)])
    n = real_shape[1] if dim in (0, -2) else real_shape[0]
    ext = list(dst.extents)
    lead = [k for k, e in enumerate(ext) if not _is_one(e)]
    k = lead[-1] if lead else len(ext) - 1  # the destination's one non-unit dimension (or its last)
    dst = BufferRegion(dst.buffer, [(m, n if i == k else e) for i, (m, e) in enumerate(zip(dst.mins, ext))])
    return src, dst


def check_batch(batch, total, what):
    """TileLang's `batch=` (output elements per batched all-reduce): an int >= 1 dividing the
    number of output elements (`total`, when constant). Only checked here: every all-reduce is
    per element (the result is the same)."""
    if batch.__class__ is not int:
        raise TypeError(f"{what}: batch must be a Python int, got {batch!r}")
    if batch < 1:
        raise ValueError(f"{what}: batch must be >= 1, got {batch}")
    if batch > 1 and total is not None:
        if batch > total:
            raise ValueError(f"{what}: batch={batch} exceeds total output elements ({total})")
        if total % batch:
            raise ValueError(f"{what}: batch={batch} must evenly divide the {total} output elements")


def reduce(buffer, out, reduce_type, dim=-1, clear=True, real_shape=None, batch=1, nan_propagate=False,
           annotations=None):
    """Generic reduction: reduce_type is sum, max, min, abssum or absmax. `real_shape=[rows, cols]`
    (TileLang-Ascend) reduces only that leading part of a 2-D source. `nan_propagate=True` (max,
    min, absmax): a NaN in the reduced elements makes the result NaN (by default NaNs are skipped,
    as fmax does). `batch` is checked (check_batch) and otherwise has no effect; `annotations`
    are kept on the op."""
    if reduce_type not in ("sum", "max", "min", "abssum", "absmax"):
        raise ValueError(f"T.reduce: reduce_type must be sum, max, min, abssum or absmax, got {reduce_type!r}")
    what = f"T.reduce_{reduce_type}"
    src = region_of(buffer, f"{what} source")
    dst = region_of(out, f"{what} destination")
    out_ext = _squeezed_consts(dst)
    total = None
    if out_ext is not None:
        total = 1
        for e in out_ext:
            total *= e
    check_batch(batch, total, what)
    if nan_propagate and reduce_type not in ("max", "min", "absmax"):
        raise ValueError(f"{what}: nan_propagate applies to max, min and absmax reductions")
    if real_shape is not None:
        src, dst = _real_shape(src, dst, dim, real_shape, what)
    d = norm_dim(src, dim, what, unit_dim_ok=True)
    if d is None:  # along a dimension of extent 1 (e.g. a tile of N=1 columns): element-wise
        _reduce_unit_dim(src, dst, reduce_type, bool(clear), what)
        return
    attrs = dict(annotations or {})
    attrs.update({"type": reduce_type, "dim": d, "clear": bool(clear)})
    if nan_propagate:
        attrs["nan_propagate"] = True
    if batch > 1:
        attrs["batch"] = batch
    emit_tile_op("reduce", [src, dst], attrs, what)


def _squeezed_consts(region):
    """The region's non-unit extents as ints, or None when one is not a constant."""
    out = []
    for e in region.extents:
        if _is_one(e):
            continue
        x = _core.to_expr(e)
        if x.kind != "int":
            return None
        out.append(x.value)
    return out


def _reduce_unit_dim(src, dst, reduce_type, clear, what):
    """Each result element is one source element: copy (or |x|), combined with dst when not clear."""
    want, got = _squeezed_consts(src), _squeezed_consts(dst)
    if want is not None and got is not None and want != got:
        raise ValueError(f"{what}: the reduced dimension has extent 1 in src '{src!r}', so dst '{dst!r}' must have "
                         f"src's other extents {want}, but has {got} (unit dimensions dropped)")
    if clear:
        if reduce_type in ("abssum", "absmax"):
            emit_tile_op("tile.abs", [dst, src], None, what)
        else:
            emit_tile_op("copy", [src, dst], None, what)
    elif reduce_type in ("abssum", "absmax"):
        raise NotImplementedError(f"not implemented: {what}(clear=False) along a dimension of extent 1 in "
                                  f"'{src!r}'; reduce into a temporary and combine it with the destination")
    else:
        combine = {"sum": "tile.add", "max": "tile.max", "min": "tile.min"}[reduce_type]
        emit_tile_op(combine, [dst, dst, src], None, what)


def reduce_sum(buffer, out, dim=-1, clear=True, real_shape=None, batch=1, annotations=None):
    reduce(buffer, out, "sum", dim, clear, real_shape, batch=batch, annotations=annotations)


def reduce_max(buffer, out, dim=-1, clear=True, real_shape=None, batch=1, nan_propagate=False, annotations=None):
    reduce(buffer, out, "max", dim, clear, real_shape, batch, nan_propagate, annotations)


def reduce_min(buffer, out, dim=-1, clear=True, real_shape=None, batch=1, nan_propagate=False, annotations=None):
    reduce(buffer, out, "min", dim, clear, real_shape, batch, nan_propagate, annotations)


def reduce_abssum(buffer, out, dim=-1, clear=True, batch=1, annotations=None):
    reduce(buffer, out, "abssum", dim, clear, batch=batch, annotations=annotations)


def reduce_absmax(buffer, out, dim=-1, clear=True, batch=1, nan_propagate=False, annotations=None):
    reduce(buffer, out, "absmax", dim, clear, batch=batch, nan_propagate=nan_propagate, annotations=annotations)


def cumsum(src, dst=None, dim=0, reverse=False):
    """Inclusive scan along `dim`; in place when `dst` is omitted."""
    s = region_of(src, "T.cumsum source")
    d = s if dst is None else region_of(dst, "T.cumsum destination")
    nd = norm_dim(s, dim, "T.cumsum", unit_dim_ok=True)
    if nd is None:  # a scan along a dimension of extent 1 is a copy
        if dst is not None:
            emit_tile_op("copy", [s, d], None, "T.cumsum")
        return
    emit_tile_op("cumsum", [s, d], {"dim": nd, "reverse": bool(reverse)}, "T.cumsum")


def atomic_add(dst, value, memory_order=None, return_prev=False, use_tma=False):
    """dst += value atomically. Scalar form `T.atomic_add(C[i, j], v)` (`v` any scalar, an element
    `B[k]` included, as in TileLang: an element is a value, never a tile origin); tile form with a
    buffer or region on either side (a scalar value is then added to every element)."""
    if dst.__class__ is BufferLoad and not is_tile_arg(value):
        v = _core.make_cast(dst.dtype, _core.to_expr(value))
        call = _core.make_call(dst.dtype, "tl.atomic_add_scalar", [dst, v])
        if return_prev:
            return call
        ctx = current("T.atomic_add")
        ctx.require_kernel("T.atomic_add")
        ctx.b.emit_evaluate(call)
        return None
    if return_prev:
        raise ValueError("T.atomic_add: return_prev=True is only supported for the scalar form")
    if is_tile_arg(value):
        d, s = _pair(dst, value, "T.atomic_add destination", "T.atomic_add value")
    else:
        d = region_of(dst, "T.atomic_add destination")
        s = _core.to_expr(value)
    attrs = {}
    if memory_order is not None:
        attrs["memory_order"] = str(memory_order)
    if use_tma:
        attrs["use_tma"] = True
    emit_tile_op("atomic_add", [d, s], attrs or None, "T.atomic_add")
    return None


# ---- element-wise tile ops (shared with T.tile.*) ------------------------------------------------

def tile_unary(op, dst, src, what):
    d, s = _pair(dst, src, f"{what} destination", f"{what} source")
    emit_tile_op(op, [d, s], None, what)


def tile_binary(op, dst, a, b, what):
    d, ra = _pair(dst, a, f"{what} destination", f"{what} first source")
    if is_tile_arg(b):
        rb = operand(b, f"{what} second source")
    else:
        rb = _core.to_expr(b)
    emit_tile_op(op, [d, ra, rb], None, what)

