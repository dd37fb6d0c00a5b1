// The one operator table (ir/scalar_ops.h) against an independent 128-bit reference, and the int64
// evaluator's policies for unknown values (ir/eval.h, eval_int).
#include "ir/scalar_ops.h"

#include <gtest/gtest.h>

#include <random>

#include "ir/error.h"
#include "ir/eval.h"

namespace tl {
namespace {

using i128 = __int128;

// The mathematical value of a carrier of type t, and its wrap into t, computed independently.
i128 math(int64_t v, DataType t) {
  if (t.is_uint() && t.bits == 64) return static_cast<i128>(static_cast<uint64_t>(v));
  return v;
}
int64_t wrap_ref(i128 v, DataType t) {
  unsigned __int128 m = static_cast<unsigned __int128>(v);
  if (t.bits < 64) m &= (static_cast<unsigned __int128>(1) << t.bits) - 1;
  uint64_t low = static_cast<uint64_t>(m);
  if (t.is_int() && t.bits < 64 && ((low >> (t.bits - 1)) & 1)) low |= ~((uint64_t(1) << t.bits) - 1);
  return static_cast<int64_t>(low);
}
i128 floordiv_ref(i128 a, i128 b) {
  i128 q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}

TEST(ScalarOps, IntegerOperatorsMatchA128BitReference) {
  std::mt19937_64 rng(14);
  const DataType types[] = {DataType::Int(8),  DataType::Int(16), DataType::Int32(), DataType::Int64(),
                            DataType::UInt(8), DataType::UInt(32), DataType::UInt(64)};
  const BinOp ops[] = {BinOp::kAdd, BinOp::kSub, BinOp::kMul, BinOp::kDiv, BinOp::kMod, BinOp::kFloorDiv,
                       BinOp::kFloorMod, BinOp::kMin, BinOp::kMax, BinOp::kLT, BinOp::kGE, BinOp::kBitXor};
  int checked = 0;
  for (DataType t : types)
    for (int k = 0; k < 4000; ++k) {
      // Small values often (the sign cases of division), full-width ones otherwise.
      auto draw = [&] { return wrap_ref(k % 2 ? static_cast<int64_t>(rng() % 19) - 9 : static_cast<int64_t>(rng()), t); };
      int64_t x = draw(), y = draw();
      i128 a = math(x, t), b = math(y, t);
      for (BinOp op : ops) {
        int64_t got = 0;
        bool overflow = false;
        scalar::Status s = scalar::int_binary(op, x, y, t, &got, &overflow);
        bool div = op == BinOp::kDiv || op == BinOp::kMod || op == BinOp::kFloorDiv || op == BinOp::kFloorMod;
        if (div && b == 0) {
          EXPECT_EQ(s, scalar::Status::kDivByZero);
          continue;
        }
        ASSERT_EQ(s, scalar::Status::kOk);
        i128 r = 0;
        switch (op) {
          case BinOp::kAdd: r = a + b; break;
          case BinOp::kSub: r = a - b; break;
          case BinOp::kMul: r = a * b; break;
          case BinOp::kDiv: r = a / b; break;
          case BinOp::kMod: r = a - (a / b) * b; break;
          case BinOp::kFloorDiv: r = floordiv_ref(a, b); break;
          case BinOp::kFloorMod: r = a - floordiv_ref(a, b) * b; break;
          case BinOp::kMin: r = a < b ? a : b; break;
          case BinOp::kMax: r = a > b ? a : b; break;
          case BinOp::kLT: r = a < b; break;
          case BinOp::kGE: r = a >= b; break;
          default: r = math(x ^ y, t); break;
        }
        bool cmp = op == BinOp::kLT || op == BinOp::kGE;
        EXPECT_EQ(got, cmp ? static_cast<int64_t>(r) : wrap_ref(r, t)) << binop_name(op) << " " << t.str();
        if (t.is_int() && !cmp) EXPECT_EQ(overflow, wrap_ref(r, t) != r) << binop_name(op) << " " << t.str();
        ++checked;
      }
    }
  EXPECT_GT(checked, 300000);
}

TEST(ScalarOps, ShiftsCastsAndMathBuiltins) {
  int64_t r = 0;
  EXPECT_EQ(scalar::int_binary(BinOp::kShl, 1, 32, DataType::Int32(), &r), scalar::Status::kBadShift);
  EXPECT_EQ(scalar::int_binary(BinOp::kShl, 1, -1, DataType::Int32(), &r), scalar::Status::kBadShift);
  ASSERT_EQ(scalar::int_binary(BinOp::kShl, 1, 31, DataType::Int32(), &r), scalar::Status::kOk);
  EXPECT_EQ(r, INT32_MIN);
  ASSERT_EQ(scalar::int_binary(BinOp::kShr, -8, 1, DataType::Int32(), &r), scalar::Status::kOk);
  EXPECT_EQ(r, -4);  // arithmetic shift
  ASSERT_EQ(scalar::int_binary(BinOp::kShr, wrap_int(-8, DataType::UInt(32)), 1, DataType::UInt(32), &r),
            scalar::Status::kOk);
  EXPECT_EQ(r, 0x7FFFFFFC);  // logical shift
  EXPECT_EQ(scalar::float_to_int(-2.7, DataType::Int32(), &r), scalar::Status::kOk);
  EXPECT_EQ(r, -2);
  EXPECT_EQ(scalar::float_to_int(3e9, DataType::Int32(), &r), scalar::Status::kBadCast);
  EXPECT_EQ(r, INT32_MAX);  // saturated, as the GPU converts
  EXPECT_EQ(scalar::float_to_int(std::nan(""), DataType::Int32(), &r), scalar::Status::kBadCast);
  EXPECT_EQ(r, 0);
  EXPECT_EQ(scalar::int_to_double(-1, DataType::UInt(64)), 18446744073709551615.0);
  double f = 0, xs[3] = {2.0, 10.0, 1.0};
  ASSERT_TRUE(scalar::math_call("pow", xs, 2, &f));
  EXPECT_EQ(f, 1024.0);
  ASSERT_TRUE(scalar::math_call("ieee_fmaf", xs, 3, &f));
  EXPECT_EQ(f, 21.0);
  EXPECT_FALSE(scalar::math_call("no_such_fn", xs, 1, &f));
  EXPECT_EQ(scalar::float_binary(BinOp::kBitAnd, 1.0, 2.0, &f), scalar::Status::kBadType);
  ASSERT_EQ(scalar::float_binary(BinOp::kMin, std::nan(""), 2.0, &f), scalar::Status::kOk);
  EXPECT_EQ(f, 2.0);  // fmin
  EXPECT_EQ(round_float_via_f32(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), DataType::Float(16)), 1.0);
  EXPECT_EQ(round_float(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), DataType::Float(16)),
            1.0 + std::ldexp(1.0, -10));  // the correctly rounded half; float32 first loses the tie breaker
}

