#include "target/ascend/ascend_vid_reduction.h"

#include <functional>
#include <map>
#include <set>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/tile_op.h"
#include "op/tile_ops.h"
#include "sim/isa.h"
#include "target/ascend/ascend_infer_scope.h"

namespace tl {

namespace {

std::string at(const Span& s) { return s.defined() ? s.str() : "<unknown location>"; }
bool is_ub(const Buffer& b) { return b.scope() == MemScope::kUB; }
bool is_gm(const Buffer& b) { return b.scope() == MemScope::kGlobal; }

int64_t const_or(const Expr& e, int64_t d) {
  int64_t v;
  return is_const_int(e, &v) ? v : d;
}

bool uses_var(const Stmt& s, const VarNode* v) {
  bool used = false;
  for_each_expr(s, [&](const Expr& e) {
    for_each_subexpr(e, [&](const Expr& x) {
      if (x.get() == static_cast<const ExprNode*>(v)) used = true;
    });
  });
  return used;
}

// The chain of directly nested T.Parallel loops starting at `f`.
std::vector<const ForNode*> parallel_nest(const ForNode* f) {
  std::vector<const ForNode*> nest;
  for (const ForNode* cur = f; cur && cur->for_kind == ForKind::kParallel; cur = cur->body.as<ForNode>())
    nest.push_back(cur);
  return nest;
}

struct Access {
  Buffer b;
  std::vector<Expr> idx;
};
void nest_accesses(const Stmt& body, std::vector<Access>& out) {
  post_order_visit(body, [&](const Stmt& s) {
    if (auto* w = s.as<BufferStoreNode>()) out.push_back({w->buffer, w->indices});
  });
  for_each_expr(body, [&](const Expr& e) {
    for_each_subexpr(e, [&](const Expr& x) {
      if (auto* l = x.as<BufferLoadNode>()) out.push_back({l->buffer, l->indices});
    });
  });
}

// Union-find over rank-1 UB buffers.
struct UF {
  std::map<const BufferNode*, const BufferNode*> p;
  const BufferNode* find(const BufferNode* x) {
    auto it = p.find(x);
    if (it == p.end() || it->second == x) return p[x] = x;
    return p[x] = find(it->second);
  }
  void join(const BufferNode* a, const BufferNode* b) { p[find(a)] = find(b); }
};

bool reduce_parts(const TileOpNode& op, BufferRegion* src, BufferRegion* dst) {
  if (op.args.size() < 2 || !op.args[0].is_region() || !op.args[1].is_region()) return false;
  if (is_tile_op(op, TileOpKind::kReduce)) {
    *src = op.args[0].region;
    *dst = op.args[1].region;
    return true;
  }
  if (const ElementwiseOp* e = tile_op_as<ElementwiseOp>(op); e && e->fn().rfind("reduce_", 0) == 0) {  // tile.reduce_sum / _max / _min
    *dst = op.args[0].region;
    *src = op.args[1].region;
    return true;
  }
  return false;
}

class Reducer : public StmtMutator {
 public:
  Reducer(std::map<Buffer, Buffer, BufferLess> split, Expr vid) : split_(std::move(split)), vid_(std::move(vid)) {}

 protected:
  int64_t rows(const Buffer& b) const { return const_or(b.shape()[0], -1); }

  Stmt mutate_allocate(const AllocateNode* n, const Stmt& s) override {
    Stmt body = mutate(n->body);
    auto it = split_.find(n->buffer);
    if (it != split_.end()) return make_allocate(it->second, body, n->span);
    return body.same_as(n->body) ? s : make_allocate(n->buffer, body, n->span);
  }

  BufferRegion half(const BufferRegion& r, const TileOpNode& op) {
    const Buffer& b = r.buffer;
    int64_t m = rows(b), mn = const_or(r.region[0].min, -1), ext = const_or(r.region[0].extent, -1);
    // One row of a halved row loop (`for h in range(rows): T.tile.sub(x[h, :], ...)`): a local row.
    if (auto* v = r.region[0].min.as<VarNode>(); v && row_loops_.count(v) && ext == 1)
      return BufferRegion(split_.at(b), r.region);
    if (mn != 0 || ext != m)
      throw_error<NotImplemented>(op_error_prefix(op), "not implemented: the vector cores split UB tile '", b.name(),
                                  "' by rows (vid reduction, threads=2), but this region covers rows [",
                                  to_string(r.region[0].min), ", +", to_string(r.region[0].extent), ") of ", m,
                                  "; use the whole tile, or threads=1");
    std::vector<Range> rg = r.region;
    rg[0] = Range(make_int(0), make_int(m / 2));
    return BufferRegion(split_.at(b), rg);
  }

