#include "target/cpu/fuse_elementwise_loops.h"

#include <map>
#include <set>

#include "arith/analyzer.h"
#include "arith/expr_order.h"
#include "ir/functor.h"
#include "ir/structural.h"
#include "target/cpu/stream_global_stores.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

using VarSet = std::set<const ExprNode*>;

bool uses_any(const Expr& e, const VarSet& vars) {
  bool found = false;
  for_each_subexpr(e, [&](const Expr& x) { found |= vars.count(x.get()) > 0; });
  return found;
}

bool has_load(const Expr& e) {
  bool found = false;
  for_each_subexpr(e, [&](const Expr& x) { found |= x.as<BufferLoadNode>() != nullptr; });
  return found;
}

// One access of a buffer: its index tuple, and whether it writes.
struct Access {
  std::vector<Expr> indices;
  bool write;
};
using AccessMap = std::map<Buffer, std::vector<Access>, BufferLess>;

// The accesses of a statement. A buffer reached any other way than a plain load or store (an
// impure call's operand such as tl.address_of, a tile op's region) is recorded as a write at no
// index tuple, so it conflicts with every access; `opaque` is set by statements a loop nest may
// not be moved across at all.
class AccessCollector : public IRVisitor {
 public:
  AccessMap accesses;
  bool opaque = false;

 protected:
  void visit_load(const BufferLoadNode* n) override {
    accesses[n->buffer].push_back({in_impure_ ? std::vector<Expr>{} : n->indices, in_impure_});
    IRVisitor::visit_load(n);
  }
  void visit_store(const BufferStoreNode* n) override {
    accesses[n->buffer].push_back({n->indices, true});
    IRVisitor::visit_store(n);
  }
  void visit_call(const CallNode* n) override {
    // The row reductions (lower_tile_ops_cpu.cc) only read their source (operand 1, the address of
    // its first element): a read of the whole buffer, so element-wise nests that only read it too
    // may move across them (attention's copy of the exponentiated scores, up to the exp2 nest).
    if ((n->op == "tl.cpu.reduce_row" || n->op == "tl.cpu.reduce_rows") && n->args.size() > 1) {
      const auto* addr = n->args[1].as<CallNode>();
      const auto* src = addr && addr->op == "tl.address_of" && addr->args.size() == 1
                            ? addr->args[0].as<BufferLoadNode>() : nullptr;
      if (src) {
        accesses[src->buffer].push_back({{}, false});
        for (auto& i : src->indices) visit(i);
        bool saved = in_impure_;
        in_impure_ = true;
        for (size_t a = 0; a < n->args.size(); ++a)
          if (a != 1) visit(n->args[a]);
        in_impure_ = saved;
        return;
      }
    }
    bool saved = in_impure_;
    if (!is_pure_call(n->op)) {
      in_impure_ = true;
      // A call that reaches memory other than through the loads among its operands (a handle, or
      // no buffer operand at all: an extern function, a barrier) may touch anything.
      bool loads = false;
      for (auto& a : n->args)
        for_each_subexpr(a, [&](const Expr& x) {
          loads |= x.as<BufferLoadNode>() != nullptr;
          if (x.as<VarNode>() && x.dtype().is_handle()) opaque = true;
        });
      opaque |= !loads;
    }
    IRVisitor::visit_call(n);
    in_impure_ = saved;
  }
  void visit_tile_op(const TileOpNode* n) override {
    opaque = true;
    IRVisitor::visit_tile_op(n);
  }
  void visit_attr(const AttrStmtNode* n) override {
    opaque = true;
    IRVisitor::visit_attr(n);
  }
  void visit_kernel(const KernelLaunchNode* n) override {
    opaque = true;
    IRVisitor::visit_kernel(n);
  }
  void visit_loop_control(const LoopControlNode*) override { opaque = true; }

 private:
  bool in_impure_ = false;
};

