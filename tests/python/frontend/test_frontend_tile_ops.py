"""Tile ops are normalized to the one form of docs/TILE_OPS.md."""
import math

import pytest

import tilelang
import tilelang.language as T
from frontend_ir_eval import find, tile_ops
from tilelang import _core as C


def regions(op):
    return [repr(a) for a in op.args]


def build(body, params=None):
    """A kernel with a few buffers in scope; `body(bufs)` emits the ops under test (a def body is
    inlined as a @T.macro, so it may use kernel syntax)."""
    if body.__name__ != "<lambda>":
        body = T.macro(body)

    @T.prim_func
    def k(A: T.Tensor((4, 128, 64), "float16"), G: T.Tensor((256, 256), "float32"), n: T.int32):
        with T.Kernel(2, threads=128) as bx:
            S = T.alloc_shared((128, 64), "float16")
            F = T.alloc_fragment((128, 64), "float32")
            R = T.alloc_fragment((128,), "float32")
            Q = T.alloc_shared((64, 64), "float16")
            body(dict(A=A, G=G, n=n, S=S, F=F, R=R, Q=Q, bx=bx))
    return k


def test_copy_forms():
    def body(b):
        A, G, S, F, bx = b["A"], b["G"], b["S"], b["F"], b["bx"]
        T.copy(A[bx, 0, 0], S)                          # 3-D origin, 2-D tile: leading extent 1
        T.copy(S, A[bx, 0:128, 0:64])
        T.copy(A[bx, :, :], S)
        T.copy(F, G[bx * 128, 64])                      # origin on the destination
        T.copy(G[0:128, 0:64], F, disable_tma=True)
        T.copy(A[bx, 0, 0], S, [64, 32])                # Developer size list
        T.copy(G[7, 9], G[9, 7])                        # element to element
        T.copy(S[0, :], F[1, :])
    ops = tile_ops(build(body), "copy")
    assert regions(ops[0]) == ["A[bx :+ 1, 0 :+ 128, 0 :+ 64]", "S[0 :+ 128, 0 :+ 64]"]
    assert regions(ops[1]) == ["S[0 :+ 128, 0 :+ 64]", "A[bx :+ 1, 0 :+ 128, 0 :+ 64]"]
    assert regions(ops[2]) == ["A[bx :+ 1, 0 :+ 128, 0 :+ 64]", "S[0 :+ 128, 0 :+ 64]"]
    assert regions(ops[3]) == ["F[0 :+ 128, 0 :+ 64]", "G[bx * 128 :+ 128, 64 :+ 64]"]
    assert ops[4].attrs == {"disable_tma": True} and ops[0].attrs == {}
    assert regions(ops[5]) == ["A[bx :+ 1, 0 :+ 64, 0 :+ 32]", "S[0 :+ 64, 0 :+ 32]"]
    assert regions(ops[6]) == ["G[7 :+ 1, 9 :+ 1]", "G[9 :+ 1, 7 :+ 1]"]
    assert regions(ops[7]) == ["S[0 :+ 1, 0 :+ 64]", "F[1 :+ 1, 0 :+ 64]"]


def test_copy_rank_mismatch_is_an_error():
    def body(b):
        T.copy(b["S"], b["R"][0])   # a 2-D tile cannot start at an element of a 1-D buffer
    with pytest.raises(ValueError, match="2-dimensional tile cannot start at an element of the 1-dimensional "
                                         "buffer 'R'"):
        build(body)
    with pytest.raises(TypeError, match="T.copy src must be a buffer, a region"):
        build(lambda b: T.copy(1.0, b["S"]))


def test_gemm_forms():
    def body(b):
        S, F, Q, n = b["S"], b["F"], b["Q"], b["n"]
        # Shapes agree: S is [M=128, K=64], Q is [K=64, N=64] (or [N, K] transposed), F is [M, N].
        T.gemm(S, Q, F, transpose_B=True, policy=T.GemmWarpPolicy.FullCol, clear_accum=True, k_pack=2)
        T.gemm(S[0:64, :], S[0:64, :], F[0:64, 0:64], True, False)
        T.gemm(S, S, F, [32, 16, 8], initC=(n > 0))              # Developer form with a run-time initC
        T.gemm(S, Q, F, policy="FullRow", clear_accum=n > 2, initC=True)
        T.gemm(S, Q, F, policy=tilelang.primitives.gemm.base.GemmWarpPolicy.Square)
        T.gemm(S, S, F, [16, 32, 8], transpose_B=True)
    g = tile_ops(build(body), "gemm")
    assert g[0].attrs == {"transpose_A": False, "transpose_B": True, "policy": "FullCol",
                          "clear_accum": g[0].attrs["clear_accum"], "k_pack": 2}
    assert g[0].attrs["clear_accum"].value is True
    assert g[1].attrs["transpose_A"] is True and regions(g[1])[2] == "F[0 :+ 64, 0 :+ 64]"
    assert regions(g[2]) == ["S[0 :+ 32, 0 :+ 16]", "S[0 :+ 16, 0 :+ 8]", "F[0 :+ 32, 0 :+ 8]"]
    assert repr(g[2].attrs["clear_accum"]) == "n > 0"
    assert repr(g[3].attrs["clear_accum"]) == "true" and g[3].attrs["policy"] == "FullRow"
    assert g[4].attrs["policy"] == "Square"
    assert regions(g[5])[1] == "S[0 :+ 8, 0 :+ 32]"     # B is [n, k] when transposed


