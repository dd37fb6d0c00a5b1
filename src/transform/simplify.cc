#include "transform/simplify.h"

#include "arith/expr_order.h"
#include "ir/functor.h"

namespace tl {

namespace {

bool loop_kind_removable_at_extent_one(ForKind k) {
  return k == ForKind::kSerial || k == ForKind::kUnrolled || k == ForKind::kVectorized;
}

// True when an allocation inside `body` has a shape or strides that mention `v` (buffers are
// shared by identity, so the loop that defines v must stay).
bool allocation_uses(const Stmt& body, const Var& v) {
  bool used = false;
  post_order_visit(body, [&](const Stmt& s) {
    auto* a = s.as<AllocateNode>();
    if (!a || used) return;
    auto check = [&](const Expr& e) {
      for_each_subexpr(e, [&](const Expr& x) { used = used || x.same_as(v); });
    };
    for (auto& e : a->buffer.shape()) check(e);
    for (auto& e : a->buffer->strides) check(e);
  });
  return used;
}

class StmtSimplifier : public StmtMutator {
 public:
  explicit StmtSimplifier(Analyzer& an) : an_(an) {}

  using StmtMutator::mutate;
  Expr mutate(const Expr& e) override { return an_.simplify(e); }

 protected:
  Stmt mutate_evaluate(const EvaluateNode* n, const Stmt& s) override {
    Expr v = mutate(n->value);
    if (is_pure_expr(v) && !v.as<CallNode>()) return make_nop();
    return v.same_as(n->value) ? s : make_evaluate(v, n->span);
  }

  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    Expr mn = mutate(n->min), ext = mutate(n->extent);
    if (an_.can_prove(make_binary(BinOp::kLE, ext, make_int(0, ext.dtype())))) return make_nop();
    bool ach = false;
    AttrMap ann = mutate_attr_map(n->annotations, &ach);
    Stmt body;
    {
      auto scope = an_.bind_scoped(n->var, Range(mn, ext));
      body = mutate(n->body);
    }
    if (is_nop(body)) return make_nop();
    if (is_const_value(ext, 1) && loop_kind_removable_at_extent_one(n->for_kind) && !allocation_uses(body, n->var)) {
      // The body was simplified with var == min already; substitute what is left (e.g. in
      // buffer shapes of inner allocations).
      return substitute(body, {{n->var, mn}});
    }
    if (mn.same_as(n->min) && ext.same_as(n->extent) && !ach && body.same_as(n->body)) return s;
    return make_for(n->var, mn, ext, n->for_kind, body, std::move(ann), n->span);
  }

  Stmt mutate_if(const IfThenElseNode* n, const Stmt& s) override {
    Expr c = mutate(n->cond);
    int64_t v;
    if (is_const_int(c, &v)) return v ? mutate(n->then_case) : (n->else_case.defined() ? mutate(n->else_case) : make_nop());
    Stmt t, e;
    {
      auto scope = an_.assume(c);
      t = mutate(n->then_case);
    }
    if (n->else_case.defined()) {
      auto scope = an_.assume(an_.simplify(make_unary(UnOp::kNot, c)));
      e = mutate(n->else_case);
    }
    bool then_empty = is_nop(t), else_empty = !e.defined() || is_nop(e);
    if (then_empty && else_empty && is_pure_expr(c)) return make_nop();
    if (then_empty && !else_empty) return make_if(an_.simplify(make_unary(UnOp::kNot, c)), e, Stmt(), n->span);
    if (c.same_as(n->cond) && t.same_as(n->then_case) && e.same_as(n->else_case)) return s;
    return make_if(c, t, else_empty ? Stmt() : e, n->span);
  }

  Stmt mutate_let(const LetStmtNode* n, const Stmt& s) override {
    Expr v = mutate(n->value);
    Stmt body;
    if (n->var.dtype().is_integer() || n->var.dtype().is_bool()) {
      auto scope = an_.bind_scoped(n->var, v);
      body = mutate(n->body);
    } else {
      body = mutate(n->body);
    }
    if (v.same_as(n->value) && body.same_as(n->body)) return s;
    return make_let(n->var, v, body, n->span);
  }

  Stmt mutate_kernel(const KernelLaunchNode* n, const Stmt& s) override {
    std::vector<Expr> grid, threads;
    bool changed = mutate_list(n->grid, &grid);
    changed |= mutate_list(n->threads, &threads);
    bool ach = false;
    AttrMap attrs = mutate_attr_map(n->attrs, &ach);
    Stmt body;
    {
      auto scope = an_.bind_kernel_scoped(*n, grid, threads);
      body = mutate(n->body);
    }
    if (!changed && !ach && body.same_as(n->body)) return s;
    return make_kernel(std::move(grid), n->block_vars, std::move(threads), n->thread_vars, std::move(attrs), body,
                       n->span);
  }

 private:
  Analyzer& an_;
};

}  // namespace

Stmt simplify_stmt(const Stmt& s, Analyzer& analyzer) { return StmtSimplifier(analyzer).mutate(s); }

PrimFunc simplify(const PrimFunc& f, const PassContext& ctx) {
  Analyzer an;
  an.bind_dynamic_dims(f);
  Stmt body = simplify_stmt(f.body(), an);
  return body.same_as(f.body()) ? f : f.with_body(body);
}

TL_REGISTER_PASS("simplify", simplify);

}  // namespace tl
