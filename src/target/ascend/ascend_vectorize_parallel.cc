#include "target/ascend/ascend_vectorize_parallel.h"

#include <cstdio>
#include <cstdlib>
#include <map>

#include "ir/error.h"
#include "ir/functor.h"

namespace tl {

namespace {

struct Nest {
  std::vector<Var> vars;
  std::vector<Expr> mins, extents;
  const BufferStoreNode* store = nullptr;
};

bool uses_any(const Expr& e, const std::vector<Var>& vars) {
  bool found = false;
  for_each_subexpr(e, [&](const Expr& x) {
    for (auto& v : vars)
      if (x.same_as(v)) found = true;
  });
  return found;
}

class Lowerer {
 public:
  Lowerer(const Nest& n, int* counter) : n_(n), counter_(counter) {}

  // The region of `b` indexed by `idx`, or undefined when the indexing is not a plain box over the
  // nest's variables in nest order (each variable once, possibly plus a loop-invariant offset).
  BufferRegion box(const Buffer& b, const std::vector<Expr>& idx) {
    if (b.scope() != MemScope::kUB || idx.size() != b.ndim()) return {};
    std::vector<Range> rr;
    size_t next_var = 0;
    for (auto& e : idx) {
      if (!uses_any(e, n_.vars)) {
        rr.emplace_back(e, make_int(1));
        continue;
      }
      // e must be v or v + c with c loop-invariant, v the next variable in nest order.
      Expr off;
      const Var* v = nullptr;
      for (size_t k = next_var; k < n_.vars.size(); ++k) {
        if (e.same_as(n_.vars[k])) {
          v = &n_.vars[k];
          off = make_int(0, e.dtype());
          next_var = k + 1;
          break;
        }
        if (auto* bin = e.as<BinaryNode>(); bin && bin->op == BinOp::kAdd) {
          if (bin->a.same_as(n_.vars[k]) && !uses_any(bin->b, n_.vars)) off = bin->b;
          else if (bin->b.same_as(n_.vars[k]) && !uses_any(bin->a, n_.vars)) off = bin->a;
          if (off.defined()) {
            v = &n_.vars[k];
            next_var = k + 1;
            break;
          }
        }
        return {};  // variables out of nest order (a transpose) or other forms
      }
      if (!v) return {};
      size_t k = next_var - 1;
      rr.emplace_back(off + n_.mins[k], n_.extents[k]);
    }
    if (next_var != n_.vars.size()) return {};  // a variable that indexes nothing: a reduction / broadcast
    return BufferRegion(b, rr);
  }

  // The region of a lower-rank UB buffer indexed by the nest's leading variables in order (m[i] in an
  // (i, j) nest), or undefined.
  BufferRegion leading_box(const Buffer& b, const std::vector<Expr>& idx) {
    if (b.scope() != MemScope::kUB || idx.size() != b.ndim() || idx.empty() || idx.size() >= n_.vars.size()) return {};
    std::vector<Range> rr;
    for (size_t k = 0; k < idx.size(); ++k) {
      if (!idx[k].same_as(n_.vars[k])) return {};
      rr.emplace_back(n_.mins[k], n_.extents[k]);
    }
    return BufferRegion(b, rr);
  }

  // Operand of a vector op: a region (tile) or a loop-invariant scalar.
  struct Val {
    BufferRegion region;
    Expr scalar;
    bool ok = true;
  };

  Val lower(const Expr& e) {
    if (!uses_any(e, n_.vars)) return Val{{}, e, true};
    if (!e.dtype().is_float()) return fail();
    if (auto* l = e.as<BufferLoadNode>()) {
      if (l->buffer.dtype() != dtype_) return fail();
      BufferRegion r = box(l->buffer, l->indices);
      if (r.defined()) return Val{r, Expr(), true};
      // A row vector m[i] in an [i, j] nest: broadcast it to the tile first (brcb), then whole-tile ops.
      BufferRegion row = leading_box(l->buffer, l->indices);
      if (!row.defined()) return fail();
      return emit("tile.broadcast", {Val{row, Expr(), true}});
    }
    if (auto* b = e.as<BinaryNode>()) {
      static const std::map<BinOp, const char*> ops = {{BinOp::kAdd, "add"}, {BinOp::kSub, "sub"}, {BinOp::kMul, "mul"},
                                                       {BinOp::kDiv, "div"}, {BinOp::kMax, "max"}, {BinOp::kMin, "min"}};
      auto it = ops.find(b->op);
      if (it == ops.end()) return fail();
      Val x = lower(b->a), y = lower(b->b);
      if (!x.ok || !y.ok) return fail();
      bool commutes = b->op == BinOp::kAdd || b->op == BinOp::kMul || b->op == BinOp::kMax || b->op == BinOp::kMin;
      if (!x.region.defined() && commutes) std::swap(x, y);
      if (!x.region.defined()) {
        // s - x = (x * -1) + s ; s / x = reciprocal(x) * s
        if (b->op == BinOp::kSub) return emit("tile.add", {emit("tile.mul", {y, scalar(-1.0)}), x});
        if (b->op == BinOp::kDiv) return emit("tile.mul", {emit("tile.reciprocal", {y}), x});
        return fail();
      }
      return emit(std::string("tile.") + it->second, {x, y});
    }
    if (auto* sel = e.as<SelectNode>()) return lower_select(*sel);
    if (auto* u = e.as<UnaryNode>()) {
      if (u->op != UnOp::kNeg) return fail();
      Val x = lower(u->a);
      return x.ok ? emit("tile.mul", {x, scalar(-1.0)}) : fail();
    }
    if (auto* c = e.as<CallNode>()) {
      static const std::map<std::string, const char*> un = {{"exp", "exp"}, {"log", "ln"}, {"sqrt", "sqrt"},
                                                            {"rsqrt", "rsqrt"}, {"abs", "abs"}, {"sigmoid", "sigmoid"},
                                                            {"tanh", "tanh"}, {"exp2", "exp2"}};
      auto it = un.find(c->op);
      if (it == un.end() || c->args.size() != 1) return fail();
      Val x = lower(c->args[0]);
      return x.ok ? emit(std::string("tile.") + it->second, {x}) : fail();
    }
    return fail();
  }

