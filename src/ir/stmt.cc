#include "ir/stmt.h"

#include <set>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/printer.h"

namespace tl {

const char* for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::kSerial: return "serial";
    case ForKind::kParallel: return "parallel";
    case ForKind::kVectorized: return "vectorized";
    case ForKind::kUnrolled: return "unrolled";
    case ForKind::kPipelined: return "pipelined";
    case ForKind::kPersistent: return "persistent";
  }
  return "?";
}

ForKind parse_for_kind(const std::string& s) {
  for (ForKind k : {ForKind::kSerial, ForKind::kParallel, ForKind::kVectorized, ForKind::kUnrolled,
                    ForKind::kPipelined, ForKind::kPersistent})
    if (s == for_kind_name(k)) return k;
  throw_error<ValueError>("unknown loop kind '", s, "'");
}

Stmt make_seq(std::vector<Stmt> stmts, Span span) {
  std::vector<Stmt> flat;
  flat.reserve(stmts.size());
  for (auto& s : stmts) {
    if (!s.defined()) continue;
    if (auto* seq = s.as<SeqStmtNode>()) {
      for (auto& c : seq->seq) flat.push_back(c);
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  return Stmt(std::make_shared<SeqStmtNode>(std::move(flat), std::move(span)));
}

Stmt make_nop() { return Stmt(std::make_shared<SeqStmtNode>(std::vector<Stmt>{}, Span{})); }
bool is_nop(const Stmt& s) {
  if (!s.defined()) return true;
  auto* seq = s.as<SeqStmtNode>();
  return seq && seq->seq.empty();
}

static Stmt body_or_nop(Stmt s) { return s.defined() ? std::move(s) : make_nop(); }

Stmt make_evaluate(Expr value, Span span) {
  if (!value.defined()) throw_error<TypeError>("evaluate of an undefined expression");
  return Stmt(std::make_shared<EvaluateNode>(std::move(value), std::move(span)));
}

Stmt make_let(Var var, Expr value, Stmt body, Span span) {
  if (!var.defined() || !value.defined()) throw_error<TypeError>("let with undefined variable or value");
  if (var.dtype() != value.dtype())
    throw_error<TypeError>("let ", var.name(), ": variable has type ", var.dtype().str(), " but value has type ",
                           value.dtype().str());
  return Stmt(std::make_shared<LetStmtNode>(std::move(var), std::move(value), body_or_nop(std::move(body)),
                                            std::move(span)));
}

Stmt make_store(Buffer buffer, std::vector<Expr> indices, Expr value, Span span) {
  if (!buffer.defined() || !value.defined()) throw_error<TypeError>("store with undefined buffer or value");
  if (indices.size() != buffer.ndim() && indices.size() != 1)
    throw_error<TypeError>("buffer '", buffer.name(), "' has ", buffer.ndim(), " dimensions but the store has ",
                           indices.size(), " indices");
  int lanes = 1;
  for (auto& i : indices) {
    if (!i.dtype().is_integer()) throw_error<TypeError>("index into buffer '", buffer.name(), "' must be an integer");
    lanes = std::max<int>(lanes, i.dtype().lanes);
  }
  DataType want = buffer.dtype().with_lanes(lanes);
  if (value.dtype() != want) value = make_cast(want, value);
  return Stmt(std::make_shared<BufferStoreNode>(std::move(buffer), std::move(indices), std::move(value),
                                                std::move(span)));
}

Stmt make_for(Var var, Expr min, Expr extent, ForKind kind, Stmt body, AttrMap annotations, Span span) {
  if (!var.defined() || !min.defined() || !extent.defined()) throw_error<TypeError>("for loop with undefined parts");
  if (!var.dtype().is_integer()) throw_error<TypeError>("loop variable ", var.name(), " must be an integer");
  if (!extent.dtype().is_integer()) throw_error<TypeError>("loop extent must be an integer expression");
  if (min.dtype() != var.dtype()) min = make_cast(var.dtype(), min);
  if (extent.dtype() != var.dtype()) extent = make_cast(var.dtype(), extent);
  return Stmt(std::make_shared<ForNode>(std::move(var), std::move(min), std::move(extent), kind,
                                        std::move(annotations), body_or_nop(std::move(body)), std::move(span)));
}

Stmt make_if(Expr cond, Stmt then_case, Stmt else_case, Span span) {
  if (!cond.defined()) throw_error<TypeError>("if with undefined condition");
  if (!cond.dtype().is_bool()) cond = make_binary(BinOp::kNE, cond, make_int(0, cond.dtype()));
  if (else_case.defined() && is_nop(else_case)) else_case = Stmt();
  return Stmt(std::make_shared<IfThenElseNode>(std::move(cond), body_or_nop(std::move(then_case)),
                                               std::move(else_case), std::move(span)));
}

Stmt make_allocate(Buffer buffer, Stmt body, Span span) {
  if (!buffer.defined()) throw_error<TypeError>("allocate of an undefined buffer");
  if (buffer.scope() == MemScope::kGlobal)
    throw_error<TypeError>("buffer '", buffer.name(), "': allocations inside a kernel cannot be global");
  return Stmt(std::make_shared<AllocateNode>(std::move(buffer), body_or_nop(std::move(body)), std::move(span)));
}

Stmt make_attr(std::string key, Attr value, Stmt body, Span span) {
  return Stmt(std::make_shared<AttrStmtNode>(std::move(key), std::move(value), body_or_nop(std::move(body)),
                                             std::move(span)));
}

Stmt make_kernel(std::vector<Expr> grid, std::vector<Var> block_vars, std::vector<Expr> threads,
                 std::vector<Var> thread_vars, AttrMap attrs, Stmt body, Span span) {
  if (grid.size() != block_vars.size())
    throw_error<TypeError>("kernel: ", grid.size(), " grid extents but ", block_vars.size(), " block variables");
  if (threads.size() != thread_vars.size())
    throw_error<TypeError>("kernel: ", threads.size(), " thread extents but ", thread_vars.size(), " thread variables");
  for (auto& g : grid)
    if (!g.defined() || !g.dtype().is_integer()) throw_error<TypeError>("kernel grid extents must be integers");
  return Stmt(std::make_shared<KernelLaunchNode>(std::move(grid), std::move(block_vars), std::move(threads),
                                                 std::move(thread_vars), std::move(attrs),
                                                 body_or_nop(std::move(body)), std::move(span)));
}

Stmt make_tile_op(std::string op, std::vector<TileArg> args, AttrMap attrs, Span span) {
  for (auto& a : args)
    if (!a.is_region() && !a.is_expr()) throw_error<TypeError>("tile op '", op, "': undefined argument");
  return Stmt(std::make_shared<TileOpNode>(std::move(op), std::move(args), std::move(attrs), std::move(span)));
}

Stmt make_loop_control(bool is_break, Span span) {
  return Stmt(std::make_shared<LoopControlNode>(is_break, std::move(span)));
}

PrimFunc::PrimFunc(std::string name, std::vector<Param> params, Stmt body, AttrMap attrs, Span span) {
  std::set<std::string> names;
  for (auto& p : params) {
    if (!p.is_buffer() && !p.var.defined()) throw_error<TypeError>("parameter '", p.name, "' is neither tensor nor scalar");
    if (!names.insert(p.name).second) throw_error<TypeError>("duplicate parameter name '", p.name, "'");
  }
  auto n = std::make_shared<PrimFuncNode>();
  n->name = std::move(name);
  n->params = std::move(params);
  n->body = body_or_nop(std::move(body));
  n->attrs = std::move(attrs);
  n->span = std::move(span);
  node_ = std::move(n);
}

PrimFunc PrimFunc::with_body(Stmt body) const {
  auto n = std::make_shared<PrimFuncNode>(*node_);
  n->body = std::move(body);
  return PrimFunc(std::move(n));
}
PrimFunc PrimFunc::with_attrs(AttrMap attrs) const {
  auto n = std::make_shared<PrimFuncNode>(*node_);
  n->attrs = std::move(attrs);
  return PrimFunc(std::move(n));
}
PrimFunc PrimFunc::with_attr(const std::string& key, Attr value) const {
  auto a = node_->attrs;
  a[key] = std::move(value);
  return with_attrs(std::move(a));
}

std::vector<Var> PrimFunc::dynamic_vars() const {
  std::vector<Var> out;
  std::set<const VarNode*> seen;
  auto collect = [&](const Expr& e) {
    for_each_subexpr(e, [&](const Expr& x) {
      if (auto* v = x.as<VarNode>())
        if (seen.insert(v).second) out.push_back(Var(std::static_pointer_cast<const VarNode>(x.node())));
    });
  };
  for (auto& p : node_->params) {
    if (!p.is_buffer()) continue;
    for (auto& e : p.buffer.shape()) collect(e);
    for (auto& e : p.buffer->strides) collect(e);
  }
  return out;
}

std::string to_string(const Stmt& s) { return print_stmt(s); }

}  // namespace tl
