#include "target/cpu/forward_gemm_operands.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "arith/analyzer.h"
#include "ir/functor.h"
#include "ir/structural.h"
#include "ir/tile_op.h"
#include "op/op_util.h"
#include "op/tile_ops.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

bool is_staging(MemScope s) { return s == MemScope::kShared || s == MemScope::kFragment; }

// Every use of every buffer: which tile ops name it (op, argument position), and which buffers are
// written or escape (stores, tile-op writes, address_of) or are touched by scalar loads.
class UseCollector : public IRVisitor {
 public:
  std::map<const BufferNode*, std::vector<std::pair<const TileOpNode*, size_t>>> tile_uses;
  std::set<const BufferNode*> written, scalar_used;

  void visit_load(const BufferLoadNode* n) override {
    scalar_used.insert(n->buffer.get());
    IRVisitor::visit_load(n);
  }
  void visit_store(const BufferStoreNode* n) override {
    written.insert(n->buffer.get());
    scalar_used.insert(n->buffer.get());
    IRVisitor::visit_store(n);
  }
  void visit_call(const CallNode* n) override {
    if (n->op == "tl.address_of")  // a pointer into the buffer may be written through
      for (const Expr& a : n->args)
        if (auto* l = a.as<BufferLoadNode>()) written.insert(l->buffer.get());
    IRVisitor::visit_call(n);
  }
  void visit_tile_op(const TileOpNode* n) override {
    for (size_t i = 0; i < n->args.size(); ++i)
      if (n->args[i].is_region()) tile_uses[n->args[i].region.buffer.get()].emplace_back(n, i);
    if (const TileOp* def = find_tile_op(*n)) {
      for (const BufferRegion& w : def->effects(*n).writes) written.insert(w.buffer.get());
    } else {
      for (const TileArg& a : n->args)  // unknown op: assume it writes every buffer it names
        if (a.is_region()) written.insert(a.region.buffer.get());
    }
    IRVisitor::visit_tile_op(n);
  }
};

bool loads_nothing(const Expr& e) {
  struct Finder : IRVisitor {
    bool found = false;
    void visit_load(const BufferLoadNode*) override { found = true; }
  } f;
  f.visit(e);
  return !f.found;
}

bool covers_whole(const BufferRegion& r) {
  const std::vector<Expr>& shape = r.buffer.shape();
  if (r.region.size() != shape.size()) return false;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!is_zero(r.region[d].min) || !structural_equal(r.region[d].extent, shape[d])) return false;
  return true;
}

// Whether s mentions buffer b anywhere (loads, stores, tile-op arguments, the attributes of tile
// ops, attribute statements, kernels and loops).
bool mentions(const Stmt& s, const BufferNode* b) {
  struct Finder : IRVisitor {
    const BufferNode* b;
    bool found = false;
    void visit_load(const BufferLoadNode* n) override {
      found |= n->buffer.get() == b;
      IRVisitor::visit_load(n);
    }
    void visit_store(const BufferStoreNode* n) override {
      found |= n->buffer.get() == b;
      IRVisitor::visit_store(n);
    }
    void visit_tile_op(const TileOpNode* n) override {
      for (const TileArg& a : n->args)
        if (a.is_region()) found |= a.region.buffer.get() == b;
      IRVisitor::visit_tile_op(n);
    }
    void visit_attr_buffer(const Buffer& a) override { found |= a.get() == b; }
  } f;
  f.b = b;
  f.visit(s);
  return f.found;
}

// +0 (integer 0, or a float +0.0, possibly behind a cast).
bool is_positive_zero(const Expr& e) {
  if (auto* c = e.as<CastNode>()) return is_positive_zero(c->value);
  double d;
  if (is_const_float(e, &d)) return d == 0.0 && !std::signbit(d);
  return is_zero(e);
}

