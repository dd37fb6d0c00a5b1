#include "arith/const_int_bound.h"

#include <gtest/gtest.h>

#include "arith/analyzer.h"

namespace tl {
namespace {

constexpr int64_t kPos = ConstIntBound::kPosInf;
constexpr int64_t kNeg = ConstIntBound::kNegInf;

TEST(ConstIntBound, ArithmeticSaturates) {
  ConstIntBound big(0, kPos - 1);
  EXPECT_EQ(bound_add(big, ConstIntBound::point(10)).max_value, kPos);  // saturates, no wrap
  EXPECT_EQ(bound_mul(ConstIntBound(-3, 1LL << 62), ConstIntBound::point(4)), ConstIntBound(-12, kPos));
  EXPECT_EQ(bound_mul(ConstIntBound(kNeg, kPos), ConstIntBound::point(0)), ConstIntBound::point(0));
  EXPECT_EQ(bound_neg(ConstIntBound(kNeg, 5)), ConstIntBound(-5, kPos));
  EXPECT_EQ(bound_sub(ConstIntBound(0, 10), ConstIntBound(2, 3)), ConstIntBound(-3, 8));
  EXPECT_EQ(sat_mul(kNeg, -1), kPos);
  EXPECT_EQ(sat_add(kPos - 1, 5), kPos);
}

TEST(ConstIntBound, Division) {
  EXPECT_EQ(bound_floordiv(ConstIntBound(-7, 7), ConstIntBound::point(2)), ConstIntBound(-4, 3));
  EXPECT_EQ(bound_truncdiv(ConstIntBound(-7, 7), ConstIntBound::point(2)), ConstIntBound(-3, 3));
  EXPECT_EQ(bound_floordiv(ConstIntBound(10, 20), ConstIntBound(0, 5)), ConstIntBound(2, 20));  // 0 excluded
  EXPECT_EQ(bound_floordiv(ConstIntBound(10, 20), ConstIntBound(-2, 2)), ConstIntBound(-20, 20));
  EXPECT_EQ(bound_floordiv(ConstIntBound(5, 10), ConstIntBound(1, kPos)), ConstIntBound(0, 10));
  EXPECT_EQ(bound_floordiv(ConstIntBound(1, 2), ConstIntBound::point(0)), ConstIntBound::everything());
}

TEST(ConstIntBound, Modulo) {
  EXPECT_EQ(bound_floormod(ConstIntBound(kNeg, kPos), ConstIntBound::point(8)), ConstIntBound(0, 7));
  EXPECT_EQ(bound_floormod(ConstIntBound(10, 12), ConstIntBound::point(8)), ConstIntBound(2, 4));  // one period
  EXPECT_EQ(bound_floormod(ConstIntBound(0, 5), ConstIntBound::point(8)), ConstIntBound(0, 5));
  EXPECT_EQ(bound_floormod(ConstIntBound(0, 100), ConstIntBound(1, 8)), ConstIntBound(0, 7));
  EXPECT_EQ(bound_floormod(ConstIntBound(0, 100), ConstIntBound::point(-8)), ConstIntBound(-7, 0));
  EXPECT_EQ(bound_truncmod(ConstIntBound(-100, 100), ConstIntBound::point(8)), ConstIntBound(-7, 7));
  EXPECT_EQ(bound_truncmod(ConstIntBound(0, 100), ConstIntBound::point(-8)), ConstIntBound(0, 7));
  EXPECT_EQ(bound_truncmod(ConstIntBound(-5, -1), ConstIntBound::point(8)), ConstIntBound(-5, 0));
  EXPECT_EQ(bound_truncmod(ConstIntBound(2, 5), ConstIntBound::point(8)), ConstIntBound(2, 5));
}

TEST(ConstIntBound, OfDtype) {
  EXPECT_EQ(ConstIntBound::of_dtype(DataType::Int(8)), ConstIntBound(-128, 127));
  EXPECT_EQ(ConstIntBound::of_dtype(DataType::UInt(16)), ConstIntBound(0, 65535));
  EXPECT_EQ(ConstIntBound::of_dtype(DataType::Bool()), ConstIntBound(0, 1));
  EXPECT_EQ(ConstIntBound::of_dtype(DataType::UInt(64)), ConstIntBound(0, kPos));
  EXPECT_EQ(ConstIntBound::of_dtype(DataType::Int64()), ConstIntBound::everything());
  EXPECT_EQ(ConstIntBound(kNeg, 3).str(), "[-inf, 3]");
}

TEST(AnalyzerBound, Expressions) {
  Analyzer an;
  Var i("i"), j("j"), x("x");
  an.bind(i, Range(0, 128));
  an.bind(j, Range(0, 8));
  EXPECT_EQ(an.const_int_bound(i * 4 + 3), ConstIntBound(3, 511));
  EXPECT_EQ(an.const_int_bound(i * 8 + j), ConstIntBound(0, 1023));
  EXPECT_EQ(an.const_int_bound(floordiv(i, 8)), ConstIntBound(0, 15));
  EXPECT_EQ(an.const_int_bound(floormod(x, 8)), ConstIntBound(0, 7));
  EXPECT_EQ(an.const_int_bound(make_binary(BinOp::kMod, x, 8)), ConstIntBound(-7, 7));
  EXPECT_EQ(an.const_int_bound(min(i, 10)), ConstIntBound(0, 10));
  EXPECT_EQ(an.const_int_bound(max(i - 200, j)), ConstIntBound(0, 7));
  EXPECT_EQ(an.const_int_bound(make_select(x > 0, i, j - 8)), ConstIntBound(-8, 127));
  EXPECT_EQ(an.const_int_bound(i < j), ConstIntBound(0, 1));
  EXPECT_EQ(an.const_int_bound(make_binary(BinOp::kBitAnd, x, 15)), ConstIntBound(0, 15));
  EXPECT_EQ(an.const_int_bound(make_binary(BinOp::kShr, i, 3)), ConstIntBound(0, 15));
  EXPECT_EQ(an.const_int_bound(make_binary(BinOp::kShl, j, 2)), ConstIntBound(0, 28));
  EXPECT_EQ(an.const_int_bound(make_float(1.5)), ConstIntBound::everything());
  // An unbound int32 variable: int32's range; index arithmetic is assumed not to overflow.
  EXPECT_EQ(an.const_int_bound(x), ConstIntBound::of_dtype(DataType::Int32()));
  EXPECT_EQ(an.const_int_bound(floordiv(x, 1 << 20)), ConstIntBound(-2048, 2047));
}

TEST(AnalyzerBound, CastsAndWrappingTypes) {
  Analyzer an;
  Var i("i"), u("u", DataType::UInt(8));
  an.bind(i, Range(0, 300));
  EXPECT_EQ(an.const_int_bound(make_cast(DataType::Int64(), i)), ConstIntBound(0, 299));
  EXPECT_EQ(an.const_int_bound(make_cast(DataType::Int(8), i)), ConstIntBound(-128, 127));  // wraps
  EXPECT_EQ(an.const_int_bound(u), ConstIntBound(0, 255));
  // uint8 arithmetic wraps: a result leaving [0, 255] makes the whole range.
  EXPECT_EQ(an.const_int_bound(u + make_int(1, DataType::UInt(8))), ConstIntBound(0, 255));
  EXPECT_EQ(an.const_int_bound(floordiv(u, make_int(16, DataType::UInt(8)))), ConstIntBound(0, 15));
  EXPECT_EQ(an.const_int_bound(make_cast(DataType::Bool(), i + 1)), ConstIntBound::point(1));
}

TEST(AnalyzerBound, SymbolicRangesAndFacts) {
  Analyzer an;
  Var i("i"), j("j"), n("n"), x("x");
  an.bind(i, Range(0, 16));
  an.bind(j, Range(i * 4, 4));  // j in [4i, 4i + 4)
  EXPECT_EQ(an.const_int_bound(j), ConstIntBound(0, 63));
  an.bind(n, ConstIntBound(0, ConstIntBound::kPosInf));
  EXPECT_EQ(an.const_int_bound(n), ConstIntBound(0, 2147483647));
  {
    auto s = an.assume(x < 10 && x >= 2);
    EXPECT_EQ(an.const_int_bound(x), ConstIntBound(2, 9));
    EXPECT_EQ(an.const_int_bound(x * 3), ConstIntBound(6, 27));
  }
  EXPECT_EQ(an.const_int_bound(x), ConstIntBound::of_dtype(DataType::Int32()));
}

}  // namespace
}  // namespace tl
