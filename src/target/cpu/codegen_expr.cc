// cpu codegen: C++ types, literals and expressions. Values of the 16/8-bit float types are C++
// floats (their storage types convert on load and round on store and on explicit casts), so all
// their arithmetic happens in float32.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "ir/error.h"
#include "ir/printer.h"
#include "ir/printf_format.h"
#include "target/cpu/codegen_cpu.h"
#include "tl/cpu/types.h"

namespace tl {
namespace cpu_codegen {

bool is_small_float(DataType t) { return t.is_float() && t.bits < 32; }

std::string storage_type(DataType t) {
  if (t.lanes != 1)
    throw_error<NotImplemented>("not implemented: vector type ", t.str(),
                                " on target cpu (the cpu target relies on the C++ compiler's vectorizer)");
  switch (t.code) {
    case DataType::kBool: return "bool";
    case DataType::kInt: return "int" + std::to_string(t.bits) + "_t";
    case DataType::kUInt: return "uint" + std::to_string(t.bits) + "_t";
    case DataType::kFloat:
      if (t.bits == 32) return "float";
      if (t.bits == 64) return "double";
      if (t.bits == 16) return "tl::cpu::half_t";
      break;
    case DataType::kBFloat: return "tl::cpu::bfloat16_t";
    case DataType::kFloat8E4M3: return "tl::cpu::float8_e4m3_t";
    case DataType::kFloat8E5M2: return "tl::cpu::float8_e5m2_t";
    case DataType::kFloat8E8M0: return "tl::cpu::float8_e8m0_t";
    case DataType::kFloat4E2M1: return "tl::cpu::float4_e2m1_t";
    case DataType::kHandle: return "void*";
    case DataType::kVoid: return "void";
  }
  throw_error<NotImplemented>("not implemented: dtype ", t.str(), " on target cpu");
}

std::string value_type(DataType t) { return is_small_float(t) ? "float" : storage_type(t); }

// float4_e2m1fn in global memory is packed two a byte (docs/FLOAT4.md): such a buffer is a
// tl::cpu::float4_e2m1_packed, whose [] reads and writes nibbles; every other buffer a T*.
bool packed_buffer(const Buffer& b) { return b.dtype().is_fp4() && b.scope() == MemScope::kGlobal; }
std::string buffer_pointer_type(const Buffer& b) {
  return packed_buffer(b) ? "tl::cpu::float4_e2m1_packed" : storage_type(b.dtype()) + "*";
}

std::string int_literal(DataType t, int64_t v) {
  if (t.is_bool()) return v ? "true" : "false";
  if (t == DataType::Int32()) {
    if (v == INT32_MIN) return "(-2147483647 - 1)";
    return v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
  }
  if (t.is_uint()) {
    uint64_t u = static_cast<uint64_t>(v);
    if (t.bits < 64) u &= (uint64_t(1) << t.bits) - 1;
    return storage_type(t) + "(" + std::to_string(u) + "ull)";
  }
  if (v == INT64_MIN) return storage_type(t) + "(-9223372036854775807LL - 1)";
  return storage_type(t) + "(" + std::to_string(v) + (t.bits == 64 ? "LL" : "") + ")";
}

std::string float_literal(DataType t, double v) {
  bool is_double = t.is_float() && t.bits == 64;
  if (!is_double) {
    // Round to the type's own precision first (a float16 constant 0.1 is 0.0999755859375).
    float f = static_cast<float>(v);
    switch (t.code) {
      case DataType::kFloat:
        if (t.bits == 16) f = static_cast<float>(tl::cpu::half_t(v));
        break;
      case DataType::kBFloat: f = static_cast<float>(tl::cpu::bfloat16_t(v)); break;
      case DataType::kFloat8E4M3: f = static_cast<float>(tl::cpu::float8_e4m3_t(v)); break;
      case DataType::kFloat8E5M2: f = static_cast<float>(tl::cpu::float8_e5m2_t(v)); break;
      case DataType::kFloat8E8M0: f = static_cast<float>(tl::cpu::float8_e8m0_t(v)); break;
      case DataType::kFloat4E2M1: f = static_cast<float>(tl::cpu::float4_e2m1_t(v)); break;
      default: break;
    }
    v = f;
  }
  const char* suffix = is_double ? "" : "f";
  if (std::isnan(v)) return is_double ? "__builtin_nan(\"\")" : "__builtin_nanf(\"\")";
  if (std::isinf(v)) {
    std::string inf = is_double ? "__builtin_inf()" : "__builtin_inff()";
    return v > 0 ? inf : "(-" + inf + ")";
  }
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (is_double ? std::strtod(buf, nullptr) == v : std::strtof(buf, nullptr) == static_cast<float>(v)) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  s += suffix;
  return v < 0 || (v == 0 && std::signbit(v)) ? "(" + s + ")" : s;
}

// ---------------------------------------------------------------------------------------------

std::string CodeGenCPU::expr_paren(const Expr& e) {
  std::string s = expr(e);
  switch (e.kind()) {
    case ExprKind::kVar:
    case ExprKind::kBufferLoad:
    case ExprKind::kCall:
    case ExprKind::kStringImm: return s;
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
      return s;  // negative literals are already parenthesized
    default: return "(" + s + ")";
  }
}

std::string CodeGenCPU::as_value(const Expr& e, DataType t) { return e.dtype() == t ? expr(e) : cast(t, e); }

namespace {
// Bit pattern of a constant in a 16/8-bit float type.
uint32_t small_float_bits(DataType t, double v) {
  switch (t.code) {
    case DataType::kBFloat: return tl::cpu::bfloat16_t(v).bits;
    case DataType::kFloat8E4M3: return tl::cpu::float8_e4m3_t(v).bits;
    case DataType::kFloat8E5M2: return tl::cpu::float8_e5m2_t(v).bits;
    case DataType::kFloat8E8M0: return tl::cpu::float8_e8m0_t(v).bits;
    case DataType::kFloat4E2M1: return tl::cpu::float4_e2m1_t(v).bits;
    default: return tl::cpu::half_t(v).bits;
  }
}
}  // namespace

std::string CodeGenCPU::as_storage(const Expr& e, DataType t) {
  if (!is_small_float(t) || e.dtype() != t) return expr(e);
  // Work on the raw bits (an integer select vectorizes into masked loads; a struct one does not).
  std::function<std::string(const Expr&)> bits = [&](const Expr& x) -> std::string {
    if (auto* ld = x.as<BufferLoadNode>(); ld && ld->buffer.dtype() == t) return element_ref(ld->buffer, ld->indices) + ".bits";
    if (auto* sel = x.as<SelectNode>(); sel && sel->dtype == t)
      return expr_paren(sel->cond) + " ? " + bits(sel->true_value) + " : " + bits(sel->false_value);
    if (auto* f = x.as<FloatImmNode>(); f && f->dtype == t) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "0x%xu", small_float_bits(t, f->value));
      return buf;
    }
    return storage_type(t) + "(" + expr(x) + ").bits";
  };
  if (e.as<BufferLoadNode>() || e.as<SelectNode>())
    return storage_type(t) + "::from_bits(" + bits(e) + ")";
  /* A cast to t stored as t: one conversion to the storage type. cast() would round to t and return
   * the value in float (round_to), which the store then converts again: the same bits (rounding is
   * idempotent, a quieted NaN stays as it is), twice the work in a P = cast(S) loop of attention. */
  if (auto* c = e.as<CastNode>(); c && c->value.dtype().lanes == 1 && c->value.dtype() != t) {
    const DataType from = c->value.dtype();
    if (from.is_bool() || from.is_float() || from.is_integer()) {
      const std::string s = expr(c->value);
      const std::string arg = from.is_float() ? s : from.is_bool() ? "float(" + s + ")" : "double(" + s + ")";
      return storage_type(t) + "(" + arg + ")";
    }
  }
  return storage_type(t) + "(" + expr(e) + ")";
}