  // Scalar operands m[h] of a split row vector inside a halved row loop read the local row.
  Expr local_rows(const Expr& e) {
    class Sub : public ExprMutator {
     public:
      Sub(const std::map<Buffer, Buffer, BufferLess>& sp, const std::set<const VarNode*>& rl) : sp_(sp), rl_(rl) {}
      Expr mutate_load(const BufferLoadNode* l, const Expr& e) override {
        auto it = sp_.find(l->buffer);
        auto* v = l->indices.empty() ? nullptr : l->indices[0].as<VarNode>();
        if (it == sp_.end() || !v || !rl_.count(v)) return ExprMutator::mutate_load(l, e);
        return make_load(it->second, l->indices);
      }
      const std::map<Buffer, Buffer, BufferLess>& sp_;
      const std::set<const VarNode*>& rl_;
    } sub(split_, row_loops_);
    return sub.mutate(e);
  }

  Stmt mutate_tile_op(const TileOpNode* op, const Stmt& s) override {
    bool any = false;
    for (auto& a : op->args) {
      any |= a.is_region() && split_.count(a.region.buffer);
      if (a.is_expr())
        for_each_subexpr(a.expr, [&](const Expr& x) {
          if (auto* l = x.as<BufferLoadNode>()) any |= split_.count(l->buffer) > 0;
        });
    }
    if (is_tile_op(*op, TileOpKind::kCopy) && op->args.size() >= 2 && op->args[0].is_region() && op->args[1].is_region()) {
      const BufferRegion& src = op->args[0].region;
      const BufferRegion& dst = op->args[1].region;
      if (is_ub(src.buffer) && is_gm(dst.buffer) && !split_.count(src.buffer))
        throw_error<NotImplemented>(op_error_prefix(*op), "not implemented: UB buffer '", src.buffer.name(),
                                    "' is kept whole on both vector cores (vid reduction, threads=2: it is not "
                                    "indexed by rows), so both would write it to '", dst.buffer.name(),
                                    "'; use threads=1, or a row-split buffer");
      if (is_ub(src.buffer) && is_ub(dst.buffer) && split_.count(src.buffer) != split_.count(dst.buffer))
        throw_error<NotImplemented>(op_error_prefix(*op), "not implemented: a copy between row-split UB buffer '",
                                    (split_.count(src.buffer) ? src : dst).buffer.name(), "' and whole UB buffer '",
                                    (split_.count(src.buffer) ? dst : src).buffer.name(), "' (vid reduction)");
    }
    if (!any) return s;
    const ElementwiseOp* ew = tile_op_as<ElementwiseOp>(*op);
    if (ew && ew->fn() == "gather")
      throw_error<NotImplemented>(op_error_prefix(*op), "not implemented: T.tile.gather addresses its source by byte "
                                  "offsets over the whole tile, but the vid reduction (threads=2) splits the UB "
                                  "tiles by rows between the two vector cores; address the vector cores yourself "
                                  "(`as (cid, vid)` with per-core tiles) or use threads=1");
    if (ew && ew->fn() == "reinterpretcast" && op->args.size() == 2 &&
        split_.count(op->args[0].region.buffer) != split_.count(op->args[1].region.buffer))
      throw_error<NotImplemented>(op_error_prefix(*op), "not implemented: T.reinterpretcast between '",
                                  op->args[0].region.buffer.name(), "' and '", op->args[1].region.buffer.name(),
                                  "', of which the vid reduction (threads=2) splits only one by rows");
    BufferRegion rs, rd;
    if (reduce_parts(*op, &rs, &rd) && split_.count(rs.buffer)) {
      int64_t dim = attr_int(op->attrs, "dim", -1);
      if (dim == 0 && rs.buffer.ndim() > 1)
        throw_error<NotImplemented>(op_error_prefix(*op), "not implemented: a reduction over dim 0 of '",
                                    rs.buffer.name(), "', whose rows are split between the two vector cores "
                                    "(vid reduction, threads=2); use threads=1");
    }
    // The row extent the GM side moves by.
    int64_t m = -1;
    for (auto& a : op->args)
      if (a.is_region() && split_.count(a.region.buffer)) m = rows(a.region.buffer);
    std::vector<TileArg> args;
    for (auto& a : op->args) {
      if (!a.is_region()) {
        args.push_back(a.is_expr() ? TileArg(local_rows(a.expr)) : a);
        continue;
      }
      const BufferRegion& r = a.region;
      if (split_.count(r.buffer)) {
        args.push_back(half(r, *op));
      } else if (is_tile_op(*op, TileOpKind::kCopy) && is_gm(r.buffer)) {
        std::vector<Range> rg = r.region;
        size_t d = 0;
        while (d < rg.size() && const_or(rg[d].extent, -1) == 1) ++d;
        if (d == rg.size() || const_or(rg[d].extent, m) != m)
          throw_error<NotImplemented>(op_error_prefix(*op), "not implemented: vid reduction cannot find the GM "
                                      "dimension of '", r.buffer.name(), "' that matches the ", m,
                                      " rows of the split UB tile");
        rg[d] = Range(rg[d].min + vid_ * make_int(m / 2), make_int(m / 2));
        args.push_back(BufferRegion(r.buffer, rg));
      } else {
        args.push_back(a);
      }
    }
    if (ew && ew->fn() == "createvecindex" && args.size() == 2 && args[0].is_region() && args[1].is_expr()) {
      // Each vector core counts on from where the rows before its half end (row-major order).
      int64_t n = 1;
      for (auto& rg : args[0].region.region) {
        int64_t e = const_or(rg.extent, -1);
        if (e < 0)
          throw_error<NotImplemented>(op_error_prefix(*op), "not implemented: T.tile.createvecindex on a row-split "
                                      "tile of run-time shape (vid reduction)");
        n *= e;
      }
      const Expr& first = args[1].expr;
      args[1] = TileArg(first + make_cast(first.dtype(), vid_ * make_int(n)));
    }
    return make_tile_op(op->op, args, op->attrs, s.span());
  }