def test_gemm_errors():
    with pytest.raises(ValueError, match="policy must be a GemmWarpPolicy"):
        build(lambda b: T.gemm(b["S"], b["S"], b["F"], policy="Diagonal"))
    with pytest.raises(TypeError, match="'S\\[0, 0\\]' is a single element"):
        build(lambda b: T.gemm(b["S"][0, 0], b["S"], b["F"]))
    with pytest.raises(ValueError, match=r"size list is \[m, k, n\]"):
        build(lambda b: T.gemm(b["S"], b["S"], b["F"], [1, 2]))


def test_fill_clear_and_slice_assignment():
    def body(b):
        S, F, R = b["S"], b["F"], b["R"]
        T.fill(F, -1)
        T.clear(R)
        T.fill(S[0:8, :], 2.5)
        S[8:16, :] = 0
        F[0:128, 0:64] = S
    ops = tile_ops(build(body))
    assert [o.op for o in ops] == ["fill", "fill", "fill", "fill", "copy"]
    assert regions(ops[0]) == ["F[0 :+ 128, 0 :+ 64]", "-1.0f32"]
    assert regions(ops[1]) == ["R[0 :+ 128]", "0.0f32"]
    assert regions(ops[2]) == ["S[0 :+ 8, 0 :+ 64]", "2.5f16"]
    assert regions(ops[3]) == ["S[8 :+ 8, 0 :+ 64]", "0.0f16"]
    assert regions(ops[4]) == ["S[0 :+ 128, 0 :+ 64]", "F[0 :+ 128, 0 :+ 64]"]


def test_reduce_dim_errors():
    with pytest.raises(ValueError, match="dim 2 is out of range for a 2-dimensional operand"):
        build(lambda b: T.reduce_sum(b["F"], b["R"], dim=2))
    # Along a dimension of extent 1 a reduction is element-wise, so dst must match src's other extents.
    with pytest.raises(ValueError, match=r"T.reduce_sum: the reduced dimension has extent 1 in src .*F.* so dst .*R.* must have src's "
                       r"other extents \[64\], but has \[\]"):
        build(lambda b: T.reduce_sum(b["F"][0, :], b["R"][0:1], dim=0))
    with pytest.raises(ValueError, match="reduce_type must be sum, max"):
        build(lambda b: T.reduce(b["F"], b["R"], "mean", 1, True))


def test_atomic_add_forms():
    def body(b):
        G, F, S, bx = b["G"], b["F"], b["S"], b["bx"]
        T.atomic_add(G[bx, 0], 1)
        old = T.atomic_add(G[0, bx], 2.0, return_prev=True)
        G[1, 1] = old
        T.atomic_add(G[0:128, 0:64], F)
        T.atomic_add(G[bx * 128, 0], F)          # origin: extents from the value tile
        T.atomic_add(G[0:4, 0:4], 1.5, memory_order="relaxed")
        # An element value is a scalar (TileLang: only buffers and regions have extents), as in
        # `for i, j in T.Parallel(...): T.atomic_add(dQ[.., i, j], dq[i, j])`.
        T.atomic_add(G[bx, 1], F[bx, 2], memory_order="relaxed")
        T.atomic_add(G[0:2, 0:2], F[1, 1])
    k = build(body)
    evals = find(k.body, lambda s: s.kind == "evaluate")
    assert repr(evals[0].value) == "tl.atomic_add_scalar(G[bx, 0], 1.0f32)"
    assert repr(evals[1].value) == "tl.atomic_add_scalar(G[bx, 1], F[bx, 2])"
    assert "let old: float32 = tl.atomic_add_scalar(G[0, bx], 2.0f32)" in k.script()
    ops = tile_ops(k, "atomic_add")
    assert regions(ops[0]) == ["G[0 :+ 128, 0 :+ 64]", "F[0 :+ 128, 0 :+ 64]"]
    assert regions(ops[1]) == ["G[bx * 128 :+ 128, 0 :+ 64]", "F[0 :+ 128, 0 :+ 64]"]
    assert regions(ops[2]) == ["G[0 :+ 4, 0 :+ 4]", "1.5f32"] and ops[2].attrs == {"memory_order": "relaxed"}
    assert regions(ops[3]) == ["G[0 :+ 2, 0 :+ 2]", "F[1, 1]"]


