#include "target/cuda/codegen.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "ir/functor.h"
#include "target/c_source.h"
#include "target/cuda/lower_context.h"

namespace tl {

namespace {

const std::set<std::string>& reserved_names() {
  static const std::set<std::string> r = {
      "auto", "bool", "break", "case", "char", "const", "continue", "default", "delete", "do", "double", "else",
      "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "new", "operator", "private",
      "public", "register", "return", "short", "signed", "sizeof", "static", "struct", "switch", "template", "this",
      "typedef", "union", "unsigned", "void", "volatile", "while", "class", "namespace", "true", "false", "nullptr",
      "tl", "std", "min", "max", "abs", "exp", "log", "printf", "half", "tl_smem", "threadIdx", "blockIdx",
      "blockDim", "gridDim", "warpSize", "asm", "main", "signed", "friend", "virtual", "mutable", "explicit"};
  return r;
}

class NameTable {
 public:
  std::string get(const void* key, const std::string& hint) {
    auto it = names_.find(key);
    if (it != names_.end()) return it->second;
    std::string base;
    for (char c : hint) base += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "v_" + base;
    if (base.rfind("__", 0) == 0) base = "v" + base;
    std::string name = base;
    for (int i = 1; used_.count(name) || reserved_names().count(name); ++i) name = base + "_" + std::to_string(i);
    used_.insert(name);
    names_[key] = name;
    return name;
  }
  void reserve(const std::string& n) { used_.insert(n); }