AccessMap accesses_of(const Stmt& s, bool* opaque) {
  AccessCollector c;
  c.visit(s);
  if (opaque) *opaque = c.opaque;
  return std::move(c.accesses);
}

bool writes(const std::vector<Access>& v) {
  for (auto& a : v)
    if (a.write) return true;
  return false;
}

// True when the two statements may run in either order: no buffer both touch where one writes.
bool independent(const AccessMap& a, const AccessMap& b) {
  for (auto& [buf, acc] : a) {
    auto it = b.find(buf);
    if (it != b.end() && (writes(acc) || writes(it->second))) return false;
  }
  return true;
}

// A perfect loop nest whose innermost body is element-wise work (stores, lets, ifs, pure
// expressions), or an empty nest when `s` is not one.
struct Nest {
  std::vector<const ForNode*> loops;
  Stmt body;
  bool valid() const { return !loops.empty(); }
};

bool plain_body(const Stmt& body) {
  bool ok = true;
  post_order_visit(body, [&](const Stmt& s) {
    switch (s.kind()) {
      case StmtKind::kSeq:
      case StmtKind::kLet:
      case StmtKind::kStore:
      case StmtKind::kIf: break;
      default: ok = false;
    }
  });
  if (!ok) return false;
  for_each_expr(body, [&](const Expr& e) { ok = ok && is_pure_expr(e); });
  return ok;
}

Nest as_nest(const Stmt& s) {
  Nest n;
  Stmt cur = s;
  VarSet vars;
  while (auto* f = cur.as<ForNode>()) {
    if (!f->annotations.empty() || has_load(f->min) || has_load(f->extent) || uses_any(f->min, vars) ||
        uses_any(f->extent, vars))
      return {};
    n.loops.push_back(f);
    vars.insert(f->var.get());
    cur = f->body;
  }
  if (n.loops.empty() || !plain_body(cur)) return {};
  n.body = cur;
  return n;
}

bool same_space(const Nest& a, const Nest& b) {
  if (a.loops.size() != b.loops.size()) return false;
  for (size_t d = 0; d < a.loops.size(); ++d) {
    auto *x = a.loops[d], *y = b.loops[d];
    if (x->var.dtype() != y->var.dtype() || !structural_equal(x->min, y->min) ||
        !structural_equal(x->extent, y->extent))
      return false;
  }
  return true;
}

ForKind fused_kind(ForKind a, ForKind b) { return a == b ? a : ForKind::kSerial; }

// A nest that only copies a block-local buffer into a global one, long enough for
// stream_global_stores to write it with non-temporal stores (a GEMM's C tile copy-out; in a function
// without GEMM calls, any row copy into a global buffer larger than the last-level cache): fused with
// the nest before it, the copy would no longer be a plain copy and would lose the streaming stores
// (measured +11-17% on the large bf16 / int8 GEMMs, docs/PERFORMANCE.md), so it is left alone.
bool streamed_copy(const Nest& n, bool large_outputs, int64_t min_output_bytes) {
  auto* st = n.body.as<BufferStoreNode>();
  if (!st || st->buffer.scope() != MemScope::kGlobal) return false;
  Expr v = st->value;
  if (auto* c = v.as<CastNode>()) v = c->value;
  auto* ld = v.as<BufferLoadNode>();
  if (!ld || ld->buffer.scope() == MemScope::kGlobal) return false;
  const int64_t bytes = st->buffer.dtype().bytes();
  int64_t total = bytes;
  for (auto* l : n.loops) {
    auto* e = l->extent.as<IntImmNode>();
    if (!e) return false;
    total *= e->value;
  }
  return stream_copy_wanted(n.loops.back()->extent.as<IntImmNode>()->value * bytes, total,
                            constant_buffer_bytes(st->buffer), large_outputs, min_output_bytes);
}

class Fuser : public StmtMutator {
 public:
  Fuser(bool keep_streamed, bool large_outputs, int64_t min_output_bytes)
      : keep_streamed_(keep_streamed), large_outputs_(large_outputs), min_output_bytes_(min_output_bytes) {}
  using StmtMutator::mutate;
  bool changed = false;

