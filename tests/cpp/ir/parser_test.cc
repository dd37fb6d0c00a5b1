#include "ir/parser.h"

#include <gtest/gtest.h>

#include <random>

#include "ir/error.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "ir/verifier.h"
#include "ir/random_ir.h"

namespace tl {
namespace {

using testing::RandomIR;

// print -> parse is structurally equal, and printing again gives the same text.
void expect_roundtrip(const PrimFunc& f) {
  std::string text = print_func(f);
  PrimFunc g;
  try {
    g = parse_func(text, "<roundtrip>");
  } catch (const Error& e) {
    FAIL() << e.what() << "\n" << text;
  }
  EXPECT_EQ(structural_diff(f, g), "") << text;
  EXPECT_EQ(print_func(g), text);
  EXPECT_EQ(structural_hash(f), structural_hash(g));
  EXPECT_EQ(canonical_text(f), canonical_text(g));
  // The canonical text is itself valid input.
  PrimFunc h = parse_func(canonical_text(f), "<canonical>");
  EXPECT_EQ(structural_diff(f, h), "") << canonical_text(f);
}

std::map<std::string, Var> var_map(const std::vector<Var>& vars) {
  std::map<std::string, Var> m;
  for (auto& v : vars) m[v.name()] = v;
  return m;
}
std::map<std::string, Buffer> buffer_map(const std::vector<Buffer>& bufs) {
  std::map<std::string, Buffer> m;
  for (auto& b : bufs) m[b.name()] = b;
  return m;
}

TEST(Parser, RandomExpressionsRoundTrip) {
  for (uint64_t seed = 0; seed < 1500; ++seed) {
    RandomIR gen(seed);
    gen.add_standard_vars();
    gen.add_standard_buffers();
    DataType t = gen.scalar_type();
    if (seed % 10 == 0) t = (seed % 20 == 0 ? DataType::Float32() : DataType::Int32()).with_lanes(gen.uniform(2, 8));
    Expr e = gen.expr(t, gen.uniform(1, 6));
    std::string text = print_expr(e);
    Expr back;
    try {
      back = parse_expr(text, var_map(gen.vars), buffer_map(gen.buffers));
    } catch (const Error& err) {
      FAIL() << "seed " << seed << ": " << err.what() << "\n" << text;
    }
    ASSERT_TRUE(structural_equal(e, back)) << "seed " << seed << "\n" << text << "\n" << structural_diff(e, back);
    ASSERT_EQ(print_expr(back), text) << "seed " << seed;
    ASSERT_EQ(structural_hash(e), structural_hash(back)) << "seed " << seed;
  }
}

TEST(Parser, RandomFunctionsRoundTrip) {
  for (uint64_t seed = 0; seed < 300; ++seed) {
    RandomIR gen(seed);
    PrimFunc f = gen.func(gen.uniform(2, 6));
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_roundtrip(f);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(Parser, RandomFunctionsWithAwkwardNamesRoundTrip) {
  // Repeated names, keywords, dtype names, literal-like names, dots and empty names.
  std::vector<std::string> names = {"i",   "i",       "for",   "float32", "inf",  "nan_f32", "min", "strides",
                                    "free", "e",      "buf",   "x.y",     "1abc", "",        "i_1", "kernel",
                                    "half", "true",   "const", "tileop",  "s",    "A"};
  for (uint64_t seed = 0; seed < 200; ++seed) {
    RandomIR gen(1000 + seed, names);
    PrimFunc f = gen.func(gen.uniform(2, 5));
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_roundtrip(f);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(Parser, RandomStatementsRoundTripThroughPrintStmt) {
  for (uint64_t seed = 0; seed < 200; ++seed) {
    RandomIR gen(5000 + seed);
    PrimFunc f = gen.func(4);
    PrintOptions opts;
    opts.declare_free = true;
    std::string text = print_stmt(f.body(), opts);
    Stmt back;
    try {
      back = parse_stmt(text);
    } catch (const Error& e) {
      FAIL() << "seed " << seed << ": " << e.what() << "\n" << text;
    }
    ASSERT_EQ(structural_diff(f.body(), back, /*map_free_vars=*/true), "") << "seed " << seed << "\n" << text;
  }
}

// One function that holds every construct of the IR explicitly.
PrimFunc every_construct() {
  Var n("n"), m("m", DataType::Int64()), alpha("alpha", DataType::Float32());
  Buffer A("A", DataType::Float32(), {n, make_int(64)}, MemScope::kGlobal);
  Buffer B("B", DataType::BFloat16(), {m, make_int(32, DataType::Int64())}, MemScope::kGlobal,
           {make_int(64, DataType::Int64()), make_int(1, DataType::Int64())});
  Buffer C("C", DataType::F8E4M3(), {make_int(16)}, MemScope::kGlobal);
  Buffer S("S", DataType::Float32(), {make_int(32), make_int(64)}, MemScope::kShared);
  Buffer F("F", DataType::Float32(), {make_int(32), make_int(64)}, MemScope::kFragment);
  Buffer L("L", DataType::Int64(), {make_int(4)}, MemScope::kLocal);
  Buffer V("V", DataType::Float32(), {}, MemScope::kLocalVar);
  Buffer U("U", DataType::Float(16), {make_int(128)}, MemScope::kUB);
  Buffer Bar("bar", DataType::UInt(64), {make_int(2)}, MemScope::kBarrier);
  Var bx("bx"), by("by"), tx("tx"), i("i"), j("j"), k("k"), t("t", DataType::Float32()), li("li", DataType::UInt(8));
  Var li_vars("iv"), lj_vars("jv");

  auto mk_bin = [](BinOp op, Expr a, Expr b) {
    DataType r = binop_is_compare(op) || binop_is_logical(op) ? DataType::Bool() : a.dtype();
    return Expr(std::make_shared<BinaryNode>(r, op, a, b));
  };
  std::vector<Stmt> inner;
  // Every binary operator on matching operands, unfolded.
  for (int op = 0; op <= static_cast<int>(BinOp::kShr); ++op) {
    BinOp o = static_cast<BinOp>(op);
    Expr a = binop_is_logical(o) ? Expr(i < j) : Expr(i), b = binop_is_logical(o) ? Expr(j > 3) : Expr(j + 1);
    inner.push_back(make_evaluate(make_call(DataType::Void(), "tl.use", {mk_bin(o, a, b)})));
  }
  inner.push_back(make_evaluate(mk_bin(BinOp::kAdd, make_int(2), make_int(3))));  // no folding
  inner.push_back(make_store(L, {make_int(0)}, Expr(std::make_shared<UnaryNode>(DataType::Int64(), UnOp::kNeg,
                                                                                 make_int(7, DataType::Int64())))));
  inner.push_back(make_store(L, {make_int(1)}, make_unary(UnOp::kBitNot, make_cast(DataType::Int64(), i))));
  inner.push_back(make_store(
      S, {i, j},
      make_select(make_unary(UnOp::kNot, i < j), make_load(A, {bx * 32 + i, j}),
                  make_cast(DataType::Float32(), make_load(B, {make_cast(DataType::Int64(), i), make_int(0, DataType::Int64())})))));
  inner.push_back(make_store(F, {i, j}, make_call(DataType::Float32(), "exp", {make_load(S, {i, j}) * alpha})));
  inner.push_back(make_store(V, {}, make_float(1.0 / 3.0)));
  inner.push_back(make_store(U, {make_ramp(i * 4, make_int(1), 8)}, make_broadcast(make_float(0.5, DataType::Float(16)), 8)));
  inner.push_back(make_evaluate(make_call(DataType::Void(), "tl.printf",
                                          {make_string("a \"quoted\"\\ line\n\ttab \x01 \xc3\xa9 %d"), i})));
  inner.push_back(make_evaluate(make_call(DataType::Void(), "consts",
                                          {make_float(1.5, DataType::Float(16)), make_float(-2.0, DataType::BFloat16()),
                                           make_float(448.0, DataType::F8E4M3()), make_float(-57344.0, DataType::F8E5M2()),
                                           make_float(1e-310, DataType::Float(64)), make_float(INFINITY),
                                           make_float(-INFINITY, DataType::BFloat16()), make_float(NAN, DataType::Float(16)),
                                           make_float(-0.0), make_int(-128, DataType::Int(8)), make_int(255, DataType::UInt(8)),
                                           make_int(-1, DataType::UInt(64)), make_int(INT64_MIN, DataType::Int64()),
                                           make_int(3, DataType::Int(16)), make_int(70000, DataType::UInt(32)),
                                           make_bool(true), make_bool(false)})));
  inner.push_back(make_evaluate(make_call(DataType::Int32().with_lanes(4), "vec",
                                          {Expr(std::make_shared<IntImmNode>(DataType::Int32().with_lanes(4), 3)),
                                           Expr(std::make_shared<FloatImmNode>(DataType::Float32().with_lanes(4), -INFINITY)),
                                           make_ramp(i, 2, 4)})));
  Stmt if_else = make_if(i < 4, make_loop_control(true), make_loop_control(false));
  inner.push_back(make_for(k, 0, 8, ForKind::kSerial, make_seq({if_else, make_evaluate(make_call(DataType::Void(), "tl.sync_threads", {}))})));
  // A let followed by more statements prints braced; the last one prints flat.
  inner.push_back(make_let(li, make_int(3, DataType::UInt(8)), make_store(L, {make_int(2)}, make_cast(DataType::Int64(), li))));
  inner.push_back(make_evaluate(make_call(DataType::Void(), "after_let", {})));
  inner.push_back(make_let(t, make_load(F, {i, j}), make_store(F, {i, j}, t * t)));

  Stmt loops = make_for(
      i, 0, 32, ForKind::kParallel,
      make_for(j, 0, 64, ForKind::kVectorized, make_seq(inner), {{"note", Attr("v")}}),
      {{"coalesced_width", Attr(4)}});
  std::vector<Stmt> body;
  body.push_back(make_tile_op("copy", {BufferRegion(A, {Range(bx * 32, 32), Range(0, 64)}), BufferRegion::full(S)},
                              {{"disable_tma", Attr(true)}}));
  body.push_back(make_tile_op("fill", {BufferRegion::full(F), make_float(-INFINITY)}));
  body.push_back(make_tile_op("gemm", {BufferRegion::full(S), BufferRegion::full(S), BufferRegion::full(F)},
                              {{"transpose_B", Attr(true)}, {"policy", Attr("FullRow")}, {"clear_accum", Attr(eq(by, 0))},
                               {"k_pack", Attr(int64_t{1})}}));
  body.push_back(make_tile_op("annotate_layout", {BufferRegion::full(S)},
                              {{"kind", Attr("custom")},
                               {"vars", Attr(std::vector<Expr>{li_vars, lj_vars})},
                               {"exprs", Attr(std::vector<Expr>{li_vars * 64 + floormod(lj_vars, 64)})}}));
  body.push_back(make_tile_op("dump_tensor", {BufferRegion(V, {})}, {{"size", Attr(int64_t{1})}}));
  body.push_back(make_tile_op("odd", {},
                              {{"none", Attr()}, {"f", Attr(2.5)}, {"finf", Attr(-INFINITY)}, {"fnan", Attr(NAN)},
                               {"ints", Attr(std::vector<int64_t>{1, -2, 3})}, {"empty", Attr(std::vector<int64_t>{})},
                               {"strs", Attr(std::vector<std::string>{"a", "b,c"})}, {"buf", Attr(A)},
                               {"weird key!", Attr(int64_t{-5})}}));
  body.push_back(make_tile_op("for", {make_int(1)}));  // an op named like a keyword
  body.push_back(loops);
  body.push_back(make_attr("scope", Attr("C"), make_tile_op("reduce", {BufferRegion::full(F), BufferRegion(S, {Range(0, 32), Range(0, 1)})},
                                                            {{"type", Attr("sum")}, {"dim", Attr(int64_t{1})}, {"clear", Attr(false)}})));
  body.push_back(make_allocate(Bar, make_evaluate(make_call(DataType::Void(), "tl.mbarrier_init", {make_load(Bar, {0})}))));
  Stmt kernel_body = make_allocate(S, make_allocate(F, make_allocate(L, make_allocate(V, make_allocate(U, make_seq(body))))));
  Stmt kernel = make_kernel({ceildiv(n, 32), make_int(4)}, {bx, by}, {make_int(128)}, {tx},
                            {{"use_swizzle_panel", Attr(8)}, {"prelude", Attr("// hi")}}, kernel_body);
  Stmt npu = make_kernel({make_int(8), make_int(2)}, {Var("cid"), Var("vid")}, {}, {},
                         {{"is_npu", Attr(true)}, {"npu_vid", Attr(true)}}, make_evaluate(make_call(DataType::Void(), "ascend.barrier_all", {})));
  return PrimFunc("main",
                  {{"A", Var(), A}, {"B", Var(), B}, {"n", n, Buffer()}, {"C", Var(), C}, {"alpha", alpha, Buffer()}},
                  make_seq({kernel, npu}), {{"global_symbol", Attr("main")}, {"tl.readonly", Attr(std::vector<std::string>{"A"})}});
}

TEST(Parser, EveryConstructRoundTrips) {
  PrimFunc f = every_construct();
  expect_roundtrip(f);
  std::string text = print_func(f);
  // Spot checks of the spellings docs/IR_TEXT.md documents.
  for (const char* piece :
       {"dyn[n: int32, m: int64]", "strides[64i64, 1i64]", "2 + 3", "-(7i64)", "~cast<int64>(i)", "\\\"quoted\\\"\\\\ line\\n\\ttab \\x01",
        "1.5f16", "-2.0bf16", "448.0f8e4m3", "-57344.0f8e5m2", "1e-310f64", "inf_f32", "-inf_bf16", "nan_f16", "-0.0f32",
        "-128i8", "255u8", "-1u64", "-9223372036854775808i64", "true", "const<int32x4>(3)", "const<float32x4>(-inf)",
        "ramp(i, 2, 4)", "broadcast(0.5f16, 8)", "V[] = ", "V[:]", "tileop \"for\"(1)", "\"weird key!\" = -5",
        "buf = buf:A", "strs = s:[\"a\", \"b,c\"]", "ints = [1, -2, 3]", "empty = []", "none = none", "fnan = nan",
        "finf = -inf", "f = 2.5", "clear_accum = e:(by == 0)", "free[iv: int32, jv: int32]", "let li: uint8 = 3u8 {",
        "alloc bar: barrier uint64[2]\n", "kernel(grid=[8, 2], blocks=[cid: int32, vid: int32], threads=[], thread_vars=[])",
        "consts<void>(", "tl.sync_threads()"})
    EXPECT_NE(text.find(piece), std::string::npos) << "missing `" << piece << "` in\n" << text;
}

TEST(Parser, NoConstantFolding) {
  Expr e = parse_expr("2 + 3 * 4");
  auto* add = e.as<BinaryNode>();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->op, BinOp::kAdd);
  EXPECT_EQ(print_expr(e), "2 + 3 * 4");
  Expr c = parse_expr("cast<int64>(5)");
  ASSERT_NE(c.as<CastNode>(), nullptr);
  EXPECT_EQ(c.dtype(), DataType::Int64());
  Expr neg = parse_expr("-(5)");
  ASSERT_NE(neg.as<UnaryNode>(), nullptr);
  Expr lit = parse_expr("-5");
  ASSERT_NE(lit.as<IntImmNode>(), nullptr);
  EXPECT_EQ(lit.as<IntImmNode>()->value, -5);
}

TEST(Parser, PrecedenceAndAssociativity) {
  Var a("a"), b("b"), c("c");
  std::map<std::string, Var> vars = {{"a", a}, {"b", b}, {"c", c}};
  EXPECT_TRUE(structural_equal(parse_expr("a - b - c", vars), (a - b) - c));
  EXPECT_TRUE(structural_equal(parse_expr("a - (b - c)", vars), a - (b - c)));
  EXPECT_TRUE(structural_equal(parse_expr("a + b * c", vars), a + b * c));
  EXPECT_TRUE(structural_equal(parse_expr("a < b && b < c || a == c", vars), ((a < b) && (b < c)) || eq(a, c)));
  Expr shifted = parse_expr("a << 2 + b", vars);  // + binds tighter than <<
  ASSERT_NE(shifted.as<BinaryNode>(), nullptr);
  EXPECT_EQ(shifted.as<BinaryNode>()->op, BinOp::kShl);
  EXPECT_TRUE(structural_equal(parse_expr("-a * b", vars), make_unary(UnOp::kNeg, a) * b));
  EXPECT_TRUE(structural_equal(parse_expr("a - -3", vars), a - make_int(-3)));
}

TEST(Parser, HandWrittenConveniences) {
  // Omitted loop/let dtypes, literals adopting the slot's type, promotion of mixed operands.
  PrimFunc f = parse_func(R"(
// comments are allowed
func @f(A: global float32[16], n: int64) {
  for i in serial(0, 16) {   # int32 loop var
    let x = A[i] * 2.0         // x: float32 from its value
    let y: int64 = 0
    A[i] = x + cast<float32>(n + y + 1)
  }
}
)");
  EXPECT_NO_THROW(verify(f));
  std::string text = print_func(f);
  EXPECT_NE(text.find("for i: int32 in serial(0, 16)"), std::string::npos) << text;
  EXPECT_NE(text.find("let x: float32 = A[i] * 2.0f32"), std::string::npos) << text;
  EXPECT_NE(text.find("let y: int64 = 0i64"), std::string::npos) << text;
  EXPECT_NE(text.find("n + y + 1i64"), std::string::npos) << text;
}

TEST(Parser, ScalarParamThatIsAlsoADynamicDim) {
  PrimFunc f = parse_func("func @f dyn[n: int32](A: global float32[n], n: int32) {\n  A[0] = cast<float32>(n)\n}\n");
  ASSERT_EQ(f.params().size(), 2u);
  EXPECT_TRUE(f.params()[1].var.same_as(f.params()[0].buffer.shape()[0]));
  expect_roundtrip(f);
}

TEST(Parser, SiblingLoopsSharingAVariable) {
  // A pass that duplicates a loop reuses its variable; the text binds two, equality maps both.
  Var i("i");
  Buffer A("A", DataType::Int32(), {make_int(8)}, MemScope::kGlobal);
  Stmt loop = make_for(i, 0, 8, ForKind::kSerial, make_store(A, {i}, i));
  PrimFunc f("f", {{"A", Var(), A}}, make_seq({loop, loop}));
  expect_roundtrip(f);
}

TEST(Parser, ElseIfAndNestedBraces) {
  PrimFunc f = parse_func(R"(func @f(A: global int32[4]) {
  for i: int32 in serial(0, 4) {
    if (i == 0) {
      A[i] = 1
    } else if (i == 1) {
      A[i] = 2
    } else {
      alloc T: local int32[1] {
        T[0] = i
      }
      A[i] = 3
    }
  }
})");
  auto* loop = f.body().as<ForNode>();
  ASSERT_NE(loop, nullptr);
  auto* outer_if = loop->body.as<IfThenElseNode>();
  ASSERT_NE(outer_if, nullptr);
  ASSERT_NE(outer_if->else_case.as<IfThenElseNode>(), nullptr);
  expect_roundtrip(f);
}

// ---- errors carry file:line:col ----

void expect_syntax_error(const std::string& text, const std::string& where, const std::string& what) {
  try {
    parse_func(text, "k.tir");
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const SyntaxError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("k.tir:" + where + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

TEST(Parser, ErrorsNameLineAndColumn) {
  expect_syntax_error("func @f(A: global float32[4]) {\n  A[0] = x\n}", "2:10", "undefined variable 'x'");
  expect_syntax_error("func @f(A: global float32[4]) {\n  B[0] = 1.0\n}", "2:3", "undefined buffer 'B'");
  expect_syntax_error("func @f(A: global floot32[4]) {\n}", "1:19", "unknown dtype 'floot32'");
  expect_syntax_error("func @f(A: glob float32[4]) {\n}", "1:12", "unknown memory scope or dtype 'glob'");
  expect_syntax_error("func @f() {\n  evaluate \"abc\n}", "2:12", "unterminated string");
  expect_syntax_error("func @f() {\n  evaluate 1 $ 2\n}", "2:14", "unexpected character '$'");
  expect_syntax_error("func @f() {\n  for i: int32 in sideways(0, 4) {\n  }\n}", "2:19", "unknown loop kind 'sideways'");
  expect_syntax_error("func @f() {\n  let x: int32 = 1.5f32\n}", "2:3", "let x");
  expect_syntax_error("func @f() {\n  evaluate 5q8\n}", "2:12", "unknown literal suffix 'q8'");
  expect_syntax_error("func @f() {\n  evaluate 99999999999999999999\n}", "2:12", "out of range");
  expect_syntax_error("func @f(A: global float32[4, 4]) {\n  A[0, 1, 2] = 1.0f32\n}", "2:3", "dimensions");
  expect_syntax_error("func @f() {\n  evaluate f(1\n}", "3:1", "expected ')'");
  expect_syntax_error("func @f() {\n  evaluate 1\n", "3:1", "expected '}'");
  expect_syntax_error("func @f() {\n}\nextra", "3:1", "after the end of the input");
  expect_syntax_error("func @f() {\n  evaluate \"\\q\"\n}", "2:12", "unknown escape");
  expect_syntax_error("func @f() {\n  alloc G: global float32[4]\n}", "2:3", "cannot be global");
  expect_syntax_error("func @f(A: global float32[4]) {\n  copy(A[0 :+ 4, 1])\n}", "2:19", "expected ':+'");
  expect_syntax_error("func @f() {\n  kernel(grid=[1], blocks=[b], threads=[], thread_vars=[]) {x = 1, x = 2} {\n  }\n}", "2:68",
                      "duplicate attribute 'x'");
}

TEST(Parser, ParseExprAndStmtWithPredefinedNames) {
  Var i("i");
  Buffer A("A", DataType::Float32(), {make_int(8)}, MemScope::kShared);
  Stmt s = parse_stmt("A[i] = A[i] + 1.0f32\nevaluate tl.sync_threads<void>()", {{"i", i}}, {{"A", A}});
  auto* seq = s.as<SeqStmtNode>();
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->seq.size(), 2u);
  auto* store = seq->seq[0].as<BufferStoreNode>();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->buffer.same_as(A));
  EXPECT_TRUE(store->indices[0].same_as(i));
  EXPECT_THROW(parse_expr("i + j", {{"i", i}}), SyntaxError);
  // A free[...] header declares what the statement uses.
  Stmt t = parse_stmt("free[k: int64, B: local float16[k]]\nB[k - 1i64] = 0.0f16");
  EXPECT_EQ(t.as<BufferStoreNode>()->buffer.dtype(), DataType::Float(16));
}

TEST(Parser, MutatedTextNeverCrashes) {
  // Random edits of valid text either parse or raise a typed error with a location.
  std::string base = print_func(every_construct());
  std::mt19937_64 rng(42);
  const std::string alphabet = "()[]{},:=<>+-*/%&|^~!@\"\\.0123456789abcefinrstx_ \n#";
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text = base;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % text.size();
      switch (rng() % 3) {
        case 0: text.erase(pos, 1 + rng() % 8); break;
        case 1: text.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
        default: text[pos] = alphabet[rng() % alphabet.size()]; break;
      }
    }
    try {
      PrimFunc f = parse_func(text, "fuzz.tir");
      std::string again = print_func(f);
      PrimFunc g = parse_func(again, "fuzz2.tir");
      EXPECT_TRUE(structural_equal(f, g)) << text;
    } catch (const SyntaxError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("fuzz.tir:", 0), 0u) << e.what();
    }
  }
}

TEST(Parser, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "func @f(A: global int32[4]) {\n  A[0] = " + std::string(5000, '(') + "1" + std::string(5000, ')') + "\n}";
  EXPECT_THROW(parse_func(deep), SyntaxError);
  std::string chain = "func @f(A: global int32[4]) {\n  A[0] = 1";
  for (int i = 0; i < 5000; ++i) chain += " + 1";
  EXPECT_THROW(parse_func(chain + "\n}"), SyntaxError);
  std::string lets = "func @f(A: global int32[4]) {\n";
  for (int i = 0; i < 5000; ++i) lets += "  let x" + std::to_string(i) + ": int32 = 0\n";
  EXPECT_THROW(parse_func(lets + "}"), SyntaxError);
}

TEST(Parser, SpansPointAtTheStatement) {
  PrimFunc f = parse_func("func @f(A: global float32[4]) {\n  for i: int32 in serial(0, 4) {\n    A[i] = 0.0f32\n  }\n}",
                          "span.tir");
  auto* loop = f.body().as<ForNode>();
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->span.str(), "span.tir:2:3");
  EXPECT_EQ(loop->body.span().str(), "span.tir:3:5");
}

}  // namespace
}  // namespace tl
