"""The eager style of @tilelang.jit: T.const, T.empty, parameters declared in the body.

    @tilelang.jit
    def add(A, B, block: int = 256):
        N = T.const("N")                 # a size, bound from the tensors' shapes at call time
        A: T.Tensor((N,), T.float32)     # A is a tensor parameter (declared in the body)
        B: T.Tensor((N,), T.float32)
        C = T.empty((N,), T.float32)     # an output, allocated by the runtime and returned
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            ...
        return C

The function is parsed like a @T.prim_func body (parser.py rewrites it with kind "eager"), with
its compile-time parameters (`block`) bound to Python values and its run-time parameters (`A`,
`B`: those declared in the body with a T.Tensor / dtype annotation, or annotated so in the
signature) bound to placeholders until their declaration runs. Parsing happens in two phases
(docs/COMPATIBILITY.md, "eager style"):

* the probe runs the body with every unknown T.const as a symbolic variable until the first
  `with T.Kernel`, to learn which tensor dimension (or stride) gives each constant its value;
* the build runs the whole body with every constant a Python int and yields a static PrimFunc
  whose parameters are the run-time parameters in signature order followed by the T.empty
  outputs, and whose out_idx lists the outputs in `return` order.

T.empty also works in a plain @T.prim_func (`return C` then sets the kernel's out_idx).
"""
import ast
import inspect
import re
import textwrap

from .. import _core
from .._core import Buffer, Var
from .allocate import TensorSpec
from .context import Context, Frame, current, current_or_none
from .dtypes import dtype as _dtype_cls, to_dtype
from .tir_compat import HandleParam, PointerType

__all__ = ["const", "empty", "FuncContext", "EagerSpec", "eager_spec", "parse_eager", "ProbeResult"]

_SyntaxError = _core.TileLangSyntaxError


class _ProbeDone(Exception):
    """Raised inside a probe parse once the declarations are behind us (the first T.Kernel)."""


