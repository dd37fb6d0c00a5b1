"""Debugging, synchronisation and annotation primitives: T.print, T.printf, T.device_assert,
T.dump_tensor, the Ascend flags and barriers, T.annotate_layout/address, T.use_swizzle,
T.func_attr."""
from .. import _core
from .._core import Buffer, BufferRegion
from .context import Frame, as_int, current
from .tile_ops import bool_expr, emit_tile_op, is_tile_arg, region_of

__all__ = ["print", "printf", "device_assert", "dump_tensor", "sync_threads", "loop_break", "set_flag", "wait_flag", "rs",
           "pipe_barrier", "barrier_all", "set_cross_flag", "wait_cross_flag", "sync_all", "annotate_layout",
           "annotate_address", "use_swizzle", "func_attr", "evaluate", "assume", "annotate_l2_hit_ratio", "annotate_safe_value",
           "annotate_restrict_buffers", "annotate_min_blocks_per_sm", "index_to_coordinates", "any_of", "all_of", "dp4a",
           "reinterpretcast"]


def _emit_call(op, args, what):
    ctx = current(what)
    ctx.require_kernel(what)
    ctx.b.emit_evaluate(_core.make_call("void", op, args))


# ---- debugging -----------------------------------------------------------------------------------

def print(obj=None, msg="", warp_group_id=0, warp_id=0):  # noqa: A001
    """Device print of a buffer (one thread prints it), a scalar (every thread), or a message."""
    if obj is None:
        _core.make_string(str(msg))  # text UTF-8 cannot hold is a ValueError showing it as the user wrote it
        # The message is data: as a printf format it must print itself, so '%' is doubled.
        text = str(msg).replace("%", "%%").replace("\0", "\\0")
        _emit_call("tl.printf", [_core.make_string(text + "\n")], "T.print")
    elif is_tile_arg(obj):
        emit_tile_op("print", [region_of(obj, "T.print")], {"msg": str(msg)}, "T.print")
    else:
        _emit_call("tl.print_scalar", [_core.make_string(str(msg)), _core.to_expr(obj)], "T.print")


def printf(fmt, *args):
    """Device printf: `T.printf("x=%d\\n", x)`. The format is checked against the arguments when the
    kernel is built (ir/printf_format.h): d i u o x X c take integers, e f g a floats; %s and %n are
    refused."""
    if not isinstance(fmt, str):
        raise TypeError(f"T.printf: the format must be a Python string, got {type(fmt).__name__}")
    vals = []
    for a in args:
        if is_tile_arg(a):
            raise TypeError(f"T.printf: argument {a!r} is a buffer; print one element (buf[i]) or use T.print(buf)")
        vals.append(_core.to_expr(a))
    ctx = current("T.printf")
    call = _core.make_call("void", "tl.printf", [_core.make_string(fmt)] + vals)
    ctx.in_npu_body("T.printf", lambda: ctx.b.emit_evaluate(call))


def device_assert(cond, msg=""):
    """Checks `cond` on the device; a failure raises a Python exception after the launch."""
    _emit_call("tl.device_assert", [bool_expr(cond, "T.device_assert"), _core.make_string(str(msg))],
               "T.device_assert")


def dump_tensor(buf, desc, size, shape_info=()):
    """Ascend: dumps `size` elements of a buffer with the tag `desc`."""
    if not isinstance(desc, int) or not isinstance(size, int):
        raise TypeError("T.dump_tensor: desc and size must be Python ints")
    region = region_of(buf, "T.dump_tensor")
    ctx = current("T.dump_tensor")
    ctx.in_npu_body("T.dump_tensor", lambda: ctx.b.emit_tile_op("dump_tensor", [region], {"desc": desc, "size": size}))


def sync_threads():
    """Block-wide barrier (cuda __syncthreads)."""
    _emit_call("tl.sync_threads", [], "T.sync_threads")


def ptx_commit_group():
    """Closes the group of cp.async copies issued since the last commit (cuda); nothing on the
    cpu and Ascend targets, where T.async_copy completes at once."""
    _emit_call("cuda.cp_async_commit", [], "T.ptx_commit_group")


def ptx_wait_group(num=0):
    """Waits until at most `num` committed cp.async groups are still in flight (cuda
    cp.async.wait_group; `num` a Python int). The copies' data is then visible to the thread that
    issued them; a barrier before other threads read it is inserted by the compiler. Nothing on
    the cpu and Ascend targets."""
    if num.__class__ is not int or num < 0:
        raise TypeError(f"T.ptx_wait_group(num): num must be a non-negative Python int, got {num!r}")
    _emit_call("cuda.cp_async_wait", [_core.make_int(num)], "T.ptx_wait_group")


