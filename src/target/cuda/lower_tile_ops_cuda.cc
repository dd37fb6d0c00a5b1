#include "target/cuda/lower_tile_ops_cuda.h"

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/tile_op.h"
#include "op/tile_ops.h"
#include "target/cuda/cuda_ops.h"
#include "target/cuda/lower_context.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

Stmt lower_copy(const TileOpNode& op, CudaLowerCtx& ctx) {
  if (attr_bool(op.attrs, "transpose", false))
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: T.copy(..., transpose=True) on target cuda "
                                "(an Ascend L1 -> L0B form); copy with a T.Parallel loop that swaps the indices");
  return lower_cuda_copy(op, ctx);
}
Stmt lower_annotation(const TileOpNode&, CudaLowerCtx&) { return make_nop(); }

}  // namespace

CudaTileOpLowering find_cuda_tile_op_lowering(const TileOpNode& op) {
  const TileOp* def = find_tile_op(op);
  if (!def) return nullptr;
  switch (def->kind()) {
    case TileOpKind::kCopy: return lower_copy;
    case TileOpKind::kFill: {
      const auto* f = dynamic_cast<const FillOp*>(def);
      return f && !f->vector_spelling() ? lower_cuda_fill : nullptr;
    }
    // gemm_v0 / mma are Ascend instructions: their loop form, or an error in lower_op.
    case TileOpKind::kGemm: {
      const auto* g = dynamic_cast<const GemmOp*>(def);
      return g && g->form() == GemmForm::kGemm ? lower_cuda_gemm : nullptr;
    }
    case TileOpKind::kReduce: return lower_cuda_reduce;
    case TileOpKind::kFinalizeReducer: return lower_cuda_finalize_reducer;
    case TileOpKind::kCumsum: return lower_cuda_cumsum;
    case TileOpKind::kAtomic: return lower_cuda_atomic;
    case TileOpKind::kPrint: return lower_cuda_print;
    case TileOpKind::kAnnotateLayout:
    case TileOpKind::kAnnotateAddress: return lower_annotation;
    case TileOpKind::kElementwise: {
      const auto* e = dynamic_cast<const ElementwiseOp*>(def);
      return e && cuda_lowers_elementwise(e->fn()) ? lower_cuda_elementwise : nullptr;
    }
    case TileOpKind::kDistributed: return nullptr;
  }
  return nullptr;
}

namespace {

class KernelBodyLowerer : public StmtMutator {
 public:
  explicit KernelBodyLowerer(CudaLowerCtx& ctx) : ctx_(ctx) {}

 protected:
  Stmt mutate_allocate(const AllocateNode* n, const Stmt& s) override {
    const Buffer& b = n->buffer;
    if (b.scope() == MemScope::kFragment) {
      const Fragment& f = ctx_.layout_of(b);
      Buffer regs(b.name(), b.dtype(), {make_int(f.num_regs())}, MemScope::kLocal, {}, b->span);
      ctx_.regs[b] = regs;
      return make_allocate(regs, mutate(n->body), n->span);
    }
    if (b.scope() == MemScope::kShared) {
      const_shape(b, "shared buffer");
      // Same shape (for messages and sizes), but every access uses one flat, laid-out index.
      Buffer flat(b.name(), b.dtype(), b.shape(), MemScope::kShared, {}, b->span);
      ctx_.flat_shared[b] = flat;
      return make_allocate(flat, mutate(n->body), n->span);
    }
    if (b.scope() == MemScope::kBarrier)
      throw_error<NotImplemented>(b->span.prefix(),
                                  "not implemented: T.alloc_barrier on target cuda (mbarriers come with the Hopper "
                                  "TMA/warp-specialization work)");
    if (is_ascend_scope(b.scope()))
      throw_error<ValueError>(b->span.prefix(), "buffer '", b.name(), "' is in ",
                              scope_name(b.scope()), " memory, which exists only on target ascend");
    return StmtMutator::mutate_allocate(n, s);
  }

  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    if (n->for_kind == ForKind::kParallel) {
      auto it = ctx_.layouts.loops.find(n);
      TL_ICHECK(it != ctx_.layouts.loops.end(), "T.Parallel loop without a layout");
      ParallelNest nest = parallel_nest(n);
      return group(lower_parallel_nest(ctx_, nest.vars, nest.extents, nest.body, it->second, n->span));
    }
    Expr mn = mutate(n->min), ext = mutate(n->extent);
    ctx_.ranges[n->var] = Range(mn, ext);
    std::vector<Buffer> outer_async = std::move(ctx_.async_mma_accumulators);
    ctx_.async_mma_accumulators.clear();
    Stmt body = mutate(n->body);
    std::vector<Buffer> async = std::move(ctx_.async_mma_accumulators);
    ctx_.async_mma_accumulators = std::move(outer_async);
    ctx_.ranges.erase(n->var);
    ForKind kind = n->for_kind;
    AttrMap ann = n->annotations;
    if (kind == ForKind::kPipelined || kind == ForKind::kPersistent) {
      kind = ForKind::kSerial;
      ann.clear();
    }
    ann.erase("cuda.async_mma");
    Stmt loop = make_for(n->var, mn, ext, kind, body, ann, n->span);
    if (async.empty()) return loop;
    // The last iteration's wgmma instructions are still in flight: wait before C is read.
    std::vector<Stmt> out = {loop};
    for (const Buffer& regs : async)
      out.push_back(call_stmt("tl::wgmma_drain<" + std::to_string(const_shape(regs, "registers")[0]) + ">",
                              {make_call(DataType::Handle(), "cuda.address_of",
                                         {make_load(regs, {make_int(0)}), make_int(3)})}));
    return make_seq(out, n->span);
  }

