#include "transform/insert_thread_sync.h"

#include <map>
#include <set>

#include "ir/error.h"
#include "ir/functor.h"
#include "transform/pass_config.h"
#include "transform/thread_uniformity.h"

namespace tl {

namespace {

struct ByteRange {
  int64_t lo = 0, hi = 0;  // [lo, hi)
};

struct Access {
  const BufferNode* buffer;
  bool write;
  int64_t group = -1;  // the instance of the cuda.group (one lowered tile op / T.Parallel) it came from
};

// Global memory: two tile ops of a block may map the same element to different threads (each
// T.Parallel gets its own thread mapping), so a read after a write (or a write after a read) of
// a global buffer by a later tile op needs a barrier, as in shared memory. Plain writes after
// writes are not ordered (a tile op stores each element once; persistent loops store a new tile
// per iteration), atomics count as a read and a write.
bool is_global(const BufferNode* b) { return b->scope == MemScope::kGlobal; }

struct AccessLess {
  bool operator()(const Access& a, const Access& b) const {
    if (a.buffer != b.buffer) return a.buffer < b.buffer;
    if (a.write != b.write) return a.write < b.write;
    return a.group < b.group;
  }
};

struct State {
  std::set<Access, AccessLess> pending;  // accesses since the last barrier (a set: merges stay small)
  // cp.async writes not yet waited for: the open group (issued since the last commit) and the
  // committed groups, oldest first; cp_async_wait(n) completes all but the newest n groups.
  std::set<Access, AccessLess> open_group;
  std::vector<std::set<Access, AccessLess>> groups;
  void merge(const State& o) {
    pending.insert(o.pending.begin(), o.pending.end());
    open_group.insert(o.open_group.begin(), o.open_group.end());
    // Aligned at the newest group (a wait counts groups from the newest); the longer history stays.
    if (o.groups.size() > groups.size()) groups.insert(groups.begin(), o.groups.size() - groups.size(), {});
    for (size_t k = 0; k < o.groups.size(); ++k) {
      const auto& src = o.groups[o.groups.size() - 1 - k];
      groups[groups.size() - 1 - k].insert(src.begin(), src.end());
    }
  }
};

struct StmtEffects {
  std::vector<Access> reads, writes, async_writes;
  bool barrier = false;       // tl.sync_threads
  bool syncing_call = false;  // cuda.call_sync
  int64_t async_wait = -1;    // cuda.cp_async_wait(n): n
  bool async_commit = false;  // cuda.cp_async_commit
};

bool is_shared(const Buffer& b) { return b.scope() == MemScope::kShared; }
bool is_tracked(const Buffer& b) { return b.scope() == MemScope::kShared || b.scope() == MemScope::kGlobal; }

class SyncInserter {
 public:
  SyncInserter(std::map<const BufferNode*, ByteRange> ranges, std::set<const VarNode*> varying,
               std::set<const BufferNode*> varying_buffers)
      : ranges_(std::move(ranges)), varying_(std::move(varying)), varying_buffers_(std::move(varying_buffers)) {}

  Stmt run(const Stmt& body) {
    State st;
    return visit(body, st);
  }

 private:
  bool overlap(const BufferNode* a, const BufferNode* b) const {
    if (a == b) return true;
    auto ia = ranges_.find(a), ib = ranges_.find(b);
    if (ia == ranges_.end() || ib == ranges_.end()) return false;
    return ia->second.lo < ib->second.hi && ib->second.lo < ia->second.hi;
  }