// The buffer region `fill_stmt` clears when it is `T.clear(C)`: a fill of all of a staging or
// local C with +0; nullptr otherwise.
const BufferRegion* cleared_region(const Stmt& fill_stmt) {
  auto* fill = fill_stmt.as<TileOpNode>();
  if (!fill || !is_tile_op(*fill, TileOpKind::kFill) || tile_op_as<FillOp>(*fill)->vector_spelling() ||
      fill->args.size() != 2 || !fill->args[0].is_region())
    return nullptr;
  const BufferRegion& c = fill->args[0].region;
  if (!is_staging(c.buffer.scope()) && c.buffer.scope() != MemScope::kLocal) return nullptr;
  if (!covers_whole(c) || fill->args[1].is_region() || !is_positive_zero(fill->args[1].expr)) return nullptr;
  return &c;
}

// `stmt` as `T.gemm(A, B, C)` accumulating into all of `c` (C not also an operand, not already
// clearing), rewritten to clear C when `clear` holds; nothing when `stmt` is not such a GEMM.
std::optional<Stmt> gemm_clearing(const Stmt& stmt, const BufferRegion& c, const Expr& clear) {
  auto* g = stmt.as<TileOpNode>();
  if (!g || !is_gemm_form(*g, GemmForm::kGemm) || g->args.size() < 3 || !g->args[2].is_region() ||
      g->args[2].region.buffer.get() != c.buffer.get() || !covers_whole(g->args[2].region))
    return std::nullopt;
  for (size_t a = 0; a < 2; ++a)
    if (g->args[a].is_region() && g->args[a].region.buffer.get() == c.buffer.get()) return std::nullopt;
  auto it = g->attrs.find("clear_accum");
  if (it != g->attrs.end() && !it->second.is_none() && !is_const_value(it->second.as_expr(), 0)) return std::nullopt;
  AttrMap attrs = g->attrs;
  attrs["clear_accum"] = Attr(clear);
  return make_tile_op(g->op, g->args, std::move(attrs), g->span);
}

// `T.clear(C)` directly followed by
//  - `T.gemm(A, B, C)` into all of C: the GEMM clears C (clear_accum = true; attention's scores,
//    cleared in every iteration of its KV loop);
//  - a serial or pipelined loop of at least one iteration whose body's first statement touching C
//    is such a GEMM: the GEMM clears C on the loop's first iteration (clear_accum = k == min).
// The fill goes and the GEMM starts from zero tiles instead of loading the zeros the fill stored.
// Returns the rewritten second statement, or nothing.
std::optional<Stmt> fold_clear_into_gemm(const Stmt& fill_stmt, const Stmt& next) {
  const BufferRegion* c = cleared_region(fill_stmt);
  if (!c) return std::nullopt;
  if (next.as<TileOpNode>()) return gemm_clearing(next, *c, make_bool(true));
  auto* loop = next.as<ForNode>();
  int64_t extent;
  if (!loop || (loop->for_kind != ForKind::kSerial && loop->for_kind != ForKind::kPipelined) ||
      !is_const_int(loop->extent, &extent) || extent < 1)
    return std::nullopt;
  std::vector<Stmt> body;
  if (auto* sq = loop->body.as<SeqStmtNode>()) body = sq->seq;
  else body = {loop->body};
  for (size_t j = 0; j < body.size(); ++j) {
    if (!mentions(body[j], c->buffer.get())) continue;
    std::optional<Stmt> g = gemm_clearing(body[j], *c, eq(loop->var, loop->min));
    if (!g) return std::nullopt;
    body[j] = *g;
    return make_for(loop->var, loop->min, loop->extent, loop->for_kind, make_seq(std::move(body), loop->body->span),
                    loop->annotations, loop->span);
  }
  return std::nullopt;
}