  // Rows of a split buffer that a sequential loop walks (the loop variable is the dim-0 index or
  // region start of split buffers): -1 when it indexes none, 0 when it is used otherwise too.
  int64_t walked_rows(const ForNode* n) {
    int64_t m = -1;
    bool other = false;
    const VarNode* v = n->var.get();
    auto is_v = [&](const Expr& e) { return e.get() == static_cast<const ExprNode*>(v); };
    post_order_visit(n->body, [&](const Stmt& st) {
      if (auto* op = st.as<TileOpNode>())
        for (auto& a : op->args)
          if (a.is_region() && split_.count(a.region.buffer) && is_v(a.region.region[0].min)) m = rows(a.region.buffer);
      if (auto* w = st.as<BufferStoreNode>(); w && split_.count(w->buffer) && !w->indices.empty() && is_v(w->indices[0]))
        m = rows(w->buffer);
    });
    for_each_expr(n->body, [&](const Expr& e) {
      for_each_subexpr(e, [&](const Expr& x) {
        if (auto* l = x.as<BufferLoadNode>(); l && split_.count(l->buffer) && !l->indices.empty() && is_v(l->indices[0]))
          m = rows(l->buffer);
      });
    });
    if (m < 0) return -1;
    // Every other use of the variable would see the local row where it needs the global one.
    post_order_visit(n->body, [&](const Stmt& st) {
      if (auto* op = st.as<TileOpNode>()) {
        for (auto& a : op->args) {
          if (a.is_expr()) {
            for_each_subexpr(a.expr, [&](const Expr& x) {
              if (auto* l = x.as<BufferLoadNode>()) {
                if (!split_.count(l->buffer)) other |= uses_var_expr(x, v);
              }
            });
            continue;
          }
          if (!a.is_region()) continue;
          for (size_t d = 0; d < a.region.region.size(); ++d) {
            bool dim0_split = d == 0 && split_.count(a.region.buffer);
            if (!dim0_split && (uses_var_expr(a.region.region[d].min, v) || uses_var_expr(a.region.region[d].extent, v)))
              other = true;
          }
        }
      }
    });
    return other ? 0 : m;
  }
  static bool uses_var_expr(const Expr& e, const VarNode* v) {
    bool used = false;
    for_each_subexpr(e, [&](const Expr& x) { used |= x.get() == static_cast<const ExprNode*>(v); });
    return used;
  }

  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    if (n->for_kind != ForKind::kParallel) {
      int64_t m = walked_rows(n);
      if (m < 0) return StmtMutator::mutate_for(n, s);
      if (m == 0 || const_or(n->min, -1) != 0 || const_or(n->extent, -1) != m)
        throw_error<NotImplemented>(at(n->span), ": not implemented: the loop over '", n->var->name,
                                    "' walks the rows of a UB tile that the two vector cores split (vid reduction, "
                                    "threads=2), but it does not run over exactly its ", m > 0 ? m : 0,
                                    " rows from 0 or uses the row elsewhere; use threads=1");
      row_loops_.insert(n->var.get());
      Stmt body = mutate(n->body);
      return make_for(n->var, n->min, make_int(m / 2), n->for_kind, body, n->annotations, n->span);
    }
    auto nest = parallel_nest(n);
    const Stmt& body = nest.back()->body;
    std::vector<Access> acc;
    nest_accesses(body, acc);
    std::map<const VarNode*, int64_t> row_vars;  // var -> rows of the buffers it indexes
    bool touches = false;
    for (auto& a : acc) {
      if (!split_.count(a.b)) continue;
      touches = true;
      auto* v = a.idx.empty() ? nullptr : a.idx[0].as<VarNode>();
      bool nest_var = false;
      for (auto* f : nest) nest_var |= v && f->var.get() == v;
      if (!nest_var || a.idx.size() != a.b.ndim())
        throw_error<NotImplemented>(at(s.span()), ": not implemented: '", a.b.name(), "' is split between the two "
                                    "vector cores by rows (vid reduction, threads=2), so its row index in a "
                                    "T.Parallel loop must be a loop variable of the nest; use threads=1");
      row_vars[v] = rows(a.b);
    }
    if (!touches) return s;
    std::map<Var, Expr, VarLess> shift;
    for (auto* f : nest)
      if (row_vars.count(f->var.get())) {
        int64_t m = row_vars[f->var.get()];
        if (const_or(f->extent, -1) != m || const_or(f->min, -1) != 0)
          throw_error<NotImplemented>(at(f->span), ": not implemented: the T.Parallel loop over '", f->var->name,
                                      "' indexes the ", m, " split rows of a UB tile but runs over ",
                                      to_string(f->extent), " (vid reduction, threads=2)");
        shift[f->var] = f->var + vid_ * make_int(m / 2);
      }
    // Whole buffers see the global row; split ones the local row.
    class Fix : public StmtMutator {
     public:
      Fix(const std::map<Buffer, Buffer, BufferLess>& sp, const std::map<Var, Expr, VarLess>& sh) : sp_(sp), sh_(sh) {}
      Expr mutate_load(const BufferLoadNode* l, const Expr& e) override {
        std::vector<Expr> idx;
        for (auto& i : l->indices) idx.push_back(sp_.count(l->buffer) ? mutate(i) : substitute(mutate(i), sh_));
        auto it = sp_.find(l->buffer);
        return make_load(it != sp_.end() ? it->second : l->buffer, idx);
      }
      Stmt mutate_store(const BufferStoreNode* n, const Stmt& s) override {
        std::vector<Expr> idx;
        for (auto& i : n->indices) idx.push_back(sp_.count(n->buffer) ? mutate(i) : substitute(mutate(i), sh_));
        auto it = sp_.find(n->buffer);
        return make_store(it != sp_.end() ? it->second : n->buffer, idx, mutate(n->value), n->span);
      }
      const std::map<Buffer, Buffer, BufferLess>& sp_;
      const std::map<Var, Expr, VarLess>& sh_;
    } fix(split_, shift);
    Stmt nb = fix.mutate(body);
    for (size_t i = nest.size(); i-- > 0;) {
      const ForNode* f = nest[i];
      Expr ext = f->extent;
      if (row_vars.count(f->var.get())) ext = make_int(row_vars[f->var.get()] / 2);
      nb = make_for(f->var, f->min, ext, f->for_kind, nb, f->annotations, f->span);
    }
    return nb;
  }

