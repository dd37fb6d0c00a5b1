"""@T.prim_func and @T.macro: from the Python source of a function to IR.

How it works (docs/FRONTEND.md has the user-level account):

1. Once per function (cached on its code object) the source is read with `inspect`, parsed with
   `ast`, checked for unsupported syntax (TileLangSyntaxError with file:line:col) and rewritten:
   statements whose meaning depends on compile-time vs run-time values become calls into the parse
   Context (`if` -> `_tl_ctx_.if_`, `for` -> `_tl_ctx_.for_`, `x = v` -> `_tl_ctx_.assign`, `and`
   -> `_tl_ctx_.land`, ...), and every statement is preceded by `_tl_ctx_.at(span)`. The result is
   compiled with the original file name and line numbers.
2. Each parse runs the compiled function natively, with the original closure cells and globals:
   Python values are compile-time constants, IR values build IR through operator overloading, and
   T.* calls emit statements through the Context's IRBuilder.

Errors raised while running keep their type and gain the statement's location as a prefix.
"""
import ast
import copy
import functools
import inspect
import sys
import types

from .. import _core
from .allocate import TensorSpec
from .context import context_stack, current_or_none
from .dtypes import dtype as _dtype_cls, to_dtype
from .eager import FuncContext
from .tir_compat import HandleParam, PointerType

__all__ = ["prim_func", "macro", "PrimFunc", "Macro", "Ref"]

_SyntaxError = _core.TileLangSyntaxError

_C = "_tl_ctx_"     # the Context
_S = "_tl_spans_"   # the statement spans
_N = "_tl_n_"       # per-function name records (Context.bind)
_D = "_tl_d0_"      # IR frame depth at function entry
_WHILE_BOUND = 2**31 - 1  # trip bound of the serial loop a run-time `while` becomes


# ---- AST helpers -----------------------------------------------------------------------------------

def _name(n, store=False):
    return ast.Name(id=n, ctx=ast.Store() if store else ast.Load())


def _call(method, *args):
    return ast.Call(func=ast.Attribute(value=_name(_C), attr=method, ctx=ast.Load()), args=list(args), keywords=[])


def _const(v):
    return ast.Constant(value=v)


def _thunk(expr):
    return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                                         kwarg=None, defaults=[]), body=expr)


def _assign(target, value):
    return ast.Assign(targets=[target], value=value)


def _expr_stmt(value):
    return ast.Expr(value=value)


_CMP_NAMES = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne",
              ast.Is: "is", ast.IsNot: "is_not", ast.In: "in", ast.NotIn: "not_in"}

_REJECTED_STMTS = {
    "Try": "try/except is not supported inside a kernel (device code cannot catch errors); move it outside "
           "the @T.prim_func",
    "TryStar": "try/except* is not supported inside a kernel; move it outside the @T.prim_func",
    "FunctionDef": "nested function definitions are not supported inside a kernel; define a @T.macro outside "
                   "the @T.prim_func and call it",
    "AsyncFunctionDef": "async functions are not supported inside a kernel",
    "ClassDef": "class definitions are not supported inside a kernel; define the class outside the @T.prim_func",
    "Global": "'global' is not supported inside a kernel; kernel variables are local to it",
    "Nonlocal": "'nonlocal' is not supported inside a kernel; kernel variables are local to it",
    "Delete": "'del' is not supported inside a kernel; names stay bound until the end of the kernel",
    "Import": "import inside a kernel is not supported; import at module level",
    "ImportFrom": "import inside a kernel is not supported; import at module level",
    "AsyncFor": "'async for' is not supported inside a kernel",
    "AsyncWith": "'async with' is not supported inside a kernel",
    "Match": "'match' is not supported inside a kernel; use if/elif",
}