  // Shared- and global-memory effects of a statement, not descending into nested statements (leaf use).
  StmtEffects effects(const Stmt& s) const {
    StmtEffects e;
    // Walks an expression; the load under cuda.address_of names an address, not a read (its
    // mode says how the callee uses it).
    std::function<void(const Expr&)> add_expr = [&](const Expr& x) {
      if (!x.defined()) return;
      if (const auto* c = x.as<CallNode>()) {
        if (c->op == "tl.sync_threads" || c->op == "cuda.sync_all" || c->op == "tl.cluster_sync") e.barrier = true;
        // mbarrier operations synchronize (their words are not data), and TMA writes are ordered
        // by the mbarriers (warp_specialize), not by __syncthreads.
        if (c->op.rfind("cuda.mbarrier_", 0) == 0 || c->op == "cuda.tma_load" || c->op == "cuda.fence_barrier_init" ||
            c->op.rfind("cuda.named_barrier_", 0) == 0)
          return;
        // A TMA store reads its shared source (thread 0, after the barrier its lowering puts
        // before it); its tensor argument names the map, not a read.
        if (c->op == "cuda.tma_store") return add_expr(c->args[1]);
        if (c->op == "cuda.call_sync") e.syncing_call = true;
        if (c->op == "cuda.cp_async_wait") {
          e.async_wait = 0;
          if (!c->args.empty()) is_const_int(c->args[0], &e.async_wait);
        }
        if (c->op == "cuda.cp_async_commit") e.async_commit = true;
        if (c->op == "cuda.address_of" && !c->args.empty()) {
          const auto* l = c->args[0].as<BufferLoadNode>();
          int64_t mode = 3;
          if (c->args.size() > 1) is_const_int(c->args[1], &mode);
          if (l) {
            if (is_tracked(l->buffer)) {
              if (mode & 2) e.writes.push_back({l->buffer.get(), true});
              if (mode & 1) e.reads.push_back({l->buffer.get(), false});
            }
            for (const Expr& i : l->indices) add_expr(i);
          }
          return;
        }
        // A scalar atomic (T.atomic_add(S[i], v) on shared or global memory) writes its element
        // too (its read is the load of the first argument).
        if (is_atomic_write_builtin(c->op) && !c->args.empty())
          if (const auto* l = c->args[0].as<BufferLoadNode>(); l && is_tracked(l->buffer))
            e.writes.push_back({l->buffer.get(), true});
        if (c->op == "cuda.cp_async" && !c->args.empty()) {
          if (const auto* a = c->args[0].as<CallNode>())
            if (const auto* l = a->args.empty() ? nullptr : a->args[0].as<BufferLoadNode>())
              if (is_shared(l->buffer)) e.async_writes.push_back({l->buffer.get(), true});
        }
        for (const Expr& a : c->args) add_expr(a);
        return;
      }
      if (const auto* l = x.as<BufferLoadNode>()) {
        if (is_tracked(l->buffer)) e.reads.push_back({l->buffer.get(), false});
        for (const Expr& i : l->indices) add_expr(i);
        return;
      }
      if (const auto* b = x.as<BinaryNode>()) {
        add_expr(b->a);
        add_expr(b->b);
      } else if (const auto* u = x.as<UnaryNode>()) {
        add_expr(u->a);
      } else if (const auto* se = x.as<SelectNode>()) {
        add_expr(se->cond);
        add_expr(se->true_value);
        add_expr(se->false_value);
      } else if (const auto* ca = x.as<CastNode>()) {
        add_expr(ca->value);
      } else if (const auto* r = x.as<RampNode>()) {
        add_expr(r->base);
        add_expr(r->stride);
      } else if (const auto* bc = x.as<BroadcastNode>()) {
        add_expr(bc->value);
      }
    };
    if (const auto* st = s.as<BufferStoreNode>()) {
      if (is_tracked(st->buffer)) e.writes.push_back({st->buffer.get(), true});
      for (const Expr& i : st->indices) add_expr(i);
      add_expr(st->value);
    } else if (const auto* ev = s.as<EvaluateNode>()) {
      add_expr(ev->value);
    }
    // cp.async destinations are listed as address_of writes too: keep them asynchronous only.
    if (!e.async_writes.empty()) {
      std::vector<Access> w;
      for (const Access& a : e.writes) {
        bool async = false;
        for (const Access& b : e.async_writes) async |= a.buffer == b.buffer;
        if (!async) w.push_back(a);
      }
      e.writes = w;
    }
    return e;
  }