 private:
  std::map<Buffer, Buffer, BufferLess> split_;
  Expr vid_;
  std::set<const VarNode*> row_loops_;
};

}  // namespace

// Replaces kernel `k` of `f` by `kernel`.
PrimFunc swap_kernel(const PrimFunc& f, const KernelLaunchNode* k, Stmt kernel) {
  class Swap : public StmtMutator {
   public:
    explicit Swap(Stmt k, const StmtNode* old) : k_(std::move(k)), old_(old) {}
    Stmt mutate(const Stmt& s) override { return s.get() == old_ ? k_ : StmtMutator::mutate(s); }
    using StmtMutator::mutate;
    Stmt k_;
    const StmtNode* old_;
  } swap(std::move(kernel), k);
  return f.with_body(swap.mutate(f.body()));
}

// A vector-only kernel (no cube memory) with no UB tile to halve: the two vector cores would each do
// the whole block's work and write the same results twice. It runs on one vector core per block
// instead (threads=1; an AIV-only launch, as TileLang-Ascend's npuir route runs vector kernels).
bool uses_cube(const KernelLaunchNode* k) {
  bool cube = false;
  post_order_visit(k->body, [&](const Stmt& s) {
    if (auto* a = s.as<AllocateNode>()) {
      MemScope m = a->buffer.scope();
      cube |= m == MemScope::kL1 || m == MemScope::kL0A || m == MemScope::kL0B || m == MemScope::kL0C ||
              m == MemScope::kL0;
    }
    if (auto* op = s.as<TileOpNode>()) cube |= is_tile_op(*op, TileOpKind::kGemm);
  });
  return cube;
}