class _ExprRewriter(ast.NodeTransformer):
    """Expressions: logical operators, chained comparisons and conditional expressions on IR
    values; rejects the expression forms a kernel cannot have."""

    def __init__(self, owner):
        self.owner = owner

    def visit_BoolOp(self, node):  # noqa: N802
        vals = [self.visit(v) for v in node.values]
        method = "land" if isinstance(node.op, ast.And) else "lor"
        return ast.copy_location(_call(method, vals[0], *[_thunk(v) for v in vals[1:]]), node)

    def visit_UnaryOp(self, node):  # noqa: N802
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_call("lnot", self.visit(node.operand)), node)
        return self.generic_visit(node)

    def visit_Compare(self, node):  # noqa: N802
        if len(node.ops) == 1:
            return self.generic_visit(node)
        args = [self.visit(node.left)]
        for op, right in zip(node.ops, node.comparators):
            args.append(_const(_CMP_NAMES[type(op)]))
            args.append(_thunk(self.visit(right)))
        return ast.copy_location(_call("cmp_chain", *args), node)

    def visit_IfExp(self, node):  # noqa: N802
        return ast.copy_location(_call("ifexp", self.visit(node.test), _thunk(self.visit(node.body)),
                                       _thunk(self.visit(node.orelse))), node)

    def _comprehension(self, node):
        # Comprehensions are unrolled at parse time: `range` in them must have compile-time bounds.
        for gen in node.generators:
            it = gen.iter
            if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" \
                    and not it.keywords:
                gen.iter = ast.copy_location(_call("static_range", *it.args), it)
        return self.generic_visit(node)

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension  # noqa: N815

    def visit_NamedExpr(self, node):  # noqa: N802
        raise self.owner.err(node, "the walrus operator ':=' is not supported inside a kernel; assign in a "
                                   "separate statement")

    def visit_Yield(self, node):  # noqa: N802
        raise self.owner.err(node, "'yield' is not supported inside a kernel (a kernel is not a generator)")

    visit_YieldFrom = visit_Yield  # noqa: N815

    def visit_Await(self, node):  # noqa: N802
        raise self.owner.err(node, "'await' is not supported inside a kernel")