 private:
  std::map<const void*, std::string> names_;
  std::set<std::string> used_;
};

std::string param_kind(DataType t) {
  switch (t.code) {
    case DataType::kBool: return "bool";
    case DataType::kInt: return "i" + std::to_string(t.bits);
    case DataType::kUInt: return "u" + std::to_string(t.bits);
    case DataType::kFloat: return "f" + std::to_string(t.bits);
    case DataType::kBFloat: return "bf16";
    case DataType::kFloat8E4M3: return "f8e4m3";
    case DataType::kFloat8E5M2: return "f8e5m2";
    default: break;
  }
  throw_error<NotImplemented>("not implemented: a kernel parameter of type ", t.str(), " on target cuda");
}

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
int log2i(int64_t v) {
  int k = 0;
  while ((int64_t(1) << k) < v) ++k;
  return k;
}

const std::map<std::string, std::string>& math_calls() {
  static const std::map<std::string, std::string> m = {
      {"exp", "tl::exp"},       {"exp2", "tl::exp2"},       {"log", "tl::log"},         {"log2", "tl::log2"},
      {"log10", "tl::log10"},   {"sqrt", "tl::sqrt"},       {"rsqrt", "tl::rsqrt"},     {"tanh", "tl::tanh"},
      {"sigmoid", "tl::sigmoid"}, {"abs", "tl::abs"},       {"pow", "tl::pow"},         {"floor", "tl::floor"},
      {"ceil", "tl::ceil"},     {"round", "tl::round"},     {"trunc", "tl::trunc"},     {"sin", "tl::sin"},
      {"cos", "tl::cos"},       {"tan", "tl::tan"},         {"erf", "tl::erf"},         {"fmod", "tl::fmod"},
      {"__exp", "tl::fast_exp"}, {"__log", "tl::fast_log"}, {"__sin", "tl::fast_sin"},  {"__cos", "tl::fast_cos"},
      {"relu", "tl::relu"},     {"silu", "tl::silu"},       {"reciprocal", "tl::reciprocal"}};
  return m;
}

class CudaCodegen {
 public:
  std::string run(const PrimFunc& f, CudaLaunchInfo* info) {
    info_ = info;
    names_.reserve("tl_smem");
    // Find the kernel; everything else must be bindings around it.
    const KernelLaunchNode* kernel = nullptr;
    std::vector<const LetStmtNode*> outer_lets;
    Stmt s = f.body();
    while (true) {
      if (const auto* k = s.as<KernelLaunchNode>()) {
        kernel = k;
        break;
      }
      if (const auto* l = s.as<LetStmtNode>()) {
        outer_lets.push_back(l);
        s = l->body;
        continue;
      }
      if (const auto* seq = s.as<SeqStmtNode>()) {
        std::vector<Stmt> kernels;
        for (const Stmt& x : seq->seq)
          if (!is_nop(x)) kernels.push_back(x);
        if (kernels.size() == 1) {
          s = kernels[0];
          continue;
        }
        throw_error<NotImplemented>("not implemented: ", kernels.size(), " statements at the top of '", f.name(),
                                    "' on target cuda; put everything inside one T.Kernel");
      }
      throw_error<NotImplemented>("not implemented: code outside T.Kernel in '", f.name(), "' on target cuda");
    }
    info->kernel_name = names_.get(&info_, f.name() + "_kernel");
    // Parameters.
    std::ostringstream sig;
    std::vector<std::string> plist;
    std::map<const VarNode*, std::string> grid_names;
    for (size_t i = 0; i < f.params().size(); ++i) {
      const Param& p = f.params()[i];
      if (p.is_buffer()) {
        std::string n = names_.get(p.buffer.get(), p.buffer.name());
        plist.push_back(cuda_type_name(p.buffer.dtype()) + "* __restrict__ " + n);
        info->params.push_back({"ptr", n, "param:" + std::to_string(i)});
      } else {
        std::string n = names_.get(p.var.get(), p.var.name());
        plist.push_back(cuda_type_name(p.var.dtype()) + " " + n);
        info->params.push_back({param_kind(p.var.dtype()), n, "param:" + std::to_string(i)});
        grid_names[p.var.get()] = "param_" + std::to_string(i);
      }
    }
    std::vector<Var> dyn = f.dynamic_vars();
    for (size_t i = 0; i < dyn.size(); ++i) {
      if (dyn_is_param_.count(dyn[i].get())) continue;  // also a scalar parameter: passed once
      std::string n = names_.get(dyn[i].get(), dyn[i].name());
      plist.push_back(cuda_type_name(dyn[i].dtype()) + " " + n);
      info->params.push_back({param_kind(dyn[i].dtype()), n, "dyn:" + std::to_string(i)});
      grid_names[dyn[i].get()] = "dyn_" + std::to_string(i);
    }
    // Launch geometry, over variables named after their argument slots.
    std::map<Var, Expr, VarLess> rename;
    for (auto& [v, n] : grid_names) {
      Var orig = find_var(f, v);
      rename[orig] = Var(n, orig.dtype());
    }
    info->grid.clear();
    for (const Expr& g : kernel->grid) info->grid.push_back(to_string(substitute(g, rename)));
    while (info->grid.size() < 3) info->grid.push_back("1");
    int64_t threads = 1;
    for (size_t i = 0; i < kernel->threads.size() && i < 3; ++i) {
      int64_t v = get_const_int(kernel->threads[i], "T.Kernel threads");
      info->block[i] = v;
      threads *= v;
    }
    info->dyn_smem_bytes = attr_int(kernel->attrs, "dyn_smem_bytes", 0);

    os_ << "// Generated by tilelang-cpp for target cuda. Kernel '" << f.name() << "'.\n";
    os_ << "#include \"tl/cuda/all.h\"\n\n";
    os_ << "extern \"C\" __global__ void __launch_bounds__(" << threads << ") " << info->kernel_name << "(";
    for (size_t i = 0; i < plist.size(); ++i) os_ << (i ? ", " : "") << plist[i];
    os_ << ") {\n";
    indent_ = 1;
    if (info->dyn_smem_bytes > 0) line("extern __shared__ __align__(1024) unsigned char tl_smem[];");
    emit_kernel_vars(*kernel);
    for (const LetStmtNode* l : outer_lets)
      line("const " + cuda_type_name(l->var.dtype()) + " " + names_.get(l->var.get(), l->var.name()) + " = " +
           expr(l->value) + ";");
    stmt(kernel->body);
    os_ << "}\n";
    info->has_device_assert = has_assert_;
    return os_.str();
  }