PrimFunc one_vector_core(const PrimFunc& f, const KernelLaunchNode* k, bool has_vid) {
  if (uses_cube(k)) return f;
  std::vector<Var> bvars = k->block_vars;
  std::vector<Expr> grid = k->grid;
  if (has_vid) {  // the vid the body never uses, and its extent
    bvars.resize(1);
    grid.resize(1);
  }
  AttrMap attrs = k->attrs;
  attrs["npu_vid"] = Attr(false);
  attrs["npu_threads"] = Attr(int64_t{1});
  return swap_kernel(f, k, make_kernel(grid, bvars, k->threads, k->thread_vars, attrs, k->body, k->span));
}

PrimFunc split_rows(const PrimFunc& f, const KernelLaunchNode* k, bool has_vid);

PrimFunc ascend_vid_reduction(const PrimFunc& f, const PassContext& ctx) {
  const KernelLaunchNode* k = nullptr;
  bool scoped = false;
  post_order_visit(f.body(), [&](const Stmt& s) {
    if (auto* kn = s.as<KernelLaunchNode>()) k = kn;
    if (auto* a = s.as<AttrStmtNode>(); a && a->key == "scope") scoped = true;
  });
  if (!k || !attr_bool(k->attrs, "is_npu", false) || scoped) return f;
  bool has_vid = attr_bool(k->attrs, "npu_vid", false) && k->block_vars.size() >= 2;
  if (has_vid) {
    if (!ascend_cv_combine_enabled(ctx) || uses_var(k->body, k->block_vars[1].get())) return f;
  } else if (attr_int(k->attrs, "npu_threads", 2) != 2) {
    return f;
  }
  try {
    return split_rows(f, k, has_vid);
  } catch (const NotImplemented& e) {
    // A vector-only kernel whose tiles the two vector cores cannot share by rows (an odd row count,
    // a single row read as a broadcast source, ...) runs whole on one vector core per block instead,
    // which is always right; a kernel with cube work keeps the error.
    if (uses_cube(k)) throw;
    PrimFunc g = one_vector_core(f, k, has_vid);
    return g.with_attr("ascend.vid_reduction_fallback", Attr(std::string(e.what())));
  }
}

