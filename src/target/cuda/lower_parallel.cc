// Lowering of T.Parallel nests and of buffer accesses outside tile ops (see lower_context.h).
#include <algorithm>

#include "ir/error.h"
#include "ir/functor.h"
#include "op/tile_op.h"
#include "target/cuda/lower_context.h"

namespace tl {

namespace {

// More registers than this and the nest becomes a run-time loop over registers (fragment
// registers are then indexed at run time, which may cost local memory).
constexpr int64_t kMaxUnrolledRegs = 256;

bool uses_only(const std::vector<Expr>& indices, const std::vector<Var>& vars) {
  bool ok = true;
  for (const Expr& e : indices)
    for_each_subexpr(e, [&](const Expr& x) {
      if (const VarNode* v = x.as<VarNode>()) {
        bool mine = false;
        for (const Var& lv : vars) mine |= lv.get() == v;
        if (!mine) ok = false;
      } else if (x.kind() == ExprKind::kBufferLoad || x.kind() == ExprKind::kCall) {
        ok = false;
      }
    });
  return ok;
}

// Rewrites accesses inside one register's copy of a nest body (still in the loop variables).
class NestAccessRewriter : public StmtMutator {
 public:
  NestAccessRewriter(const CudaLowerCtx& ctx, const std::vector<Var>& vars, const Fragment* layout, int64_t reg)
      : ctx_(ctx), vars_(vars), layout_(layout), reg_(reg) {}

 protected:
  Expr register_index(const Buffer& f, const std::vector<Expr>& indices) {
    const Fragment& F = ctx_.layout_of(f);
    if (layout_ && reg_ >= 0 && uses_only(indices, vars_)) {
      // The register each thread needs for this iteration; constant when all threads agree.
      int64_t common = -1;
      bool uniform = true;
      for (int64_t t = 0; t < layout_->num_threads() && uniform; ++t) {
        std::vector<int64_t> point;
        if (!layout_->index_at(t, reg_, &point)) continue;
        std::map<Var, int64_t, VarLess> env;
        for (size_t k = 0; k < point.size(); ++k) env[vars_[k]] = point[k];
        std::vector<int64_t> idx;
        for (const Expr& e : indices) idx.push_back(eval_index(e, env));
        int64_t r = F.reg_at(idx);
        std::vector<int64_t> back;
        if (t >= F.num_threads() || !F.index_at(t, r, &back) || back != idx) {
          std::string at;
          for (size_t k = 0; k < idx.size(); ++k) at += (k ? ", " : "") + std::to_string(idx[k]);
          throw_error<LayoutError>("thread ", t, " needs element (", at, ") of fragment '", f.name(),
                                   "' (layout ", F.str(), ") in a loop laid out as ", layout_->str(),
                                   ", but does not hold it; copy '", f.name(),
                                   "' to a shared-memory buffer (T.alloc_shared) and read it from there");
        }
        if (common < 0) common = r;
        else if (common != r) uniform = false;
      }
      if (uniform && common >= 0) return make_int(common);
    }
    return F.reg_of(indices);
  }

  Expr mutate_load(const BufferLoadNode* n, const Expr& e) override {
    std::vector<Expr> idx;
    mutate_list(n->indices, &idx);
    if (n->buffer.scope() == MemScope::kFragment)
      return make_load(ctx_.regs_of(n->buffer), {register_index(n->buffer, idx)});
    return ctx_.load(n->buffer, idx);
  }

  Stmt mutate_store(const BufferStoreNode* n, const Stmt& s) override {
    std::vector<Expr> idx;
    mutate_list(n->indices, &idx);
    Expr v = mutate(n->value);
    if (n->buffer.scope() == MemScope::kFragment) {
      const Buffer& regs = ctx_.regs_of(n->buffer);
      return make_store(regs, {register_index(n->buffer, idx)}, make_cast(regs.dtype(), v), n->span);
    }
    auto [nb, nidx] = ctx_.remap(n->buffer, idx);
    return make_store(nb, nidx, make_cast(nb.dtype(), v), n->span);
  }

