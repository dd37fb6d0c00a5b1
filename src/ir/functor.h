// Visitors and mutators over the IR. Mutators are copy-on-write: a node is rebuilt only when one
// of its children changed, so unchanged subtrees stay shared (and `same_as` holds).
#pragma once

#include <functional>
#include <map>

#include "ir/stmt.h"

namespace tl {

// Read-only walk over every expression and statement. Override a visit_* and call the base
// version to keep descending.
class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void visit(const Expr& e);
  virtual void visit(const Stmt& s);

 protected:
  virtual void visit_int(const IntImmNode*) {}
  virtual void visit_float(const FloatImmNode*) {}
  virtual void visit_string(const StringImmNode*) {}
  virtual void visit_var(const VarNode*) {}
  virtual void visit_binary(const BinaryNode* n);
  virtual void visit_unary(const UnaryNode* n);
  virtual void visit_select(const SelectNode* n);
  virtual void visit_cast(const CastNode* n);
  virtual void visit_load(const BufferLoadNode* n);
  virtual void visit_call(const CallNode* n);
  virtual void visit_ramp(const RampNode* n);
  virtual void visit_broadcast(const BroadcastNode* n);

  virtual void visit_seq(const SeqStmtNode* n);
  virtual void visit_evaluate(const EvaluateNode* n);
  virtual void visit_let(const LetStmtNode* n);
  virtual void visit_store(const BufferStoreNode* n);
  virtual void visit_for(const ForNode* n);
  virtual void visit_if(const IfThenElseNode* n);
  virtual void visit_allocate(const AllocateNode* n);
  virtual void visit_attr(const AttrStmtNode* n);
  virtual void visit_kernel(const KernelLaunchNode* n);
  virtual void visit_tile_op(const TileOpNode* n);
  virtual void visit_loop_control(const LoopControlNode*) {}

  // A buffer that an attribute names (of a tile op, an attribute statement, a kernel or a loop):
  // a layout annotation, a pass's marker. Nothing by default.
  virtual void visit_attr_buffer(const Buffer&) {}

  // Visits the expressions inside a region / attribute (and an attribute's buffer).
  void visit_region(const BufferRegion& r);
  void visit_attr_value(const Attr& a);
};

class ExprMutator {
 public:
  virtual ~ExprMutator() = default;
  virtual Expr mutate(const Expr& e);

 protected:
  virtual Expr mutate_int(const Expr& e) { return e; }
  virtual Expr mutate_float(const Expr& e) { return e; }
  virtual Expr mutate_string(const Expr& e) { return e; }
  virtual Expr mutate_var(const Expr& e) { return e; }
  virtual Expr mutate_binary(const BinaryNode* n, const Expr& e);
  virtual Expr mutate_unary(const UnaryNode* n, const Expr& e);
  virtual Expr mutate_select(const SelectNode* n, const Expr& e);
  virtual Expr mutate_cast(const CastNode* n, const Expr& e);
  virtual Expr mutate_load(const BufferLoadNode* n, const Expr& e);
  virtual Expr mutate_call(const CallNode* n, const Expr& e);
  virtual Expr mutate_ramp(const RampNode* n, const Expr& e);
  virtual Expr mutate_broadcast(const BroadcastNode* n, const Expr& e);

  // Mutates a list; returns true when any element changed.
  bool mutate_list(const std::vector<Expr>& in, std::vector<Expr>* out);
};

class StmtMutator : public ExprMutator {
 public:
  using ExprMutator::mutate;
  virtual Stmt mutate(const Stmt& s);

 protected:
  virtual Stmt mutate_seq(const SeqStmtNode* n, const Stmt& s);
  virtual Stmt mutate_evaluate(const EvaluateNode* n, const Stmt& s);
  virtual Stmt mutate_let(const LetStmtNode* n, const Stmt& s);
  virtual Stmt mutate_store(const BufferStoreNode* n, const Stmt& s);
  virtual Stmt mutate_for(const ForNode* n, const Stmt& s);
  virtual Stmt mutate_if(const IfThenElseNode* n, const Stmt& s);
  virtual Stmt mutate_allocate(const AllocateNode* n, const Stmt& s);
  virtual Stmt mutate_attr(const AttrStmtNode* n, const Stmt& s);
  virtual Stmt mutate_kernel(const KernelLaunchNode* n, const Stmt& s);
  virtual Stmt mutate_tile_op(const TileOpNode* n, const Stmt& s);
  virtual Stmt mutate_loop_control(const LoopControlNode*, const Stmt& s) { return s; }

  BufferRegion mutate_region(const BufferRegion& r, bool* changed);
  Attr mutate_attr_value(const Attr& a, bool* changed);
  AttrMap mutate_attr_map(const AttrMap& m, bool* changed);
};

// Replaces variables by expressions everywhere in `e` / `s`.
Expr substitute(const Expr& e, const std::map<Var, Expr, VarLess>& vmap);
Stmt substitute(const Stmt& s, const std::map<Var, Expr, VarLess>& vmap);

// Replaces buffers by other buffers (same rank) in loads, stores, regions and allocations.
Stmt substitute_buffers(const Stmt& s, const std::map<Buffer, Buffer, BufferLess>& bmap);

// Calls `fn` on every statement (children before parents) / on every expression.
void post_order_visit(const Stmt& s, const std::function<void(const Stmt&)>& fn);
void for_each_expr(const Stmt& s, const std::function<void(const Expr&)>& fn);
// Calls `fn` on `e` and each of its sub-expressions.
void for_each_subexpr(const Expr& e, const std::function<void(const Expr&)>& fn);

}  // namespace tl