  // T.if_then_else(x <cmp> y, a, b): tile.compare into a one-byte-per-element mask, then
  // tile.select (both native vector instructions). A scalar `a` is filled into a tile first (select
  // takes a tile there); a scalar `x` swaps the comparison's sides.
  Val lower_select(const SelectNode& sel) {
    static const std::map<BinOp, const char*> modes = {{BinOp::kEQ, "EQ"}, {BinOp::kNE, "NE"}, {BinOp::kGT, "GT"},
                                                       {BinOp::kGE, "GE"}, {BinOp::kLT, "LT"}, {BinOp::kLE, "LE"}};
    static const std::map<std::string, const char*> swapped = {{"EQ", "EQ"}, {"NE", "NE"}, {"GT", "LT"},
                                                                {"GE", "LE"}, {"LT", "GT"}, {"LE", "GE"}};
    auto* cmp = sel.cond.as<BinaryNode>();
    auto mode_it = cmp ? modes.find(cmp->op) : modes.end();
    if (mode_it == modes.end() || cmp->a.dtype() != dtype_ || cmp->b.dtype() != dtype_) return fail();
    std::string mode = mode_it->second;
    Val x = lower(cmp->a), y = lower(cmp->b);
    if (!x.ok || !y.ok) return fail();
    if (!x.region.defined()) {
      if (!y.region.defined()) return fail();  // a loop-invariant condition: not a vector select
      std::swap(x, y);
      mode = swapped.at(mode);
    }
    std::vector<Expr> shape(n_.extents.begin(), n_.extents.end());
    Buffer mask("par_mask" + std::to_string((*counter_)++), DataType::UInt(8), shape, MemScope::kUB, {},
                n_.store->span);
    temps_.push_back(mask);
    std::vector<TileArg> cargs{BufferRegion::full(mask), x.region};
    if (y.region.defined()) cargs.emplace_back(y.region);
    else cargs.emplace_back(make_cast(dtype_, y.scalar));
    ops_.push_back(make_tile_op("tile.compare", cargs, {{"mode", Attr(mode)}}, n_.store->span));
    Val a = lower(sel.true_value), b = lower(sel.false_value);
    if (!a.ok || !b.ok) return fail();
    if (!a.region.defined()) a = emit("fill", {a});
    const char* sel_mode = b.region.defined() ? "VSEL_TENSOR_TENSOR_MODE" : "VSEL_TENSOR_SCALAR_MODE";
    return emit("tile.select", {Val{BufferRegion::full(mask), Expr(), true}, a, b}, {{"mode", Attr(std::string(sel_mode))}});
  }