std::string CodeGenCPU::expr(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::kIntImm: return int_literal(e.dtype(), e.as<IntImmNode>()->value);
    case ExprKind::kFloatImm: return float_literal(e.dtype(), e.as<FloatImmNode>()->value);
    case ExprKind::kStringImm: return c_string_literal(e.as<StringImmNode>()->value);
    case ExprKind::kVar: return name(Var(std::static_pointer_cast<const VarNode>(e.node())));
    case ExprKind::kBinary: return binary(e.as<BinaryNode>());
    case ExprKind::kUnary: {
      auto* n = e.as<UnaryNode>();
      std::string s = (n->op == UnOp::kNeg ? "-" : n->op == UnOp::kNot ? "!" : "~") + expr_paren(n->a);
      if (n->op != UnOp::kNot && n->dtype.is_integer() && n->dtype.bits < 32)
        return storage_type(n->dtype) + "(" + s + ")";
      return s;
    }
    case ExprKind::kSelect: {
      auto* n = e.as<SelectNode>();
      return expr_paren(n->cond) + " ? " + expr_paren(n->true_value) + " : " + expr_paren(n->false_value);
    }
    case ExprKind::kCast: return cast(e.dtype(), e.as<CastNode>()->value);
    case ExprKind::kBufferLoad: return load(e.as<BufferLoadNode>());
    case ExprKind::kCall: return call(e.as<CallNode>());
    case ExprKind::kRamp:
    case ExprKind::kBroadcast:
      throw_error<NotImplemented>("not implemented: vector expression ", print_expr(e),
                                  " on target cpu (the cpu target relies on the C++ compiler's vectorizer)");
  }
  throw_error<Error>("internal error: unknown expression kind in cpu codegen");
}

