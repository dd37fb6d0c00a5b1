#include "ir/functor.h"

#include "ir/error.h"

namespace tl {

// ---------------------------------------------------------------------------------------------
// IRVisitor

void IRVisitor::visit(const Expr& e) {
  if (!e.defined()) return;
  switch (e.kind()) {
    case ExprKind::kIntImm: return visit_int(static_cast<const IntImmNode*>(e.get()));
    case ExprKind::kFloatImm: return visit_float(static_cast<const FloatImmNode*>(e.get()));
    case ExprKind::kStringImm: return visit_string(static_cast<const StringImmNode*>(e.get()));
    case ExprKind::kVar: return visit_var(static_cast<const VarNode*>(e.get()));
    case ExprKind::kBinary: return visit_binary(static_cast<const BinaryNode*>(e.get()));
    case ExprKind::kUnary: return visit_unary(static_cast<const UnaryNode*>(e.get()));
    case ExprKind::kSelect: return visit_select(static_cast<const SelectNode*>(e.get()));
    case ExprKind::kCast: return visit_cast(static_cast<const CastNode*>(e.get()));
    case ExprKind::kBufferLoad: return visit_load(static_cast<const BufferLoadNode*>(e.get()));
    case ExprKind::kCall: return visit_call(static_cast<const CallNode*>(e.get()));
    case ExprKind::kRamp: return visit_ramp(static_cast<const RampNode*>(e.get()));
    case ExprKind::kBroadcast: return visit_broadcast(static_cast<const BroadcastNode*>(e.get()));
  }
}

void IRVisitor::visit_binary(const BinaryNode* n) {
  visit(n->a);
  visit(n->b);
}
void IRVisitor::visit_unary(const UnaryNode* n) { visit(n->a); }
void IRVisitor::visit_select(const SelectNode* n) {
  visit(n->cond);
  visit(n->true_value);
  visit(n->false_value);
}
void IRVisitor::visit_cast(const CastNode* n) { visit(n->value); }
void IRVisitor::visit_load(const BufferLoadNode* n) {
  for (auto& i : n->indices) visit(i);
}
void IRVisitor::visit_call(const CallNode* n) {
  for (auto& a : n->args) visit(a);
}
void IRVisitor::visit_ramp(const RampNode* n) {
  visit(n->base);
  visit(n->stride);
}
void IRVisitor::visit_broadcast(const BroadcastNode* n) { visit(n->value); }

void IRVisitor::visit(const Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case StmtKind::kSeq: return visit_seq(static_cast<const SeqStmtNode*>(s.get()));
    case StmtKind::kEvaluate: return visit_evaluate(static_cast<const EvaluateNode*>(s.get()));
    case StmtKind::kLet: return visit_let(static_cast<const LetStmtNode*>(s.get()));
    case StmtKind::kStore: return visit_store(static_cast<const BufferStoreNode*>(s.get()));
    case StmtKind::kFor: return visit_for(static_cast<const ForNode*>(s.get()));
    case StmtKind::kIf: return visit_if(static_cast<const IfThenElseNode*>(s.get()));
    case StmtKind::kAllocate: return visit_allocate(static_cast<const AllocateNode*>(s.get()));
    case StmtKind::kAttr: return visit_attr(static_cast<const AttrStmtNode*>(s.get()));
    case StmtKind::kKernel: return visit_kernel(static_cast<const KernelLaunchNode*>(s.get()));
    case StmtKind::kTileOp: return visit_tile_op(static_cast<const TileOpNode*>(s.get()));
    case StmtKind::kLoopControl: return visit_loop_control(static_cast<const LoopControlNode*>(s.get()));
  }
}

