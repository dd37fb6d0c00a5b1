// Lowering of T.Parallel nests and of buffer accesses outside tile ops (see lower_context.h).
#include <algorithm>
#include <set>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/tile_op.h"
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

// The iteration point of every (thread, register) of a nest's layout, computed on first use and
// shared by the rewriters of the nest's registers (each checks, for every fragment access, what
// every thread reads in its register).
struct NestPoints {
  explicit NestPoints(const Fragment& l) : layout(l) {}
  const Fragment& layout;
  std::vector<char> valid;      // [t * num_regs + r]: (t, r) is a real iteration
  std::vector<int64_t> coords;  // [(t * num_regs + r) * rank + d]

  void build() {
    if (!valid.empty()) return;
    const int64_t T = layout.num_threads(), R = layout.num_regs();
    const size_t rank = layout.shape().size();
    valid.assign(static_cast<size_t>(T * R), 0);
    coords.assign(valid.size() * rank, 0);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t r = 0; r < R; ++r) {
        const size_t slot = static_cast<size_t>(t * R + r);
        valid[slot] = layout.index_at(layout.thread_offset() + t, r, coords.data() + slot * rank);
      }
  }
};

// Rewrites accesses inside one register's copy of a nest body (still in the loop variables).
class NestAccessRewriter : public StmtMutator {
 public:
  NestAccessRewriter(const CudaLowerCtx& ctx, const std::vector<Var>& vars, NestPoints* points, int64_t reg)
      : ctx_(ctx), vars_(vars), points_(points), reg_(reg) {}