 private:
  Var find_var(const PrimFunc& f, const VarNode* v) {
    for (const Param& p : f.params())
      if (!p.is_buffer() && p.var.get() == v) return p.var;
    for (const Var& d : f.dynamic_vars())
      if (d.get() == v) return d;
    throw_error<Error>("internal error: unknown launch variable");
  }

 public:
  void set_params(const PrimFunc& f) {
    for (const Param& p : f.params())
      if (!p.is_buffer()) dyn_is_param_.insert(p.var.get());
  }

 private:
  void line(const std::string& s) { os_ << std::string(static_cast<size_t>(indent_) * 2, ' ') << s << "\n"; }

  void emit_kernel_vars(const KernelLaunchNode& k) {
    static const char* dims[] = {"x", "y", "z"};
    std::string order = attr_str(k.attrs, "use_swizzle_order", "row");
    int64_t panel = attr_int(k.attrs, "use_swizzle_panel", 0);
    bool swizzle = panel > 0 && k.block_vars.size() >= 2;
    for (size_t i = 0; i < k.block_vars.size() && i < 3; ++i) {
      std::string n = names_.get(k.block_vars[i].get(), k.block_vars[i].name());
      if (swizzle && i < 2) continue;
      line("const int " + n + " = static_cast<int>(blockIdx." + dims[i] + ");");
    }
    if (swizzle) {
      std::string bx = names_.get(k.block_vars[0].get(), k.block_vars[0].name());
      std::string by = names_.get(k.block_vars[1].get(), k.block_vars[1].name());
      line("int " + bx + ", " + by + ";");
      line(std::string("tl::rasterize2d<") + (order == "row" ? "true" : "false") + ">(" + std::to_string(panel) +
           ", &" + bx + ", &" + by + ");");
    }
    for (size_t i = 0; i < k.thread_vars.size() && i < 3; ++i) {
      std::string n = names_.get(k.thread_vars[i].get(), k.thread_vars[i].name());
      line("const int " + n + " = static_cast<int>(threadIdx." + dims[i] + ");");
    }
  }

  std::string var_name(const Var& v) { return names_.get(v.get(), v.name()); }
  std::string buf_name(const Buffer& b) { return names_.get(b.get(), b.name()); }