class _Rewriter:
    """kind: "prim_func", "macro", or "eager" (the body of an eager-style @tilelang.jit function:
    language/eager.py)."""

    def __init__(self, filename, kind, func_name):
        self.file = filename
        self.kind = kind
        self.func_name = func_name
        self.params = set()
        self.spans = []
        self.ntmp = 0
        self.exprs = _ExprRewriter(self)

    def err(self, node, msg):
        return _SyntaxError(f"{self.file}:{node.lineno}:{node.col_offset + 1}: {msg}")

    def tmp(self):
        self.ntmp += 1
        return f"_tl_t{self.ntmp}_"

    def expr(self, node):
        return self.exprs.visit(node)

    # ---- statements ----------------------------------------------------------------------------------
    def body(self, stmts, top=False):
        out = []
        for i, s in enumerate(stmts):
            if top and i == 0 and isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) \
                    and isinstance(s.value.value, str):
                continue  # docstring
            out.extend(self.stmt(s))
        return out or [ast.Pass()]

    def stmt(self, s):
        kind = type(s).__name__
        if kind in _REJECTED_STMTS:
            raise self.err(s, _REJECTED_STMTS[kind])
        handler = getattr(self, "s_" + kind, None)
        if handler is None:
            raise self.err(s, f"'{kind}' statements are not supported inside a kernel")
        k = len(self.spans)
        self.spans.append((s.lineno, s.col_offset + 1))
        at = _expr_stmt(_call("at", ast.Subscript(value=_name(_S), slice=_const(k), ctx=ast.Load())))
        try:
            out = [at] + handler(s)
        except RecursionError:  # the innermost statement reports it
            raise self.err(s, _TOO_DEEP) from None
        for n in out:
            ast.copy_location(n, s)
        return out

    def s_Pass(self, s):  # noqa: N802
        return [s]

    def s_Expr(self, s):  # noqa: N802
        return [ast.Expr(value=self.expr(s.value))]

    def s_Raise(self, s):  # noqa: N802
        return [self.exprs.generic_visit(s)]

    def s_Assert(self, s):  # noqa: N802
        msg = self.expr(s.msg) if s.msg is not None else _const(None)
        return [_expr_stmt(_call("assert_", self.expr(s.test), msg))]

    def s_Assign(self, s):  # noqa: N802
        value = self.expr(s.value)
        if len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            n = s.targets[0].id
            return [_assign(_name(n, True), _call("assign", _name(_N), _call("hint", _const(n)), value))]
        t = self.tmp()
        out = [_assign(_name(t, True), value)]
        for target in s.targets:
            out += self.assign_to(target, _name(t))
        return out

    def assign_to(self, target, value):
        if isinstance(target, ast.Name):
            return [_assign(_name(target.id, True), _call("assign", _name(_N), _const(target.id), value))]
        if isinstance(target, (ast.Subscript, ast.Attribute)):
            return [_assign(self.expr(target), value)]
        if isinstance(target, (ast.Tuple, ast.List)):
            for e in target.elts:
                if isinstance(e, ast.Starred):
                    raise self.err(e, "starred assignment targets (a, *b = ...) are not supported inside a kernel; "
                                      "unpack a fixed number of values")
            t = self.tmp()
            out = [_assign(_name(t, True), _call("unpack", value, _const(len(target.elts))))]
            for k, e in enumerate(target.elts):
                out += self.assign_to(e, ast.Subscript(value=_name(t), slice=_const(k), ctx=ast.Load()))
            return out
        if isinstance(target, ast.Starred):
            raise self.err(target, "starred assignment targets are not supported inside a kernel")
        raise self.err(target, f"cannot assign to a {type(target).__name__} inside a kernel")

    def s_AugAssign(self, s):  # noqa: N802
        value = self.expr(s.value)
        if isinstance(s.target, ast.Name):
            n = s.target.id
            new = ast.BinOp(left=_name(n), op=s.op, right=value)
            return [_assign(_name(n, True), _call("assign", _name(_N), _const(n), new))]
        return [ast.AugAssign(target=self.expr(s.target), op=s.op, value=value)]

    def s_AnnAssign(self, s):  # noqa: N802
        if self.kind == "eager" and s.value is None and isinstance(s.target, ast.Name) and s.target.id in self.params:
            # `A: T.Tensor((M, N), dtype)`: the declaration of a run-time parameter.
            n = s.target.id
            return [_assign(_name(n, True), _call("declare_param", _name(_N), _const(n), self.expr(s.annotation)))]
        if not isinstance(s.target, ast.Name):
            raise self.err(s, "annotated assignment needs a plain name target (x: T.int32 = v)")
        if s.value is None:
            raise self.err(s, f"'{s.target.id}' is declared without a value; write `{s.target.id}: dtype = value`, "
                              f"or `{s.target.id} = T.alloc_var(dtype)` for a mutable scalar")
        n = s.target.id
        return [_assign(_name(n, True), _call("ann_assign", _name(_N), _const(n), self.expr(s.annotation),
                                              self.expr(s.value)))]

    def s_If(self, s):  # noqa: N802
        c = self.tmp()
        out = [_assign(_name(c, True), _call("if_", self.expr(s.test))),
               ast.If(test=_name(c), body=self.body(s.body), orelse=[])]
        if s.orelse:
            out.append(ast.If(test=_call("else_", _name(c)), body=self.body(s.orelse), orelse=[]))
        out.append(_expr_stmt(_call("endif", _name(c))))
        return out

    def _target_names(self, target, what):
        if isinstance(target, ast.Name):
            return (target.id,)
        if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
            return tuple(e.id for e in target.elts)
        raise self.err(target, f"the target of {what} must be a name or a tuple of names")

    def s_For(self, s):  # noqa: N802
        if s.orelse:
            raise self.err(s, "'for ... else' is not supported inside a kernel (the else block would never run "
                              "as Python expects); move the else code after the loop")
        names = self._target_names(s.target, "a for loop")
        it = s.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
            if it.keywords:
                raise self.err(it, "range() takes no keyword arguments")
            it = _call("range_", *[self.expr(a) for a in it.args])
        else:
            it = self.expr(it)
        target = ast.Tuple(elts=[_name(n, True) for n in names], ctx=ast.Store()) \
            if not isinstance(s.target, ast.Name) else _name(names[0], True)
        return [ast.For(target=target, iter=_call("for_", _name(_N), it, _const(names)), body=self.body(s.body),
                        orelse=[], type_comment=None)]

    def s_While(self, s):  # noqa: N802
        if s.orelse:
            raise self.err(s, "'while ... else' is not supported inside a kernel")
        # A run-time condition becomes a serial IR loop that no kernel runs to its bound, left by
        # `if not cond: break` at the top of each iteration (a `continue` re-tests the condition).
        guard = ast.copy_location(ast.If(test=ast.copy_location(ast.UnaryOp(op=ast.Not(), operand=copy.deepcopy(
            s.test)), s.test), body=[ast.copy_location(ast.Break(), s)], orelse=[]), s)
        it = ast.copy_location(ast.Call(func=ast.copy_location(ast.Name(id="range", ctx=ast.Load()), s),
                                        args=[ast.copy_location(_const(_WHILE_BOUND), s)], keywords=[]), s)
        target = ast.copy_location(ast.Name(id=self.tmp(), ctx=ast.Store()), s)
        runtime_loop = ast.copy_location(ast.For(target=target, iter=it, body=[guard] + copy.deepcopy(s.body),
                                                 orelse=[], type_comment=None), s)
        runtime_branch = self.s_For(runtime_loop)
        # A compile-time condition: a Python loop, unrolled at parse time.
        loop = ast.While(test=_call("static_cond", self.expr(copy.deepcopy(s.test))), body=self.body(s.body),
                         orelse=[])
        static_branch = [_expr_stmt(_call("loop_push_static")),
                         ast.Try(body=[loop], handlers=[], orelse=[], finalbody=[_expr_stmt(_call("loop_pop"))])]
        return [ast.If(test=_call("while_is_runtime", _thunk(self.expr(copy.deepcopy(s.test)))), body=runtime_branch,
                       orelse=static_branch)]

    @staticmethod
    def _merge_scale_targets(items):
        """`with T.Scale("device") as rank, world:` is, to Python, two with-items (the second one a
        bare name); TileScale means one item with two targets. Merge them."""
        out = []
        for item in items:
            prev = out[-1] if out else None
            if (prev is not None and item.optional_vars is None and isinstance(item.context_expr, ast.Name)
                    and isinstance(prev.context_expr, ast.Call)
                    and getattr(prev.context_expr.func, "attr", getattr(prev.context_expr.func, "id", None)) == "Scale"
                    and prev.optional_vars is not None):
                names = prev.optional_vars.elts if isinstance(prev.optional_vars, ast.Tuple) else [prev.optional_vars]
                tgt = ast.Tuple(elts=list(names) + [ast.Name(id=item.context_expr.id, ctx=ast.Store())],
                                ctx=ast.Store())
                out[-1] = ast.copy_location(ast.withitem(context_expr=prev.context_expr, optional_vars=tgt), prev)
                continue
            out.append(item)
        return out

    def s_With(self, s):  # noqa: N802
        items = []
        for item in self._merge_scale_targets(s.items):
            names = () if item.optional_vars is None else self._target_names(item.optional_vars, "'with ... as'")
            ctx_expr = _call("with_", _name(_N), self.expr(item.context_expr), _const(names))
            var = None
            if item.optional_vars is not None:
                # `as (pid,)`: the one variable of a one-dimensional T.Kernel, as `as pid`
                one = isinstance(item.optional_vars, ast.Name) or len(names) == 1
                var = _name(names[0], True) if one else \
                    ast.Tuple(elts=[_name(n, True) for n in names], ctx=ast.Store())
            items.append(ast.withitem(context_expr=ctx_expr, optional_vars=var))
        return [ast.With(items=items, body=self.body(s.body), type_comment=None)]

    def s_Break(self, s):  # noqa: N802
        return [ast.If(test=_call("brk", _const(True)), body=[ast.Break()], orelse=[])]

    def s_Continue(self, s):  # noqa: N802
        return [ast.If(test=_call("brk", _const(False)), body=[ast.Continue()], orelse=[])]

    def s_Return(self, s):  # noqa: N802
        if self.kind != "macro" and s.value is not None:
            # A kernel function returns only its T.empty outputs (checked when it runs).
            return [_expr_stmt(_call("ret_check", _name(_D))), _expr_stmt(_call("func_return", self.expr(s.value))),
                    ast.Return(value=None)]
        value = None if s.value is None else self.expr(s.value)
        return [_expr_stmt(_call("ret_check", _name(_D))), ast.Return(value=value)]

    # ---- the function --------------------------------------------------------------------------------
    def function(self, fdef):
        a = fdef.args
        self.params = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
        if self.kind == "prim_func":
            if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
                raise self.err(fdef, "@T.prim_func parameters must be plain positional parameters, each annotated "
                                     "with T.Tensor(shape, dtype) or a scalar dtype")
            args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=p.arg) for p in a.args], vararg=None,
                                 kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
        else:
            def strip(p):
                return None if p is None else ast.arg(arg=p.arg)
            # Defaults are taken from the original function object, already evaluated.
            args = ast.arguments(posonlyargs=[strip(p) for p in a.posonlyargs], args=[strip(p) for p in a.args],
                                 vararg=strip(a.vararg), kwonlyargs=[strip(p) for p in a.kwonlyargs],
                                 kw_defaults=[None] * len(a.kwonlyargs), kwarg=strip(a.kwarg), defaults=[])
        prologue = [_assign(_name(_N, True), ast.Dict(keys=[], values=[])),
                    _assign(_name(_D, True), ast.Attribute(value=_name(_C), attr="depth", ctx=ast.Load()))]
        if self.kind == "macro":
            prologue.append(_expr_stmt(_call("macro_params", _name(_N),
                                             ast.Call(func=_name("locals"), args=[], keywords=[]))))
        for n in prologue:
            ast.copy_location(n, fdef)
        body = prologue + self.body(fdef.body, top=True)
        # Not named after the kernel: a name the body uses (the function's own, in a recursive call)
        # must stay a lookup in the original scope, not a closure cell of the maker below.
        fn = ast.FunctionDef(name=_BODY, args=args, body=body, decorator_list=[], returns=None,
                             type_comment=None)
        if hasattr(ast, "TypeVar"):  # Python 3.12+
            fn.type_params = []
        return ast.copy_location(fn, fdef)


