// The cuda code generator's expressions (codegen_impl.h): literals of every dtype, operators (with
// the narrowing C++'s integer promotion needs), casts, selects and buffer accesses (flat offsets,
// 64-bit where a tensor may exceed 2^31 elements). Calls: codegen_call.cc.
#include <cmath>
#include <cstdio>

#include "ir/error.h"
#include "target/c_source.h"
#include "target/cuda/codegen_impl.h"
#include "target/cuda/lower_context.h"

namespace tl {
namespace cuda_codegen {

namespace {

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
int log2i(int64_t v) {
  int k = 0;
  while ((int64_t(1) << k) < v) ++k;
  return k;
}

}  // namespace

// Flat element offset of an access.
std::string CudaCodegen::offset(const Buffer& b, const std::vector<Expr>& idx) {
  if (idx.size() == 1) return expr(idx[0]);
  if (idx.size() != b.ndim())
    throw_error<Error>("internal error: buffer '", b.name(), "' indexed with ", idx.size(), " indices");
  std::vector<Expr> strides = b.effective_strides();
  // 64-bit offsets unless the tensor provably has fewer than 2^31 elements.
  bool wide = false;
  int64_t total = 1;
  for (const Expr& e : b.shape()) {
    int64_t v = 0;
    if (!is_const_int(e, &v)) {
      wide = true;
      break;
    }
    total *= v;
    if (total >= (int64_t(1) << 31)) wide = true;
  }
  if (b.scope() != MemScope::kGlobal) wide = false;
  std::string out;
  for (size_t d = 0; d < idx.size(); ++d) {
    if (is_zero(idx[d])) continue;
    std::string term = wide ? "static_cast<long long>(" + expr(idx[d]) + ")" : "(" + expr(idx[d]) + ")";
    if (!is_one(strides[d])) term += " * " + (wide ? "static_cast<long long>(" + expr(strides[d]) + ")" : "(" + expr(strides[d]) + ")");
    out += (out.empty() ? "" : " + ") + term;
  }
  return out.empty() ? "0" : out;
}

std::string CudaCodegen::literal_float(double v, DataType t) {
  std::string tn = cuda_type_name(t);
  if (std::isnan(v)) return "static_cast<" + tn + ">(__int_as_float(0x7fc00000))";
  if (std::isinf(v))
    return std::string(v < 0 ? "(-" : "(") + "tl::numeric_limits<" + tn + ">::infinity())";
  char buf[64];
  if (t == DataType::Float(64)) {
    std::snprintf(buf, sizeof(buf), "%.17g", v);
    std::string s = buf;
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    return "(" + s + ")";
  }
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  s = "(" + s + "f)";
  if (t == DataType::Float32()) return s;
  return "static_cast<" + tn + ">" + s;
}

std::string CudaCodegen::literal_int(int64_t v, DataType t) {
  if (t.is_bool()) return v ? "true" : "false";
  if (t.bits == 64) {
    if (t.is_uint()) return std::to_string(static_cast<uint64_t>(v)) + "ull";
    if (v == INT64_MIN) return "(-9223372036854775807ll - 1)";
    return std::to_string(v) + "ll";
  }
  if (t.is_uint()) {
    std::string u = std::to_string(static_cast<uint64_t>(v) & ((uint64_t(1) << t.bits) - 1)) + "u";
    return t.bits == 32 ? u : "static_cast<" + cuda_type_name(t) + ">(" + u + ")";
  }
  if (t.bits == 32) return v == INT32_MIN ? "(-2147483647 - 1)" : (v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v));
  return "static_cast<" + cuda_type_name(t) + ">(" + std::to_string(v) + ")";
}

std::string CudaCodegen::narrow(DataType t, const std::string& s) {
  return promoted_in_cpp(t) ? "static_cast<" + cuda_type_name(t) + ">" + s : s;
}

std::string CudaCodegen::binary(const BinaryNode* b) {
  DataType t = b->a.dtype();
  std::string a = expr(b->a), c = expr(b->b);
  switch (b->op) {
    case BinOp::kAdd: return narrow(t, "(" + a + " + " + c + ")");
    case BinOp::kSub: return narrow(t, "(" + a + " - " + c + ")");
    case BinOp::kMul: return narrow(t, "(" + a + " * " + c + ")");
    case BinOp::kDiv: return narrow(t, "(" + a + " / " + c + ")");
    case BinOp::kMod:
      if (t.is_float()) return "tl::fmod(" + a + ", " + c + ")";
      return narrow(t, "(" + a + " % " + c + ")");
    case BinOp::kFloorDiv: {
      int64_t d = 0;
      if (!t.is_float() && is_const_int(b->b, &d) && is_pow2(d))
        return d == 1 ? a : narrow(t, "(" + a + " >> " + std::to_string(log2i(d)) + ")");
      if (t.is_float()) return "tl::floor(" + a + " / " + c + ")";
      return "tl::floordiv(" + a + ", " + c + ")";
    }
    case BinOp::kFloorMod: {
      int64_t d = 0;
      if (!t.is_float() && is_const_int(b->b, &d) && is_pow2(d))
        return d == 1 ? literal_int(0, t) : narrow(t, "(" + a + " & " + literal_int(d - 1, t) + ")");
      if (t.is_float()) return "(" + a + " - tl::floor(" + a + " / " + c + ") * " + c + ")";
      return "tl::floormod(" + a + ", " + c + ")";
    }
    case BinOp::kMin: return t.is_bool() ? "(" + a + " && " + c + ")" : "tl::min(" + a + ", " + c + ")";
    case BinOp::kMax: return t.is_bool() ? "(" + a + " || " + c + ")" : "tl::max(" + a + ", " + c + ")";
    case BinOp::kEQ: return "(" + a + " == " + c + ")";
    case BinOp::kNE: return "(" + a + " != " + c + ")";
    case BinOp::kLT: return "(" + a + " < " + c + ")";
    case BinOp::kLE: return "(" + a + " <= " + c + ")";
    case BinOp::kGT: return "(" + a + " > " + c + ")";
    case BinOp::kGE: return "(" + a + " >= " + c + ")";
    case BinOp::kAnd: return "(" + a + " && " + c + ")";
    case BinOp::kOr: return "(" + a + " || " + c + ")";
    case BinOp::kBitAnd: return narrow(t, "(" + a + " & " + c + ")");
    case BinOp::kBitOr: return narrow(t, "(" + a + " | " + c + ")");
    case BinOp::kBitXor: return narrow(t, "(" + a + " ^ " + c + ")");
    case BinOp::kShl: return narrow(t, "(" + a + " << " + c + ")");
    case BinOp::kShr: return narrow(t, "(" + a + " >> " + c + ")");
  }
  throw_error<Error>("internal error: unknown binary op");
}

std::string CudaCodegen::expr(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::kIntImm: return literal_int(e.as<IntImmNode>()->value, e.dtype());
    case ExprKind::kFloatImm: return literal_float(e.as<FloatImmNode>()->value, e.dtype());
    case ExprKind::kStringImm: return c_string_literal(e.as<StringImmNode>()->value);
    case ExprKind::kVar: return var_name(Var(std::static_pointer_cast<const VarNode>(e.node())));
    case ExprKind::kBinary: return binary(e.as<BinaryNode>());
    case ExprKind::kUnary: {
      const auto* u = e.as<UnaryNode>();
      const char* o = u->op == UnOp::kNeg ? "-" : u->op == UnOp::kNot ? "!" : "~";
      std::string r = std::string("(") + o + expr(u->a) + ")";
      return u->op == UnOp::kNot ? r : narrow(u->dtype, r);
    }
    case ExprKind::kSelect: {
      const auto* s = e.as<SelectNode>();
      return "(" + expr(s->cond) + " ? " + expr(s->true_value) + " : " + expr(s->false_value) + ")";
    }
    case ExprKind::kCast: {
      const auto* c = e.as<CastNode>();
      return "static_cast<" + cuda_type_name(c->dtype) + ">(" + expr(c->value) + ")";
    }
    case ExprKind::kBufferLoad: {
      const auto* l = e.as<BufferLoadNode>();
      return load_element(l->buffer, l->indices);
    }
    case ExprKind::kCall: return call(e.as<CallNode>());
    case ExprKind::kRamp:
    case ExprKind::kBroadcast:
      throw_error<NotImplemented>("not implemented: vector expressions in cuda code generation");
  }
  throw_error<Error>("internal error: unknown expression");
}

}  // namespace cuda_codegen
}  // namespace tl