  // Flat element offset of an access.
  std::string offset(const Buffer& b, const std::vector<Expr>& idx) {
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

  std::string access(const Buffer& b, const std::vector<Expr>& idx) { return buf_name(b) + "[" + offset(b, idx) + "]"; }

  std::string literal_float(double v, DataType t) {
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

  std::string literal_int(int64_t v, DataType t) {
    if (t.is_bool()) return v ? "true" : "false";
    if (t.bits == 64) {
      if (t.is_uint()) return std::to_string(static_cast<uint64_t>(v)) + "ull";
      if (v == INT64_MIN) return "(-9223372036854775807ll - 1)";
      return std::to_string(v) + "ll";
    }
    if (t.is_uint()) return std::to_string(static_cast<uint64_t>(v) & ((uint64_t(1) << t.bits) - 1)) + "u";
    if (t.bits == 32) return v == INT32_MIN ? "(-2147483647 - 1)" : (v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v));
    return "static_cast<" + cuda_type_name(t) + ">(" + std::to_string(v) + ")";
  }

  std::string binary(const BinaryNode* b) {
    DataType t = b->a.dtype();
    std::string a = expr(b->a), c = expr(b->b);
    switch (b->op) {
      case BinOp::kAdd: return "(" + a + " + " + c + ")";
      case BinOp::kSub: return "(" + a + " - " + c + ")";
      case BinOp::kMul: return "(" + a + " * " + c + ")";
      case BinOp::kDiv: return "(" + a + " / " + c + ")";
      case BinOp::kMod:
        if (t.is_float()) return "tl::fmod(" + a + ", " + c + ")";
        return "(" + a + " % " + c + ")";
      case BinOp::kFloorDiv: {
        int64_t d = 0;
        if (!t.is_float() && is_const_int(b->b, &d) && is_pow2(d))
          return d == 1 ? a : "(" + a + " >> " + std::to_string(log2i(d)) + ")";
        if (t.is_float()) return "tl::floor(" + a + " / " + c + ")";
        return "tl::floordiv(" + a + ", " + c + ")";
      }
      case BinOp::kFloorMod: {
        int64_t d = 0;
        if (!t.is_float() && is_const_int(b->b, &d) && is_pow2(d))
          return d == 1 ? literal_int(0, t) : "(" + a + " & " + literal_int(d - 1, t) + ")";
        if (t.is_float()) return "(" + a + " - tl::floor(" + a + " / " + c + ") * " + c + ")";
        return "tl::floormod(" + a + ", " + c + ")";
      }
      case BinOp::kMin: return "tl::min(" + a + ", " + c + ")";
      case BinOp::kMax: return "tl::max(" + a + ", " + c + ")";
      case BinOp::kEQ: return "(" + a + " == " + c + ")";
      case BinOp::kNE: return "(" + a + " != " + c + ")";
      case BinOp::kLT: return "(" + a + " < " + c + ")";
      case BinOp::kLE: return "(" + a + " <= " + c + ")";
      case BinOp::kGT: return "(" + a + " > " + c + ")";
      case BinOp::kGE: return "(" + a + " >= " + c + ")";
      case BinOp::kAnd: return "(" + a + " && " + c + ")";
      case BinOp::kOr: return "(" + a + " || " + c + ")";
      case BinOp::kBitAnd: return "(" + a + " & " + c + ")";
      case BinOp::kBitOr: return "(" + a + " | " + c + ")";
      case BinOp::kBitXor: return "(" + a + " ^ " + c + ")";
      case BinOp::kShl: return "(" + a + " << " + c + ")";
      case BinOp::kShr: return "(" + a + " >> " + c + ")";
    }
    throw_error<Error>("internal error: unknown binary op");
  }

  // `&buf[index]` operand of a builtin, and its buffer.
  std::pair<std::string, Buffer> address(const Expr& e) {
    const auto* c = e.as<CallNode>();
    if (!c || c->op != "cuda.address_of" || c->args.empty())
      throw_error<Error>("internal error: expected cuda.address_of, got ", to_string(e));
    const auto* l = c->args[0].as<BufferLoadNode>();
    TL_ICHECK(l, "address_of without a load");
    return {"(&" + access(l->buffer, l->indices) + ")", l->buffer};
  }

  std::string call(const CallNode* c) {
    const std::string& op = c->op;
    auto args_from = [&](size_t first) {
      std::string s;
      for (size_t i = first; i < c->args.size(); ++i) s += (i > first ? ", " : "") + expr(c->args[i]);
      return s;
    };
    if (auto it = math_calls().find(op); it != math_calls().end()) return it->second + "(" + args_from(0) + ")";
    if (op == "cuda.address_of") {
      const auto* l = c->args.empty() ? nullptr : c->args[0].as<BufferLoadNode>();
      TL_ICHECK(l, "address_of without a load");
      return "(&" + access(l->buffer, l->indices) + ")";
    }
    if (op == "cuda.call" || op == "cuda.call_sync") {
      const auto* callee = c->args.empty() ? nullptr : c->args[0].as<StringImmNode>();
      TL_ICHECK(callee, "cuda.call without a callee");
      return callee->value + "(" + args_from(1) + ")";
    }
    if (op == "cuda.copy_vec" || op == "cuda.copy_vec_zfill") {
      auto [dst, db] = address(c->args[0]);
      auto [src, sb] = address(c->args[1]);
      int64_t bytes = get_const_int(c->args[2], "copy size");
      int64_t n = bytes / db.dtype().element_bytes();
      std::string t = cuda_type_name(db.dtype());
      if (op == "cuda.copy_vec") return "tl::copy_vec<" + t + ", " + std::to_string(n) + ">(" + dst + ", " + src + ")";
      return "tl::copy_sync_zfill<" + t + ", " + std::to_string(n) + ">(" + dst + ", " + src + ", " + expr(c->args[3]) +
             ")";
    }
    if (op == "cuda.copy_cast") {
      auto [dst, db] = address(c->args[0]);
      auto [src, sb] = address(c->args[1]);
      return "tl::copy_cast<" + std::to_string(get_const_int(c->args[2], "copy length")) + ">(" + dst + ", " + src + ")";
    }
    if (op == "cuda.cp_async") {
      auto [dst, db] = address(c->args[0]);
      auto [src, sb] = address(c->args[1]);
      std::string bytes = std::to_string(get_const_int(c->args[2], "copy size"));
      if (c->args.size() < 4 || is_one(c->args[3])) return "tl::cp_async<" + bytes + ">(" + dst + ", " + src + ")";
      std::string valid = expr(c->args[3]);
      return "tl::cp_async_zfill<" + bytes + ">(" + dst + ", (" + valid + ") ? static_cast<const void*>(" + src +
             ") : static_cast<const void*>(" + buf_name(sb) + "), " + valid + ")";
    }
    if (op == "cuda.cp_async_commit") return "tl::cp_async_commit()";
    if (op == "cuda.cp_async_wait") return "tl::cp_async_wait<" + std::to_string(get_const_int(c->args[0], "wait")) + ">()";
    if (op == "tl.sync_threads") return "__syncthreads()";
    if (op == "tl.printf") {
      std::string s = expr(c->args[0]);
      for (size_t i = 1; i < c->args.size(); ++i) {
        DataType t = c->args[i].dtype();
        std::string v = expr(c->args[i]);
        if (t.is_float()) v = "static_cast<double>(static_cast<float>(" + v + "))";
        else if (t.is_int() && t.bits < 32) v = "static_cast<int>(" + v + ")";
        else if (t.is_bool()) v = "static_cast<int>(" + v + ")";
        s += ", " + v;
      }
      return "printf(" + s + ")";
    }
    if (op == "tl.print_scalar") return "tl::print_value(" + args_from(0) + ")";
    if (op == "tl.device_assert") {
      has_assert_ = true;
      std::string msg = c->args.size() > 1 ? expr(c->args[1]) : "\"\"";
      std::string file = cur_span_.file ? *cur_span_.file : "";
      auto slash = file.rfind('/');
      if (slash != std::string::npos) file = file.substr(slash + 1);
      return "tl::device_assert(" + expr(c->args[0]) + ", " + c_string_literal(file) + ", " + std::to_string(cur_span_.line) +
             ", " + msg + ")";
    }
    if (op == "tl.atomic_add_scalar" || op == "tl.atomic_max_scalar" || op == "tl.atomic_min_scalar") {
      const auto* l = c->args[0].as<BufferLoadNode>();
      TL_ICHECK(l, op + " needs a load");
      return "tl::" + op.substr(3, op.size() - 3 - 7) + "(&" + access(l->buffer, l->indices) + ", static_cast<" +
             cuda_type_name(l->buffer.dtype()) + ">(" + expr(c->args[1]) + "))";
    }
    if (op == "tl.atomic_load" || op == "tl.atomic_store") {
      const auto* l = c->args[0].as<BufferLoadNode>();
      TL_ICHECK(l, op + " needs a load");
      std::string order = std::to_string(get_const_int(c->args.back(), "memory order"));
      if (op == "tl.atomic_load") return "tl::atomic_load<" + order + ">(&" + access(l->buffer, l->indices) + ")";
      return "tl::atomic_store<" + order + ">(&" + access(l->buffer, l->indices) + ", static_cast<" +
             cuda_type_name(l->buffer.dtype()) + ">(" + expr(c->args[1]) + "))";
    }
    if (op == "ieee_add" || op == "ieee_mul" || op == "ieee_fmaf" || op == "ieee_fdiv" || op == "ieee_fsqrt") {
      const auto* mode = c->args.back().as<StringImmNode>();
      static const std::map<std::string, int> modes = {{"rn", 0}, {"rz", 1}, {"ru", 2}, {"rd", 3}};
      auto it = mode ? modes.find(mode->value) : modes.end();
      if (it == modes.end()) throw_error<ValueError>("T.", op, ": rounding_mode must be one of rn, rz, ru, rd");
      std::string a;
      for (size_t i = 0; i + 1 < c->args.size(); ++i)
        a += (i ? ", " : "") + std::string("static_cast<float>(") + expr(c->args[i]) + ")";
      return "tl::" + op + "<" + std::to_string(it->second) + ">(" + a + ")";
    }
    if (op.rfind("ascend.", 0) == 0)
      throw_error<ValueError>("T.", op.substr(7), " is an Ascend synchronization primitive; it has no meaning on target cuda");
    throw_error<NotImplemented>("not implemented: call '", op, "' on target cuda");
  }

  std::string expr(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::kIntImm: return literal_int(e.as<IntImmNode>()->value, e.dtype());
      case ExprKind::kFloatImm: return literal_float(e.as<FloatImmNode>()->value, e.dtype());
      case ExprKind::kStringImm: return c_string_literal(e.as<StringImmNode>()->value);
      case ExprKind::kVar: return var_name(Var(std::static_pointer_cast<const VarNode>(e.node())));
      case ExprKind::kBinary: return binary(e.as<BinaryNode>());
      case ExprKind::kUnary: {
        const auto* u = e.as<UnaryNode>();
        const char* o = u->op == UnOp::kNeg ? "-" : u->op == UnOp::kNot ? "!" : "~";
        return std::string("(") + o + expr(u->a) + ")";
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
        return access(l->buffer, l->indices);
      }
      case ExprKind::kCall: return call(e.as<CallNode>());
      case ExprKind::kRamp:
      case ExprKind::kBroadcast:
        throw_error<NotImplemented>("not implemented: vector expressions in cuda code generation");
    }
    throw_error<Error>("internal error: unknown expression");
  }