std::string CodeGenCPU::binary(const BinaryNode* n) {
  DataType t = n->dtype;
  DataType operand = n->a.dtype();
  std::string a = expr_paren(n->a), b = expr_paren(n->b);
  auto narrow = [&](const std::string& s) {
    return (t.is_integer() && t.bits < 32) ? storage_type(t) + "(" + s + ")" : s;
  };
  auto infix = [&](const char* op) { return a + " " + op + " " + b; };
  switch (n->op) {
    case BinOp::kAdd: return narrow(infix("+"));
    case BinOp::kSub: return narrow(infix("-"));
    case BinOp::kMul: return narrow(infix("*"));
    case BinOp::kDiv:
    case BinOp::kMod: {
      bool is_div = n->op == BinOp::kDiv;
      if (operand.is_float())
        return is_div ? infix("/")
                      : std::string(value_type(operand) == "double" ? "__builtin_fmod(" : "__builtin_fmodf(") +
                            expr(n->a) + ", " + expr(n->b) + ")";
      // A divisor that may be 0 (or -1 with a MIN dividend) goes through the checked helper
      // (types.h): x86 would trap and end the process.
      int64_t d;
      if (is_const_int(n->b, &d) && d != 0 && d != -1) return narrow(infix(is_div ? "/" : "%"));
      return std::string("tl::cpu::") + (is_div ? "tdiv<" : "tmod<") + storage_type(t) + ">(" + expr(n->a) + ", " +
             expr(n->b) + ")";
    }
    case BinOp::kFloorDiv:
    case BinOp::kFloorMod:
      return std::string("tl::cpu::") + (n->op == BinOp::kFloorDiv ? "floordiv<" : "floormod<") +
             storage_type(t) + ">(" + expr(n->a) + ", " + expr(n->b) + ")";
    case BinOp::kMin:
    case BinOp::kMax: {
      bool is_min = n->op == BinOp::kMin;
      if (t.is_bool()) return infix(is_min ? "&&" : "||");
      if (t.is_float()) return std::string("tl::cpu::") + (is_min ? "fmin(" : "fmax(") + expr(n->a) + ", " + expr(n->b) + ")";
      return std::string("tl::cpu::") + (is_min ? "min<" : "max<") + storage_type(t) + ">(" + expr(n->a) + ", " +
             expr(n->b) + ")";
    }
    case BinOp::kEQ: return infix("==");
    case BinOp::kNE: return infix("!=");
    case BinOp::kLT: return infix("<");
    case BinOp::kLE: return infix("<=");
    case BinOp::kGT: return infix(">");
    case BinOp::kGE: return infix(">=");
    case BinOp::kAnd: return infix("&&");
    case BinOp::kOr: return infix("||");
    case BinOp::kBitAnd: return narrow(infix("&"));
    case BinOp::kBitOr: return narrow(infix("|"));
    case BinOp::kBitXor: return narrow(infix("^"));
    case BinOp::kShl: return narrow(infix("<<"));
    case BinOp::kShr: return narrow(infix(">>"));
  }
  throw_error<Error>("internal error: unknown binary operator in cpu codegen");
}