// The region `r` of one iteration of loop `loop` (variable v, first value m, n iterations) read
// as a whole loop's: dimension `kd` has a constant extent e and a start `base + (v - m) * e`, the
// other dimensions do not depend on v. Returns r with dimension kd covering all n iterations
// ([base, base + n * e)), or nothing.
std::optional<BufferRegion> fuse_k_region(const BufferRegion& r, size_t kd, const ForNode* loop, int64_t n,
                                          int64_t* e_out) {
  if (kd >= r.region.size()) return std::nullopt;
  for (size_t d = 0; d < r.region.size(); ++d) {
    if (uses_var(r.region[d].extent, loop->var)) return std::nullopt;
    if (d != kd && uses_var(r.region[d].min, loop->var)) return std::nullopt;
  }
  int64_t e;
  if (!is_const_int(r.region[kd].extent, &e) || e < 1) return std::nullopt;
  const Expr& lo = r.region[kd].min;
  DataType t = lo.dtype();
  Expr base = substitute(lo, {{loop->var, make_cast(loop->var.dtype(), loop->min)}});
  Analyzer an;
  Expr v = make_cast(t, loop->var), m = make_cast(t, loop->min);
  if (!is_zero(an.simplify(lo - (base + (v - m) * make_int(e, t))))) return std::nullopt;
  std::vector<Range> region = r.region;
  region[kd] = Range(an.simplify(base), make_int(e * n, r.region[kd].extent.dtype()));
  *e_out = e;
  return BufferRegion(r.buffer, region);
}

// bfloat16 / float16 / int8 loops are fused only when each iteration's GEMM is at most this many
// bytes deep (bf16 / fp16 block_K <= 128, int8 <= 256): the AMX and dot-product drivers pack and keep
// C in tiles per call, so a short call pays its C loads and stores, tile configuration and packs for
// a sliver of k (TileLang's examples' block_K = 32: bf16 1.6-1.8x, int8 2.6-3.1x fused on an Emerald
// Rapids core, 1.1-1.35x on a Zen 4), while the deep calls of the cpu configurations were tuned as
// they are (fused: neutral on the Zen 4, 0.9-1.0x within the noise on the Emerald Rapids core).
constexpr int64_t kMaxFusedNarrowStepBytes = 256;

// The operand types whose k loop is fused: A and B of one type, float32 (C float32), bfloat16 or
// float16 (C float32), int8 (C int32). float32 fusions are bit-equal to the loop (every float32
// driver adds each C element's products in k order), int8 ones too (integer sums are exact). For
// bfloat16 / float16 the products still come in k order, but the fused call may group k differently
// (a call's zero-padded tail moves) or take another driver (the fp16 tile path's size threshold):
// rounded as well, not always to the same bits.
bool fusable_dtypes(DataType a, DataType b, DataType c) {
  if (a != b) return false;
  if (a == DataType::Float32() || a == DataType::BFloat16() || a == DataType::Float(16)) return c == DataType::Float32();
  return a == DataType::Int(8) && c == DataType::Int32();
}