  void stmt(const Stmt& s) {
    if (!s.defined()) return;
    Span saved = cur_span_;
    if (s->span.defined()) cur_span_ = s->span;
    switch (s.kind()) {
      case StmtKind::kSeq:
        for (const Stmt& x : s.as<SeqStmtNode>()->seq) stmt(x);
        break;
      case StmtKind::kEvaluate: {
        const Expr& v = s.as<EvaluateNode>()->value;
        if (!is_const_int(v)) line(expr(v) + ";");
        break;
      }
      case StmtKind::kLet: {
        const auto* l = s.as<LetStmtNode>();
        line("const " + cuda_type_name(l->var.dtype()) + " " + var_name(l->var) + " = " + expr(l->value) + ";");
        stmt(l->body);
        break;
      }
      case StmtKind::kStore: {
        const auto* st = s.as<BufferStoreNode>();
        line(access(st->buffer, st->indices) + " = " + expr(st->value) + ";");
        break;
      }
      case StmtKind::kFor: {
        const auto* f = s.as<ForNode>();
        std::string v = var_name(f->var);
        std::string t = cuda_type_name(f->var.dtype());
        if (f->for_kind == ForKind::kUnrolled || f->for_kind == ForKind::kVectorized) line("#pragma unroll");
        std::string end = is_zero(f->min) ? expr(f->extent) : "(" + expr(f->min) + " + " + expr(f->extent) + ")";
        line("for (" + t + " " + v + " = " + expr(f->min) + "; " + v + " < " + end + "; ++" + v + ") {");
        ++indent_;
        stmt(f->body);
        --indent_;
        line("}");
        break;
      }
      case StmtKind::kIf: {
        const auto* i = s.as<IfThenElseNode>();
        line("if (" + expr(i->cond) + ") {");
        ++indent_;
        stmt(i->then_case);
        --indent_;
        if (i->else_case.defined() && !is_nop(i->else_case)) {
          line("} else {");
          ++indent_;
          stmt(i->else_case);
          --indent_;
        }
        line("}");
        break;
      }
      case StmtKind::kAllocate: {
        const auto* a = s.as<AllocateNode>();
        const Buffer& b = a->buffer;
        std::string t = cuda_type_name(b.dtype());
        int64_t n = 1;
        for (const Expr& e : b.shape()) n *= get_const_int(e, "buffer size");
        if (b.scope() == MemScope::kShared) {
          auto it = smem_offset_.find(b.get());
          if (it == smem_offset_.end())
            throw_error<Error>("internal error: shared buffer '", b.name(), "' was not placed by plan_shared_memory");
          line(t + "* __restrict__ " + buf_name(b) + " = reinterpret_cast<" + t + "*>(tl_smem + " +
               std::to_string(it->second) + ");");
        } else if (b.scope() == MemScope::kLocal || b.scope() == MemScope::kLocalVar) {
          int64_t bytes = n * b.dtype().element_bytes();
          line(std::string(bytes >= 16 ? "alignas(16) " : bytes >= 8 ? "alignas(8) " : "") + t + " " + buf_name(b) +
               "[" + std::to_string(n) + "];");
        } else {
          throw_error<NotImplemented>("not implemented: a ", scope_name(b.scope()), " buffer ('", b.name(),
                                      "') inside a cuda kernel");
        }
        stmt(a->body);
        break;
      }
      case StmtKind::kAttr: {
        const auto* at = s.as<AttrStmtNode>();
        if (at->key == "smem_offset")
          if (const auto* a = at->body.as<AllocateNode>()) smem_offset_[a->buffer.get()] = at->value.as_int();
        stmt(at->body);
        break;
      }
      case StmtKind::kLoopControl:
        line(s.as<LoopControlNode>()->is_break ? "break;" : "continue;");
        break;
      case StmtKind::kKernel:
        throw_error<NotImplemented>("not implemented: nested T.Kernel");
      case StmtKind::kTileOp:
        throw_error<Error>("internal error: tile op '", s.as<TileOpNode>()->op, "' reached cuda code generation");
    }
    cur_span_ = saved;
  }

