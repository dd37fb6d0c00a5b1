#include "transform/plan_pipeline.h"

#include <map>

#include "arith/region.h"
#include "ir/error.h"
#include "ir/functor.h"
#include "op/tile_ops.h"

namespace tl {

std::vector<BodyItem> flatten_body(const Stmt& body) {
  std::vector<BodyItem> out;
  std::function<void(const Stmt&)> walk = [&](const Stmt& s) {
    if (!s.defined()) return;
    if (const auto* seq = s.as<SeqStmtNode>()) {
      for (const Stmt& x : seq->seq) walk(x);
    } else if (const auto* let = s.as<LetStmtNode>()) {
      BodyItem it;
      it.let_var = let->var;
      it.let_value = let->value;
      it.span = let->span;
      out.push_back(it);
      walk(let->body);
    } else if (const auto* a = s.as<AllocateNode>()) {
      BodyItem it;
      it.alloc = a->buffer;
      it.span = a->span;
      out.push_back(it);
      walk(a->body);
    } else {
      BodyItem it;
      it.stmt = s;
      it.span = s->span;
      out.push_back(it);
    }
  };
  walk(body);
  return out;
}

Stmt rebuild_body(const std::vector<BodyItem>& items) {
  Stmt rest = make_nop();
  std::vector<Stmt> pending;
  for (auto it = items.rbegin(); it != items.rend(); ++it) {
    if (it->is_stmt()) {
      pending.insert(pending.begin(), it->stmt);
      continue;
    }
    Stmt inner = make_seq(pending);
    pending.clear();
    pending.push_back(it->alloc.defined() ? make_allocate(it->alloc, inner, it->span)
                                          : make_let(it->let_var, it->let_value, inner, it->span));
  }
  return make_seq(pending);
}

namespace {

// Buffers read / written by a statement (tile ops: their TileOp::effects, the one effect model of
// every pass; an unknown op writes its first region and reads the others).
struct Effects {
  std::set<const BufferNode*> reads, writes;
};

Effects effects_of(const Stmt& s) {
  Effects e;
  post_order_visit(s, [&](const Stmt& x) {
    if (const auto* st = x.as<BufferStoreNode>()) e.writes.insert(st->buffer.get());
    if (const auto* op = x.as<TileOpNode>()) {
      if (const TileOp* def = find_tile_op(*op)) {
        AccessRegions acc = def->effects(*op);
        for (const BufferRegion& r : acc.reads) e.reads.insert(r.buffer.get());
        for (const BufferRegion& r : acc.writes) e.writes.insert(r.buffer.get());
      } else {
        bool first = true;
        for (const TileArg& a : op->args) {
          if (!a.is_region()) continue;
          (first ? e.writes : e.reads).insert(a.region.buffer.get());
          first = false;
        }
      }
    }
  });
  for_each_expr(s, [&](const Expr& x) {
    for_each_subexpr(x, [&](const Expr& y) {
      if (const auto* l = y.as<BufferLoadNode>()) e.reads.insert(l->buffer.get());
    });
  });
  return e;
}

bool touches(const Effects& e, const BufferNode* b) { return e.reads.count(b) || e.writes.count(b); }

}  // namespace

PipelinePlan plan_pipeline(const ForNode& loop, const std::vector<BodyItem>& items,
                           const std::set<const BufferNode*>& used_outside) {
  PipelinePlan plan;
  plan.num_stages = static_cast<int>(attr_int(loop.annotations, "num_stages", 1));
  if (plan.num_stages < 2) return plan;
  // Variables bound inside the body (lets, inner loops): a producer must not use them.
  std::set<const VarNode*> inner;
  for (const BodyItem& it : items) {
    if (it.let_var.defined()) inner.insert(it.let_var.get());
    if (it.is_stmt())
      post_order_visit(it.stmt, [&](const Stmt& x) {
        if (const auto* f = x.as<ForNode>()) inner.insert(f->var.get());
        if (const auto* l = x.as<LetStmtNode>()) inner.insert(l->var.get());
      });
  }
  std::vector<Effects> eff(items.size());
  std::set<const BufferNode*> written;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_stmt()) continue;
    eff[i] = effects_of(items[i].stmt);
    written.insert(eff[i].writes.begin(), eff[i].writes.end());
  }
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_stmt()) continue;
    const auto* op = items[i].stmt.as<TileOpNode>();
    if (!op || !is_tile_op(*op, TileOpKind::kCopy) || op->args.size() < 2 || !op->args[0].is_region() ||
        !op->args[1].is_region())
      continue;
    const BufferRegion& src = op->args[0].region;
    const BufferRegion& dst = op->args[1].region;
    if (src.buffer.scope() != MemScope::kGlobal || dst.buffer.scope() != MemScope::kShared) continue;
    const std::string name = dst.buffer.name();
    auto skip = [&](const std::string& why) { plan.notes.push_back("copy into '" + name + "' stays in place: " + why); };
    if (!whole_buffer(dst)) {
      skip("it fills only part of the buffer");
      continue;
    }
    const BufferNode* db = dst.buffer.get();
    if (used_outside.count(db)) {
      skip("the buffer is also used outside the loop");
      continue;
    }
    bool used_before = false, other_writer = false;
    for (size_t j = 0; j < items.size(); ++j) {
      if (j == i || !items[j].is_stmt()) continue;
      if (j < i && touches(eff[j], db)) used_before = true;
      if (eff[j].writes.count(db)) other_writer = true;
    }
    if (used_before) {
      skip("the loop uses the buffer before this copy refills it");
      continue;
    }
    if (other_writer) {
      skip("another statement of the loop writes the buffer");
      continue;
    }
    if (written.count(src.buffer.get())) {
      skip("the loop writes the source tensor '" + src.buffer.name() + "'");
      continue;
    }
    bool uses_inner = false;
    for (const Range& r : src.region)
      for (const Expr& x : {r.min, r.extent})
        for_each_subexpr(x, [&](const Expr& y) {
          if (const auto* v = y.as<VarNode>(); v && inner.count(v)) uses_inner = true;
          // Loads of global tensors the loop does not write (a paged cache's block table) read
          // the same value in any iteration; others (fragments, shared buffers) are loop-local.
          if (const auto* l = y.as<BufferLoadNode>())
            if (l->buffer.scope() != MemScope::kGlobal || written.count(l->buffer.get())) uses_inner = true;
        });
    if (uses_inner) {
      skip("its source position depends on a value computed inside the loop");
      continue;
    }
    bool dup = false;
    for (const Buffer& b : plan.versioned) dup |= b.get() == db;
    if (dup) {
      skip("the buffer is filled twice in the loop");
      continue;
    }
    plan.producers.push_back(i);
    plan.versioned.push_back(dst.buffer);
  }
  return plan;
}

