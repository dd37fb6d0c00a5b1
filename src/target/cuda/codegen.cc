#include "target/cuda/codegen.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/printf_format.h"
#include "target/c_source.h"
#include "target/cuda/cuda_tma.h"
#include "target/cuda/lower_context.h"

namespace tl {

namespace {

// Loops marked unrolled are left to NVRTC ("#pragma unroll"). A loop whose body indexes a
// per-thread register array (local / fragment / var) with its variable must be unrolled fully, or
// the array leaves the registers. Any other loop is unrolled fully only up to kFullUnrollTrips
// iterations: a single-thread copy of 2^18 elements, fully unrolled, took NVRTC minutes.
constexpr int64_t kFullUnrollTrips = 64;

bool indexes_registers(const Stmt& body, const VarNode* v) {
  struct Finder : IRVisitor {
    const VarNode* v = nullptr;
    bool hit = false;
    static bool in_registers(const Buffer& b) {
      return b.scope() == MemScope::kLocal || b.scope() == MemScope::kFragment || b.scope() == MemScope::kLocalVar;
    }
    bool uses(const std::vector<Expr>& indices) const {
      bool u = false;
      for (const Expr& e : indices)
        for_each_subexpr(e, [&](const Expr& x) { u |= x.as<VarNode>() == v; });
      return u;
    }
    void visit_load(const BufferLoadNode* n) override {
      if (in_registers(n->buffer) && uses(n->indices)) hit = true;
      IRVisitor::visit_load(n);
    }
    void visit_store(const BufferStoreNode* n) override {
      if (in_registers(n->buffer) && uses(n->indices)) hit = true;
      IRVisitor::visit_store(n);
    }
  } f;
  f.v = v;
  f.visit(body);
  return f.hit;
}

// The unroll pragma for a loop NVRTC unrolls ("" for a serial loop).
std::string unroll_pragma(const ForNode* f) {
  if (f->for_kind != ForKind::kUnrolled && f->for_kind != ForKind::kVectorized) return "";
  // T.unroll(..., unroll_factor=n): the factor the user asked for.
  if (int64_t factor = attr_int(f->annotations, "unroll_factor", 0); factor > 0)
    return "#pragma unroll " + std::to_string(factor);
  int64_t trips = 0;
  if (!is_const_int(f->extent, &trips) || trips <= kFullUnrollTrips || indexes_registers(f->body, f->var.get()))
    return "#pragma unroll";
  return "#pragma unroll 4";
}

// The names emitted code may not give a user's variable: C++'s (target/c_source.h, shared with the
// cpu code generator), CUDA's built-in variables, types and vector types, and tilelang's runtime.
bool reserved_name(const std::string& n) {
  static const std::set<std::string> ours = [] {
    std::set<std::string> r = {"tl", "half", "half2", "nv_bfloat16", "nv_bfloat162", "tl_smem", "threadIdx",
                               "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "cute", "cutlass",
                               "bfloat16_t", "half_t", "float_e4m3_t", "float_e5m2_t"};
    for (const char* t : {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "longlong",
                          "ulonglong", "float", "double"})
      for (int k = 1; k <= 4; ++k) r.insert(t + std::to_string(k));
    return r;
  }();
  return ours.count(n) || cxx_reserved_words().count(n);
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
    for (int i = 1; used_.count(name) || reserved_name(name); ++i) name = base + "_" + std::to_string(i);
    used_.insert(name);
    names_[key] = name;
    return name;
  }
  void reserve(const std::string& n) { used_.insert(n); }
  // A new C++ name for `key` (one not used before), replacing its current one until restore().
  // Lowering duplicates statements (one copy of a T.Parallel body per register, pipeline
  // prologue/body/epilogue, unswitched masks), so one IR variable may be bound by several
  // LetStmts; each binding gets its own name, and uses inside its body refer to it.
  std::string rebind(const void* key, const std::string& hint) {
    auto it = names_.find(key);
    std::string old = it == names_.end() ? std::string() : it->second;
    saved_.push_back({key, old});
    if (it != names_.end()) names_.erase(it);
    return get(key, hint);
  }
  void restore() {
    auto [key, old] = saved_.back();
    saved_.pop_back();
    if (old.empty()) names_.erase(key);
    else names_[key] = old;
  }

