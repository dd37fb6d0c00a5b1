#include "transform/check_cpu_constructs.h"

#include <set>

#include "ir/error.h"
#include "ir/functor.h"

namespace tl {

namespace {

std::string at(const Span& span) { return span.defined() ? span.str() + ": " : ""; }

class CpuConstructChecker : public IRVisitor {
 public:
  using IRVisitor::visit;

  void visit(const Stmt& s) override {
    if (!s.defined()) return;
    Span saved = span_;
    if (s.span().defined()) span_ = s.span();
    IRVisitor::visit(s);
    span_ = saved;
  }

 protected:
  void visit_allocate(const AllocateNode* n) override {
    MemScope s = n->buffer.scope();
    if (is_ascend_scope(s) || s == MemScope::kBarrier)
      throw_error<NotImplemented>(at(span_), "not implemented: buffer '", n->buffer.name(), "' in memory scope ",
                                  scope_name(s), " on target cpu; use T.alloc_shared / T.alloc_fragment / "
                                  "T.alloc_local, or compile for target '",
                                  s == MemScope::kBarrier ? "cuda" : "ascend", "'");
    IRVisitor::visit_allocate(n);
  }
  void visit_attr(const AttrStmtNode* n) override {
    if (n->key == "scope")
      throw_error<NotImplemented>(at(span_), "not implemented: T.Scope (Ascend cube/vector core scope) on target cpu; "
                                  "compile this kernel for target 'ascend'");
    IRVisitor::visit_attr(n);
  }
  void visit_call(const CallNode* n) override {
    if (n->op.rfind("ascend.", 0) == 0)
      throw_error<NotImplemented>(at(span_), "not implemented: T.", n->op.substr(7),
                                  " (Ascend synchronisation) on target cpu; compile this kernel for target 'ascend'");
    IRVisitor::visit_call(n);
  }

 private:
  Span span_;
};

}  // namespace

PrimFunc check_cpu_constructs(const PrimFunc& f, const PassContext&) {
  CpuConstructChecker c;
  c.visit(f.body());
  return f;
}

TL_REGISTER_PASS("check_cpu_constructs", check_cpu_constructs);

}  // namespace tl