class Undeclared:
    """The value of a run-time parameter before its `A: T.Tensor(...)` declaration has run."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def _fail(self, *_a, **_k):
        raise _SyntaxError(f"parameter '{self.name}' is used before its declaration; declare it first with "
                           f"`{self.name}: T.Tensor(shape, dtype)` (or `{self.name}: T.int32` for a scalar)")

    __getattr__ = __getitem__ = __call__ = __add__ = __radd__ = __mul__ = __rmul__ = _fail
    __iter__ = __len__ = __index__ = __int__ = __bool__ = _fail

    def __repr__(self):
        return f"<undeclared parameter {self.name}>"


class _ElementRef:
    """The target of a T.Ref macro parameter bound to a buffer element."""

    __slots__ = ("load",)

    def __init__(self, load):
        self.load = load


class FuncContext(Context):
    """The parse state of a whole function (a @T.prim_func or an eager @tilelang.jit body): the
    T.empty outputs, `return`, and for eager bodies the constants and parameter declarations."""

    def __init__(self, name, runtime_params=(), const_values=None, probe=False):
        super().__init__(name)
        self.outputs = []             # T.empty buffers, in creation order
        self.out_order = None         # indices into outputs, in `return` order
        self.eager = const_values is not None
        self.runtime_params = tuple(runtime_params)
        self.declared = {}            # run-time parameter name -> Buffer / Var
        self.const_values = dict(const_values or {})
        self.probe = probe
        self.const_vars = {}          # probe: name -> the symbolic Var T.const returned
        self.const_names = []         # every name T.const declared, in order
        self.const_sources = {}       # probe: const name -> (param, "shape"|"stride", dim)

    # ---- T.const -------------------------------------------------------------------------------
    def const(self, names, dtype):
        out = []
        for n in names:
            if n not in self.const_names:
                self.const_names.append(n)
            if n in self.const_values:
                out.append(self.const_values[n])
            elif self.probe:
                v = self.const_vars.get(n)
                if v is None:
                    v = self.const_vars[n] = Var(n, to_dtype(dtype))
                out.append(v)
            else:  # the JIT resolves every constant before the build; reaching here is a bug
                raise _SyntaxError(f"T.const: no value for '{n}'")
        return out

    # ---- run-time parameters declared in the body ------------------------------------------------
    def declare_param(self, names, name, ann):
        if name not in self.runtime_params:
            raise _SyntaxError(f"'{name}: ...' declares a parameter, but '{name}' is not a parameter of "
                               f"'{self.name}'")
        if name in self.declared:
            raise _SyntaxError(f"parameter '{name}' is declared twice")
        if isinstance(ann, TensorSpec):
            value = ann.make(name, self.span)
            if self.probe:
                self._note_sources(name, ann)
        elif isinstance(ann, PointerType):  # `A: T.ptr`, viewed by T.make_tensor in the body
            value = HandleParam(name)
        elif isinstance(ann, (_dtype_cls, str)) or ann in (int, float, bool) or type(ann).__module__ == "torch":
            value = Var(name, to_dtype(ann))
        else:
            raise TypeError(f"parameter '{name}' is declared with {ann!r}; declare tensors with "
                            "T.Tensor(shape, dtype) and scalars with a dtype such as T.int32")
        self.declared[name] = value
        return self.bind(names, name, value)

    def _note_sources(self, param, spec):
        for kind, dims in (("shape", spec.shape), ("stride", spec.strides or ())):
            for i, d in enumerate(dims):
                if d.__class__ is Var and self.const_vars.get(d.name) is d and d.name not in self.const_sources:
                    self.const_sources[d.name] = (param, kind, i)

    # ---- T.empty and return --------------------------------------------------------------------
    def empty(self, shape, dtype):
        if self.kernels:
            raise _SyntaxError("T.empty declares an output of the function: call it outside `with T.Kernel`")
        name = self.take_hint(f"out{len(self.outputs)}")
        buf = Buffer(name, to_dtype(dtype), list(shape), "global", None, self.span)
        self.outputs.append(buf)
        return buf

    def func_return(self, value):
        values = value if isinstance(value, tuple) else (value,)
        order = []
        for v in values:
            k = next((i for i, o in enumerate(self.outputs) if o is v), None)
            if k is None:
                raise _SyntaxError(
                    f"a kernel function cannot return a value ({v!r}) other than the tensors it made with "
                    "T.empty(...); outputs are otherwise written into tensor parameters (mark them with "
                    "out_idx when compiling)")
            if k in order:
                raise _SyntaxError(f"output '{v.name}' is returned twice")
            order.append(k)
        if self.out_order is not None:
            raise _SyntaxError("a kernel function returns its outputs once, at its end")
        if len(order) != len(self.outputs):
            missing = [o.name for i, o in enumerate(self.outputs) if i not in order]
            raise _SyntaxError(f"every T.empty output must be returned; not returned: {', '.join(missing)}")
        self.out_order = order

    def finish_outputs(self):
        """out_idx of the outputs (negative, in return order), or None without T.empty."""
        if not self.outputs:
            return None
        if self.out_order is None:
            names = ", ".join(o.name for o in self.outputs)
            raise _SyntaxError(f"the T.empty output(s) {names} are never returned; end '{self.name}' with "
                               f"`return {names}`")
        n = len(self.outputs)
        return [i - n for i in self.out_order]

    # ---- macro parameters passed by reference (T.Ref) ------------------------------------------
    macro_refs = None

    def macro_params(self, names, params):
        super().macro_params(names, params)
        refs, self.macro_refs = self.macro_refs, None
        for k, load in (refs or {}).items():
            names[k] = (self.frame_ids[self.depth], self.depth, False, _ElementRef(load))

    def assign(self, names, name, value):
        rec = names.get(name)
        if rec is not None and rec[3].__class__ is _ElementRef and self.frame_ids[rec[1]] == rec[0] \
                and rec[1] <= self.depth and not isinstance(value, (Buffer, _core.BufferRegion)):
            self._hint = None
            load = rec[3].load
            self.b.emit_store(load.buffer, load.indices, value)
            return load
        return super().assign(names, name, value)

    # ---- control flow --------------------------------------------------------------------------
    def while_is_runtime(self, test):
        """Whether a `while` condition is a run-time value (`test` evaluates it)."""
        return self.cond(test()).__class__ is not bool

    # ---- probe overrides -----------------------------------------------------------------------
    def with_(self, names, obj, targets):
        if self.probe and isinstance(obj, Frame):
            raise _ProbeDone()
        return super().with_(names, obj, targets)

    def assert_(self, test, msg=None):
        if self.probe:
            try:
                return super().assert_(test, msg)
            except _SyntaxError:
                return None  # a run-time assert on a symbolic size: checked in the real build
        return super().assert_(test, msg)


# ---- the public primitives ---------------------------------------------------------------------

_SPLIT = re.compile(r"[\s,]+")


def const(name, dtype="int32"):
    """`M, N = T.const("M, N")`: sizes of an eager-style @tilelang.jit function, bound from the
    shapes of the tensors it is called with (or passed as keywords: `f.compile(M=..., N=...)`)."""
    ctx = current_or_none()
    if not isinstance(ctx, FuncContext) or not ctx.eager:
        raise _SyntaxError("T.const(...) declares the sizes of an eager-style @tilelang.jit function (one whose "
                           "tensor parameters are declared in its body); inside a @T.prim_func use a Python "
                           "value or T.dynamic(\"name\"). (An eager function must be defined in a .py file: its "
                           "source is read to recognise the style.)")
    if not isinstance(name, str):
        raise TypeError(f"T.const takes the names as a string, e.g. T.const(\"M, N\"); got {name!r}")
    names = [n for n in _SPLIT.split(name.strip()) if n]
    if not names:
        raise ValueError("T.const needs at least one name")
    values = ctx.const(names, dtype)
    return values[0] if len(names) == 1 and "," not in name and " " not in name.strip() else tuple(values)


def empty(*shape, dtype="float32"):
    """`C = T.empty((M, N), dtype)`: an output of the function, allocated by the runtime and
    returned to the caller (`return C`)."""
    ctx = current("T.empty")
    if not isinstance(ctx, FuncContext):
        raise _SyntaxError("T.empty(...) declares an output of a kernel function; call it in the body of an "
                           "eager-style @tilelang.jit function or a @T.prim_func, outside T.Kernel")
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        dims = list(shape[0])
    elif len(shape) == 2 and isinstance(shape[0], (tuple, list)):
        dims, dtype = list(shape[0]), shape[1]
    elif shape and all(isinstance(d, (int, _core.PrimExpr)) and not isinstance(d, bool) for d in shape):
        dims = list(shape)
    else:
        raise TypeError(f"T.empty: invalid shape {shape!r}; write T.empty((M, N), dtype)")
    return ctx.empty(dims, dtype)


# ---- the eager signature -----------------------------------------------------------------------

class EagerSpec:
    """What the JIT needs to know about an eager-style function, from its source and signature."""

    __slots__ = ("func", "signature", "param_names", "runtime_params", "runtime_index", "var_kw", "annotated")

    def __init__(self, func, signature, runtime_params, annotated):
        self.func = func
        self.signature = signature
        self.annotated = annotated  # run-time parameters declared in the signature: name -> annotation
        self.param_names = [p.name for p in signature.parameters.values()
                            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY, p.POSITIONAL_ONLY)]
        self.runtime_params = [n for n in self.param_names if n in runtime_params]
        self.runtime_index = {n: i for i, n in enumerate(self.runtime_params)}
        self.var_kw = any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values())


def _function_def(func):
    try:
        src = textwrap.dedent(inspect.getsource(func))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError):
        return None
    node = tree.body[0] if tree.body else None
    return node if isinstance(node, ast.FunctionDef) else None


def _is_prim_func_decorator(d):
    target = d.func if isinstance(d, ast.Call) else d
    return (isinstance(target, ast.Attribute) and target.attr == "prim_func") or \
        (isinstance(target, ast.Name) and target.id == "prim_func")


def _signature_runtime(signature):
    """Parameters annotated in the signature with T.Tensor(...) or a T.<dtype> object (a plain
    `int` / `str` annotation marks a compile-time parameter)."""
    out = {}
    for p in signature.parameters.values():
        ann = p.annotation
        if isinstance(ann, (TensorSpec, _dtype_cls, PointerType)):
            out[p.name] = ann
    return out


def _scope_of(func):
    """The names visible in `func`'s body: its globals and closure."""
    scope = dict(func.__globals__)
    if func.__closure__:
        for n, cell in zip(func.__code__.co_freevars, func.__closure__):
            try:
                scope[n] = cell.cell_contents
            except ValueError:
                pass
    return scope


