"""Generator of small random TileLang programs (element-wise and row reductions) with their numpy
references, for differential testing of the targets (tests/python/fuzz/test_random_programs.py).

Each program is Python source text (written to a file and imported, so a failure can be reproduced
by running that file) plus a reference computed with numpy. The choices cover what users write in
element-wise and reduction kernels: dtypes int8/uint8/int16/int32/float16/bfloat16/float32, values
bound by Python assignments and used several times (let-bindings), min/max against integer or
float constants, casts, ragged tails, and the loop forms T.Parallel (1-D, 2-D), T.serial, T.unroll,
T.vectorized inside T.Parallel, and T.Pipelined with a shared-memory stage.

Integer arithmetic wraps at its type's width (the IR's meaning; numpy's too). Float results are
compared within a bound from a forward error analysis of the expression, per element, in the unit
roundoff of the computing type (cpu computes 16-bit floats in float32, cuda in the 16-bit type:
both lie inside the bound).
"""
import importlib.util
import os
import textwrap

import ml_dtypes
import numpy as np

INT_TYPES = ("int8", "uint8", "int16", "int32")
FLOAT_TYPES = ("float16", "bfloat16", "float32")


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def unit_roundoff(name):
    return {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24}.get(name, 0.0)


def subnormal_roundoff(name):
    """The absolute rounding error in the subnormal range (half the smallest spacing)."""
    return {"float16": 2.0 ** -25, "bfloat16": 2.0 ** -134, "float32": 2.0 ** -150}.get(name, 0.0)


class Value:
    """A reference value: numpy array (float64 for floats, the exact type for integers) and, for
    floats, a per-element bound on its error."""

    def __init__(self, v, err=None):
        self.v = v
        self.err = err


class Expr:
    """An expression over the loaded values: its source text and how to evaluate it in numpy."""

    def __init__(self, src, ev, dtype):
        self.src, self.ev, self.dtype = src, ev, dtype


