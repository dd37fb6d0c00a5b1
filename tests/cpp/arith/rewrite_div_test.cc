// One test per division/modulo rule of src/arith/rewrite_div.cc.
#include <gtest/gtest.h>

#include "arith/analyzer.h"
#include "ir/printer.h"

namespace tl {
namespace {

class RewriteDiv : public ::testing::Test {
 protected:
  void SetUp() override {
    an.bind(i, Range(0, 128));
    an.bind(j, Range(0, 8));
    an.bind(tx, Range(0, 128));
    an.bind(bx, Range(0, 64));
  }
  std::string S(const Expr& e) { return print_expr(an.simplify(e)); }
  Expr tdiv(Expr a, Expr b) { return make_binary(BinOp::kDiv, a, b); }
  Expr tmod(Expr a, Expr b) { return make_binary(BinOp::kMod, a, b); }

  Analyzer an;
  Var x{"x"}, y{"y"}, i{"i"}, j{"j"}, tx{"tx"}, bx{"bx"}, n{"n"};
};

TEST_F(RewriteDiv, SplitsMultiplesOfTheDivisor) {
  EXPECT_EQ(S(floordiv(x * 8 + y, 8)), "x + floordiv(y, 8)");
  EXPECT_EQ(S(floormod(x * 8 + y, 8)), "floormod(y, 8)");
  EXPECT_EQ(S(floordiv(bx * 128 + tx, 32)), "bx * 4 + floordiv(tx, 32)");
  EXPECT_EQ(S(floormod(bx * 128 + tx, 32)), "floormod(tx, 32)");
  // The constant splits too, into a quotient and a remainder in [0, c).
  EXPECT_EQ(S(floordiv(x * 8 + 13, 8)), "x + 1");
  EXPECT_EQ(S(floormod(x * 8 + 13, 8)), "5");
  EXPECT_EQ(S(floordiv(x * 8 - 3, 8)), "x - 1");
  // Coefficients larger than the divisor leave their multiple outside.
  EXPECT_EQ(S(floordiv(x * 12 + y, 8)), "x + floordiv(x * 4 + y, 8)");
  EXPECT_EQ(S(floormod(x * 12 + y, 8)), "floormod(x * 4 + y, 8)");
}

TEST_F(RewriteDiv, RemainderWithinOnePeriod) {
  EXPECT_EQ(S(floordiv(x * 8 + j, 8)), "x");
  EXPECT_EQ(S(floormod(x * 8 + j, 8)), "j");
  EXPECT_EQ(S(floordiv(i, 128)), "0");
  EXPECT_EQ(S(floormod(i, 128)), "i");
  EXPECT_EQ(S(floormod(j + 3, 16)), "j + 3");
  EXPECT_EQ(S(floordiv(j + 8, 8)), "1");
  EXPECT_EQ(S(floormod(j - 8, 8)), "j");
  // Not within one period: kept.
  EXPECT_EQ(S(floordiv(j + 4, 8)), "floordiv(j + 4, 8)");
  // A negative remainder term is not mistaken for a non-negative one.
  EXPECT_EQ(S(floordiv(x * 8 - j, 8)), "x + floordiv(-j, 8)");
}

TEST_F(RewriteDiv, CommonFactor) {
  EXPECT_EQ(S(floordiv(x * 4 + y * 2, 8)), "floordiv(x * 2 + y, 4)");
  EXPECT_EQ(S(floordiv(x * 4 + 3, 8)), "floordiv(x, 2)");
  EXPECT_EQ(S(floormod(x * 4 + 2, 8)), "floormod(x, 2) * 4 + 2");
  EXPECT_EQ(S(floordiv(x * 6, 4)), "x + floordiv(x, 2)");
}

TEST_F(RewriteDiv, Nested) {
  EXPECT_EQ(S(floordiv(floordiv(x, 4), 8)), "floordiv(x, 32)");
  EXPECT_EQ(S(floormod(floormod(x, 16), 8)), "floormod(x, 8)");
  EXPECT_EQ(S(floormod(floormod(x, 8), 16)), "floormod(x, 8)");  // by bounds
  EXPECT_EQ(S(floordiv(floormod(x, 8), 8)), "0");
  EXPECT_EQ(S(floordiv(floordiv(x, 4) + y * 8, 8)), "y + floordiv(x, 32)");
  EXPECT_EQ(S(tdiv(tdiv(x, 4), 8)), "x / 32");
  EXPECT_EQ(S(tmod(tmod(x, 16), 8)), "x % 8");
}

TEST_F(RewriteDiv, DivisorSigns) {
  EXPECT_EQ(S(floordiv(x, 1)), "x");
  EXPECT_EQ(S(floormod(x, 1)), "0");
  EXPECT_EQ(S(floordiv(x, -1)), "-x");
  EXPECT_EQ(S(floordiv(x, -4)), "floordiv(-x, 4)");
  EXPECT_EQ(S(floormod(x, -4)), "-floormod(-x, 4)");
  EXPECT_EQ(S(tdiv(x, -4)), "-(x / 4)");
  EXPECT_EQ(S(tmod(x, -4)), "x % 4");
  // Division by zero is left for the program (undefined behaviour is not folded away).
  EXPECT_EQ(S(floordiv(x, 0)), "floordiv(x, 0)");
}

TEST_F(RewriteDiv, TruncatingWithNonNegativeNumerator) {
  // C `/` and `%` equal floordiv/floormod when the numerator is non-negative; the C operator is
  // kept where a division remains.
  EXPECT_EQ(S(tdiv(i * 8 + j, 8)), "i");
  EXPECT_EQ(S(tmod(i * 8 + j, 8)), "j");
  EXPECT_EQ(S(tdiv(i + 3, 4)), "(i + 3) / 4");
  EXPECT_EQ(S(tdiv(bx * 128 + tx, 32)), "bx * 4 + tx / 32");
  // Unknown sign: only the small-range rule applies.
  EXPECT_EQ(S(tdiv(x * 8 + 1, 8)), "(x * 8 + 1) / 8");
  {
    auto s = an.bind_scoped(y, Range(-7, 15));  // y in [-7, 7]
    EXPECT_EQ(S(tdiv(y, 8)), "0");
    EXPECT_EQ(S(tmod(y, 8)), "y");
  }
}

TEST_F(RewriteDiv, SymbolicDivisor) {
  an.bind(n, ConstIntBound(1, ConstIntBound::kPosInf));
  EXPECT_EQ(S(floordiv(i * n + j, n)), "i + floordiv(j, n)");
  EXPECT_EQ(S(floormod(i * n + j, n)), "floormod(j, n)");
  EXPECT_EQ(S(floordiv(x * n, n)), "x");
  EXPECT_EQ(S(floormod(x * n + n * 3, n)), "0");
  EXPECT_EQ(S(floordiv(x, x)), "1");
  Var k("k");
  auto s = an.bind_scoped(k, Range(0, n));  // k in [0, n)
  EXPECT_EQ(S(floordiv(i * n + k, n)), "i");
  EXPECT_EQ(S(floormod(i * n + k, n)), "k");
  EXPECT_EQ(S(tdiv(i * n + k, n)), "i");
  // Truncation needs a non-negative numerator.
  EXPECT_EQ(S(tdiv(x * n + k, n)), "(n * x + k) / n");
}

TEST_F(RewriteDiv, DivModPairRejoins) {
  EXPECT_EQ(S(floordiv(x, 8) * 8 + floormod(x, 8)), "x");
  EXPECT_EQ(S(floormod(x, 8) + floordiv(x, 8) * 8 + y), "x + y");
  EXPECT_EQ(S(tdiv(x, 8) * 8 + tmod(x, 8)), "x");
  EXPECT_EQ(S((floordiv(x + y, 16) * 16 + floormod(x + y, 16)) * 3), "x * 3 + y * 3");
  // Different divisors or numerators do not pair.
  EXPECT_EQ(S(floordiv(x, 8) * 4 + floormod(x, 8)), "floordiv(x, 8) * 4 + floormod(x, 8)");
}

}  // namespace
}  // namespace tl
