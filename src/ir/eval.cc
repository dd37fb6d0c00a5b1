#include "ir/eval.h"

#include <cmath>
#include <sstream>

#include "ir/error.h"
#include "ir/int_arith.h"
#include "tl/common/float_formats.h"

namespace tl {

namespace {

using i128 = __int128;

bool is_signed_int(DataType t) { return t.is_int(); }

// The mathematical value of an integer Value (uint64 bit patterns become large positives).
i128 math_int(const Value& v) {
  if (v.dtype.is_uint() && v.dtype.bits >= 64) return static_cast<i128>(static_cast<uint64_t>(v.i));
  return v.i;
}

// Wraps a wide result into `t`; flags signed overflow when the value changed.
Value wrap_result(i128 r, DataType t, bool* signed_overflow) {
  int64_t low = static_cast<int64_t>(static_cast<uint64_t>(static_cast<unsigned __int128>(r)));
  Value out = Value::from_int(low, t);
  if (is_signed_int(t) && static_cast<i128>(out.i) != r && signed_overflow) *signed_overflow = true;
  return out;
}

Value float_binary(BinOp op, double x, double y, DataType t) {
  switch (op) {
    case BinOp::kAdd: return Value::from_float(x + y, t);
    case BinOp::kSub: return Value::from_float(x - y, t);
    case BinOp::kMul: return Value::from_float(x * y, t);
    case BinOp::kDiv: return Value::from_float(x / y, t);
    case BinOp::kMod: return Value::from_float(std::fmod(x, y), t);
    case BinOp::kFloorDiv: return Value::from_float(std::floor(x / y), t);
    case BinOp::kFloorMod: return Value::from_float(x - y * std::floor(x / y), t);
    case BinOp::kMin: return Value::from_float(std::fmin(x, y), t);
    case BinOp::kMax: return Value::from_float(std::fmax(x, y), t);
    case BinOp::kEQ: return Value::from_bool(x == y);
    case BinOp::kNE: return Value::from_bool(x != y);
    case BinOp::kLT: return Value::from_bool(x < y);
    case BinOp::kLE: return Value::from_bool(x <= y);
    case BinOp::kGT: return Value::from_bool(x > y);
    case BinOp::kGE: return Value::from_bool(x >= y);
    case BinOp::kAnd: return Value::from_bool(x != 0 && y != 0);
    case BinOp::kOr: return Value::from_bool(x != 0 || y != 0);
    default: break;
  }
  throw_error<TypeError>("eval_expr: operator ", binop_name(op), " on ", t.str());
}

Value call_value(const CallNode* n, const std::vector<Value>& args, bool* signed_overflow) {
  const std::string& op = n->op;
  if (args.size() == 1 && !args[0].is_float() && op == "abs" && n->dtype.is_integer()) {
    i128 x = math_int(args[0]);
    return wrap_result(x < 0 ? -x : x, n->dtype, signed_overflow);
  }
  bool floats = n->dtype.is_float();
  for (auto& a : args) floats = floats && a.is_float();
  if (floats && args.size() == 1) {
    double x = args[0].f, r;
    if (op == "exp" || op == "__exp") r = std::exp(x);
    else if (op == "exp2") r = std::exp2(x);
    else if (op == "log" || op == "__log") r = std::log(x);
    else if (op == "log2") r = std::log2(x);
    else if (op == "sqrt") r = std::sqrt(x);
    else if (op == "rsqrt") r = 1.0 / std::sqrt(x);
    else if (op == "tanh") r = std::tanh(x);
    else if (op == "sigmoid") r = 1.0 / (1.0 + std::exp(-x));
    else if (op == "abs") r = std::fabs(x);
    else if (op == "floor") r = std::floor(x);
    else if (op == "ceil") r = std::ceil(x);
    else if (op == "trunc") r = std::trunc(x);
    else if (op == "round") r = std::nearbyint(x);
    else if (op == "sin" || op == "__sin") r = std::sin(x);
    else if (op == "cos" || op == "__cos") r = std::cos(x);
    else throw_error<NotImplemented>("not implemented: eval_expr of call '", op, "'");
    return Value::from_float(r, n->dtype);
  }
  if (floats && args.size() == 2 && op == "pow") return Value::from_float(std::pow(args[0].f, args[1].f), n->dtype);
  throw_error<NotImplemented>("not implemented: eval_expr of call '", op, "'");
}

class Evaluator {
 public:
  explicit Evaluator(const EvalEnv& env) : env_(env) {}