std::string CodeGenCPU::cast(DataType to, const Expr& value) {
  DataType from = value.dtype();
  std::string s = expr(value);
  if (from == to) return s;
  if (to.lanes != 1 || from.lanes != 1) storage_type(to.lanes != 1 ? to : from);  // throws NotImplemented
  if (to.is_bool()) return "(" + expr_paren(value) + " != 0)";
  if (is_small_float(to)) {
    std::string arg = from.is_float() ? s : from.is_bool() ? "float(" + s + ")" : "double(" + s + ")";
    return "tl::cpu::round_to<" + storage_type(to) + ">(" + arg + ")";
  }
  if (to.is_float()) {
    if (to.bits == 32 && is_small_float(from)) return s;  // already a float value
    return value_type(to) + "(" + s + ")";
  }
  if (to.is_integer()) {
    if (from.is_float()) return "tl::cpu::saturating_cast<" + storage_type(to) + ">(" + s + ")";
    return storage_type(to) + "(" + s + ")";
  }
  if (to.is_handle()) return "(void*)(" + s + ")";
  throw_error<NotImplemented>("not implemented: cast from ", from.str(), " to ", to.str(), " on target cpu");
}

std::string CodeGenCPU::offset(const Buffer& b, const std::vector<Expr>& indices) {
  if (indices.size() == 1) return expr(indices[0]);
  return expr(b.offset_of(indices));
}

std::string CodeGenCPU::element_ref(const Buffer& b, const std::vector<Expr>& indices) {
  return name(b) + "[" + offset(b, indices) + "]";
}

std::string CodeGenCPU::load(const BufferLoadNode* n) {
  std::string ref = element_ref(n->buffer, n->indices);
  return is_small_float(n->buffer.dtype()) ? "float(" + ref + ")" : ref;
}

namespace {

const BufferLoadNode* load_arg(const CallNode* n, size_t i) {
  if (i >= n->args.size() || !n->args[i].as<BufferLoadNode>())
    throw_error<TypeError>("builtin '", n->op, "' expects a buffer element as argument ", i);
  return n->args[i].as<BufferLoadNode>();
}

const std::string& string_arg(const CallNode* n, size_t i) {
  if (i >= n->args.size() || !n->args[i].as<StringImmNode>())
    throw_error<TypeError>("builtin '", n->op, "' expects a string as argument ", i);
  return n->args[i].as<StringImmNode>()->value;
}


// printf argument for a value (default argument promotions made explicit and exact).
std::pair<std::string, std::string> printf_arg(DataType t, const std::string& s) {
  if (t.is_float()) return {"%.9g", "double(" + s + ")"};
  if (t.is_handle()) return {"%p", "(void*)(" + s + ")"};
  if (t.is_uint() && t.bits == 64) return {"%llu", "(unsigned long long)(" + s + ")"};
  if (t.is_uint() && t.bits == 32) return {"%u", "(unsigned)(" + s + ")"};
  if (t.bits == 64) return {"%lld", "(long long)(" + s + ")"};
  return {"%d", "int(" + s + ")"};
}

}  // namespace

