"""Test helpers: evaluate integer IR expressions and walk statements through the bindings.

The evaluator is an independent reading of the IR semantics (C division for div/mod, Python
floor semantics for floordiv/floormod), used to check the index arithmetic the frontend emits
(persistent tile decode, Ascend swizzle, stepped loops) against direct Python implementations.
"""
import math
import os

import tilelang.language as T  # noqa: F401  (makes sure the package and its hooks are loaded)


def _tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_BIN = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: _tdiv(a, b) if isinstance(a, int) and isinstance(b, int) else a / b,
    "mod": lambda a, b: a - _tdiv(a, b) * b if isinstance(a, int) else math.fmod(a, b),
    "floordiv": lambda a, b: a // b,
    "floormod": lambda a, b: a % b,
    "min": min,
    "max": max,
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "and": lambda a, b: bool(a) and bool(b),
    "or": lambda a, b: bool(a) or bool(b),
    "bitand": lambda a, b: a & b,
    "bitor": lambda a, b: a | b,
    "bitxor": lambda a, b: a ^ b,
    "shl": lambda a, b: a << b,
    "shr": lambda a, b: a >> b,
}


def evaluate(e, env):
    """Value of expression `e` with variables bound by `env` (a dict Var -> value)."""
    k = e.kind
    if k in ("int", "float"):
        return e.value
    if k == "var":
        return env[e]
    ops = e.operands
    if k == "binary":
        return _BIN[e.op](evaluate(ops[0], env), evaluate(ops[1], env))
    if k == "unary":
        v = evaluate(ops[0], env)
        return {"neg": lambda x: -x, "not": lambda x: not x, "bitnot": lambda x: ~x}[e.op](v)
    if k == "select":
        return evaluate(ops[1], env) if evaluate(ops[0], env) else evaluate(ops[2], env)
    if k == "cast":
        v = evaluate(ops[0], env)
        return int(v) if e.dtype.startswith(("int", "uint")) else float(v) if e.dtype.startswith("float") else v
    raise NotImplementedError(f"evaluate: {k}")


def lets_until(stmt, stop_kind):
    """Collects the let bindings from `stmt` down to the first statement of kind `stop_kind`."""
    lets = []
    s = stmt
    while s is not None and s.kind != stop_kind:
        if s.kind == "let":
            lets.append((s.var, s.value))
            s = s.body
        elif s.kind == "seq":
            s = s.seq[0]
        else:
            s = s.body
    return lets, s


def find(stmt, pred):
    """All statements under `stmt` (pre-order) for which pred(stmt) is true."""
    out = []
    stack = [stmt]
    while stack:
        s = stack.pop()
        if s is None:
            continue
        if pred(s):
            out.append(s)
        kids = []
        if s.kind == "seq":
            kids = list(s.seq)
        elif s.kind == "if":
            kids = [s.then_case, s.else_case]
        elif s.body is not None:
            kids = [s.body]
        stack.extend(reversed(kids))
    return out


def tile_ops(node, op=None):
    """Tile ops under a PrimFunc (Python or IR) or a statement."""
    from tilelang import _core  # noqa: PLC0415
    body = node if isinstance(node, _core.Stmt) else node.body
    return find(body, lambda s: s.kind == "tile_op" and (op is None or s.op == op))


THIS_FILE = os.path.abspath(__file__)
