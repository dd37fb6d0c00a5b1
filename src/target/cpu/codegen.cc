// cpu codegen: functions and statements. Layout of the emitted file:
//
//   #include "tl/cpu/kernel.h"
//   struct <f>_kernel0_ctx { api, grid, failed flag, captured tensors and scalars };
//   static int32_t <f>_kernel0_block(const ctx&, int64_t block_index) { ... return 0; }
//   static void <f>_kernel0_task(void* ctx, int64_t block_index)    -- the parallel_for body
//   extern "C" int32_t tl_kernel_entry(const TLArg* args, int32_t num_args, const TLRuntimeAPI* api)
//
// A failing T.device_assert (or a failed heap allocation) reports through api->report_error and
// returns 1 from the block; the task records it, the remaining blocks are skipped, and the entry
// returns 1 after the grid.
#include "target/c_source.h"
#include "target/cpu/codegen.h"
#include "target/cpu/host_isa.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "runtime/paths.h"
#include "target/cpu/codegen_cpu.h"

namespace tl {

namespace cpu_codegen {

namespace {

// The names emitted code may not give a user's variable: C++'s (target/c_source.h, shared with the
// cuda code generator) and those of the cpu kernel ABI and runtime.
bool reserved_name(const std::string& n) {
  static const std::set<std::string> ours = {"api", "args", "num_args", "tl", "block_index", "ctx", "p", "pack_launch",
                                             "tl_kernel_entry", "tl_kernel_isa", "TLArg", "TLRuntimeAPI"};
  return ours.count(n) || cxx_reserved_words().count(n);
}

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v" + out;
  // Identifiers with a double underscore or _Capital are reserved to the implementation.
  while (out.size() > 1 && out[0] == '_') out = out.substr(1);
  for (size_t i; (i = out.find("__")) != std::string::npos;) out.erase(i, 1);
  return out;
}

// Variables and buffers a kernel body uses but does not define (they come from the host side).
class CaptureCollector : public IRVisitor {
 public:
  using IRVisitor::visit;
  void visit(const Expr& e) override {
    if (!e.defined()) return;
    if (auto* v = e.as<VarNode>()) {
      if (seen_vars_.insert(v).second) vars_.push_back(Var(std::static_pointer_cast<const VarNode>(e.node())));
      return;
    }
    IRVisitor::visit(e);
  }
  std::vector<Var> free_vars() const {
    std::vector<Var> out;
    for (auto& v : vars_)
      if (!bound_.count(v.get())) out.push_back(v);
    return out;
  }
  std::vector<Buffer> outside_buffers() const {
    std::vector<Buffer> out;
    for (auto& b : buffers_)
      if (!allocated_.count(b.get())) out.push_back(b);
    return out;
  }
  void bind(const Var& v) { bound_.insert(v.get()); }

 protected:
  void visit_for(const ForNode* n) override {
    bind(n->var);
    IRVisitor::visit_for(n);
  }
  void visit_let(const LetStmtNode* n) override {
    bind(n->var);
    IRVisitor::visit_let(n);
  }
  void visit_allocate(const AllocateNode* n) override {
    allocated_.insert(n->buffer.get());
    IRVisitor::visit_allocate(n);
  }
  void visit_load(const BufferLoadNode* n) override {
    use(n->buffer);
    IRVisitor::visit_load(n);
  }
  void visit_store(const BufferStoreNode* n) override {
    use(n->buffer);
    IRVisitor::visit_store(n);
  }
  void visit_kernel(const KernelLaunchNode* n) override {
    throw_error<NotImplemented>("not implemented: a T.Kernel nested inside another T.Kernel");
  }

 private:
  void use(const Buffer& b) {
    if (seen_buffers_.insert(b.get()).second) buffers_.push_back(b);
  }
  std::set<const VarNode*> seen_vars_, bound_;
  std::vector<Var> vars_;
  std::set<const BufferNode*> seen_buffers_, allocated_;
  std::vector<Buffer> buffers_;
};

// The tensor parameters that a statement of the function may write: stores, and every buffer whose
// element is an argument of a call (a reference an intrinsic may write through: atomics, copy_stream's
// destination, a GEMM's C, tl.address_of anywhere) except the A and B operands of tl.cpu.gemm; a tile
// op left in the body counts as writing every buffer it names. `any_handle`: a scalar handle
// parameter (a raw pointer the function may write through) exists.
class WrittenBuffers : public IRVisitor {
 public:
  std::set<const BufferNode*> written;