  // Inside `if (v + c < e)` (e.g. the pipeline's refill guard `k + S - 1 < n`) the range of the
  // loop variable v is narrower; bounds guards of copies in the branch are then often provably true.
  Stmt mutate_if(const IfThenElseNode* n, const Stmt& s) override {
    Expr cond = mutate(n->cond);
    std::map<Var, Range, VarLess> saved = ctx_.ranges;
    narrow_ranges(cond);
    Stmt then_case = mutate(n->then_case);
    ctx_.ranges = saved;
    Stmt else_case = n->else_case.defined() ? mutate(n->else_case) : Stmt();
    return make_if(cond, then_case, else_case, n->span);
  }

  // Tightens ctx_.ranges with the conjuncts of `cond` of the form `v + c < e` / `v + c <= e`
  // (v a variable with a constant range, c and e with constant bounds).
  void narrow_ranges(const Expr& cond) {
    const auto* b = cond.as<BinaryNode>();
    if (!b) return;
    if (b->op == BinOp::kAnd) {
      narrow_ranges(b->a);
      narrow_ranges(b->b);
      return;
    }
    if (b->op != BinOp::kLT && b->op != BinOp::kLE) return;
    Expr lhs = b->a;
    int64_t c = 0;
    if (const auto* add = lhs.as<BinaryNode>(); add && add->op == BinOp::kAdd && is_const_int(add->b, &c)) lhs = add->a;
    const auto* v = lhs.as<VarNode>();
    if (!v) return;
    Var var(std::static_pointer_cast<const VarNode>(lhs.node()));
    int64_t lo = 0, hi = 0, elo = 0, ehi = 0;
    if (!ctx_.ranges.count(var) || !cuda_const_bounds(var, ctx_.ranges, &lo, &hi) ||
        !cuda_const_bounds(b->b, ctx_.ranges, &elo, &ehi))
      return;
    int64_t new_hi = ehi - c - (b->op == BinOp::kLT ? 1 : 0);  // v <= new_hi
    if (new_hi >= hi || new_hi < lo) return;
    ctx_.ranges[var] = Range(make_int(lo, var.dtype()), make_int(new_hi - lo + 1, var.dtype()));
  }

  Stmt mutate_let(const LetStmtNode* n, const Stmt& s) override {
    Expr v = mutate(n->value);
    int64_t lo = 0, hi = 0;
    if (v.dtype().is_integer() && cuda_const_bounds(v, ctx_.ranges, &lo, &hi))
      ctx_.ranges[n->var] = Range(make_int(lo, v.dtype()), make_int(hi - lo + 1, v.dtype()));
    Stmt body = mutate(n->body);
    ctx_.ranges.erase(n->var);
    return make_let(n->var, v, body, n->span);
  }

  // The statements one tile op or T.Parallel nest lowers to touch distinct elements from each
  // thread: insert_thread_sync needs no barrier between them ("cuda.group").
  Stmt group(const Stmt& s) { return make_attr("cuda.group", Attr(static_cast<int64_t>(groups_++)), s, s->span); }

  Stmt mutate_tile_op(const TileOpNode* n, const Stmt& s) override { return group(lower_op(n)); }

  // cuda.wgmma_wait(N, tl.buffer_handle(F[0, ...])) (warp_specialize: GEMMs issued with kPending =
  // -1): wait until at most N wgmma groups are in flight, then let the compiler use the registers
  // of fragment F again.
  Stmt mutate_evaluate(const EvaluateNode* n, const Stmt& s) override {
    const auto* c = n->value.as<CallNode>();
    if (!c || c->op != "cuda.wgmma_wait") return StmtMutator::mutate_evaluate(n, s);
    int64_t pending = 0;
    const auto* h = c->args.size() == 2 ? c->args[1].as<CallNode>() : nullptr;
    const auto* frag = h && h->op == "tl.buffer_handle" && h->args.size() == 1 ? h->args[0].as<BufferLoadNode>() : nullptr;
    TL_ICHECK(frag && is_const_int(c->args[0], &pending), "cuda.wgmma_wait takes (N, tl.buffer_handle(fragment))");
    const Buffer& regs = ctx_.regs_of(frag->buffer);
    return call_stmt("tl::wgmma_wait_regs<" + std::to_string(pending) + ", " +
                         std::to_string(const_shape(regs, "registers")[0]) + ">",
                     {ctx_.reg_address(frag->buffer, make_int(0), 3)});
  }

