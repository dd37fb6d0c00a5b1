#include "transform/config_index_bitwidth.h"

#include <map>
#include <set>

#include "arith/const_int_bound.h"
#include "ir/functor.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

constexpr int64_t kInt32Max = 2147483647;
constexpr int64_t kInt32Min = -kInt32Max - 1;

bool fits_int32(const ConstIntBound& b) { return b.min_value >= kInt32Min && b.max_value <= kInt32Max; }

// What is known about an expression: its exact (non-wrapping) value range, and whether it is
// index arithmetic (integers from variables with known ranges and constants; no loads, no calls).
struct Info {
  ConstIntBound bound;
  bool index = false;
};

// Walks a function with the value ranges of its variables; where int32 index arithmetic can leave
// the int32 range (or, with `widen_all`, anywhere) it recomputes it in int64 when `rewrite` is set,
// and records the nodes that overflow (original nodes when not rewriting).
class Widener : public StmtMutator {
 public:
  Widener(bool rewrite, bool widen_all, int64_t runtime_limit, const PrimFunc& f)
      : rewrite_(rewrite), widen_all_(widen_all) {
    for (const Var& v : f.dynamic_vars()) runtime(v, runtime_limit, /*dimension=*/true);
    for (const Param& p : f.params())
      if (!p.is_buffer() && p.var.dtype().is_integer() && !env_.count(p.var.get())) runtime(p.var, runtime_limit, false);
  }

  using StmtMutator::mutate;

  std::set<const ExprNode*> overflows;      // nodes whose int32 value range is exceeded
  std::set<const VarNode*> overflow_vars;   // run-time integers those nodes use

  // Expressions the statement mutators reach through the base class: conditions are index
  // context (bounds guards compare indices), stored values and evaluated calls are data (their
  // int32 arithmetic wraps as written), except the indices of the loads inside them.
  Expr mutate(const Expr& e) override {
    Info i;
    return widen(e, &i);
  }

