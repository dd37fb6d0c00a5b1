// The compiler's one evaluator of scalar IR expressions: a single tree walker (eval_tree) over two
// value domains, both computing every operator through the one operator table (ir/scalar_ops.h):
// - Value (eval_expr): the reference evaluator, the executable definition of what an expression
//   means, dtype-exact; the simplifier's tests compare original and simplified expressions with it.
// - int64 (eval_int): the fast path for index and shape expressions (layout maps, kernel argument
//   shapes on the call path, loop facts of the Ascend sync analysis), with a policy for unbound
//   variables chosen by the caller's lookup (throw / report unknown / compute on demand).
// The Ascend simulator and the cuda emulator run their own compiled / per-thread programs but call
// the same operator table.
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
#include <type_traits>
#include <vector>

#include "ir/buffer.h"
#include "ir/scalar_ops.h"

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

// wrap_int and round_float: ir/scalar_ops.h.

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

// ---- The tree walker ---------------------------------------------------------------------------
// eval_tree(e, d, &out) walks `e` once; the domain `d` gives the values and applies the operators:
//   using V = ...;                                   the carrier of one value
//   bool imm(const Expr& e, V* out);                 IntImm / FloatImm
//   bool var(const Expr& v, V* out);                 a variable (its policy when unbound)
//   bool truth(const V& v, bool* out);               a condition's truth (select, && / ||)
//   bool boolean(bool b, V* out);                    the value of a short-circuited && / ||
//   bool binary(const BinaryNode* n, const V& a, const V& b, V* out);
//   bool unary(const UnaryNode* n, const V& a, V* out);
//   bool cast(const CastNode* n, const V& a, V* out);
//   bool load(const BufferLoadNode* n, V* out);      (evaluates the indices with eval_tree itself)
//   bool call(const CallNode* n, V* out);
//   bool other(const Expr& e, V* out);               any other node
// Each returns false when the value is unknown (the domain records why, or throws instead). && and
// || short-circuit and select evaluates only the chosen branch, as in C.
template <class D>
bool eval_tree(const Expr& e, D& d, typename D::V* out) {
  using V = typename D::V;
  switch (e.kind()) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm: return d.imm(e, out);
    case ExprKind::kVar: return d.var(e, out);
    case ExprKind::kBinary: {
      auto* n = e.as<BinaryNode>();
      V a, b;
      if (!eval_tree(n->a, d, &a)) return false;
      if (n->op == BinOp::kAnd || n->op == BinOp::kOr) {
        bool x, y;
        if (!d.truth(a, &x)) return false;
        if (x == (n->op == BinOp::kOr)) return d.boolean(x, out);
        if (!eval_tree(n->b, d, &b) || !d.truth(b, &y)) return false;
        return d.boolean(y, out);
      }
      return eval_tree(n->b, d, &b) && d.binary(n, a, b, out);
    }
    case ExprKind::kUnary: {
      V a;
      return eval_tree(e.as<UnaryNode>()->a, d, &a) && d.unary(e.as<UnaryNode>(), a, out);
    }
    case ExprKind::kSelect: {
      auto* n = e.as<SelectNode>();
      V c;
      bool t;
      if (!eval_tree(n->cond, d, &c) || !d.truth(c, &t)) return false;
      return eval_tree(t ? n->true_value : n->false_value, d, out);
    }
    case ExprKind::kCast: {
      V a;
      return eval_tree(e.as<CastNode>()->value, d, &a) && d.cast(e.as<CastNode>(), a, out);
    }
    case ExprKind::kBufferLoad: return d.load(e.as<BufferLoadNode>(), out);
    case ExprKind::kCall: return d.call(e.as<CallNode>(), out);
    default: return d.other(e, out);
  }
}

// ---- The int64 domain ----------------------------------------------------------------------------
// Index and shape arithmetic: every integer node is computed in int64 through scalar::int_binary /
// int_unary with type int64 (index arithmetic is assumed not to overflow, so a node's narrower type
// does not wrap it: a shape M * N of two int32 variables is the product); a cast wraps to its type
// (as C's conversion does). Float constants, float operands, loads and calls are not index
// arithmetic: kNotInteger.
enum class IntEval : uint8_t { kOk, kUnbound, kDivByZero, kBadShift, kNotInteger };

template <class Lookup>
struct IntDomain {
  using V = int64_t;
  Lookup& lookup;  // bool(const VarNode*, int64_t*): false when the variable has no value
  IntEval status = IntEval::kOk;
  const VarNode* unbound = nullptr;
  const Expr* culprit = nullptr;

  bool fail(IntEval s) {
    status = s;
    return false;
  }
  bool fail_op(scalar::Status s) {
    return fail(s == scalar::Status::kDivByZero ? IntEval::kDivByZero
                : s == scalar::Status::kBadShift ? IntEval::kBadShift : IntEval::kNotInteger);
  }
  bool imm(const Expr& e, V* out) {
    if (auto* i = e.as<IntImmNode>()) return (*out = i->value, true);
    return fail(IntEval::kNotInteger);
  }
  bool var(const Expr& e, V* out) {
    const VarNode* v = static_cast<const VarNode*>(e.get());
    if (lookup(v, out)) return true;
    unbound = v;
    return fail(IntEval::kUnbound);
  }
  bool truth(const V& v, bool* out) { return (*out = v != 0, true); }
  bool boolean(bool b, V* out) { return (*out = b, true); }
  bool binary(const BinaryNode* n, V a, V b, V* out) {
    if (n->a.dtype().is_float() || n->b.dtype().is_float()) return fail(IntEval::kNotInteger);
    scalar::Status s = scalar::int_binary(n->op, a, b, DataType::Int(64), out);
    return s == scalar::Status::kOk || fail_op(s);
  }
  bool unary(const UnaryNode* n, V a, V* out) {
    if (n->a.dtype().is_float()) return fail(IntEval::kNotInteger);
    scalar::Status s = scalar::int_unary(n->op, a, DataType::Int(64), out);
    return s == scalar::Status::kOk || fail_op(s);
  }
  bool cast(const CastNode* n, V a, V* out) {
    if (n->value.dtype().is_float() || n->dtype.is_float()) return fail(IntEval::kNotInteger);
    return (*out = scalar::int_to_int(a, n->dtype), true);
  }
  bool load(const BufferLoadNode*, V*) { return fail(IntEval::kNotInteger); }
  bool call(const CallNode*, V*) { return fail(IntEval::kNotInteger); }
  bool other(const Expr&, V*) { return fail(IntEval::kNotInteger); }
};

// Evaluates an integer index / shape expression in int64 (IntDomain above). `lookup(const VarNode*,
// int64_t*)` gives a variable's value or returns false; then the result is kUnbound and *unbound names
// the variable. Never throws.
template <class Lookup>
IntEval eval_int(const Expr& e, Lookup&& lookup, int64_t* out, const VarNode** unbound = nullptr) {
  IntDomain<std::remove_reference_t<Lookup>> d{lookup};
  if (eval_tree(e, d, out)) return IntEval::kOk;
  if (unbound) *unbound = d.unbound;
  return d.status;
}

// eval_int that throws ValueError ("<who>: unbound variable 'n'", "<who>: division by zero in ...",
// "<who>: not an integer index expression: ...") instead of returning a status.
int64_t eval_int_or_throw(const Expr& e, const std::map<Var, int64_t, VarLess>& env, const char* who);
[[noreturn]] void throw_int_eval(IntEval s, const Expr& e, const VarNode* unbound, const char* who);

}  // namespace tl