// A serial or pipelined loop of constant trip count n >= 2 whose body is one `T.gemm(A, B,
// C)` (nothing else but no-ops) of fusable types (fusable_dtypes; narrow types only for shallow
// iterations, kMaxFusedNarrowStepBytes) with A and B global tiles that advance along k by their k extent
// per iteration and a C that does not depend on the loop: the loop becomes one GEMM over the whole
// k (n times the extent), clearing C when the loop's GEMM cleared it on the first iteration
// (`clear_accum = k == min`, as fold_clear_into_gemm leaves it) or never. The products and their
// order per C element are the same; the header GEMM then keeps C in registers and packs each
// operand once over long stretches of k instead of reloading C and repacking every block_K.
std::optional<Stmt> fuse_gemm_k_loop(const Stmt& loop_stmt) {
  auto* loop = loop_stmt.as<ForNode>();
  int64_t n;
  if (!loop || (loop->for_kind != ForKind::kSerial && loop->for_kind != ForKind::kPipelined) ||
      !is_const_int(loop->extent, &n) || n < 2 || !is_const_int(loop->min))
    return std::nullopt;
  std::vector<Stmt> body;
  if (auto* sq = loop->body.as<SeqStmtNode>()) body = sq->seq;
  else body = {loop->body};
  const TileOpNode* g = nullptr;
  for (const Stmt& st : body) {
    if (auto* ev = st.as<EvaluateNode>(); ev && is_const_int(ev->value)) continue;
    if (g) return std::nullopt;
    g = st.as<TileOpNode>();
    if (!g) return std::nullopt;
  }
  if (!g || !is_gemm_form(*g, GemmForm::kGemm) || g->args.size() != 3) return std::nullopt;
  for (const TileArg& a : g->args)
    if (!a.is_region()) return std::nullopt;
  const BufferRegion &a = g->args[0].region, &b = g->args[1].region, &c = g->args[2].region;
  if (!fusable_dtypes(a.buffer.dtype(), b.buffer.dtype(), c.buffer.dtype())) return std::nullopt;
  if (a.buffer.scope() != MemScope::kGlobal || b.buffer.scope() != MemScope::kGlobal) return std::nullopt;
  if (c.buffer.get() == a.buffer.get() || c.buffer.get() == b.buffer.get()) return std::nullopt;  // C feeds later k
  if (a.region.size() < 2 || b.region.size() < 2) return std::nullopt;
  for (const Range& r : c.region)
    if (uses_var(r.min, loop->var) || uses_var(r.extent, loop->var)) return std::nullopt;
  Expr clear = make_bool(false);
  for (auto& [key, val] : g->attrs) {
    if (key == "clear_accum") {
      if (val.is_none()) continue;
      const Expr x = val.as_expr();
      if (is_const_value(x, 0)) continue;
      if (!structural_equal(x, eq(loop->var, loop->min))) return std::nullopt;  // e.g. clearing every iteration
      clear = make_bool(true);
    } else if (val.kind() == Attr::kExpr && uses_var(val.as_expr(), loop->var)) {
      return std::nullopt;
    } else if (val.kind() == Attr::kExprList) {
      for (const Expr& x : val.as_expr_list())
        if (uses_var(x, loop->var)) return std::nullopt;
    }
  }
  const bool ta = attr_bool(g->attrs, "transpose_A", false), tb = attr_bool(g->attrs, "transpose_B", false);
  const size_t na = a.region.size(), nb = b.region.size();
  int64_t ea = 0, eb = 0;
  std::optional<BufferRegion> fa = fuse_k_region(a, ta ? na - 2 : na - 1, loop, n, &ea);
  std::optional<BufferRegion> fb = fuse_k_region(b, tb ? nb - 1 : nb - 2, loop, n, &eb);
  if (!fa || !fb || ea != eb) return std::nullopt;
  if (a.buffer.dtype() != DataType::Float32() && ea * a.buffer.dtype().element_bytes() > kMaxFusedNarrowStepBytes)
    return std::nullopt;
  AttrMap attrs = g->attrs;
  attrs["clear_accum"] = Attr(clear);
  return make_tile_op(g->op, {TileArg(*fa), TileArg(*fb), g->args[2]}, std::move(attrs), g->span);
}

class Forwarder : public StmtMutator {
 public:
  Forwarder(const UseCollector& uses, LowerContext base) : uses_(uses), ctx_(std::move(base)) {}
  using StmtMutator::mutate;
  int forwarded = 0;
  std::set<const BufferNode*> forwarded_buffers;  // staging buffers S whose GEMM now reads G in place