void collect_buffer_uses(const Stmt& s, std::set<const BufferNode*>* out) {
  post_order_visit(s, [&](const Stmt& x) {
    if (const auto* st = x.as<BufferStoreNode>()) out->insert(st->buffer.get());
    if (const auto* op = x.as<TileOpNode>())
      for (const TileArg& a : op->args)
        if (a.is_region()) out->insert(a.region.buffer.get());
  });
  for_each_expr(s, [&](const Expr& e) {
    for_each_subexpr(e, [&](const Expr& y) {
      if (const auto* l = y.as<BufferLoadNode>()) out->insert(l->buffer.get());
    });
  });
}

std::set<const BufferNode*> buffers_used_outside(const Stmt& root, const ForNode* loop) {
  std::set<const BufferNode*> out;
  std::function<void(const Stmt&)> walk = [&](const Stmt& s) {
    if (!s.defined() || s.get() == loop) return;
    if (const auto* seq = s.as<SeqStmtNode>()) {
      for (const Stmt& x : seq->seq) walk(x);
    } else if (const auto* f = s.as<ForNode>()) {
      walk(f->body);
    } else if (const auto* i = s.as<IfThenElseNode>()) {
      collect_buffer_uses(make_evaluate(i->cond), &out);
      walk(i->then_case);
      walk(i->else_case);
    } else if (const auto* l = s.as<LetStmtNode>()) {
      collect_buffer_uses(make_evaluate(l->value), &out);
      walk(l->body);
    } else if (const auto* a = s.as<AllocateNode>()) {
      walk(a->body);
    } else if (const auto* at = s.as<AttrStmtNode>()) {
      walk(at->body);
    } else if (const auto* k = s.as<KernelLaunchNode>()) {
      walk(k->body);
    } else {
      collect_buffer_uses(s, &out);
    }
  };
  walk(root);
  return out;
}

