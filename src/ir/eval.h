// Reference evaluator for scalar expressions: the executable definition of what an expression
// means. The simplifier's tests compare original and simplified expressions with it; the Ascend
// simulator and other tests may reuse it for scalar code.
//
// Semantics (they match what our cpu/cuda codegen emits):
// - Integers are fixed width and wrap around (two's complement). A signed add/sub/mul/neg that
//   wraps is reported through EvalEnv::signed_overflow, because C leaves it undefined and the
//   simplifier assumes it never happens in index arithmetic.
// - kDiv/kMod on integers truncate toward zero (C); kFloorDiv/kFloorMod round toward -inf
//   (Python). Integer division by zero throws ValueError.
// - Floats are computed in double and rounded to the expression's dtype after every operation
//   (float16, bfloat16, float8 e4m3/e5m2 with round-to-nearest-even). Double is wide enough that
//   this gives the correctly rounded result of +, -, *, / and sqrt for every format up to float32.
//   min/max on floats follow fmin/fmax.
// - `&&`, `||` and select evaluate only what C evaluates (short circuit, chosen branch).
// - float -> int casts truncate; a NaN or out-of-range value throws ValueError (undefined in C).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/buffer.h"

namespace tl {

// A scalar value of some dtype. Integers (and bool, as 0/1) live in `i`, already wrapped to the
// dtype (uint64 values above INT64_MAX are stored as their bit pattern); floats live in `f`,
// already rounded to the dtype.
struct Value {
  DataType dtype = DataType::Int32();
  int64_t i = 0;
  double f = 0;

  static Value from_int(int64_t v, DataType t = DataType::Int32());  // wraps to t
  static Value from_float(double v, DataType t = DataType::Float32());  // rounds to t
  static Value from_bool(bool v);
  bool is_float() const { return dtype.is_float(); }
  // The value as a double (integers converted, uint64 as unsigned).
  double as_double() const;
  bool as_bool() const { return is_float() ? f != 0 : i != 0; }
  std::string str() const;
};

// Same dtype and same value; NaN equals NaN here (a test of "did simplification change the value").
bool same_value(const Value& a, const Value& b);

// Wraps `v` into the value range of integer type `t` (two's complement).
int64_t wrap_int(int64_t v, DataType t);
// Rounds a double to the nearest value representable in float type `t` (ties to even;
// overflow gives inf, or NaN for float8_e4m3 which has no infinity).
double round_float(double v, DataType t);

struct EvalEnv {
  std::map<Var, Value, VarLess> vars;
  // Value of a buffer element; without it, evaluating a load throws ValueError.
  std::function<Value(const Buffer&, const std::vector<int64_t>& indices)> load;
  // When set, receives true as soon as a signed integer operation wraps around.
  bool* signed_overflow = nullptr;
};

// One operation on values (what constant folding uses). Operands of a binary operation have the
// same dtype; comparisons and logical operations give bool. Throw like eval_expr.
Value eval_binary(BinOp op, const Value& a, const Value& b, bool* signed_overflow = nullptr);
Value eval_unary(UnOp op, const Value& a, bool* signed_overflow = nullptr);
Value eval_cast(DataType to, const Value& v);
// The value of a constant expression (IntImm / FloatImm); false for anything else.
bool const_value(const Expr& e, Value* out);
// The constant expression of a value (IntImm, or FloatImm holding the rounded value).
Expr value_to_expr(const Value& v);

// Evaluates a scalar expression. Throws ValueError for an unbound variable, an integer division
// by zero, an undefined shift or cast; NotImplemented for vectors and unknown calls.
Value eval_expr(const Expr& e, const EvalEnv& env);
Value eval_expr(const Expr& e, const std::map<Var, Value, VarLess>& vars);

}  // namespace tl
