#include "target/cpu/coarsen_gemm_blocks.h"

#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "arith/analyzer.h"
#include "arith/region.h"
#include "ir/functor.h"
#include "ir/structural.h"
#include "ir/tile_op.h"
#include "op/gemm.h"
#include "op/tile_ops.h"
#include "transform/pass_config.h"
#include "transform/simplify.h"

namespace tl {

namespace {

constexpr int64_t kMaxTileRows = 512, kMaxTileCols = 512;  // the cpu configurations' blocks
constexpr int64_t kBlocksPerWorker = 4;                     // coarse blocks kept per worker thread

// A 2-D buffer's constant shape, or nothing.
std::optional<std::pair<int64_t, int64_t>> const_shape_2d(const Buffer& b) {
  int64_t r = 0, c = 0;
  if (b.ndim() != 2 || !is_const_int(b.shape()[0], &r) || !is_const_int(b.shape()[1], &c) || r <= 0 || c <= 0)
    return std::nullopt;
  return std::make_pair(r, c);
}

// The block variable (index into vars) that `start` steps by `step` per unit, start = v * step + c
// for a constant c, or -1 when start is a constant (*c set), or -2 when it is neither.
int strided_var(Analyzer& an, const Expr& start, const std::vector<Var>& vars, int64_t step, int64_t* c) {
  if (is_const_int(an.simplify(start), c)) return -1;
  for (size_t i = 0; i < vars.size(); ++i)
    if (is_const_int(an.simplify(start - vars[i] * make_int(step, vars[i].dtype())), c)) return static_cast<int>(i);
  return -2;
}

// The kernel body: its allocations, the GEMM, and the statements after it (copies and T.Parallel
// nests); nothing when it has any other statement.
struct Body {
  const TileOpNode* gemm = nullptr;
  std::vector<Stmt> after;
  std::set<const BufferNode*> allocated;
};

// A T.Parallel nest of two loops from 0 over a body of plain statements (no loop, tile op,
// allocation or attribute inside).
bool is_tile_nest(const Stmt& s) {
  auto* o = s.as<ForNode>();
  auto* in = o ? o->body.as<ForNode>() : nullptr;
  if (!in || o->for_kind != ForKind::kParallel || in->for_kind != ForKind::kParallel || !is_zero(o->min) ||
      !is_zero(in->min) || !is_const_int(o->extent) || !is_const_int(in->extent))
    return false;
  bool plain = true;
  post_order_visit(in->body, [&](const Stmt& st) {
    StmtKind k = st.kind();
    if (k == StmtKind::kFor || k == StmtKind::kTileOp || k == StmtKind::kAllocate || k == StmtKind::kAttr ||
        k == StmtKind::kKernel || k == StmtKind::kLoopControl)
      plain = false;
  });
  return plain;
}

std::optional<Body> split_body(const Stmt& body) {
  Body b;
  Stmt s = body;
  while (auto* a = s.as<AllocateNode>()) {
    b.allocated.insert(a->buffer.get());
    s = a->body;
  }
  std::vector<Stmt> stmts;
  if (auto* seq = s.as<SeqStmtNode>()) stmts = seq->seq;
  else stmts.push_back(s);
  for (const Stmt& st : stmts) {
    if (auto* e = st.as<EvaluateNode>(); e && is_const_int(e->value)) continue;  // `evaluate 0` of a folded clear
    auto* op = st.as<TileOpNode>();
    TileOpKind kind;
    if (!b.gemm) {
      if (!op || !tile_op_kind(*op, &kind) || kind != TileOpKind::kGemm || !is_gemm_form(*op, GemmForm::kGemm))
        return std::nullopt;
      b.gemm = op;
    } else if (op && tile_op_kind(*op, &kind) && kind == TileOpKind::kCopy && op->args.size() == 2 &&
               op->args[0].is_region() && op->args[1].is_region()) {
      b.after.push_back(st);
    } else if (is_tile_nest(st)) {
      b.after.push_back(st);
    } else {
      return std::nullopt;
    }
  }
  if (!b.gemm || b.after.empty()) return std::nullopt;
  return b;
}

// The factors (Fm, Fn) for an M grid extent gm of bm-row tiles and an N one gn of bn-column tiles.
std::pair<int64_t, int64_t> choose_factors(int64_t gm, int64_t bm, int64_t gn, int64_t bn, int64_t workers) {
  const int64_t min_blocks = std::min(gm * gn, kBlocksPerWorker * workers);
  std::pair<int64_t, int64_t> best{1, 1};
  int64_t best_area = bm * bn, best_skew = std::llabs(bm - bn);
  for (int64_t fm = 1; fm <= gm && fm * bm <= kMaxTileRows; ++fm) {
    if (gm % fm) continue;
    for (int64_t fn = 1; fn <= gn && fn * bn <= kMaxTileCols; ++fn) {
      if (gn % fn || (gm / fm) * (gn / fn) < min_blocks) continue;
      const int64_t area = fm * bm * fn * bn, skew = std::llabs(fm * bm - fn * bn);
      // the larger tile; on a tie the squarer one, then the taller one (B's pack serves more rows)
      if (area > best_area || (area == best_area && (skew < best_skew || (skew == best_skew && fm * bm > best.first * bm)))) {
        best = {fm, fn};
        best_area = area;
        best_skew = skew;
      }
    }
  }
  return best;
}

// Which block-local buffers span the tile, and along which axis each of their dimensions runs
// ('m': bm rows, stepped by the block variable mv; 'n': bn columns, stepped by nv); the checks of
// the statements after the GEMM against them.
class TileAxes {
 public:
  TileAxes(const Body& body, const Var& mv, const Var& nv, int64_t bm, int64_t bn, const std::vector<Var>& block_vars)
      : body_(body), mv_(mv), nv_(nv), bm_(bm), bn_(bn), block_vars_(block_vars) {}

