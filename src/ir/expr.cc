#include "ir/expr.h"

#include <cmath>
#include <functional>

#include "ir/error.h"
#include "ir/eval.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "ir/printf_format.h"

namespace tl {

// 2000 levels take under 2 MiB of stack in the deepest walker (measured: every target compiles a
// 2000-deep expression on a 2 MiB thread stack; NVRTC runs on its own large stack), a quarter of a
// default 8 MiB thread stack. The textual IR parser refuses deeper nesting at the same depth.
const uint32_t kMaxExprDepth = 2000;

ExprNode::ExprNode(ExprKind k, DataType t, uint32_t d) : kind(k), dtype(t), depth(d) {
  if (d > kMaxExprDepth)
    throw_error<ResourceError>("an expression nested ", d, " operations deep exceeds tilelang's limit of ",
                               kMaxExprDepth, " (every compiler pass walks expressions recursively); compute it in "
                               "steps through a local variable (acc = T.alloc_var(dtype); acc = acc + ...) or a loop");
}

std::string Span::str() const {
  if (!defined()) return "";
  std::string f = file ? *file : std::string("<unknown>");
  return f + ":" + std::to_string(line) + ":" + std::to_string(col);
}

Expr::Expr(int value) : node_(std::make_shared<IntImmNode>(DataType::Int32(), value)) {}

Var::Var(std::string name, DataType dtype) : Expr(std::make_shared<VarNode>(std::move(name), dtype)) {}

const char* binop_name(BinOp op) {
  switch (op) {
    case BinOp::kAdd: return "add";
    case BinOp::kSub: return "sub";
    case BinOp::kMul: return "mul";
    case BinOp::kDiv: return "div";
    case BinOp::kMod: return "mod";
    case BinOp::kFloorDiv: return "floordiv";
    case BinOp::kFloorMod: return "floormod";
    case BinOp::kMin: return "min";
    case BinOp::kMax: return "max";
    case BinOp::kEQ: return "eq";
    case BinOp::kNE: return "ne";
    case BinOp::kLT: return "lt";
    case BinOp::kLE: return "le";
    case BinOp::kGT: return "gt";
    case BinOp::kGE: return "ge";
    case BinOp::kAnd: return "and";
    case BinOp::kOr: return "or";
    case BinOp::kBitAnd: return "bitand";
    case BinOp::kBitOr: return "bitor";
    case BinOp::kBitXor: return "bitxor";
    case BinOp::kShl: return "shl";
    case BinOp::kShr: return "shr";
  }
  return "?";
}

bool binop_is_compare(BinOp op) {
  return op == BinOp::kEQ || op == BinOp::kNE || op == BinOp::kLT || op == BinOp::kLE ||
         op == BinOp::kGT || op == BinOp::kGE;
}
bool binop_is_logical(BinOp op) { return op == BinOp::kAnd || op == BinOp::kOr; }

const char* unop_name(UnOp op) {
  switch (op) {
    case UnOp::kNeg: return "neg";
    case UnOp::kNot: return "not";
    case UnOp::kBitNot: return "bitnot";
  }
  return "?";
}

Expr make_int(int64_t value, DataType dtype) {
  if (dtype.is_bool()) return make_bool(value != 0);
  if (dtype.is_float()) return make_float(static_cast<double>(value), dtype);
  if (!dtype.is_integer()) throw_error<TypeError>("make_int: ", dtype.str(), " is not an integer type");
  return Expr(std::make_shared<IntImmNode>(dtype, value));
}

Expr make_float(double value, DataType dtype) {
  if (!dtype.is_float()) throw_error<TypeError>("make_float: ", dtype.str(), " is not a float type");
  return Expr(std::make_shared<FloatImmNode>(dtype, value));
}

Expr make_bool(bool value) { return Expr(std::make_shared<IntImmNode>(DataType::Bool(), value ? 1 : 0)); }

Expr make_string(std::string value) { return Expr(std::make_shared<StringImmNode>(std::move(value))); }

Expr make_const(DataType dtype, double value) {
  if (dtype.is_float()) return make_float(value, dtype);
  if (dtype.is_bool()) return make_bool(value != 0);
  return make_int(static_cast<int64_t>(value), dtype);
}

bool is_const_int(const Expr& e, int64_t* value) {
  if (!e.defined()) return false;
  if (auto* n = e.as<IntImmNode>()) {
    if (value) *value = n->value;
    return true;
  }
  return false;
}
bool is_const_value(const Expr& e, int64_t value) {
  int64_t v;
  return is_const_int(e, &v) && v == value;
}
bool is_const_float(const Expr& e, double* value) {
  if (!e.defined()) return false;
  if (auto* n = e.as<FloatImmNode>()) {
    if (value) *value = n->value;
    return true;
  }
  return false;
}
int64_t get_const_int(const Expr& e, const char* what) {
  int64_t v;
  if (!is_const_int(e, &v))
    throw_error<ValueError>(what, " must be a compile-time integer constant, got '", to_string(e), "'");
  return v;
}

static int float_rank(DataType t) {
  // fp4 < fp8 < fp16/bf16 < fp32 < fp64; mixing fp16 and bf16 promotes to fp32.
  if (t.is_fp4()) return 0;
  if (t.is_fp8()) return 1;
  if (t.bits == 16) return 2;
  if (t.bits == 32) return 3;
  return 4;
}

// Whether `v` is a value of the integer type `t`.
static bool int_fits(DataType t, int64_t v) {
  if (t.bits >= 64) return t.is_int() || v >= 0;
  const int64_t span = int64_t(1) << t.bits;
  return t.is_uint() ? (v >= 0 && v < span) : (v >= -span / 2 && v < span / 2);
}

// Brings a and b to a common type, following the promotion rules in expr.h.
static void promote(Expr& a, Expr& b) {
  DataType ta = a.dtype(), tb = b.dtype();
  if (ta == tb) return;
  if (ta.lanes != tb.lanes) {
    if (ta.lanes == 1) a = make_broadcast(a, tb.lanes);
    else if (tb.lanes == 1) b = make_broadcast(b, ta.lanes);
    else throw_error<TypeError>("operands have different vector widths: ", ta.str(), " and ", tb.str());
    ta = a.dtype();
    tb = b.dtype();
    if (ta == tb) return;
  }
  bool ca = a.as<IntImmNode>() || a.as<FloatImmNode>();
  bool cb = b.as<IntImmNode>() || b.as<FloatImmNode>();
  auto convert_const = [](const Expr& c, DataType to) -> Expr {
    if (auto* i = c.as<IntImmNode>()) {
      // A literal wider than the other operand whose value does not fit it (i + 2**31 on an int32
      // i, x + 200 on an int8 x) promotes instead of wrapping: the wider type wins below.
      if (to.is_integer() && c.dtype().is_integer() && c.dtype().bits > to.bits &&
          !int_fits(to, i->value))
        return Expr();
      return make_const(to, static_cast<double>(i->value));
    }
    auto* f = c.as<FloatImmNode>();
    if (to.is_float()) return make_float(f->value, to);
    return Expr();  // a float literal cannot become an int silently
  };
  // A literal adopts the other operand's type (x + 1, x * 0.5 on a float16 x).
  if (ca && !cb) {
    if (Expr c = convert_const(a, tb); c.defined()) { a = c; return; }
  }
  if (cb && !ca) {
    if (Expr c = convert_const(b, ta); c.defined()) { b = c; return; }
  }
  DataType target;
  if (ta.is_handle() || tb.is_handle()) throw_error<TypeError>("cannot combine ", ta.str(), " and ", tb.str());
  if (ta.is_float() || tb.is_float()) {
    if (ta.is_float() && tb.is_float()) {
      int ra = float_rank(ta), rb = float_rank(tb);
      if (ra == rb) target = DataType::Float32().with_lanes(ta.lanes);  // fp16 vs bf16, e4m3 vs e5m2
      else target = ra > rb ? ta : tb;
      if (ra == rb && ra == 4) target = ta;
    } else {
      target = ta.is_float() ? ta : tb;
    }
  } else if (ta.is_bool() && tb.is_bool()) {
    target = ta;
  } else if (ta.is_bool() || tb.is_bool()) {
    target = ta.is_bool() ? tb : ta;
  } else {
    // Two integers: the wider wins; at equal width signed wins.
    if (ta.bits != tb.bits) target = ta.bits > tb.bits ? ta : tb;
    else target = ta.is_int() ? ta : tb;
  }
  a = make_cast(target, a);
  b = make_cast(target, b);
}

// Folds an operation on constants with the reference semantics of ir/eval.h (wrap-around
// integers, floats rounded to their dtype). Returns an undefined Expr when the operation has no
// defined value (division by zero, an out-of-range cast): it is then left in the IR.
static Expr fold(const std::function<Value()>& op) {
  try {
    return value_to_expr(op());
  } catch (const Error&) {
    return Expr();
  }
}

// True when evaluating `e` cannot have an effect (no calls), so it may be dropped.
static bool is_pure(const Expr& e) {
  bool pure = true;
  for_each_subexpr(e, [&](const Expr& x) { pure &= x.kind() != ExprKind::kCall; });
  return pure;
}

Expr make_binary(BinOp op, Expr a, Expr b) {
  if (!a.defined() || !b.defined()) throw_error<TypeError>("make_binary(", binop_name(op), "): undefined operand");
  if (a.dtype().is_void() || b.dtype().is_void())
    throw_error<TypeError>("operator '", binop_name(op), "' applied to a value of type void");
  if (binop_is_logical(op)) {
    if (!a.dtype().is_bool()) a = make_binary(BinOp::kNE, a, make_int(0, a.dtype()));
    if (!b.dtype().is_bool()) b = make_binary(BinOp::kNE, b, make_int(0, b.dtype()));
  }
  promote(a, b);
  DataType t = a.dtype();
  bool int_only = op == BinOp::kFloorDiv || op == BinOp::kFloorMod || op == BinOp::kBitAnd ||
                  op == BinOp::kBitOr || op == BinOp::kBitXor || op == BinOp::kShl || op == BinOp::kShr;
  if (int_only && t.is_float()) {
    if (op == BinOp::kFloorDiv) {
      // Python // on floats: floor(a / b).
      return make_call(t, "floor", {make_binary(BinOp::kDiv, a, b)});
    }
    if (op == BinOp::kFloorMod) {
      Expr q = make_call(t, "floor", {make_binary(BinOp::kDiv, a, b)});
      return make_binary(BinOp::kSub, a, make_binary(BinOp::kMul, q, b));
    }
    throw_error<TypeError>("operator '", binop_name(op), "' needs integer operands, got ", t.str());
  }
  DataType result = (binop_is_compare(op) || binop_is_logical(op)) ? DataType::Bool().with_lanes(t.lanes) : t;

  // Constant folding.
  Value va, vb;
  if (t.lanes == 1 && const_value(a, &va) && const_value(b, &vb)) {
    if (Expr r = fold([&] { return eval_binary(op, va, vb); }); r.defined()) return r;
  }
  int64_t ia, ib;
  // Cheap identities keep shapes and indices readable; the simplifier does the rest.
  if (t.is_integer()) {
    switch (op) {
      case BinOp::kAdd:
        if (is_zero(a)) return b;
        if (is_zero(b)) return a;
        break;
      case BinOp::kSub:
        if (is_zero(b)) return a;
        break;
      case BinOp::kMul:
        if (is_one(a)) return b;
        if (is_one(b)) return a;
        if ((is_zero(a) && is_pure(b)) || (is_zero(b) && is_pure(a))) return make_int(0, t);
        break;
      case BinOp::kDiv:
      case BinOp::kFloorDiv:
        if (is_one(b)) return a;
        break;
      case BinOp::kFloorMod:
      case BinOp::kMod:
        if (is_one(b) && is_pure(a)) return make_int(0, t);
        break;
      default: break;
    }
  }
  if (t.is_bool() && op == BinOp::kAnd) {
    if (is_const_int(a, &ia)) return ia ? b : make_bool(false);
    if (is_const_int(b, &ib)) return ib ? a : make_bool(false);
  }
  if (t.is_bool() && op == BinOp::kOr) {
    if (is_const_int(a, &ia)) return ia ? make_bool(true) : b;
    if (is_const_int(b, &ib)) return ib ? make_bool(true) : a;
  }
  return Expr(std::make_shared<BinaryNode>(result, op, std::move(a), std::move(b)));
}

Expr make_unary(UnOp op, Expr a) {
  if (!a.defined()) throw_error<TypeError>("make_unary: undefined operand");
  DataType t = a.dtype();
  if (op == UnOp::kNeg && t.is_bool()) throw_error<TypeError>("cannot negate a bool");
  if (op == UnOp::kBitNot && !t.is_integer()) throw_error<TypeError>("operator ~ needs an integer, got ", t.str());
  if (op == UnOp::kNot && !t.is_bool()) a = make_binary(BinOp::kNE, a, make_int(0, t));
  t = a.dtype();
  Value v;
  if (t.lanes == 1 && const_value(a, &v)) {
    if (Expr r = fold([&] { return eval_unary(op, v); }); r.defined()) return r;
  }
  return Expr(std::make_shared<UnaryNode>(t, op, std::move(a)));
}

Expr make_select(Expr cond, Expr t, Expr f) {
  if (!cond.dtype().is_bool()) cond = make_binary(BinOp::kNE, cond, make_int(0, cond.dtype()));
  promote(t, f);
  int64_t c;
  if (is_const_int(cond, &c)) return c ? t : f;
  DataType dt = t.dtype();
  return Expr(std::make_shared<SelectNode>(dt, std::move(cond), std::move(t), std::move(f)));
}

Expr make_cast(DataType dtype, Expr value) {
  if (!value.defined()) throw_error<TypeError>("make_cast: undefined operand");
  if (value.dtype() == dtype) return value;
  if (value.dtype().lanes != dtype.lanes && value.dtype().lanes == 1 && dtype.lanes > 1)
    return make_broadcast(make_cast(dtype.element_of(), value), dtype.lanes);
  Value v;
  if (dtype.lanes == 1 && const_value(value, &v)) {
    if (Expr r = fold([&] { return eval_cast(dtype, v); }); r.defined()) return r;
  }
  return Expr(std::make_shared<CastNode>(dtype, std::move(value)));
}

bool is_atomic_write_builtin(const std::string& op) {
  return op == "tl.atomic_add_scalar" || op == "tl.atomic_max_scalar" || op == "tl.atomic_min_scalar" ||
         op == "tl.atomic_or_scalar" || op == "tl.atomic_and_scalar" || op == "tl.atomic_xor_scalar" ||
         op == "tl.atomic_store";
}

Expr make_call(DataType dtype, std::string op, std::vector<Expr> args) {
  for (auto& a : args)
    if (!a.defined()) throw_error<TypeError>("call to '", op, "' with an undefined argument");
  if (op == "tl.printf") {
    // A printf format is checked against its arguments here, so no IR (frontend, textual IR, a pass)
    // can hold one that would make the C library read or write memory it was not given.
    const auto* fmt = args.empty() ? nullptr : args[0].as<StringImmNode>();
    if (!fmt) throw_error<TypeError>("T.printf: the format must be a string constant");
    std::vector<DataType> types;
    for (size_t i = 1; i < args.size(); ++i) types.push_back(args[i].dtype());
    check_printf_format(fmt->value, types);
  }
  return Expr(std::make_shared<CallNode>(dtype, std::move(op), std::move(args)));
}

Expr make_ramp(Expr base, Expr stride, int lanes) {
  if (lanes < 1) throw_error<TypeError>("ramp lanes must be positive");
  if (lanes == 1) return base;
  if (stride.dtype() != base.dtype()) stride = make_cast(base.dtype(), stride);
  return Expr(std::make_shared<RampNode>(std::move(base), std::move(stride), lanes));
}

Expr make_broadcast(Expr value, int lanes) {
  if (lanes == 1) return value;
  if (value.dtype().lanes != 1) throw_error<TypeError>("broadcast of a vector value");
  return Expr(std::make_shared<BroadcastNode>(std::move(value), lanes));
}

Expr ceildiv(Expr a, Expr b) {
  int64_t x, y;
  if (is_const_int(a, &x) && is_const_int(b, &y) && y > 0 && x >= 0) return make_int((x + y - 1) / y, a.dtype());
  return floordiv(a + b - 1, b);
}

std::string to_string(const Expr& e) { return print_expr(e); }

}  // namespace tl
