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
    if (x.as<TileOpNode>()) u.tile_op = true;
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
  // Peels the leading allocations and block-level lets, then schedules the statements inside.
  Stmt rewrite_body(const Stmt& body, const std::set<const VarNode*>& tvars) {
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
          std::vector<Expr> shape;
          for (auto& t : kernel_->threads) {
            if (!is_const_int(t))
              throw_error<NotImplemented>(at(rest), "not implemented: per-thread buffer '", b.name(),
                                          "' with a run-time thread count on target cpu");
            shape.push_back(t);
          }
          for (auto& e : b.shape()) shape.push_back(e);
          Buffer copy = Buffer(b.name(), b.dtype(), shape, MemScope::kLocal, {}, b->span);
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
    auto flush = [&]() {
      if (!run.empty()) out.push_back(thread_loops(make_seq(run), copies));
      run.clear();
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
        run.push_back(item);
        continue;
      }
      // Per-thread code around a tile op: descend through control that is uniform over threads.
      flush();
      auto inner = [&](const Stmt& b) { return schedule(b, tvars, priv, copies); };
      if (auto* f = item.as<ForNode>(); f && uniform(f->min) && uniform(f->extent)) {
        out.push_back(make_for(f->var, f->min, f->extent, f->for_kind, inner(f->body), f->annotations, f->span));
      } else if (auto* i = item.as<IfThenElseNode>(); i && uniform(i->cond)) {
        out.push_back(make_if(i->cond, inner(i->then_case), i->else_case.defined() ? inner(i->else_case) : Stmt(),
                              i->span));
      } else if (auto* l = item.as<LetStmtNode>(); l && uniform(l->value)) {
        out.push_back(make_let(l->var, l->value, inner(l->body), l->span));
      } else if (auto* a = item.as<AllocateNode>(); a && !copies.count(a->buffer)) {
        out.push_back(make_allocate(a->buffer, inner(a->body), a->span));
      } else if (auto* at_ = item.as<AttrStmtNode>()) {
        out.push_back(make_attr(at_->key, at_->value, inner(at_->body), at_->span));
      } else if (item.as<SeqStmtNode>()) {
        out.push_back(inner(item));
      } else {
        throw_error<NotImplemented>(at(item), "not implemented: a tile op in code that depends on the thread ",
                                    "index (`", first_line(item), "`) on target cpu; tile ops are block-level ",
                                    "operations, keep them out of per-thread code");
      }
    }
    flush();
    return make_seq(out);
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