  std::map<const BufferNode*, std::vector<char>> axes;
  std::map<const ForNode*, std::pair<char, char>> nest_axes;  // each checked nest: its loops' axes

  int64_t extent(char axis) const { return axis == 'm' ? bm_ : bn_; }
  const Var& block_var(char axis) const { return axis == 'm' ? mv_ : nv_; }
  bool local(const Buffer& b) const { return is_block_local(b.scope()) && body_.allocated.count(b.get()); }

  // All of a buffer of constant shape without explicit strides.
  static bool whole(const BufferRegion& r) { return r.buffer->strides.empty() && whole_buffer(r); }
  // The axis a global range runs along: its extent is the tile's and its start steps by one tile
  // per block index ('m' / 'n'), or 0.
  char global_axis(const Range& r) {
    int64_t c = 0;
    for (char axis : {'m', 'n'}) {
      if (!is_const_value(r.extent, extent(axis))) continue;
      int v = strided_var(an_, r.min, block_vars_, extent(axis), &c);
      if (v >= 0 && block_vars_[v].same_as(block_var(axis))) return axis;
    }
    return 0;
  }
  bool set_axes(const Buffer& b, const std::vector<char>& ax) {
    auto [it, fresh] = axes.emplace(b.get(), ax);
    if (!fresh) return it->second == ax;
    for (size_t d = 0; d < ax.size(); ++d)
      if (!is_const_value(b.shape()[d], extent(ax[d]))) return false;
    return true;
  }

  bool copy_ok(const TileOpNode& c) {
    const BufferRegion &src = c.args[0].region, &dst = c.args[1].region;
    const bool sl = local(src.buffer), dl = local(dst.buffer);
    if (sl && dl) {  // staging: all of one tile into all of another
      auto it = axes.find(src.buffer.get());
      return whole(src) && whole(dst) && it != axes.end() && src.buffer.ndim() == dst.buffer.ndim() &&
             src.buffer.get() != dst.buffer.get() && set_axes(dst.buffer, std::vector<char>(it->second));
    }
    const BufferRegion& g = sl ? dst : src;
    const BufferRegion& l = sl ? src : dst;
    if (!(sl || dl) || g.buffer.scope() != MemScope::kGlobal || !whole(l) || g.region.size() != l.buffer.ndim())
      return false;
    std::vector<char> ax;
    for (const Range& r : g.region) {
      char a = global_axis(r);
      if (!a) return false;
      ax.push_back(a);
    }
    return set_axes(l.buffer, ax);  // a tile loaded from global (a bias row) or stored to it
  }