 protected:
  Stmt mutate_kernel(const KernelLaunchNode* n, const Stmt& s) override {
    auto scope = an_.bind_kernel_scoped(*n);
    return StmtMutator::mutate_kernel(n, s);
  }
  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    auto scope = an_.bind_scoped(n->var, Range(n->min, n->extent));
    return StmtMutator::mutate_for(n, s);
  }
  Stmt mutate_let(const LetStmtNode* n, const Stmt& s) override {
    auto scope = an_.bind_scoped(n->var, n->value);
    return StmtMutator::mutate_let(n, s);
  }
  Stmt mutate_seq(const SeqStmtNode* n, const Stmt& s) override {
    Stmt m = StmtMutator::mutate_seq(n, s);
    auto* seq = m.as<SeqStmtNode>();
    if (!seq) return m;
    std::vector<Stmt> stmts = seq->seq;
    bool any = false;
    for (size_t i = 0; i < stmts.size(); ++i) {
      for (size_t j = i + 1; j < stmts.size();) {
        Stmt fused = try_fuse(stmts, i, j);
        if (fused.defined()) {
          stmts[i] = fused;
          stmts.erase(stmts.begin() + static_cast<std::ptrdiff_t>(j));
          any = true;
          j = i + 1;  // the fused nest may now take in a nest it could not before
        } else {
          ++j;
        }
      }
    }
    if (!any) return m;
    changed = true;
    return make_seq(std::move(stmts), m.span());
  }

 private:
  // The fused nest of stmts[i] and stmts[j] (stmts[j] moved up across those between), or an
  // undefined statement when that is not provably legal.
  Stmt try_fuse(const std::vector<Stmt>& stmts, size_t i, size_t j) {
    Nest a = as_nest(stmts[i]), b = as_nest(stmts[j]);
    if (!a.valid() || !b.valid() || !same_space(a, b)) return {};
    if (keep_streamed_ && (streamed_copy(a, large_outputs_, min_output_bytes_) ||
                           streamed_copy(b, large_outputs_, min_output_bytes_)))
      return {};
    std::map<Var, Expr, VarLess> rename;
    for (size_t d = 0; d < a.loops.size(); ++d) rename[b.loops[d]->var] = a.loops[d]->var;
    Stmt b_body = substitute(b.body, rename);
    AccessMap acc_a = accesses_of(a.body, nullptr), acc_b = accesses_of(b_body, nullptr);
    for (auto& [buf, va] : acc_a) {
      auto it = acc_b.find(buf);
      if (it == acc_b.end() || !(writes(va) || writes(it->second))) continue;
      if (!one_to_one_everywhere(buf, va, it->second, a)) return {};
    }
    AccessMap moved = accesses_of(stmts[j], nullptr);
    for (size_t k = i + 1; k < j; ++k) {
      bool opaque = false;
      AccessMap between = accesses_of(stmts[k], &opaque);
      if (opaque || !independent(between, moved)) return {};
    }
    Stmt body = make_seq({a.body, b_body});
    for (size_t d = a.loops.size(); d-- > 0;) {
      auto *x = a.loops[d], *y = b.loops[d];
      body = make_for(x->var, x->min, x->extent, fused_kind(x->for_kind, y->for_kind), body, {}, x->span);
    }
    return body;
  }

  // Every access in `va` and `vb` is at one index tuple that maps the nest's iterations to
  // distinct elements inside the buffer.
  bool one_to_one_everywhere(const Buffer& buf, const std::vector<Access>& va, const std::vector<Access>& vb,
                             const Nest& nest) {
    const std::vector<Expr>* t = nullptr;
    for (auto* v : {&va, &vb})
      for (auto& acc : *v) {
        if (acc.indices.empty()) return false;  // an opaque use
        if (!t) {
          t = &acc.indices;
          continue;
        }
        if (acc.indices.size() != t->size()) return false;
        for (size_t d = 0; d < t->size(); ++d)
          if (!structural_equal(acc.indices[d], (*t)[d])) return false;
      }
    return t && one_to_one(buf, *t, nest);
  }

  bool one_to_one(const Buffer& buf, const std::vector<Expr>& t, const Nest& nest) {
    // Explicit strides may overlap rows (a stride of 0 broadcasts): only dense buffers.
    if (!buf->strides.empty() || t.size() != buf.ndim() || t.size() != nest.loops.size()) return false;
    VarSet nest_vars;
    for (auto* l : nest.loops) nest_vars.insert(l->var.get());
    std::set<const ExprNode*> used;
    for (size_t d = 0; d < t.size(); ++d) {
      if (has_load(t[d]) || !t[d].dtype().is_int()) return false;
      const ForNode* loop = nullptr;
      for (auto* l : nest.loops) {
        VarSet one{l->var.get()};
        if (uses_any(t[d], one)) {
          if (loop) return false;  // two loop variables in one index
          loop = l;
        }
      }
      if (!loop || !used.insert(loop->var.get()).second) return false;
      // The index is the loop variable plus an offset that does not depend on the nest.
      Expr offset = an_.simplify(make_binary(BinOp::kSub, t[d], make_cast(t[d].dtype(), loop->var)));
      if (uses_any(offset, nest_vars)) return false;
      Expr lo = make_binary(BinOp::kAdd, make_cast(t[d].dtype(), loop->min), offset);
      Expr hi = make_binary(BinOp::kAdd, lo, make_cast(t[d].dtype(), loop->extent));
      Expr dim = make_cast(t[d].dtype(), buf.shape()[d]);
      if (!an_.can_prove(make_binary(BinOp::kGE, lo, make_int(0, t[d].dtype()))) ||
          !an_.can_prove(make_binary(BinOp::kLE, hi, dim)))
        return false;
    }
    return used.size() == nest.loops.size();
  }

  Analyzer an_;
  bool keep_streamed_;
  bool large_outputs_;  // no GEMM calls in the function: large global outputs stream (stream_global_stores)
  int64_t min_output_bytes_;
};