 protected:
  void visit_store(const BufferStoreNode* n) override {
    written.insert(n->buffer.get());
    IRVisitor::visit_store(n);
  }
  void visit_call(const CallNode* n) override {
    for (size_t i = 0; i < n->args.size(); ++i) {
      const Expr& a = n->args[i];
      if (n->op == "tl.cpu.gemm" && (i == 5 || i == 7)) {  // &A[...], &B[...]: read only
        const auto* addr = a.as<CallNode>();
        const auto* ld = addr && addr->op == "tl.address_of" && addr->args.size() == 1
                             ? addr->args[0].as<BufferLoadNode>()
                             : nullptr;
        if (ld) {
          for (const Expr& idx : ld->indices) visit(idx);
          continue;
        }
      }
      if (auto* ld = a.as<BufferLoadNode>()) written.insert(ld->buffer.get());
      visit(a);
    }
  }
  void visit_tile_op(const TileOpNode* n) override {
    for (const TileArg& a : n->args)
      if (a.is_region()) written.insert(a.region.buffer.get());
    IRVisitor::visit_tile_op(n);
  }
};

}  // namespace

std::string CodeGenCPU::fresh(const std::string& base) {
  std::string b = sanitize(base);
  std::string cand = b;
  for (int i = 1; used_names_.count(cand) || reserved_name(cand); ++i) cand = b + "_" + std::to_string(i);
  used_names_.insert(cand);
  return cand;
}

std::string CodeGenCPU::name(const Var& v) {
  auto it = var_names_.find(v.get());
  if (it != var_names_.end()) return it->second;
  return var_names_[v.get()] = fresh(v.name());
}

std::string CodeGenCPU::name(const Buffer& b) {
  auto it = buffer_names_.find(b.get());
  if (it != buffer_names_.end()) return it->second;
  return buffer_names_[b.get()] = fresh(b.name());
}

void CodeGenCPU::line(const std::string& text) {
  check_single_line(text);
  *out_ << std::string(indent_ * 2, ' ') << text << "\n";
}

void CodeGenCPU::seq_or_single(const Stmt& s) {
  if (auto* seq = s.as<SeqStmtNode>()) {
    for (auto& x : seq->seq) stmt(x);
  } else {
    stmt(s);
  }
}

void CodeGenCPU::stmt(const Stmt& s) {
  if (!s.defined()) return;
  Span saved = span_;
  if (s.span().defined()) span_ = s.span();
  switch (s.kind()) {
    case StmtKind::kSeq: seq_or_single(s); break;
    case StmtKind::kEvaluate: evaluate(s.as<EvaluateNode>()); break;
    case StmtKind::kLet: {
      auto* n = s.as<LetStmtNode>();
      line("{");
      ++indent_;
      line("const " + value_type(n->var.dtype()) + " " + name(n->var) + " = " + expr(n->value) + ";");
      seq_or_single(n->body);
      --indent_;
      line("}");
      break;
    }
    case StmtKind::kStore: {
      auto* n = s.as<BufferStoreNode>();
      line(element_ref(n->buffer, n->indices) + " = " + as_storage(n->value, n->buffer.dtype()) + ";");
      break;
    }
    case StmtKind::kFor: for_loop(s.as<ForNode>()); break;
    case StmtKind::kIf: {
      auto* n = s.as<IfThenElseNode>();
      line("if (" + expr(n->cond) + ") {");
      ++indent_;
      seq_or_single(n->then_case);
      --indent_;
      if (n->else_case.defined()) {
        line("} else {");
        ++indent_;
        seq_or_single(n->else_case);
        --indent_;
      }
      line("}");
      break;
    }
    case StmtKind::kAllocate: allocate(s.as<AllocateNode>()); break;
    case StmtKind::kAttr: {
      auto* n = s.as<AttrStmtNode>();
      line("// attr " + c_comment_text(n->key + " = " + print_attr(n->value)));
      seq_or_single(n->body);
      break;
    }
    case StmtKind::kKernel:
      if (in_block_) throw_error<NotImplemented>("not implemented: a T.Kernel nested inside another T.Kernel");
      launch(s.as<KernelLaunchNode>());
      break;
    case StmtKind::kTileOp:
      throw_error<Error>("internal error: tile op '", s.as<TileOpNode>()->op,
                         "' reached cpu codegen; lower_cpu lowers every tile op first");
    case StmtKind::kLoopControl: line(s.as<LoopControlNode>()->is_break ? "break;" : "continue;"); break;
  }
  span_ = saved;
}

void CodeGenCPU::evaluate(const EvaluateNode* n) {
  auto* call = n->value.as<CallNode>();
  if (call && call->op == "tl.device_assert") {
    if (call->args.empty()) throw_error<TypeError>("T.device_assert needs a condition");
    std::string msg = call->args.size() > 1 && call->args[1].as<StringImmNode>()
                          ? call->args[1].as<StringImmNode>()->value
                          : std::string();
    std::string where = span_.defined() ? " at " + span_.str() : "";
    std::string text = "device_assert failed" + where + (msg.empty() ? "" : ": " + msg);
    line("if (!(" + expr(call->args[0]) + ")) {");
    ++indent_;
    line("tl::cpu::report_error(api, \"%s\", " + c_string_literal(text) + ");");
    line("return 1;");
    --indent_;
    line("}");
    return;
  }
  if (call && call->op.rfind("tl.dist.", 0) == 0 && call->op != "tl.dist.rank" && call->op != "tl.dist.world") {
    line("if (" + dist_call(call) + " != 0) return 1;");
    return;
  }
  if (call && call->op == "tl.sync_threads") {
    line("// T.sync_threads(): nothing to do, a cpu block is one thread");
    return;
  }
  if (call && (call->op == "cuda.cp_async_commit" || call->op == "cuda.cp_async_wait")) {
    // T.ptx_commit_group / T.ptx_wait_group: a cpu T.async_copy is a plain copy, complete on return
    line("// " + call->op + ": nothing to do, copies on the cpu complete at once");
    return;
  }
  line(expr(n->value) + ";");
}

void CodeGenCPU::for_loop(const ForNode* n) {
  std::string t = storage_type(n->var.dtype());
  std::string v = name(n->var);
  int64_t ext = 0;
  if (int64_t lanes = attr_int(n->annotations, "cpu.vector_lanes", 0); lanes > 0) {
    vector_loop(n, lanes);
    return;
  }
  switch (n->for_kind) {
    case ForKind::kVectorized: line("#pragma GCC ivdep"); break;
    case ForKind::kUnrolled: {
      int64_t factor = attr_int(n->annotations, "unroll_factor", 0);
      if (factor <= 0) factor = is_const_int(n->extent, &ext) && ext > 0 && ext <= 64 ? ext : 8;
      line("#pragma GCC unroll " + std::to_string(std::min<int64_t>(factor, 65534)));
      break;
    }
    case ForKind::kSerial: break;
    default:
      throw_error<Error>("internal error: ", for_kind_name(n->for_kind),
                         " loop reached cpu codegen; legalize_cpu_loops turns it into a serial or vectorized loop");
  }
  Expr end = is_zero(n->min) ? n->extent : n->min + n->extent;
  std::string header;
  if (end.as<IntImmNode>() || end.as<VarNode>()) {
    header = "for (" + t + " " + v + " = " + expr(n->min) + "; " + v + " < " + expr(end) + "; ++" + v + ") {";
  } else {
    std::string e = fresh(v + "_end");
    header = "for (" + t + " " + v + " = " + expr(n->min) + ", " + e + " = " + expr(end) + "; " + v + " < " + e +
             "; ++" + v + ") {";
  }
  line(header);
  ++indent_;
  seq_or_single(n->body);
  --indent_;
  line("}");
}

void CodeGenCPU::allocate(const AllocateNode* n) {
  const Buffer& b = n->buffer;
  if (packed_buffer(b))
    throw_error<NotImplemented>("not implemented: a float4_e2m1fn buffer '", b.name(), "' allocated in global memory on "
                                "target cpu; allocate it with T.alloc_shared / T.alloc_fragment, or pass it as a parameter");
  std::string t = storage_type(b.dtype());
  std::string nm = name(b);
  Expr count = make_int(1, DataType::Int64());
  if (b->strides.empty()) {
    for (auto& e : b.shape()) count = count * make_cast(DataType::Int64(), e);
  } else {  // padded rows (pad_gemm_accumulators): one past the last element's offset
    for (size_t d = 0; d < b.ndim(); ++d)
      count = count + (make_cast(DataType::Int64(), b.shape()[d]) - make_int(1, DataType::Int64())) *
                          make_cast(DataType::Int64(), b->strides[d]);
  }
  int64_t c = 0;
  bool is_static = is_const_int(count, &c);
  int64_t bytes = is_static ? std::max<int64_t>(c, 1) * b.dtype().element_bytes() : 0;
  line("{");
  ++indent_;
  if (is_static && bytes <= kMaxStackBufferBytes && stack_bytes_ + bytes <= kMaxStackBytesPerBlock) {
    stack_bytes_ += bytes;
    line("alignas(64) " + t + " " + nm + "[" + std::to_string(std::max<int64_t>(c, 1)) + "];  // " +
         scope_name(b.scope()) + ", " + std::to_string(bytes) + " bytes");
  } else {
    std::string storage = fresh(nm + "_storage");
    std::string n_expr = is_static ? std::to_string(c) + "LL" : expr(count);
    // Braces, not parentheses: `HeapArray<T> s(int64_t(n));` would declare a function.
    line("tl::cpu::HeapArray<" + t + "> " + storage + "{" + n_expr + "};  // " + scope_name(b.scope()) +
         " buffer on the heap");
    line("if (" + storage + ".data == nullptr) {");
    ++indent_;
    line("tl::cpu::report_error(api, \"cannot allocate %lld elements for buffer '%s'\", (long long)(" + n_expr +
         "), " + c_string_literal(b.name()) + ");");
    line("return 1;");
    --indent_;
    line("}");
    line(t + "* " + nm + " = " + storage + ".data;");
  }
  seq_or_single(n->body);
  --indent_;
  line("}");
}

std::string CodeGenCPU::block_function(const KernelLaunchNode* n, const std::string& base,
                                       std::vector<Var>* captured_vars, std::vector<Buffer>* captured_buffers) {
  CaptureCollector cc;
  for (auto& v : n->block_vars) cc.bind(v);
  for (auto& v : n->thread_vars) cc.bind(v);
  cc.visit(n->body);
  *captured_vars = cc.free_vars();
  *captured_buffers = cc.outside_buffers();

  std::ostringstream os;
  os << "struct " << base << "_ctx {\n  const TLRuntimeAPI* api;\n  int64_t grid[" << std::max<size_t>(n->grid.size(), 1)
     << "];\n  int32_t failed;\n  uint64_t pack_launch;  // tl::cpu::gemm_begin_launch's token, or 0\n";
  for (auto& b : *captured_buffers) os << "  " << buffer_pointer_type(b) << " " << name(b) << ";\n";
  for (auto& v : *captured_vars) os << "  " << value_type(v.dtype()) << " " << name(v) << ";\n";
  os << "};\n\n";
  os << "static int32_t " << base << "_block(const " << base << "_ctx& ctx, int64_t block_index) {\n";
  os << "  const TLRuntimeAPI* api = ctx.api;\n";
  for (auto& b : *captured_buffers)
    os << "  " << buffer_pointer_type(b) << " " << name(b) << " = ctx." << name(b) << ";\n";
  for (auto& v : *captured_vars) os << "  const " << value_type(v.dtype()) << " " << name(v) << " = ctx." << name(v) << ";\n";
  // T.use_swizzle on a grid of two or more dimensions: the first two block variables come from the
  // rasterized walk of tl::cpu::rasterize2d over the linear index within one (bx, by) plane.
  int64_t panel = attr_int(n->attrs, "use_swizzle_panel", 0);
  bool swizzle = panel > 0 && n->block_vars.size() >= 2;
  if (swizzle) {
    std::string plane = "ctx.grid[0] * ctx.grid[1]", sx = fresh("swizzled_x"), sy = fresh("swizzled_y");
    os << "  int64_t " << sx << ", " << sy << ";\n";
    os << "  tl::cpu::rasterize2d(block_index % (" << plane << "), ctx.grid[0], ctx.grid[1], " << panel << ", "
       << (attr_str(n->attrs, "use_swizzle_order", "row") == "row" ? "true" : "false") << ", &" << sx << ", &" << sy
       << ");\n";
    for (size_t d = 0; d < 2; ++d)
      os << "  const " << storage_type(n->block_vars[d].dtype()) << " " << name(n->block_vars[d]) << " = "
         << storage_type(n->block_vars[d].dtype()) << "(" << (d == 0 ? sx : sy) << ");\n";
  }
  // CUDA's block order: the first grid dimension (bx) varies fastest, so that consecutive blocks —
  // which run at the same time on the workers — share what depends on the later ones (a flash-
  // attention head's K and V, a GEMM's A row panel). With T.use_swizzle dimensions 0 and 1 come
  // from the rasterized plane and the others count planes.
  const size_t nb = n->block_vars.size();
  std::string divisor = swizzle ? "ctx.grid[0] * ctx.grid[1]" : "";
  for (size_t d = swizzle ? 2 : 0; d < nb; ++d) {
    std::string q = divisor.empty() ? "block_index" : "(block_index / (" + divisor + "))";
    std::string val = d + 1 == nb ? q : q + " % ctx.grid[" + std::to_string(d) + "]";
    os << "  const " << storage_type(n->block_vars[d].dtype()) << " " << name(n->block_vars[d]) << " = "
       << storage_type(n->block_vars[d].dtype()) << "(" << val << ");\n";
    divisor = divisor.empty() ? "ctx.grid[" + std::to_string(d) + "]" : divisor + " * ctx.grid[" + std::to_string(d) + "]";
  }
  std::ostringstream body;
  std::ostringstream* saved_out = out_;
  int saved_indent = indent_;
  out_ = &body;
  indent_ = 1;
  in_block_ = true;
  stack_bytes_ = 0;
  seq_or_single(n->body);
  in_block_ = false;
  out_ = saved_out;
  indent_ = saved_indent;
  if (!reuse_b_used_.empty()) os << "  const uint64_t pack_launch = ctx.pack_launch;\n";
  os << body.str() << "  return 0;\n}\n\n";
  os << "static void " << base << "_task(void* p, int64_t block_index) {\n"
     << "  " << base << "_ctx* ctx = static_cast<" << base << "_ctx*>(p);\n"
     << "  if (__atomic_load_n(&ctx->failed, __ATOMIC_RELAXED)) return;  // a block already failed\n"
     << "  if (" << base << "_block(*ctx, block_index) != 0) __atomic_store_n(&ctx->failed, 1, __ATOMIC_RELAXED);\n"
     << "  if (tl::cpu::int_div_fault) {  // an integer division by zero (or MIN / -1) in this block\n"
     << "    tl::cpu::int_div_fault = 0;\n"
     << "    tl::cpu::report_error(ctx->api, \"integer division by zero (or MIN / -1) in kernel " << func_name_
     << ", block %lld\", (long long)block_index);\n"
     << "    __atomic_store_n(&ctx->failed, 1, __ATOMIC_RELAXED);\n"
     << "  }\n"
     << "}\n";
  return os.str();
}

// The launch's token for packed-B reuse: a fresh one, or 0 (no reuse) when a written tensor parameter
// overlaps a reused B in memory (a caller passing overlapping tensors: the kernel's own stores would
// then change B).
std::string CodeGenCPU::begin_launch_call() {
  auto span_bytes = [&](const Buffer& b) {  // bytes from the first element to past the last
    std::vector<Expr> st = b.effective_strides();
    std::string s = "int64_t(1)";
    for (size_t d = 0; d < b.ndim(); ++d)
      s += " + (int64_t(" + expr(b.shape()[d]) + ") - 1) * int64_t(" + expr(st[d]) + ")";
    return "(" + s + ") * " + std::to_string(b.dtype().bytes());
  };
  std::string ok = written_packed_ ? "false" : "true";
  for (const BufferNode* r : reuse_b_used_) {
    const Buffer& rb = reuse_b_.at(r);
    for (const Buffer& w : written_params_)
      ok += " && !tl::cpu::gemm_ranges_overlap(" + name(rb) + ", " + span_bytes(rb) + ", " + name(w) + ", " +
            span_bytes(w) + ")";
  }
  return "tl::cpu::gemm_begin_launch(" + ok + ")";
}

void CodeGenCPU::launch(const KernelLaunchNode* n) {
  // The kernel's base name and the names derived from it must all be free.
  std::string stem = sanitize(func_name_ + "_kernel" + std::to_string(kernel_count_++)), base = stem;
  auto taken = [&](const std::string& n) { return used_names_.count(n) || reserved_name(n); };
  for (int i = 1; taken(base) || taken(base + "_ctx") || taken(base + "_block") || taken(base + "_task"); ++i)
    base = stem + "_" + std::to_string(i);
  for (const char* suffix : {"", "_ctx", "_block", "_task"}) used_names_.insert(base + suffix);
  std::vector<Var> vars;
  std::vector<Buffer> buffers;
  reuse_b_used_.clear();
  block_functions_.push_back(block_function(n, base, &vars, &buffers));
  std::string c = fresh("launch" + std::to_string(kernel_count_ - 1));
  line("{");
  ++indent_;
  line("// T.Kernel" + (span_.defined() ? " at " + c_comment_text(span_.str()) : std::string()));
  line(base + "_ctx " + c + ";");
  line(c + ".api = api;");
  line(c + ".failed = 0;");
  line(c + ".pack_launch = " + (reuse_b_used_.empty() ? std::string("0") : begin_launch_call()) + ";");
  if (n->grid.empty()) line(c + ".grid[0] = 1;");
  for (size_t d = 0; d < n->grid.size(); ++d)
    line(c + ".grid[" + std::to_string(d) + "] = int64_t(" + expr(n->grid[d]) + ");");
  for (auto& b : buffers) line(c + "." + name(b) + " = " + name(b) + ";");
  for (auto& v : vars) line(c + "." + name(v) + " = " + name(v) + ";");
  std::string blocks = c + ".grid[0]", positive = c + ".grid[0] > 0";
  for (size_t d = 1; d < n->grid.size(); ++d) {
    blocks += " * " + c + ".grid[" + std::to_string(d) + "]";
    positive += " && " + c + ".grid[" + std::to_string(d) + "] > 0";
  }
  line("if (" + positive + ") api->parallel_for(api->pool, " + blocks + ", " + base + "_task, &" + c + ");");
  if (!reuse_b_used_.empty()) line("tl::cpu::gemm_end_launch(" + c + ".pack_launch);  // frees the launch's packs");
  line("if (" + c + ".failed) return 1;");
  --indent_;
  line("}");
}

std::string CodeGenCPU::generate(const PrimFunc& f, bool pack_reuse) {
  func_name_ = sanitize(f.name());
  std::ostringstream entry;
  out_ = &entry;
  indent_ = 1;
  const auto& params = f.params();
  std::vector<Var> dyn = f.dynamic_vars();
  size_t total = params.size() + dyn.size();
  line("if (api == nullptr || api->abi_version != TL_CPU_ABI_VERSION) return -1;");
  line("if (num_args != " + std::to_string(total) + ") {");
  ++indent_;
  line("tl::cpu::report_error(api, \"kernel '%s' expects %d arguments (%d parameters, %d dynamic dimensions), got "
       "%d\", " + c_string_literal(f.name()) + ", " + std::to_string(total) + ", " + std::to_string(params.size()) +
       ", " + std::to_string(dyn.size()) + ", int(num_args));");
  line("return 1;");
  --indent_;
  line("}");
  std::set<const VarNode*> declared;
  for (size_t i = 0; i < params.size(); ++i) {
    const Param& p = params[i];
    std::string slot = "args[" + std::to_string(i) + "]";
    if (p.is_buffer()) {
      std::string t = buffer_pointer_type(p.buffer);
      line(t + " " + name(p.buffer) + " = " + (packed_buffer(p.buffer) ? t + "(" + slot + ".ptr)" : "static_cast<" + t + ">(" + slot + ".ptr)") + ";");
      continue;
    }
    DataType t = p.var.dtype();
    std::string v;
    if (t.is_bool()) v = slot + ".i64 != 0";
    else if (t.is_integer()) v = storage_type(t) + "(" + slot + ".i64)";
    else if (is_small_float(t)) v = "tl::cpu::round_to<" + storage_type(t) + ">(" + slot + ".f64)";
    else if (t.is_float()) v = value_type(t) + "(" + slot + ".f64)";
    else if (t.is_handle()) v = slot + ".ptr";
    else throw_error<NotImplemented>("not implemented: scalar parameter '", p.name, "' of dtype ", t.str(), " on target cpu");
    line("const " + value_type(t) + " " + name(p.var) + " = " + v + ";");
    declared.insert(p.var.get());
  }
  for (size_t k = 0; k < dyn.size(); ++k) {
    if (declared.count(dyn[k].get())) continue;  // also a scalar parameter
    DataType t = dyn[k].dtype();
    line("const " + value_type(t) + " " + name(dyn[k]) + " = " + storage_type(t) + "(args[" +
         std::to_string(params.size() + k) + "].i64);  // dynamic dimension");
  }
  {
    WrittenBuffers wb;
    wb.visit(f.body());
    bool any_handle = false;
    for (const Param& p : params)
      if (!p.is_buffer() && p.var.dtype().is_handle()) any_handle = true;
    for (const Param& p : params) {
      if (!p.is_buffer()) continue;
      if (wb.written.count(p.buffer.get())) {
        written_params_.push_back(p.buffer);
        if (packed_buffer(p.buffer)) written_packed_ = true;
      } else if (pack_reuse && !any_handle && !packed_buffer(p.buffer) && p.buffer.scope() == MemScope::kGlobal) {
        reuse_b_[p.buffer.get()] = p.buffer;
      }
    }
  }
  seq_or_single(f.body());
  line("return 0;");

  std::ostringstream file;
  file << "// Generated by tilelang-cpp for the cpu target: kernel '" << c_comment_text(f.name()) << "'.\n"
       << "// ABI: include/tl/cpu/abi.h. Build: g++ -std=c++17 -O2 <ISA flags> -fPIC -shared -I<tilelang>/include\n"
       << "#include \"tl/cpu/kernel.h\"\n";
  if (uses_dist_) file << "#include \"tl/cpu/dist.h\"\n";
  file << "\n";
  for (auto& b : block_functions_) file << b << "\n";
  file << "extern \"C\" __attribute__((visibility(\"default\"))) int32_t tl_kernel_entry(const TLArg* args, "
          "int32_t num_args, const TLRuntimeAPI* api) {\n"
       << entry.str() << "}\n";
  // Which vector tier the tile routines run with in this process (tl/cpu/isa.h), for tests and
  // diagnostics: "avx512" with "+bf16" / "+vnni" / "+amx" for the instructions in use, "avx2" or "portable".
  file << "\nextern \"C\" __attribute__((visibility(\"default\"))) const char* tl_kernel_isa() { return "
          "tl::cpu::isa_name(); }\n";
  return file.str();
}

}  // namespace cpu_codegen

