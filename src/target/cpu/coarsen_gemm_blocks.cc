#include "target/cpu/coarsen_gemm_blocks.h"

#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "arith/analyzer.h"
#include "ir/functor.h"
#include "ir/tile_op.h"
#include "op/gemm.h"
#include "op/tile_ops.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

constexpr int64_t kMaxTileRows = 512, kMaxTileCols = 512;  // the cpu configurations' blocks
constexpr int64_t kBlocksPerWorker = 4;                     // coarse blocks kept per worker thread

bool block_local(MemScope s) { return s == MemScope::kShared || s == MemScope::kFragment || s == MemScope::kLocal; }

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

struct Tile {
  const TileOpNode* gemm = nullptr;
  std::vector<const TileOpNode*> copies;  // C_local -> (block-local staging ->)* global
  std::set<const BufferNode*> allocated;
};

// Splits the kernel body into its allocations, the GEMM and the copies after it; nothing when it
// has any other statement.
std::optional<Tile> split_body(const Stmt& body) {
  Tile t;
  Stmt s = body;
  while (auto* a = s.as<AllocateNode>()) {
    t.allocated.insert(a->buffer.get());
    s = a->body;
  }
  std::vector<Stmt> stmts;
  if (auto* seq = s.as<SeqStmtNode>()) stmts = seq->seq;
  else stmts.push_back(s);
  for (const Stmt& st : stmts) {
    if (auto* e = st.as<EvaluateNode>(); e && is_const_int(e->value)) continue;  // `evaluate 0` of a folded clear
    auto* op = st.as<TileOpNode>();
    TileOpKind kind;
    if (!op || !tile_op_kind(*op, &kind)) return std::nullopt;
    if (kind == TileOpKind::kGemm && !t.gemm && is_gemm_form(*op, GemmForm::kGemm)) t.gemm = op;
    else if (kind == TileOpKind::kCopy && t.gemm && op->args.size() == 2 && op->args[0].is_region() &&
             op->args[1].is_region())
      t.copies.push_back(op);
    else return std::nullopt;
  }
  if (!t.gemm || t.copies.empty()) return std::nullopt;
  return t;
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
    std::optional<Tile> t = split_body(n->body);
    if (!t) return std::nullopt;
    const GemmOperands g = analyze_gemm(*t->gemm);
    if (!is_const_value(g.clear_accum, 1)) return std::nullopt;
    // C: a whole block-local [bm, bn] allocated in this kernel; each copy but the last reads all of
    // one such tile (C, then the staging tile the copy before wrote all of) and the last writes the
    // global C.
    const Buffer& cl = g.C.buffer;
    auto cshape = const_shape_2d(cl);
    if (!cshape) return std::nullopt;
    const auto [bm, bn] = *cshape;
    auto whole_tile = [&, bm = bm, bn = bn](const BufferRegion& r) {
      const Buffer& b = r.buffer;
      if (!block_local(b.scope()) || !t->allocated.count(b.get()) || !b->strides.empty() || const_shape_2d(b) != cshape ||
          r.region.size() != 2)
        return false;
      for (int d = 0; d < 2; ++d)
        if (!is_zero(r.region[d].min) || !is_const_value(r.region[d].extent, d == 0 ? bm : bn)) return false;
      return true;
    };
    if (!whole_tile(g.C)) return std::nullopt;
    std::vector<Buffer> tiles = {cl};  // C_local and the staging tiles, in chain order
    for (size_t i = 0; i < t->copies.size(); ++i) {
      const BufferRegion& src = t->copies[i]->args[0].region;
      const BufferRegion& to = t->copies[i]->args[1].region;
      if (!whole_tile(src) || src.buffer.get() != tiles.back().get()) return std::nullopt;
      if (i + 1 < t->copies.size()) {
        if (!whole_tile(to)) return std::nullopt;
        for (const Buffer& b : tiles)
          if (b.get() == to.buffer.get()) return std::nullopt;
        tiles.push_back(to.buffer);
      }
    }
    const BufferRegion& dst = t->copies.back()->args[1].region;
    // A, B and the last copy's destination: 2-D global regions; the other allocations unused.
    for (const BufferRegion* r : {&g.A, &g.B, &dst})
      if (r->buffer.scope() != MemScope::kGlobal || r->buffer.ndim() != 2 || r->region.size() != 2) return std::nullopt;
    for (const BufferRegion* r : {&g.A, &g.B, &dst})
      if (t->allocated.count(r->buffer.get())) return std::nullopt;
    // Row / column starts: (region, dimension, tile extent along it, which block variable steps it).
    Analyzer an;
    const int am = g.trans_A ? 1 : 0, bnd = g.trans_B ? 0 : 1;
    struct Dim {
      const BufferRegion* r;
      int d;
      int64_t ext;
      char role;  // 'm', 'n', or 'k' (no block variable)
    };
    const Dim dims[] = {{&g.A, am, bm, 'm'}, {&g.A, 1 - am, 0, 'k'}, {&g.B, bnd, bn, 'n'},
                        {&g.B, 1 - bnd, 0, 'k'}, {&dst, 0, bm, 'm'}, {&dst, 1, bn, 'n'}};
    int vm = -1, vn = -1;
    for (const Dim& dm : dims) {
      const Range& r = dm.r->region[dm.d];
      int64_t c = 0;
      if (dm.role == 'k') {
        if (!is_const_int(an.simplify(r.min), &c) || !is_const_int(r.extent)) return std::nullopt;
        continue;
      }
      if (!is_const_value(r.extent, dm.ext)) return std::nullopt;
      int v = strided_var(an, r.min, n->block_vars, dm.ext, &c);
      if (v < 0) return std::nullopt;
      int& slot = dm.role == 'm' ? vm : vn;
      if (slot >= 0 && slot != v) return std::nullopt;
      slot = v;
    }
    if (vm < 0 || vn < 0 || vm == vn) return std::nullopt;
    const auto [fm, fn] = choose_factors(grid[vm], bm, grid[vn], bn, workers_);
    if (fm == 1 && fn == 1) return std::nullopt;

    // The coarse tile: the block variables step by fm * bm / fn * bn.
    const Var& mv = n->block_vars[vm];
    const Var& nv = n->block_vars[vn];
    auto rescaled = [&](const Range& r, const Var& v, int64_t f) {  // v * ext + c -> v * (f * ext) + c
      const int64_t ext = get_const_int(r.extent, "tile extent");
      int64_t c = 0;
      is_const_int(an.simplify(r.min - v * make_int(ext, v.dtype())), &c);  // checked above
      return Range(an.simplify(v * make_int(f * ext, v.dtype()) + make_int(c, v.dtype())),
                   make_int(f * ext, r.extent.dtype()));
    };
    std::map<const BufferNode*, Buffer> big;  // each tile buffer at the coarse shape
    for (const Buffer& b : tiles)
      big[b.get()] = Buffer(b.name(), b.dtype(), {make_int(fm * bm, b.shape()[0].dtype()), make_int(fn * bn, b.shape()[1].dtype())},
                            b.scope(), {}, b->span);
    auto full = [&](const Buffer& b) { return TileArg(BufferRegion::full(big.at(b.get()))); };
    BufferRegion a = g.A, b = g.B, d = dst;
    a.region[am] = rescaled(a.region[am], mv, fm);
    b.region[bnd] = rescaled(b.region[bnd], nv, fn);
    d.region[0] = rescaled(d.region[0], mv, fm);
    d.region[1] = rescaled(d.region[1], nv, fn);
    std::vector<Stmt> ops = {make_tile_op(t->gemm->op, {TileArg(a), TileArg(b), full(cl)}, t->gemm->attrs, t->gemm->span)};
    for (size_t i = 0; i < t->copies.size(); ++i) {
      const TileOpNode* c = t->copies[i];
      ops.push_back(make_tile_op(c->op, {full(tiles[i]), i + 1 < tiles.size() ? full(tiles[i + 1]) : TileArg(d)},
                                 c->attrs, c->span));
    }
    // Rebuild the body: the allocations in their order (the tiles at the coarse shape), then the ops.
    std::vector<const AllocateNode*> allocs;
    for (const AllocateNode* al = n->body.as<AllocateNode>(); al; al = al->body.as<AllocateNode>()) allocs.push_back(al);
    Stmt body = make_seq(std::move(ops));
    for (size_t i = allocs.size(); i-- > 0;) {
      auto it = big.find(allocs[i]->buffer.get());
      body = make_allocate(it != big.end() ? it->second : allocs[i]->buffer, body, allocs[i]->span);
    }
    std::vector<Expr> coarse_grid = n->grid;
    coarse_grid[vm] = make_int(grid[vm] / fm, n->grid[vm].dtype());
    coarse_grid[vn] = make_int(grid[vn] / fn, n->grid[vn].dtype());
    return make_kernel(std::move(coarse_grid), n->block_vars, n->threads, n->thread_vars, n->attrs, body, n->span);
  }

  int64_t workers_;
};

}  // namespace

PrimFunc coarsen_gemm_blocks(const PrimFunc& f, const PassContext& ctx) {
  if (config_bool(ctx.configs, "tl.disable_cpu_block_coarsening")) return f;
  int64_t workers = config_int(ctx.configs, "tl.cpu_num_threads", 0);
  if (workers <= 0) workers = std::max<int64_t>(1, std::thread::hardware_concurrency());
  Coarsener c(workers);
  Stmt body = c.mutate(f.body());
  return c.coarsened == 0 ? f : f.with_body(body);
}

TL_REGISTER_PASS("coarsen_gemm_blocks", coarsen_gemm_blocks);

}  // namespace tl