  Value eval(const Expr& e) {
    if (!e.defined()) throw_error<ValueError>("eval_expr: undefined expression");
    switch (e.kind()) {
      case ExprKind::kIntImm: return Value::from_int(e.as<IntImmNode>()->value, e.dtype());
      case ExprKind::kFloatImm: return Value::from_float(e.as<FloatImmNode>()->value, e.dtype());
      case ExprKind::kVar: {
        auto it = env_.vars.find(Var(std::static_pointer_cast<const VarNode>(e.node())));
        if (it == env_.vars.end()) throw_error<ValueError>("eval_expr: variable '", e.as<VarNode>()->name, "' has no value");
        return eval_cast(e.dtype(), it->second);
      }
      case ExprKind::kBinary: {
        auto* n = e.as<BinaryNode>();
        if (n->op == BinOp::kAnd || n->op == BinOp::kOr) {  // short circuit, as in C
          bool a = eval(n->a).as_bool();
          if (n->op == BinOp::kAnd && !a) return Value::from_bool(false);
          if (n->op == BinOp::kOr && a) return Value::from_bool(true);
          return Value::from_bool(eval(n->b).as_bool());
        }
        Value a = eval(n->a);
        return eval_binary(n->op, a, eval(n->b), env_.signed_overflow);
      }
      case ExprKind::kUnary:
        return eval_unary(e.as<UnaryNode>()->op, eval(e.as<UnaryNode>()->a), env_.signed_overflow);
      case ExprKind::kSelect: {
        auto* n = e.as<SelectNode>();
        return eval(n->cond).as_bool() ? eval(n->true_value) : eval(n->false_value);
      }
      case ExprKind::kCast: return eval_cast(e.dtype(), eval(e.as<CastNode>()->value));
      case ExprKind::kBufferLoad: {
        auto* n = e.as<BufferLoadNode>();
        if (!env_.load) throw_error<ValueError>("eval_expr: load from buffer '", n->buffer.name(), "' without a loader");
        std::vector<int64_t> idx;
        for (auto& i : n->indices) idx.push_back(eval(i).i);
        return eval_cast(e.dtype(), env_.load(n->buffer, idx));
      }
      case ExprKind::kCall: {
        auto* n = e.as<CallNode>();
        std::vector<Value> args;
        for (auto& a : n->args) args.push_back(eval(a));
        return call_value(n, args, env_.signed_overflow);
      }
      default: break;
    }
    throw_error<NotImplemented>("not implemented: eval_expr of '", to_string(e), "'");
  }