def dp4a(A, B, C):
    """C += A[j] * B[j] + ... + A[j + 3] * B[j + 3]: TileLang's int8x4 dot product. `A` and `B` name
    the first of four consecutive elements along their last dimension (`A_local[i, k * 4]`), `C`
    the accumulator element; the products are summed in C's type (int32). Written as plain
    arithmetic, which the backends lower to their dot-product instructions where they have one."""
    ctx = current("T.dp4a")
    ctx.require_kernel("T.dp4a")
    for x, name in ((A, "A"), (B, "B"), (C, "C")):
        if x.__class__ is not _core.BufferLoad:
            raise TypeError(f"T.dp4a: {name} must be one element of a buffer (A_local[i, k]), got "
                            f"{type(x).__name__}")
    acc = C
    for k in range(4):
        a = A.buffer[tuple(A.indices[:-1]) + (A.indices[-1] + k,)]
        b = B.buffer[tuple(B.indices[:-1]) + (B.indices[-1] + k,)]
        acc = acc + _core.make_cast(C.dtype, a) * _core.make_cast(C.dtype, b)
    ctx.b.emit_store(C.buffer, C.indices, acc)


def loop_break():
    """Leaves the innermost serial loop (same as `break`)."""
    ctx = current("T.loop_break")
    ctx.brk(True)


# ---- Ascend synchronisation ----------------------------------------------------------------------

_PIPES = ("mte1", "mte2", "mte3", "m", "v", "fix", "s")


def _pipe_name(p, what):
    name = str(p).lower()
    if name.startswith("pipe_"):
        name = name[5:]
    if name not in _PIPES:
        raise ValueError(f"{what}: unknown pipe {p!r}; expected one of {', '.join(_PIPES)}")
    return name


def _pipe(p, what):
    return _core.make_string(_pipe_name(p, what))


class rs(Frame):  # noqa: N801  (TileLang-Ascend npuir's name)
    """npuir's resource frame `with T.rs("PIPE_MTE3"):` names the pipe of the flags inside written with
    one pipe: `T.set_flag("PIPE_MTE2", i)` there is T.set_flag("PIPE_MTE3", "PIPE_MTE2", i) (MTE3
    signals MTE2) and `T.wait_flag("PIPE_V", i)` is T.wait_flag("PIPE_V", "PIPE_MTE3", i) (MTE3 waits
    for V). Other statements inside are unaffected: their pipes follow from their memories."""

    def __init__(self, pipe):
        self.pipe = _pipe_name(pipe, "T.rs")

    def __enter__(self):
        ctx = current("T.rs")
        ctx.require_kernel("T.rs")
        ctx.__dict__.setdefault("rs_pipes", []).append(self.pipe)
        return None

    def __exit__(self, exc_type, exc, tb):
        current().rs_pipes.pop()
        return False  # no IR scope


def _rs_pipe(what, form):
    pipes = current(what).__dict__.get("rs_pipes")
    if not pipes:
        raise ValueError(f"{what}({form}) names one pipe and an event id: that form needs an enclosing "
                         f"`with T.rs(\"PIPE_...\")` giving the other pipe; otherwise write {what}(src, dst, event_id)")
    return pipes[-1]


def set_flag(src, dst, event_id=0):
    """Sets flag (src, dst, event_id) once earlier work on pipe `src` has finished. Inside
    `with T.rs(pipe)`, `T.set_flag(dst, event_id)` signals from that pipe."""
    if not isinstance(dst, str):  # npuir's one-pipe form
        src, dst, event_id = _rs_pipe("T.set_flag", "dst, event_id"), src, dst
    _emit_call("ascend.set_flag", [_pipe(src, "T.set_flag"), _pipe(dst, "T.set_flag"), _core.to_expr(event_id)],
               "T.set_flag")


def wait_flag(src, dst, event_id=0):
    """Blocks pipe `dst` until flag (src, dst, event_id) is set, then clears it. Inside
    `with T.rs(pipe)`, `T.wait_flag(src, event_id)` blocks that pipe."""
    if not isinstance(dst, str):  # npuir's one-pipe form
        src, dst, event_id = src, _rs_pipe("T.wait_flag", "src, event_id"), dst
    _emit_call("ascend.wait_flag", [_pipe(src, "T.wait_flag"), _pipe(dst, "T.wait_flag"), _core.to_expr(event_id)],
               "T.wait_flag")


