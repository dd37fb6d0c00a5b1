#include "arith/linear_form.h"

#include <gtest/gtest.h>

#include "arith/analyzer.h"
#include "ir/printer.h"

namespace tl {
namespace {

class LinearFormTest : public ::testing::Test {
 protected:
  std::string canon(const Expr& e) {
    LinearOps ops(order_);
    return print_expr(ops.to_expr(read(ops, e)));
  }
  // Reads a tree bottom-up the way the simplifier does (children canonical first).
  LinearForm read(LinearOps& ops, const Expr& e) {
    if (auto* b = e.as<BinaryNode>()) {
      LinearForm la = read(ops, b->a), lb = read(ops, b->b);
      if (b->op == BinOp::kAdd) return ops.add(la, lb, 1);
      if (b->op == BinOp::kSub) return ops.add(la, lb, -1);
      if (b->op == BinOp::kMul) return ops.mul(la, lb);
    }
    return ops.from_expr(e);
  }
  ExprOrder order_;
  Var x{"x"}, y{"y"}, bx{"bx"}, tx{"tx"}, i{"i"}, n{"n"};
};

TEST_F(LinearFormTest, MergesLikeTermsAndFoldsConstants) {
  EXPECT_EQ(canon(x + y - x), "y");
  EXPECT_EQ(canon(x * 2 + 3 - x * 2), "3");
  EXPECT_EQ(canon((x + 1) * 4 - 4), "x * 4");
  EXPECT_EQ(canon(x * 3 + x * 5 + y - y), "x * 8");
}

TEST_F(LinearFormTest, DisplayOrder) {
  // Larger coefficients first, then variable names; the constant last.
  EXPECT_EQ(canon(i + tx * 4 + bx * 128), "bx * 128 + tx * 4 + i");
  EXPECT_EQ(canon(y + x), "x + y");
  EXPECT_EQ(canon(5 + x), "x + 5");
  // Higher degree first.
  EXPECT_EQ(canon(x + i * n), "i * n + x");
}

TEST_F(LinearFormTest, SignsAndLeadingTerms) {
  EXPECT_EQ(canon(8 - x), "8 - x");
  EXPECT_EQ(canon(0 - x - y), "-x - y");
  EXPECT_EQ(canon(x * -2 - 1), "x * -2 - 1");
  EXPECT_EQ(canon(y * -4 + x), "x - y * 4");  // a positive term leads
}

TEST_F(LinearFormTest, Products) {
  // A single term times a sum expands; two sums stay one product atom.
  EXPECT_EQ(canon((x + 1) * n - x * n), "n");
  EXPECT_EQ(canon((bx * 128 + i) * n), "bx * n * 128 + i * n");
  Expr prod = (x + 1) * (y + 1);
  EXPECT_EQ(canon(prod - (y + 1) * (x + 1)), "0");
}

TEST_F(LinearFormTest, CoefficientsWrapToTheDtype) {
  // int32 arithmetic is modulo 2^32: x * 65536 * 65536 is 0.
  EXPECT_EQ(canon(x * 65536 * 65536), "0");
  Var w("w", DataType::Int64());
  EXPECT_EQ(canon(w * make_int(65536, DataType::Int64()) * make_int(65536, DataType::Int64())), "w * 4294967296i64");
}

TEST_F(LinearFormTest, OrderIsDeterministicForSameNamedVariables) {
  Var a("i"), b("i");
  ExprOrder o1, o2;
  // Two distinct variables with the same name are ordered by first sight, not by address.
  EXPECT_LT(o1.compare(a, b), 0);
  EXPECT_LT(o2.compare(b, a), 0);
  EXPECT_EQ(o1.compare(a, a), 0);
  EXPECT_FALSE(expr_equal(a, b));
}

TEST(ExprOrder, EqualityRespectsPurity) {
  Var x("x");
  Expr e1 = make_call(DataType::Float32(), "exp", {make_float(1.0)});
  Expr e2 = make_call(DataType::Float32(), "exp", {make_float(1.0)});
  EXPECT_TRUE(expr_equal(e1, e2));
  Expr r1 = make_call(DataType::Int32(), "tl.atomic_add_scalar", {x, make_int(1)});
  Expr r2 = make_call(DataType::Int32(), "tl.atomic_add_scalar", {x, make_int(1)});
  EXPECT_FALSE(expr_equal(r1, r2));  // two evaluations of an impure call differ
  ExprOrder o;
  EXPECT_NE(o.compare(r1, r2), 0);
  EXPECT_FALSE(is_pure_expr(r1 + 1));
  EXPECT_TRUE(is_pure_expr(e1 * 2.0f));
}

TEST(LinearForm, Gcd) {
  EXPECT_EQ(gcd64(12, -18), 6);
  EXPECT_EQ(gcd64(0, 7), 7);
  EXPECT_EQ(gcd64(0, 0), 0);
}

}  // namespace
}  // namespace tl