// The vid reduction proper: halves the UB tiles by rows between the two vector cores.
PrimFunc split_rows(const PrimFunc& f, const KernelLaunchNode* k, bool has_vid) {
  // UB buffers of the kernel.
  std::vector<Buffer> ubs;
  post_order_visit(k->body, [&](const Stmt& s) {
    if (auto* a = s.as<AllocateNode>(); a && is_ub(a->buffer)) ubs.push_back(a->buffer);
  });
  if (ubs.empty()) return f;
  // Evidence for rank-1 buffers.
  std::set<const BufferNode*> row_ev, col_ev;
  UF uf;
  post_order_visit(k->body, [&](const Stmt& s) {
    if (auto* fl = s.as<ForNode>(); fl && fl->for_kind == ForKind::kParallel) {
      auto nest = parallel_nest(fl);
      std::vector<Access> acc;
      nest_accesses(nest.back()->body, acc);
      std::set<const VarNode*> rowv, colv;
      for (auto& a : acc)
        if (is_ub(a.b) && a.b.ndim() >= 2)
          for (size_t d = 0; d < a.idx.size(); ++d)
            if (auto* v = a.idx[d].as<VarNode>()) (d == 0 ? rowv : colv).insert(v);
      for (auto& a : acc)
        if (is_ub(a.b) && a.b.ndim() == 1 && a.idx.size() == 1)
          if (auto* v = a.idx[0].as<VarNode>()) {
            if (rowv.count(v)) row_ev.insert(a.b.get());
            if (colv.count(v)) col_ev.insert(a.b.get());
          }
      return;
    }
    auto* op = s.as<TileOpNode>();
    if (!op) return;
    BufferRegion src, dst;
    if (reduce_parts(*op, &src, &dst)) {
      if (is_ub(src.buffer) && src.buffer.ndim() >= 2 && is_ub(dst.buffer) && dst.buffer.ndim() == 1)
        (attr_int(op->attrs, "dim", -1) == 0 ? col_ev : row_ev).insert(dst.buffer.get());
      return;
    }
    std::vector<const BufferNode*> ones;
    bool only_ones = true;
    for (auto& a : op->args)
      if (a.is_region() && is_ub(a.region.buffer)) {
        if (a.region.buffer.ndim() == 1) ones.push_back(a.region.buffer.get());
        else only_ones = false;
      }
    if (only_ones)
      for (size_t i = 1; i < ones.size(); ++i) uf.join(ones[0], ones[i]);
  });
  int64_t row_extent = -1;
  bool agree = true;
  for (auto& b : ubs)
    if (b.ndim() >= 2) {
      int64_t m = const_or(b.shape()[0], -1);
      if (row_extent >= 0 && m != row_extent) agree = false;
      row_extent = m;
    }
  std::map<const BufferNode*, int> cls_ev;  // bit 1 row, bit 2 col
  for (auto& b : ubs)
    if (b.ndim() == 1) cls_ev[uf.find(b.get())] |= (row_ev.count(b.get()) ? 1 : 0) | (col_ev.count(b.get()) ? 2 : 0);
  std::map<Buffer, Buffer, BufferLess> split;
  for (auto& b : ubs) {
    bool s = b.ndim() >= 2;
    if (b.ndim() == 1) {
      int ev = cls_ev[uf.find(b.get())];
      if (ev == 3)
        throw_error<NotImplemented>(b->span.str(), b->span.defined() ? ": " : "", "not implemented: rank-1 UB buffer '",
                                    b.name(), "' is used both as a row vector and as a column vector, so vid "
                                    "reduction (threads=2) cannot decide whether to split it; use threads=1");
      s = ev == 1 || (ev == 0 && agree && const_or(b.shape()[0], -2) == row_extent);
    }
    if (!s) continue;
    int64_t m = const_or(b.shape()[0], -1);
    if (m < 2 || m % 2)
      throw_error<NotImplemented>(b->span.str(), b->span.defined() ? ": " : "", "not implemented: UB buffer '", b.name(),
                                  "' has ", to_string(b.shape()[0]), " rows, which two vector cores cannot split "
                                  "evenly (vid reduction, threads=2); use an even static row count, or threads=1");
    std::vector<Expr> shape = b.shape();
    shape[0] = make_int(m / 2);
    split[b] = b.with_shape(shape);
  }
  if (split.empty()) return one_vector_core(f, k, has_vid);
  Var vid = has_vid ? k->block_vars[1] : Var("vid");
  Reducer r(split, vid);
  Stmt body = r.mutate(k->body);
  // Anything still naming a split buffer is a use the reduction does not understand.
  auto refuse = [&](const Buffer& b, const Span& sp) {
    if (split.count(b))
      throw_error<NotImplemented>(at(sp), ": not implemented: an element access of '", b.name(),
                                  "' outside T.Parallel; its rows are split between the two vector cores (vid "
                                  "reduction, threads=2); use T.Parallel, or threads=1");
  };
  post_order_visit(body, [&](const Stmt& s) {
    if (auto* w = s.as<BufferStoreNode>()) refuse(w->buffer, s.span());
  });
  post_order_visit(body, [&](const Stmt& s) {
    if (!s.span().defined()) return;
    for_each_expr(s, [&](const Expr& e) {
      for_each_subexpr(e, [&](const Expr& x) {
        if (auto* l = x.as<BufferLoadNode>()) refuse(l->buffer, s.span());
      });
    });
  });
  std::vector<Expr> grid = k->grid;
  std::vector<Var> bvars = k->block_vars;
  AttrMap attrs = k->attrs;
  if (!has_vid) {
    grid.push_back(make_int(2));
    bvars.push_back(vid);
    attrs["npu_vid"] = Attr(true);
  }
  attrs["ascend.vid_reduced"] = Attr(true);
  return swap_kernel(f, k, make_kernel(grid, bvars, k->threads, k->thread_vars, attrs, body, k->span));
}

TL_REGISTER_PASS("ascend_vid_reduction", ascend_vid_reduction);

}  // namespace tl