  Stmt lower_op(const TileOpNode* n) {
    if (CudaTileOpLowering lower = find_cuda_tile_op_lowering(*n)) return lower(*n, ctx_);
    if (const GemmOp* g = tile_op_as<GemmOp>(*n); g && g->form() != GemmForm::kGemm)
      throw_error<ValueError>(op_error_prefix(*n), "T.", n->op, " is an Ascend instruction; use T.gemm on target cuda");
    throw_error<NotImplemented>(op_error_prefix(*n), "not implemented: tile op '", n->op, "' on target cuda");
  }

  Expr mutate_load(const BufferLoadNode* n, const Expr& e) override {
    std::vector<Expr> idx;
    mutate_list(n->indices, &idx);
    return ctx_.lowered_load(n->buffer, idx);
  }

  Stmt mutate_store(const BufferStoreNode* n, const Stmt& s) override {
    std::vector<Expr> idx;
    mutate_list(n->indices, &idx);
    Expr v = mutate(n->value);
    return ctx_.lowered_store(n->buffer, idx, v, n->span);
  }

  Stmt mutate_kernel(const KernelLaunchNode* n, const Stmt& s) override {
    throw_error<NotImplemented>(n->span.prefix(), "nested T.Kernel");
  }

 private:
  CudaLowerCtx& ctx_;
  int64_t groups_ = 0;
};

class KernelLowerer : public StmtMutator {
 public:
  KernelLowerer(const PassContext& pc) : pc_(pc) {}

 protected:
  Stmt mutate_kernel(const KernelLaunchNode* k, const Stmt& s) override {
    CudaLowerCtx ctx;
    ctx.target = pc_.target;
    int64_t threads = 1;
    std::vector<int64_t> dims;
    for (const Expr& t : k->threads) {
      int64_t v = 0;
      if (!is_const_int(t, &v) || v <= 0)
        throw_error<ValueError>(k->span.prefix(),
                                "T.Kernel(threads=...) must be a positive constant on target cuda, got ", to_string(t));
      dims.push_back(v);
      threads *= v;
    }
    if (threads > 1024)
      throw_error<ResourceError>(k->span.prefix(), "T.Kernel asks for ", threads,
                                 " threads per block; CUDA allows at most 1024");
    ctx.num_threads = threads;
    ctx.disable_store_exchange = config_bool(pc_.configs, "tl.disable_store_exchange");
    ctx.disable_stmatrix = config_bool(pc_.configs, "tl.disable_stmatrix");
    ctx.disable_wgmma_zero_init = config_bool(pc_.configs, "tl.disable_wgmma_zero_init");
    if (k->thread_vars.empty()) {
      ctx.tid = make_int(0);
    } else {
      Expr tid = k->thread_vars[0];
      int64_t stride = dims.empty() ? 1 : dims[0];
      for (size_t i = 1; i < k->thread_vars.size(); ++i) {
        tid = tid + k->thread_vars[i] * make_int(stride);
        stride *= dims[i];
      }
      ctx.tid = tid;
    }
    // A warp-specialized kernel (warp_specialize) launches a producer warpgroup beyond the
    // threads its layouts are made for; the consumers' branch narrows the range again.
    const int64_t producers = attr_int(k->attrs, "cuda.producer_threads", 0);
    for (size_t i = 0; i < k->thread_vars.size() && i < dims.size(); ++i)
      ctx.ranges[k->thread_vars[i]] = Range(make_int(0), make_int(dims[i] + (i == 0 ? producers : 0)));
    for (size_t i = 0; i < k->block_vars.size() && i < k->grid.size(); ++i)
      ctx.ranges[k->block_vars[i]] = Range(make_int(0), k->grid[i]);
    bool wgmma = pc_.target.arch == "sm_90a" && !config_bool(pc_.configs, "tl.disable_wgmma");
    ctx.layouts = infer_layouts(k->body, threads, pc_.target, wgmma);
    post_order_visit(k->body, [&](const Stmt& s) {
      if (const auto* op = s.as<TileOpNode>(); op && is_tile_op(*op, TileOpKind::kFinalizeReducer) && !op->args.empty())
        ctx.reducers.insert(op->args[0].region.buffer.get());
    });
    KernelBodyLowerer lower(ctx);
    Stmt body = lower.mutate(k->body);
    for (auto it = ctx.extra_shared.rbegin(); it != ctx.extra_shared.rend(); ++it) body = make_allocate(*it, body);
    return make_kernel(k->grid, k->block_vars, k->threads, k->thread_vars, k->attrs, body, k->span);
  }

 private:
  const PassContext& pc_;
};

}  // namespace

PrimFunc lower_cuda_tile_ops(const PrimFunc& f, const PassContext& ctx) {
  KernelLowerer l(ctx);
  return f.with_body(l.mutate(f.body()));
}

TL_REGISTER_PASS("cuda.lower_tile_ops", lower_cuda_tile_ops);

}  // namespace tl
