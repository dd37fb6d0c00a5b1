"""The IR bindings (src/bindings/ir_bind.cc): expressions, buffers, regions, statements, builder."""
import pytest

from tilelang import _core as C
from tilelang.errors import TileLangSyntaxError


def test_expr_operators_build_ir():
    x = C.Var("x")
    assert isinstance(x, C.Var) and isinstance(x, C.PrimExpr)
    assert x.name == "x" and x.dtype == "int32" and x.kind == "var"
    assert repr(x + 1) == "x + 1"
    assert repr(2 * x) == "2 * x"
    assert repr(x // 4) == "floordiv(x, 4)"
    assert repr(x % 4) == "floormod(x, 4)"
    assert repr(x / 2) == "x / 2"          # C division on ints
    assert repr(7 - x) == "7 - x"
    assert repr(-x) == "-x"
    assert repr(abs(x)) == "abs(x)"
    assert repr(~x) == "~x"
    assert repr((x << 2) | (x >> 1) & 3 ^ x) == "x << 2 | x >> 1 & 3 ^ x"
    assert (x < 3).dtype == "bool"
    assert (x + 1).op == "add"
    a, b = (x + 1).operands
    assert a.same_as(x) and b.value == 1


def test_python_constants_adopt_the_other_operand_type():
    h = C.Var("h", "float16")
    assert (h * 0.5).dtype == "float16"
    assert repr(h * 0.5) == "h * 0.5f16"
    i64 = C.Var("n", "int64")
    assert (i64 + 1).dtype == "int64"
    f = C.Var("f", "float32")
    assert (f / 2).dtype == "float32"          # true division on floats
    assert (C.Var("i") * 0.5).dtype == "float32"
    assert (f ** 2).op == "pow"
    big = C.to_expr(2**40)
    assert big.dtype == "int64" and big.value == 2**40


def test_constant_folding_and_python_conversions():
    five = C.make_int(2) + 3
    assert five.kind == "int" and int(five) == 5 and five.__index__() == 5
    assert list(range(C.make_int(3))) == [0, 1, 2]
    assert bool(C.make_int(3) < 4) is True
    assert float(C.make_float(1.5)) == 1.5
    assert C.make_bool(True).value is True


def test_runtime_value_as_python_bool_is_a_type_error():
    x = C.Var("x")
    with pytest.raises(TypeError, match=r"'x < 3' is a run-time value .* cannot be used as a Python bool"):
        bool(x < 3)
    with pytest.raises(TypeError, match="use T.serial"):
        range(x)


def test_var_identity_hashing():
    x, y = C.Var("x"), C.Var("x")
    d = {x: 1, y: 2}
    assert d[x + 0] == 1 and d[y] == 2      # x + 0 folds to the same node, a new Python object
    assert len({x, y, x * 1}) == 2


def test_buffer_indexing_and_slicing():
    A = C.Buffer("A", "float16", [128, 64], "shared")
    assert A.name == "A" and A.dtype == "float16" and A.scope == "shared" and A.ndim == 2
    assert [int(s) for s in A.shape] == [128, 64]
    i = C.Var("i")
    ld = A[i, 3]
    assert isinstance(ld, C.BufferLoad) and ld.buffer.same_as(A) and repr(ld) == "A[i, 3]"
    r = A[i:i + 16, :]
    assert isinstance(r, C.BufferRegion)
    assert repr(r) == "A[i :+ 16, 0 :+ 64]"
    bx = C.Var("bx")
    r2 = A[bx * 32:(bx + 1) * 32, 8:]
    assert [repr(e) for e in r2.extents] == ["32", "56"]
    assert repr(r2.mins[0]) == "bx * 32"
    r3 = A[i, :]                           # a scalar index in a region has extent 1
    assert [repr(e) for e in r3.extents] == ["1", "64"]
    assert [repr(e) for e in r3.squeezed_extents] == ["64"]
    assert repr(A[-1, 0]) == "A[127, 0]"
    assert repr(A[..., 5]) == "A[0 :+ 128, 5 :+ 1]"


def test_buffer_indexing_errors_name_the_buffer():
    A = C.Buffer("A", "float16", [128, 64], "shared")
    with pytest.raises(IndexError, match="buffer 'A' .* has 2 dimension"):
        A[1]
    with pytest.raises(IndexError, match="index 128 is out of bounds for dimension 0 of buffer 'A'"):
        A[128, 0]
    with pytest.raises(IndexError, match="only contiguous slices"):
        A[0:8:2, :]
    with pytest.raises(TypeError, match="must be an integer"):
        A[C.Var("f", "float32"), 0]
    with pytest.raises(TypeError, match="cannot iterate over buffer 'A'"):
        list(A)


def test_buffer_store_outside_kernel_is_refused():
    A = C.Buffer("A", "float32", [4], "global")
    with pytest.raises(TileLangSyntaxError, match="only be used inside a @T.prim_func"):
        A[0] = 1.0


def test_local_var_buffer_reads_as_scalar():
    v = C.Buffer("v", "float32", [1], "local.var")
    assert repr(v + 1.5) == "v[0] + 1.5f32"
    assert repr(2 * v) == "2.0f32 * v[0]"
    assert repr(v == 3) == "v[0] == 3.0f32"
    A = C.Buffer("A", "float32", [4], "shared")
    with pytest.raises(TypeError, match=r"buffer 'A' \(shared float32\) is not a scalar value"):
        A + 1


def test_builder_and_statement_accessors():
    A = C.Buffer("A", "float32", [16], "global")
    b = C.IRBuilder()
    b.set_span(C.Span("k.py", 3, 5))
    bx, tx = C.Var("bx"), C.Var("tx")
    b.enter_kernel([1], [bx], [32], [tx], {"prelude": "// p"})
    i = C.Var("i")
    b.enter_for(i, 0, 16, "serial", None)
    b.set_span(C.Span("k.py", 4, 9))
    b.emit_store(A, [i], 2.0)
    b.exit()
    b.set_span(C.Span("k.py", 5, 5))
    b.emit_tile_op("fill", [A, 0.0], {"flag": True, "n": 3, "x": 0.5, "s": "str", "e": bx, "l": [1, 2],
                                      "el": [bx, 1], "sl": ["a", "b"]})
    b.exit()
    f = b.finish_func("main", [A], {"global_symbol": "main"})
    assert f.name == "main" and f.attrs == {"global_symbol": "main"}
    assert [p.name for p in f.params] == ["A"]
    k = f.body
    assert k.kind == "kernel" and [repr(g) for g in k.grid] == ["1"] and k.attrs == {"prelude": "// p"}
    loop, fill = k.body.seq
    assert loop.kind == "for" and loop.for_kind == "serial" and repr(loop.extent) == "16"
    assert str(loop.span) == "k.py:3:5"
    store = loop.body
    assert store.kind == "store" and str(store.span) == "k.py:4:9" and repr(store.value) == "2.0f32"
    assert fill.op == "fill" and str(fill.span) == "k.py:5:5"
    attrs = fill.attrs
    assert attrs["flag"] is True and attrs["n"] == 3 and attrs["x"] == 0.5 and attrs["s"] == "str"
    assert attrs["e"].same_as(bx) and attrs["l"] == [1, 2] and attrs["sl"] == ["a", "b"]
    assert attrs["el"][0].same_as(bx)
    region, value = fill.args
    assert isinstance(region, C.BufferRegion) and region.buffer.same_as(A) and repr(value) == "0.0f32"
    assert "fill(A[0 :+ 16], 0.0f32)" in f.script()


def test_statement_constructors():
    x = C.Var("x")
    body = C.make_evaluate(C.make_call("void", "tl.sync_threads", []))
    let = C.make_let(x, C.make_int(3), body)
    assert let.kind == "let" and let.var.same_as(x) and let.body.kind == "evaluate"
    iff = C.make_if(x < 2, body, C.make_loop_control(True))
    assert iff.kind == "if" and iff.else_case.is_break is True
    loop = C.make_for(C.Var("i"), 0, 4, "unrolled", body, {"a": 1})
    assert loop.for_kind == "unrolled" and loop.annotations == {"a": 1}
    seq = C.make_seq([body, body])
    assert seq.kind == "seq" and len(seq.seq) == 2
    attr = C.make_attr("scope", "C", body)
    assert attr.key == "scope" and attr.value == "C"
    with pytest.raises(ValueError, match="unknown loop kind"):
        C.make_for(C.Var("i"), 0, 4, "bogus", body)


def test_make_tile_op_arguments():
    A = C.Buffer("A", "float16", [8, 8], "shared")
    s = C.make_tile_op("copy", [A[0:4, :], A], {"disable_tma": True})
    assert s.op == "copy" and len(s.args) == 2 and s.attrs == {"disable_tma": True}
    with pytest.raises(TypeError, match="attribute values must be"):
        C.make_tile_op("copy", [A], {"bad": object()})


def test_dtype_helpers():
    assert C.canonical_dtype("float") == "float32"
    assert C.canonical_dtype("half") == "float16"
    assert C.dtype_info("bfloat16") == ("float", 16, 1)
    with pytest.raises(ValueError, match="unknown dtype 'floot'"):
        C.canonical_dtype("floot")


def test_builder_frames_and_functions():
    b = C.IRBuilder()
    assert b.depth == 1 and not b.in_kernel()
    n = C.Var("n")
    A = b.make_buffer("A", "float32", [n], "global", None)
    bx = C.Var("bx")
    b.enter_kernel([4], [bx], [], [], {"is_npu": True})
    assert b.in_kernel() and b.depth == 2
    b.set_kernel_attr("use_swizzle_panel", 8)
    S = b.make_buffer("S", "float32", [16], "UB", None)
    b.alloc(S)
    b.enter_attr("scope", "V")
    b.enter_scope()
    x = C.Var("x", "float32")
    b.let(x, A[bx] * 2.0)
    b.emit_store(S, [0], x)
    b.exit()
    b.exit()
    b.enter_if(bx < 2)
    b.emit_loop_control(False)
    b.enter_else()
    b.emit_evaluate(C.make_call("void", "ascend.barrier_all", []))
    b.exit()
    b.exit()
    f = b.finish_func("k", [A], {"global_symbol": "k"})
    text = f.script()
    assert "func @k dyn[n: int32](A: global float32[n])" in text
    assert "{is_npu = true, use_swizzle_panel = 8}" in text
    assert 'attr "scope" = "V" {' in text and "let x: float32 = A[bx] * 2.0f32" in text
    assert [v.name for v in f.dynamic_vars] == ["n"]
    g = f.with_attr("tag", "t")
    assert g.attrs == {"global_symbol": "k", "tag": "t"} and f.attrs == {"global_symbol": "k"}
    assert g.with_body(C.make_nop()).body.kind == "seq"
    with pytest.raises(C.TileLangError, match="exit\\(\\) without an open frame"):
        C.IRBuilder().exit()


def test_python_constructed_functions():
    A = C.Buffer("A", "float16", [8], "global")
    body = C.make_kernel([1], [C.Var("bx")], [32], [C.Var("tx")], {}, C.make_tile_op("fill", [A, 0.0]))
    f = C.PrimFunc("f", [A], body, {"global_symbol": "f"})
    assert f.name == "f" and "fill(A[0 :+ 8], 0.0f32)" in f.script()
    C.verify(f)
    with pytest.raises(TypeError, match="duplicate parameter name 'A'"):
        C.PrimFunc("f", [A, A], body)
