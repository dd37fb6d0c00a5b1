// The cuda code generator's statements (codegen_impl.h): loops with their unroll pragmas, lets,
// stores, conditionals, buffer allocations (registers, or offsets into the shared-memory block) and
// warp-role regions.
#include "ir/error.h"
#include "ir/functor.h"
#include "target/c_source.h"
#include "target/cuda/codegen_impl.h"
#include "target/cuda/lower_context.h"

namespace tl {
namespace cuda_codegen {

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

}  // namespace

void CudaCodegen::line(const std::string& s) {
  check_single_line(s);
  os_ << std::string(static_cast<size_t>(indent_) * 2, ' ') << s << "\n";
}

void CudaCodegen::stmt(const Stmt& s) {
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
      line(store_element(st->buffer, st->indices, expr(st->value)));
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
      bool saved_role = in_consumer_, saved_producer = in_producer_;
      if (at->key == "cuda.warp_role") {
        in_consumer_ = at->value.as_str() == "consumer";
        in_producer_ = at->value.as_str() == "producer";
      }
      stmt(at->body);
      in_consumer_ = saved_role;
      in_producer_ = saved_producer;
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

}  // namespace cuda_codegen
}  // namespace tl
