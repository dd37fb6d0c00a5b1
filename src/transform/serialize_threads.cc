#include "transform/serialize_threads.h"

#include <set>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/printer.h"

namespace tl {

namespace {

std::string at(const Stmt& s) { return s.span().prefix(); }

std::string first_line(const Stmt& s) {
  std::string text = print_stmt(s);
  size_t b = text.find_first_not_of(' ');
  text = text.substr(b == std::string::npos ? 0 : b);
  return text.substr(0, text.find('\n'));
}

bool is_barrier(const Stmt& s) {
  auto* ev = s.as<EvaluateNode>();
  auto* call = ev ? ev->value.as<CallNode>() : nullptr;
  return call && call->op == "tl.sync_threads";
}

// What a statement touches: thread variables, per-thread buffers, tile ops, nested barriers.
struct Uses {
  bool thread_var = false, private_buffer = false, tile_op = false, barrier = false;
};
Uses uses_of(const Stmt& s, const std::set<const VarNode*>& thread_vars,
             const std::set<const BufferNode*>& private_buffers) {
  Uses u;
  post_order_visit(s, [&](const Stmt& x) {
    // A tile op on per-thread buffers only (T.clear of a T.alloc_local) is per-thread code.
    if (auto* t = x.as<TileOpNode>()) {
      bool all_private = true;
      for (auto& a : t->args)
        if (a.is_region() && !private_buffers.count(a.region.buffer.get())) all_private = false;
      if (!all_private) u.tile_op = true;
    }
    if (is_barrier(x)) u.barrier = true;
    if (auto* st = x.as<BufferStoreNode>(); st && private_buffers.count(st->buffer.get())) u.private_buffer = true;
    if (auto* tile = x.as<TileOpNode>())
      for (auto& a : tile->args)
        if (a.is_region() && private_buffers.count(a.region.buffer.get())) u.private_buffer = true;
  });
  for_each_expr(s, [&](const Expr& e) {
    if (auto* v = e.as<VarNode>(); v && thread_vars.count(v)) u.thread_var = true;
    if (auto* l = e.as<BufferLoadNode>(); l && private_buffers.count(l->buffer.get())) u.private_buffer = true;
  });
  return u;
}

bool reads_no_memory(const Expr& e) {
  bool loads = false;
  for_each_expr(make_evaluate(e), [&](const Expr& x) { loads |= x.as<BufferLoadNode>() != nullptr || x.as<CallNode>() != nullptr; });
  return !loads;
}

// The shared buffers a statement reads and writes (a scalar atomic's destination is written).
struct SharedAccess {
  std::set<const BufferNode*> reads, writes;
  void merge(const SharedAccess& o) {
    reads.insert(o.reads.begin(), o.reads.end());
    writes.insert(o.writes.begin(), o.writes.end());
  }
  // True when running `later` after this for every thread needs a barrier in between on a GPU:
  // it reads what was written, or writes what was read or written.
  bool conflicts_with(const SharedAccess& later) const {
    for (const BufferNode* b : later.reads)
      if (writes.count(b)) return true;
    for (const BufferNode* b : later.writes)
      if (reads.count(b) || writes.count(b)) return true;
    return false;
  }
};
SharedAccess shared_accesses(const Stmt& s) {
  SharedAccess a;
  post_order_visit(s, [&](const Stmt& x) {
    if (auto* st = x.as<BufferStoreNode>(); st && st->buffer.scope() == MemScope::kShared) a.writes.insert(st->buffer.get());
  });
  for_each_expr(s, [&](const Expr& e) {
    if (auto* l = e.as<BufferLoadNode>(); l && l->buffer.scope() == MemScope::kShared) a.reads.insert(l->buffer.get());
    if (auto* c = e.as<CallNode>(); c && is_atomic_write_builtin(c->op) && !c->args.empty())
      if (auto* l = c->args[0].as<BufferLoadNode>(); l && l->buffer.scope() == MemScope::kShared)
        a.writes.insert(l->buffer.get());
  });
  return a;
}

// Rewrites accesses of per-thread buffers to their privatized copies, indexed by thread.
class Privatizer : public StmtMutator {
 public:
  Privatizer(const std::map<Buffer, Buffer, BufferLess>& copies, std::vector<Expr> thread_index)
      : copies_(copies), thread_index_(std::move(thread_index)) {}
  using StmtMutator::mutate;