class ProgramGen:
    def __init__(self, rng):
        self.rng = rng

    def choice(self, xs):
        return xs[int(self.rng.integers(len(xs)))]

    # ---- expressions ----------------------------------------------------------------------
    def const(self, dtype):
        if dtype in INT_TYPES:
            info = np.iinfo(dtype)
            lo, hi = max(int(info.min), -100), min(int(info.max), 100)
            return int(self.rng.integers(lo, hi + 1))
        return float(self.choice([-1.5, -0.5, 0.25, 0.5, 1.0, 2.0, 3.0]))

    def expr(self, leaves, dtype, depth):
        """A random expression of type `dtype` over `leaves` (Exprs of that type)."""
        if depth == 0 or self.rng.random() < 0.25:
            return self.choice(leaves)
        is_int = dtype in INT_TYPES
        ops = ["+", "-", "*", "max", "min", "maxc", "minc", "abs"]
        if is_int:
            ops += ["&", ">>"]
        op = self.choice(ops)
        a = self.expr(leaves, dtype, depth - 1)
        u, tiny = unit_roundoff(dtype), subnormal_roundoff(dtype)
        if op in ("+", "-", "*", "max", "min"):
            b = self.expr(leaves, dtype, depth - 1)
            if op in ("max", "min"):
                src = f"T.{op}({a.src}, {b.src})"
            else:
                src = f"({a.src} {op} {b.src})"

            def ev(env, a=a, b=b, op=op):
                x, y = a.ev(env), b.ev(env)
                if op in ("max", "min"):
                    f = np.maximum if op == "max" else np.minimum
                    err = None if is_int else np.maximum(x.err, y.err)
                    return Value(f(x.v, y.v), err)
                with np.errstate(over="ignore"):
                    r = {"+": np.add, "-": np.subtract, "*": np.multiply}[op](x.v, y.v)
                if is_int:
                    return Value(r.astype(dtype))
                if op == "*":
                    err = np.abs(x.v) * y.err + np.abs(y.v) * x.err + x.err * y.err
                else:
                    err = x.err + y.err
                return Value(r, err + u * (np.abs(r) + err) + tiny)
            return Expr(src, ev, dtype)
        if op in ("maxc", "minc"):
            c = self.const(dtype)
            name = op[:3]
            # The constant on either side (an int literal against an int8 value: mixed widths in C++).
            src = f"T.{name}({a.src}, {c!r})" if self.rng.random() < 0.5 else f"T.{name}({c!r}, {a.src})"

            def ev(env, a=a, c=c, name=name):
                x = a.ev(env)
                f = np.maximum if name == "max" else np.minimum
                if is_int:
                    return Value(f(x.v, np.array(c, dtype)).astype(dtype))
                return Value(f(x.v, c), x.err)
            return Expr(src, ev, dtype)
        if op == "abs":
            def ev(env, a=a):
                x = a.ev(env)
                with np.errstate(over="ignore"):
                    return Value(np.abs(x.v).astype(dtype) if is_int else np.abs(x.v), x.err)
            return Expr(f"T.abs({a.src})", ev, dtype)
        if op == "&":
            c = int(self.rng.integers(1, 64))

            def ev(env, a=a, c=c):
                return Value(np.bitwise_and(a.ev(env).v, np.array(c, dtype)).astype(dtype))
            return Expr(f"({a.src} & {c})", ev, dtype)
        s = int(self.rng.integers(1, 4))

        def ev(env, a=a, s=s):
            return Value(np.right_shift(a.ev(env).v, np.array(s, dtype)).astype(dtype))
        return Expr(f"({a.src} >> {s})", ev, dtype)

    def body(self, dtype, out_dtype, loads):
        """Statements binding the loaded values and a few derived ones; returns (lines, result Expr)."""
        is_int = dtype in INT_TYPES
        lines, leaves = [], []
        for name, src in loads:
            lines.append(f"{name} = {src}")

            def ev(env, name=name):
                x = env[name]
                return Value(x, None if is_int else np.zeros(x.shape))
            leaves.append(Expr(name, ev, dtype))
        for k in range(int(self.rng.integers(1, 3))):
            e = self.expr(leaves, dtype, 2)
            name = f"t{k}"
            lines.append(f"{name} = {e.src}")

            def ev(env, e=e):
                return e.ev(env)
            leaves.append(Expr(name, ev, dtype))
        result = self.expr(leaves, dtype, 2)
        if out_dtype != dtype:
            inner = result
            uo, tiny_o = unit_roundoff(out_dtype), subnormal_roundoff(out_dtype)

            def ev(env, inner=inner):
                x = inner.ev(env)
                if out_dtype in INT_TYPES:
                    return Value(x.v.astype(out_dtype))
                v = x.v.astype(np.float64)
                err = (x.err if x.err is not None else np.zeros(v.shape))
                return Value(v, err + uo * (np.abs(v) + err) + tiny_o)
            result = Expr(f"T.cast({inner.src}, {out_dtype!r})", ev, out_dtype)
        return lines, result

    # ---- programs -------------------------------------------------------------------------
    def elementwise(self):
        rng = self.rng
        dtype = self.choice(INT_TYPES + FLOAT_TYPES)
        out_dtype = dtype if rng.random() < 0.6 else "float32"
        form = self.choice(["parallel", "parallel", "serial", "unroll", "vectorized", "pipelined", "parallel2d"])
        threads = self.choice([32, 64, 128, 256])
        n_in = int(rng.integers(1, 3))
        ins = ["A", "B"][:n_in]
        if form == "parallel2d":
            bm, bn = self.choice([4, 8, 16]), self.choice([16, 32, 64])
            M = int(rng.integers(1, 4)) * bm + int(self.choice([0, 0, int(rng.integers(1, bm))]))
            N = int(rng.integers(1, 4)) * bn + int(self.choice([0, int(rng.integers(1, bn))]))
            shape = (M, N)
            idx = "r, c"
            loads = [(x.lower(), f"{x}[{idx}]") for x in ins]
            lines, res = self.body(dtype, out_dtype, loads)
            params = ", ".join(f"{x}: T.Tensor(({M}, {N}), {dtype!r})" for x in ins)
            params += f", C: T.Tensor(({M}, {N}), {out_dtype!r})"
            head = [f"with T.Kernel(T.ceildiv({N}, {bn}), T.ceildiv({M}, {bm}), threads={threads}) as (bx, by):",
                    f"    for i, j in T.Parallel({bm}, {bn}):",
                    f"        r = by * {bm} + i",
                    f"        c = bx * {bn} + j"]
            inner = "        "
            stmts = lines + [f"C[{idx}] = {res.src}"]
        else:
            block = self.choice([64, 128, 256, 512])
            steps = int(self.choice([2, 3, 4]))
            per_block = block * (steps if form in ("serial", "unroll", "pipelined") else 1)
            N = int(rng.integers(1, 4)) * per_block + int(self.choice([0, int(rng.integers(1, per_block))]))
            shape = (N,)
            params = ", ".join(f"{x}: T.Tensor(({N},), {dtype!r})" for x in ins)
            params += f", C: T.Tensor(({N},), {out_dtype!r})"
            guard = rng.random() < 0.3
            kernel = f"with T.Kernel(T.ceildiv({N}, {per_block}), threads={threads}) as bx:"
            if form == "parallel":
                head = [kernel, f"    for i in T.Parallel({block}):", f"        idx = bx * {block} + i"]
                inner = "        "
                src_of = {x: f"{x}[idx]" for x in ins}
            elif form in ("serial", "unroll"):
                loop = "T.serial" if form == "serial" else "T.unroll"
                head = [kernel, f"    for k in {loop}({steps}):", f"        base = (bx * {steps} + k) * {block}",
                        f"        for i in T.Parallel({block}):", "            idx = base + i"]
                inner = "            "
                src_of = {x: f"{x}[idx]" for x in ins}
            elif form == "vectorized":
                vec = self.choice([2, 4])
                head = [kernel, f"    for i in T.Parallel({block // vec}):",
                        f"        for v in T.vectorized({vec}):", f"            idx = bx * {block} + i * {vec} + v"]
                inner = "            "
                src_of = {x: f"{x}[idx]" for x in ins}
            else:  # pipelined: each input tile goes through shared memory
                head = [kernel]
                for x in ins:
                    head.append(f"    {x}_s = T.alloc_shared(({block},), {dtype!r})")
                head += [f"    for k in T.Pipelined({steps}, num_stages=2):",
                         f"        base = (bx * {steps} + k) * {block}"]
                for x in ins:
                    head.append(f"        T.copy({x}[base], {x}_s)")
                head += [f"        for i in T.Parallel({block}):", "            idx = base + i"]
                inner = "            "
                src_of = {x: f"{x}_s[i]" for x in ins}
            loads = [(x.lower(), src_of[x]) for x in ins]
            lines, res = self.body(dtype, out_dtype, loads)
            if guard:
                stmts = lines + ["if idx < %d:" % N, f"    C[idx] = {res.src}"]
            else:
                stmts = lines + [f"C[idx] = {res.src}"]
        source = "\n".join(head + [inner + s for s in stmts])
        return self._finish("elementwise", form, source, params, ins, dtype, shape, res, out_dtype)

    def reduction(self):
        rng = self.rng
        dtype = self.choice(("int8", "int16", "int32", "float16", "bfloat16", "float32"))
        is_int = dtype in INT_TYPES
        acc = "int32" if is_int else "float32"
        kind = self.choice(["sum", "max", "min"])
        form = self.choice(["tile_op", "tile_op", "serial"])
        bm = self.choice([4, 8, 16, 32])
        bk = self.choice([16, 32, 64])
        M = int(rng.integers(1, 3)) * bm + int(self.choice([0, int(rng.integers(1, bm))]))
        N = int(self.choice([bk, 2 * bk, 3 * bk - int(rng.integers(1, bk)), int(rng.integers(5, 100))]))
        threads = self.choice([32, 64, 128])
        scale = self.const(acc if not is_int else "int8")
        if is_int:
            scale = max(1, abs(int(scale)) % 4)
        lines = [f"with T.Kernel(T.ceildiv({M}, {bm}), threads={threads}) as bx:"]
        red = {"sum": "T.reduce_sum", "max": "T.reduce_max", "min": "T.reduce_min"}[kind]
        if form == "tile_op":
            lines += [f"    tile = T.alloc_fragment(({bm}, {bk}), {acc!r})",
                      f"    part = T.alloc_fragment(({bm},), {acc!r})",
                      f"    total = T.alloc_fragment(({bm},), {acc!r})"]
            nk = -(-N // bk)
            lines += [f"    for k in T.serial({nk}):",
                      f"        for i, j in T.Parallel({bm}, {bk}):",
                      f"            r = bx * {bm} + i",
                      f"            c = k * {bk} + j",
                      f"            v = T.cast(A[r, c], {acc!r})"]
            if kind == "sum":
                lines.append(f"            tile[i, j] = T.if_then_else(c < {N}, v * {scale!r}, 0)")
            else:
                fill = "T.min_value" if kind == "max" else "T.max_value"
                lines.append(f"            tile[i, j] = T.if_then_else(c < {N}, v * {scale!r}, {fill}({acc!r}))")
            lines += [f"        {red}(tile, part, dim=1)",
                      "        for i in T.Parallel(%d):" % bm,
                      "            if k == 0:",
                      "                total[i] = part[i]",
                      "            else:",
                      "                total[i] = " + ({"sum": "total[i] + part[i]", "max": "T.max(total[i], part[i])",
                                                         "min": "T.min(total[i], part[i])"}[kind]),
                      f"    for i in T.Parallel({bm}):",
                      f"        S[bx * {bm} + i] = total[i]"]
        else:
            lines += [f"    total = T.alloc_fragment(({bm},), {acc!r})",
                      f"    for i in T.Parallel({bm}):",
                      f"        r = bx * {bm} + i",
                      f"        total[i] = T.cast(A[r, 0], {acc!r}) * {scale!r}",
                      f"        for c in T.serial(1, {N}):",
                      f"            v = T.cast(A[r, c], {acc!r}) * {scale!r}",
                      "            total[i] = " + ({"sum": "total[i] + v", "max": "T.max(total[i], v)",
                                                     "min": "T.min(total[i], v)"}[kind]),
                      f"        S[r] = total[i]"]
        params = f"A: T.Tensor(({M}, {N}), {dtype!r}), S: T.Tensor(({M},), {acc!r})"
        source = "\n".join(lines)

        def ev(env):
            a = env["a"]
            if is_int:
                # int32 arithmetic wraps: each product, and the sum (modulo 2^32, in any order).
                v = (a.astype(np.int64) * scale).astype(np.int32).astype(np.int64)
                r = {"sum": v.sum(1), "max": v.max(1), "min": v.min(1)}[kind]
                return Value(r.astype(np.int32))
            v = a.astype(np.float64) * scale
            r = {"sum": v.sum(1), "max": v.max(1), "min": v.min(1)}[kind]
            u = unit_roundoff("float32")
            err = (2 * N * u * np.abs(v).sum(1)) if kind == "sum" else u * np.abs(r)
            return Value(r, err)
        res = Expr("", ev, acc)
        return self._finish("reduction", f"{kind}_{form}", source, params, ["A"], dtype, (M, N), res, acc,
                            out_name="S", out_shape=(M,))

    def _finish(self, kind, form, body, params, ins, dtype, shape, res, out_dtype, out_name="C", out_shape=None):
        source = (f"import tilelang.language as T\n\n\ndef build():\n    @T.prim_func\n"
                  f"    def main({params}):\n" + textwrap.indent(body, " " * 8) + "\n    return main\n")
        return Program(kind, form, source, ins, dtype, shape, res, out_dtype, out_name, out_shape or shape)


class Program:
    def __init__(self, kind, form, source, ins, dtype, shape, res, out_dtype, out_name, out_shape):
        self.kind, self.form, self.source = kind, form, source
        self.ins, self.dtype, self.shape = ins, dtype, shape
        self.res, self.out_dtype, self.out_name, self.out_shape = res, out_dtype, out_name, out_shape
        self.name = None
        self.path = None

    def describe(self):
        return f"{self.name} ({self.kind}/{self.form}, {self.dtype} -> {self.out_dtype}): {self.path}"

    def load(self, directory):
        """Writes the program to `directory` and returns its prim_func."""
        os.makedirs(directory, exist_ok=True)
        self.path = os.path.join(directory, f"{self.name}.py")
        with open(self.path, "w") as f:
            f.write(self.source)
        spec = importlib.util.spec_from_file_location(f"tl_random_{self.name}", self.path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod.build()

    def inputs(self, rng):
        dt = np_dtype(self.dtype)
        arrays = []
        for _ in self.ins:
            if self.dtype in INT_TYPES:
                info = np.iinfo(self.dtype)
                arrays.append(rng.integers(int(info.min), int(info.max) + 1, self.shape).astype(dt))
            else:
                arrays.append(rng.standard_normal(self.shape).astype(np.float32).astype(dt))
        out = np.zeros(self.out_shape, np_dtype(self.out_dtype))
        return arrays + [out]

    def reference(self, arrays):
        env = {}
        for name, arr in zip(self.ins, arrays):
            env[name.lower()] = arr if self.dtype in INT_TYPES else arr.astype(np.float64)
        return self.res.ev(env)

    def check(self, got, arrays, where):
        """Raises AssertionError naming the program when `got` (the output array) is wrong."""
        ref = self.reference(arrays)
        got = np.asarray(got)
        if self.out_dtype in INT_TYPES:
            bad = got != ref.v
        else:
            g = got.astype(np.float64)
            bound = 2 * ref.err + 1e-30
            with np.errstate(invalid="ignore"):
                bad = ~(np.abs(g - ref.v) <= bound)
        if bad.any():
            k = np.argwhere(bad)[0]
            k = tuple(int(x) for x in k)
            raise AssertionError(f"{where}: {int(bad.sum())} of {bad.size} elements wrong, first at {k}: got "
                                 f"{got[k]!r}, expected {ref.v[k]!r}\nprogram {self.describe()}:\n{self.source}")


def generate(seed, count):
    """`count` programs from `seed` (about 2 element-wise programs per reduction)."""
    rng = np.random.default_rng(seed)
    gen = ProgramGen(rng)
    programs = []
    for k in range(count):
        p = gen.reduction() if k % 3 == 2 else gen.elementwise()
        p.name = f"s{seed}_p{k}"
        programs.append(p)
    return programs
