#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/error.h"
#include "ir/expr.h"
#include "ir/printer.h"

namespace tl {

TEST(Expr, ConstantFoldingAndPromotion) {
  Expr a = make_int(2) + make_int(3);
  int64_t v = 0;
  ASSERT_TRUE(is_const_int(a, &v));
  EXPECT_EQ(v, 5);
  Var x("x", DataType::Int64());
  Expr e = x + 1;  // the literal adopts int64
  EXPECT_EQ(e.dtype(), DataType::Int64());
  Var h("h", DataType::Float(16));
  Expr f = h * make_float(0.5);  // a float literal adopts float16
  EXPECT_EQ(f.dtype(), DataType::Float(16));
  Expr g = h + Var("y", DataType::Float32());  // fp16 op fp32 -> fp32
  EXPECT_EQ(g.dtype(), DataType::Float32());
  EXPECT_EQ(floordiv(make_int(-7), make_int(2)).as<IntImmNode>()->value, -4);
  EXPECT_EQ(floormod(make_int(-7), make_int(2)).as<IntImmNode>()->value, 1);
  EXPECT_EQ(ceildiv(make_int(130), make_int(64)).as<IntImmNode>()->value, 3);
}

TEST(Expr, WideLiteralsPromoteInsteadOfWrapping) {
  // A literal adopts the other operand's type only when its value fits: i + 2^31 on an int32 i is
  // int64 (it wrapped to i - 2^31 before: TileLang's constant-index bug), x + 200 on an int8 x is
  // int32.
  Var i("i");
  Expr big = i + make_int(int64_t(1) << 31, DataType::Int64());
  EXPECT_EQ(big.dtype(), DataType::Int64());
  EXPECT_EQ(print_expr(big), "cast<int64>(i) + 2147483648i64");
  Var x("x", DataType::Int(8));
  EXPECT_EQ((x + make_int(200)).dtype(), DataType::Int32());
  EXPECT_EQ((x + make_int(100)).dtype(), DataType::Int(8));  // fits: stays int8
  Var u("u", DataType::UInt(32));
  EXPECT_EQ((u + make_int(-1)).dtype(), DataType::UInt(32));  // same width: C's conversion, as before
}

TEST(Expr, PrinterPrecedence) {
  Var i("i"), j("j");
  EXPECT_EQ(print_expr((i + j) * 2), "(i + j) * 2");
  EXPECT_EQ(print_expr(i + j * 2), "i + j * 2");
  EXPECT_EQ(print_expr(i - (j - 1)), "i - (j - 1)");
  EXPECT_EQ(print_expr(floordiv(i, 4)), "floordiv(i, 4)");
  Var i2("i");
  EXPECT_EQ(print_expr(i + i2), "i + i_1");
}

TEST(Dtype, Parse) {
  EXPECT_EQ(parse_dtype("float"), DataType::Float32());
  EXPECT_EQ(parse_dtype("bfloat16").str(), "bfloat16");
  EXPECT_EQ(parse_dtype("float32x4").lanes, 4);
  EXPECT_THROW(parse_dtype("float128"), ValueError);
}

TEST(Builder, AllocWrapsRestOfFrame) {
  IRBuilder b;
  Buffer A("A", DataType::Float32(), {make_int(16)}, MemScope::kGlobal);
  Buffer S("S", DataType::Float32(), {make_int(16)}, MemScope::kShared);
  Var bx("bx"), i("i");
  b.enter_kernel({make_int(4)}, {bx}, {make_int(128)}, {Var("tx")}, {});
  b.alloc(S);
  b.enter_for(i, 0, 16, ForKind::kParallel);
  b.emit(make_store(S, {i}, make_load(A, {i})));
  b.exit();
  b.exit();
  PrimFunc f = b.finish_func("main", {Param{"A", Var(), A}});
  std::string text = print_func(f);
  EXPECT_NE(text.find("alloc S: shared float32[16]"), std::string::npos) << text;
  EXPECT_NE(text.find("for i: int32 in parallel(0, 16)"), std::string::npos) << text;
}

}  // namespace tl

namespace tl {

// Constant folding goes through the reference evaluator (ir/eval.h), so it follows the dtype.
TEST(Expr, FoldingFollowsDtypeSemantics) {
  // uint64 values above INT64_MAX compare as unsigned.
  Expr big = make_int(-1, DataType::UInt(64));  // 2^64 - 1
  Expr c = make_binary(BinOp::kGT, big, make_int(1, DataType::UInt(64)));
  int64_t v = 0;
  ASSERT_TRUE(is_const_int(c, &v));
  EXPECT_EQ(v, 1);
  // Logical shift for unsigned types.
  Expr s = make_binary(BinOp::kShr, make_int(-2, DataType::UInt(8)), make_int(1, DataType::UInt(8)));
  ASSERT_TRUE(is_const_int(s, &v));
  EXPECT_EQ(v, 127);
  // float16 arithmetic rounds to float16: 2048 + 1 is not representable and rounds to even.
  Expr h = make_float(2048.0, DataType::Float(16)) + make_float(1.0, DataType::Float(16));
  double f = 0;
  ASSERT_TRUE(is_const_float(h, &f));
  EXPECT_EQ(f, 2048.0);
  // An out-of-range float -> int cast has no value: it stays in the IR instead of folding.
  Expr bad = make_cast(DataType::Int32(), make_float(1e20, DataType::Float32()));
  EXPECT_EQ(bad.kind(), ExprKind::kCast);
  // x * 0 keeps x when x has an effect (a call).
  Expr call = make_call(DataType::Int32(), "tl.atomic_add_scalar", {make_int(1)});
  EXPECT_FALSE(is_const_int(call * make_int(0)));
  EXPECT_TRUE(is_zero(Var("x") * make_int(0)));
}

}  // namespace tl