  // Whether `e` conflicts with a pending access: of shared memory (global = false) or of global
  // memory (global = true).
  bool conflicts(const StmtEffects& e, const State& st, bool global = false) const {
    for (const Access& p : st.pending) {
      if (group_ >= 0 && p.group == group_) continue;  // same tile op: distinct elements per thread
      if (is_global(p.buffer) != global) continue;
      for (const Access& r : e.reads)
        if (p.write && overlap(p.buffer, r.buffer)) return true;
      for (const Access& w : e.writes)
        if (overlap(p.buffer, w.buffer) && (!global || !p.write)) return true;
      for (const Access& w : e.async_writes)
        if (overlap(p.buffer, w.buffer)) return true;
    }
    return false;
  }

  bool varying(const Expr& e) const {
    bool v = false;
    for_each_subexpr(e, [&](const Expr& x) {
      if (const auto* var = x.as<VarNode>(); var && varying_.count(var)) v = true;
      if (const auto* l = x.as<BufferLoadNode>())
        if (varying_buffers_.count(l->buffer.get())) v = true;
    });
    return v;
  }

  Stmt barrier() const { return make_evaluate(make_call(DataType::Void(), "tl.sync_threads", {})); }

  // Whether any shared-memory access of `body` (any statement inside it) conflicts with `st`.
  bool body_conflicts(const Stmt& body, const State& st) const {
    bool hit = false;
    post_order_visit(body, [&](const Stmt& x) {
      if (hit) return;
      Stmt leaf_stmt;
      if (x.as<BufferStoreNode>() || x.as<EvaluateNode>()) leaf_stmt = x;
      else if (const auto* l = x.as<LetStmtNode>()) leaf_stmt = make_evaluate(l->value);
      else if (const auto* i = x.as<IfThenElseNode>()) leaf_stmt = make_evaluate(i->cond);
      else if (const auto* f = x.as<ForNode>()) leaf_stmt = make_evaluate(make_call(DataType::Void(), "tl.bounds", {f->min, f->extent}));
      if (leaf_stmt.defined()) {
        StmtEffects e = effects(leaf_stmt);
        if (conflicts(e, st) || conflicts(e, st, true)) hit = true;
      }
    });
    return hit;
  }

  // Handles a leaf: returns the statement, preceded by a barrier when needed.
  Stmt leaf(const Stmt& s, State& st) {
    StmtEffects e = effects(s);
    if (e.barrier) {
      if (divergent_) throw_error<SyncError>(where(s), "a __syncthreads() under a condition that depends on the thread "
                                             "would hang the block; move it out of the condition");
      st.pending.clear();
      return s;
    }
    if (e.async_commit) {
      st.groups.push_back(std::move(st.open_group));
      st.open_group.clear();
      return s;
    }
    if (e.async_wait >= 0) {
      // The writes of the completed groups have landed: from here on they are ordinary writes of
      // this thread, which other threads may read only after a barrier (T.async_copy +
      // T.ptx_wait_group; the pipeliner puts its own barrier right after its waits).
      while (static_cast<int64_t>(st.groups.size()) > e.async_wait) {
        for (Access a : st.groups.front()) {
          a.group = -1;
          st.pending.insert(a);
        }
        st.groups.erase(st.groups.begin());
      }
      return s;
    }
    std::vector<Stmt> out;
    bool shared_conflict = conflicts(e, st);
    if (shared_conflict || conflicts(e, st, true)) {
      if (divergent_) {
        need_ = true;
        // A global-memory conflict left inside such a condition is not an error: it is ordered
        // as far as a barrier before the condition can order it.
        if (strict_ && shared_conflict)
          throw_error<SyncError>(where(s), "threads of this block read and write the same shared memory inside a "
                                 "condition that depends on the thread, where no barrier can be placed; split the "
                                 "work so that the writes and the reads are in different statements outside the "
                                 "condition");
      } else {
        out.push_back(barrier());
      }
      st.pending.clear();
    }
    if (e.syncing_call) {
      if (divergent_) throw_error<SyncError>(where(s), "a block-wide reduction under a condition that depends on the "
                                             "thread; reduce outside the condition");
      st.pending.clear();
    } else {
      for (Access a : e.reads) {
        a.group = group_;
        st.pending.insert(a);
      }
      for (Access a : e.writes) {
        a.group = group_;
        st.pending.insert(a);
      }
    }
    for (Access a : e.async_writes) {
      a.group = group_;
      st.open_group.insert(a);
    }
    out.push_back(s);
    return make_seq(out);
  }