def pipe_barrier(pipe):
    """Waits until `pipe` drains."""
    _emit_call("ascend.pipe_barrier", [_pipe(pipe, "T.pipe_barrier")], "T.pipe_barrier")


def barrier_all():
    """Drains every pipe."""
    _emit_call("ascend.barrier_all", [], "T.barrier_all")


def set_cross_flag(pipe, flag_id, mode=2):
    """Cross-core flag: increments counter `flag_id` once `pipe` has finished (mode 2: cube <-> vector)."""
    if mode not in (0, 1, 2):
        raise ValueError(f"T.set_cross_flag: mode must be 0, 1 or 2, got {mode!r}")
    _emit_call("ascend.set_cross_flag", [_pipe(pipe, "T.set_cross_flag"), _core.to_expr(flag_id),
                                         _core.make_int(mode)], "T.set_cross_flag")


def wait_cross_flag(flag_id, pipe=None):
    """Waits until cross-core counter `flag_id` is non-zero, then decrements it."""
    _emit_call("ascend.wait_cross_flag", [_core.to_expr(flag_id)], "T.wait_cross_flag")


def sync_all():
    """Barrier across all cores of all blocks."""
    _emit_call("ascend.sync_all", [], "T.sync_all")


# ---- annotations ---------------------------------------------------------------------------------

def annotate_layout(layout_map):
    """Pins buffer layouts: `T.annotate_layout({A_shared: make_swizzled_layout(A_shared)})`. A value
    may be a T.Layout/T.Fragment, a layout from tilelang.layout / tilelang.intrinsics, or a callable
    (i, j, ...) -> index list."""
    from ..layout import Layout, layout_attrs  # noqa: PLC0415
    if not isinstance(layout_map, dict):
        raise TypeError("T.annotate_layout takes a dict {buffer: layout}")
    for buf, layout in layout_map.items():
        if buf.__class__ is not Buffer:
            raise TypeError(f"T.annotate_layout: keys must be buffers, got {type(buf).__name__}")
        if callable(layout) and not isinstance(layout, Layout):
            layout = Layout(buf.shape, layout)
        emit_tile_op("annotate_layout", [BufferRegion.full(buf)], layout_attrs(layout, buf), "T.annotate_layout")


def reinterpretcast(dst, src, casttype=None):
    """Ascend (AscendC LocalTensor::ReinterpretCast): from here on `dst` names `src`'s bytes with
    dst's element type, e.g. `T.reinterpretcast(offs_u32, offs_i32, "uint32_t")`. Both are whole
    on-chip buffers of the same memory and the same byte size; `casttype` (a C++ or tilelang type
    name) must be dst's dtype. No instruction runs: dst gets src's address, so later writes through
    either buffer are seen through the other. Ascend only (cpu/cuda raise NotImplementedError)."""
    what = "T.reinterpretcast"
    for b, role in ((dst, "dst"), (src, "src")):
        if b.__class__ is not Buffer:
            raise TypeError(f"{what}: {role} must be a buffer (the whole tile), got {type(b).__name__}")
    attrs = None if casttype is None else {"dtype": str(casttype)}
    emit_tile_op("tile.reinterpretcast", [BufferRegion.full(dst), BufferRegion.full(src)], attrs, what)


def annotate_address(address_map):
    """Pins buffer byte offsets in their memory: `T.annotate_address({A_L1: 0, B_L1: 65536})`."""
    if not isinstance(address_map, dict):
        raise TypeError("T.annotate_address takes a dict {buffer: byte_offset}")
    for buf, off in address_map.items():
        if buf.__class__ is not Buffer:
            raise TypeError(f"T.annotate_address: keys must be buffers, got {type(buf).__name__}")
        e = _core.to_expr(off)
        if e.kind == "int" and e.value < 0:
            raise ValueError(f"T.annotate_address: negative offset {e.value} for buffer '{buf.name}'")
        emit_tile_op("annotate_address", [BufferRegion.full(buf), e], None, "T.annotate_address")


def _let(name, value):
    """Binds an intermediate of an index computation (keeps the IR readable; no recomputation)."""
    if value.kind in ("int", "var"):
        return value
    v = _core.Var(name, value.dtype)
    current("T.use_swizzle").b.let(v, value)
    return v