 protected:
  Expr mutate_load(const BufferLoadNode* n, const Expr& e) override {
    std::vector<Expr> idx;
    bool changed = mutate_list(n->indices, &idx);
    auto it = copies_.find(n->buffer);
    if (it == copies_.end()) return changed ? make_load(n->buffer, std::move(idx)) : e;
    return make_load(it->second, indices(n->buffer, idx));
  }
  Stmt mutate_store(const BufferStoreNode* n, const Stmt& s) override {
    std::vector<Expr> idx;
    bool changed = mutate_list(n->indices, &idx);
    Expr v = mutate(n->value);
    auto it = copies_.find(n->buffer);
    if (it == copies_.end())
      return (changed || !v.same_as(n->value)) ? make_store(n->buffer, std::move(idx), v, n->span) : s;
    return make_store(it->second, indices(n->buffer, idx), v, n->span);
  }
  // A tile op on a per-thread buffer works on this thread's copy (extent 1 in the thread dims).
  Stmt mutate_tile_op(const TileOpNode* n, const Stmt& s) override {
    std::vector<TileArg> args;
    bool changed = false;
    for (const TileArg& a : n->args) {
      if (!a.is_region()) {
        Expr e = mutate(a.expr);
        changed = changed || !e.same_as(a.expr);
        args.emplace_back(e);
        continue;
      }
      BufferRegion r = mutate_region(a.region, &changed);
      auto it = copies_.find(r.buffer);
      if (it != copies_.end()) {
        std::vector<Range> rg;
        for (const Expr& t : thread_index_) rg.emplace_back(t, make_int(1, t.dtype()));
        rg.insert(rg.end(), r.region.begin(), r.region.end());
        r = BufferRegion(it->second, rg);
        changed = true;
      }
      args.emplace_back(r);
    }
    if (!changed) return s;
    return make_tile_op(n->op, std::move(args), n->attrs, n->span);
  }

 private:
  std::vector<Expr> indices(const Buffer& b, const std::vector<Expr>& idx) const {
    std::vector<Expr> out = thread_index_;
    if (idx.size() == b.ndim()) {
      out.insert(out.end(), idx.begin(), idx.end());
    } else {  // a flat index into a multi-dimensional buffer: unflatten it row-major
      std::vector<Expr> pos(b.ndim());
      Expr rest = idx[0];
      for (size_t d = b.ndim(); d-- > 0;) {
        pos[d] = d == 0 ? rest : floormod(rest, b.shape()[d]);
        rest = floordiv(rest, b.shape()[d]);
      }
      out.insert(out.end(), pos.begin(), pos.end());
    }
    return out;
  }
  const std::map<Buffer, Buffer, BufferLess>& copies_;
  std::vector<Expr> thread_index_;
};

class ThreadSerializer : public StmtMutator {
 public:
  using StmtMutator::mutate;

 protected:
  Stmt mutate_kernel(const KernelLaunchNode* n, const Stmt& s) override {
    std::set<const VarNode*> tvars;
    for (auto& v : n->thread_vars) tvars.insert(v.get());
    if (tvars.empty() || !uses_of(n->body, tvars, {}).thread_var) return s;
    kernel_ = n;
    Stmt body = rewrite_body(n->body, tvars);
    return make_kernel(n->grid, n->block_vars, n->threads, n->thread_vars, n->attrs, body, n->span);
  }

 private:
  // The copy of per-thread buffer `b` with one instance per thread (leading thread dimensions).
  Buffer per_thread_copy(const Buffer& b, const Stmt& where) const {
    std::vector<Expr> shape;
    for (auto& t : kernel_->threads) {
      if (!is_const_int(t))
        throw_error<NotImplemented>(at(where), "not implemented: per-thread buffer '", b.name(),
                                    "' with a run-time thread count on target cpu");
      shape.push_back(t);
    }
    for (auto& e : b.shape()) shape.push_back(e);
    return Buffer(b.name(), b.dtype(), shape, MemScope::kLocal, {}, b->span);
  }

  // Allocations in the kernel body's top-level statement list that follow other statements (a
  // T.alloc_* written after code, or a workspace the frontend allocates mid-body) are moved to
  // the front: the buffer is not used before its allocation, so the meaning is unchanged, and the
  // barriers after it stay top-level statements (and per-thread buffers get their copies).
  static Stmt hoist_allocations(const Stmt& s, std::vector<const AllocateNode*>* allocs) {
    if (auto* a = s.as<AllocateNode>()) {
      allocs->push_back(a);
      return hoist_allocations(a->body, allocs);
    }
    if (auto* seq = s.as<SeqStmtNode>()) {
      std::vector<Stmt> items;
      for (auto& item : seq->seq) {
        Stmt h = hoist_allocations(item, allocs);
        if (auto* inner = h.as<SeqStmtNode>()) items.insert(items.end(), inner->seq.begin(), inner->seq.end());
        else items.push_back(h);
      }
      return make_seq(items);
    }
    return s;
  }

