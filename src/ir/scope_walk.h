// A walk over the IR that tracks which variables and buffers are in scope. It is the single
// statement of the binding rules shared by the printer (free-symbol header), the verifier and
// the textual-IR parser (docs/IR_TEXT.md):
//   function   dynamic dims (vars in parameter shapes/strides), scalar params and tensor params
//              are bound for the whole body;
//   for        min/extent are evaluated outside; the loop var is bound for annotations and body;
//   let        the value is evaluated outside; the var is bound in the body;
//   alloc      shape/strides are evaluated outside; the buffer is bound in the body;
//   kernel     grid/thread extents are evaluated outside; block and thread vars are bound for
//              the attrs and the body.
// Optionally (bind_attr_vars), an attribute map entry "vars" holding a list of variables
// (T.annotate_layout's index variables) binds them for the other entries of the same map.
#pragma once

#include <unordered_map>

#include "ir/stmt.h"

namespace tl {

class ScopeWalker {
 public:
  explicit ScopeWalker(bool bind_attr_vars = false) : bind_attr_vars_(bind_attr_vars) {}
  virtual ~ScopeWalker() = default;

  void walk_func(const PrimFunc& f);
  void walk_stmt(const Stmt& s);
  void walk_expr(const Expr& e);

 protected:
  // A use of a variable / buffer that no enclosing scope binds.
  virtual void on_free_var(const Var& v) {}
  virtual void on_free_buffer(const Buffer& b) {}
  // A load/store (is_region = false) or a tile-op region (true) with `n_indices` indices.
  virtual void on_access(const Buffer& b, size_t n_indices, bool is_region) {}
  // Called before / after a statement's children are walked.
  virtual void enter_stmt(const Stmt& s) {}
  virtual void exit_stmt(const Stmt& s) {}

  bool is_bound(const VarNode* v) const { return vars_.count(v) != 0; }
  bool is_bound(const BufferNode* b) const { return buffers_.count(b) != 0; }
  // The innermost statement being walked (nullptr at function level).
  const Stmt* current_stmt() const { return current_; }

 private:
  void bind(const Var& v) { ++vars_[v.get()]; }
  void unbind(const Var& v);
  void bind(const Buffer& b) { ++buffers_[b.get()]; }
  void unbind(const Buffer& b);
  void use(const Buffer& b);
  void walk_attrs(const AttrMap& m);
  void walk_attr(const Attr& a);
  void walk_buffer_decl(const Buffer& b);

  bool bind_attr_vars_;
  std::unordered_map<const VarNode*, int> vars_;
  std::unordered_map<const BufferNode*, int> buffers_;
  const Stmt* current_ = nullptr;
};

}  // namespace tl
