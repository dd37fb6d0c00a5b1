"""A random-program generator for the fuzzing tier: element-wise kernels over two input tensors and a
scalar, with three outputs, each output a random expression tree. Reusable: `random_program(rng)`
gives a Program; `Program.kernel(target)` builds its @T.prim_func for cpu/cuda (T.Kernel + T.serial)
or ascend (UB tiles, T.Parallel); `Program.reference(x, y, s)` evaluates it with numpy and returns,
for every output, the value and a bound on the rounding error the kernel may make (so fused
multiply-adds, reassociation-free float32 evaluation and float16 stores all compare exactly within
their own error).

Semantics the trees keep well-defined on every target: leaves are converted to float32, every
operation runs in float32, division is by |b| + 1, exp takes min(a, 8); outputs are float32 or
float16. Inputs are float32, float16, int8 or int32 (small integers, exact in float32)."""
import numpy as np

import tilelang.language as T

EPS32 = float(np.finfo(np.float32).eps)
INPUT_DTYPES = ["float32", "float16", "int8", "int32"]
OUTPUT_DTYPES = ["float32", "float16"]
OUTPUTS = 3
BINARY = ["add", "sub", "mul", "max", "min", "div"]
UNARY = ["neg", "abs", "exp"]


class Program:
    def __init__(self, seed, n, dynamic, x_dtype, y_dtype, out_dtypes, trees):
        self.seed, self.n, self.dynamic = seed, n, dynamic
        self.x_dtype, self.y_dtype, self.out_dtypes, self.trees = x_dtype, y_dtype, out_dtypes, trees

    def __repr__(self):
        return (f"Program(seed={self.seed}, n={self.n}, dynamic={self.dynamic}, x={self.x_dtype}, y={self.y_dtype}, "
                f"out={self.out_dtypes}, trees={self.trees})")

    # ---- the kernel ----------------------------------------------------------------------------
    def kernel(self, target):
        return _npu_kernel(self) if target == "ascend" else _grid_kernel(self)

    # ---- inputs and the reference --------------------------------------------------------------
    def inputs(self, rng, n=None):
        n = self.n if n is None else n
        return _random_array(rng, n, self.x_dtype), _random_array(rng, n, self.y_dtype), float(
            np.float32(rng.uniform(-2, 2)))

    def reference(self, x, y, s):
        """[(value float64 array, error bound array)] per output, after the store's rounding."""
        env = {"x": x.astype(np.float64), "y": y.astype(np.float64), "s": np.float64(np.float32(s))}
        out = []
        for tree, dtype in zip(self.trees, self.out_dtypes):
            v, bound = _eval(tree, env)
            v = np.broadcast_to(v, x.shape).astype(np.float64)
            bound = np.broadcast_to(bound, x.shape).astype(np.float64)
            if dtype == "float16":  # the store rounds to float16: half an ulp of the result, plus the bound
                bound = bound + np.abs(v) * 2.0 ** -11 + 2.0 ** -25
            out.append((v, bound))
        return out


def random_program(rng, seed=0, max_depth=5, max_n=300):
    dynamic = bool(rng.integers(0, 2))
    n = int(rng.integers(1, max_n))
    trees = [_random_tree(rng, int(rng.integers(1, max_depth + 1))) for _ in range(OUTPUTS)]
    return Program(seed, n, dynamic, str(rng.choice(INPUT_DTYPES)), str(rng.choice(INPUT_DTYPES)),
                   [str(rng.choice(OUTPUT_DTYPES)) for _ in range(OUTPUTS)], trees)


def _random_tree(rng, depth):
    if depth <= 1 or rng.random() < 0.2:
        r = rng.random()
        if r < 0.4:
            return ("x",)
        if r < 0.7:
            return ("y",)
        if r < 0.85:
            return ("s",)
        return ("const", float(np.float32(rng.uniform(-4, 4))))
    r = rng.random()
    if r < 0.6:
        return (str(rng.choice(BINARY)), _random_tree(rng, depth - 1), _random_tree(rng, depth - 1))
    if r < 0.85:
        return (str(rng.choice(UNARY)), _random_tree(rng, depth - 1))
    return ("select", _random_tree(rng, depth - 1), _random_tree(rng, depth - 1), _random_tree(rng, depth - 1),
            _random_tree(rng, depth - 1))


def _random_array(rng, n, dtype):
    if dtype.startswith("int"):
        return rng.integers(-20, 21, size=n).astype(dtype)
    return rng.uniform(-3, 3, size=n).astype(dtype)


# ---- the reference: value and forward error bound (float32 arithmetic, possibly contracted) -----