TEST(ScalarOps, IntEvaluatorPolicies) {
  Var n("n"), m("m");
  auto lookup_n = [&](const VarNode* v, int64_t* out) {
    if (v != n.get()) return false;
    *out = 6;
    return true;
  };
  int64_t out = 0;
  const VarNode* unbound = nullptr;
  // int64 index arithmetic: an int32 product does not wrap at the node's type; a cast does.
  Expr big = Expr(std::make_shared<BinaryNode>(DataType::Int32(), BinOp::kMul, make_int(1 << 20), make_int(1 << 20)));
  EXPECT_EQ(eval_int(big, lookup_n, &out), IntEval::kOk);
  EXPECT_EQ(out, int64_t(1) << 40);
  EXPECT_EQ(eval_int(make_cast(DataType::Int(8), n * 50), lookup_n, &out), IntEval::kOk);
  EXPECT_EQ(out, wrap_ref(300, DataType::Int(8)));
  EXPECT_EQ(eval_int(floordiv(n * 7 - 50, 4) + floormod(n - 13, 5), lookup_n, &out), IntEval::kOk);
  EXPECT_EQ(out, -2 + 3);  // floordiv(-8, 4) + floormod(-7, 5)
  // Unknown: the unbound variable is named; division by zero and floats are reported, not thrown.
  EXPECT_EQ(eval_int(n + m, lookup_n, &out, &unbound), IntEval::kUnbound);
  EXPECT_EQ(unbound, m.get());
  EXPECT_EQ(eval_int(floordiv(n, n - 6), lookup_n, &out), IntEval::kDivByZero);
  EXPECT_EQ(eval_int(make_float(1.5) + make_float(2.0), lookup_n, &out), IntEval::kNotInteger);
  // Short circuit: the unbound side of a decided && is never asked for.
  EXPECT_EQ(eval_int(make_select((n < 3) && (m > 0), make_int(1), make_int(2)), lookup_n, &out), IntEval::kOk);
  EXPECT_EQ(out, 2);
  // The throwing policy.
  std::map<Var, int64_t, VarLess> env{{n, 6}};
  EXPECT_EQ(eval_int_or_throw(n * n, env, "test"), 36);
  EXPECT_THROW(eval_int_or_throw(n + m, env, "test"), ValueError);
}

}  // namespace
}  // namespace tl
