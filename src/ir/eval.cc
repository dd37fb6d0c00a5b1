#include "ir/eval.h"

#include <cmath>
#include <sstream>

#include "ir/error.h"
#include "ir/printer.h"

namespace tl {

namespace {

[[noreturn]] void throw_status(scalar::Status s, const char* what, DataType t) {
  switch (s) {
    case scalar::Status::kDivByZero:
      throw_error<ValueError>("eval_expr: integer division by zero in '", what, "'");
    case scalar::Status::kBadType: throw_error<TypeError>("eval_expr: operator ", what, " on ", t.str());
    default: throw_error<ValueError>("eval_expr: ", scalar::status_message(s), " in '", what, "' on ", t.str());
  }
}

Value call_value(const CallNode* n, const std::vector<Value>& args, bool* signed_overflow) {
  const std::string& op = n->op;
  if (args.size() == 1 && !args[0].is_float() && op == "abs" && n->dtype.is_integer()) {
    Value a = eval_cast(n->dtype, args[0]);
    int64_t r = a.i;
    if (n->dtype.is_int() && r < 0) scalar::int_unary(UnOp::kNeg, r, n->dtype, &r, signed_overflow);
    return Value::from_int(r, n->dtype);
  }
  bool floats = n->dtype.is_float() && !args.empty() && args.size() <= 3;
  for (auto& a : args) floats = floats && a.is_float();
  double x[3] = {0, 0, 0}, r = 0;
  for (size_t k = 0; floats && k < args.size(); ++k) x[k] = args[k].f;
  if (!floats || !scalar::math_call(op, x, args.size(), &r))
    throw_error<NotImplemented>("not implemented: eval_expr of call '", op, "'");
  return Value::from_float(r, n->dtype);
}

// The Value domain of eval_tree (ir/eval.h): dtype-exact; throws on anything it cannot evaluate.
struct ValueDomain {
  using V = Value;
  const EvalEnv& env;

  bool imm(const Expr& e, V* out) {
    if (!const_value(e, out)) throw_error<NotImplemented>("not implemented: eval_expr of '", to_string(e), "'");
    return true;
  }
  bool var(const Expr& e, V* out) {
    auto it = env.vars.find(Var(std::static_pointer_cast<const VarNode>(e.node())));
    if (it == env.vars.end()) throw_error<ValueError>("eval_expr: variable '", e.as<VarNode>()->name, "' has no value");
    *out = eval_cast(e.dtype(), it->second);
    return true;
  }
  bool truth(const V& v, bool* out) { return (*out = v.as_bool(), true); }
  bool boolean(bool b, V* out) { return (*out = Value::from_bool(b), true); }
  bool binary(const BinaryNode* n, const V& a, const V& b, V* out) {
    return (*out = eval_binary(n->op, a, b, env.signed_overflow), true);
  }
  bool unary(const UnaryNode* n, const V& a, V* out) { return (*out = eval_unary(n->op, a, env.signed_overflow), true); }
  bool cast(const CastNode* n, const V& a, V* out) { return (*out = eval_cast(n->dtype, a), true); }
  bool load(const BufferLoadNode* n, V* out) {
    if (!env.load) throw_error<ValueError>("eval_expr: load from buffer '", n->buffer.name(), "' without a loader");
    std::vector<int64_t> idx;
    for (auto& i : n->indices) {
      Value v;
      eval_tree(i, *this, &v);
      idx.push_back(v.i);
    }
    *out = eval_cast(n->dtype, env.load(n->buffer, idx));
    return true;
  }
  bool call(const CallNode* n, V* out) {
    std::vector<Value> args(n->args.size());
    for (size_t k = 0; k < args.size(); ++k) eval_tree(n->args[k], *this, &args[k]);
    *out = call_value(n, args, env.signed_overflow);
    return true;
  }
  bool other(const Expr& e, V*) { throw_error<NotImplemented>("not implemented: eval_expr of '", to_string(e), "'"); }
};

}  // namespace

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
  if (to.is_float())
    return Value::from_float(v.is_float() ? v.f : scalar::int_to_double(v.i, v.dtype), to);
  if (!to.is_integer()) throw_error<NotImplemented>("not implemented: eval_expr cast to ", to.str());
  if (!v.is_float()) return Value::from_int(scalar::int_to_int(v.i, to), to);
  int64_t r = 0;
  if (scalar::float_to_int(v.f, to, &r) != scalar::Status::kOk)
    throw_error<ValueError>("eval_expr: float value ", v.f, " does not fit ", to.str());
  Value out;
  out.dtype = to;
  out.i = r;
  return out;
}