_BODY = "_tl_kernel_body_"
_MAX_MACRO_RECURSION = 64  # a macro may call itself (a compile-time base case), this deep at most
_TOO_DEEP = ("this statement nests too deeply for the kernel parser (Python's recursion limit); compute the "
             "expression in steps through local variables (acc = T.alloc_var(dtype); acc = acc + ...)")


class _Compiled:
    __slots__ = ("code", "spans", "argnames", "def_span", "filename", "line")


_cache = {}


def _no_source(func, why):
    code = func.__code__
    return _SyntaxError(
        f"{code.co_filename}:{code.co_firstlineno}: cannot read the Python source of '{func.__qualname__}' ({why}). "
        "@T.prim_func and @T.macro parse the function's source, so define the kernel in a .py file (not in an "
        "interactive prompt, exec() or eval())")


def _compile(func, kind):
    # Code objects compare equal across files (co_filename is not part of equality): the file is part
    # of the key, or a kernel would report another file's locations.
    key = (func.__code__, func.__code__.co_filename, kind)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    code = func.__code__
    filename = code.co_filename
    try:
        lines, first = inspect.getsourcelines(func)
    except (OSError, TypeError) as e:
        raise _no_source(func, str(e)) from None
    src = "".join(lines)
    indented = lines[0][:1] in (" ", "\t")
    try:
        tree = ast.parse("if 1:\n" + src if indented else src, filename)
    except SyntaxError as e:
        raise _no_source(func, f"its source does not parse on its own: {e.msg}") from None
    except (RecursionError, MemoryError):
        raise _SyntaxError(f"{filename}:{code.co_firstlineno}: '{func.__qualname__}' nests too deeply for Python's "
                           "parser; compute deep expressions in steps through local variables") from None
    fdef = tree.body[0].body[0] if indented else tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise _no_source(func, "it is not a def statement (lambdas cannot be kernels)")
    ast.increment_lineno(fdef, first - (2 if indented else 1))

    rw = _Rewriter(filename, kind, func.__name__)
    inner = rw.function(fdef)
    maker = ast.FunctionDef(
        name="_tl_make_",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=_C), ast.arg(arg=_S)] +
                           [ast.arg(arg=n) for n in code.co_freevars if n not in (_C, _S)],
                           vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[inner, ast.Return(value=_name(_BODY))], decorator_list=[], returns=None, type_comment=None)
    if hasattr(ast, "TypeVar"):
        maker.type_params = []
    ast.copy_location(maker, fdef)
    module = ast.Module(body=[maker], type_ignores=[])
    ast.fix_missing_locations(module)
    try:
        module_code = compile(module, filename, "exec")
    except RecursionError:
        raise _SyntaxError(f"{filename}:{fdef.lineno}: '{func.__qualname__}' nests too deeply for Python's compiler; "
                           "compute deep expressions in steps through local variables") from None
    maker_code = next(c for c in module_code.co_consts if isinstance(c, types.CodeType))
    inner_code = next(c for c in maker_code.co_consts if isinstance(c, types.CodeType) and c.co_name == _BODY)
    # Tracebacks name the user's function.
    inner_code = inner_code.replace(co_name=fdef.name)
    if hasattr(inner_code, "co_qualname"):
        inner_code = inner_code.replace(co_qualname=func.__qualname__)

    comp = _Compiled()
    comp.code = inner_code
    # Span files are UTF-8: a path with bytes that are not (os.fsdecode gives lone surrogates) is shown
    # with those bytes escaped (\xff).
    shown = filename.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    comp.spans = [_core.Span(shown, line, col) for line, col in rw.spans]
    comp.argnames = [p.arg for p in fdef.args.args]
    comp.def_span = _core.Span(shown, fdef.lineno, fdef.col_offset + 1)
    comp.filename = filename
    comp.line = fdef.lineno
    _cache[key] = comp
    return comp


