#include "transform/inject_pipeline.h"

#include <map>
#include <set>

#include "ir/error.h"
#include "ir/functor.h"
#include "transform/pass_config.h"
#include "transform/plan_pipeline.h"

namespace tl {

namespace {

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

// Whether `body` schedules cp.async itself (T.async_copy, T.ptx_commit_group, T.ptx_wait_group):
// such a loop is the program's own pipeline, left serial.
bool schedules_async_copies(const Stmt& body) {
  bool found = false;
  post_order_visit(body, [&](const Stmt& s) {
    if (const auto* t = s.as<TileOpNode>()) found |= attr_bool(t->attrs, "async_commit", false);
    if (const auto* e = s.as<EvaluateNode>())
      if (const auto* c = e->value.as<CallNode>())
        found |= c->op == "cuda.cp_async_commit" || c->op == "cuda.cp_async_wait";
  });
  return found;
}

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
    if (schedules_async_copies(body))
      return allocated_around(make_for(n->var, n->min, n->extent, ForKind::kSerial, body, {}, n->span));
    PipelinePlan plan = plan_pipeline(*n, items, buffers_used_outside(root_, n));
    if (plan.producers.empty())
      return allocated_around(make_for(n->var, n->min, n->extent, ForKind::kSerial, body, {}, n->span));
    const int S = plan.num_stages;
    std::map<const BufferNode*, Buffer> versions;
    for (const Buffer& b : plan.versioned) {
      Buffer v = versioned_buffer(b, S);
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
      for (size_t i : plan.producers)
        out.push_back(rewrite_versions(mark_async(substitute(items[i].stmt, sub)), versions, stage_of(iter)));
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
    Stmt consumer_body = rewrite_versions(rebuild_body(consumers), versions, stage_of(k));
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