 private:
  const EvalEnv& env_;
};

}  // namespace

int64_t wrap_int(int64_t v, DataType t) {
  if (t.is_bool()) return v != 0;
  if (t.bits >= 64) return v;
  uint64_t mask = (uint64_t(1) << t.bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (t.is_int() && ((u >> (t.bits - 1)) & 1)) return static_cast<int64_t>(u | ~mask);
  return static_cast<int64_t>(u);
}

double round_float(double v, DataType t) {
  // The project's one implementation of the small float formats (tl/common/float_formats.h): a
  // double goes to float rounding to odd, then to the format, which rounds once as a whole.
  using namespace ff;
  switch (t.code) {
    case DataType::kFloat:
      if (t.bits == 32) return static_cast<float>(v);
      if (t.bits == 16) return half_bits_to_float(float_to_half_bits(double_to_float_round_odd(v)));
      return v;  // float64
    case DataType::kBFloat: return bfloat16_bits_to_float(float_to_bfloat16_bits(double_to_float_round_odd(v)));
    case DataType::kFloat8E4M3:
      return fp8_bits_to_float<4, 3, 7, false>(float_to_fp8_bits<4, 3, 7, false>(double_to_float_round_odd(v)));
    case DataType::kFloat8E5M2:
      return fp8_bits_to_float<5, 2, 15, true>(float_to_fp8_bits<5, 2, 15, true>(double_to_float_round_odd(v)));
    default: return v;
  }
}

Value Value::from_int(int64_t v, DataType t) {
  Value out;
  out.dtype = t;
  if (t.is_float()) {
    out.f = round_float(static_cast<double>(v), t);
    return out;
  }
  out.i = wrap_int(v, t);
  return out;
}

Value Value::from_float(double v, DataType t) {
  Value out;
  out.dtype = t;
  if (!t.is_float()) throw_error<TypeError>("Value::from_float with type ", t.str());
  out.f = round_float(v, t);
  return out;
}

Value Value::from_bool(bool v) {
  Value out;
  out.dtype = DataType::Bool();
  out.i = v ? 1 : 0;
  return out;
}

double Value::as_double() const {
  if (is_float()) return f;
  if (dtype.is_uint() && dtype.bits >= 64) return static_cast<double>(static_cast<uint64_t>(i));
  return static_cast<double>(i);
}

std::string Value::str() const {
  std::ostringstream os;
  if (dtype.is_bool()) os << (i ? "true" : "false");
  else if (is_float()) os << f;
  else if (dtype.is_uint() && dtype.bits >= 64) os << static_cast<uint64_t>(i);
  else os << i;
  os << ":" << dtype.str();
  return os.str();
}

bool same_value(const Value& a, const Value& b) {
  if (a.dtype != b.dtype) return false;
  if (a.is_float()) {
    if (std::isnan(a.f) || std::isnan(b.f)) return std::isnan(a.f) && std::isnan(b.f);
    return a.f == b.f && std::signbit(a.f) == std::signbit(b.f);
  }
  return a.i == b.i;
}

Value eval_cast(DataType to, const Value& v) {
  if (v.dtype == to) return v;
  if (to.is_bool()) return Value::from_bool(v.as_bool());
  if (to.is_float()) return Value::from_float(v.is_float() ? v.f : static_cast<double>(math_int(v)), to);
  if (!to.is_integer()) throw_error<NotImplemented>("not implemented: eval_expr cast to ", to.str());
  if (!v.is_float()) return Value::from_int(static_cast<int64_t>(math_int(v)), to);
  double t = std::trunc(v.f);
  // The open range a C float -> int conversion is defined on.
  double lo = to.is_uint() ? -1.0 : std::ldexp(-1.0, to.bits - 1) - 1.0;
  double hi = to.is_uint() ? std::ldexp(1.0, to.bits) : std::ldexp(1.0, to.bits - 1);
  if (std::isnan(v.f) || !(t > lo && t < hi))
    throw_error<ValueError>("eval_expr: float value ", v.f, " does not fit ", to.str());
  if (to.is_uint() && to.bits == 64 && t >= std::ldexp(1.0, 63))
    return Value::from_int(static_cast<int64_t>(static_cast<uint64_t>(t)), to);
  return Value::from_int(static_cast<int64_t>(t), to);
}

Value eval_binary(BinOp op, const Value& a, const Value& b, bool* signed_overflow) {
  DataType t = a.dtype;
  if (a.dtype != b.dtype)
    throw_error<TypeError>("eval_expr: operands of ", binop_name(op), " differ in type (", a.dtype.str(), ", ",
                           b.dtype.str(), ")");
  if (t.is_float()) return float_binary(op, a.f, b.f, t);
  i128 x = math_int(a), y = math_int(b);
  switch (op) {
    case BinOp::kAdd: return wrap_result(x + y, t, signed_overflow);
    case BinOp::kSub: return wrap_result(x - y, t, signed_overflow);
    case BinOp::kMul: return wrap_result(x * y, t, signed_overflow);  // fits 128 bits
    case BinOp::kDiv:
    case BinOp::kMod:
    case BinOp::kFloorDiv:
    case BinOp::kFloorMod: {
      if (y == 0) throw_error<ValueError>("eval_expr: integer division by zero in '", binop_name(op), "'");
      i128 q = (op == BinOp::kDiv || op == BinOp::kMod) ? x / y : floordiv_int(x, y);
      if (op == BinOp::kDiv || op == BinOp::kFloorDiv) return wrap_result(q, t, signed_overflow);
      return wrap_result(x - q * y, t, signed_overflow);
    }
    case BinOp::kMin: return x <= y ? a : b;
    case BinOp::kMax: return x >= y ? a : b;
    case BinOp::kEQ: return Value::from_bool(x == y);
    case BinOp::kNE: return Value::from_bool(x != y);
    case BinOp::kLT: return Value::from_bool(x < y);
    case BinOp::kLE: return Value::from_bool(x <= y);
    case BinOp::kGT: return Value::from_bool(x > y);
    case BinOp::kGE: return Value::from_bool(x >= y);
    case BinOp::kAnd: return Value::from_bool(x != 0 && y != 0);
    case BinOp::kOr: return Value::from_bool(x != 0 || y != 0);
    case BinOp::kBitAnd: return Value::from_int(a.i & b.i, t);
    case BinOp::kBitOr: return Value::from_int(a.i | b.i, t);
    case BinOp::kBitXor: return Value::from_int(a.i ^ b.i, t);
    case BinOp::kShl:
    case BinOp::kShr: {
      if (y < 0 || y >= t.bits)
        throw_error<ValueError>("eval_expr: shift by ", static_cast<int64_t>(y), " of a ", t.str());
      int s = static_cast<int>(y);
      if (op == BinOp::kShl) return Value::from_int(static_cast<int64_t>(static_cast<uint64_t>(a.i) << s), t);
      if (is_signed_int(t)) return Value::from_int(a.i >> s, t);
      uint64_t u = t.bits >= 64 ? static_cast<uint64_t>(a.i) : static_cast<uint64_t>(a.i) & ((uint64_t(1) << t.bits) - 1);
      return Value::from_int(static_cast<int64_t>(u >> s), t);
    }
  }
  throw_error<NotImplemented>("not implemented: eval_expr of operator ", binop_name(op));
}

Value eval_unary(UnOp op, const Value& a, bool* signed_overflow) {
  switch (op) {
    case UnOp::kNeg:
      if (a.dtype.is_bool()) throw_error<TypeError>("eval_expr: negation of a bool");
      if (a.is_float()) return Value::from_float(-a.f, a.dtype);
      return wrap_result(-math_int(a), a.dtype, signed_overflow);
    case UnOp::kNot: return Value::from_bool(!a.as_bool());
    case UnOp::kBitNot:
      if (a.is_float()) throw_error<TypeError>("eval_expr: operator ~ on ", a.dtype.str());
      return Value::from_int(~a.i, a.dtype);
  }
  throw_error<NotImplemented>("not implemented: eval_expr of a unary operator");
}

bool const_value(const Expr& e, Value* out) {
  if (auto* i = e.as<IntImmNode>()) {
    *out = Value::from_int(i->value, e.dtype());
    return true;
  }
  if (auto* f = e.as<FloatImmNode>()) {
    *out = Value::from_float(f->value, e.dtype());
    return true;
  }
  return false;
}

Expr value_to_expr(const Value& v) {
  if (v.dtype.is_bool()) return make_bool(v.i != 0);
  if (v.is_float()) return make_float(v.f, v.dtype);
  return make_int(v.i, v.dtype);
}

Value eval_expr(const Expr& e, const EvalEnv& env) { return Evaluator(env).eval(e); }

Value eval_expr(const Expr& e, const std::map<Var, Value, VarLess>& vars) {
  EvalEnv env;
  env.vars = vars;
  return eval_expr(e, env);
}

}  // namespace tl