def _instantiate(comp, func, ctx):
    """The rewritten function bound to `ctx`, with the original's globals and closure cells."""
    cells = {}
    if func.__closure__:
        cells = dict(zip(func.__code__.co_freevars, func.__closure__))
    closure = []
    for n in comp.code.co_freevars:
        if n == _C:
            closure.append(types.CellType(ctx))
        elif n == _S:
            closure.append(types.CellType(comp.spans))
        else:
            closure.append(cells[n])
    fn = types.FunctionType(comp.code, func.__globals__, func.__name__, func.__defaults__, tuple(closure))
    if func.__kwdefaults__:
        fn.__kwdefaults__ = dict(func.__kwdefaults__)
    return fn


def _locate(exc, span, note=""):
    """Prefixes the exception's message with the kernel source location (once)."""
    if span is None or getattr(exc, "_tl_located", False):
        return
    prefix = f"{span}: {note}"
    try:
        if exc.args and isinstance(exc.args[0], str):
            exc.args = (prefix + exc.args[0],) + tuple(exc.args[1:])
        elif not exc.args:
            exc.args = (prefix.rstrip(": "),)
        else:
            exc.args = (prefix + str(exc.args[0]),) + tuple(exc.args[1:])
        exc._tl_located = True
    except (AttributeError, TypeError):
        pass