 private:
  std::map<const void*, std::string> names_;
  std::set<std::string> used_;
  std::vector<std::pair<const void*, std::string>> saved_;
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
    // The kernels in order; everything else must be bindings around them.
    std::vector<std::pair<const KernelLaunchNode*, std::vector<const LetStmtNode*>>> kernels;
    collect_kernels(f, f.body(), {}, &kernels);
    if (kernels.empty()) throw_error<NotImplemented>("not implemented: no T.Kernel in '", f.name(), "' on target cuda");
    os_ << "// Generated by tilelang-cpp for target cuda. Kernel '" << c_comment_text(f.name()) << "'.\n";
    // Block-wide barriers of the consumer warpgroups of a warp-specialized kernel (tl::sync_block):
    // one consumer count for the whole source.
    int64_t consumer_threads = 0;
    bool fp8 = false, dist = false;
    for (const auto& [k, lets] : kernels) {
      fp8 |= uses_fp8_wgmma(k->body);
      dist |= uses_distributed(k->body);
      if (attr_int(k->attrs, "cuda.producer_threads", 0) == 0) continue;
      int64_t c = 1;
      for (size_t i = 0; i < k->threads.size() && i < 3; ++i) c *= get_const_int(k->threads[i], "T.Kernel threads");
      if (consumer_threads != 0 && consumer_threads != c)
        throw_error<NotImplemented>("not implemented: warp-specialized T.Kernel blocks with different thread counts (",
                                    consumer_threads, " and ", c, ") in one function on target cuda; set "
                                    "TL_DISABLE_WARP_SPECIALIZED or split the function");
      consumer_threads = c;
    }
    if (consumer_threads) os_ << "#define TL_CONSUMER_THREADS " << consumer_threads << "\n";
    os_ << "#include \"tl/cuda/all.h\"\n";
    if (fp8) os_ << "#include \"tl/cuda/wgmma_ops_f8.h\"\n";
    if (dist) os_ << "#include \"tl/cuda/dist.h\"\n";
    info->distributed = dist;
    // Several T.Kernel blocks (TileLang's split + combine kernels): one __global__ each, launched
    // one after the other on the same stream with the same arguments.
    for (size_t k = 0; k < kernels.size(); ++k) {
      CudaLaunchInfo* ki = info;
      if (k > 0) {
        info->then.emplace_back();
        ki = &info->then.back();
      }
      emit_kernel(f, *kernels[k].first, kernels[k].second, ki,
                  f.name() + "_kernel" + (k == 0 ? std::string() : "_" + std::to_string(k)));
    }
    return os_.str();
  }

 private:
  void collect_kernels(const PrimFunc& f, const Stmt& s, std::vector<const LetStmtNode*> lets,
                       std::vector<std::pair<const KernelLaunchNode*, std::vector<const LetStmtNode*>>>* out) {
    if (const auto* k = s.as<KernelLaunchNode>()) {
      out->emplace_back(k, lets);
    } else if (const auto* l = s.as<LetStmtNode>()) {
      lets.push_back(l);
      collect_kernels(f, l->body, lets, out);
    } else if (const auto* seq = s.as<SeqStmtNode>()) {
      for (const Stmt& x : seq->seq)
        if (!is_nop(x)) collect_kernels(f, x, lets, out);
    } else if (!is_nop(s)) {
      throw_error<NotImplemented>("not implemented: code outside T.Kernel in '", f.name(), "' on target cuda");
    }
  }