  // Peels the leading allocations and block-level lets, then schedules the statements inside.
  Stmt rewrite_body(const Stmt& body_in, const std::set<const VarNode*>& tvars) {
    Stmt body = body_in;
    {
      std::vector<const AllocateNode*> allocs;
      Stmt flat = hoist_allocations(body_in, &allocs);
      for (auto it = allocs.rbegin(); it != allocs.rend(); ++it) flat = make_allocate((*it)->buffer, flat, (*it)->span);
      body = flat;
    }
    struct Peeled {
      Buffer alloc;  // or
      Var let_var;
      Expr let_value;
      Span span;
    };
    std::vector<Peeled> peeled;
    std::map<Buffer, Buffer, BufferLess> copies;
    Stmt rest = body;
    for (;;) {
      if (auto* a = rest.as<AllocateNode>()) {
        Buffer b = a->buffer;
        if (b.scope() == MemScope::kLocal || b.scope() == MemScope::kLocalVar) {
          Buffer copy = per_thread_copy(b, rest);
          copies[b] = copy;
          b = copy;
        }
        peeled.push_back({b, Var(), Expr(), rest.span()});
        rest = a->body;
        continue;
      }
      if (auto* l = rest.as<LetStmtNode>()) {
        std::set<const BufferNode*> priv;
        for (auto& [from, to] : copies) priv.insert(from.get());
        Uses u = uses_of(make_evaluate(l->value), tvars, priv);
        if (!u.thread_var && !u.private_buffer) {
          peeled.push_back({Buffer(), l->var, l->value, rest.span()});
          rest = l->body;
          continue;
        }
      }
      break;
    }
    std::set<const BufferNode*> priv;
    for (auto& [from, to] : copies) priv.insert(from.get());

    Stmt result = schedule(rest, tvars, priv, copies);
    for (auto it = peeled.rbegin(); it != peeled.rend(); ++it)
      result = it->alloc.defined() ? make_allocate(it->alloc, result, it->span)
                                   : make_let(it->let_var, it->let_value, result, it->span);
    return result;
  }

  // Schedules a statement list: runs of per-thread statements become thread loops, split at
  // barriers; block-level statements run once. A thread-dependent statement that holds a tile op
  // is scheduled inside when its own control (loop bounds, condition, let value) is the same for
  // every thread: the thread loops are pushed down to the per-thread statements within it (no
  // barrier is inside, so running them there for every thread is a valid schedule of the block).
  Stmt schedule(const Stmt& s, const std::set<const VarNode*>& tvars, const std::set<const BufferNode*>& priv,
                const std::map<Buffer, Buffer, BufferLess>& copies) {
    std::vector<Stmt> items;
    if (auto* seq = s.as<SeqStmtNode>()) items = seq->seq;
    else items.push_back(s);
    std::vector<Stmt> out, run;  // `run`: consecutive per-thread statements
    SharedAccess run_access;      // the shared memory `run` touches
    auto flush = [&]() {
      if (!run.empty()) out.push_back(thread_loops(make_seq(run), copies));
      run.clear();
      run_access = SharedAccess();
    };
    auto uniform = [&](const Expr& e) {
      Uses u = uses_of(make_evaluate(e), tvars, priv);
      return !u.thread_var && !u.private_buffer;
    };
    for (auto& item : items) {
      if (is_barrier(item)) {
        flush();
        continue;
      }
      Uses u = uses_of(item, tvars, priv);
      if (u.barrier && can_descend(item, uniform, copies, true)) {
        // A loop with the same bounds in every thread (or an if with the same condition, a
        // block-level let) holding a barrier: every thread reaches the barrier in the same
        // iteration, so it is scheduled inside, split at the barrier.
        flush();
        out.push_back(descend(item, tvars, priv, copies));
        continue;
      }
      if (u.barrier && item.as<LetStmtNode>() && reads_no_memory(item.as<LetStmtNode>()->value)) {
        // A per-thread let (`j = tx ^ mask`) around a barrier: its value reads no memory, so it
        // is recomputed wherever it is used (each thread's pieces on both sides of the barrier).
        auto* l = item.as<LetStmtNode>();
        flush();
        out.push_back(schedule(substitute(l->body, std::map<Var, Expr, VarLess>{{l->var, l->value}}), tvars, priv,
                               copies));
        continue;
      }
      if (u.barrier)
        throw_error<NotImplemented>(at(item), "not implemented: T.sync_threads() inside control flow (in `",
                                    first_line(item), "`) on target cpu; on cpu a barrier may only separate ",
                                    "top-level statements of the kernel body");
      if (!u.thread_var && !u.private_buffer) {
        flush();
        out.push_back(item);
        continue;
      }
      if (!u.tile_op) {
        // Shared memory written by one thread and used by another needs the barrier a GPU gets
        // from insert_thread_sync (TileLang inserts it as well): split the run there, or, for a
        // statement with uniform control that writes shared memory (a conflict may be inside it,
        // or between its loop iterations), schedule inside it.
        SharedAccess a = shared_accesses(item);
        if (!a.writes.empty() && can_descend(item, uniform, copies, true)) {
          flush();
          out.push_back(descend(item, tvars, priv, copies));
          continue;
        }
        if (run_access.conflicts_with(a)) flush();
        run.push_back(item);
        run_access.merge(a);
        continue;
      }
      // Per-thread code around a tile op.
      flush();
      if (can_descend(item, uniform, copies))
        out.push_back(descend(item, tvars, priv, copies));
      else
        throw_error<NotImplemented>(at(item), "not implemented: a tile op in code that depends on the thread ",
                                    "index (`", first_line(item), "`) on target cpu; tile ops are block-level ",
                                    "operations, keep them out of per-thread code");
    }
    flush();
    return make_seq(out);
  }