  static std::string where(const Stmt& s) { return s->span.prefix(); }

  Stmt visit(const Stmt& s, State& st) {
    if (!s.defined()) return s;
    if (const auto* seq = s.as<SeqStmtNode>()) {
      std::vector<Stmt> out;
      for (const Stmt& x : seq->seq) out.push_back(visit(x, st));
      return make_seq(out, seq->span);
    }
    if (const auto* a = s.as<AllocateNode>()) return make_allocate(a->buffer, visit(a->body, st), a->span);
    if (const auto* at = s.as<AttrStmtNode>()) {
      // Warp-specialized kernels: the producer warpgroup only issues TMA and mbarrier operations;
      // the consumer warpgroups are the threads every barrier of their code counts (a named
      // barrier over them, tl::sync_block), so their branch is not divergent code.
      if (at->key == "cuda.warp_role" && at->value.as_str() == "producer") return s;
      if (at->key == "cuda.warp_specialize") {
        const auto* i = at->body.as<IfThenElseNode>();
        TL_ICHECK(i, "cuda.warp_specialize without its role branches");
        State t = st;
        Stmt then_case = visit(i->then_case, t);
        st = t;
        return make_attr(at->key, at->value, make_if(i->cond, then_case, i->else_case, i->span), at->span);
      }
      if (at->key != "cuda.group") return make_attr(at->key, at->value, visit(at->body, st), at->span);
      // Each execution of a group is a new instance (a loop's next iteration conflicts with the last).
      int64_t saved = group_;
      group_ = next_instance_++;
      Stmt body = visit(at->body, st);
      group_ = saved;
      return make_attr(at->key, at->value, body, at->span);
    }
    if (const auto* l = s.as<LetStmtNode>()) {
      Stmt pre = leaf(make_evaluate(l->value), st);
      bool was = varying_.count(l->var.get());
      if (varying(l->value)) varying_.insert(l->var.get());
      Stmt body = visit(l->body, st);
      if (!was && !varying(l->value)) varying_.erase(l->var.get());
      Stmt out = make_let(l->var, l->value, body, l->span);
      if (const auto* ps = pre.as<SeqStmtNode>(); ps && ps->seq.size() > 1) return make_seq({ps->seq[0], out});
      return out;
    }
    if (const auto* f = s.as<ForNode>()) {
      std::vector<Stmt> out;
      Stmt pre = leaf(make_evaluate(make_call(DataType::Void(), "tl.bounds", {f->min, f->extent})), st);
      if (const auto* ps = pre.as<SeqStmtNode>(); ps && ps->seq.size() > 1) out.push_back(ps->seq[0]);
      // Accesses before the loop that conflict with the loop body: one barrier before the loop,
      // rather than one in every iteration at the first conflicting access (the loop-carried
      // conflicts are still found by the second visit below).
      if (!divergent_ && !st.pending.empty() && body_conflicts(f->body, st)) {
        out.push_back(barrier());
        st.pending.clear();
      }
      bool div = varying(f->min) || varying(f->extent);
      bool saved = divergent_;
      if (div) divergent_ = true;
      if (varying(f->min) || varying(f->extent)) varying_.insert(f->var.get());
      State first = st;
      visit(f->body, first);
      State merged = st;
      merged.merge(first);
      Stmt body = visit(f->body, merged);
      divergent_ = saved;
      st.merge(merged);
      out.push_back(make_for(f->var, f->min, f->extent, f->for_kind, body, f->annotations, f->span));
      return make_seq(out);
    }
    if (const auto* i = s.as<IfThenElseNode>()) {
      std::vector<Stmt> out;
      Stmt pre = leaf(make_evaluate(i->cond), st);
      if (const auto* ps = pre.as<SeqStmtNode>(); ps && ps->seq.size() > 1) out.push_back(ps->seq[0]);
      if (!varying(i->cond) || divergent_) {
        State t = st, e = st;
        Stmt then_case = visit(i->then_case, t);
        Stmt else_case = i->else_case.defined() ? visit(i->else_case, e) : Stmt();
        st = t;
        st.merge(e);
        out.push_back(make_if(i->cond, then_case, else_case, i->span));
        return make_seq(out);
      }
      // A thread-dependent condition: barriers may only go before it.
      divergent_ = true;
      need_ = false;
      strict_ = false;
      {
        State t = st, e = st;
        visit(i->then_case, t);
        if (i->else_case.defined()) visit(i->else_case, e);
      }
      if (need_) {
        out.push_back(barrier());
        st.pending.clear();
      }
      strict_ = true;
      State t = st, e = st;
      Stmt then_case = visit(i->then_case, t);
      Stmt else_case = i->else_case.defined() ? visit(i->else_case, e) : Stmt();
      divergent_ = false;
      strict_ = false;
      st = t;
      st.merge(e);
      out.push_back(make_if(i->cond, then_case, else_case, i->span));
      return make_seq(out);
    }
    if (s.as<KernelLaunchNode>()) return s;
    return leaf(s, st);
  }

