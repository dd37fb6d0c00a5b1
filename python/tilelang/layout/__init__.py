"""Layouts for T.annotate_layout: index maps (Layout), thread-distributed maps (Fragment) and the
named layouts the backends build themselves (swizzled shared memory, Ascend zN/nZ fractals).

A layout is only a description here; it becomes attributes of the `annotate_layout` tile op
(docs/TILE_OPS.md) and the backends give it meaning.
"""
from .. import _core
from .._core import Buffer, Var

__all__ = ["Layout", "Fragment", "NamedLayout", "make_swizzled_layout", "layout_attrs", "make_gemm_fragment_8x8",
           "make_gemm_fragment_8x8_transposed"]

_VAR_NAMES = ("i", "j", "k", "l", "m", "n")


def _index_vars(fn, ndim):
    code = getattr(fn, "__code__", None)
    names = list(code.co_varnames[:code.co_argcount]) if code is not None else []
    if len(names) != ndim:
        names = [_VAR_NAMES[k] if k < len(_VAR_NAMES) else f"i{k}" for k in range(ndim)]
    return [Var(n) for n in names]


def _as_list(v):
    if isinstance(v, (list, tuple)):
        return [_core.to_expr(x) for x in v]
    return [_core.to_expr(v)]


class Layout:
    """An index map: `T.Layout((M, N), lambda i, j: [i, j ^ (i % 8)])` maps a logical index of a
    buffer of that shape to its physical index."""

    kind = "custom"

    def __init__(self, shape, forward_fn):
        self.shape = list(shape) if isinstance(shape, (list, tuple)) else [shape]
        if not callable(forward_fn):
            raise TypeError("T.Layout: forward_fn must be a callable (i, j, ...) -> index list")
        self.forward_fn = forward_fn
        self.forward_vars = _index_vars(forward_fn, len(self.shape))
        self.forward_index = _as_list(forward_fn(*self.forward_vars))

    def map_forward_index(self, indices):
        """The physical index of a logical index (by substitution through the map's function)."""
        return _as_list(self.forward_fn(*indices))

    def get_forward_vars(self):
        return list(self.forward_vars)

    def get_forward_index(self):
        return list(self.forward_index)

    def _attrs(self):
        return {"kind": "custom", "vars": self.forward_vars, "exprs": self.forward_index}

    def __repr__(self):
        return f"Layout({self.shape} : ({', '.join(map(repr, self.forward_vars))}) -> {self.forward_index})"


class Fragment(Layout):
    """A thread-distributed layout: each logical element maps to (thread, local index).

    `T.Fragment(shape, forward_thread_fn=lambda i, j: ..., forward_index_fn=lambda i, j: ...)`, or
    `forward_fn` returning (thread, index...)."""

    kind = "fragment"

    def __init__(self, shape, forward_fn=None, forward_thread_fn=None, replicate=1, forward_index_fn=None):
        self.shape = list(shape) if isinstance(shape, (list, tuple)) else [shape]
        if not isinstance(replicate, int) or replicate < 1:
            raise ValueError(f"T.Fragment: replicate must be a positive int, got {replicate!r}")
        self.replicate = replicate
        self.replicate_var = None
        if forward_fn is not None:
            self.forward_vars = _index_vars(forward_fn, len(self.shape))
            extra = []
            code = getattr(forward_fn, "__code__", None)
            if code is not None and code.co_argcount == len(self.shape) + 1:
                # TileLang's replicated form: forward_fn(i, ..., rep), rep < replicate selects the copy.
                self.replicate_var = Var(code.co_varnames[len(self.shape)])
                extra = [self.replicate_var]
            out = _as_list(forward_fn(*self.forward_vars, *extra))
            if len(out) < 2:
                raise ValueError("T.Fragment: forward_fn must return (thread, index, ...)")
            self.forward_thread, self.forward_index = out[0], out[1:]
            self.forward_fn = forward_fn
        else:
            if forward_thread_fn is None:
                raise TypeError("T.Fragment needs forward_fn or forward_thread_fn")
            self.forward_vars = _index_vars(forward_thread_fn, len(self.shape))
            self.forward_thread = _core.to_expr(forward_thread_fn(*self.forward_vars))
            if forward_index_fn is None:
                self.forward_index = [_core.make_int(0)]
            else:
                self.forward_index = _as_list(forward_index_fn(*self.forward_vars))
            self.forward_fn = None

    def _attrs(self):
        # The replica variable (if any) follows the index variables.
        extra = [self.replicate_var] if self.replicate_var is not None else []
        return {"kind": "fragment", "vars": self.forward_vars + extra, "exprs": self.forward_index,
                "thread": self.forward_thread, "replicate": self.replicate}

    def __repr__(self):
        return (f"Fragment({self.shape} : ({', '.join(map(repr, self.forward_vars))}) -> thread "
                f"{self.forward_thread!r}, index {self.forward_index})")


class NamedLayout:
    """A layout the backend constructs from its name (swizzled, zn, nz) for one buffer."""

    def __init__(self, kind, buffer, **params):
        if buffer.__class__ is not Buffer:
            raise TypeError(f"the {kind} layout needs a buffer, got {type(buffer).__name__}")
        self.kind = kind
        self.buffer = buffer
        self.params = params

    def _attrs(self):
        out = {"kind": self.kind}
        out.update(self.params)
        return out

    def __repr__(self):
        return f"{self.kind} layout of {self.buffer.name}"