std::string CodeGenCPU::printf_call(const CallNode* n) {
  std::vector<DataType> types;
  for (size_t i = 1; i < n->args.size(); ++i) types.push_back(n->args[i].dtype());
  // The format is data checked against the arguments (ir/printf_format.h), never the user's text as is.
  PrintfFormat pf = check_printf_format(string_arg(n, 0), types);
  std::string out = "tl::cpu::print(api, " + c_string_literal(pf.format);
  for (size_t i = 1; i < n->args.size(); ++i) {
    std::string v = expr(n->args[i]);
    switch (pf.args[i - 1]) {
      case PrintfArg::kSigned: out += ", (long long)(" + v + ")"; break;
      case PrintfArg::kUnsigned: out += ", (unsigned long long)(" + v + ")"; break;
      case PrintfArg::kChar: out += ", int(" + v + ")"; break;
      case PrintfArg::kFloat: out += ", double(" + v + ")"; break;
      case PrintfArg::kPointer: out += ", (const void*)(" + v + ")"; break;
    }
  }
  return out + ")";
}

std::string CodeGenCPU::math_call(const CallNode* n) {
  DataType t = n->dtype;
  const std::string& op = n->op;
  std::vector<std::string> args;
  for (auto& a : n->args) args.push_back(as_value(a, t));
  auto join = [&]() {
    std::string s;
    for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
    return s;
  };
  if (op == "abs" && !t.is_float()) return "tl::cpu::iabs<" + storage_type(t) + ">(" + join() + ")";
  if (!t.is_float())
    throw_error<TypeError>("math function '", op, "' needs a floating-point type, got ", t.str());
  bool dbl = value_type(t) == "double";
  std::string f = dbl ? "" : "f";
  std::string base = op;
  if (op == "__exp") base = "exp";
  else if (op == "__log") base = "log";
  else if (op == "__sin") base = "sin";
  else if (op == "__cos") base = "cos";
  else if (op == "abs") base = "fabs";
  if (base == "rsqrt") return std::string(dbl ? "(1.0 / __builtin_sqrt(" : "(1.0f / __builtin_sqrtf(") + join() + "))";
  if (base == "sigmoid") return "tl::cpu::sigmoid(" + join() + ")";
  // float exp / exp2 inline (include/tl/cpu/math.h) so that loops calling them vectorize.
  if (!dbl && (base == "exp" || base == "exp2")) return "tl::cpu::" + base + "(" + join() + ")";
  static const std::set<std::string> builtins = {"exp", "exp2", "log", "log2", "sqrt", "tanh", "sin", "cos",
                                                 "floor", "ceil", "round", "trunc", "fabs", "pow"};
  if (!builtins.count(base)) throw_error<NotImplemented>("not implemented: math function '", op, "' on target cpu");
  size_t want = base == "pow" ? 2 : 1;
  if (args.size() != want) throw_error<TypeError>("math function '", op, "' expects ", want, " argument(s)");
  return "__builtin_" + base + f + "(" + join() + ")";
}

std::string CodeGenCPU::dist_call(const CallNode* n) {
  uses_dist_ = true;
  const std::string& op = n->op;
  auto a = [&](size_t i) { return expr(n->args.at(i)); };
  auto what = [&]() { return c_string_literal(string_arg(n, n->args.size() - 1)); };
  if (op == "tl.dist.copy") {
    if (n->args.size() != 9) throw_error<TypeError>("tl.dist.copy expects 9 arguments");
    return "tl::cpu::dist::copy(api, (void*)" + a(0) + ", (const void*)" + a(1) + ", " + a(2) + ", " + a(3) + ", " +
           a(4) + ", " + a(5) + ", " + a(6) + ", " + a(7) + ", " + what() + ")";
  }
  if (op == "tl.dist.barrier") {
    if (n->args.size() != 2) throw_error<TypeError>("tl.dist.barrier expects 2 arguments");
    return "tl::cpu::dist::barrier(api, " + a(0) + ", " + what() + ")";
  }
  if (op == "tl.dist.signal") {
    if (n->args.size() != 5) throw_error<TypeError>("tl.dist.signal expects 5 arguments");
    return "tl::cpu::dist::signal(api, " + a(0) + ", " + a(1) + ", " + a(2) + ", " + a(3) + ", " + what() + ")";
  }
  if (op == "tl.dist.wait") {
    if (n->args.size() != 4) throw_error<TypeError>("tl.dist.wait expects 4 arguments");
    return "tl::cpu::dist::wait(api, " + a(0) + ", " + a(1) + ", " + a(2) + ", " + what() + ")";
  }
  throw_error<NotImplemented>("not implemented: builtin '", op, "' on target cpu");
}