  std::map<const BufferNode*, ByteRange> ranges_;
  std::set<const VarNode*> varying_;
  std::set<const BufferNode*> varying_buffers_;  // per-thread buffers whose contents depend on the thread
  int64_t group_ = -1;
  int64_t next_instance_ = 0;
  bool divergent_ = false;
  bool need_ = false;
  bool strict_ = false;
};

class KernelSync : public StmtMutator {
 protected:
  Stmt mutate_kernel(const KernelLaunchNode* k, const Stmt& s) override {
    std::map<const BufferNode*, ByteRange> ranges;
    std::function<void(const Stmt&)> find = [&](const Stmt& x) {
      post_order_visit(x, [&](const Stmt& y) {
        const auto* at = y.as<AttrStmtNode>();
        if (!at || at->key != "smem_offset") return;
        const auto* a = at->body.as<AllocateNode>();
        if (!a) return;
        int64_t n = a->buffer.dtype().element_bytes();
        for (const Expr& e : a->buffer.shape()) {
          int64_t v = 1;
          is_const_int(e, &v);
          n *= v;
        }
        int64_t off = at->value.as_int();
        ranges[a->buffer.get()] = {off, off + n};
      });
    };
    find(k->body);
    std::set<const VarNode*> varying;
    for (const Var& v : k->thread_vars) varying.insert(v.get());
    SyncInserter ins(ranges, varying, thread_varying_buffers(k->body, varying));
    Stmt body = ins.run(k->body);
    return make_kernel(k->grid, k->block_vars, k->threads, k->thread_vars, k->attrs, body, k->span);
  }
};

}  // namespace

PrimFunc insert_thread_sync(const PrimFunc& f, const PassContext& ctx) {
  if (config_bool(ctx.configs, "tl.disable_thread_storage_sync")) return f;
  KernelSync ks;
  return f.with_body(ks.mutate(f.body()));
}

TL_REGISTER_PASS("insert_thread_sync", insert_thread_sync);

}  // namespace tl