def _eval(t, env):
    op = t[0]
    if op in ("x", "y", "s"):
        return env[op], np.float64(0.0)
    if op == "const":
        return np.float64(t[1]), np.float64(0.0)
    if op in BINARY:
        (a, ea), (b, eb) = _eval(t[1], env), _eval(t[2], env)
        if op == "add":
            v, e = a + b, ea + eb
        elif op == "sub":
            v, e = a - b, ea + eb
        elif op == "mul":
            v, e = a * b, np.abs(a) * eb + np.abs(b) * ea + ea * eb
        elif op == "max":
            v, e = np.maximum(a, b), np.maximum(ea, eb)
        elif op == "min":
            v, e = np.minimum(a, b), np.maximum(ea, eb)
        else:  # a / (|b| + 1): the divisor is at least 1
            d = np.abs(b) + 1.0
            v = a / d
            e = (ea + np.abs(v) * (eb + EPS32 * d)) / np.maximum(d - eb, 0.5)
        return v, e + EPS32 * np.abs(v)
    if op in UNARY:
        a, ea = _eval(t[1], env)
        if op == "neg":
            return -a, ea
        if op == "abs":
            return np.abs(a), ea
        m = np.minimum(a, 8.0)
        v = np.exp(m)
        return v, v * (np.expm1(ea) + 4 * EPS32)  # exp is within a few ulp on every target
    # select: (a < b) ? c : d — a comparison within the error bound may go either way
    (a, ea), (b, eb), (c, ec), (d, ed) = (_eval(t[i], env) for i in range(1, 5))
    take_c = a < b
    v = np.where(take_c, c, d)
    e = np.where(take_c, ec, ed)
    close = np.abs(a - b) <= (ea + eb) * 2 + EPS32 * (np.abs(a) + np.abs(b))
    e = np.where(close, np.maximum(e, np.abs(c - d) + ec + ed), e)
    return v, e


# ---- building the IR of a tree inside a kernel (called while the kernel is parsed) ---------------

def emit(t, x, y, s):
    op = t[0]
    if op == "x":
        return x
    if op == "y":
        return y
    if op == "s":
        return s
    if op == "const":
        return T.float32(t[1])
    if op in BINARY:
        a, b = emit(t[1], x, y, s), emit(t[2], x, y, s)
        if op == "add":
            return a + b
        if op == "sub":
            return a - b
        if op == "mul":
            return a * b
        if op == "max":
            return T.max(a, b)
        if op == "min":
            return T.min(a, b)
        return a / (T.abs(b) + T.float32(1.0))
    if op in UNARY:
        a = emit(t[1], x, y, s)
        if op == "neg":
            return -a
        if op == "abs":
            return T.abs(a)
        return T.exp(T.min(a, T.float32(8.0)))
    a, b, c, d = (emit(t[i], x, y, s) for i in range(1, 5))
    return T.if_then_else(a < b, c, d)


BLOCK = 64


def _grid_kernel(p):
    n = T.dynamic("n") if p.dynamic else p.n
    dx, dy, (d0, d1, d2) = p.x_dtype, p.y_dtype, p.out_dtypes
    t0, t1, t2 = p.trees

    @T.prim_func
    def fuzz_kernel(X: T.Tensor((n,), dx), Y: T.Tensor((n,), dy), s: T.float32, O0: T.Tensor((n,), d0),
                    O1: T.Tensor((n,), d1), O2: T.Tensor((n,), d2)):
        with T.Kernel(T.ceildiv(n, BLOCK), threads=BLOCK) as bx:
            for i in T.serial(BLOCK):
                k = bx * BLOCK + i
                if k < n:
                    x = T.Cast("float32", X[k])
                    y = T.Cast("float32", Y[k])
                    O0[k] = T.Cast(d0, emit(t0, x, y, s))
                    O1[k] = T.Cast(d1, emit(t1, x, y, s))
                    O2[k] = T.Cast(d2, emit(t2, x, y, s))
    return fuzz_kernel


def _npu_kernel(p):
    """The Ascend form: each of the two vector cores takes half of a static length (rounded up to a
    multiple of 16 by the caller's inputs)."""
    n = p.n
    half = n // 2
    dx, dy, (d0, d1, d2) = p.x_dtype, p.y_dtype, p.out_dtypes
    t0, t1, t2 = p.trees

    @T.prim_func
    def fuzz_npu_kernel(X: T.Tensor((n,), dx), Y: T.Tensor((n,), dy), s: T.float32, O0: T.Tensor((n,), d0),
                        O1: T.Tensor((n,), d1), O2: T.Tensor((n,), d2)):
        T.func_attr({"enable_auto_sync": True})
        with T.Kernel(1, is_npu=True) as (cid, vid):
            xu = T.alloc_ub((half,), dx)
            yu = T.alloc_ub((half,), dy)
            o0 = T.alloc_ub((half,), d0)
            o1 = T.alloc_ub((half,), d1)
            o2 = T.alloc_ub((half,), d2)
            T.copy(X[vid * half], xu)
            T.copy(Y[vid * half], yu)
            with T.Scope("V"):
                for i in T.serial(half):
                    x = T.Cast("float32", xu[i])
                    y = T.Cast("float32", yu[i])
                    o0[i] = T.Cast(d0, emit(t0, x, y, s))
                    o1[i] = T.Cast(d1, emit(t1, x, y, s))
                    o2[i] = T.Cast(d2, emit(t2, x, y, s))
            T.copy(o0, O0[vid * half])
            T.copy(o1, O1[vid * half])
            T.copy(o2, O2[vid * half])
    return fuzz_npu_kernel


def npu_program(rng, seed=0, max_depth=4):
    """A random program shaped for the Ascend form: a static even length, 32-byte aligned halves."""
    p = random_program(rng, seed, max_depth=max_depth)
    p.dynamic = False
    p.n = 64 * int(rng.integers(1, 5))
    return p
