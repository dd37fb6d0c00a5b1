#include "ir/structural.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/random_ir.h"

namespace tl {
namespace {

PrimFunc parse(const std::string& text) { return parse_func(text, "<test>"); }

void expect_equal(const std::string& a, const std::string& b) {
  PrimFunc f = parse(a), g = parse(b);
  EXPECT_TRUE(structural_equal(f, g)) << structural_diff(f, g);
  EXPECT_EQ(structural_diff(f, g), "");
  EXPECT_EQ(structural_hash(f), structural_hash(g));
}

// Returns the diff (non-empty) and checks the hashes differ too.
std::string expect_different(const std::string& a, const std::string& b) {
  PrimFunc f = parse(a), g = parse(b);
  EXPECT_FALSE(structural_equal(f, g)) << a << "\nvs\n" << b;
  EXPECT_NE(structural_hash(f), structural_hash(g)) << a << "\nvs\n" << b;
  std::string d = structural_diff(f, g);
  EXPECT_FALSE(d.empty());
  return d;
}

const char* kBase = R"(func @f(A: global float32[16, 16]) {
  for i: int32 in serial(0, 16) {
    for j: int32 in parallel(0, 16) {
      A[i, j] = A[i, j] * 2.0f32
    }
  }
})";

TEST(Structural, NamesDoNotMatter) {
  expect_equal(kBase, R"(func @g(X: global float32[16, 16]) {
  for a: int32 in serial(0, 16) {
    for b: int32 in parallel(0, 16) {
      X[a, b] = X[a, b] * 2.0f32
    }
  }
})");
}

TEST(Structural, EveryKindOfDifferenceIsFound) {
  std::string base = kBase;
  auto variant = [&](const std::string& from, const std::string& to) {
    std::string s = base;
    auto pos = s.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    return s.replace(pos, from.size(), to);
  };
  EXPECT_NE(expect_different(base, variant("2.0f32", "3.0f32")).find("float constants differ"), std::string::npos);
  EXPECT_NE(expect_different(base, variant("A[i, j] * 2", "A[j, i] * 2")).find("different definitions"), std::string::npos);
  EXPECT_NE(expect_different(base, variant("parallel", "serial")).find("loop kinds differ"), std::string::npos);
  EXPECT_NE(expect_different(base, variant("(0, 16) {\n    for", "(0, 8) {\n    for")).find("integer constants"),
            std::string::npos);
  EXPECT_NE(expect_different(base, variant("global float32[16, 16]", "global float16[16, 16]")).find("dtypes differ"),
            std::string::npos);
  EXPECT_NE(expect_different(base, variant("global float32[16, 16]", "shared float32[16, 16]")).find("scopes differ"),
            std::string::npos);
  EXPECT_NE(expect_different(base, variant(" * 2.0f32", " + 2.0f32")).find("operators differ"), std::string::npos);
  EXPECT_NE(expect_different(base, variant("parallel(0, 16)", "parallel(0, 16) {coalesced_width = 4}"))
                .find("attribute keys differ"),
            std::string::npos);
  EXPECT_NE(expect_different(base, variant("i: int32 in serial", "i: int64 in serial")).find("dtypes"), std::string::npos);
  expect_different(base, variant("    }\n  }\n}", "    }\n    break\n  }\n}"));
}

TEST(Structural, DiffShowsPathAndBothSides) {
  std::string a = kBase, b = kBase;
  b.replace(b.find("2.0f32"), 6, "2.5f32");
  std::string d = structural_diff(parse(a), parse(b));
  EXPECT_NE(d.find("mismatch at body.for.body.for.body.store.value.b: float constants differ"), std::string::npos) << d;
  EXPECT_NE(d.find("lhs: 2.0f32"), std::string::npos) << d;
  EXPECT_NE(d.find("rhs: 2.5f32"), std::string::npos) << d;
  EXPECT_NE(d.find("lhs:\n      A[i, j] = A[i, j] * 2.0f32"), std::string::npos) << d;
  EXPECT_NE(d.find("rhs:\n      A[i, j] = A[i, j] * 2.5f32"), std::string::npos) << d;
}