 protected:
  Stmt mutate_kernel(const KernelLaunchNode* n, const Stmt& s) override {
    Scope scope(this);
    for (size_t i = 0; i < n->block_vars.size(); ++i) bind(n->block_vars[i], make_int(0, n->grid[i].dtype()), n->grid[i]);
    for (size_t i = 0; i < n->thread_vars.size(); ++i)
      bind(n->thread_vars[i], make_int(0, n->threads[i].dtype()), n->threads[i]);
    return StmtMutator::mutate_kernel(n, s);
  }
  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    Scope scope(this);
    bind(n->var, n->min, n->extent);
    return StmtMutator::mutate_for(n, s);
  }
  Stmt mutate_let(const LetStmtNode* n, const Stmt& s) override {
    Scope scope(this);
    int64_t lo, hi;
    if (n->var.dtype().is_integer() && const_bounds(n->value, ctx_.var_ranges, &lo, &hi))
      bind(n->var, make_int(lo, n->var.dtype()), make_int(hi - lo + 1, n->var.dtype()));
    return StmtMutator::mutate_let(n, s);
  }

  Stmt mutate_seq(const SeqStmtNode* n, const Stmt& s) override {
    std::vector<Stmt> seq = n->seq;  // rewritten statements; uses_ refers to the originals in n->seq
    bool changed = false;
    // Copies forwardable only while their region lies inside G (a dynamic shape, a partial last
    // tile): per GEMM statement j, the copies (their positions i), the operand each feeds and the
    // run-time condition for their region to lie inside their global buffer.
    struct Versioned {
      std::vector<size_t> copies;
      std::vector<std::pair<size_t, BufferRegion>> operands;
      std::vector<Expr> conds;
    };
    std::map<size_t, Versioned> versioned;
    for (size_t i = 0; i < seq.size(); ++i) {
      auto* copy = seq[i].as<TileOpNode>();
      if (!copy || !is_tile_op(*copy, TileOpKind::kCopy) || copy->args.size() != 2 || !copy->args[0].is_region() ||
          !copy->args[1].is_region())
        continue;
      const BufferRegion& src = copy->args[0].region;
      const BufferRegion& dst = copy->args[1].region;
      std::optional<size_t> arg = gemm_reader(dst.buffer, copy);
      if (!arg) continue;
      for (size_t j = i + 1; j < seq.size(); ++j) {
        auto* orig = n->seq[j].as<TileOpNode>();
        auto* gemm = seq[j].as<TileOpNode>();  // may already have its other operand forwarded
        if (!orig || !gemm || !uses_one(dst.buffer, orig)) continue;
        std::optional<Expr> inside = forwardable(src, dst);
        if (!inside) break;
        if (!is_const_value(*inside, 1)) {
          Versioned& v = versioned[j];
          v.copies.push_back(i);
          v.operands.emplace_back(*arg, src);
          v.conds.push_back(*inside);
          break;
        }
        std::vector<TileArg> args = gemm->args;
        args[*arg] = TileArg(src);
        seq[j] = make_tile_op(gemm->op, std::move(args), gemm->attrs, gemm->span);
        seq[i] = make_evaluate(make_int(0), copy->span);
        changed = true;
        ++forwarded;
        forwarded_buffers.insert(dst.buffer.get());
        break;
      }
    }
    // `T.copy(G[r], S); ...; T.gemm(S, ...)` with r inside G only at run time becomes
    // `if (!inside) T.copy(G[r], S); ...; if (inside) T.gemm(G[r], ...) else T.gemm(S, ...)`:
    // the copy is skipped exactly when the GEMM reads G itself (S has no other use; `inside` loads
    // nothing and its variables are the same at both statements of the one sequence).
    for (auto& [j, v] : versioned) {
      auto* gemm = seq[j].as<TileOpNode>();
      Analyzer an;
      Expr inside = an.simplify(conjunction(v.conds));
      std::vector<TileArg> args = gemm->args;
      for (auto& [arg, src] : v.operands) args[arg] = TileArg(src);
      Stmt direct = make_tile_op(gemm->op, std::move(args), gemm->attrs, gemm->span);
      for (size_t i : v.copies) seq[i] = make_if(make_unary(UnOp::kNot, inside), seq[i], {}, seq[i]->span);
      seq[j] = make_if(inside, direct, seq[j], gemm->span);
      changed = true;
      forwarded += static_cast<int>(v.copies.size());
    }
    if (!changed) return StmtMutator::mutate_seq(n, s);
    return StmtMutator::mutate(make_seq(std::move(seq), n->span));
  }

 private:
  // The argument position (0: A, 1: B) at which the one GEMM reading S does so, when S's uses
  // are exactly `copy` (writing all of S) and one gemm reading all of S.
  std::optional<size_t> gemm_reader(const Buffer& s, const TileOpNode* copy) const {
    if (!is_staging(s.scope()) || uses_.scalar_used.count(s.get())) return std::nullopt;
    auto it = uses_.tile_uses.find(s.get());
    if (it == uses_.tile_uses.end() || it->second.size() != 2) return std::nullopt;
    const TileOpNode* gemm = nullptr;
    size_t pos = 0;
    for (auto& [op, i] : it->second) {
      if (op == copy) {
        if (i != 1) return std::nullopt;
        continue;
      }
      if ((!is_gemm_form(*op, GemmForm::kGemm) && !is_gemm_form(*op, GemmForm::kGemmV0)) || i > 1 || gemm)
      return std::nullopt;
      gemm = op;
      pos = i;
    }
    if (!gemm || !covers_whole(gemm->args[pos].region)) return std::nullopt;
    return pos;
  }
  bool uses_one(const Buffer& s, const TileOpNode* op) const {
    for (auto& [o, i] : uses_.tile_uses.at(s.get()))
      if (o == op) return true;
    return false;
  }
  // When the GEMM may read `src` in place of its copy `dst`: the condition for that (the constant
  // true when it always holds: the copy's guards are empty; else the run-time condition for src to
  // lie inside its buffer, a dynamic dimension or a partial last tile), or nothing.
  std::optional<Expr> forwardable(const BufferRegion& src, const BufferRegion& dst) const {
    const Buffer& g = src.buffer;
    const Buffer& sb = dst.buffer;
    if (g.scope() != MemScope::kGlobal || uses_.written.count(g.get()) || g.dtype() != sb.dtype()) return std::nullopt;
    if (!covers_whole(dst) || sb.ndim() != 2 || src.region.size() < 2) return std::nullopt;
    if (!is_one(g.effective_strides().back())) return std::nullopt;
    size_t n = src.region.size();
    for (size_t d = 0; d + 2 < n; ++d)
      if (!is_one(src.region[d].extent)) return std::nullopt;
    if (!structural_equal(src.region[n - 2].extent, sb.shape()[0]) ||
        !structural_equal(src.region[n - 1].extent, sb.shape()[1]))
      return std::nullopt;
    for (const Range& r : src.region)
      if (!loads_nothing(r.min) || !loads_nothing(r.extent)) return std::nullopt;
    // In bounds everywhere: the copy's own guards would be empty.
    LoopNest nest = make_loop_nest(src.squeezed_extents(), "f");
    LowerContext c = ctx_;
    c.guard_global_bounds = true;
    if (global_bounds_guards(g, region_indices(src, nest.indices()), c, &nest).empty()) return make_bool(true);
    // Otherwise the region's first and last elements inside G, per dimension, at run time.
    std::vector<Expr> conds;
    for (size_t d = 0; d < n; ++d) {
      const Range& r = src.region[d];
      int64_t e;
      if (!is_const_int(r.extent, &e) || e < 1) return std::nullopt;
      const Expr& lo = r.min;
      Expr hi = lo + make_int(e - 1, lo.dtype());
      IntBounds lb = int_bounds(lo, c.var_ranges), hb = int_bounds(hi, c.var_ranges),
                db = int_bounds(g.shape()[d], c.var_ranges);
      if (!(lb.lo && *lb.lo >= 0)) conds.push_back(lo >= make_int(0, lo.dtype()));
      if (!(hb.hi && db.lo && *hb.hi < *db.lo)) conds.push_back(hi < g.shape()[d]);
    }
    return conjunction(conds);
  }

  struct Scope {
    Forwarder* self;
    std::vector<std::pair<Var, std::optional<Range>>> saved;
    explicit Scope(Forwarder* f) : self(f) { f->scopes_.push_back(this); }
    ~Scope() {
      for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
        if (it->second) self->ctx_.var_ranges[it->first] = *it->second;
        else self->ctx_.var_ranges.erase(it->first);
      }
      self->scopes_.pop_back();
    }
  };
  void bind(const Var& v, const Expr& min, const Expr& extent) {
    auto it = ctx_.var_ranges.find(v);
    scopes_.back()->saved.emplace_back(v, it == ctx_.var_ranges.end() ? std::nullopt : std::optional<Range>(it->second));
    ctx_.var_ranges[v] = Range(min, extent);
  }

  const UseCollector& uses_;
  LowerContext ctx_;
  std::vector<Scope*> scopes_;
};

