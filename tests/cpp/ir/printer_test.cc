#include "ir/printer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/parser.h"
#include "ir/random_ir.h"
#include "ir/structural.h"

namespace tl {
namespace {

TEST(Printer, Literals) {
  EXPECT_EQ(print_expr(make_int(5)), "5");
  EXPECT_EQ(print_expr(make_int(-5, DataType::Int64())), "-5i64");
  EXPECT_EQ(print_expr(make_int(200, DataType::UInt(8))), "200u8");
  EXPECT_EQ(print_expr(make_bool(true)), "true");
  EXPECT_EQ(print_expr(make_float(0.1)), "0.1f32");
  EXPECT_EQ(print_expr(make_float(2.0, DataType::Float(16))), "2.0f16");
  EXPECT_EQ(print_expr(make_float(1e20, DataType::Float(64))), "1e+20f64");
  EXPECT_EQ(print_expr(make_float(-1.5, DataType::BFloat16())), "-1.5bf16");
  EXPECT_EQ(print_expr(make_float(0.5, DataType::F8E4M3())), "0.5f8e4m3");
  EXPECT_EQ(print_expr(make_float(0.5, DataType::F8E5M2())), "0.5f8e5m2");
  EXPECT_EQ(print_expr(make_float(INFINITY)), "inf_f32");
  EXPECT_EQ(print_expr(make_float(-INFINITY, DataType::Float(16))), "-inf_f16");
  EXPECT_EQ(print_expr(make_float(NAN, DataType::BFloat16())), "nan_bf16");
  EXPECT_EQ(print_expr(make_string("a\"b\\c\n\x02")), "\"a\\\"b\\\\c\\n\\x02\"");
  // Valid UTF-8 stays as is; other high bytes are escaped so the text is valid UTF-8.
  EXPECT_EQ(print_expr(make_string("caf\xc3\xa9 \xff\xc3")), "\"caf\xc3\xa9 \\xff\\xc3\"");
  EXPECT_EQ(print_expr(Expr(std::make_shared<IntImmNode>(DataType::Int32().with_lanes(4), 7))), "const<int32x4>(7)");
  // A negation node around a literal keeps its parens: `-5` would read back as the literal.
  EXPECT_EQ(print_expr(Expr(std::make_shared<UnaryNode>(DataType::Int32(), UnOp::kNeg, make_int(5)))), "-(5)");
}

TEST(Printer, ShortestExactFloats) {
  for (double v : {0.1, 1.0 / 3.0, 6.02214076e23, 5e-324, -0.0, 123456789.0, 1.0000000000000002}) {
    std::string text = print_expr(make_float(v, DataType::Float(64)));
    Expr back = parse_expr(text);
    double got = back.as<FloatImmNode>()->value;
    EXPECT_EQ(std::signbit(got), std::signbit(v)) << text;
    EXPECT_EQ(got, v) << text;
  }
  EXPECT_EQ(print_expr(make_float(0.1, DataType::Float(64))), "0.1f64");  // not 0.10000000000000001
}

TEST(Printer, CallsShowTheirTypeOnlyWhenNotImplied) {
  Var x("x", DataType::Float(16));
  EXPECT_EQ(print_expr(make_call(DataType::Float(16), "exp", {x})), "exp(x)");
  EXPECT_EQ(print_expr(make_call(DataType::Float32(), "exp", {x})), "exp<float32>(x)");
  EXPECT_EQ(print_expr(make_call(DataType::Void(), "tl.sync_threads", {})), "tl.sync_threads()");
  EXPECT_EQ(print_expr(make_call(DataType::Int32(), "tl.get_id", {})), "tl.get_id<int32>()");
  // Names that would read as builtins or are not identifiers are quoted.
  EXPECT_EQ(print_expr(make_call(DataType::Float(16), "min", {x})), "call \"min\"(x)");
  EXPECT_EQ(print_expr(make_call(DataType::Float(16), "a b", {x})), "call \"a b\"(x)");
}

TEST(Printer, NamesAreUniqueReadableAndNotKeywords) {
  Var a("i"), b("i"), kw("for"), dt("float32"), lit("inf_f32"), dotted("a.b"), empty("");
  EXPECT_EQ(print_expr(a + b), "i + i_1");
  EXPECT_EQ(print_expr(kw + dt), "for_ + float32_");
  EXPECT_EQ(print_expr(lit + dotted), "inf_f32_ + a_b");
  EXPECT_EQ(print_expr(empty), "v");
}

TEST(Printer, SiblingScopesReuseNamesNestedOnesDoNot) {
  Buffer A("A", DataType::Int32(), {make_int(8)}, MemScope::kGlobal);
  Var i1("i"), i2("i"), i3("i");
  Stmt inner = make_for(i3, 0, 2, ForKind::kSerial, make_store(A, {i2 + i3}, 0));
  Stmt s = make_seq({make_for(i1, 0, 8, ForKind::kSerial, make_store(A, {i1}, 0)),
                     make_for(i2, 0, 4, ForKind::kSerial, inner)});
  PrimFunc f("f", {{"A", Var(), A}}, s);
  std::string text = print_func(f);
  EXPECT_NE(text.find("for i: int32 in serial(0, 8)"), std::string::npos) << text;
  EXPECT_NE(text.find("for i: int32 in serial(0, 4)"), std::string::npos) << text;
  EXPECT_NE(text.find("for i_1: int32 in serial(0, 2)"), std::string::npos) << text;
  EXPECT_NE(text.find("A[i + i_1] = 0"), std::string::npos) << text;
}

TEST(Printer, LetAndAllocPrintFlatWhenLastElseBraced) {
  Buffer A("A", DataType::Float32(), {make_int(4)}, MemScope::kGlobal);
  Buffer S("S", DataType::Float32(), {make_int(4)}, MemScope::kShared);
  Var x("x", DataType::Float32());
  Stmt braced = make_allocate(S, make_store(S, {0}, make_float(1.0)));
  Stmt flat = make_let(x, make_load(A, {1}), make_store(A, {0}, x));
  PrimFunc f("f", {{"A", Var(), A}}, make_seq({braced, flat}));
  EXPECT_EQ(print_func(f),
            "func @f(A: global float32[4]) {\n"
            "  alloc S: shared float32[4] {\n"
            "    S[0] = 1.0f32\n"
            "  }\n"
            "  let x: float32 = A[1]\n"
            "  A[0] = x\n"
            "}\n");
}

TEST(Printer, FreeSymbolsAreDeclared) {
  Var k("k", DataType::Int64());
  Buffer T("T", DataType::Float(16), {k}, MemScope::kLocal);
  Stmt s = make_store(T, {k - make_int(1, DataType::Int64())}, make_float(0.0, DataType::Float(16)));
  EXPECT_EQ(print_stmt(s), "T[k - 1i64] = 0.0f16\n");
  PrintOptions o;
  o.declare_free = true;
  EXPECT_EQ(print_stmt(s, o), "free[k: int64, T: local float16[k]]\nT[k - 1i64] = 0.0f16\n");
  PrimFunc f("f", {}, s);
  EXPECT_EQ(print_func(f), "func @f() free[k: int64, T: local float16[k]] {\n  T[k - 1i64] = 0.0f16\n}\n");
}

// Builds the same small kernel with the given names.
PrimFunc named_kernel(const std::string& a, const std::string& i, const std::string& s, const std::string& n) {
  Var vn(n), vi(i), bx("bx_" + i);
  Buffer A(a, DataType::Float32(), {vn}, MemScope::kGlobal);
  Buffer S(s, DataType::Float32(), {make_int(32)}, MemScope::kShared);
  Stmt body = make_allocate(S, make_seq({make_for(vi, 0, 32, ForKind::kParallel, make_store(S, {vi}, make_load(A, {bx * 32 + vi}))),
                                         make_tile_op("copy", {BufferRegion::full(S), BufferRegion(A, {Range(bx * 32, 32)})})}));
  Stmt k = make_kernel({ceildiv(vn, 32)}, {bx}, {make_int(32)}, {Var("tx_" + i)}, {}, body);
  return PrimFunc("kern", {{a, Var(), A}, {n, vn, Buffer()}}, k, {{"global_symbol", Attr("kern")}});
}

TEST(Printer, CanonicalNamesIgnoreVariableAndBufferNames) {
  PrimFunc f = named_kernel("A", "i", "S", "n");
  PrimFunc g = named_kernel("Input", "row", "tile", "len");
  EXPECT_NE(print_func(f), print_func(g));
  EXPECT_EQ(canonical_text(f), canonical_text(g));
  std::string text = canonical_text(f);
  EXPECT_NE(text.find("func @kern dyn[v0: int32](b0: global float32[v0], v0: int32)"), std::string::npos) << text;
  EXPECT_EQ(text.find("\"A\""), std::string::npos);
  // Anything else that differs shows up.
  PrimFunc h = named_kernel("A", "i", "S", "n").with_attr("global_symbol", Attr("other"));
  EXPECT_NE(canonical_text(f), canonical_text(h));
}

TEST(Printer, CanonicalNamesNumberEachBinding) {
  // One variable bound by two sibling loops, or two variables: same canonical text.
  Buffer A("A", DataType::Int32(), {make_int(8)}, MemScope::kGlobal);
  Var i("i"), j("j");
  auto loop = [&](const Var& v) { return make_for(v, 0, 8, ForKind::kSerial, make_store(A, {v}, v)); };
  PrimFunc shared("f", {{"A", Var(), A}}, make_seq({loop(i), loop(i)}));
  PrimFunc distinct("f", {{"A", Var(), A}}, make_seq({loop(i), loop(j)}));
  EXPECT_EQ(canonical_text(shared), canonical_text(distinct));
  EXPECT_TRUE(structural_equal(shared, distinct));
}

TEST(Printer, CanonicalTextEqualIffStructurallyEqualOnRandomPairs) {
  // Same structure under different names prints the same canonical text; different seeds
  // (different structure) almost never do, and when they do they must be structurally equal.
  for (uint64_t seed = 0; seed < 150; ++seed) {
    PrimFunc f = testing::RandomIR(seed, {}, "p").func(4);
    PrimFunc g = testing::RandomIR(seed, {}, "q").func(4);
    PrimFunc h = testing::RandomIR(seed + 7919, {}, "p").func(4);
    ASSERT_EQ(canonical_text(f), canonical_text(g)) << "seed " << seed;
    ASSERT_TRUE(structural_equal(f, g)) << structural_diff(f, g);
    ASSERT_EQ(canonical_text(f) == canonical_text(h), structural_equal(f, h)) << "seed " << seed;
  }
}

}  // namespace
}  // namespace tl