namespace {

// Replaces accesses of versioned buffers by accesses of one version.
class VersionRewriter : public StmtMutator {
 public:
  VersionRewriter(const std::map<const BufferNode*, Buffer>& versions, Expr stage)
      : versions_(versions), stage_(std::move(stage)) {}

 protected:
  Expr mutate_load(const BufferLoadNode* n, const Expr& e) override {
    auto it = versions_.find(n->buffer.get());
    std::vector<Expr> idx;
    bool changed = mutate_list(n->indices, &idx);
    if (it == versions_.end()) return changed ? make_load(n->buffer, idx) : e;
    idx.insert(idx.begin(), stage_);
    return make_load(it->second, idx);
  }
  Stmt mutate_store(const BufferStoreNode* n, const Stmt& s) override {
    auto it = versions_.find(n->buffer.get());
    if (it == versions_.end()) return StmtMutator::mutate_store(n, s);
    std::vector<Expr> idx;
    mutate_list(n->indices, &idx);
    idx.insert(idx.begin(), stage_);
    return make_store(it->second, idx, mutate(n->value), n->span);
  }
  Stmt mutate_tile_op(const TileOpNode* n, const Stmt& s) override {
    std::vector<TileArg> args;
    bool changed = false;
    for (const TileArg& a : n->args) {
      if (a.is_region()) {
        bool c = false;
        BufferRegion r = mutate_region(a.region, &c);
        auto it = versions_.find(r.buffer.get());
        if (it != versions_.end()) {
          std::vector<Range> rg = r.region;
          rg.insert(rg.begin(), Range(stage_, make_int(1)));
          r = BufferRegion(it->second, rg);
          c = true;
        }
        changed |= c;
        args.push_back(r);
      } else {
        Expr e = mutate(a.expr);
        changed |= !e.same_as(a.expr);
        args.push_back(e);
      }
    }
    if (!changed) return s;
    return make_tile_op(n->op, args, n->attrs, n->span);
  }

 private:
  const std::map<const BufferNode*, Buffer>& versions_;
  Expr stage_;
};

}  // namespace

Buffer versioned_buffer(const Buffer& b, int64_t stages) {
  std::vector<Expr> shape = b.shape();
  shape.insert(shape.begin(), make_int(stages));
  return b.with_shape(shape);
}

Stmt rewrite_versions(const Stmt& s, const std::map<const BufferNode*, Buffer>& versions, const Expr& stage) {
  VersionRewriter vr(versions, stage);
  return vr.mutate(s);
}

Stmt mark_async(const Stmt& s) {
  const auto* op = s.as<TileOpNode>();
  TL_ICHECK(op && is_tile_op(*op, TileOpKind::kCopy));
  AttrMap attrs = op->attrs;
  attrs["async"] = Attr(true);
  return make_tile_op(op->op, op->args, attrs, op->span);
}

const TileOpNode* async_mma_candidate(const std::vector<BodyItem>& items, const std::set<size_t>& producers,
                                      const std::vector<Buffer>& versioned) {
  const TileOpNode* gemm = nullptr;
  size_t at = 0;
  int count = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_stmt()) continue;
    post_order_visit(items[i].stmt, [&](const Stmt& x) {
      if (const auto* op = x.as<TileOpNode>(); op && is_gemm_form(*op, GemmForm::kGemm)) {
        ++count;
        gemm = op;
        at = i;
      }
    });
  }
  if (count != 1 || producers.count(at) || items[at].stmt.get() != gemm || gemm->args.size() < 3) return nullptr;
  auto versioned_buf = [&](const TileArg& a) {
    if (!a.is_region()) return false;
    for (const Buffer& b : versioned)
      if (b.same_as(a.region.buffer)) return true;
    return false;
  };
  if (!versioned_buf(gemm->args[0]) || !versioned_buf(gemm->args[1]) || !gemm->args[2].is_region()) return nullptr;
  const Buffer& c = gemm->args[2].region.buffer;
  DataType at_t = gemm->args[0].region.buffer.dtype();
  if (c.scope() != MemScope::kFragment || c.dtype() != DataType::Float32() ||
      !(at_t == DataType::Float(16) || at_t == DataType::BFloat16() || at_t.is_fp8()))
    return nullptr;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i == at || !items[i].is_stmt()) continue;
    std::set<const BufferNode*> used;
    collect_buffer_uses(items[i].stmt, &used);
    if (used.count(c.get())) return nullptr;
  }
  return gemm;
}


}  // namespace tl
