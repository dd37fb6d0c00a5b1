#include "ir/scope_walk.h"

namespace tl {

void ScopeWalker::unbind(const Var& v) {
  auto it = vars_.find(v.get());
  if (it != vars_.end() && --it->second == 0) vars_.erase(it);
}

void ScopeWalker::unbind(const Buffer& b) {
  auto it = buffers_.find(b.get());
  if (it != buffers_.end() && --it->second == 0) buffers_.erase(it);
}

void ScopeWalker::use(const Buffer& b) {
  if (b.defined() && !is_bound(b.get())) on_free_buffer(b);
}

void ScopeWalker::walk_buffer_decl(const Buffer& b) {
  for (auto& e : b.shape()) walk_expr(e);
  for (auto& e : b->strides) walk_expr(e);
}

void ScopeWalker::walk_func(const PrimFunc& f) {
  for (auto& v : f.dynamic_vars()) bind(v);
  for (auto& p : f.params()) {
    if (p.is_buffer()) bind(p.buffer);
    else bind(p.var);
  }
  walk_attrs(f.attrs());
  walk_stmt(f.body());
}

void ScopeWalker::walk_expr(const Expr& e) {
  if (!e.defined()) return;
  switch (e.kind()) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
    case ExprKind::kStringImm: return;
    case ExprKind::kVar: {
      auto* v = e.as<VarNode>();
      if (!is_bound(v)) on_free_var(Var(std::static_pointer_cast<const VarNode>(e.node())));
      return;
    }
    case ExprKind::kBinary: {
      auto* n = e.as<BinaryNode>();
      walk_expr(n->a);
      walk_expr(n->b);
      return;
    }
    case ExprKind::kUnary: walk_expr(e.as<UnaryNode>()->a); return;
    case ExprKind::kSelect: {
      auto* n = e.as<SelectNode>();
      walk_expr(n->cond);
      walk_expr(n->true_value);
      walk_expr(n->false_value);
      return;
    }
    case ExprKind::kCast: walk_expr(e.as<CastNode>()->value); return;
    case ExprKind::kBufferLoad: {
      auto* n = e.as<BufferLoadNode>();
      use(n->buffer);
      on_access(n->buffer, n->indices.size(), false);
      for (auto& i : n->indices) walk_expr(i);
      return;
    }
    case ExprKind::kCall:
      for (auto& a : e.as<CallNode>()->args) walk_expr(a);
      return;
    case ExprKind::kRamp: {
      auto* n = e.as<RampNode>();
      walk_expr(n->base);
      walk_expr(n->stride);
      return;
    }
    case ExprKind::kBroadcast: walk_expr(e.as<BroadcastNode>()->value); return;
  }
}

void ScopeWalker::walk_attr(const Attr& a) {
  switch (a.kind()) {
    case Attr::kExpr: walk_expr(a.as_expr()); break;
    case Attr::kExprList:
      for (auto& e : a.as_expr_list()) walk_expr(e);
      break;
    case Attr::kBuffer: use(a.as_buffer()); break;
    default: break;
  }
}

void ScopeWalker::walk_attrs(const AttrMap& m) {
  std::vector<Var> attr_vars;
  if (bind_attr_vars_) {
    auto it = m.find("vars");
    if (it != m.end() && it->second.kind() == Attr::kExprList) {
      for (auto& e : it->second.as_expr_list())
        if (auto* v = e.as<VarNode>(); v && !is_bound(v))
          attr_vars.push_back(Var(std::static_pointer_cast<const VarNode>(e.node())));
    }
  }
  for (auto& v : attr_vars) bind(v);
  for (auto& [k, v] : m) walk_attr(v);
  for (auto& v : attr_vars) unbind(v);
}

void ScopeWalker::walk_stmt(const Stmt& s) {
  if (!s.defined()) return;
  const Stmt* saved = current_;
  current_ = &s;
  enter_stmt(s);
  switch (s.kind()) {
    case StmtKind::kSeq:
      for (auto& c : s.as<SeqStmtNode>()->seq) walk_stmt(c);
      break;
    case StmtKind::kEvaluate: walk_expr(s.as<EvaluateNode>()->value); break;
    case StmtKind::kLet: {
      auto* n = s.as<LetStmtNode>();
      walk_expr(n->value);
      bind(n->var);
      walk_stmt(n->body);
      unbind(n->var);
      break;
    }
    case StmtKind::kStore: {
      auto* n = s.as<BufferStoreNode>();
      use(n->buffer);
      on_access(n->buffer, n->indices.size(), false);
      for (auto& i : n->indices) walk_expr(i);
      walk_expr(n->value);
      break;
    }
    case StmtKind::kFor: {
      auto* n = s.as<ForNode>();
      walk_expr(n->min);
      walk_expr(n->extent);
      bind(n->var);
      walk_attrs(n->annotations);
      walk_stmt(n->body);
      unbind(n->var);
      break;
    }
    case StmtKind::kIf: {
      auto* n = s.as<IfThenElseNode>();
      walk_expr(n->cond);
      walk_stmt(n->then_case);
      walk_stmt(n->else_case);
      break;
    }
    case StmtKind::kAllocate: {
      auto* n = s.as<AllocateNode>();
      walk_buffer_decl(n->buffer);
      bind(n->buffer);
      walk_stmt(n->body);
      unbind(n->buffer);
      break;
    }
    case StmtKind::kAttr: {
      auto* n = s.as<AttrStmtNode>();
      walk_attr(n->value);
      walk_stmt(n->body);
      break;
    }
    case StmtKind::kKernel: {
      auto* n = s.as<KernelLaunchNode>();
      for (auto& g : n->grid) walk_expr(g);
      for (auto& t : n->threads) walk_expr(t);
      for (auto& v : n->block_vars) bind(v);
      for (auto& v : n->thread_vars) bind(v);
      walk_attrs(n->attrs);
      walk_stmt(n->body);
      for (auto& v : n->block_vars) unbind(v);
      for (auto& v : n->thread_vars) unbind(v);
      break;
    }
    case StmtKind::kTileOp: {
      auto* n = s.as<TileOpNode>();
      for (auto& a : n->args) {
        if (a.is_region()) {
          use(a.region.buffer);
          on_access(a.region.buffer, a.region.region.size(), true);
          for (auto& r : a.region.region) {
            walk_expr(r.min);
            walk_expr(r.extent);
          }
        } else {
          walk_expr(a.expr);
        }
      }
      walk_attrs(n->attrs);
      break;
    }
    case StmtKind::kLoopControl: break;
  }
  exit_stmt(s);
  current_ = saved;
}

}  // namespace tl