 protected:
  Expr register_index(const Buffer& f, const std::vector<Expr>& indices) {
    const Fragment& F = ctx_.layout_of(f);
    if (points_ && reg_ >= 0 && uses_only(indices, vars_)) {
      // The register each thread needs for this iteration; constant when all threads agree.
      points_->build();
      const Fragment& L = points_->layout;
      const int64_t R = L.num_regs();
      const size_t rank = vars_.size();
      int64_t common = -1;
      bool uniform = true;
      NestIndexEval eval_at(vars_, indices);
      std::vector<int64_t> idx(indices.size());
      for (int64_t t = 0; t < L.num_threads() && uniform; ++t) {
        const size_t slot = static_cast<size_t>(t * R + reg_);
        if (!points_->valid[slot]) continue;
        eval_at.eval(points_->coords.data() + slot * rank, idx.data());
        int64_t r = 0;
        const int64_t bt = L.thread_offset() + t;  // the block thread
        if (idx.size() != F.shape().size() || !F.holds(bt, idx.data(), &r)) {
          std::string at;
          for (size_t k = 0; k < idx.size(); ++k) at += (k ? ", " : "") + std::to_string(idx[k]);
          throw_error<LayoutError>("thread ", bt, " needs element (", at, ") of fragment '", f.name(),
                                   "' (layout ", F.str(), ") in a loop laid out as ", L.str(),
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

  Expr fragment_register(const Buffer& b, const std::vector<Expr>& indices) {
    return b.scope() == MemScope::kFragment ? register_index(b, indices) : Expr();
  }

  Expr mutate_load(const BufferLoadNode* n, const Expr& e) override {
    std::vector<Expr> idx;
    mutate_list(n->indices, &idx);
    return ctx_.lowered_load(n->buffer, idx, fragment_register(n->buffer, idx));
  }

  Stmt mutate_store(const BufferStoreNode* n, const Stmt& s) override {
    std::vector<Expr> idx;
    mutate_list(n->indices, &idx);
    Expr v = mutate(n->value);
    return ctx_.lowered_store(n->buffer, idx, v, n->span, fragment_register(n->buffer, idx));
  }

  Stmt mutate_tile_op(const TileOpNode* n, const Stmt& s) override {
    throw_error<LayoutError>(op_error_prefix(*n), "tile ops cannot appear inside a T.Parallel loop");
  }

 private:
  const CudaLowerCtx& ctx_;
  const std::vector<Var>& vars_;
  NestPoints* points_;
  int64_t reg_;
};

// ---- unswitching of affine conditions ---------------------------------------------------------
//
// A select whose condition compares affine functions of the nest's variables (a causal mask,
// `if_then_else(bx * bM + i >= k * bN + j, 0, -inf)`, or a tail mask `k * bN + j < n`) holds for
// the whole nest whenever it holds at the nest's worst corner, which depends only on values outside
// the nest (block indices, the pipeline's loop variable). The nest is then emitted twice: with the
// select replaced by its true value under that run-time test, and as written otherwise, so masks
// cost nothing in the blocks they do not cut.

// e = sum_k coeff[k] * vars[k] + rest, with rest free of the nest's variables.
bool affine_in(const Expr& e, const std::vector<Var>& vars, std::vector<int64_t>* coeff, Expr* rest) {
  auto mentions = [&](const Expr& x) {
    bool m = false;
    for_each_subexpr(x, [&](const Expr& y) {
      if (const VarNode* v = y.as<VarNode>())
        for (const Var& lv : vars) m |= lv.get() == v;
    });
    return m;
  };
  coeff->assign(vars.size(), 0);
  if (!mentions(e)) {
    *rest = e;
    return true;
  }
  if (const VarNode* v = e.as<VarNode>()) {
    for (size_t k = 0; k < vars.size(); ++k)
      if (vars[k].get() == v) (*coeff)[k] = 1;
    *rest = make_int(0, e.dtype());
    return true;
  }
  if (const auto* c = e.as<CastNode>()) return c->dtype.is_integer() && affine_in(c->value, vars, coeff, rest);
  const auto* b = e.as<BinaryNode>();
  if (!b) return false;
  std::vector<int64_t> ca, cb;
  Expr ra, rb;
  if (b->op == BinOp::kAdd || b->op == BinOp::kSub) {
    if (!affine_in(b->a, vars, &ca, &ra) || !affine_in(b->b, vars, &cb, &rb)) return false;
    int64_t sign = b->op == BinOp::kAdd ? 1 : -1;
    for (size_t k = 0; k < vars.size(); ++k) (*coeff)[k] = ca[k] + sign * cb[k];
    *rest = b->op == BinOp::kAdd ? ra + rb : ra - rb;
    return true;
  }
  if (b->op == BinOp::kMul) {
    int64_t f = 0;
    const Expr* other = nullptr;
    if (is_const_int(b->a, &f)) other = &b->b;
    else if (is_const_int(b->b, &f)) other = &b->a;
    if (!other || !affine_in(*other, vars, &ca, &ra)) return false;
    for (size_t k = 0; k < vars.size(); ++k) (*coeff)[k] = ca[k] * f;
    *rest = ra * make_int(f, ra.dtype());
    return true;
  }
  return false;
}

// The condition under which `cond` holds at every point of the nest, or an undefined Expr when it
// cannot be stated (not a conjunction of <, <=, >, >= between affine integer expressions that
// vary inside the nest).
Expr holds_everywhere(const Expr& cond, const std::vector<Var>& vars, const std::vector<int64_t>& extents) {
  const auto* b = cond.as<BinaryNode>();
  if (!b) return Expr();
  if (b->op == BinOp::kAnd) {
    Expr x = holds_everywhere(b->a, vars, extents), y = holds_everywhere(b->b, vars, extents);
    return x.defined() && y.defined() ? (x && y) : Expr();
  }
  if (b->op != BinOp::kLT && b->op != BinOp::kLE && b->op != BinOp::kGT && b->op != BinOp::kGE) return Expr();
  if (!b->a.dtype().is_integer() || !b->b.dtype().is_integer()) return Expr();
  // d = larger side - smaller side: the condition is d >= 0 (d > 0 when strict).
  bool less = b->op == BinOp::kLT || b->op == BinOp::kLE;
  Expr d = less ? b->b - b->a : b->a - b->b;
  bool strict = b->op == BinOp::kLT || b->op == BinOp::kGT;
  std::vector<int64_t> coeff;
  Expr rest;
  if (!affine_in(d, vars, &coeff, &rest)) return Expr();
  int64_t lo = 0;
  bool varies = false;
  for (size_t k = 0; k < vars.size(); ++k) {
    if (!coeff[k]) continue;
    varies = true;
    if (coeff[k] < 0) lo += coeff[k] * (extents[k] - 1);
  }
  if (!varies) return Expr();
  Expr min_d = rest + make_int(lo, rest.dtype());
  return strict ? (min_d > make_int(0, rest.dtype())) : (min_d >= make_int(0, rest.dtype()));
}

// Replaces the given selects by their true values.
class SelectTaker : public StmtMutator {
 public:
  explicit SelectTaker(std::vector<const SelectNode*> selects) : selects_(std::move(selects)) {}

 protected:
  Expr mutate_select(const SelectNode* n, const Expr& e) override {
    for (const SelectNode* s : selects_)
      if (s == n) return mutate(n->true_value);
    return StmtMutator::mutate_select(n, e);
  }

 private:
  std::vector<const SelectNode*> selects_;
};

Stmt lower_nest_body(CudaLowerCtx& ctx, const std::vector<Var>& vars, const Stmt& body, const Fragment& layout,
                     const Span& span) {
  const int64_t regs = layout.num_regs();
  std::vector<Stmt> out;
  if (regs <= kMaxUnrolledRegs) {
    NestPoints points(layout);
    for (int64_t r = 0; r < regs; ++r) {
      std::vector<Expr> point = layout.index_of(ctx.tid, make_int(r));
      Expr valid = ctx.simplify_cond(layout.is_valid(ctx.tid, make_int(r), ctx.num_threads));
      if (is_zero(valid)) continue;
      NestAccessRewriter rw(ctx, vars, &points, r);
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
  NestAccessRewriter rw(ctx, vars, nullptr, -1);
  Stmt b = rw.mutate(body);
  std::map<Var, Expr, VarLess> sub;
  for (size_t k = 0; k < vars.size(); ++k) sub[vars[k]] = point[k];
  return make_for(r, make_int(0), make_int(regs), ForKind::kSerial, guarded(valid, substitute(b, sub)), {}, span);
}


// `frag[i] += a[i, j]` in `T.Parallel(M, N)` whose layout spreads j over threads: each thread
// would keep its own partial result in its copy of frag[i] (silently wrong after the loop). That
// is what T.alloc_reducer + T.finalize_reducer are for; anything else is refused.
void check_no_cross_thread_accumulation(const CudaLowerCtx& ctx, const std::vector<Var>& vars, const Stmt& body,
                                        const Fragment& layout, const Span& span) {
  std::vector<bool> spread(vars.size(), false);
  for (const FragmentMode& m : layout.modes())
    if (m.on_threads() && m.dim >= 0 && static_cast<size_t>(m.dim) < vars.size() && m.extent > 1) spread[m.dim] = true;
  // For each variable of the body: which nest variables its value depends on.
  std::map<const VarNode*, std::set<size_t>> deps;
  for (size_t k = 0; k < vars.size(); ++k) deps[vars[k].get()] = {k};
  auto depends = [&](const Expr& e) {
    std::set<size_t> out;
    for_each_subexpr(e, [&](const Expr& x) {
      if (const VarNode* v = x.as<VarNode>()) {
        auto it = deps.find(v);
        if (it != deps.end()) out.insert(it->second.begin(), it->second.end());
      }
    });
    return out;
  };
  // `ctrl`: the nest variables the enclosing conditions depend on.
  std::function<void(const Stmt&, const std::set<size_t>&)> walk = [&](const Stmt& s, const std::set<size_t>& ctrl) {
    if (!s.defined()) return;
    if (const auto* l = s.as<LetStmtNode>()) {
      deps[l->var.get()] = depends(l->value);
      walk(l->body, ctrl);
    } else if (const auto* st = s.as<BufferStoreNode>()) {
      if (st->buffer.scope() != MemScope::kFragment || ctx.reducers.count(st->buffer.get())) return;
      std::set<size_t> in_index;
      for (const Expr& i : st->indices)
        for (size_t k : depends(i)) in_index.insert(k);
      std::set<size_t> used = depends(st->value);
      used.insert(ctrl.begin(), ctrl.end());
      for (size_t k : used) {
        if (!spread[k] || in_index.count(k)) continue;
        throw_error<LayoutError>(st->span.defined() ? st->span.prefix() : span.prefix(), "T.Parallel stores into '",
                                 st->buffer.name(), "' a value that depends on '", vars[k].name(),
                                 "', which does not index it; the loop spreads '", vars[k].name(),
                                 "' over threads, so each thread would keep its own partial result. Allocate '",
                                 st->buffer.name(), "' with T.alloc_reducer and call T.finalize_reducer after the "
                                 "loop, or reduce with T.reduce_sum / T.reduce_max");
      }
    } else if (const auto* seq = s.as<SeqStmtNode>()) {
      for (const Stmt& x : seq->seq) walk(x, ctrl);
    } else if (const auto* f = s.as<ForNode>()) {
      std::set<size_t> c = ctrl;
      for (size_t k : depends(f->min)) c.insert(k);
      for (size_t k : depends(f->extent)) c.insert(k);
      deps[f->var.get()] = c;
      walk(f->body, c);
    } else if (const auto* i = s.as<IfThenElseNode>()) {
      std::set<size_t> c = ctrl;
      for (size_t k : depends(i->cond)) c.insert(k);
      walk(i->then_case, c);
      walk(i->else_case, c);
    } else if (const auto* a = s.as<AllocateNode>()) {
      walk(a->body, ctrl);
    } else if (const auto* at = s.as<AttrStmtNode>()) {
      walk(at->body, ctrl);
    }
  };
  walk(body, {});
}

}  // namespace

Stmt lower_parallel_nest(CudaLowerCtx& ctx, const std::vector<Var>& vars, const std::vector<int64_t>& extents,
                         const Stmt& body, const Fragment& layout, const Span& span) {
  TL_ICHECK(vars.size() == extents.size() && layout.shape() == extents, "nest and layout disagree");
  if (layout.thread_end() > ctx.num_threads)
    throw_error<LayoutError>(span.prefix(), "a T.Parallel loop laid out over threads up to ",
                             layout.thread_end(), " in a kernel of ", ctx.num_threads, " threads");
  check_no_cross_thread_accumulation(ctx, vars, body, layout, span);
  // The hoisted test runs before the nest, where nothing bound inside the body exists: values
  // bound by lets are replaced by their definitions (in the nest's variables), and a condition
  // that still mentions an inner variable (an inner loop's) or reads a buffer the body writes
  // stays where it is.
  std::map<Var, Expr, VarLess> lets;
  std::set<const VarNode*> let_vars, inner_vars;
  std::set<const BufferNode*> written;
  post_order_visit(body, [&](const Stmt& st) {
    if (const auto* l = st.as<LetStmtNode>()) {
      lets[l->var] = l->value;
      let_vars.insert(l->var.get());
    }
    if (const auto* f = st.as<ForNode>()) inner_vars.insert(f->var.get());
    if (const auto* w = st.as<BufferStoreNode>()) written.insert(w->buffer.get());
  });
  auto outside_form = [&](Expr c) -> Expr {
    for (size_t round = 0; round <= lets.size(); ++round) {
      bool uses_let = false;
      for_each_subexpr(c, [&](const Expr& x) {
        if (const auto* v = x.as<VarNode>()) uses_let |= let_vars.count(v) > 0;
      });
      if (!uses_let) break;
      c = substitute(c, lets);
    }
    bool ok = true;
    for_each_subexpr(c, [&](const Expr& x) {
      if (const auto* v = x.as<VarNode>()) {
        ok &= !inner_vars.count(v) && !let_vars.count(v);
      } else if (const auto* ld = x.as<BufferLoadNode>()) {
        ok &= !written.count(ld->buffer.get());
      }
    });
    return ok ? c : Expr();
  };
  std::vector<const SelectNode*> selects;
  std::vector<Expr> always;
  for_each_expr(body, [&](const Expr& e) {
    for_each_subexpr(e, [&](const Expr& x) {
      const auto* sel = x.as<SelectNode>();
      if (!sel || std::find(selects.begin(), selects.end(), sel) != selects.end()) return;
      Expr cond = outside_form(sel->cond);
      if (!cond.defined()) return;
      Expr a = holds_everywhere(cond, vars, extents);
      if (!a.defined()) return;
      selects.push_back(sel);
      always.push_back(a);
    });
  });
  if (selects.empty()) return lower_nest_body(ctx, vars, body, layout, span);
  SelectTaker take(selects);
  Stmt fast = lower_nest_body(ctx, vars, take.mutate(body), layout, span);
  Stmt general = lower_nest_body(ctx, vars, body, layout, span);
  return make_if(all_of(always), fast, general, span);
}

namespace {

class UniformRewriter : public StmtMutator {
 public:
  explicit UniformRewriter(const CudaLowerCtx& ctx) : ctx_(ctx) {}

 protected:
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
