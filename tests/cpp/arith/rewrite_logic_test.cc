// One test per comparison / logic rule of src/arith/rewrite_logic.cc.
#include <gtest/gtest.h>

#include "arith/analyzer.h"
#include "ir/printer.h"

namespace tl {
namespace {

class RewriteLogic : public ::testing::Test {
 protected:
  void SetUp() override { an.bind(i, Range(0, 128)); }
  std::string S(const Expr& e) { return print_expr(an.simplify(e)); }
  Expr Not(const Expr& e) { return make_unary(UnOp::kNot, e); }
  Analyzer an;
  Var x{"x"}, y{"y"}, i{"i"}, n{"n"};
  Var b{"b", DataType::Bool()}, c{"c", DataType::Bool()};
  Var f{"f", DataType::Float32()}, g{"g", DataType::Float32()};
};

TEST_F(RewriteLogic, ComparisonsDecidedByBounds) {
  EXPECT_EQ(S(i < 128), "true");
  EXPECT_EQ(S(i >= 0), "true");
  EXPECT_EQ(S(i < 127), "i < 127");
  EXPECT_EQ(S(i * 2 + 1 > 255), "false");
  EXPECT_EQ(S(eq(i, 200)), "false");
  EXPECT_EQ(S(ne(i, -1)), "true");
  EXPECT_EQ(S(x <= x), "true");
  EXPECT_EQ(S(x < x + 1), "true");
}

TEST_F(RewriteLogic, CanonicalComparisons) {
  EXPECT_EQ(S(x * 4 < 16), "x < 4");
  EXPECT_EQ(S(x * 4 <= 15), "x <= 3");
  EXPECT_EQ(S(x + 4 < y + 4), "x < y");
  EXPECT_EQ(S(y > x), "x < y");
  EXPECT_EQ(S(5 > x), "x < 5");
  EXPECT_EQ(S(x >= 3), "x >= 3");
  EXPECT_EQ(S(x - y < 5), "x < y + 5");
  EXPECT_EQ(S(x * 2 + y * 4 < 9), "y * 2 + x < 5");
}

TEST_F(RewriteLogic, Equalities) {
  EXPECT_EQ(S(eq(x * 2, 3)), "false");  // no integer solution
  EXPECT_EQ(S(ne(x * 2, 3)), "true");
  EXPECT_EQ(S(eq(x * 2, 4)), "x == 2");
  EXPECT_EQ(S(eq(y, x)), "x == y");
  EXPECT_EQ(S(eq(x + 1, y + 1)), "x == y");
  EXPECT_EQ(S(eq(b, make_bool(true))), "b");
  EXPECT_EQ(S(eq(b, make_bool(false))), "!b");
  EXPECT_EQ(S(ne(b, make_bool(false))), "b");
}

TEST_F(RewriteLogic, FloatComparisonsOnlyFold) {
  EXPECT_EQ(S(f < f), "f < f");  // NaN < NaN is false, f <= f too
  EXPECT_EQ(S(eq(f, f)), "f == f");
  EXPECT_EQ(S(Not(f < g)), "!(f < g)");  // not f >= g: NaN
}

TEST_F(RewriteLogic, AndOr) {
  EXPECT_EQ(S((x < 4) && make_bool(true)), "x < 4");
  EXPECT_EQ(S((x < 4) && make_bool(false)), "false");
  EXPECT_EQ(S((x < 4) || make_bool(true)), "true");
  EXPECT_EQ(S(b && Not(b)), "false");
  EXPECT_EQ(S(b || Not(b)), "true");
  EXPECT_EQ(S((x < 4) && Not(x < 4)), "false");
  EXPECT_EQ(S((x < 4) && (x < 8)), "x < 4");
  EXPECT_EQ(S((x < 8) && (x < 4)), "x < 4");
  EXPECT_EQ(S((x < 4) || (x < 8)), "x < 8");
  EXPECT_EQ(S((x < 4) && (x > 10)), "false");
  EXPECT_EQ(S((x < 4) || (x >= 4)), "true");
  EXPECT_EQ(S(b && c), "b && c");
  EXPECT_EQ(S(b && b), "b");
}

TEST_F(RewriteLogic, Not) {
  EXPECT_EQ(S(Not(x < 4)), "x >= 4");
  EXPECT_EQ(S(Not(eq(x, y))), "x != y");
  EXPECT_EQ(S(Not(Not(b))), "b");
  EXPECT_EQ(S(Not(make_bool(true))), "false");
}

TEST_F(RewriteLogic, AssumedFacts) {
  {
    auto s = an.assume(x < 10);
    EXPECT_EQ(S(x < 10), "true");
    EXPECT_EQ(S(x < 11), "true");
    EXPECT_EQ(S(x >= 10), "false");
    EXPECT_EQ(S(x < 9), "x < 9");
  }
  {
    auto s = an.assume(x * 4 + y < n);
    EXPECT_EQ(S(x * 4 + y < n), "true");
    EXPECT_EQ(S(x * 4 + y - 1 < n), "true");
    EXPECT_EQ(S(x * 4 + y + 1 < n), "x * 4 + y < n - 1");
  }
  {
    auto s = an.assume(b && Not(c));
    EXPECT_EQ(S(b), "true");
    EXPECT_EQ(S(c), "false");
    EXPECT_EQ(S(make_select(c, x, y)), "y");
  }
  EXPECT_EQ(S(x < 10), "x < 10");  // the scopes ended
  EXPECT_EQ(S(b), "b");
}

TEST_F(RewriteLogic, Select) {
  EXPECT_EQ(S(make_select(make_bool(true), x, y)), "x");
  EXPECT_EQ(S(make_select(x < 4, y, y)), "y");
  EXPECT_EQ(S(make_select(x < 4, min(x, 4), 4)), "select(x < 4, x, 4)");
  EXPECT_EQ(S(make_select(x < 4, 7, max(x, 4))), "select(x < 4, 7, x)");
  EXPECT_EQ(S(make_select(b, make_bool(true), make_bool(false))), "b");
  EXPECT_EQ(S(make_select(b, make_bool(false), make_bool(true))), "!b");
  EXPECT_EQ(S(make_select(i < 128, x, y)), "x");
}

TEST_F(RewriteLogic, UnsignedComparisonsUseBounds) {
  Var u("u", DataType::UInt(8));
  EXPECT_EQ(S(u <= make_int(255, DataType::UInt(8))), "true");
  EXPECT_EQ(S(u >= make_int(0, DataType::UInt(8))), "true");
  EXPECT_EQ(S(u < make_int(9, DataType::UInt(8))), "u < 9u8");
}

}  // namespace
}  // namespace tl