def test_elementwise_names_dispatch_on_argument_types():
    def body(b):
        S, F, bx = b["S"], b["F"], b["bx"]
        T.exp(S, F)                               # tile op, source first
        T.log(F[0:8, :], F[8:16, :])
        T.max(F, F, 0.0)                          # tile op, destination first; scalar second source
        T.add(F, F, F)
        T.sub(F[0:8, :], F[0:8, :], S[0:8, :])
        for i, j in T.Parallel(128, 64):
            F[i, j] = T.max(T.exp(F[i, j]), T.min(F[i, j], 1.0)) + T.add(F[i, j], 2.0)
    k = build(body)
    ops = tile_ops(k)
    assert [(o.op, regions(o)) for o in ops] == [
        ("tile.exp", ["F[0 :+ 128, 0 :+ 64]", "S[0 :+ 128, 0 :+ 64]"]),
        ("tile.log", ["F[8 :+ 8, 0 :+ 64]", "F[0 :+ 8, 0 :+ 64]"]),
        ("tile.max", ["F[0 :+ 128, 0 :+ 64]", "F[0 :+ 128, 0 :+ 64]", "0.0f32"]),
        ("tile.add", ["F[0 :+ 128, 0 :+ 64]", "F[0 :+ 128, 0 :+ 64]", "F[0 :+ 128, 0 :+ 64]"]),
        ("tile.sub", ["F[0 :+ 8, 0 :+ 64]", "F[0 :+ 8, 0 :+ 64]", "S[0 :+ 8, 0 :+ 64]"]),
    ]
    assert "F[i, j] = max(exp(F[i, j]), min(F[i, j], 1.0f32)) + (F[i, j] + 2.0f32)" in k.script()
    with pytest.raises(TypeError, match="T.exp takes one scalar"):
        build(lambda b: T.exp(1.0, 2.0, 3.0))


def test_tile_namespace():
    def body(b):
        S, F, R = b["S"], b["F"], b["R"]
        T.tile.add(F, F, S)
        T.tile.mul(F, F, 0.5)
        T.tile.exp(F, F)
        T.tile.ln(F, S)
        T.tile.relu(F, F)
        T.tile.fill(F, 1)
        T.tile.cast(S, F, "CAST_RINT")
        T.tile.cast(S, F, mode="floor")
        T.tile.axpy(F, F, 2.0)
        T.tile.compare(S, F, 0.0, "ge")
        T.tile.select(F, S, F, 0.0)
        T.tile.transpose(F[0:16, 0:16], F[16:32, 0:16])
        T.tile.sort(R, R, 128)
        T.tile.gather_mask(R, R, "P0101")
        T.tile.reduce_sum(R, F, dim=1)
    ops = tile_ops(build(body))
    names = [o.op for o in ops]
    assert names == ["tile.add", "tile.mul", "tile.exp", "tile.ln", "tile.relu", "fill", "tile.cast", "tile.cast",
                     "tile.axpy", "tile.compare", "tile.select", "tile.transpose", "tile.sort", "tile.gather_mask",
                     "tile.reduce_sum"]
    assert regions(ops[1])[2] == "0.5f32"
    assert regions(ops[3]) == ["F[0 :+ 128, 0 :+ 64]", "S[0 :+ 128, 0 :+ 64]"]   # destination first
    assert ops[6].attrs == {"mode": "CAST_RINT"} and ops[7].attrs == {"mode": "CAST_FLOOR"}
    assert regions(ops[8])[2] == "2.0f32"
    assert ops[9].attrs == {"mode": "GE"} and len(ops[10].args) == 4
    assert regions(ops[12]) == ["R[0 :+ 128]", "R[0 :+ 128]", "128"]
    assert ops[13].attrs == {"arg2": "P0101"} and ops[14].attrs == {"dim": 1}
    with pytest.raises(ValueError, match="mode must be one of EQ, NE"):
        build(lambda b: T.tile.compare(b["S"], b["F"], 0.0, "approx"))


