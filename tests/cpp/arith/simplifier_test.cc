// The simplifier's driver rules (src/arith/simplifier.cc): constant folding for every dtype,
// linear arithmetic, casts, variables, calls, memoization per analyzer state.
#include <gtest/gtest.h>

#include "arith/analyzer.h"
#include "ir/printer.h"

namespace tl {
namespace {

// Nodes built without the constructors' folding, so the simplifier's own folding is exercised.
Expr raw_binary(BinOp op, Expr a, Expr b) {
  DataType t = binop_is_compare(op) || binop_is_logical(op) ? DataType::Bool() : a.dtype();
  return Expr(std::make_shared<BinaryNode>(t, op, std::move(a), std::move(b)));
}
Expr raw_cast(DataType t, Expr v) { return Expr(std::make_shared<CastNode>(t, std::move(v))); }

class Simplifier : public ::testing::Test {
 protected:
  std::string S(const Expr& e) { return print_expr(an.simplify(e)); }
  Analyzer an;
  Var x{"x"}, y{"y"}, n{"n"};
};

TEST_F(Simplifier, FoldsIntegersWithWrapAround) {
  EXPECT_EQ(S(raw_binary(BinOp::kAdd, make_int(2147483647), make_int(1))), "-2147483648");
  EXPECT_EQ(S(raw_binary(BinOp::kMul, make_int(65536), make_int(65536))), "0");
  DataType u8 = DataType::UInt(8), u64 = DataType::UInt(64);
  EXPECT_EQ(S(raw_binary(BinOp::kSub, make_int(3, u8), make_int(5, u8))), "254u8");
  EXPECT_EQ(S(raw_binary(BinOp::kShr, make_int(-16, DataType::Int(8)), make_int(2, DataType::Int(8)))), "-4i8");
  EXPECT_EQ(S(raw_binary(BinOp::kShr, make_int(240, u8), make_int(4, u8))), "15u8");
  // uint64 values above INT64_MAX compare as unsigned.
  EXPECT_EQ(S(raw_binary(BinOp::kLT, make_int(1, u64), make_int(INT64_MIN, u64))), "true");
  EXPECT_EQ(S(raw_binary(BinOp::kFloorDiv, make_int(-7), make_int(2))), "-4");
  EXPECT_EQ(S(raw_binary(BinOp::kMod, make_int(-7), make_int(2))), "-1");
  // Division by zero is not folded.
  EXPECT_EQ(S(raw_binary(BinOp::kDiv, make_int(7), make_int(0))), "7 / 0");
}

TEST_F(Simplifier, FoldsFloatsInTheirType) {
  DataType f16 = DataType::Float(16);
  // 0.1 and 0.2 become float16 first, and the sum is rounded to float16 (numpy: 0.2998046875).
  EXPECT_EQ(S(raw_binary(BinOp::kAdd, make_float(0.1, f16), make_float(0.2, f16))), "0.2998046875f16");
  EXPECT_EQ(an.simplify(raw_binary(BinOp::kAdd, make_float(0.1, f16), make_float(0.2, f16))).as<FloatImmNode>()->value,
            0.2998046875);
  EXPECT_EQ(S(raw_binary(BinOp::kAdd, make_float(0.1), make_float(0.2))), "0.30000001192092896f32");
  EXPECT_EQ(an.simplify(raw_binary(BinOp::kAdd, make_float(0.1), make_float(0.2))).as<FloatImmNode>()->value,
            0.30000001192092896);
  EXPECT_EQ(S(raw_binary(BinOp::kDiv, make_float(1.0), make_float(0.0))), "inf_f32");
  EXPECT_EQ(S(raw_binary(BinOp::kLT, make_float(1.0), make_float(2.0))), "true");
  // No algebra on floats: x + 0.0 is not x (x = -0.0), x * 0.0 is not 0 (NaN, inf).
  Var f("f", DataType::Float32());
  EXPECT_EQ(S(raw_binary(BinOp::kAdd, f, make_float(0.0))), "f + 0.0f32");
  EXPECT_EQ(S(raw_binary(BinOp::kSub, f, f)), "f - f");
}

TEST_F(Simplifier, Casts) {
  EXPECT_EQ(S(raw_cast(DataType::Int(8), make_int(300))), "44i8");
  EXPECT_EQ(S(raw_cast(DataType::Float(16), make_int(4097))), "4096.0f16");
  EXPECT_EQ(S(raw_cast(DataType::Int32(), make_float(-3.7))), "-3");
  EXPECT_EQ(S(raw_cast(DataType::Int32(), make_float(1e20, DataType::Float(64)))),
            "cast<int32>(1e+20f64)");  // undefined in C: not folded
  EXPECT_EQ(S(raw_cast(DataType::Int32(), x)), "x");  // no-op cast
  Var w("w", DataType::Int(16));
  EXPECT_EQ(S(make_cast(DataType::Int64(), make_cast(DataType::Int32(), w))), "cast<int64>(w)");
  // A narrowing inner cast changes values unless the bounds fit.
  EXPECT_EQ(S(make_cast(DataType::Int32(), make_cast(DataType::Int(8), x))), "cast<int32>(cast<int8>(x))");
  {
    auto s = an.bind_scoped(x, Range(0, 100));
    EXPECT_EQ(S(make_cast(DataType::Int32(), make_cast(DataType::Int(8), x))), "x");
  }
  Var h("h", DataType::Float(16));
  EXPECT_EQ(S(make_cast(DataType::Float(64), make_cast(DataType::Float32(), h))), "cast<float64>(h)");
  Var g("g", DataType::Float32());
  EXPECT_EQ(S(make_cast(DataType::Float32(), make_cast(DataType::Float(16), g))),
            "cast<float32>(cast<float16>(g))");  // rounding in between
}

TEST_F(Simplifier, Variables) {
  Var i("i"), k("k"), t("t");
  an.bind(i, Range(5, 1));  // a loop of one iteration
  an.bind(k, make_int(7));  // a let of a constant
  an.bind(t, Range(x, 1));
  EXPECT_EQ(S(i * 2 + k), "17");
  EXPECT_EQ(S(t + 1), "x + 1");
  {
    auto s = an.assume(eq(y, 3));
    EXPECT_EQ(S(y * 2), "6");
  }
}

TEST_F(Simplifier, LinearArithmetic) {
  EXPECT_EQ(S(x + y - x), "y");
  EXPECT_EQ(S((x + 1) * n - x * n), "n");
  EXPECT_EQ(S(-(-x)), "x");
  EXPECT_EQ(S(-(x - y)), "y - x");
  EXPECT_EQ(S(x * 0), "0");
  Var bx("bx"), tx("tx"), i("i");
  EXPECT_EQ(S(i + (tx + bx * 32) * 4), "bx * 128 + tx * 4 + i");
}

TEST_F(Simplifier, Calls) {
  EXPECT_EQ(S(make_call(DataType::Float32(), "floor", {make_float(2.5)})), "2.0f32");
  EXPECT_EQ(S(make_call(DataType::Float32(), "abs", {make_float(-2.5)})), "2.5f32");
  // Transcendental functions depend on the target's libm: not folded.
  EXPECT_EQ(S(make_call(DataType::Float32(), "exp", {make_float(1.0)})), "exp(1.0f32)");
  EXPECT_EQ(S(make_call(DataType::Float32(), "exp", {make_cast(DataType::Float32(), x + 1 - 1)})),
            "exp(cast<float32>(x))");
}

TEST_F(Simplifier, LoadsRampsAndBroadcasts) {
  Buffer A("A", DataType::Float32(), {make_int(64)}, MemScope::kShared);
  EXPECT_EQ(S(make_load(A, {floordiv(x * 8 + 3, 8) + 1 - 1})), "A[x]");
  EXPECT_EQ(S(make_ramp(x * 4 + 4 - 4, make_int(1), 4)), "ramp(x * 4, 1, 4)");
  EXPECT_EQ(S(make_broadcast(x + 0 * y, 4)), "broadcast(x, 4)");
}

TEST_F(Simplifier, ResultsDependOnTheCurrentState) {
  Expr e = floordiv(x, 8);
  {
    auto s = an.bind_scoped(x, Range(0, 8));
    EXPECT_EQ(S(e), "0");
  }
  EXPECT_EQ(S(e), "floordiv(x, 8)");
  {
    auto s = an.bind_scoped(x, Range(8, 8));
    EXPECT_EQ(S(e), "1");
  }
  an.bind(x, Range(16, 8));
  EXPECT_EQ(S(e), "2");
  an.unbind(x);
  EXPECT_EQ(S(e), "floordiv(x, 8)");
}

TEST_F(Simplifier, UnchangedExpressionsKeepTheirIdentity) {
  Expr e = floordiv(x, 8) + y;
  EXPECT_TRUE(an.simplify(e).same_as(an.simplify(e)));
  Expr canonical = x + y;
  EXPECT_TRUE(an.simplify(canonical).same_as(canonical));
}

TEST_F(Simplifier, DeterministicAcrossAnalyzers) {
  // Same-named distinct variables order by first sight, so two runs print the same.
  Var a("i"), b("i");
  Expr e = b * 2 + a * 2 + floordiv(b + a, 4);
  Analyzer an1, an2;
  EXPECT_EQ(print_expr(an1.simplify(e)), print_expr(an2.simplify(e)));
}

}  // namespace
}  // namespace tl