def _annotation(func, name, comp, outer_locals):
    ann = func.__annotations__.get(name, inspect.Parameter.empty)
    if not isinstance(ann, str):
        return ann
    # `from __future__ import annotations`: evaluate the text where the def statement ran (the
    # enclosing function's locals, e.g. a @tilelang.jit builder's parameters, then the globals).
    scope = dict(func.__globals__)
    scope.update(outer_locals or {})
    if func.__closure__:
        for n, c in zip(func.__code__.co_freevars, func.__closure__):
            try:
                scope[n] = c.cell_contents
            except ValueError:
                pass
    try:
        return eval(ann, scope)  # noqa: S307 - the user's own annotation text
    except Exception as e:  # noqa: BLE001
        text = ann.strip("'\"")
        try:
            return to_dtype(text)
        except (ValueError, TypeError):
            raise _SyntaxError(f"{comp.def_span}: cannot evaluate the annotation {ann!r} of parameter '{name}': "
                               f"{type(e).__name__}: {e}") from None


def _make_params(func, comp, outer_locals=None):
    params = []
    for name in comp.argnames:
        ann = _annotation(func, name, comp, outer_locals)
        where = str(comp.def_span)
        if ann is inspect.Parameter.empty:
            raise _SyntaxError(f"{where}: parameter '{name}' of '{func.__name__}' has no annotation; annotate tensors "
                               "with T.Tensor(shape, dtype) and scalars with a dtype such as T.int32")
        if isinstance(ann, TensorSpec):
            try:
                params.append(ann.make(name, comp.def_span))
            except Exception as e:
                _locate(e, comp.def_span, f"parameter '{name}': ")
                raise
            continue
        if isinstance(ann, PointerType):  # `A_ptr: T.handle`, viewed by T.match_buffer in the body
            params.append(HandleParam(name))
            continue
        if isinstance(ann, (_dtype_cls, str)) or ann in (int, float, bool):
            try:
                params.append(_core.Var(name, to_dtype(ann)))
            except (ValueError, TypeError) as e:
                _locate(e, comp.def_span, f"parameter '{name}': ")
                raise
            continue
        raise _SyntaxError(f"{where}: parameter '{name}' of '{func.__name__}' is annotated with {ann!r}; use "
                           "T.Tensor(shape, dtype) / T.StridedTensor(...) for tensors or a dtype (T.int32, "
                           "T.float32, ...) for scalars")
    return params


