#include "transform/legalize_safe_memory_access.h"

#include <optional>

#include "arith/analyzer.h"
#include "ir/functor.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

class SafeAccessGuard : public StmtMutator {
 public:
  explicit SafeAccessGuard(Analyzer& an) : an_(an) {}
  using StmtMutator::mutate;

 protected:
  // The in-bounds condition of an access, with every conjunct the analyzer can prove dropped;
  // undefined when the whole access is provably in bounds.
  Expr bounds_condition(const Buffer& b, const std::vector<Expr>& indices) {
    if (b.scope() != MemScope::kGlobal) return Expr();
    std::vector<Expr> dims = b.shape();
    std::vector<Expr> idx = indices;
    if (indices.size() == 1 && b.ndim() != 1) dims = {b.num_elements()};  // a flat access
    Expr cond;
    for (size_t i = 0; i < idx.size() && i < dims.size(); ++i) {
      if (idx[i].dtype().lanes != 1) return Expr();  // vector accesses are made by later passes
      Expr lo = make_binary(BinOp::kGE, idx[i], make_int(0, idx[i].dtype()));
      Expr hi = make_binary(BinOp::kLT, idx[i], make_cast(idx[i].dtype(), dims[i]));
      for (const Expr& c : {lo, hi}) {
        if (an_.can_prove(c)) continue;
        cond = cond.defined() ? make_binary(BinOp::kAnd, cond, c) : c;
      }
    }
    return cond;
  }

  Expr mutate_load(const BufferLoadNode* n, const Expr& e) override {
    Expr m = StmtMutator::mutate_load(n, e);
    auto* load = m.as<BufferLoadNode>();
    Expr cond = bounds_condition(load->buffer, load->indices);
    if (!cond.defined()) return m;
    return make_select(cond, m, make_const(m.dtype(), 0));
  }

  // A scalar atomic names its element by a load that must stay a load (the builtin takes its
  // address): its indices are legalized, and the whole atomic is guarded instead.
  static bool is_atomic(const CallNode* c) {
    return c && !c->args.empty() && c->args[0].as<BufferLoadNode>() &&
           (is_atomic_write_builtin(c->op) || c->op == "tl.atomic_load");
  }
  Expr atomic_call(const CallNode* n, Expr* cond) {
    const auto* ref = n->args[0].as<BufferLoadNode>();
    std::vector<Expr> idx;
    mutate_list(ref->indices, &idx);
    std::vector<Expr> args = {make_load(ref->buffer, idx)};
    for (size_t i = 1; i < n->args.size(); ++i) args.push_back(mutate(n->args[i]));
    *cond = bounds_condition(ref->buffer, idx);
    return make_call(n->dtype, n->op, args);
  }

  Expr mutate_call(const CallNode* n, const Expr& e) override {
    if (n->op == "tl.address_of" && !n->args.empty() && n->args[0].as<BufferLoadNode>()) {
      // An address, not an access: whoever takes it bounds what it touches (the distributed
      // builtins clamp their extents to the tensors). Its indices are legalized, the load kept.
      const auto* ref = n->args[0].as<BufferLoadNode>();
      std::vector<Expr> idx;
      mutate_list(ref->indices, &idx);
      return make_call(n->dtype, n->op, {make_load(ref->buffer, idx)});
    }
    if (!is_atomic(n)) return StmtMutator::mutate_call(n, e);
    Expr cond;
    Expr call = atomic_call(n, &cond);
    if (!cond.defined() || n->dtype.is_void()) return call;
    return make_select(cond, call, make_const(n->dtype, 0));
  }

  Stmt mutate_evaluate(const EvaluateNode* n, const Stmt& s) override {
    const auto* c = n->value.as<CallNode>();
    if (!is_atomic(c)) return StmtMutator::mutate_evaluate(n, s);
    Expr cond;
    Stmt ev = make_evaluate(atomic_call(c, &cond), n->span);
    return cond.defined() ? make_if(cond, ev, Stmt(), n->span) : ev;
  }

  Expr mutate_select(const SelectNode* n, const Expr& e) override {
    Expr c = mutate(n->cond), t, f;
    {
      auto scope = an_.assume(c);
      t = mutate(n->true_value);
    }
    {
      auto scope = an_.assume(make_unary(UnOp::kNot, c));
      f = mutate(n->false_value);
    }
    if (c.same_as(n->cond) && t.same_as(n->true_value) && f.same_as(n->false_value)) return e;
    return make_select(c, t, f);
  }

  Expr mutate_binary(const BinaryNode* n, const Expr& e) override {
    if (n->op != BinOp::kAnd && n->op != BinOp::kOr) return StmtMutator::mutate_binary(n, e);
    // C evaluates the right operand only when the left one allows it: assume that much.
    Expr a = mutate(n->a), b;
    {
      auto scope = an_.assume(n->op == BinOp::kAnd ? a : make_unary(UnOp::kNot, a));
      b = mutate(n->b);
    }
    if (a.same_as(n->a) && b.same_as(n->b)) return e;
    return make_binary(n->op, a, b);
  }

  Stmt mutate_store(const BufferStoreNode* n, const Stmt& s) override {
    Stmt m = StmtMutator::mutate_store(n, s);
    auto* store = m.as<BufferStoreNode>();
    Expr cond = bounds_condition(store->buffer, store->indices);
    if (!cond.defined()) return m;
    return make_if(cond, m, Stmt(), n->span);
  }

  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    auto scope = an_.bind_scoped(n->var, Range(n->min, n->extent));
    return StmtMutator::mutate_for(n, s);
  }

  Stmt mutate_let(const LetStmtNode* n, const Stmt& s) override {
    if (!n->var.dtype().is_integer() && !n->var.dtype().is_bool()) return StmtMutator::mutate_let(n, s);
    auto scope = an_.bind_scoped(n->var, n->value);
    return StmtMutator::mutate_let(n, s);
  }

  Stmt mutate_if(const IfThenElseNode* n, const Stmt& s) override {
    Expr c = mutate(n->cond);
    Stmt t, f;
    {
      auto scope = an_.assume(c);
      t = mutate(n->then_case);
    }
    if (n->else_case.defined()) {
      auto scope = an_.assume(make_unary(UnOp::kNot, c));
      f = mutate(n->else_case);
    }
    if (c.same_as(n->cond) && t.same_as(n->then_case) && f.same_as(n->else_case)) return s;
    return make_if(c, t, f, n->span);
  }

  Stmt mutate_kernel(const KernelLaunchNode* n, const Stmt& s) override {
    auto scope = an_.bind_kernel_scoped(*n);
    return StmtMutator::mutate_kernel(n, s);
  }

 private:
  Analyzer& an_;
};

}  // namespace

PrimFunc legalize_safe_memory_access(const PrimFunc& f, const PassContext& ctx) {
  if (config_bool(ctx.configs, "tl.disable_safe_memory_legalize")) return f;
  Analyzer an;
  an.bind_dynamic_dims(f);
  SafeAccessGuard guard(an);
  Stmt body = guard.mutate(f.body());
  return body.same_as(f.body()) ? f : f.with_body(body);
}

TL_REGISTER_PASS("legalize_safe_memory_access", legalize_safe_memory_access);

}  // namespace tl