std::string CodeGenCPU::call(const CallNode* n) {
  static const std::set<std::string> math = {"exp",   "exp2", "log",   "log2",  "sqrt",  "rsqrt", "tanh",
                                             "sigmoid", "abs", "pow",  "floor", "ceil",  "sin",   "cos",
                                             "round", "trunc", "__exp", "__log", "__sin", "__cos"};
  const std::string& op = n->op;
  if (math.count(op)) return math_call(n);
  if (op == "if_then_else") {
    if (n->args.size() != 3) throw_error<TypeError>("if_then_else expects 3 arguments");
    return expr_paren(n->args[0]) + " ? " + "(" + as_value(n->args[1], n->dtype) + ") : (" +
           as_value(n->args[2], n->dtype) + ")";
  }
  if (op == "tl.printf") return printf_call(n);
  if (op == "tl.print_scalar") {
    if (n->args.size() != 2) throw_error<TypeError>("tl.print_scalar expects (msg, value)");
    auto [conv, arg] = printf_arg(n->args[1].dtype(), expr(n->args[1]));
    std::string fmt = "msg='" + escape_printf_percent(string_arg(n, 0)) + "' dtype=" + n->args[1].dtype().str() +
                      " value=" + conv + "\n";
    return "tl::cpu::print(api, " + c_string_literal(fmt) + ", " + arg + ")";
  }
  if (is_atomic_write_builtin(op) && op != "tl.atomic_store") {  // tl.atomic_<add|max|min|or|and|xor>_scalar
    const BufferLoadNode* dst = load_arg(n, 0);
    if (n->args.size() != 2) throw_error<TypeError>(op, " expects (dst, value)");
    DataType t = dst->buffer.dtype();
    std::string fn = op.substr(3, op.size() - 3 - 7);  // atomic_add / atomic_max / ... / atomic_xor
    bool bitwise = fn == "atomic_or" || fn == "atomic_and" || fn == "atomic_xor";
    if (bitwise && !t.is_integer())
      throw_error<TypeError>("T.", fn, " needs an integer element, got ", t.str());
    std::string tmpl = t.is_integer() ? "<" + storage_type(t) + ">" : "";
    return "tl::cpu::" + fn + tmpl + "(&" + element_ref(dst->buffer, dst->indices) + ", " +
           as_value(n->args[1], t) + ")";
  }
  if (op == "tl.atomic_load" || op == "tl.atomic_store") {
    const BufferLoadNode* ref = load_arg(n, 0);
    bool store = op == "tl.atomic_store";
    if (n->args.size() != (store ? 3u : 2u)) throw_error<TypeError>(op, store ? " expects (dst, value, order)" : " expects (src, order)");
    int64_t order = get_const_int(n->args.back(), "memory order");
    std::string head = "tl::cpu::" + std::string(store ? "atomic_store<" : "atomic_load<") + std::to_string(order) +
                       ">(&" + element_ref(ref->buffer, ref->indices);
    DataType t = ref->buffer.dtype();
    if (!store) return is_small_float(t) ? "static_cast<float>(" + head + "))" : head + ")";
    return head + ", static_cast<" + storage_type(ref->buffer.dtype()) + ">(" + expr(n->args[1]) + "))";
  }
  if (op == "tl.dist.rank" || op == "tl.dist.world") {
    uses_dist_ = true;
    return std::string("tl::cpu::dist::") + (op == "tl.dist.rank" ? "rank()" : "world()");
  }
  if (op.rfind("tl.dist.", 0) == 0)
    throw_error<TypeError>(op, " is a statement; it cannot be used inside an expression");
  if (op == "tl.address_of") {
    const BufferLoadNode* ld = load_arg(n, 0);
    return "(" + name(ld->buffer) + " + " + offset(ld->buffer, ld->indices) + ")";
  }
  if (op == "tl.cpu.gemm") {
    if (n->args.size() != 12) throw_error<TypeError>("tl.cpu.gemm expects 12 arguments");
    int64_t m = get_const_int(n->args[0], "gemm M"), nn = get_const_int(n->args[1], "gemm N"),
            k = get_const_int(n->args[2], "gemm K"), ta = get_const_int(n->args[3], "transpose_A"),
            tb = get_const_int(n->args[4], "transpose_B");
    // B a tensor parameter the function never writes: its pack may be reused within a launch.
    bool reuse_b = false;
    if (auto* addr = n->args[7].as<CallNode>())
      if (addr->op == "tl.address_of" && addr->args.size() == 1)
        if (auto* ld = addr->args[0].as<BufferLoadNode>())
          if (in_block_ && reuse_b_.count(ld->buffer.get())) {
            reuse_b = true;
            reuse_b_used_.insert(ld->buffer.get());
          }
    return "tl::cpu::gemm<" + std::to_string(m) + ", " + std::to_string(nn) + ", " + std::to_string(k) + ", " +
           (ta ? "true" : "false") + ", " + (tb ? "true" : "false") + ">(" +
           expr(n->args[5]) + ", " +
           expr(n->args[6]) + ", " + expr(n->args[7]) + ", " + expr(n->args[8]) + ", " + expr(n->args[9]) + ", " +
           expr(n->args[10]) + ", " + as_value(n->args[11], DataType::Bool()) +
           (reuse_b && in_block_ ? ", pack_launch" : "") + ")";
  }
  // src/target/cpu/stream_global_stores.cc / convert_bf16_rows.cc: (dst, src, n) run copies
  if (op == "tl.cpu.copy_stream" || op == "tl.cpu.convert_bf16") {
    if (n->args.size() != 3) throw_error<TypeError>(op, " expects (dst, src, n)");
    return "tl::cpu::" + op.substr(7) + "(" + expr(n->args[0]) + ", " + expr(n->args[1]) + ", " +
           as_value(n->args[2], DataType::Int64()) + ")";
  }
  if (op == "tl.cpu.store_fence") {
    if (!n->args.empty()) throw_error<TypeError>("tl.cpu.store_fence takes no arguments");
    return "tl::cpu::store_fence()";
  }
  if (op == "tl.cpu.reduce_row") {
    static const std::map<std::string, std::string> kinds = {{"sum", "kReduceSum"},       {"max", "kReduceMax"},
                                                             {"min", "kReduceMin"},       {"abssum", "kReduceAbsSum"},
                                                             {"absmax", "kReduceAbsMax"}};
    if (n->args.size() != 4) throw_error<TypeError>("tl.cpu.reduce_row expects (kind, row, n, init)");
    auto it = kinds.find(string_arg(n, 0));
    if (it == kinds.end()) throw_error<ValueError>("tl.cpu.reduce_row: unknown reduction '", string_arg(n, 0), "'");
    return "tl::cpu::reduce_row<tl::cpu::" + it->second + ">(" + expr(n->args[1]) + ", " +
           as_value(n->args[2], DataType::Int64()) + ", " + as_value(n->args[3], n->dtype) + ")";
  }
  if (op == "tl.cpu.reduce_rows") {  // src/target/cpu/lower_tile_ops_cpu.cc
    static const std::map<std::string, std::string> kinds = {{"sum", "kReduceSum"},       {"max", "kReduceMax"},
                                                             {"min", "kReduceMin"},       {"abssum", "kReduceAbsSum"},
                                                             {"absmax", "kReduceAbsMax"}};
    if (n->args.size() != 7) throw_error<TypeError>("tl.cpu.reduce_rows expects (kind, src, ld, n, rows, dst, clear)");
    auto it = kinds.find(string_arg(n, 0));
    if (it == kinds.end()) throw_error<ValueError>("tl.cpu.reduce_rows: unknown reduction '", string_arg(n, 0), "'");
    return "tl::cpu::reduce_rows<tl::cpu::" + it->second + ">(" + expr(n->args[1]) + ", " +
           as_value(n->args[2], DataType::Int64()) + ", " + as_value(n->args[3], DataType::Int64()) + ", " +
           as_value(n->args[4], DataType::Int64()) + ", " + expr(n->args[5]) + ", " +
           as_value(n->args[6], DataType::Bool()) + ")";
  }
  if (op == "tl.cpu.cumsum_row") {
    if (n->args.size() != 4) throw_error<TypeError>("tl.cpu.cumsum_row expects (src, dst, n, reverse)");
    return "tl::cpu::cumsum_row(" + expr(n->args[0]) + ", " + expr(n->args[1]) + ", " +
           as_value(n->args[2], DataType::Int64()) + ", " + as_value(n->args[3], DataType::Bool()) + ")";
  }
  if (op == "tl.cast_rounding") {
    static const std::map<std::string, std::string> modes = {
        {"CAST_NONE", "kCastNone"},   {"CAST_RINT", "kCastRint"},   {"CAST_FLOOR", "kCastFloor"},
        {"CAST_CEIL", "kCastCeil"},   {"CAST_ROUND", "kCastRound"}, {"CAST_TRUNC", "kCastTrunc"},
        {"CAST_ODD", "kCastOdd"}};
    auto it = modes.find(string_arg(n, 1));
    if (it == modes.end()) throw_error<ValueError>("unknown cast mode '", string_arg(n, 1), "'");
    return "tl::cpu::cast_mode<" + storage_type(n->dtype) + ", tl::cpu::" + it->second + ">(" + expr(n->args[0]) +
           ")";
  }
  if (op.rfind("ieee_", 0) == 0) {
    const std::string& mode = string_arg(n, n->args.size() - 1);
    if (mode != "rn")
      throw_error<NotImplemented>("not implemented: T.", op, " with rounding_mode '", mode,
                                  "' on target cpu (only 'rn', round to nearest even)");
    DataType t = n->dtype;
    std::vector<std::string> a;
    for (size_t i = 0; i + 1 < n->args.size(); ++i) a.push_back(as_value(n->args[i], t));
    std::string f = value_type(t) == "double" ? "" : "f";
    if (op == "ieee_add" && a.size() == 2) return "tl::cpu::ieee_add(" + a[0] + ", " + a[1] + ")";
    if (op == "ieee_mul" && a.size() == 2) return "tl::cpu::ieee_mul(" + a[0] + ", " + a[1] + ")";
    if (op == "ieee_fdiv" && a.size() == 2) return "tl::cpu::ieee_div(" + a[0] + ", " + a[1] + ")";
    if (op == "ieee_fmaf" && a.size() == 3) return "__builtin_fma" + f + "(" + a[0] + ", " + a[1] + ", " + a[2] + ")";
    if (op == "ieee_fsqrt" && a.size() == 1) return "tl::cpu::ieee_sqrt(" + a[0] + ")";
    throw_error<TypeError>("builtin '", op, "' called with ", n->args.size(), " arguments");
  }
  if (op == "tl.sync_threads" || op == "cuda.cp_async_commit" || op == "cuda.cp_async_wait") return "(void)0";
  if (op == "tl.cluster_sync")
    throw_error<NotImplemented>("not implemented: T.cluster_sync on target cpu (the blocks of a cluster do not run "
                                "at the same time there); synchronize through separate kernels, or use target cuda");
  if (op == "tl.device_assert")
    throw_error<TypeError>("T.device_assert is a statement; it cannot be used inside an expression");
  if (op.rfind("ascend.", 0) == 0)
    throw_error<NotImplemented>("not implemented: T.", op.substr(7), " (Ascend synchronisation) on target cpu");
  throw_error<NotImplemented>("not implemented: builtin '", op, "' on target cpu");
}

}  // namespace cpu_codegen
}  // namespace tl