Value eval_binary(BinOp op, const Value& a, const Value& b, bool* signed_overflow) {
  DataType t = a.dtype;
  if (a.dtype != b.dtype)
    throw_error<TypeError>("eval_expr: operands of ", binop_name(op), " differ in type (", a.dtype.str(), ", ",
                           b.dtype.str(), ")");
  if (t.is_float()) {
    double r = 0;
    scalar::Status s = scalar::float_binary(op, a.f, b.f, &r);
    if (s != scalar::Status::kOk) throw_status(s, binop_name(op), t);
    return scalar::gives_bool(op) ? Value::from_bool(r != 0) : Value::from_float(r, t);
  }
  if ((op == BinOp::kShl || op == BinOp::kShr) &&
      (b.i < 0 || b.i >= t.bits) && !(t.is_uint() && t.bits >= 64 && b.i < 0))
    throw_error<ValueError>("eval_expr: shift by ", b.i, " of a ", t.str());
  int64_t r = 0;
  scalar::Status s = scalar::int_binary(op, a.i, b.i, t, &r, signed_overflow);
  if (s == scalar::Status::kBadShift) throw_error<ValueError>("eval_expr: shift by ", static_cast<uint64_t>(b.i), " of a ", t.str());
  if (s != scalar::Status::kOk) throw_status(s, binop_name(op), t);
  if (scalar::gives_bool(op)) return Value::from_bool(r != 0);
  Value out;
  out.dtype = t;
  out.i = r;
  return out;
}

Value eval_unary(UnOp op, const Value& a, bool* signed_overflow) {
  if (op == UnOp::kNeg && a.dtype.is_bool()) throw_error<TypeError>("eval_expr: negation of a bool");
  if (op == UnOp::kNot) return Value::from_bool(!a.as_bool());
  if (a.is_float()) {
    double r = 0;
    if (scalar::float_unary(op, a.f, &r) != scalar::Status::kOk)
      throw_error<TypeError>("eval_expr: operator ~ on ", a.dtype.str());
    return Value::from_float(r, a.dtype);
  }
  Value out;
  out.dtype = a.dtype;
  scalar::Status s = scalar::int_unary(op, a.i, a.dtype, &out.i, signed_overflow);
  if (s != scalar::Status::kOk) throw_status(s, unop_name(op), a.dtype);
  return out;
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

Value eval_expr(const Expr& e, const EvalEnv& env) {
  if (!e.defined()) throw_error<ValueError>("eval_expr: undefined expression");
  ValueDomain d{env};
  Value out;
  eval_tree(e, d, &out);
  return out;
}

Value eval_expr(const Expr& e, const std::map<Var, Value, VarLess>& vars) {
  EvalEnv env;
  env.vars = vars;
  return eval_expr(e, env);
}

[[noreturn]] void throw_int_eval(IntEval s, const Expr& e, const VarNode* unbound, const char* who) {
  switch (s) {
    case IntEval::kUnbound:
      throw_error<ValueError>(who, ": unbound variable '", unbound ? unbound->name : std::string("?"), "'");
    case IntEval::kDivByZero: throw_error<ValueError>(who, ": division by zero in ", to_string(e));
    case IntEval::kBadShift: throw_error<ValueError>(who, ": shift count out of range in ", to_string(e));
    default: throw_error<ValueError>(who, ": not an integer index expression: ", to_string(e));
  }
}

int64_t eval_int_or_throw(const Expr& e, const std::map<Var, int64_t, VarLess>& env, const char* who) {
  auto lookup = [&](const VarNode* v, int64_t* out) {
    auto it = env.find(Var(std::static_pointer_cast<const VarNode>(
        std::shared_ptr<const ExprNode>(std::shared_ptr<const ExprNode>(), v))));
    if (it == env.end()) return false;
    *out = it->second;
    return true;
  };
  int64_t out = 0;
  const VarNode* unbound = nullptr;
  IntEval s = eval_int(e, lookup, &out, &unbound);
  if (s != IntEval::kOk) throw_int_eval(s, e, unbound, who);
  return out;
}

}  // namespace tl
