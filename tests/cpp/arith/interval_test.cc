#include <gtest/gtest.h>

#include "arith/analyzer.h"
#include "ir/printer.h"

namespace tl {
namespace {

class Interval : public ::testing::Test {
 protected:
  std::string I(const Expr& e, const RelaxMap& relax) { return an.interval_of(e, relax).str(); }
  Analyzer an;
  Var i{"i"}, j{"j"}, k{"k"}, n{"n"}, x{"x"};
};

TEST_F(Interval, LinearOverConstantAndSymbolicRanges) {
  EXPECT_EQ(I(i * 8 + j, {{i, Range(0, 16)}, {j, Range(0, 8)}}), "[0, 127]");
  EXPECT_EQ(I(k * 32 + j, {{k, Range(0, n)}}), "[j, n * 32 + j - 32]");
  EXPECT_EQ(I(x - k, {{k, Range(0, n)}}), "[x - n + 1, x]");
  EXPECT_EQ(I(k * -2, {{k, Range(1, 4)}}), "[-8, -2]");
  // Variables not relaxed stay symbolic.
  EXPECT_EQ(I(x, {{k, Range(0, n)}}), "[x, x]");
}

TEST_F(Interval, InnerRangesDependingOnOuterVariables) {
  // j in [0, i + 1), i in [0, n): j covers [0, n - 1].
  EXPECT_EQ(I(j, {{i, Range(0, n)}, {j, Range(0, i + 1)}}), "[0, n - 1]");
  // The correlated form cancels before the outer variable is relaxed.
  EXPECT_EQ(I(i * 4 + j, {{i, Range(0, n)}, {j, Range(i * 4, 4)}}), "[0, n * 8 - 5]");
}

TEST_F(Interval, DivModMinMaxSelect) {
  RelaxMap r{{i, Range(0, 64)}};
  EXPECT_EQ(I(floordiv(i, 8), r), "[0, 7]");
  EXPECT_EQ(I(floormod(i, 8), r), "[0, 7]");
  EXPECT_EQ(I(floormod(i, 128), r), "[0, 63]");
  EXPECT_EQ(I(floordiv(k * 64 + i, 16), r), "[k * 4, k * 4 + 3]");
  EXPECT_EQ(I(min(i, x), r), "[min(x, 0), min(x, 63)]");
  EXPECT_EQ(I(max(i * 2, 10), r), "[10, 126]");
  EXPECT_EQ(I(make_select(x > 0, i, i + 100), r), "[0, 163]");
  an.bind(n, ConstIntBound(1, ConstIntBound::kPosInf));
  EXPECT_EQ(I(floordiv(i, n), r), "[0, floordiv(63, n)]");
  EXPECT_EQ(I(floormod(i, n), r), "[0, n - 1]");
}

TEST_F(Interval, ProductsNeedKnownSigns) {
  RelaxMap r{{i, Range(0, 64)}};
  EXPECT_EQ(I(i * x, r), "[-inf, +inf]");  // sign of x unknown
  an.bind(n, ConstIntBound(0, ConstIntBound::kPosInf));
  EXPECT_EQ(I(i * n, r), "[0, n * 63]");
  EXPECT_EQ(I(i * j, {{i, Range(0, 4)}, {j, Range(0, 8)}}), "[0, 21]");
}

TEST_F(Interval, UnboundedEnds) {
  RelaxMap r{{i, Range(0, 64)}};
  Buffer A("A", DataType::Int32(), {make_int(64)}, MemScope::kShared);
  EXPECT_EQ(I(make_load(A, {i}), r), "[-inf, +inf]");
  EXPECT_EQ(I(max(i, make_load(A, {i})), r), "[0, +inf]");
  EXPECT_EQ(I(min(i, make_load(A, {i})), r), "[-inf, 63]");
}

TEST_F(Interval, SymbolicProofs) {
  // Proofs through symbolic ranges, innermost variables first.
  an.bind(n, ConstIntBound(1, 1 << 20));
  an.bind(i, Range(0, n));
  an.bind(j, Range(0, i + 1));
  EXPECT_TRUE(an.can_prove(i < n));
  EXPECT_TRUE(an.can_prove(j <= i));
  EXPECT_TRUE(an.can_prove(j < n));
  EXPECT_FALSE(an.can_prove(j < i));
  EXPECT_EQ(print_expr(an.simplify(min(j, i))), "j");
  EXPECT_EQ(print_expr(an.simplify(floordiv(i * n + j, n))), "i");
  Var t("t");
  an.bind(t, i * 2 + 1);  // let t = i * 2 + 1
  EXPECT_TRUE(an.can_prove(t < n * 2));
  EXPECT_TRUE(an.can_prove(t >= 1));
}

}  // namespace
}  // namespace tl
