// IRBuilder: builds a function body from a stream of frame operations. The Python frontend walks
// the kernel's AST and drives it (src/bindings/builder_bind.cc); C++ tests use it too.
//
//   b.enter_kernel(...);             // with T.Kernel(...)
//     b.alloc(A_s);                  // A_s = T.alloc_shared(...): wraps the rest of the frame
//     b.enter_for(k, 0, n, kSerial); //   for k in T.serial(n):
//       b.emit(copy_stmt);
//     b.exit();
//   b.exit();
//   PrimFunc f = b.finish_func("main", params, attrs);
#pragma once

#include <vector>

#include "ir/stmt.h"

namespace tl {

class IRBuilder {
 public:
  IRBuilder();

  // The span given to every statement and buffer created until the next call.
  void set_span(Span span) { span_ = std::move(span); }
  const Span& span() const { return span_; }

  void emit(Stmt s);
  // Binds for the rest of the current frame.
  void alloc(Buffer buffer);
  void let(Var var, Expr value);

  void enter_for(Var var, Expr min, Expr extent, ForKind kind, AttrMap annotations = {});
  void enter_if(Expr cond);
  // Closes the then-branch of the innermost if frame and opens its else-branch.
  void enter_else();
  void enter_attr(std::string key, Attr value);
  void enter_kernel(std::vector<Expr> grid, std::vector<Var> block_vars, std::vector<Expr> threads,
                    std::vector<Var> thread_vars, AttrMap attrs);
  // Sets an attribute of the innermost enclosing T.Kernel (e.g. T.use_swizzle's panel).
  void set_kernel_attr(const std::string& key, Attr value);
  // Sets grid dimension `index` (is_thread false) or thread dimension `index` of the innermost
  // enclosing T.Kernel to `extent` bound to `var`; the dimensions below it must exist. Used by
  // TVM-style `for v in T.thread_binding(n, thread="blockIdx.y")` loops, which open a kernel and
  // add its dimensions one loop at a time.
  void set_kernel_dim(bool is_thread, size_t index, Expr extent, Var var);
  // A plain scope (a macro body, a `with` that only groups): statements are emitted in place.
  void enter_scope();
  // Closes the innermost frame and emits what it built into its parent.
  void exit();
  // Reopens the T.Kernel the current frame ended with, when it is an NPU kernel (attribute is_npu),
  // so that statements written after it (TileLang-Ascend's T.printf / T.dump_tensor there) join
  // the end of its body; exit() closes it again. False, changing nothing, otherwise.
  bool reopen_last_npu_kernel();

  // Number of open frames, the function body frame included.
  size_t depth() const { return frames_.size(); }
  // True when inside a T.Kernel frame.
  bool in_kernel() const;

  // Closes the body frame and returns the function. All other frames must be closed.
  PrimFunc finish_func(std::string name, std::vector<Param> params, AttrMap attrs = {}, Span span = {});
  // Closes the body frame and returns the statement it built (for tests / macros).
  Stmt finish_stmt();

 private:
  enum class FrameKind { kBody, kScope, kFor, kIf, kAttr, kKernel };
  struct Item {
    Stmt stmt;      // a statement, or
    Buffer alloc;   // a buffer bound for the rest of the frame, or
    Var let_var;    // a let binding for the rest of the frame
    Expr let_value;
    Span span;
  };
  struct Frame {
    FrameKind kind;
    Span span;
    std::vector<Item> items;
    // kFor
    Var var;
    Expr min, extent;
    ForKind for_kind = ForKind::kSerial;
    AttrMap attrs;
    // kIf
    Expr cond;
    bool in_else = false;
    Stmt then_case;
    // kAttr
    std::string key;
    Attr value;
    // kKernel
    std::vector<Expr> grid, threads;
    std::vector<Var> block_vars, thread_vars;
  };
  static Stmt fold(std::vector<Item>& items);
  Frame& top();

  std::vector<Frame> frames_;
  Span span_;
};

}  // namespace tl