  CudaLaunchInfo* info_ = nullptr;
  std::ostringstream os_;
  int indent_ = 0;
  NameTable names_;
  std::map<const BufferNode*, int64_t> smem_offset_;
  std::set<const VarNode*> dyn_is_param_;
  Span cur_span_;
  bool has_assert_ = false;
};

}  // namespace

std::string codegen_cuda(const PrimFunc& lowered, CudaLaunchInfo* info) {
  CudaCodegen g;
  g.set_params(lowered);
  *info = CudaLaunchInfo{};
  return g.run(lowered, info);
}

// ---------------------------------------------------------------------------------------------

std::string CudaLaunchInfo::serialize() const {
  std::ostringstream os;
  os << "kernel " << kernel_name << "\n";
  for (const std::string& g : grid) os << "grid " << g << "\n";
  os << "block " << block[0] << " " << block[1] << " " << block[2] << "\n";
  os << "smem " << dyn_smem_bytes << "\n";
  os << "assert " << (has_device_assert ? 1 : 0) << "\n";
  for (const Param& p : params) os << "param " << p.kind << " " << p.name << " " << p.source << "\n";
  return os.str();
}

CudaLaunchInfo CudaLaunchInfo::parse(const std::string& text) {
  CudaLaunchInfo info;
  info.grid.clear();
  std::istringstream is(text);
  for (std::string ln; std::getline(is, ln);) {
    std::istringstream ls(ln);
    std::string key;
    ls >> key;
    if (key == "kernel") {
      ls >> info.kernel_name;
    } else if (key == "grid") {
      std::string rest;
      std::getline(ls, rest);
      info.grid.push_back(rest.substr(rest.find_first_not_of(' ')));
    } else if (key == "block") {
      ls >> info.block[0] >> info.block[1] >> info.block[2];
    } else if (key == "smem") {
      ls >> info.dyn_smem_bytes;
    } else if (key == "assert") {
      int a = 0;
      ls >> a;
      info.has_device_assert = a != 0;
    } else if (key == "param") {
      Param p;
      ls >> p.kind >> p.name >> p.source;
      info.params.push_back(p);
    } else if (!key.empty()) {
      throw_error<ValueError>("corrupt cuda launch description (line '", ln, "')");
    }
  }
  if (info.kernel_name.empty() || info.grid.size() != 3)
    throw_error<ValueError>("corrupt cuda launch description: missing kernel name or grid");
  return info;
}

}  // namespace tl