 protected:
  Stmt mutate_kernel(const KernelLaunchNode* n, const Stmt& s) override {
    auto saved = env_;
    std::vector<Expr> grid;
    bool changed = false;
    for (size_t k = 0; k < n->grid.size(); ++k) {
      Info g;
      grid.push_back(widen(n->grid[k], &g));
      changed |= !grid.back().same_as(n->grid[k]);
      if (k < n->block_vars.size()) bind(n->block_vars[k], range_below(g));
    }
    for (size_t k = 0; k < n->thread_vars.size() && k < n->threads.size(); ++k) {
      Info t;
      widen(n->threads[k], &t);
      bind(n->thread_vars[k], range_below(t));
    }
    Stmt body = StmtMutator::mutate(n->body);
    env_ = saved;
    if (!changed && body.same_as(n->body)) return s;
    return make_kernel(grid, n->block_vars, n->threads, n->thread_vars, n->attrs, body, n->span);
  }

  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    auto saved = env_;
    Info imin, iext;
    Expr mn = widen(n->min, &imin), ext = widen(n->extent, &iext);
    ConstIntBound r(imin.bound.min_value, sat_add(sat_add(imin.bound.max_value, iext.bound.max_value), -1));
    if (!imin.index || !iext.index) r = ConstIntBound::of_dtype(n->var.dtype());
    Var v = n->var;
    Stmt body = n->body;
    // The loop runs while v < min + extent: v and that sum must fit v's type.
    bool wide = mn.dtype() != v.dtype() || ext.dtype() != v.dtype() ||
                (v.dtype() == DataType::Int32() && imin.index && iext.index &&
                 sat_add(imin.bound.max_value, iext.bound.max_value) > kInt32Max);
    if (wide && v.dtype() == DataType::Int32()) {
      note_overflow(n->min);
      if (rewrite_) {
        v = Var(n->var.name(), DataType::Int64());
        body = substitute(body, {{n->var, v}});
      }
    }
    bind(v, r);
    body = StmtMutator::mutate(body);
    env_ = saved;
    if (v.same_as(n->var) && mn.same_as(n->min) && ext.same_as(n->extent) && body.same_as(n->body)) return s;
    return make_for(v, mn, ext, n->for_kind, body, n->annotations, n->span);
  }

  Stmt mutate_let(const LetStmtNode* n, const Stmt& s) override {
    auto saved = env_;
    Info iv;
    Expr value = widen(n->value, &iv);
    Var v = n->var;
    Stmt body = n->body;
    if (value.dtype() != v.dtype()) {  // the value is now computed in int64
      v = Var(n->var.name(), value.dtype());
      body = substitute(body, {{n->var, v}});
    }
    if (v.dtype().is_integer()) bind(v, iv.index ? iv.bound : ConstIntBound::of_dtype(v.dtype()), iv.index);
    body = StmtMutator::mutate(body);
    env_ = saved;
    if (v.same_as(n->var) && value.same_as(n->value) && body.same_as(n->body)) return s;
    return make_let(v, value, body, n->span);
  }

  Stmt mutate_store(const BufferStoreNode* n, const Stmt& s) override {
    std::vector<Expr> idx;
    bool changed = false;
    for (const Expr& i : n->indices) {
      Info ii;
      idx.push_back(widen_in(i, &ii, true));
      changed |= !idx.back().same_as(i);
    }
    Info iv;
    Expr v = widen_in(n->value, &iv, false);
    if (!changed && v.same_as(n->value)) return s;
    return make_store(n->buffer, idx, v, n->span);
  }

  Stmt mutate_evaluate(const EvaluateNode* n, const Stmt& s) override {
    Info i;
    Expr v = widen_in(n->value, &i, false);
    return v.same_as(n->value) ? s : make_evaluate(v, n->span);
  }

  Stmt mutate_tile_op(const TileOpNode* n, const Stmt& s) override {
    std::vector<TileArg> args;
    bool changed = false;
    for (const TileArg& a : n->args) {
      if (a.is_expr()) {
        Info ie;
        Expr e = widen_in(a.expr, &ie, false);
        changed |= !e.same_as(a.expr);
        args.push_back(e);
        continue;
      }
      std::vector<Range> region;
      for (const Range& r : a.region.region) {
        Info imin, iext;
        Expr mn = widen(r.min, &imin), ext = widen(r.extent, &iext);
        // The lowering adds offsets up to the extent to the tile's origin.
        if (mn.dtype() == DataType::Int32() && imin.index && iext.index &&
            (widen_all_ || sat_add(imin.bound.max_value, iext.bound.max_value) > kInt32Max)) {
          note_overflow(r.min);
          if (rewrite_) mn = make_cast(DataType::Int64(), mn);
        }
        changed |= !mn.same_as(r.min) || !ext.same_as(r.extent);
        region.push_back(Range(mn, ext));
      }
      args.push_back(BufferRegion(a.region.buffer, region));
    }
    if (!changed) return s;
    return make_tile_op(n->op, args, n->attrs, n->span);
  }

 private:
  void runtime(const Var& v, int64_t limit, bool dimension) {
    ConstIntBound dt = ConstIntBound::of_dtype(v.dtype());
    int64_t lo = dimension || v.dtype().is_uint() ? 0 : -limit;
    env_[v.get()] = {ConstIntBound(std::max(lo, dt.min_value), std::min(limit, dt.max_value)), true};
    runtime_.insert(v.get());
  }

  void bind(const Var& v, const ConstIntBound& b, bool index = true) { env_[v.get()] = {b, index}; }

  static ConstIntBound range_below(const Info& extent) {
    if (!extent.index || !extent.bound.has_upper()) return ConstIntBound(0, ConstIntBound::kPosInf);
    return ConstIntBound(0, std::max<int64_t>(0, extent.bound.max_value - 1));
  }

  void note_overflow(const Expr& original) {
    overflows.insert(original.get());
    for_each_subexpr(original, [&](const Expr& x) {
      if (const auto* v = x.as<VarNode>())
        if (runtime_.count(v)) overflow_vars.insert(v);
    });
  }

  static Expr to64(const Expr& e) { return make_cast(DataType::Int64(), e); }

  Expr widen_in(const Expr& e, Info* info, bool index_context) {
    bool saved = index_ctx_;
    index_ctx_ = index_context;
    Expr out = widen(e, info);
    index_ctx_ = saved;
    return out;
  }

  // The expression with its overflowing int32 parts recomputed in int64.
  Expr widen(const Expr& e, Info* info) {
    info->index = false;
    info->bound = e.dtype().is_integer() || e.dtype().is_bool() ? ConstIntBound::of_dtype(e.dtype())
                                                                 : ConstIntBound::everything();
    switch (e.kind()) {
      case ExprKind::kIntImm:
        info->bound = ConstIntBound::point(e.as<IntImmNode>()->value);
        info->index = e.dtype().is_integer();
        return e;
      case ExprKind::kVar: {
        auto it = env_.find(e.as<VarNode>());
        if (it != env_.end() && e.dtype().is_integer()) {
          info->bound = it->second.bound;
          info->index = it->second.index;
        }
        return e;
      }
      case ExprKind::kBinary: return widen_binary(e, info);
      case ExprKind::kUnary: {
        const auto* u = e.as<UnaryNode>();
        Info ia;
        Expr a = widen(u->a, &ia);
        Expr out = a.same_as(u->a) ? e : make_unary(u->op, a);
        if (u->op == UnOp::kNeg && ia.index && e.dtype().is_int()) {
          info->bound = bound_neg(ia.bound);
          info->index = true;
          return check(e, out, info, [&] { return make_unary(u->op, to64(a)); });
        }
        return out;
      }
      case ExprKind::kSelect: {
        const auto* sel = e.as<SelectNode>();
        Info ic, it, iff;
        Expr c = widen_in(sel->cond, &ic, true), t = widen(sel->true_value, &it), f = widen(sel->false_value, &iff);
        Expr out = c.same_as(sel->cond) && t.same_as(sel->true_value) && f.same_as(sel->false_value)
                       ? e
                       : make_select(c, t, f);
        if (it.index && iff.index) {
          info->bound = bound_union(it.bound, iff.bound);
          info->index = true;
        }
        return out;
      }
      case ExprKind::kCast: {
        const auto* c = e.as<CastNode>();
        Info iv;
        Expr v = widen(c->value, &iv);
        Expr out = v.same_as(c->value) ? e : make_cast(e.dtype(), v);
        if (iv.index && e.dtype().is_integer()) {
          ConstIntBound dt = ConstIntBound::of_dtype(e.dtype());
          if (dt.contains(iv.bound.min_value) && dt.contains(iv.bound.max_value)) {
            info->bound = iv.bound;
            info->index = true;
          }
        }
        return out;
      }
      case ExprKind::kBufferLoad: {
        const auto* l = e.as<BufferLoadNode>();
        std::vector<Expr> idx;
        bool changed = false;
        for (const Expr& i : l->indices) {
          Info ii;
          idx.push_back(widen_in(i, &ii, true));
          changed |= !idx.back().same_as(i);
        }
        return changed ? make_load(l->buffer, idx) : e;
      }
      case ExprKind::kCall: {
        const auto* c = e.as<CallNode>();
        std::vector<Expr> args;
        bool changed = false;
        for (const Expr& a : c->args) {
          Info ia;
          Expr w = widen_in(a, &ia, false);
          // A call's signature stays as it was (a value that became int64 is cast back).
          if (w.dtype() != a.dtype()) w = make_cast(a.dtype(), w);
          args.push_back(w);
          changed |= !w.same_as(a);
        }
        return changed ? make_call(e.dtype(), c->op, args) : e;
      }
      default: return e;
    }
  }

  Expr widen_binary(const Expr& e, Info* info) {
    const auto* b = e.as<BinaryNode>();
    Info ia, ib;
    Expr a = widen(b->a, &ia), c = widen(b->b, &ib);
    Expr out = a.same_as(b->a) && c.same_as(b->b) ? e : make_binary(b->op, a, c);
    if (!e.dtype().is_integer() || !ia.index || !ib.index) return out;
    ConstIntBound r;
    switch (b->op) {
      case BinOp::kAdd: r = bound_add(ia.bound, ib.bound); break;
      case BinOp::kSub: r = bound_sub(ia.bound, ib.bound); break;
      case BinOp::kMul: r = bound_mul(ia.bound, ib.bound); break;
      case BinOp::kFloorDiv: r = bound_floordiv(ia.bound, ib.bound); break;
      case BinOp::kFloorMod: r = bound_floormod(ia.bound, ib.bound); break;
      case BinOp::kDiv: r = bound_truncdiv(ia.bound, ib.bound); break;
      case BinOp::kMod: r = bound_truncmod(ia.bound, ib.bound); break;
      case BinOp::kMin: r = bound_min(ia.bound, ib.bound); break;
      case BinOp::kMax: r = bound_max(ia.bound, ib.bound); break;
      default: return out;  // comparisons, logic and bit operations are not index arithmetic
    }
    info->bound = r;
    info->index = true;
    return check(e, out, info, [&] { return make_binary(b->op, to64(a), to64(c)); });
  }

  // `out` (the rebuilt `e`) or, when its int32 value range is exceeded, its int64 form.
  template <typename Rebuild>
  Expr check(const Expr& e, const Expr& out, const Info* info, Rebuild rebuild) {
    if (!index_ctx_ || out.dtype() != DataType::Int32()) return out;  // data, or already 64-bit
    bool exceeds = !fits_int32(info->bound);
    bool arith = e.kind() == ExprKind::kBinary || e.kind() == ExprKind::kUnary;
    if (!exceeds && !(widen_all_ && arith)) return out;
    note_overflow(e);
    return rewrite_ ? rebuild() : out;
  }

  bool rewrite_, widen_all_;
  bool index_ctx_ = true;  // loop bounds, grid, let values, conditions, indices
  std::map<const VarNode*, Info> env_;
  std::set<const VarNode*> runtime_;
};