// Applies fold_clear_into_gemm to every sequence (after the forwarding, whose bookkeeping refers
// to the original statements).
class ClearFolder : public StmtMutator {
 public:
  explicit ClearFolder(bool fuse_k) : fuse_k_(fuse_k) {}
  using StmtMutator::mutate;
  int folded = 0;

 protected:
  Stmt mutate_seq(const SeqStmtNode* n, const Stmt& s) override {
    std::vector<Stmt> seq = n->seq;
    bool changed = false;
    for (size_t i = 0; i + 1 < seq.size(); ++i) {
      if (std::optional<Stmt> next = fold_clear_into_gemm(seq[i], seq[i + 1])) {
        seq[i] = make_evaluate(make_int(0), seq[i]->span);
        seq[i + 1] = *next;
        changed = true;
        ++folded;
      }
    }
    for (size_t i = 0; i < seq.size() && fuse_k_; ++i) {
      if (std::optional<Stmt> gemm = fuse_gemm_k_loop(seq[i])) {
        seq[i] = *gemm;
        changed = true;
        ++folded;
      }
    }
    if (!changed) return StmtMutator::mutate_seq(n, s);
    return StmtMutator::mutate(make_seq(std::move(seq), n->span));
  }

 private:
  bool fuse_k_;
};

// Drops the allocation of each forwarded staging buffer that nothing mentions any more (its copy
// became a no-op and its GEMM reads the global tile): no unused stack array or heap allocation is
// left in the block. A buffer versioned at run time keeps its copy, hence its allocation.
class DeadStagingDropper : public StmtMutator {
 public:
  explicit DeadStagingDropper(const std::set<const BufferNode*>& candidates) : candidates_(candidates) {}
  using StmtMutator::mutate;

