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
    std::vector<std::optional<Analyzer::Scope>> scopes;
    for (size_t i = 0; i < n->grid.size(); ++i)
      scopes.emplace_back(an_.bind_scoped(n->block_vars[i], Range(make_int(0, n->grid[i].dtype()), n->grid[i])));
    for (size_t i = 0; i < n->threads.size(); ++i)
      scopes.emplace_back(an_.bind_scoped(n->thread_vars[i], Range(make_int(0, n->threads[i].dtype()), n->threads[i])));
    Stmt out = StmtMutator::mutate_kernel(n, s);
    while (!scopes.empty()) scopes.pop_back();  // scopes end in reverse order
    return out;
  }

 private:
  Analyzer& an_;
};

}  // namespace

PrimFunc bound_parallel_extents(const PrimFunc& f, const PassContext&) {
  Analyzer an;
  for (const Var& v : f.dynamic_vars()) an.bind(v, ConstIntBound(0, ConstIntBound::kPosInf));
  ParallelBounder pb(an);
  Stmt body = pb.mutate(f.body());
  return body.same_as(f.body()) ? f : f.with_body(body);
}

TL_REGISTER_PASS("bound_parallel_extents", bound_parallel_extents);

}  // namespace tl