  // A T.Parallel nest: every tile buffer indexed by the loop variables along its axes, and every
  // other expression that names a block or loop variable the same for (v, i) and (v + 1, i - extent)
  // along each axis (so it depends on them only through v * extent + i: the global position).
  bool nest_ok(const ForNode& outer) {
    const ForNode& inner = *outer.body.as<ForNode>();
    std::map<const VarNode*, char> loop_axis;
    bool ok = true;
    auto index_ok = [&](const Buffer& b, const std::vector<Expr>& idx) {
      auto it = axes.find(b.get());
      if (!local(b) || it == axes.end() || idx.size() != it->second.size()) return false;
      for (size_t d = 0; d < idx.size(); ++d) {
        auto* v = idx[d].as<VarNode>();
        if (!v || (v != outer.var.get() && v != inner.var.get())) return false;
        auto [lt, fresh] = loop_axis.emplace(v, it->second[d]);
        if (!fresh && lt->second != it->second[d]) return false;
      }
      return true;
    };
    struct Opaque : ExprMutator {  // tile loads as opaque values (their indices are checked apart)
      TileAxes* self;
      std::function<bool(const Buffer&, const std::vector<Expr>&)> check;
      bool ok = true;
      int n = 0;
      Expr mutate_load(const BufferLoadNode* l, const Expr& e) override {
        if (!self->local(l->buffer)) return ExprMutator::mutate_load(l, e);
        ok = ok && check(l->buffer, l->indices);
        return Var("tile_value" + std::to_string(n++), e.dtype());
      }
    };
    std::vector<Expr> exprs;  // every expression to check for the shift invariance
    Opaque op;
    op.self = this;
    op.check = index_ok;
    post_order_visit(inner.body, [&](const Stmt& st) {
      if (auto* w = st.as<BufferStoreNode>()) {
        if (local(w->buffer)) ok = ok && index_ok(w->buffer, w->indices);
        else if (w->buffer.scope() != MemScope::kGlobal) ok = false;
        else for (const Expr& i : w->indices) exprs.push_back(op.mutate(i));
        exprs.push_back(op.mutate(w->value));
      } else if (auto* l = st.as<LetStmtNode>()) {
        exprs.push_back(op.mutate(l->value));
      } else if (auto* f = st.as<IfThenElseNode>()) {
        exprs.push_back(op.mutate(f->cond));
      } else if (auto* e = st.as<EvaluateNode>()) {
        exprs.push_back(op.mutate(e->value));
      }
    });
    if (!ok || !op.ok) return false;
    // the loop variables' axes: both found, different, and the loops' extents the tile's
    auto ao = loop_axis.find(outer.var.get()), ai = loop_axis.find(inner.var.get());
    if (ao == loop_axis.end() || ai == loop_axis.end() || ao->second == ai->second) return false;
    if (!is_const_value(outer.extent, extent(ao->second)) || !is_const_value(inner.extent, extent(ai->second)))
      return false;
    for (const ForNode* loop : {&outer, &inner}) {
      const char axis = loop_axis.at(loop->var.get());
      const Var& v = block_var(axis);
      const int64_t ext = extent(axis);
      std::map<Var, Expr, VarLess> shift = {{v, v + make_int(1, v.dtype())},
                                            {loop->var, loop->var - make_int(ext, loop->var.dtype())}};
      for (const Expr& e : exprs)
        if (!structural_equal(an_.simplify(e), an_.simplify(substitute(e, shift)))) return false;
    }
    nest_axes[&outer] = {ao->second, ai->second};
    return true;
  }

 private:
  const Body& body_;
  Var mv_, nv_;
  int64_t bm_, bn_;
  const std::vector<Var>& block_vars_;
  Analyzer an_;
};

class Coarsener : public StmtMutator {
 public:
  explicit Coarsener(int64_t workers) : workers_(workers) {}
  using StmtMutator::mutate;
  int coarsened = 0;

 protected:
  Stmt mutate_kernel(const KernelLaunchNode* n, const Stmt& s) override {
    std::optional<Stmt> out = coarsen(n);
    if (!out) return s;
    ++coarsened;
    return *out;
  }