 protected:
  Stmt mutate_allocate(const AllocateNode* n, const Stmt& s) override {
    Stmt body = mutate(n->body);
    if (candidates_.count(n->buffer.get()) && !mentions(body, n->buffer.get())) return body;
    return body.same_as(n->body) ? s : make_allocate(n->buffer, body, n->span);
  }

 private:
  const std::set<const BufferNode*>& candidates_;
};

}  // namespace

PrimFunc forward_gemm_operands(const PrimFunc& f, const PassContext& ctx) {
  if (config_bool(ctx.configs, "tl.disable_cpu_gemm_forwarding")) return f;
  UseCollector uses;
  uses.visit(f.body());
  LowerContext base;
  base.target = ctx.target;
  Forwarder fw(uses, base);
  Stmt body = fw.mutate(f.body());
  ClearFolder cf(!config_bool(ctx.configs, "tl.disable_cpu_gemm_k_fusion"));
  body = cf.mutate(body);
  if (!fw.forwarded_buffers.empty()) body = DeadStagingDropper(fw.forwarded_buffers).mutate(body);
  return fw.forwarded == 0 && cf.folded == 0 ? f : f.with_body(body);
}

TL_REGISTER_PASS("forward_gemm_operands", forward_gemm_operands);

}  // namespace tl