void IRVisitor::visit_seq(const SeqStmtNode* n) {
  for (auto& s : n->seq) visit(s);
}
void IRVisitor::visit_evaluate(const EvaluateNode* n) { visit(n->value); }
void IRVisitor::visit_let(const LetStmtNode* n) {
  visit(n->value);
  visit(n->body);
}
void IRVisitor::visit_store(const BufferStoreNode* n) {
  for (auto& i : n->indices) visit(i);
  visit(n->value);
}
void IRVisitor::visit_for(const ForNode* n) {
  visit(n->min);
  visit(n->extent);
  for (auto& [k, v] : n->annotations) visit_attr_value(v);
  visit(n->body);
}
void IRVisitor::visit_if(const IfThenElseNode* n) {
  visit(n->cond);
  visit(n->then_case);
  visit(n->else_case);
}
void IRVisitor::visit_allocate(const AllocateNode* n) {
  for (auto& e : n->buffer.shape()) visit(e);
  visit(n->body);
}
void IRVisitor::visit_attr(const AttrStmtNode* n) {
  visit_attr_value(n->value);
  visit(n->body);
}
void IRVisitor::visit_kernel(const KernelLaunchNode* n) {
  for (auto& g : n->grid) visit(g);
  for (auto& t : n->threads) visit(t);
  for (auto& [k, v] : n->attrs) visit_attr_value(v);
  visit(n->body);
}
void IRVisitor::visit_tile_op(const TileOpNode* n) {
  for (auto& a : n->args) {
    if (a.is_region()) visit_region(a.region);
    else visit(a.expr);
  }
  for (auto& [k, v] : n->attrs) visit_attr_value(v);
}
void IRVisitor::visit_region(const BufferRegion& r) {
  for (auto& rg : r.region) {
    visit(rg.min);
    visit(rg.extent);
  }
}
void IRVisitor::visit_attr_value(const Attr& a) {
  if (a.kind() == Attr::kBuffer) visit_attr_buffer(a.as_buffer());
  if (a.kind() == Attr::kExpr) visit(a.as_expr());
  if (a.kind() == Attr::kExprList)
    for (auto& e : a.as_expr_list()) visit(e);
}

// ---------------------------------------------------------------------------------------------
// ExprMutator

Expr ExprMutator::mutate(const Expr& e) {
  if (!e.defined()) return e;
  switch (e.kind()) {
    case ExprKind::kIntImm: return mutate_int(e);
    case ExprKind::kFloatImm: return mutate_float(e);
    case ExprKind::kStringImm: return mutate_string(e);
    case ExprKind::kVar: return mutate_var(e);
    case ExprKind::kBinary: return mutate_binary(static_cast<const BinaryNode*>(e.get()), e);
    case ExprKind::kUnary: return mutate_unary(static_cast<const UnaryNode*>(e.get()), e);
    case ExprKind::kSelect: return mutate_select(static_cast<const SelectNode*>(e.get()), e);
    case ExprKind::kCast: return mutate_cast(static_cast<const CastNode*>(e.get()), e);
    case ExprKind::kBufferLoad: return mutate_load(static_cast<const BufferLoadNode*>(e.get()), e);
    case ExprKind::kCall: return mutate_call(static_cast<const CallNode*>(e.get()), e);
    case ExprKind::kRamp: return mutate_ramp(static_cast<const RampNode*>(e.get()), e);
    case ExprKind::kBroadcast: return mutate_broadcast(static_cast<const BroadcastNode*>(e.get()), e);
  }
  return e;
}

bool ExprMutator::mutate_list(const std::vector<Expr>& in, std::vector<Expr>* out) {
  bool changed = false;
  out->clear();
  out->reserve(in.size());
  for (auto& e : in) {
    Expr m = mutate(e);
    changed |= !m.same_as(e);
    out->push_back(std::move(m));
  }
  return changed;
}