  Stmt mutate_tile_op(const TileOpNode* n, const Stmt& s) override {
    throw_error<LayoutError>(op_error_prefix(*n), "tile ops cannot appear inside a T.Parallel loop");
  }

 private:
  const CudaLowerCtx& ctx_;
  const std::vector<Var>& vars_;
  const Fragment* layout_;
  int64_t reg_;
};

}  // namespace

Stmt lower_parallel_nest(CudaLowerCtx& ctx, const std::vector<Var>& vars, const std::vector<int64_t>& extents,
                         const Stmt& body, const Fragment& layout, const Span& span) {
  TL_ICHECK(vars.size() == extents.size() && layout.shape() == extents, "nest and layout disagree");
  if (layout.num_threads() > ctx.num_threads)
    throw_error<LayoutError>(span.defined() ? span.str() + ": " : "", "a T.Parallel loop laid out over ",
                             layout.num_threads(), " threads in a kernel of ", ctx.num_threads, " threads");
  const int64_t regs = layout.num_regs();
  std::vector<Stmt> out;
  if (regs <= kMaxUnrolledRegs) {
    for (int64_t r = 0; r < regs; ++r) {
      std::vector<Expr> point = layout.index_of(ctx.tid, make_int(r));
      Expr valid = ctx.simplify_cond(layout.is_valid(ctx.tid, make_int(r), ctx.num_threads));
      if (is_zero(valid)) continue;
      NestAccessRewriter rw(ctx, vars, &layout, r);
      Stmt b = rw.mutate(body);
      std::map<Var, Expr, VarLess> sub;
      for (size_t k = 0; k < vars.size(); ++k) sub[vars[k]] = point[k];
      out.push_back(guarded(valid, substitute(b, sub)));
    }
    return make_seq(out, span);
  }
  Var r(ctx.fresh("r"));
  std::vector<Expr> point = layout.index_of(ctx.tid, r);
  Expr valid = ctx.simplify_cond(layout.is_valid(ctx.tid, r, ctx.num_threads));
  NestAccessRewriter rw(ctx, vars, &layout, -1);
  Stmt b = rw.mutate(body);
  std::map<Var, Expr, VarLess> sub;
  for (size_t k = 0; k < vars.size(); ++k) sub[vars[k]] = point[k];
  return make_for(r, make_int(0), make_int(regs), ForKind::kSerial, guarded(valid, substitute(b, sub)), {}, span);
}

namespace {

class UniformRewriter : public StmtMutator {
 public:
  explicit UniformRewriter(const CudaLowerCtx& ctx) : ctx_(ctx) {}

 protected:
  Expr mutate_load(const BufferLoadNode* n, const Expr& e) override {
    std::vector<Expr> idx;
    mutate_list(n->indices, &idx);
    if (n->buffer.scope() == MemScope::kFragment)
      return make_load(ctx_.regs_of(n->buffer), {ctx_.layout_of(n->buffer).reg_of(idx)});
    return ctx_.load(n->buffer, idx);
  }
  Stmt mutate_store(const BufferStoreNode* n, const Stmt& s) override {
    std::vector<Expr> idx;
    mutate_list(n->indices, &idx);
    Expr v = mutate(n->value);
    if (n->buffer.scope() == MemScope::kFragment) {
      const Buffer& regs = ctx_.regs_of(n->buffer);
      return make_store(regs, {ctx_.layout_of(n->buffer).reg_of(idx)}, make_cast(regs.dtype(), v), n->span);
    }
    auto [nb, nidx] = ctx_.remap(n->buffer, idx);
    return make_store(nb, nidx, make_cast(nb.dtype(), v), n->span);
  }

 private:
  const CudaLowerCtx& ctx_;
};

}  // namespace

Stmt lower_uniform_accesses(const CudaLowerCtx& ctx, const Stmt& s) {
  UniformRewriter rw(ctx);
  return rw.mutate(s);
}

Expr lower_uniform_accesses(const CudaLowerCtx& ctx, const Expr& e) {
  UniformRewriter rw(ctx);
  return rw.mutate(e);
}

}  // namespace tl