def test_debug_primitives():
    def body(b):
        S, F, bx, n = b["S"], b["F"], b["bx"], b["n"]
        T.print(F, msg="F")
        T.print(bx, msg="bx")
        T.print(msg="hello")
        T.printf("%d %f\n", bx, F[0, 0])
        T.device_assert(n > 0, "n must be positive")
        T.dump_tensor(S, 7, 64)
        T.sync_threads()
    k = build(body)
    text = k.script()
    assert 'print(F[0 :+ 128, 0 :+ 64]) {msg = "F"}' in text
    assert 'evaluate tl.print_scalar<void>("bx", bx)' in text
    assert 'evaluate tl.printf<void>("hello\\n")' in text
    assert 'evaluate tl.printf<void>("%d %f\\n", bx, F[0, 0])' in text
    assert 'evaluate tl.device_assert<void>(n > 0, "n must be positive")' in text
    assert "dump_tensor(S[0 :+ 128, 0 :+ 64]) {desc = 7, size = 64}" in text
    assert "evaluate tl.sync_threads()" in text
    with pytest.raises(TypeError, match="is a buffer; print one element"):
        build(lambda b: T.printf("%f", b["F"]))


def test_math_functions():
    def body(b):
        F, n = b["F"], b["n"]
        for i, j in T.Parallel(128, 64):
            F[i, j] = (T.exp2(F[i, j]) + T.log2(F[i, j]) + T.sqrt(F[i, j]) + T.tanh(F[i, j]) + T.sigmoid(F[i, j])
                       + T.pow(F[i, j], 2) + T.floor(F[i, j]) + T.ceil(F[i, j]) + T.abs(F[i, j]) + T.sin(F[i, j])
                       + T.cos(F[i, j]) + T.round(F[i, j]) + T.trunc(F[i, j]) + T.rsqrt(F[i, j]) + T.log(F[i, j]))
            F[i, j] = T.__exp(F[i, j]) + T.__log(F[i, j]) + T.__sin(F[i, j]) + T.__cos(F[i, j])
            F[i, j] = T.ieee_fmaf(F[i, j], 2.0, 1.0, rounding_mode="rz") + T.ieee_fsqrt(F[i, j]) + \
                T.ieee_fdiv(F[i, j], 3.0) + T.ieee_mul(F[i, j], F[i, j], "ru")
            F[i, j] = T.clamp(F[i, j], -1.0, 1.0) + T.exp(n)
        F[0, 0] = T.cast(T.ceildiv(n, 4) + T.floordiv(n, 4) + T.floormod(n, 4) + T.truncdiv(n, 4) + T.truncmod(n, 4),
                         "float32")
        F[0, 1] = T.if_then_else(T.Or(n > 1, T.And(n < -1, T.Not(n == 0))), 1.0, 0.0)
        F[0, 2] = T.Cast("float32", n) + T.cast(n, T.float32)
    text = build(body).script()
    for fn in ["exp2", "log2", "sqrt", "tanh", "sigmoid", "floor", "ceil", "abs", "sin", "cos", "round", "trunc",
               "rsqrt", "log", "__exp", "__log", "__sin", "__cos"]:
        assert f"{fn}(F[i, j])" in text, fn
    assert "pow(F[i, j], 2.0f32)" in text
    assert 'ieee_fmaf(F[i, j], 2.0f32, 1.0f32, "rz")' in text and 'ieee_fsqrt(F[i, j], "rn")' in text
    assert 'ieee_fdiv(F[i, j], 3.0f32, "rn")' in text and 'ieee_mul(F[i, j], F[i, j], "ru")' in text
    assert "max(min(F[i, j], 1.0f32), -1.0f32) + exp(cast<float32>(n))" in text
    assert "floordiv(n + 4 - 1, 4) + floordiv(n, 4) + floormod(n, 4) + n / 4 + n % 4" in text
    assert "select(n > 1 || n < -1 && !(n == 0), 1.0f32, 0.0f32)" in text
    assert "F[0, 2] = cast<float32>(n) + cast<float32>(n)" in text
    with pytest.raises(ValueError, match="rounding_mode must be one of rn, rz, ru, rd"):
        T.ieee_add(C.Var("x", "float32"), 1.0, rounding_mode="near")


def test_constants_of_dtypes():
    assert T.infinity("float16").value == math.inf and T.infinity("float16").dtype == "float16"
    assert T.max_value("float16").value == 65504.0 and T.min_value("bfloat16").value < -3e38
    assert T.max_value("int8").value == 127 and T.min_value("int8").value == -128
    assert T.max_value("uint16").value == 65535 and T.min_value("uint16").value == 0
    assert T.max_value("float8_e4m3").value == 448.0
    assert T.max_value(T.int32).dtype == "int32" and T.max_value("bool").value is True
    with pytest.raises(TypeError, match="int32 has no infinity"):
        T.infinity("int32")