  // Lowers the store; returns the statements or an undefined Stmt when it does not fit.
  Stmt run() {
    const BufferStoreNode* st = n_.store;
    dtype_ = st->buffer.dtype();
    BufferRegion dst = box(st->buffer, st->indices);
    if (!dst.defined() || !dtype_.is_float()) return {};
    if (auto* c = st->value.as<CastNode>(); c && st->value.dtype() == dtype_) {
      // D[i, j] = cast(A[i, j]): one vector conversion.
      auto* l = c->value.as<BufferLoadNode>();
      BufferRegion src = l ? box(l->buffer, l->indices) : BufferRegion();
      if (src.defined() && l->buffer.dtype().is_float() && l->buffer.dtype() != dtype_)
        return make_tile_op("tile.cast", {dst, src}, {{"mode", Attr(std::string("CAST_NONE"))}}, st->span);
    }
    if (st->value.dtype() != dtype_) return {};
    dst_ = dst;
    Val v = lower(st->value);
    if (!v.ok) return {};
    if (ops_.empty()) {
      // A copy or a fill.
      if (v.region.defined()) ops_.push_back(make_tile_op("copy", {v.region, dst}, {}, st->span));
      else ops_.push_back(make_tile_op("fill", {dst, make_cast(dtype_, v.scalar)}, {}, st->span));
    } else {
      // Retarget the last op to write the destination instead of its temporary.
      auto* last = ops_.back().as<TileOpNode>();
      std::vector<TileArg> args = last->args;
      args[0] = dst;
      ops_.back() = make_tile_op(last->op, args, last->attrs, st->span);
      temps_.pop_back();
    }
    std::vector<Stmt> seq;
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (i) seq.push_back(make_evaluate(make_call(DataType::Void(), "ascend.pipe_barrier", {make_string("v")}), st->span));
      seq.push_back(ops_[i]);
    }
    Stmt body = make_seq(seq, st->span);
    for (auto it = temps_.rbegin(); it != temps_.rend(); ++it) body = make_allocate(*it, body, st->span);
    return body;
  }

 private:
  Val fail() { return Val{{}, Expr(), false}; }
  Val scalar(double v) { return Val{{}, make_const(dtype_, v), true}; }
  Val emit(const std::string& op, std::vector<Val> in, AttrMap attrs = {}) {
    for (auto& v : in)
      if (!v.ok) return fail();
    std::vector<Expr> shape;
    for (auto& e : n_.extents) shape.push_back(e);
    Buffer t("par_tmp" + std::to_string((*counter_)++), dtype_, shape, MemScope::kUB, {}, n_.store->span);
    temps_.push_back(t);
    std::vector<TileArg> args{BufferRegion::full(t)};
    for (auto& v : in) {
      if (v.region.defined()) args.emplace_back(v.region);
      else args.emplace_back(make_cast(dtype_, v.scalar));
    }
    ops_.push_back(make_tile_op(op, args, attrs, n_.store->span));
    return Val{BufferRegion::full(t), Expr(), true};
  }

  const Nest& n_;
  int* counter_;
  DataType dtype_;
  BufferRegion dst_;
  std::vector<Stmt> ops_;
  std::vector<Buffer> temps_;
};

// With TL_ASCEND_TRACE_SCALAR_PARALLEL set, each T.Parallel nest left on the scalar unit is named on
// stderr with the reason (a diagnostic: which user loops run with scalar timing).
Stmt scalar_fallback(const Stmt& s, const char* why) {
  if (std::getenv("TL_ASCEND_TRACE_SCALAR_PARALLEL"))
    std::fprintf(stderr, "%sT.Parallel stays on the scalar unit: %s\n", s.span().prefix().c_str(), why);
  return s;
}

class Vectorizer : public StmtMutator {
 protected:
  Stmt mutate_for(const ForNode* f, const Stmt& s) override {
    if (f->for_kind != ForKind::kParallel) return StmtMutator::mutate_for(f, s);
    Nest n;
    Stmt cur = s;
    while (auto* lf = cur.as<ForNode>()) {
      if (lf->for_kind != ForKind::kParallel || !is_const_int(lf->extent))
        return scalar_fallback(s, "a non-constant extent or a serial loop inside the nest");
      n.vars.push_back(lf->var);
      n.mins.push_back(lf->min);
      n.extents.push_back(lf->extent);
      cur = lf->body;
    }
    n.store = cur.as<BufferStoreNode>();
    if (!n.store) return scalar_fallback(s, "the body is not one store");
    Lowerer l(n, &counter_);
    Stmt out = l.run();
    if (out.defined()) return out;
    if (n.vars.size() >= 2) {
      // A row or column broadcast (x[i, j] - m[i], c[i, j] + bias[j]): the outer loop becomes serial
      // and each row is one set of vector ops, m[i] a scalar operand (as Expert kernels write it).
      Nest inner;
      inner.vars.assign(n.vars.begin() + 1, n.vars.end());
      inner.mins.assign(n.mins.begin() + 1, n.mins.end());
      inner.extents.assign(n.extents.begin() + 1, n.extents.end());
      inner.store = n.store;
      Lowerer l2(inner, &counter_);
      Stmt rows = l2.run();
      if (rows.defined()) return make_for(n.vars[0], n.mins[0], n.extents[0], ForKind::kSerial, rows, {}, s.span());
    }
    return scalar_fallback(s, "the store's expression has no vector form");
  }

 private:
  int counter_ = 0;
};

}  // namespace

PrimFunc ascend_vectorize_parallel(const PrimFunc& f, const PassContext& ctx) {
  Vectorizer v;
  Stmt b = v.mutate(f.body());
  return b.same_as(f.body()) ? f : f.with_body(b);
}

TL_REGISTER_PASS("ascend_vectorize_parallel", ascend_vectorize_parallel);

}  // namespace tl