TEST(Structural, SequenceNestingAndEmptyBodiesDoNotMatter) {
  Buffer A("A", DataType::Int32(), {make_int(4)}, MemScope::kGlobal);
  Stmt s0 = make_store(A, {0}, 0), s1 = make_store(A, {1}, 1), s2 = make_store(A, {2}, 2);
  auto seq = [](std::vector<Stmt> v) { return Stmt(std::make_shared<SeqStmtNode>(std::move(v), Span{})); };
  EXPECT_TRUE(structural_equal(seq({s0, seq({s1, s2})}), seq({seq({s0, s1}), s2})));
  EXPECT_EQ(structural_hash(seq({s0, seq({s1, s2})})), structural_hash(seq({seq({s0, s1}), s2})));
  EXPECT_TRUE(structural_equal(seq({s0}), s0));
  EXPECT_TRUE(structural_equal(Stmt(), make_nop()));
  Stmt if_undef = Stmt(std::make_shared<IfThenElseNode>(make_bool(true), s0, Stmt(), Span{}));
  Stmt if_nop = Stmt(std::make_shared<IfThenElseNode>(make_bool(true), s0, make_nop(), Span{}));
  EXPECT_TRUE(structural_equal(if_undef, if_nop));
  EXPECT_EQ(structural_hash(if_undef), structural_hash(if_nop));
  EXPECT_FALSE(structural_equal(seq({s0, s1}), seq({s1, s0})));
  std::string d = structural_diff(seq({s0, s1}), seq({s0, s1, s2}));
  EXPECT_NE(d.find("statement counts differ (2 vs 3)"), std::string::npos) << d;
  EXPECT_NE(d.find("A[2] = 2"), std::string::npos) << d;
}

TEST(Structural, FloatsCompareByBitsWithNanEqualNan) {
  EXPECT_TRUE(structural_equal(make_float(NAN), make_float(NAN)));
  EXPECT_EQ(structural_hash(make_float(NAN)), structural_hash(make_float(-NAN)));
  EXPECT_FALSE(structural_equal(make_float(0.0), make_float(-0.0)));
  EXPECT_FALSE(structural_equal(make_float(1.0), make_float(1.0, DataType::Float(16))));
}

TEST(Structural, FreeVariablesMatchThemselvesUnlessMapped) {
  Var x("x"), y("y");
  EXPECT_TRUE(structural_equal(x + 1, x + 1));
  EXPECT_FALSE(structural_equal(x + 1, y + 1));
  EXPECT_TRUE(structural_equal(x + 1, y + 1, /*map_free_vars=*/true));
  // Mapping is one-to-one: x->y and x->x cannot both hold.
  EXPECT_FALSE(structural_equal(x + x, y + x, true));
  EXPECT_FALSE(structural_equal(x + y, x + x, true));
  EXPECT_TRUE(structural_equal(x * y, y * x, true));  // x<->y consistently
}

TEST(Structural, DefinitionOrderMatters) {
  expect_different(R"(func @f(A: global int32[4, 4]) {
  for i: int32 in serial(0, 4) {
    for j: int32 in serial(0, 4) {
      A[i, j] = i
    }
  }
})",
                   R"(func @f(A: global int32[4, 4]) {
  for i: int32 in serial(0, 4) {
    for j: int32 in serial(0, 4) {
      A[i, j] = j
    }
  }
})");
  // Parameter order is part of the signature.
  expect_different("func @f(A: global int32[4], B: global int32[4]) {\n  A[0] = B[0]\n}",
                   "func @f(A: global int32[4], B: global int32[4]) {\n  B[0] = A[0]\n}");
}

TEST(Structural, BindingsAreScoped) {
  // Outside its loop `i` is the free `i`, inside it is the loop's: a variable used both free and
  // bound must not confuse the two after the loop ends.
  Var i("i"), k("k");
  Buffer A("A", DataType::Int32(), {make_int(4)}, MemScope::kGlobal);
  Stmt a = make_seq({make_for(i, 0, 4, ForKind::kSerial, make_store(A, {i}, 0)), make_store(A, {i}, 1)});
  Stmt b = make_seq({make_for(k, 0, 4, ForKind::kSerial, make_store(A, {k}, 0)), make_store(A, {i}, 1)});
  Stmt c = make_seq({make_for(k, 0, 4, ForKind::kSerial, make_store(A, {k}, 0)), make_store(A, {k}, 1)});
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_FALSE(structural_equal(a, c));
  EXPECT_TRUE(structural_equal(a, c, /*map_free_vars=*/true));  // the trailing free uses pair i with k
  PrintOptions o;
  o.declare_free = true;
  o.canonical_names = true;
  EXPECT_EQ(print_stmt(a, o), print_stmt(b, o));
  EXPECT_EQ(print_stmt(a, o), print_stmt(c, o));  // canonical names map free symbols too
}