def make_swizzled_layout(buffer, k_major=True, allow_pad=True):
    """The default bank-conflict-free shared-memory swizzle for `buffer`."""
    attrs = {}
    if not k_major:
        attrs["k_major"] = False
    return NamedLayout("swizzled", buffer, **attrs)


def layout_attrs(layout, buffer):
    """Attributes of the annotate_layout tile op for `layout` applied to `buffer`."""
    if isinstance(layout, NamedLayout):
        if not layout.buffer.same_as(buffer):
            raise ValueError(f"T.annotate_layout: the {layout.kind} layout was made for buffer "
                             f"'{layout.buffer.name}' but annotates '{buffer.name}'")
        return layout._attrs()
    if isinstance(layout, Layout):
        if len(layout.shape) != buffer.ndim:
            raise ValueError(f"T.annotate_layout: a {len(layout.shape)}-dimensional layout cannot describe the "
                             f"{buffer.ndim}-dimensional buffer '{buffer.name}'")
        return layout._attrs()
    raise TypeError(f"T.annotate_layout: {layout!r} is not a layout (T.Layout, T.Fragment, make_swizzled_layout, "
                    "make_zn_layout, make_nz_layout or a callable)")


def _explicit_swizzle(name):
    def make(*args, **kwargs):
        raise NotImplementedError(
            f"not implemented: tilelang.layout.{name} (an explicit shared-memory swizzle mode); tilelang-cpp's "
            "backends choose the swizzle of a shared buffer themselves: use make_swizzled_layout(buffer)")
    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"TileLang's {name}: not implemented here (use make_swizzled_layout)."
    return make


# TileLang's explicit swizzle modes and fragment helpers: the names exist (modules importing them load);
# using one raises NotImplementedError naming the alternative.
make_full_bank_swizzled_layout = _explicit_swizzle("make_full_bank_swizzled_layout")
make_half_bank_swizzled_layout = _explicit_swizzle("make_half_bank_swizzled_layout")
make_quarter_bank_swizzled_layout = _explicit_swizzle("make_quarter_bank_swizzled_layout")
make_volta_swizzled_layout = _explicit_swizzle("make_volta_swizzled_layout")
make_tcgen05mma_swizzled_layout = _explicit_swizzle("make_tcgen05mma_swizzled_layout")


# ---- the 8x8 tensor-core fragment (ldmatrix / stmatrix) ------------------------------------------------

class _TileFragment(Fragment):
    """A Fragment given by Python functions of the index, with its thread and register counts known,
    so that it can be repeated (TileLang's Fragment.repeat)."""

    def __init__(self, shape, thread_fn, local_fn, num_threads, num_locals):
        super().__init__(shape, forward_thread_fn=thread_fn, forward_index_fn=lambda *ix: [local_fn(*ix)])
        self._thread_fn, self._local_fn = thread_fn, local_fn
        self.num_threads, self.num_locals = num_threads, num_locals

    def map_forward_thread(self, indices):
        """The thread holding element `indices` (ints give an int)."""
        return self._thread_fn(*indices)

    def map_forward_index(self, indices):
        """The register index of element `indices` in its thread (ints give [int])."""
        return [self._local_fn(*indices)]

    def repeat(self, repeats, repeat_on_thread=False, lower_dim_first=True):
        """The fragment tiled `repeats[d]` times along each dimension: the copies are held by more
        threads (repeat_on_thread) or by the same threads in more registers."""
        repeats = [int(r) for r in repeats]
        if len(repeats) != len(self.shape) or any(r < 1 for r in repeats):
            raise ValueError(f"Fragment.repeat: one positive count per dimension ({len(self.shape)}), got {repeats}")
        base = list(self.shape)
        order = range(len(base)) if lower_dim_first else reversed(range(len(base)))

        def rep_index(ix):
            r, scale = 0, 1
            for d in order:
                r = r + (ix[d] // base[d]) * scale
                scale *= repeats[d]
            return r

        def inner(ix):
            return [ix[d] % base[d] for d in range(len(base))]

        total = 1
        for r in repeats:
            total *= r
        if repeat_on_thread:
            def thread_fn(*ix):
                return self._thread_fn(*inner(ix)) + rep_index(ix) * self.num_threads

            def local_fn(*ix):
                return self._local_fn(*inner(ix))
            threads, locals_ = self.num_threads * total, self.num_locals
        else:
            def thread_fn(*ix):
                return self._thread_fn(*inner(ix))

            def local_fn(*ix):
                return self._local_fn(*inner(ix)) + rep_index(ix) * self.num_locals
            threads, locals_ = self.num_threads, self.num_locals * total
        shape = [b * r for b, r in zip(base, repeats)]
        return _TileFragment(shape, thread_fn, local_fn, threads, locals_)


def make_gemm_fragment_8x8():
    """The 8x8 tile of a warp's tensor-core operand (ldmatrix/stmatrix): thread i * 4 + j // 2
    holds elements (i, j) and (i, j + 1) in registers j % 2."""
    return _TileFragment([8, 8], lambda i, j: i * 4 + j // 2, lambda i, j: j % 2, 32, 2)


def make_gemm_fragment_8x8_transposed():
    """make_gemm_fragment_8x8 transposed: thread j * 4 + i // 2 holds (i, j) in register i % 2."""
    return _TileFragment([8, 8], lambda i, j: j * 4 + i // 2, lambda i, j: i % 2, 32, 2)