def _names(scope, expr, targets):
    """Whether `expr` (a Name or `module.attr`) denotes one of `targets` in `scope` (`T.const`
    under any alias of tilelang.language)."""
    try:
        if isinstance(expr, ast.Name):
            obj = scope.get(expr.id)
        elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            obj = getattr(scope.get(expr.value.id), expr.attr, None)
        else:
            return False
    except Exception:  # noqa: BLE001 - e.g. a T.* name that raises NotImplementedError
        return False
    return any(obj is t for t in targets)


def _kernel_frame():
    from .kernel import Kernel  # noqa: PLC0415
    return Kernel


def eager_spec(func):
    """The EagerSpec of `func` when its body is written in the eager style, else None (a builder
    that returns a @T.prim_func: the lazy style)."""
    fdef = _function_def(func)
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    if fdef is None:
        return None
    params = {a.arg for a in fdef.args.args + fdef.args.kwonlyargs + fdef.args.posonlyargs}
    scope = _scope_of(func)
    declared = set()
    eager_marks = False
    for node in ast.walk(fdef):
        if node is not fdef and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(_is_prim_func_decorator(d) for d in node.decorator_list):
                return None  # a builder defining an inner @T.prim_func
        if isinstance(node, ast.AnnAssign) and node.value is None and isinstance(node.target, ast.Name) \
                and node.target.id in params:
            declared.add(node.target.id)
        elif isinstance(node, ast.Call) and _names(scope, node.func, (const, empty)):
            eager_marks = True
    for stmt in fdef.body:
        if isinstance(stmt, ast.With) and any(isinstance(i.context_expr, ast.Call) and _names(
                scope, i.context_expr.func, (_kernel_frame(),)) for i in stmt.items):
            eager_marks = True
    annotated = _signature_runtime(signature)
    declared |= set(annotated)
    if not declared and not eager_marks:
        return None
    return EagerSpec(func, signature, declared, annotated)