class PrimFunc:
    """The result of @T.prim_func: the IR function (`.ir`, a tl::PrimFunc) and its Python origin."""

    __slots__ = ("ir", "func", "out_idx", "__weakref__")

    def __init__(self, ir, func=None, out_idx=None):
        self.ir = ir
        self.func = func
        self.out_idx = out_idx  # from `return` of T.empty outputs; compile() uses it as out_idx

    @property
    def name(self):
        return self.ir.name

    @property
    def __name__(self):  # noqa: PLW3201
        return self.ir.name

    @property
    def params(self):
        return self.ir.params

    @property
    def attrs(self):
        return self.ir.attrs

    @property
    def body(self):
        return self.ir.body

    def script(self):
        """The IR as text (docs/IR_TEXT.md grammar)."""
        return self.ir.script()

    def with_attr(self, key, value):
        return PrimFunc(self.ir.with_attr(key, value), self.func, self.out_idx)

    def __repr__(self):
        return self.ir.script()

    def __call__(self, *args, **kwargs):
        raise TypeError(f"'{self.name}' is a @T.prim_func (IR), not a compiled kernel; compile it with "
                        "tilelang.compile(func, out_idx=...) or return it from a @tilelang.jit function")


def _parse(func, outer_locals=None):
    comp = _compile(func, "prim_func")
    params = _make_params(func, comp, outer_locals)
    ctx = FuncContext(func.__name__)
    fn = _instantiate(comp, func, ctx)
    stack = context_stack()
    stack.append(ctx)
    try:
        fn(*params)
        if ctx.depth != 0:  # only reachable through a frame left open by an exception handler
            raise _SyntaxError(f"{ctx.depth} block(s) left open at the end of '{func.__name__}'")
        out_idx = ctx.finish_outputs()
        attrs = {"global_symbol": func.__name__}
        attrs.update(ctx.func_attrs)
        params = [p.resolve(func.__name__) if isinstance(p, HandleParam) else p for p in params]
        ir = ctx.finish_func(func.__name__, params + ctx.outputs, attrs, comp.def_span)
    except NameError as e:
        if getattr(e, "name", None) != func.__name__:
            _locate(e, ctx.span)
            raise
        raise _SyntaxError(f"{ctx.span}: kernel '{func.__name__}' calls itself: a @T.prim_func is a whole kernel "
                           "and cannot be called from a kernel body; put the shared code in a @T.macro (and "
                           "repeat with a loop, not recursion)") from None
    except Exception as e:
        _locate(e, ctx.span)
        raise
    finally:
        stack.pop()
    _verify(ir)
    return PrimFunc(ir, func, out_idx)