Expr ExprMutator::mutate_binary(const BinaryNode* n, const Expr& e) {
  Expr a = mutate(n->a), b = mutate(n->b);
  if (a.same_as(n->a) && b.same_as(n->b)) return e;
  return make_binary(n->op, a, b);
}
Expr ExprMutator::mutate_unary(const UnaryNode* n, const Expr& e) {
  Expr a = mutate(n->a);
  if (a.same_as(n->a)) return e;
  return make_unary(n->op, a);
}
Expr ExprMutator::mutate_select(const SelectNode* n, const Expr& e) {
  Expr c = mutate(n->cond), t = mutate(n->true_value), f = mutate(n->false_value);
  if (c.same_as(n->cond) && t.same_as(n->true_value) && f.same_as(n->false_value)) return e;
  return make_select(c, t, f);
}
Expr ExprMutator::mutate_cast(const CastNode* n, const Expr& e) {
  Expr v = mutate(n->value);
  if (v.same_as(n->value)) return e;
  return make_cast(n->dtype, v);
}
Expr ExprMutator::mutate_load(const BufferLoadNode* n, const Expr& e) {
  std::vector<Expr> idx;
  if (!mutate_list(n->indices, &idx)) return e;
  return make_load(n->buffer, std::move(idx));
}
Expr ExprMutator::mutate_call(const CallNode* n, const Expr& e) {
  std::vector<Expr> args;
  if (!mutate_list(n->args, &args)) return e;
  return make_call(n->dtype, n->op, std::move(args));
}
Expr ExprMutator::mutate_ramp(const RampNode* n, const Expr& e) {
  Expr b = mutate(n->base), s = mutate(n->stride);
  if (b.same_as(n->base) && s.same_as(n->stride)) return e;
  return make_ramp(b, s, n->lanes);
}
Expr ExprMutator::mutate_broadcast(const BroadcastNode* n, const Expr& e) {
  Expr v = mutate(n->value);
  if (v.same_as(n->value)) return e;
  return make_broadcast(v, n->lanes);
}

// ---------------------------------------------------------------------------------------------
// StmtMutator

Stmt StmtMutator::mutate(const Stmt& s) {
  if (!s.defined()) return s;
  switch (s.kind()) {
    case StmtKind::kSeq: return mutate_seq(static_cast<const SeqStmtNode*>(s.get()), s);
    case StmtKind::kEvaluate: return mutate_evaluate(static_cast<const EvaluateNode*>(s.get()), s);
    case StmtKind::kLet: return mutate_let(static_cast<const LetStmtNode*>(s.get()), s);
    case StmtKind::kStore: return mutate_store(static_cast<const BufferStoreNode*>(s.get()), s);
    case StmtKind::kFor: return mutate_for(static_cast<const ForNode*>(s.get()), s);
    case StmtKind::kIf: return mutate_if(static_cast<const IfThenElseNode*>(s.get()), s);
    case StmtKind::kAllocate: return mutate_allocate(static_cast<const AllocateNode*>(s.get()), s);
    case StmtKind::kAttr: return mutate_attr(static_cast<const AttrStmtNode*>(s.get()), s);
    case StmtKind::kKernel: return mutate_kernel(static_cast<const KernelLaunchNode*>(s.get()), s);
    case StmtKind::kTileOp: return mutate_tile_op(static_cast<const TileOpNode*>(s.get()), s);
    case StmtKind::kLoopControl: return mutate_loop_control(static_cast<const LoopControlNode*>(s.get()), s);
  }
  return s;
}

