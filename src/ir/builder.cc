#include "ir/builder.h"

#include "ir/error.h"

namespace tl {

IRBuilder::IRBuilder() { frames_.push_back(Frame{FrameKind::kBody}); }

IRBuilder::Frame& IRBuilder::top() {
  if (frames_.empty()) throw_error<Error>("IRBuilder: no open frame (the function was already finished)");
  return frames_.back();
}

void IRBuilder::emit(Stmt s) {
  if (!s.defined()) return;
  top().items.push_back(Item{std::move(s)});
}

void IRBuilder::alloc(Buffer buffer) {
  Item it;
  it.alloc = std::move(buffer);
  it.span = span_;
  top().items.push_back(std::move(it));
}

void IRBuilder::let(Var var, Expr value) {
  Item it;
  it.let_var = std::move(var);
  it.let_value = std::move(value);
  it.span = span_;
  top().items.push_back(std::move(it));
}

void IRBuilder::enter_for(Var var, Expr min, Expr extent, ForKind kind, AttrMap annotations) {
  Frame f{FrameKind::kFor, span_};
  f.var = std::move(var);
  f.min = std::move(min);
  f.extent = std::move(extent);
  f.for_kind = kind;
  f.attrs = std::move(annotations);
  frames_.push_back(std::move(f));
}

void IRBuilder::enter_if(Expr cond) {
  Frame f{FrameKind::kIf, span_};
  f.cond = std::move(cond);
  frames_.push_back(std::move(f));
}

void IRBuilder::enter_else() {
  Frame& f = top();
  if (f.kind != FrameKind::kIf || f.in_else) throw_error<Error>("IRBuilder: else without an open if");
  f.then_case = fold(f.items);
  f.items.clear();
  f.in_else = true;
}

void IRBuilder::enter_attr(std::string key, Attr value) {
  Frame f{FrameKind::kAttr, span_};
  f.key = std::move(key);
  f.value = std::move(value);
  frames_.push_back(std::move(f));
}

void IRBuilder::enter_kernel(std::vector<Expr> grid, std::vector<Var> block_vars, std::vector<Expr> threads,
                             std::vector<Var> thread_vars, AttrMap attrs) {
  if (in_kernel()) throw_error<SyntaxError>("T.Kernel cannot be nested inside another T.Kernel");
  Frame f{FrameKind::kKernel, span_};
  f.grid = std::move(grid);
  f.block_vars = std::move(block_vars);
  f.threads = std::move(threads);
  f.thread_vars = std::move(thread_vars);
  f.attrs = std::move(attrs);
  frames_.push_back(std::move(f));
}

void IRBuilder::set_kernel_attr(const std::string& key, Attr value) {
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    if (it->kind == FrameKind::kKernel) {
      it->attrs[key] = std::move(value);
      return;
    }
  }
  throw_error<SyntaxError>("'", key, "' must be used inside a T.Kernel block");
}

void IRBuilder::set_kernel_dim(bool is_thread, size_t index, Expr extent, Var var) {
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    if (it->kind != FrameKind::kKernel) continue;
    auto& extents = is_thread ? it->threads : it->grid;
    auto& vars = is_thread ? it->thread_vars : it->block_vars;
    if (index > extents.size())
      throw_error<SyntaxError>("kernel ", is_thread ? "thread" : "grid", " dimension ", index,
                               " set before dimension ", extents.size());
    if (index == extents.size()) {
      extents.push_back(std::move(extent));
      vars.push_back(std::move(var));
    } else {
      extents[index] = std::move(extent);
      vars[index] = std::move(var);
    }
    return;
  }
  throw_error<SyntaxError>("a kernel dimension must be set inside a T.Kernel block");
}

void IRBuilder::enter_scope() { frames_.push_back(Frame{FrameKind::kScope, span_}); }

bool IRBuilder::in_kernel() const {
  for (auto& f : frames_)
    if (f.kind == FrameKind::kKernel) return true;
  return false;
}

Stmt IRBuilder::fold(std::vector<Item>& items) {
  std::vector<Stmt> tail;
  for (size_t i = items.size(); i-- > 0;) {
    Item& it = items[i];
    if (it.stmt.defined()) {
      tail.push_back(it.stmt);
      continue;
    }
    std::vector<Stmt> body(tail.rbegin(), tail.rend());
    Stmt b = make_seq(std::move(body));
    tail.clear();
    if (it.alloc.defined()) tail.push_back(make_allocate(it.alloc, b, it.span));
    else tail.push_back(make_let(it.let_var, it.let_value, b, it.span));
  }
  std::vector<Stmt> seq(tail.rbegin(), tail.rend());
  return make_seq(std::move(seq));
}

void IRBuilder::exit() {
  if (frames_.size() <= 1) throw_error<Error>("IRBuilder: exit() without an open frame");
  Frame f = std::move(frames_.back());
  frames_.pop_back();
  Stmt body = fold(f.items);
  Stmt s;
  switch (f.kind) {
    case FrameKind::kBody: throw_error<Error>("IRBuilder: cannot exit the body frame");
    case FrameKind::kScope: s = body; break;
    case FrameKind::kFor: s = make_for(f.var, f.min, f.extent, f.for_kind, body, std::move(f.attrs), f.span); break;
    case FrameKind::kIf:
      s = f.in_else ? make_if(f.cond, f.then_case, body, f.span) : make_if(f.cond, body, Stmt(), f.span);
      break;
    case FrameKind::kAttr: s = make_attr(f.key, f.value, body, f.span); break;
    case FrameKind::kKernel:
      s = make_kernel(std::move(f.grid), std::move(f.block_vars), std::move(f.threads), std::move(f.thread_vars),
                      std::move(f.attrs), body, f.span);
      break;
  }
  frames_.back().items.push_back(Item{std::move(s)});
}

bool IRBuilder::reopen_last_npu_kernel() {
  if (frames_.empty() || frames_.back().items.empty()) return false;
  const Item& last = frames_.back().items.back();
  auto* k = last.stmt.defined() ? last.stmt.as<KernelLaunchNode>() : nullptr;
  if (!k || !attr_bool(k->attrs, "is_npu", false)) return false;
  Frame f;
  f.kind = FrameKind::kKernel;
  f.span = k->span;
  f.grid = k->grid;
  f.block_vars = k->block_vars;
  f.threads = k->threads;
  f.thread_vars = k->thread_vars;
  f.attrs = k->attrs;
  f.items.push_back(Item{k->body});
  frames_.back().items.pop_back();
  frames_.push_back(std::move(f));
  return true;
}

Stmt IRBuilder::finish_stmt() {
  if (frames_.size() != 1)
    throw_error<Error>("IRBuilder: ", frames_.size() - 1, " frame(s) still open at the end of the function");
  Stmt body = fold(frames_.back().items);
  frames_.clear();
  return body;
}

PrimFunc IRBuilder::finish_func(std::string name, std::vector<Param> params, AttrMap attrs, Span span) {
  Stmt body = finish_stmt();
  return PrimFunc(std::move(name), std::move(params), std::move(body), std::move(attrs), std::move(span));
}

}  // namespace tl