struct Analysis {
  std::set<const ExprNode*> overflows;
  std::set<const VarNode*> vars;
};

Analysis analyze(const PrimFunc& f, bool widen_all, int64_t limit) {
  Widener w(false, widen_all, limit, f);
  w.mutate(f.body());
  return {w.overflows, w.overflow_vars};
}

constexpr int64_t kSmallestLimit = (int64_t(1) << 24) - 1;

}  // namespace

IndexWidthPlan plan_index_width(const PrimFunc& f, const AttrMap& configs) {
  IndexWidthPlan plan;
  bool widen_all = config_int(configs, "tl.config_index_bitwidth", 32) == 64;
  Analysis full = analyze(f, widen_all, kInt32Max);
  plan.widens = !full.overflows.empty();
  if (widen_all || full.overflows.empty() || full.vars.empty()) return plan;
  // Overflows that only large run-time values cause: assume smaller ones (checked at the call)
  // rather than compute in 64 bits for values a kernel rarely sees.
  Analysis tiny = analyze(f, false, 1);
  for (int64_t limit = kInt32Max >> 1; limit >= kSmallestLimit; limit >>= 1) {
    Analysis a = analyze(f, false, limit);
    if (a.overflows != tiny.overflows) continue;
    plan.widens = !tiny.overflows.empty();
    plan.runtime_limit = limit;
    for (const Param& p : f.params())
      if (!p.is_buffer() && full.vars.count(p.var.get())) plan.limited.push_back(p.var);
    for (const Var& v : f.dynamic_vars()) {
      bool listed = false;
      for (const Var& x : plan.limited) listed |= x.same_as(v);
      if (full.vars.count(v.get()) && !listed) plan.limited.push_back(v);
    }
    return plan;
  }
  return plan;  // even 2^24 overflows: widen for the full range
}

PrimFunc config_index_bitwidth(const PrimFunc& f, const PassContext& ctx) {
  IndexWidthPlan plan = plan_index_width(f, ctx.configs);
  if (!plan.widens) return f;
  bool widen_all = config_int(ctx.configs, "tl.config_index_bitwidth", 32) == 64;
  Widener w(true, widen_all, plan.runtime_limit ? plan.runtime_limit : kInt32Max, f);
  Stmt body = w.mutate(f.body());
  return body.same_as(f.body()) ? f : f.with_body(body);
}

TL_REGISTER_PASS("config_index_bitwidth", config_index_bitwidth);

}  // namespace tl