TEST(Structural, BuffersComparedAtDefinition) {
  expect_equal("func @f(A: global float32[8]) {\n  alloc S: shared float32[8]\n  S[0] = A[0]\n}",
               "func @f(B: global float32[8]) {\n  alloc T: shared float32[8]\n  T[0] = B[0]\n}");
  expect_different("func @f(A: global float32[8]) {\n  alloc S: shared float32[8]\n  S[0] = A[0]\n}",
                   "func @f(A: global float32[8]) {\n  alloc S: shared float32[4]\n  S[0] = A[0]\n}");
  expect_different("func @f(A: global float32[8]) {\n  alloc S: shared float32[8]\n  S[0] = A[0]\n}",
                   "func @f(A: global float32[8]) {\n  alloc S: local float32[8]\n  S[0] = A[0]\n}");
  expect_different("func @f(A: global float32[8, 8]) {\n  A[0, 0] = 1.0f32\n}",
                   "func @f(A: global float32[8, 8] strides[16, 1]) {\n  A[0, 0] = 1.0f32\n}");
  // Two allocations in different orders of use.
  expect_different(
      "func @f() {\n  alloc S: shared float32[8]\n  alloc T: shared float32[8]\n  S[0] = T[0]\n}",
      "func @f() {\n  alloc S: shared float32[8]\n  alloc T: shared float32[8]\n  T[0] = S[0]\n}");
}

TEST(Structural, DynamicDimsAndScalarParams) {
  expect_equal("func @f dyn[m: int32](A: global float32[m], n: int32) {\n  A[n] = cast<float32>(m)\n}",
               "func @f dyn[q: int32](B: global float32[q], r: int32) {\n  B[r] = cast<float32>(q)\n}");
  expect_different("func @f dyn[m: int32](A: global float32[m], n: int32) {\n  A[n] = cast<float32>(m)\n}",
                   "func @f dyn[m: int32](A: global float32[m], n: int32) {\n  A[n] = cast<float32>(n)\n}");
  expect_different("func @f dyn[m: int32](A: global float32[m], m: int32) {\n  A[0] = 1.0f32\n}",
                   "func @f dyn[m: int32](A: global float32[m], n: int32) {\n  A[0] = 1.0f32\n}");
}

TEST(Structural, AttributesAndTileOps) {
  const char* base =
      "func @f(A: global float32[8], B: global float32[8]) {\n  copy(A[0 :+ 8], B[0 :+ 8]) {order = [1, 2], "
      "x = e:(1 + 2)}\n}";
  expect_equal(base, base);
  std::string s = base;
  expect_different(base, std::string(s).replace(s.find("[1, 2]"), 6, "[2, 1]"));
  expect_different(base, std::string(s).replace(s.find("1 + 2"), 5, "1 + 3"));
  expect_different(base, std::string(s).replace(s.find("copy"), 4, "gemm"));
  expect_different(base, std::string(s).replace(s.find("B[0 :+ 8]"), 9, "A[0 :+ 8]"));
  expect_different(base, std::string(s).replace(s.find("B[0 :+ 8]"), 9, "B[0]"));
  std::string d = structural_diff(parse(base), parse(std::string(s).replace(s.find("1 + 2"), 5, "1 + 3")));
  EXPECT_NE(d.find("tile_op(copy).attrs.x.b"), std::string::npos) << d;
}

TEST(Structural, RandomIRIsEqualToItsAlphaRenamedCopyAndNotToMutations) {
  for (uint64_t seed = 0; seed < 200; ++seed) {
    PrimFunc f = testing::RandomIR(seed, {}, "u").func(5);
    PrimFunc g = testing::RandomIR(seed, {}, "w").func(5);
    ASSERT_TRUE(structural_equal(f, g)) << structural_diff(f, g);
    ASSERT_EQ(structural_hash(f), structural_hash(g));
    // A one-character change of a literal in the text is a different function.
    std::string text = print_func(f);
    size_t pos = text.find("[0 :+ ");
    if (pos == std::string::npos) continue;
    ++pos;
    std::string mutated = text;
    mutated.replace(pos, 1, "1");
    PrimFunc h = parse_func(mutated);
    EXPECT_FALSE(structural_equal(f, h)) << "seed " << seed;
    EXPECT_NE(structural_hash(f), structural_hash(h)) << "seed " << seed;
  }
}

}  // namespace
}  // namespace tl