def _verify(ir):
    """Structural checks (ir/verifier.h), a few microseconds: a name bound inside a run-time if or
    loop and used after it is reported here, at the statement that uses it."""
    try:
        _core.verify(ir)
    except _core.VerifyError as e:
        if e.args and "is used outside any scope that defines it" in str(e.args[0]):
            e.args = (e.args[0] + "\n  hint: a kernel variable assigned inside an `if` or a loop only exists "
                      "there; declare it before the block with `name = T.alloc_var(dtype)` and assign to it "
                      "inside",) + e.args[1:]
        raise


def prim_func(func=None, *, private=False, **_):
    """Parses a kernel: `@T.prim_func def main(A: T.Tensor((M, N), "float16"), ...)`."""
    if func is None:
        return lambda f: prim_func(f, _outer=sys._getframe(1))
    if isinstance(func, PrimFunc):
        return func
    if not isinstance(func, types.FunctionType):
        raise TypeError(f"@T.prim_func decorates a function, got {type(func).__name__}")
    outer = None
    if any(isinstance(a, str) for a in func.__annotations__.values()):
        frame = _.get("_outer") or sys._getframe(1)
        outer = frame.f_locals
    return _parse(func, outer)


class Ref:
    """`def m(x: T.Ref)`: a macro parameter passed by reference. The argument is a `T.alloc_var`
    variable or a buffer element (`A[i, j]`); assigning to the parameter in the macro stores
    there. (TileLang's `T.Var` annotation is accepted with the same meaning.)"""


class Macro:
    """A helper inlined into the kernel that calls it; it may take buffers and return values."""

    def __init__(self, func):
        if not isinstance(func, types.FunctionType):
            raise TypeError(f"@T.macro decorates a function, got {type(func).__name__}")
        self.func = func
        functools.update_wrapper(self, func)
        self._refs = tuple(n for n, a in func.__annotations__.items() if a is Ref or a == "T.Ref" or a == "Ref")
        self._signature = inspect.signature(func) if self._refs else None

    def _ref_args(self, args, kwargs):
        """Parameter name -> BufferLoad for the by-reference parameters given buffer elements."""
        bound = self._signature.bind(*args, **kwargs)
        loads = {}
        for name in self._refs:
            if name not in bound.arguments:
                continue
            v = bound.arguments[name]
            if v.__class__ is _core.BufferLoad:
                loads[name] = v
            elif not (v.__class__ is _core.Buffer and v.scope == "local.var"):
                raise ValueError(f"argument '{name}' of macro '{self.func.__name__}' is annotated T.Ref: pass a "
                                 f"T.alloc_var variable or a buffer element (A[i]), got {v!r}")
        return loads

    def __call__(self, *args, **kwargs):
        ctx = current_or_none()
        if ctx is None:
            raise _SyntaxError(f"@T.macro '{self.func.__name__}' can only be called while a @T.prim_func is "
                               "being parsed (from a kernel body or another macro)")
        caller = ctx.span
        if ctx.macro_stack.count(self) >= _MAX_MACRO_RECURSION:
            err = _SyntaxError(f"{caller}: macro '{self.func.__name__}' is expanded recursively "
                               f"{_MAX_MACRO_RECURSION} levels deep: macros are expanded inline while the kernel "
                               "is parsed, so a macro that calls itself needs a base case decided by Python values "
                               "(not kernel values); write run-time repetition as a loop (T.serial / T.unroll)")
            err._tl_located = True
            raise err
        fn = ctx.macro_cache.get(self)
        if fn is None:
            fn = _instantiate(_compile(self.func, "macro"), self.func, ctx)
            ctx.macro_cache[self] = fn
        if self._refs:
            ctx.macro_refs = self._ref_args(args, kwargs)  # consumed by the macro's prologue (macro_params)
        ctx.macro_stack.append(self)
        try:
            result = fn(*args, **kwargs)
        except Exception as e:
            _locate(e, ctx.span, f"in macro '{self.func.__name__}' (called from {caller}): ")
            raise
        finally:
            ctx.macro_stack.pop()
        if caller is not None:
            ctx.at(caller)
        return result

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)


def macro(func=None, *, hygienic=True):
    """Declares an inlined helper: `@T.macro def step(A_s, k): ...`."""
    if func is None:
        return Macro
    return Macro(func)