def _swizzle_zn(idx, m_tiles, n_tiles, off):
    """Ascend block swizzle: tiles are visited in horizontal panels of `off` tile-rows, the panel
    walked column by column (all `off` rows of a column before the next column), serpentine
    between panels. Returns the remapped linear tile index m * n_tiles + n."""
    total = m_tiles * n_tiles
    inner = _let("swz_inner", idx % total)
    panel_tiles = off * n_tiles
    panel = _let("swz_panel", inner // panel_tiles)
    in_panel = _let("swz_in_panel", inner % panel_tiles)
    rows = _let("swz_rows", _core.make_binary("max", _core.make_binary("min", m_tiles - panel * off, off), 1))
    m = panel * off + in_panel % rows
    n = _let("swz_n", in_panel // rows)
    n = _core.make_select(panel % 2 == 1, n_tiles - 1 - n, n)
    return (idx - inner) + m * n_tiles + n


def use_swizzle(*args, order="row", enable=True, off=1, in_loop=False, dir=0, **kwargs):  # noqa: A002
    """Two forms, told apart by their arguments:

    - GPU rasterization `T.use_swizzle(panel_size, order="row", enable=True)`: a kernel attribute;
    - Ascend `T.use_swizzle(idx, M, N, K, block_M, block_N, off=1, in_loop=False)`: returns the
      remapped tile index (valid as a bare statement too, its result then unused).
    """
    if "panel_size" in kwargs:
        args = (kwargs.pop("panel_size"),) + args
    if kwargs:
        raise TypeError(f"T.use_swizzle: unexpected arguments {sorted(kwargs)}")
    if len(args) == 1:
        panel = args[0]
        if order not in ("row", "col", "column"):
            raise ValueError(f"T.use_swizzle: order must be 'row' or 'col'/'column', got {order!r}")
        if not isinstance(panel, int) or panel < 1:
            raise ValueError(f"T.use_swizzle: panel_size must be a positive Python int, got {panel!r}")
        ctx = current("T.use_swizzle")
        ctx.require_kernel("T.use_swizzle")
        if enable:
            ctx.b.set_kernel_attr("use_swizzle_panel", panel)
            ctx.b.set_kernel_attr("use_swizzle_order", "row" if order == "row" else "col")
        return None
    if len(args) >= 6:
        idx, M, N, _K, block_m, block_n = args[:6]  # noqa: N806
        if len(args) >= 7:
            off = args[6]
        if not isinstance(off, int) or off < 1:
            raise ValueError(f"T.use_swizzle: off must be a positive Python int, got {off!r}")
        if dir not in (0, 1):
            raise ValueError(f"T.use_swizzle: dir must be 0 or 1, got {dir!r}")
        m_tiles = _core.ceildiv(M, block_m)
        n_tiles = _core.ceildiv(N, block_n)
        e = _core.to_expr(idx)
        if dir == 0:
            return _swizzle_zn(e, m_tiles, n_tiles, off)
        # dir 1: the same walk with the roles of rows and columns exchanged.
        t = _swizzle_zn(e, n_tiles, m_tiles, off)
        inner = t % (m_tiles * n_tiles)
        return (t - inner) + (inner % m_tiles) * n_tiles + inner // m_tiles
    raise TypeError("T.use_swizzle takes (panel_size, order=..., enable=...) on GPUs or "
                    "(idx, M, N, K, block_M, block_N, off=1) on Ascend")


def func_attr(attrs):
    """Function attributes, e.g. T.func_attr({"enable_auto_sync": True})."""
    if not isinstance(attrs, dict):
        raise TypeError("T.func_attr takes a dict")
    ctx = current("T.func_attr")
    for k, v in attrs.items():
        if not isinstance(k, str):
            raise TypeError(f"T.func_attr: attribute names must be strings, got {k!r}")
        _core.check_attr(k, v)  # a value the IR cannot hold fails here, at the user's line
        ctx.func_attrs[k] = v



# ---- TileLang helpers with a direct meaning here ---------------------------------------------------

def evaluate(value):
    """Evaluates an expression for its effect: `T.evaluate(T.atomic_add(..., return_prev=True))`.
    A T.* primitive that already emitted its statement (returns None) needs nothing more."""
    if value is None:
        return
    e = _core.to_expr(value)
    if e.kind in ("int", "float", "string"):
        return  # a constant has no effect (TVM's T.evaluate(0) placeholder)
    _emit_call_expr(e, "T.evaluate")


def _emit_call_expr(e, what):
    ctx = current(what)
    ctx.require_kernel(what)
    ctx.b.emit_evaluate(e)


def assume(cond=None):
    """A fact the compiler may use (`T.assume(n % 16 == 0)`). Only a hint: nothing is emitted and
    nothing is checked (use T.device_assert to check a condition at run time)."""
    if cond is not None and cond.__class__ is bool and not cond:
        raise ValueError("T.assume(False): the assumed condition is false at compile time")


def annotate_l2_hit_ratio(l2_hit_ratio_map):
    """A cache-persistence hint; accepted and ignored (it does not change results)."""
    if not isinstance(l2_hit_ratio_map, dict):
        raise TypeError("T.annotate_l2_hit_ratio takes a dict {buffer: ratio}")


def annotate_safe_value(safe_value_map):
    """What out-of-bounds reads of a global buffer give, from here to the end of the enclosing block:
    `T.annotate_safe_value({A: -99})`. It applies to the T.copy calls that read the buffer (tiles
    reaching past the tensor's end, and element copies `T.copy(A[i, j], B[i, j])`); the value is
    converted to the element type. Without it such reads give 0."""
    ctx = current("T.annotate_safe_value")
    if not isinstance(safe_value_map, dict):
        raise TypeError("T.annotate_safe_value takes a dict {buffer: value}")
    for buf, value in safe_value_map.items():
        if buf.__class__ is not Buffer:
            raise TypeError(f"T.annotate_safe_value: keys must be buffers, got {type(buf).__name__}")
        if buf.scope != "global":
            raise ValueError(f"T.annotate_safe_value: '{buf.name}' is a {buf.scope} buffer; only reads of global "
                             "tensors can be out of bounds")
        if value is None or isinstance(value, (str, bytes)):
            raise TypeError(f"T.annotate_safe_value: the value for '{buf.name}' must be a number or a PrimExpr, "
                            f"got {value!r}")
        ctx.safe_values.append((ctx.depth, ctx.frame_ids[ctx.depth], buf, _core.to_expr(value)))


def safe_value_of(ctx, buf):
    """The innermost T.annotate_safe_value for `buf` whose block is still open, or None."""
    for depth, fid, b, value in reversed(ctx.safe_values):
        if depth <= ctx.depth and ctx.frame_ids[depth] == fid and b.same_as(buf):
            return value
    return None


def annotate_restrict_buffers(*buffers):
    """An aliasing hint (the buffers do not overlap); accepted and ignored: kernel parameters are
    already treated as non-overlapping."""


def annotate_min_blocks_per_sm(n):
    """An occupancy hint (__launch_bounds__ min blocks); accepted and ignored."""
    as_int(n, "T.annotate_min_blocks_per_sm", 1)


def index_to_coordinates(index, shape):
    """The row-major coordinates of a linear `index` in `shape`: [i0, i1, ...]."""
    coords = []
    rest = index
    for d in reversed(list(shape)):
        coords.append(rest % d)
        rest = rest // d
    return coords[::-1]


def _elements_of(region, what):
    """The elements of a buffer or region with constant extents, as loads (row-major)."""
    r = region_of(region, what)
    ext = []
    for e in r.extents:
        x = _core.to_expr(e)
        if x.kind != "int":
            raise NotImplementedError(f"not implemented: {what} of a region with the run-time extent '{x!r}'; "
                                      "loop over it with T.serial and combine into a T.alloc_var")
        ext.append(x.value)
    mins = list(r.mins)
    out = []

    def rec(d, idx):
        if d == len(ext):
            out.append(r.buffer[tuple(idx)] if len(idx) > 1 else r.buffer[idx[0]])
            return
        for k in range(ext[d]):
            rec(d + 1, idx + [mins[d] + k])
    rec(0, [])
    return out


def any_of(region):
    """True when some element of the (bool or numeric) region is non-zero: `if T.any_of(M[i, :]):`."""
    out = None
    for v in _elements_of(region, "T.any_of"):
        b = bool_expr(v, "T.any_of")
        out = b if out is None else _core.make_binary("or", out, b)
    return out if out is not None else _core.make_bool(False)


def all_of(region):
    """True when every element of the region is non-zero."""
    out = None
    for v in _elements_of(region, "T.all_of"):
        b = bool_expr(v, "T.all_of")
        out = b if out is None else _core.make_binary("and", out, b)
    return out if out is not None else _core.make_bool(True)
