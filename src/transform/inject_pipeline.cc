#include "transform/inject_pipeline.h"

#include <map>
#include <set>

#include "ir/error.h"
#include "ir/functor.h"
#include "transform/pass_config.h"
#include "transform/plan_pipeline.h"

namespace tl {

namespace {

// Buffers accessed by a statement (loads, stores, tile-op regions).
void collect_uses(const Stmt& s, std::set<const BufferNode*>* out) {
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

// Buffers used outside `loop` in `root`.
std::set<const BufferNode*> uses_outside(const Stmt& root, const ForNode* loop) {
  std::set<const BufferNode*> out;
  std::function<void(const Stmt&)> walk = [&](const Stmt& s) {
    if (!s.defined() || s.get() == loop) return;
    if (const auto* seq = s.as<SeqStmtNode>()) {
      for (const Stmt& x : seq->seq) walk(x);
    } else if (const auto* f = s.as<ForNode>()) {
      walk(f->body);
    } else if (const auto* i = s.as<IfThenElseNode>()) {
      collect_uses(make_evaluate(i->cond), &out);
      walk(i->then_case);
      walk(i->else_case);
    } else if (const auto* l = s.as<LetStmtNode>()) {
      collect_uses(make_evaluate(l->value), &out);
      walk(l->body);
    } else if (const auto* a = s.as<AllocateNode>()) {
      walk(a->body);
    } else if (const auto* at = s.as<AttrStmtNode>()) {
      walk(at->body);
    } else if (const auto* k = s.as<KernelLaunchNode>()) {
      walk(k->body);
    } else {
      collect_uses(s, &out);
    }
  };
  walk(root);
  return out;
}

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

Stmt mark_async(const Stmt& s) {
  const auto* op = s.as<TileOpNode>();
  TL_ICHECK(op && op->op == "copy");
  AttrMap attrs = op->attrs;
  attrs["async"] = Attr(true);
  return make_tile_op(op->op, op->args, attrs, op->span);
}

// The one T.gemm of a pipelined loop body that may stay in flight across iterations (sm_90a
// wgmma): both operands are stages of the loop's producers, its accumulator is touched by nothing
// else in the body, f16/bf16 operands with float accumulators (the types wgmma takes here; layout
// inference still decides, and a GEMM that ends on mma.sync is synchronous anyway). nullptr if none.
const TileOpNode* async_mma_candidate(const std::vector<BodyItem>& items, const std::set<size_t>& producers,
                                      const std::vector<Buffer>& versioned) {
  const TileOpNode* gemm = nullptr;
  size_t at = 0;
  int count = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_stmt()) continue;
    post_order_visit(items[i].stmt, [&](const Stmt& x) {
      if (const auto* op = x.as<TileOpNode>(); op && op->op == "gemm") {
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
      !(at_t == DataType::Float(16) || at_t == DataType::BFloat16()))
    return nullptr;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i == at || !items[i].is_stmt()) continue;
    std::set<const BufferNode*> used;
    collect_uses(items[i].stmt, &used);
    if (used.count(c.get())) return nullptr;
  }
  return gemm;
}

// Removes the allocations inside a loop body, collecting their buffers: buffers allocated in a
// T.Pipelined body (TileLang's gemv example allocates its tiles there) live across iterations once
// pipelined (the prologue fills them before the loop), so they are allocated around the loop.
class AllocationHoister : public StmtMutator {
 public:
  std::vector<std::pair<Buffer, Span>> hoisted;

 protected:
  Stmt mutate_allocate(const AllocateNode* n, const Stmt& s) override {
    hoisted.emplace_back(n->buffer, n->span);
    return mutate(n->body);
  }
};

class Injector : public StmtMutator {
 public:
  Injector(const Stmt& root, const PassContext& ctx)
      : root_(root),
        wgmma_(ctx.target.arch == "sm_90a" && !config_bool(ctx.configs, "tl.disable_wgmma") &&
               !config_bool(ctx.configs, "tl.disable_wgmma_async")) {}