Stmt StmtMutator::mutate_seq(const SeqStmtNode* n, const Stmt& s) {
  std::vector<Stmt> out;
  out.reserve(n->seq.size());
  bool changed = false;
  for (auto& c : n->seq) {
    Stmt m = mutate(c);
    changed |= !m.same_as(c);
    out.push_back(std::move(m));
  }
  if (!changed) return s;
  return make_seq(std::move(out), n->span);
}
Stmt StmtMutator::mutate_evaluate(const EvaluateNode* n, const Stmt& s) {
  Expr v = mutate(n->value);
  if (v.same_as(n->value)) return s;
  return make_evaluate(v, n->span);
}
Stmt StmtMutator::mutate_let(const LetStmtNode* n, const Stmt& s) {
  Expr v = mutate(n->value);
  Stmt b = mutate(n->body);
  if (v.same_as(n->value) && b.same_as(n->body)) return s;
  return make_let(n->var, v, b, n->span);
}
Stmt StmtMutator::mutate_store(const BufferStoreNode* n, const Stmt& s) {
  std::vector<Expr> idx;
  bool changed = mutate_list(n->indices, &idx);
  Expr v = mutate(n->value);
  if (!changed && v.same_as(n->value)) return s;
  return make_store(n->buffer, std::move(idx), v, n->span);
}
Stmt StmtMutator::mutate_for(const ForNode* n, const Stmt& s) {
  Expr mn = mutate(n->min), ext = mutate(n->extent);
  bool ach = false;
  AttrMap ann = mutate_attr_map(n->annotations, &ach);
  Stmt b = mutate(n->body);
  if (mn.same_as(n->min) && ext.same_as(n->extent) && !ach && b.same_as(n->body)) return s;
  return make_for(n->var, mn, ext, n->for_kind, b, std::move(ann), n->span);
}
Stmt StmtMutator::mutate_if(const IfThenElseNode* n, const Stmt& s) {
  Expr c = mutate(n->cond);
  Stmt t = mutate(n->then_case);
  Stmt e = mutate(n->else_case);
  if (c.same_as(n->cond) && t.same_as(n->then_case) && e.same_as(n->else_case)) return s;
  return make_if(c, t, e, n->span);
}
Stmt StmtMutator::mutate_allocate(const AllocateNode* n, const Stmt& s) {
  Stmt b = mutate(n->body);
  if (b.same_as(n->body)) return s;
  return make_allocate(n->buffer, b, n->span);
}
Stmt StmtMutator::mutate_attr(const AttrStmtNode* n, const Stmt& s) {
  bool vch = false;
  Attr v = mutate_attr_value(n->value, &vch);
  Stmt b = mutate(n->body);
  if (!vch && b.same_as(n->body)) return s;
  return make_attr(n->key, v, b, n->span);
}
Stmt StmtMutator::mutate_kernel(const KernelLaunchNode* n, const Stmt& s) {
  std::vector<Expr> grid, threads;
  bool changed = mutate_list(n->grid, &grid);
  changed |= mutate_list(n->threads, &threads);
  bool ach = false;
  AttrMap attrs = mutate_attr_map(n->attrs, &ach);
  Stmt b = mutate(n->body);
  if (!changed && !ach && b.same_as(n->body)) return s;
  return make_kernel(std::move(grid), n->block_vars, std::move(threads), n->thread_vars, std::move(attrs), b, n->span);
}
Stmt StmtMutator::mutate_tile_op(const TileOpNode* n, const Stmt& s) {
  std::vector<TileArg> args;
  bool changed = false;
  for (auto& a : n->args) {
    if (a.is_region()) {
      args.emplace_back(mutate_region(a.region, &changed));
    } else {
      Expr e = mutate(a.expr);
      changed |= !e.same_as(a.expr);
      args.emplace_back(e);
    }
  }
  bool ach = false;
  AttrMap attrs = mutate_attr_map(n->attrs, &ach);
  if (!changed && !ach) return s;
  return make_tile_op(n->op, std::move(args), std::move(attrs), n->span);
}

BufferRegion StmtMutator::mutate_region(const BufferRegion& r, bool* changed) {
  std::vector<Range> out;
  out.reserve(r.region.size());
  for (auto& rg : r.region) {
    Expr mn = mutate(rg.min), ext = mutate(rg.extent);
    *changed |= !mn.same_as(rg.min) || !ext.same_as(rg.extent);
    out.emplace_back(mn, ext);
  }
  return BufferRegion(r.buffer, std::move(out));
}

Attr StmtMutator::mutate_attr_value(const Attr& a, bool* changed) {
  if (a.kind() == Attr::kExpr) {
    Expr e = mutate(a.as_expr());
    if (!e.same_as(a.as_expr())) {
      *changed = true;
      return Attr(e);
    }
  } else if (a.kind() == Attr::kExprList) {
    std::vector<Expr> out;
    if (mutate_list(a.as_expr_list(), &out)) {
      *changed = true;
      return Attr(std::move(out));
    }
  }
  return a;
}