  void emit_kernel(const PrimFunc& f, const KernelLaunchNode& kernel_node, const std::vector<const LetStmtNode*>& outer_lets,
                   CudaLaunchInfo* info, const std::string& name) {
    const KernelLaunchNode* kernel = &kernel_node;
    has_assert_ = false;
    info->kernel_name = names_.get(kernel, name);
    const int64_t producers = attr_int(kernel->attrs, "cuda.producer_threads", 0);
    tmaps_.clear();
    collect_tensor_maps(f, kernel->body);
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
    // Lets outside the kernel that the grid uses are substituted (they are over parameters too).
    std::vector<Expr> grid = kernel->grid;
    for (auto it = outer_lets.rbegin(); it != outer_lets.rend(); ++it)
      for (Expr& g : grid) g = substitute(g, std::map<Var, Expr, VarLess>{{(*it)->var, (*it)->value}});
    // Tensor maps (TMA): one `const __grid_constant__` descriptor per (tensor, swizzle, box), encoded
    // by the launcher from the tensor's pointer, shape and strides (over the argument slots).
    for (size_t i = 0; i < tmaps_.size(); ++i) {
      TensorMapUse& u = tmaps_[i];
      std::string n = "tl_tmap_" + std::to_string(i);
      names_.reserve(n);
      u.name = n;
      plist.push_back("const __grid_constant__ tl::TmaDescriptor " + n);
      info->params.push_back({"tmap", n, "tmap:" + std::to_string(i)});
      CudaLaunchInfo::TensorMap m;
      m.name = n;
      m.param = u.param;
      m.dtype = tma_data_type(u.tensor.dtype());
      m.swizzle = u.swizzle;
      m.box = u.box;
      const size_t rank = u.tensor.ndim();
      std::vector<Expr> strides = u.tensor.effective_strides();
      const int64_t eb = u.tensor.dtype().element_bytes();
      for (size_t d = 0; d < rank; ++d) {
        m.dims.push_back(to_string(substitute(u.tensor.shape()[rank - 1 - d], rename)));
        if (d > 0)
          m.strides.push_back(to_string(substitute(strides[rank - 1 - d] * make_int(eb, strides[rank - 1 - d].dtype()),
                                                   rename)));
      }
      info->tensor_maps.push_back(m);
    }
    info->grid.clear();
    for (size_t i = 0; i < grid.size(); ++i) {
      // CUDA's grid limits: 2^31 - 1 blocks in x, 65535 in y and z (dynamic extents are checked at
      // the launch).
      int64_t v = 0, limit = i == 0 ? 2147483647LL : 65535LL;
      if (is_const_int(grid[i], &v) && v > limit)
        throw_error<ResourceError>(kernel->span.prefix(), "T.Kernel grid dimension ", i, " has ", v,
                                   " blocks; CUDA allows at most ", limit, " in ", i == 0 ? "x" : i == 1 ? "y" : "z",
                                   ": make blocks larger, or put the long dimension first");
      info->grid.push_back(to_string(substitute(grid[i], rename)));
    }
    while (info->grid.size() < 3) info->grid.push_back("1");
    int64_t threads = 1;
    for (size_t i = 0; i < kernel->threads.size() && i < 3; ++i) {
      int64_t v = get_const_int(kernel->threads[i], "T.Kernel threads");
      info->block[i] = v;
      threads *= v;
    }
    info->block[0] += producers;  // warp-specialized: the producer warpgroup comes after the consumers
    threads += producers;
    info->dyn_smem_bytes = attr_int(kernel->attrs, "dyn_smem_bytes", 0);
    info->persistent = attr_bool(kernel->attrs, "cuda.persistent", false);

    // One block per SM for warp-specialized kernels: the register cap that setmaxnreg redistributes.
    // Thread-block clusters (T.Kernel cluster_dims): a compile-time cluster shape, which a plain
    // launch honours.
    const int64_t cluster = attr_int(kernel->attrs, "cluster_dims", 1);
    os_ << "\nextern \"C\" __global__ void __launch_bounds__(" << threads << (producers ? ", 1" : "") << ") "
        << (cluster > 1 ? "__cluster_dims__(" + std::to_string(cluster) + ", 1, 1) " : std::string())
        << info->kernel_name << "(";
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
  void line(const std::string& s) {
    check_single_line(s);
    os_ << std::string(static_cast<size_t>(indent_) * 2, ' ') << s << "\n";
  }

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
      const int64_t cluster = attr_int(k.attrs, "cluster_dims", 1);
      line(std::string("tl::rasterize2d<") + (order == "row" ? "true" : "false") + ">(" + std::to_string(panel) +
           ", &" + bx + ", &" + by + (cluster > 1 ? ", " + std::to_string(cluster) : std::string()) + ");");
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
    if (t.is_uint()) {
      std::string u = std::to_string(static_cast<uint64_t>(v) & ((uint64_t(1) << t.bits) - 1)) + "u";
      return t.bits == 32 ? u : "static_cast<" + cuda_type_name(t) + ">(" + u + ")";
    }
    if (t.bits == 32) return v == INT32_MIN ? "(-2147483647 - 1)" : (v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v));
    return "static_cast<" + cuda_type_name(t) + ">(" + std::to_string(v) + ")";
  }

  // C++ promotes 8/16-bit integer operands to int (and fp8 ones to float): the result is brought
  // back to the IR type, so every emitted expression has its IR node's C++ type (overloads such as
  // tl::max(int8_t, int8_t) then resolve) and wraps where the IR wraps.
  static bool promoted_in_cpp(DataType t) { return (t.is_integer() && t.bits < 32) || t.is_fp8() || t.is_bool(); }
  std::string narrow(DataType t, const std::string& s) {
    return promoted_in_cpp(t) ? "static_cast<" + cuda_type_name(t) + ">" + s : s;
  }

  std::string binary(const BinaryNode* b) {
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

  // tl.dist.* (include/tl/cuda/dist.h): executed by every thread of the block.
  std::string dist_call(const CallNode* c) {
    const std::string& op = c->op;
    auto a = [&](size_t i) { return expr(c->args.at(i)); };
    auto what = [&]() {
      const auto* s = c->args.empty() ? nullptr : c->args.back().as<StringImmNode>();
      TL_ICHECK(s, "tl.dist builtin without its source text");
      return c_string_literal(s->value);
    };
    // In the consumer warpgroups of a warp-specialized kernel the op synchronizes only them
    // (warp_specialize never gives one to the producer role).
    const std::string tmpl = in_consumer_ ? "<tl::dist::kConsumers>" : "";
    if (op == "tl.dist.rank") return "tl::dist::rank()";
    if (op == "tl.dist.world") return "tl::dist::world()";
    if (op == "tl.dist.copy" && c->args.size() == 9)
      return "tl::dist::copy" + tmpl + "((void*)" + a(0) + ", (const void*)" + a(1) + ", " + a(2) + ", " + a(3) + ", " + a(4) +
             ", " + a(5) + ", " + a(6) + ", " + a(7) + ", " + what() + ")";
    if (op == "tl.dist.barrier" && c->args.size() == 2) return "tl::dist::barrier" + tmpl + "(" + a(0) + ", " + what() + ")";
    if (op == "tl.dist.signal" && c->args.size() == 5)
      return "tl::dist::signal" + tmpl + "(" + a(0) + ", " + a(1) + ", " + a(2) + ", " + a(3) + ", " + what() + ")";
    if (op == "tl.dist.wait" && c->args.size() == 4)
      return "tl::dist::wait" + tmpl + "(" + a(0) + ", " + a(1) + ", " + a(2) + ", " + what() + ")";
    throw_error<Error>("internal error: malformed builtin ", op, " with ", c->args.size(), " arguments");
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
    if (op == "tl.address_of") {
      const auto* l = c->args.empty() ? nullptr : c->args[0].as<BufferLoadNode>();
      TL_ICHECK(l, "address_of without a load");
      return "(&" + access(l->buffer, l->indices) + ")";
    }
    if (op.rfind("tl.dist.", 0) == 0) return dist_call(c);
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
    if (op == "cuda.store_exchange") {
      auto [dst, db] = address(c->args[0]);
      auto [src, sb] = address(c->args[1]);
      return "tl::store_exchange<" + std::to_string(get_const_int(c->args[2], "lane group")) + ", " +
             std::to_string(get_const_int(c->args[3], "group length")) + ", " +
             std::to_string(get_const_int(c->args[4], "register stride")) + ">(" + dst + ", " + src + ", " +
             expr(c->args[5]) + ")";
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
    if (op == "tl.sync_threads") return in_consumer_ ? "tl::sync_block()" : "__syncthreads()";
    if (op == "cuda.sync_all") return "__syncthreads()";
    if (op == "cuda.num_ctas") return "static_cast<int>(gridDim.x)";
    if (op == "cuda.named_barrier_sync") return "tl::named_barrier_sync(" + args_from(0) + ")";
    if (op == "cuda.named_barrier_arrive") return "tl::named_barrier_arrive(" + args_from(0) + ")";
    if (op == "cuda.mbarrier_init")
      return "tl::mbarrier_init(" + address(c->args[0]).first + ", " + expr(c->args[1]) + ")";
    if (op == "cuda.fence_barrier_init") return "tl::fence_barrier_init()";
    if (op == "cuda.mbarrier_wait")
      return "tl::mbarrier_wait(" + address(c->args[0]).first + ", " + expr(c->args[1]) + ")";
    if (op == "cuda.mbarrier_arrive") return "tl::mbarrier_arrive(" + address(c->args[0]).first + ")";
    if (op == "cuda.mbarrier_arrive_warp") return "tl::mbarrier_arrive_warp(" + address(c->args[0]).first + ")";
    if (op == "cuda.mbarrier_expect_tx")
      return "tl::mbarrier_arrive_expect_tx(" + address(c->args[0]).first + ", " + expr(c->args[1]) + ")";
    if (op == "cuda.setmaxnreg_inc" || op == "cuda.setmaxnreg_dec")
      return "tl::setmaxnreg_" + op.substr(op.size() - 3) + "<" + std::to_string(get_const_int(c->args[0], "registers")) +
             ">()";
    if (op == "cuda.tma_load") {
      const TensorMapUse& u = tmaps_[tmap_index(c)];
      const size_t rank = static_cast<size_t>(get_const_int(c->args[4], "rank"));
      const bool multicast = c->args.size() == 6 + 2 * rank;  // the CTA mask comes last
      std::string s = std::string(multicast ? "tl::tma_load_multicast(" : "tl::tma_load(") + u.name + ", " +
                      address(c->args[1]).first + ", " + address(c->args[2]).first;
      if (multicast) s += ", static_cast<unsigned short>(" + expr(c->args.back()) + ")";
      for (size_t i = 0; i < rank; ++i) s += ", " + expr(c->args[5 + rank + i]);
      return s + ")";
    }
    if (op == "cuda.cluster_rank") return "tl::cluster_ctarank()";
    if (op == "tl.cluster_sync") return "tl::cluster_sync()";
    if (op == "cuda.mbarrier_arrive_cluster_warps")
      return "tl::mbarrier_arrive_cluster_warps(" + address(c->args[0]).first + ", " + expr(c->args[1]) + ")";
    if (op == "tl.printf") {
      const auto* fmt = c->args.empty() ? nullptr : c->args[0].as<StringImmNode>();
      if (!fmt) throw_error<TypeError>("T.printf: the format must be a string constant");
      std::vector<DataType> types;
      for (size_t i = 1; i < c->args.size(); ++i) types.push_back(c->args[i].dtype());
      // The format is data checked against the arguments (ir/printf_format.h), never the user's text as is.
      PrintfFormat pf = check_printf_format(fmt->value, types);
      std::string s = c_string_literal(pf.format);
      for (size_t i = 1; i < c->args.size(); ++i) {
        std::string v = expr(c->args[i]);
        switch (pf.args[i - 1]) {
          case PrintfArg::kSigned: v = "static_cast<long long>(" + v + ")"; break;
          case PrintfArg::kUnsigned: v = "static_cast<unsigned long long>(" + v + ")"; break;
          case PrintfArg::kChar: v = "static_cast<int>(" + v + ")"; break;
          case PrintfArg::kFloat: v = "static_cast<double>(static_cast<float>(" + v + "))"; break;
          case PrintfArg::kPointer: v = "static_cast<const void*>(" + v + ")"; break;
        }
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
        // The value is emitted before the binding's name is chosen: it may use an earlier
        // binding of the same variable.
        std::string value = expr(l->value);
        bool again = !declared_.insert(l->var.get()).second;
        std::string n = again ? names_.rebind(l->var.get(), l->var.name()) : var_name(l->var);
        line("const " + cuda_type_name(l->var.dtype()) + " " + n + " = " + value + ";");
        stmt(l->body);
        if (again) names_.restore();
        break;
      }
      case StmtKind::kStore: {
        const auto* st = s.as<BufferStoreNode>();
        line(access(st->buffer, st->indices) + " = " + expr(st->value) + ";");
        break;
      }
      case StmtKind::kFor: {
        const auto* f = s.as<ForNode>();
        // Bounds belong to the enclosing scope: emitted before the loop variable is named.
        std::string lo = expr(f->min);
        std::string end = is_zero(f->min) ? expr(f->extent) : "(" + lo + " + " + expr(f->extent) + ")";
        bool again = !declared_.insert(f->var.get()).second;
        std::string v = again ? names_.rebind(f->var.get(), f->var.name()) : var_name(f->var);
        std::string t = cuda_type_name(f->var.dtype());
        if (std::string pragma = unroll_pragma(f); !pragma.empty()) line(pragma);
        line("for (" + t + " " + v + " = " + lo + "; " + v + " < " + end + "; ++" + v + ") {");
        ++indent_;
        stmt(f->body);
        --indent_;
        line("}");
        if (again) names_.restore();
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
        bool again = !declared_.insert(b.get()).second;  // a duplicated allocation: a new name
        if (again) names_.rebind(b.get(), b.name());
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
        if (again) names_.restore();
        break;
      }
      case StmtKind::kAttr: {
        const auto* at = s.as<AttrStmtNode>();
        if (at->key == "smem_offset")
          if (const auto* a = at->body.as<AllocateNode>()) smem_offset_[a->buffer.get()] = at->value.as_int();
        bool saved_role = in_consumer_;
        if (at->key == "cuda.warp_role") in_consumer_ = at->value.as_str() == "consumer";
        stmt(at->body);
        in_consumer_ = saved_role;
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

  // A TMA tensor map the kernel uses (cuda.tma_load): tensor parameter, swizzle, box.
  struct TensorMapUse {
    Buffer tensor;
    size_t param = 0;
    int swizzle = 0;
    std::vector<int64_t> box;
    std::string name;
  };
  size_t tmap_index(const CallNode* c) const {
    const auto* l = c->args[0].as<BufferLoadNode>();
    TL_ICHECK(l, "cuda.tma_load without its tensor");
    int64_t swz = get_const_int(c->args[3], "swizzle"), rank = get_const_int(c->args[4], "rank");
    std::vector<int64_t> box;
    for (int64_t i = 0; i < rank; ++i) box.push_back(get_const_int(c->args[5 + static_cast<size_t>(i)], "box"));
    for (size_t i = 0; i < tmaps_.size(); ++i)
      if (tmaps_[i].tensor.get() == l->buffer.get() && tmaps_[i].swizzle == swz && tmaps_[i].box == box) return i;
    return tmaps_.size();
  }
  void collect_tensor_maps(const PrimFunc& f, const Stmt& body) {
    for_each_expr(body, [&](const Expr& e) {
      for_each_subexpr(e, [&](const Expr& x) {
        const auto* c = x.as<CallNode>();
        if (!c || c->op != "cuda.tma_load") return;
        if (tmap_index(c) < tmaps_.size()) return;
        TensorMapUse u;
        u.tensor = c->args[0].as<BufferLoadNode>()->buffer;
        u.param = f.params().size();
        for (size_t i = 0; i < f.params().size(); ++i)
          if (f.params()[i].is_buffer() && f.params()[i].buffer.get() == u.tensor.get()) u.param = i;
        TL_ICHECK(u.param < f.params().size(), "TMA tensor '", u.tensor.name(), "' is not a kernel parameter");
        u.swizzle = static_cast<int>(get_const_int(c->args[3], "swizzle"));
        const int64_t rank = get_const_int(c->args[4], "rank");
        for (int64_t i = 0; i < rank; ++i) u.box.push_back(get_const_int(c->args[5 + static_cast<size_t>(i)], "box"));
        tmaps_.push_back(u);
      });
    });
  }

  // Whether the kernel uses distributed builtins (tl.dist.*; include/tl/cuda/dist.h).
  static bool uses_distributed(const Stmt& body) {
    bool hit = false;
    for_each_expr(body, [&](const Expr& e) {
      for_each_subexpr(e, [&](const Expr& x) {
        const auto* c = x.as<CallNode>();
        if (c && c->op.rfind("tl.dist.", 0) == 0) hit = true;
      });
    });
    return hit;
  }

  // Whether a wgmma GEMM has fp8 operands (its wrappers live in a header of their own).
  static bool uses_fp8_wgmma(const Stmt& body) {
    bool hit = false;
    for_each_expr(body, [&](const Expr& e) {
      for_each_subexpr(e, [&](const Expr& x) {
        const auto* c = x.as<CallNode>();
        if (!c || c->op != "cuda.call" || c->args.empty()) return;
        const auto* callee = c->args[0].as<StringImmNode>();
        if (callee && callee->value.rfind("tl::wgmma_gemm", 0) == 0 && callee->value.find("tl::fp8_") != std::string::npos)
          hit = true;
      });
    });
    return hit;
  }

  std::vector<TensorMapUse> tmaps_;
  bool in_consumer_ = false;
  CudaLaunchInfo* info_ = nullptr;
  std::ostringstream os_;
  int indent_ = 0;
  NameTable names_;
  std::map<const BufferNode*, int64_t> smem_offset_;
  std::set<const VarNode*> dyn_is_param_;
  // Variables and buffers whose declaration was emitted already (a second one gets a new name).
  std::set<const void*> declared_;
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
  for (const CudaLaunchInfo& next : then) TL_ICHECK(next.then.empty(), "nested launch descriptions");
  os << "kernel " << kernel_name << "\n";
  for (const std::string& g : grid) os << "grid " << g << "\n";
  os << "block " << block[0] << " " << block[1] << " " << block[2] << "\n";
  os << "smem " << dyn_smem_bytes << "\n";
  os << "assert " << (has_device_assert ? 1 : 0) << "\n";
  if (persistent) os << "persistent 1\n";
  if (distributed) os << "dist 1\n";
  for (const Param& p : params) os << "param " << p.kind << " " << p.name << " " << p.source << "\n";
  for (const TensorMap& m : tensor_maps) {
    os << "tmap " << m.name << " " << m.param << " " << m.dtype << " " << m.swizzle << " " << m.box.size();
    for (int64_t b : m.box) os << " " << b;
    os << "\n";
    for (const std::string& d : m.dims) os << "tmap_dim " << d << "\n";
    for (const std::string& st : m.strides) os << "tmap_stride " << st << "\n";
  }
  for (const CudaLaunchInfo& next : then) os << "then\n" << next.serialize();
  return os.str();
}

CudaLaunchInfo CudaLaunchInfo::parse(const std::string& text) {
  // "then" starts the description of the next kernel.
  size_t cut = text.find("then\n");
  if (cut != std::string::npos && (cut == 0 || text[cut - 1] == '\n')) {
    CudaLaunchInfo first = parse(text.substr(0, cut));
    CudaLaunchInfo rest = parse(text.substr(cut + 5));
    first.then.push_back(rest);
    for (CudaLaunchInfo& r : rest.then) first.then.push_back(r);
    first.then[0].then.clear();
    return first;
  }
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
    } else if (key == "dist") {
      int v = 0;
      ls >> v;
      info.distributed = v != 0;
    } else if (key == "persistent") {
      int v = 0;
      ls >> v;
      info.persistent = v != 0;
    } else if (key == "param") {
      Param p;
      ls >> p.kind >> p.name >> p.source;
      info.params.push_back(p);
    } else if (key == "tmap") {
      TensorMap m;
      size_t rank = 0;
      ls >> m.name >> m.param >> m.dtype >> m.swizzle >> rank;
      if (!ls || rank < 1 || rank > 5) throw_error<ValueError>("corrupt cuda launch description (line '", ln, "')");
      m.box.resize(rank);
      for (int64_t& b : m.box) ls >> b;
      info.tensor_maps.push_back(m);
    } else if (key == "tmap_dim" || key == "tmap_stride") {
      std::string rest;
      std::getline(ls, rest);
      if (info.tensor_maps.empty() || rest.find_first_not_of(' ') == std::string::npos)
        throw_error<ValueError>("corrupt cuda launch description (line '", ln, "')");
      (key == "tmap_dim" ? info.tensor_maps.back().dims : info.tensor_maps.back().strides)
          .push_back(rest.substr(rest.find_first_not_of(' ')));
    } else if (!key.empty()) {
      throw_error<ValueError>("corrupt cuda launch description (line '", ln, "')");
    }
  }
  if (info.kernel_name.empty() || info.grid.size() != 3)
    throw_error<ValueError>("corrupt cuda launch description: missing kernel name or grid");
  return info;
}

}  // namespace tl
