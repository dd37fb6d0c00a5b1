#include "ir/eval.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/error.h"

namespace tl {
namespace {

// Builds a node without the constructors' constant folding, so the evaluator sees the operation.
Expr raw_binary(BinOp op, Expr a, Expr b) {
  DataType t = binop_is_compare(op) || binop_is_logical(op) ? DataType::Bool() : a.dtype();
  return Expr(std::make_shared<BinaryNode>(t, op, std::move(a), std::move(b)));
}

Value ev(const Expr& e) { return eval_expr(e, std::map<Var, Value, VarLess>{}); }

TEST(Eval, IntegersWrapAndReportSignedOverflow) {
  bool overflow = false;
  EvalEnv env;
  env.signed_overflow = &overflow;
  Value v = eval_expr(raw_binary(BinOp::kAdd, make_int(2147483647), make_int(1)), env);
  EXPECT_EQ(v.i, -2147483648LL);
  EXPECT_TRUE(overflow);
  overflow = false;
  DataType u8 = DataType::UInt(8);
  v = eval_expr(raw_binary(BinOp::kAdd, make_int(250, u8), make_int(10, u8)), env);
  EXPECT_EQ(v.i, 4);
  EXPECT_FALSE(overflow);  // unsigned wrap is defined
  v = eval_expr(raw_binary(BinOp::kSub, make_int(3, u8), make_int(5, u8)), env);
  EXPECT_EQ(v.i, 254);
}

TEST(Eval, TruncatingAndFlooringDivision) {
  EXPECT_EQ(ev(raw_binary(BinOp::kDiv, make_int(-7), make_int(2))).i, -3);
  EXPECT_EQ(ev(raw_binary(BinOp::kMod, make_int(-7), make_int(2))).i, -1);
  EXPECT_EQ(ev(raw_binary(BinOp::kFloorDiv, make_int(-7), make_int(2))).i, -4);
  EXPECT_EQ(ev(raw_binary(BinOp::kFloorMod, make_int(-7), make_int(2))).i, 1);
  EXPECT_EQ(ev(raw_binary(BinOp::kFloorDiv, make_int(7), make_int(-2))).i, -4);
  EXPECT_EQ(ev(raw_binary(BinOp::kFloorMod, make_int(7), make_int(-2))).i, -1);
  EXPECT_EQ(ev(raw_binary(BinOp::kMod, make_int(7), make_int(-2))).i, 1);
  EXPECT_THROW(ev(raw_binary(BinOp::kFloorDiv, make_int(7), make_int(0))), ValueError);
}

TEST(Eval, ShiftsAndUnsignedComparisons) {
  DataType u32 = DataType::UInt(32), u64 = DataType::UInt(64);
  EXPECT_EQ(ev(raw_binary(BinOp::kShr, make_int(-8), make_int(1))).i, -4);                  // arithmetic
  EXPECT_EQ(ev(raw_binary(BinOp::kShr, make_int(0xFFFFFFF0LL, u32), make_int(4, u32))).i, 0x0FFFFFFF);  // logical
  EXPECT_THROW(ev(raw_binary(BinOp::kShl, make_int(1), make_int(32))), ValueError);
  // 2^63 as uint64 (stored as its bit pattern) is larger than 1.
  Expr big = make_int(INT64_MIN, u64);
  EXPECT_TRUE(ev(raw_binary(BinOp::kGT, big, make_int(1, u64))).as_bool());
}

TEST(Eval, FloatsRoundToTheirType) {
  DataType f16 = DataType::Float(16), bf16 = DataType::BFloat16();
  // Reference values from numpy / ml_dtypes.
  EXPECT_EQ(ev(make_float(0.1, f16)).f, 0.0999755859375);
  EXPECT_EQ(ev(raw_binary(BinOp::kAdd, make_float(0.1, f16), make_float(0.2, f16))).f, 0.2998046875);
  EXPECT_EQ(ev(raw_binary(BinOp::kMul, make_float(1.0 / 3, bf16), make_float(3, bf16))).f, 1.0);
  EXPECT_EQ(ev(make_float(1.0 / 3, bf16)).f, 0.333984375);
  EXPECT_EQ(ev(raw_binary(BinOp::kAdd, make_float(0.1), make_float(0.2))).f, 0.30000001192092896);
  EXPECT_TRUE(std::isinf(ev(make_float(70000.0, f16)).f));
  EXPECT_TRUE(std::isinf(ev(raw_binary(BinOp::kDiv, make_float(1.0), make_float(0.0))).f));
}

TEST(Eval, RoundFloatFormats) {
  EXPECT_EQ(round_float(2049, DataType::Float(16)), 2048.0);  // tie to even
  EXPECT_EQ(round_float(2051, DataType::Float(16)), 2052.0);
  EXPECT_EQ(round_float(6e-8, DataType::Float(16)), 5.960464477539063e-08);  // subnormal
  EXPECT_EQ(round_float(1e-8, DataType::Float(16)), 0.0);
  EXPECT_EQ(round_float(460, DataType::F8E4M3()), 448.0);
  EXPECT_TRUE(std::isnan(round_float(470, DataType::F8E4M3())));  // no infinity in e4m3fn
  EXPECT_EQ(round_float(0.3, DataType::F8E4M3()), 0.3125);
  EXPECT_EQ(round_float(0.3, DataType::F8E5M2()), 0.3125);
  EXPECT_EQ(round_float(60000, DataType::F8E5M2()), 57344.0);
  EXPECT_EQ(round_float(1e-6, DataType::F8E5M2()), 0.0);
  EXPECT_EQ(round_float(0.1, DataType::Float(64)), 0.1);
}

TEST(Eval, Casts) {
  EXPECT_EQ(eval_cast(DataType::Int(8), Value::from_int(300)).i, 44);
  EXPECT_EQ(eval_cast(DataType::UInt(8), Value::from_int(-1)).i, 255);
  EXPECT_EQ(eval_cast(DataType::Int32(), Value::from_float(3.7)).i, 3);
  EXPECT_EQ(eval_cast(DataType::Int32(), Value::from_float(-3.7)).i, -3);
  EXPECT_THROW(eval_cast(DataType::Int32(), Value::from_float(NAN)), ValueError);
  EXPECT_THROW(eval_cast(DataType::Int32(), Value::from_float(1e10, DataType::Float(64))), ValueError);
  EXPECT_EQ(eval_cast(DataType::Float(16), Value::from_int(4097)).f, 4096.0);
  EXPECT_EQ(eval_cast(DataType::Bool(), Value::from_int(-5)).i, 1);
  EXPECT_EQ(eval_cast(DataType::Int(64), Value::from_int(-1, DataType::UInt(32))).i, 4294967295LL);
}

TEST(Eval, OnlyTheChosenSideIsEvaluated) {
  Var x("x");
  Expr div0 = raw_binary(BinOp::kFloorDiv, make_int(1), x);
  std::map<Var, Value, VarLess> env{{x, Value::from_int(0)}};
  EXPECT_EQ(eval_expr(make_select(eq(x, 0), make_int(7), div0), env).i, 7);
  EXPECT_FALSE(eval_expr(ne(x, 0) && (div0 > 1), env).as_bool());
  EXPECT_TRUE(eval_expr(eq(x, 0) || (div0 > 1), env).as_bool());
  EXPECT_THROW(eval_expr(div0, env), ValueError);
}

TEST(Eval, VariablesLoadsAndErrors) {
  Var x("x"), y("y");
  Buffer A("A", DataType::Float32(), {make_int(4), make_int(4)}, MemScope::kGlobal);
  EvalEnv env;
  env.vars[x] = Value::from_int(2);
  env.load = [](const Buffer& b, const std::vector<int64_t>& idx) {
    return Value::from_float(static_cast<double>(idx[0] * 10 + idx[1]));
  };
  EXPECT_EQ(eval_expr(make_load(A, {x, x + 1}), env).f, 23.0);
  EXPECT_THROW(eval_expr(x + y, env), ValueError);  // y has no value
  EXPECT_THROW(eval_expr(make_load(A, {x, x}), std::map<Var, Value, VarLess>{{x, Value::from_int(0)}}), ValueError);
  EXPECT_THROW(eval_expr(make_ramp(x, 1, 4), env), NotImplemented);
  EXPECT_EQ(eval_expr(make_call(DataType::Float32(), "floor", {make_float(-2.5)}), env).f, -3.0);
  EXPECT_THROW(eval_expr(make_call(DataType::Float32(), "tl.unknown", {make_float(1.0)}), env), NotImplemented);
}

TEST(Eval, SameValue) {
  EXPECT_TRUE(same_value(Value::from_float(NAN), Value::from_float(NAN)));
  EXPECT_FALSE(same_value(Value::from_float(0.0), Value::from_float(-0.0)));
  EXPECT_FALSE(same_value(Value::from_int(1), Value::from_int(1, DataType::Int64())));
}

}  // namespace
}  // namespace tl