// ---- Scalarization of block-local buffers that live inside one iteration.

class UseCounter : public IRVisitor {
 public:
  struct Uses {
    int loads = 0, stores = 0;
    bool opaque = false;
  };
  std::map<Buffer, Uses, BufferLess> uses;
  std::set<Buffer, BufferLess> allocated;

 protected:
  void visit_load(const BufferLoadNode* n) override {
    auto& u = uses[n->buffer];
    ++u.loads;
    if (in_impure_) u.opaque = true;
    IRVisitor::visit_load(n);
  }
  void visit_store(const BufferStoreNode* n) override {
    ++uses[n->buffer].stores;
    IRVisitor::visit_store(n);
  }
  void visit_call(const CallNode* n) override {
    bool saved = in_impure_;
    in_impure_ |= !is_pure_call(n->op);
    IRVisitor::visit_call(n);
    in_impure_ = saved;
  }
  void visit_tile_op(const TileOpNode* n) override {
    // Buffers named by a tile op are used in ways this pass does not model.
    for (auto& a : n->args)
      if (a.is_region()) uses[a.region.buffer].opaque = true;
    IRVisitor::visit_tile_op(n);
  }
  void visit_allocate(const AllocateNode* n) override {
    allocated.insert(n->buffer);
    IRVisitor::visit_allocate(n);
  }
  // A buffer named by an attribute (a layout annotation, a pass's marker) keeps its shape.
  void visit_attr_buffer(const Buffer& b) override { uses[b].opaque = true; }

 private:
  bool in_impure_ = false;
};

bool block_local(const Buffer& b) { return is_block_local(b.scope()); }

// Finds one buffer to scalarize and its stored index tuple, or nothing.
class ScalarCandidate : public IRVisitor {
 public:
  ScalarCandidate(const UseCounter& c) : c_(c) {}
  Buffer found;