 protected:
  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    if (n->for_kind != ForKind::kPipelined) return StmtMutator::mutate_for(n, s);
    AllocationHoister hoister;
    Stmt body = mutate(hoister.mutate(n->body));
    auto allocated_around = [&](Stmt loop) {
      for (auto it = hoister.hoisted.rbegin(); it != hoister.hoisted.rend(); ++it) {
        auto v = versioned_.find(it->first.get());
        loop = make_allocate(v != versioned_.end() ? v->second : it->first, loop, it->second);
      }
      return loop;
    };
    std::vector<BodyItem> items = flatten_body(body);
    PipelinePlan plan = plan_pipeline(*n, items, uses_outside(root_, n));
    if (plan.producers.empty())
      return allocated_around(make_for(n->var, n->min, n->extent, ForKind::kSerial, body, {}, n->span));
    const int S = plan.num_stages;
    std::map<const BufferNode*, Buffer> versions;
    for (const Buffer& b : plan.versioned) {
      std::vector<Expr> shape = b.shape();
      shape.insert(shape.begin(), make_int(S));
      Buffer v(b.name(), b.dtype(), shape, b.scope(), {}, b->span);
      versions[b.get()] = v;
      versioned_[b.get()] = v;
    }
    std::set<size_t> is_producer(plan.producers.begin(), plan.producers.end());
    // With a GEMM that stays in flight for one iteration (wgmma, waited for at the end of the
    // next iteration's GEMM), the refill may only overwrite the stage read two iterations ago:
    // the prefetch distance drops from S - 1 to S - 2.
    const TileOpNode* async_gemm = (wgmma_ && S >= 3) ? async_mma_candidate(items, is_producer, plan.versioned)
                                                      : nullptr;
    const int D = async_gemm ? S - 2 : S - 1;
    if (async_gemm) {
      for (size_t i = 0; i < items.size(); ++i) {
        if (items[i].stmt.get() != async_gemm) continue;
        AttrMap attrs = async_gemm->attrs;
        attrs["wgmma_async"] = Attr(true);
        items[i].stmt = make_tile_op(async_gemm->op, async_gemm->args, attrs, async_gemm->span);
      }
    }
    const Var& k = n->var;
    auto stage_of = [&](const Expr& iter) { return floormod(iter - n->min, make_int(S, iter.dtype())); };
    auto producers_at = [&](const Expr& iter) {
      std::vector<Stmt> out;
      std::map<Var, Expr, VarLess> sub = {{k, iter}};
      VersionRewriter vr(versions, stage_of(iter));
      for (size_t i : plan.producers) out.push_back(vr.mutate(mark_async(substitute(items[i].stmt, sub))));
      return make_seq(out);
    };
    auto commit = builtin("cuda.cp_async_commit", {});
    std::vector<Stmt> out;
    // Prologue: the first D iterations' producers.
    for (int s = 0; s < D; ++s) {
      Expr iter = n->min + make_int(s, n->min.dtype());
      Expr has = make_int(s, n->extent.dtype()) < n->extent;
      Stmt p = producers_at(iter);
      int64_t c = 0;
      out.push_back(is_const_int(has, &c) ? (c ? p : make_nop()) : make_if(has, p));
      out.push_back(commit);
    }
    // Steady state.
    std::vector<BodyItem> consumers;
    for (size_t i = 0; i < items.size(); ++i)
      if (!is_producer.count(i)) consumers.push_back(items[i]);
    VersionRewriter cv(versions, stage_of(k));
    Stmt consumer_body = cv.mutate(rebuild_body(consumers));
    Expr ahead = k + make_int(D, k.dtype());
    Stmt refill = producers_at(ahead);
    Expr has_ahead = ahead < n->min + n->extent;
    std::vector<Stmt> loop_body = {builtin("cuda.cp_async_wait", {make_int(D - 1)}),
                                   builtin("tl.sync_threads", {}), make_if(has_ahead, refill), commit,
                                   consumer_body};
    AttrMap loop_ann;
    if (async_gemm) loop_ann["cuda.async_mma"] = Attr(true);  // the lowering drains the GEMM after the loop
    out.push_back(make_for(k, n->min, n->extent, ForKind::kSerial, make_seq(loop_body), loop_ann, n->span));
    out.push_back(builtin("cuda.cp_async_wait", {make_int(0)}));
    return allocated_around(make_seq(out, n->span));
  }

  Stmt mutate_allocate(const AllocateNode* n, const Stmt& s) override {
    Stmt body = mutate(n->body);
    auto it = versioned_.find(n->buffer.get());
    if (it != versioned_.end()) return make_allocate(it->second, body, n->span);
    if (body.same_as(n->body)) return s;
    return make_allocate(n->buffer, body, n->span);
  }

 private:
  static Stmt builtin(const std::string& op, std::vector<Expr> args) {
    return make_evaluate(make_call(DataType::Void(), op, std::move(args)));
  }
  const Stmt& root_;
  const bool wgmma_;
  std::map<const BufferNode*, Buffer> versioned_;
};

}  // namespace

PrimFunc inject_pipeline(const PrimFunc& f, const PassContext& ctx) {
  Injector inj(f.body(), ctx);
  return f.with_body(inj.mutate(f.body()));
}

TL_REGISTER_PASS("inject_pipeline", inject_pipeline);

}  // namespace tl