# ---- parsing -----------------------------------------------------------------------------------

class ProbeResult:
    """The outcome of a probe parse: where each unknown constant takes its value from."""

    __slots__ = ("sources", "consts", "stopped_by")

    def __init__(self, sources, consts, stopped_by):
        self.sources = sources        # const name -> (runtime param, "shape"|"stride", dim)
        self.consts = consts          # every const name the body declared (before the first T.Kernel)
        self.stopped_by = stopped_by  # the exception that ended the probe early, or None


def _call_values(spec, arguments):
    """Keyword arguments for the rewritten function: compile-time values, and placeholders for the
    run-time parameters."""
    values = {}
    for n in spec.param_names:
        if n in spec.runtime_index:
            values[n] = Undeclared(n)
        elif n in arguments:
            values[n] = arguments[n]
    return values


def parse_eager(spec, arguments, const_values, probe=False):
    """Parses the eager body of `spec.func`. `arguments`: the compile-time parameters by name
    (defaults applied); `const_values`: T.const values known so far. Returns a ProbeResult when
    `probe`, else the parser.PrimFunc (with out_idx) of the fully bound kernel."""
    from . import parser as _parser  # noqa: PLC0415 (cycle)
    from .context import context_stack  # noqa: PLC0415
    func = spec.func
    comp = _parser._compile(func, "eager")
    ctx = FuncContext(func.__name__, spec.runtime_params, const_values, probe)
    fn = _parser._instantiate(comp, func, ctx)
    stack = context_stack()
    stack.append(ctx)
    stopped = None
    try:
        values = _call_values(spec, arguments)
        ctx.at(comp.def_span)
        for n, ann in spec.annotated.items():
            values[n] = ctx.declare_param({}, n, ann)
        try:
            fn(**values)
        except _ProbeDone:
            pass
        except Exception as e:  # noqa: BLE001
            if not probe:
                raise
            _parser._locate(e, ctx.span)
            stopped = e
        if probe:
            return ProbeResult(dict(ctx.const_sources), list(ctx.const_names), stopped)
        missing = [n for n in spec.runtime_params if n not in ctx.declared]
        if missing:
            raise _SyntaxError(f"{comp.def_span}: parameter(s) {', '.join(missing)} of '{func.__name__}' are never "
                               f"declared; write `{missing[0]}: T.Tensor(shape, dtype)` in the body (or annotate "
                               "it in the signature)")
        if ctx.depth != 0:
            raise _SyntaxError(f"{ctx.depth} block(s) left open at the end of '{func.__name__}'")
        out_idx = ctx.finish_outputs()
        params = [ctx.declared[n] for n in spec.runtime_params]
        params = [p.resolve(func.__name__) if isinstance(p, HandleParam) else p for p in params] + ctx.outputs
        attrs = {"global_symbol": func.__name__}
        attrs.update(ctx.func_attrs)
        ir = ctx.finish_func(func.__name__, params, attrs, comp.def_span)
    except Exception as e:
        _parser._locate(e, ctx.span)
        raise
    finally:
        stack.pop()
    _parser._verify(ir)
    return _parser.PrimFunc(ir, func, out_idx)