 protected:
  void visit_for(const ForNode* n) override {
    if (!found.defined() && plain_body(n->body)) consider(n->body);
    IRVisitor::visit_for(n);
  }

 private:
  void consider(const Stmt& body) {
    std::vector<Stmt> top;
    if (auto* s = body.as<SeqStmtNode>())
      top = s->seq;
    else
      top = {body};
    for (size_t k = 0; k < top.size() && !found.defined(); ++k) {
      auto* st = top[k].as<BufferStoreNode>();
      if (!st || !block_local(st->buffer) || !c_.allocated.count(st->buffer)) continue;
      auto it = c_.uses.find(st->buffer);
      if (it == c_.uses.end() || it->second.opaque || it->second.stores != 1 || it->second.loads == 0) continue;
      bool idx_ok = true;
      for (auto& i : st->indices) idx_ok = idx_ok && !has_load(i);
      if (!idx_ok) continue;
      // No load of the buffer up to and including the store; every later one at the stored tuple.
      int before = 0, after = 0;
      bool same = true;
      for (size_t q = 0; q < top.size(); ++q)
        for_each_expr(top[q], [&](const Expr& e) {
          auto* ld = e.as<BufferLoadNode>();
          if (!ld || !ld->buffer.same_as(st->buffer)) return;
          if (q <= k) {
            ++before;
            return;
          }
          ++after;
          if (ld->indices.size() != st->indices.size()) {
            same = false;
            return;
          }
          for (size_t d = 0; d < ld->indices.size(); ++d) same = same && structural_equal(ld->indices[d], st->indices[d]);
        });
      if (before == 0 && same && after == it->second.loads) found = st->buffer;
    }
  }
  const UseCounter& c_;
};

// Replaces `from` by the one-element `to` in its allocation, stores and loads.
class Scalarize : public StmtMutator {
 public:
  Scalarize(Buffer from, Buffer to) : from_(std::move(from)), to_(std::move(to)) {}
  using StmtMutator::mutate;

 protected:
  Expr mutate_load(const BufferLoadNode* n, const Expr& e) override {
    if (!n->buffer.same_as(from_)) return StmtMutator::mutate_load(n, e);
    return make_load(to_, {make_int(0)});
  }
  Stmt mutate_store(const BufferStoreNode* n, const Stmt& s) override {
    if (!n->buffer.same_as(from_)) return StmtMutator::mutate_store(n, s);
    return make_store(to_, {make_int(0)}, mutate(n->value), n->span);
  }
  Stmt mutate_allocate(const AllocateNode* n, const Stmt& s) override {
    if (!n->buffer.same_as(from_)) return StmtMutator::mutate_allocate(n, s);
    return make_allocate(to_, mutate(n->body), n->span);
  }

 private:
  Buffer from_, to_;
};

Stmt scalarize_locals(Stmt body) {
  for (;;) {
    UseCounter c;
    c.visit(body);
    ScalarCandidate cand(c);
    cand.visit(body);
    if (!cand.found.defined()) return body;
    const Buffer& b = cand.found;
    Buffer scalar(b.name(), b.dtype(), {make_int(1)}, MemScope::kLocalVar, {}, b->span);
    body = Scalarize(b, scalar).mutate(body);
  }
}

}  // namespace

PrimFunc fuse_elementwise_loops(const PrimFunc& f, const PassContext& ctx) {
  if (config_bool(ctx.configs, "tl.disable_cpu_loop_fusion")) return f;
  Fuser fuser(!config_bool(ctx.configs, "tl.disable_cpu_stream_stores"), !calls_cpu_gemm(f.body()),
              stream_min_output_bytes(ctx.configs));
  Stmt body = fuser.mutate(f.body());
  if (fuser.changed) body = scalarize_locals(body);
  return body.same_as(f.body()) ? f : f.with_body(body);
}

TL_REGISTER_PASS("fuse_elementwise_loops", fuse_elementwise_loops);

}  // namespace tl