AttrMap StmtMutator::mutate_attr_map(const AttrMap& m, bool* changed) {
  AttrMap out;
  for (auto& [k, v] : m) out.emplace(k, mutate_attr_value(v, changed));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Substitution helpers

namespace {
class VarSubstituter : public StmtMutator {
 public:
  explicit VarSubstituter(const std::map<Var, Expr, VarLess>& m) : vmap_(m) {}

 protected:
  Expr mutate_var(const Expr& e) override {
    auto it = vmap_.find(Var(std::static_pointer_cast<const VarNode>(e.node())));
    return it == vmap_.end() ? e : it->second;
  }

 private:
  const std::map<Var, Expr, VarLess>& vmap_;
};

class BufferSubstituter : public StmtMutator {
 public:
  explicit BufferSubstituter(const std::map<Buffer, Buffer, BufferLess>& m) : bmap_(m) {}

 protected:
  Buffer map(const Buffer& b) const {
    auto it = bmap_.find(b);
    return it == bmap_.end() ? b : it->second;
  }
  Expr mutate_load(const BufferLoadNode* n, const Expr& e) override {
    std::vector<Expr> idx;
    bool changed = mutate_list(n->indices, &idx);
    Buffer b = map(n->buffer);
    if (!changed && b.same_as(n->buffer)) return e;
    return make_load(b, std::move(idx));
  }
  Stmt mutate_store(const BufferStoreNode* n, const Stmt& s) override {
    std::vector<Expr> idx;
    bool changed = mutate_list(n->indices, &idx);
    Expr v = mutate(n->value);
    Buffer b = map(n->buffer);
    if (!changed && v.same_as(n->value) && b.same_as(n->buffer)) return s;
    return make_store(b, std::move(idx), v, n->span);
  }
  Stmt mutate_allocate(const AllocateNode* n, const Stmt& s) override {
    Stmt body = mutate(n->body);
    Buffer b = map(n->buffer);
    if (body.same_as(n->body) && b.same_as(n->buffer)) return s;
    return make_allocate(b, body, n->span);
  }
  Stmt mutate_tile_op(const TileOpNode* n, const Stmt& s) override {
    Stmt m = StmtMutator::mutate_tile_op(n, s);
    auto* op = m.as<TileOpNode>();
    std::vector<TileArg> args;
    bool changed = false;
    for (auto& a : op->args) {
      if (a.is_region()) {
        Buffer b = map(a.region.buffer);
        changed |= !b.same_as(a.region.buffer);
        args.emplace_back(BufferRegion(b, a.region.region));
      } else {
        args.push_back(a);
      }
    }
    bool ach = false;
    AttrMap attrs;
    for (auto& [k, v] : op->attrs) {
      if (v.kind() == Attr::kBuffer) {
        Buffer b = map(v.as_buffer());
        ach |= !b.same_as(v.as_buffer());
        attrs.emplace(k, Attr(b));
      } else {
        attrs.emplace(k, v);
      }
    }
    if (!changed && !ach) return m;
    return make_tile_op(op->op, std::move(args), std::move(attrs), op->span);
  }

 private:
  const std::map<Buffer, Buffer, BufferLess>& bmap_;
};

class PostOrder : public IRVisitor {
 public:
  explicit PostOrder(const std::function<void(const Stmt&)>& fn) : fn_(fn) {}
  void visit(const Stmt& s) override {
    if (!s.defined()) return;
    IRVisitor::visit(s);
    fn_(s);
  }
  using IRVisitor::visit;

 private:
  const std::function<void(const Stmt&)>& fn_;
};

class EachExpr : public IRVisitor {
 public:
  explicit EachExpr(const std::function<void(const Expr&)>& fn) : fn_(fn) {}
  void visit(const Expr& e) override {
    if (!e.defined()) return;
    fn_(e);
    IRVisitor::visit(e);
  }
  using IRVisitor::visit;

 private:
  const std::function<void(const Expr&)>& fn_;
};
}  // namespace

Expr substitute(const Expr& e, const std::map<Var, Expr, VarLess>& vmap) {
  if (vmap.empty()) return e;
  VarSubstituter s(vmap);
  return s.mutate(e);
}
Stmt substitute(const Stmt& st, const std::map<Var, Expr, VarLess>& vmap) {
  if (vmap.empty()) return st;
  VarSubstituter s(vmap);
  return s.mutate(st);
}
Stmt substitute_buffers(const Stmt& st, const std::map<Buffer, Buffer, BufferLess>& bmap) {
  if (bmap.empty()) return st;
  BufferSubstituter s(bmap);
  return s.mutate(st);
}
void post_order_visit(const Stmt& s, const std::function<void(const Stmt&)>& fn) {
  PostOrder v(fn);
  v.visit(s);
}
void for_each_expr(const Stmt& s, const std::function<void(const Expr&)>& fn) {
  EachExpr v(fn);
  v.visit(s);
}
void for_each_subexpr(const Expr& e, const std::function<void(const Expr&)>& fn) {
  EachExpr v(fn);
  v.visit(e);
}

}  // namespace tl