std::string codegen_cpu(const PrimFunc& lowered, bool pack_reuse) {
  cpu_codegen::CodeGenCPU cg;
  return cg.generate(lowered, pack_reuse);
}

std::string cpu_include_dir() { return tl_include_dir("tl/cpu/kernel.h"); }

std::vector<std::string> cpu_compiler_flags(bool fast_math) {
  return cpu_compiler_flags(fast_math, cpu_isa_flags(target_cpu_isa(AttrMap{})));
}

std::vector<std::string> cpu_compiler_flags(bool fast_math, const std::vector<std::string>& isa_flags) {
  std::vector<std::string> flags = {"-std=c++17", "-O2"};
  flags.insert(flags.end(), isa_flags.begin(), isa_flags.end());
  std::vector<std::string> rest = {
      "-fPIC", "-shared",
      // -O2 with the dynamic cost model vectorizes loops whose trip count is not a multiple of the
      // vector width (tails), which the default -O2 "very cheap" model refuses.
      "-ftree-vectorize", "-fvect-cost-model=dynamic",
      // IEEE values: errno and trap flags are not part of the kernel's result; FMA contraction is
      // allowed, as on GPUs.
      "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=fast",
      "-fno-exceptions", "-fno-rtti", "-fvisibility=hidden", "-fno-plt",
      // tl::cpu::f32x16 (math.h) passes 64-byte vectors between inlined functions: no ABI to warn of
      // in builds without AVX-512.
      "-Wno-psabi",
      "-I" + cpu_include_dir(),
  };
  flags.insert(flags.end(), rest.begin(), rest.end());
  if (fast_math) flags.push_back("-ffast-math");
  return flags;
}

}  // namespace tl