  // A compound statement whose own control (loop bounds, condition, let value) is the same for
  // every thread: its body can be scheduled inside it (thread loops around the per-thread
  // statements within), a valid schedule of the block.
  // (`no_loop_control`: refuse a loop holding a break/continue, which could end up inside the
  // thread loops placed in it.)
  template <typename Uniform>
  static bool can_descend(const Stmt& item, const Uniform& uniform, const std::map<Buffer, Buffer, BufferLess>& copies,
                          bool no_loop_control = false) {
    if (auto* f = item.as<ForNode>()) {
      bool control = false;
      if (no_loop_control)
        post_order_visit(f->body, [&](const Stmt& x) { control |= x.as<LoopControlNode>() != nullptr; });
      return !control && uniform(f->min) && uniform(f->extent);
    }
    if (auto* i = item.as<IfThenElseNode>()) return uniform(i->cond);
    if (auto* l = item.as<LetStmtNode>()) return uniform(l->value);
    if (auto* a = item.as<AllocateNode>()) return !copies.count(a->buffer);
    return item.as<AttrStmtNode>() || item.as<SeqStmtNode>();
  }

  Stmt descend(const Stmt& item, const std::set<const VarNode*>& tvars, const std::set<const BufferNode*>& priv,
               const std::map<Buffer, Buffer, BufferLess>& copies) {
    auto inner = [&](const Stmt& b) { return schedule(b, tvars, priv, copies); };
    if (auto* f = item.as<ForNode>())
      return make_for(f->var, f->min, f->extent, f->for_kind, inner(f->body), f->annotations, f->span);
    if (auto* i = item.as<IfThenElseNode>())
      return make_if(i->cond, inner(i->then_case), i->else_case.defined() ? inner(i->else_case) : Stmt(), i->span);
    if (auto* l = item.as<LetStmtNode>()) return make_let(l->var, l->value, inner(l->body), l->span);
    if (auto* a = item.as<AllocateNode>()) {
      const Buffer& b = a->buffer;
      if (b.scope() == MemScope::kLocal || b.scope() == MemScope::kLocalVar) {
        // A per-thread buffer allocated inside block-level control (a loop holding a barrier):
        // the thread loops placed inside need one instance per thread.
        Buffer copy = per_thread_copy(b, item);
        auto inner_copies = copies;
        inner_copies[b] = copy;
        auto inner_priv = priv;
        inner_priv.insert(b.get());
        return make_allocate(copy, schedule(a->body, tvars, inner_priv, inner_copies), a->span);
      }
      return make_allocate(b, inner(a->body), a->span);
    }
    if (auto* at_ = item.as<AttrStmtNode>()) return make_attr(at_->key, at_->value, inner(at_->body), at_->span);
    return inner(item);
  }

  // for tz, ty, tx (fresh variables) { body with the thread indices and per-thread buffers }.
  Stmt thread_loops(const Stmt& body, const std::map<Buffer, Buffer, BufferLess>& copies) {
    std::map<Var, Expr, VarLess> vmap;
    std::vector<Var> loop_vars;
    for (auto& tv : kernel_->thread_vars) {
      Var v(tv.name(), tv.dtype());
      loop_vars.push_back(v);
      vmap[tv] = v;
    }
    Stmt b = substitute(body, vmap);
    Privatizer p(copies, std::vector<Expr>(loop_vars.begin(), loop_vars.end()));
    b = p.mutate(b);
    for (size_t i = loop_vars.size(); i-- > 0;)
      b = make_for(loop_vars[i], make_int(0, loop_vars[i].dtype()), kernel_->threads[i], ForKind::kSerial, b);
    return b;
  }

  const KernelLaunchNode* kernel_ = nullptr;
};

}  // namespace

PrimFunc serialize_threads(const PrimFunc& f, const PassContext&) {
  ThreadSerializer s;
  Stmt body = s.mutate(f.body());
  return body.same_as(f.body()) ? f : f.with_body(body);
}

TL_REGISTER_PASS("serialize_threads", serialize_threads);

}  // namespace tl