 private:
  std::optional<Stmt> coarsen(const KernelLaunchNode* n) {
    if (n->block_vars.size() != 2 || n->grid.size() != 2) return std::nullopt;
    int64_t grid[2];
    for (int i = 0; i < 2; ++i)
      if (!is_const_int(n->grid[i], &grid[i]) || grid[i] < 1) return std::nullopt;
    std::optional<Body> body = split_body(n->body);
    if (!body) return std::nullopt;
    const GemmOperands g = analyze_gemm(*body->gemm);
    if (!is_const_value(g.clear_accum, 1)) return std::nullopt;
    // C: all of a block-local [bm, bn] of constant shape; A and B: 2-D global tiles whose rows /
    // columns step by one tile per block index of two different block variables.
    auto cshape = const_shape_2d(g.C.buffer);
    if (!cshape || !is_block_local(g.C.buffer.scope()) || !body->allocated.count(g.C.buffer.get()) ||
        !TileAxes::whole(g.C))
      return std::nullopt;
    const auto [bm, bn] = *cshape;
    for (const BufferRegion* r : {&g.A, &g.B})
      if (r->buffer.scope() != MemScope::kGlobal || r->buffer.ndim() != 2 || r->region.size() != 2) return std::nullopt;
    Analyzer an;
    const int am = g.trans_A ? 1 : 0, bnd = g.trans_B ? 0 : 1;
    int64_t c = 0;
    const int vm = strided_var(an, g.A.region[am].min, n->block_vars, bm, &c);
    const int vn = strided_var(an, g.B.region[bnd].min, n->block_vars, bn, &c);
    if (vm < 0 || vn < 0 || vm == vn || !is_const_value(g.A.region[am].extent, bm) ||
        !is_const_value(g.B.region[bnd].extent, bn))
      return std::nullopt;
    for (const Range& k : {g.A.region[1 - am], g.B.region[1 - bnd]})  // the k ranges: constants
      if (!is_const_int(an.simplify(k.min)) || !is_const_int(k.extent)) return std::nullopt;
    const Var& mv = n->block_vars[vm];
    const Var& nv = n->block_vars[vn];
    // The statements after the GEMM: copies and element-wise nests over tiles (C, staging tiles,
    // rows of a bias), at least one of them writing global memory.
    TileAxes ax(*body, mv, nv, bm, bn, n->block_vars);
    ax.axes[g.C.buffer.get()] = {'m', 'n'};
    bool writes_global = false;
    for (const Stmt& st : body->after) {
      if (auto* op = st.as<TileOpNode>()) {
        if (!ax.copy_ok(*op)) return std::nullopt;
        writes_global = writes_global || !ax.local(op->args[1].region.buffer);
      } else {
        if (!ax.nest_ok(*st.as<ForNode>())) return std::nullopt;
        post_order_visit(st, [&](const Stmt& x) {
          if (auto* w = x.as<BufferStoreNode>(); w && !ax.local(w->buffer)) writes_global = true;
        });
      }
    }
    if (!writes_global) return std::nullopt;
    const auto [fm, fn] = choose_factors(grid[vm], bm, grid[vn], bn, workers_);
    if (fm == 1 && fn == 1) return std::nullopt;

    // The coarse tile: each tile buffer at (Fm bm) / (Fn bn) along its axes; global ranges and
    // block indices step by a coarse tile.
    const std::map<char, int64_t> factor = {{'m', fm}, {'n', fn}};
    std::map<Buffer, Buffer, BufferLess> big;
    std::map<const BufferNode*, Buffer> by_node;
    for (const AllocateNode* al = n->body.as<AllocateNode>(); al; al = al->body.as<AllocateNode>()) {
      auto it = ax.axes.find(al->buffer.get());
      if (it == ax.axes.end()) continue;
      const Buffer& b = al->buffer;
      std::vector<Expr> shape;
      for (size_t d = 0; d < b.ndim(); ++d)
        shape.push_back(make_int(factor.at(it->second[d]) * ax.extent(it->second[d]), b.shape()[d].dtype()));
      Buffer nb(b.name(), b.dtype(), std::move(shape), b.scope(), {}, b->span);
      big[b] = nb;
      by_node[b.get()] = nb;
    }
    auto rescaled = [&](const Range& r, char axis) {  // v * ext + c -> v * (f * ext) + c
      const Var& v = ax.block_var(axis);
      const int64_t ext = ax.extent(axis), f = factor.at(axis);
      int64_t c0 = 0;
      is_const_int(an.simplify(r.min - v * make_int(ext, v.dtype())), &c0);  // checked above
      return Range(an.simplify(v * make_int(f * ext, v.dtype()) + make_int(c0, v.dtype())),
                   make_int(f * ext, r.extent.dtype()));
    };
    auto region = [&](const BufferRegion& r) {  // a tile's whole region, or a global range rescaled
      auto it = by_node.find(r.buffer.get());
      if (it != by_node.end()) return TileArg(BufferRegion::full(it->second));
      BufferRegion out = r;
      for (Range& rg : out.region) rg = rescaled(rg, ax.global_axis(rg));
      return TileArg(out);
    };
    BufferRegion a = g.A, b = g.B;
    a.region[am] = rescaled(a.region[am], 'm');
    b.region[bnd] = rescaled(b.region[bnd], 'n');
    std::vector<Stmt> stmts = {make_tile_op(body->gemm->op, {TileArg(a), TileArg(b), region(g.C)}, body->gemm->attrs,
                                            body->gemm->span)};
    const std::map<Var, Expr, VarLess> coarse_index = {{mv, mv * make_int(fm, mv.dtype())},
                                                       {nv, nv * make_int(fn, nv.dtype())}};
    for (const Stmt& st : body->after) {
      if (auto* op = st.as<TileOpNode>()) {
        stmts.push_back(make_tile_op(op->op, {region(op->args[0].region), region(op->args[1].region)}, op->attrs,
                                     op->span));
        continue;
      }
      auto* outer = st.as<ForNode>();
      auto* inner = outer->body.as<ForNode>();
      Stmt in_body = simplify_stmt(substitute_buffers(substitute(inner->body, coarse_index), big), an);
      const auto [axis_o, axis_i] = ax.nest_axes.at(outer);
      const int64_t fo = factor.at(axis_o), fi = factor.at(axis_i);
      Stmt in = make_for(inner->var, inner->min, make_int(get_const_int(inner->extent, "extent") * fi, inner->extent.dtype()),
                         inner->for_kind, in_body, inner->annotations, inner->span);
      stmts.push_back(make_for(outer->var, outer->min,
                               make_int(get_const_int(outer->extent, "extent") * fo, outer->extent.dtype()),
                               outer->for_kind, in, outer->annotations, outer->span));
    }
    // Rebuild the body: the allocations in their order (the tiles at the coarse shape), then the ops.
    std::vector<const AllocateNode*> allocs;
    for (const AllocateNode* al = n->body.as<AllocateNode>(); al; al = al->body.as<AllocateNode>()) allocs.push_back(al);
    Stmt out = make_seq(std::move(stmts));
    for (size_t i = allocs.size(); i-- > 0;) {
      auto it = by_node.find(allocs[i]->buffer.get());
      out = make_allocate(it != by_node.end() ? it->second : allocs[i]->buffer, out, allocs[i]->span);
    }
    std::vector<Expr> coarse_grid = n->grid;
    coarse_grid[vm] = make_int(grid[vm] / fm, n->grid[vm].dtype());
    coarse_grid[vn] = make_int(grid[vn] / fn, n->grid[vn].dtype());
    return make_kernel(std::move(coarse_grid), n->block_vars, n->threads, n->thread_vars, n->attrs, out, n->span);
  }

  int64_t workers_;
};

}  // namespace

int64_t cpu_grid_workers(const AttrMap& configs) {
  const int64_t n = config_int(configs, "tl.cpu_num_threads", 0);
  return n > 0 ? n : std::max<int64_t>(1, std::thread::hardware_concurrency());
}

PrimFunc coarsen_gemm_blocks(const PrimFunc& f, const PassContext& ctx) {
  if (config_bool(ctx.configs, "tl.disable_cpu_block_coarsening")) return f;
  Coarsener c(cpu_grid_workers(ctx.configs));
  Stmt body = c.mutate(f.body());
  return c.coarsened == 0 ? f : f.with_body(body);
}

TL_REGISTER_PASS("coarsen_gemm_blocks", coarsen_gemm_blocks);

}  // namespace tl
