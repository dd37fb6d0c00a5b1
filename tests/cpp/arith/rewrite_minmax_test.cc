// One test per min/max rule of src/arith/rewrite_minmax.cc.
#include <gtest/gtest.h>

#include "arith/analyzer.h"
#include "ir/printer.h"

namespace tl {
namespace {

class RewriteMinMax : public ::testing::Test {
 protected:
  void SetUp() override { an.bind(i, Range(0, 128)); }
  std::string S(const Expr& e) { return print_expr(an.simplify(e)); }
  Analyzer an;
  Var x{"x"}, y{"y"}, z{"z"}, i{"i"};
};

TEST_F(RewriteMinMax, ConstantDifference) {
  EXPECT_EQ(S(min(x, x + 1)), "x");
  EXPECT_EQ(S(max(x, x + 1)), "x + 1");
  EXPECT_EQ(S(min(x * 2 + y, y + x * 2 - 3)), "x * 2 + y - 3");
  EXPECT_EQ(S(max(x - 1, x)), "x");
}

TEST_F(RewriteMinMax, Bounds) {
  EXPECT_EQ(S(min(i, 200)), "i");
  EXPECT_EQ(S(max(i, 0)), "i");
  EXPECT_EQ(S(min(i, 64)), "min(i, 64)");
  EXPECT_EQ(S(max(min(x, 4), 8)), "8");
  EXPECT_EQ(S(min(max(x, 10), 3)), "3");
}

TEST_F(RewriteMinMax, NestedChainsFlattenAndCombineConstants) {
  EXPECT_EQ(S(min(min(x, 4), 8)), "min(x, 4)");
  EXPECT_EQ(S(min(min(x, 8), min(y, 4))), "min(min(x, y), 4)");
  EXPECT_EQ(S(max(max(x, y), x)), "max(x, y)");
  EXPECT_EQ(S(min(min(x, y), min(z, x))), "min(min(x, y), z)");
}

TEST_F(RewriteMinMax, Absorption) {
  EXPECT_EQ(S(min(x, max(x, y))), "x");
  EXPECT_EQ(S(max(min(y, x), x)), "x");
  EXPECT_EQ(S(min(max(y, max(x, z)), x)), "x");
  EXPECT_EQ(S(min(x, max(y, z))), "min(x, max(y, z))");
}

TEST_F(RewriteMinMax, CommonConstantOffsetMovesOut) {
  EXPECT_EQ(S(max(x * 8 + 7, 7)), "max(x * 8, 0) + 7");
  EXPECT_EQ(S(min(x + 4, y + 8)), "min(x, y + 4) + 4");
  EXPECT_EQ(S(min(x - 2, y - 5)), "min(x, y - 3) - 2");
  EXPECT_EQ(S(max(x + 3, y - 2)), "max(x + 3, y - 2)");  // mixed signs stay
  EXPECT_EQ(S(max(x * 8 + 7, 7) - max(x * 8, 0)), "7");
}

TEST_F(RewriteMinMax, Assumptions) {
  auto s = an.assume(x <= y);
  EXPECT_EQ(S(min(x, y)), "x");
  EXPECT_EQ(S(max(x, y + 1)), "y + 1");
}

TEST_F(RewriteMinMax, FloatsOnlyFoldConstantsAndDuplicates) {
  Var f("f", DataType::Float32());
  EXPECT_EQ(S(min(f, f)), "f");
  EXPECT_EQ(S(max(f, f + 1.0f)), "max(f, f + 1.0f32)");  // no reasoning on floats (NaN)
  Expr c = Expr(std::make_shared<BinaryNode>(DataType::Float32(), BinOp::kMax, make_float(1.5), make_float(-2.0)));
  EXPECT_EQ(S(c), "1.5f32");
}

TEST_F(RewriteMinMax, NarrowIntegersUseBounds) {
  Var u("u", DataType::UInt(8));
  EXPECT_EQ(S(min(u, make_int(255, DataType::UInt(8)))), "u");
  EXPECT_EQ(S(max(u, make_int(0, DataType::UInt(8)))), "u");
  EXPECT_EQ(S(min(u, make_int(7, DataType::UInt(8)))), "min(u, 7u8)");
}

TEST_F(RewriteMinMax, ImpureOperandsAreNotDropped) {
  Expr r = make_call(DataType::Int32(), "tl.atomic_add_scalar", {x, make_int(1)});
  EXPECT_EQ(S(min(x, max(x, r))), "min(x, max(x, tl.atomic_add_scalar(x, 1)))");
}

}  // namespace
}  // namespace tl
