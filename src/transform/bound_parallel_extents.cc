#include "transform/bound_parallel_extents.h"

#include <optional>

#include "arith/analyzer.h"
#include "ir/functor.h"

namespace tl {

namespace {

class ParallelBounder : public StmtMutator {
 public:
  explicit ParallelBounder(Analyzer& an) : an_(an) {}

 protected:
  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    int64_t ext = 0, lo = 0;
    if (n->for_kind != ForKind::kParallel || is_const_int(n->extent, &ext) || !is_const_int(n->min, &lo) || lo != 0) {
      auto scope = an_.bind_scoped(n->var, Range(n->min, n->extent));
      return StmtMutator::mutate_for(n, s);
    }
    ConstIntBound b = an_.const_int_bound(n->extent);
    if (b.max_value == ConstIntBound::kPosInf || b.max_value <= 0 || b.max_value > (int64_t(1) << 24)) {
      auto scope = an_.bind_scoped(n->var, Range(n->min, n->extent));
      return StmtMutator::mutate_for(n, s);
    }
    Expr bound = make_int(b.max_value, n->extent.dtype());
    auto scope = an_.bind_scoped(n->var, Range(n->min, bound));
    Stmt body = mutate(n->body);
    Stmt guarded = make_if(Expr(n->var) < n->extent, body, Stmt(), n->span);
    return make_for(n->var, n->min, bound, n->for_kind, guarded, n->annotations, n->span);
  }

  Stmt mutate_let(const LetStmtNode* n, const Stmt& s) override {
    if (!n->var.dtype().is_integer()) return StmtMutator::mutate_let(n, s);
    auto scope = an_.bind_scoped(n->var, n->value);
    return StmtMutator::mutate_let(n, s);
  }

  Stmt mutate_kernel(const KernelLaunchNode* n, const Stmt& s) override {
    auto scope = an_.bind_kernel_scoped(*n);
    return StmtMutator::mutate_kernel(n, s);
  }

 private:
  Analyzer& an_;
};

}  // namespace

PrimFunc bound_parallel_extents(const PrimFunc& f, const PassContext&) {
  Analyzer an;
  an.bind_dynamic_dims(f);
  ParallelBounder pb(an);
  Stmt body = pb.mutate(f.body());
  return body.same_as(f.body()) ? f : f.with_body(body);
}

TL_REGISTER_PASS("bound_parallel_extents", bound_parallel_extents);

}  // namespace tl
