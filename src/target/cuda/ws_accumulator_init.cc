// GEMM accumulator initializations folded into the GEMM (ws_accumulator_init.h).
#include "target/cuda/ws_accumulator_init.h"

#include <cmath>

#include "arith/region.h"
#include "ir/functor.h"
#include "op/tile_ops.h"
#include "target/cuda/warp_specialize_common.h"

namespace tl {

namespace {

// An initialization of a GEMM's accumulator `c` in the loop body just before the GEMM that the GEMM
// can do itself: T.clear / T.fill(c, 0) of the whole of c, or a T.Parallel nest over all of c storing
// select(cond, 0, -inf) (or +inf) into each element (attention's causal mask). Returns the statement
// to run after the GEMM instead (the mask, applied to the GEMM's result: select(cond, c, -inf)), a
// no-op for a clear, or undefined where `init` is neither. Equal values: 0 + x = x, -inf + x = -inf
// for finite x (only a non-finite product differs: inf or NaN there gives -inf instead of NaN).
Stmt fold_accumulator_init(const Stmt& init, const Buffer& c) {
  if (const auto* op = init.as<TileOpNode>()) {
    if (!is_tile_op(*op, TileOpKind::kFill) || op->args.size() != 2 || !op->args[0].is_region() ||
        !op->args[1].is_expr() || !op->args[0].region.buffer.same_as(c) || !whole_buffer(op->args[0].region))
      return Stmt();
    const Expr& v = op->args[1].expr;
    const auto* f = v.as<FloatImmNode>();
    if (!(is_zero(v) || (f && f->value == 0.0))) return Stmt();
    return make_evaluate(make_int(0));
  }
  std::vector<const ForNode*> loops;
  Stmt s = init;
  while (const auto* f = s.as<ForNode>()) {
    if (f->for_kind != ForKind::kParallel || !is_zero(f->min)) return Stmt();
    loops.push_back(f);
    s = f->body;
  }
  const auto* st = s.as<BufferStoreNode>();
  if (!st || !st->buffer.same_as(c) || loops.size() != c.ndim() || st->indices.size() != c.ndim()) return Stmt();
  for (size_t d = 0; d < loops.size(); ++d) {
    int64_t e = 0, n = 0;
    const auto* v = st->indices[d].as<VarNode>();
    if (!v || v != loops[d]->var.get() || !is_const_int(loops[d]->extent, &e) || !is_const_int(c.shape()[d], &n) ||
        e != n)
      return Stmt();
  }
  const auto* sel = st->value.as<SelectNode>();
  if (!sel) return Stmt();
  const auto* zero = sel->true_value.as<FloatImmNode>();
  const auto* inf = sel->false_value.as<FloatImmNode>();
  if (!zero || zero->value != 0.0 || !inf || !std::isinf(inf->value)) return Stmt();
  bool reads_c = false;
  for_each_subexpr(sel->cond, [&](const Expr& y) {
    if (const auto* l = y.as<BufferLoadNode>()) reads_c |= l->buffer.same_as(c);
  });
  if (reads_c) return Stmt();
  Stmt body = make_store(c, st->indices, make_select(sel->cond, make_load(c, st->indices), sel->false_value), st->span);
  for (size_t d = loops.size(); d-- > 0;)
    body = make_for(loops[d]->var, loops[d]->min, loops[d]->extent, loops[d]->for_kind, body, loops[d]->annotations,
                    loops[d]->span);
  return body;
}

}  // namespace

void fold_gemm_accumulator_inits(std::vector<BodyItem>* items, const std::set<size_t>& is_producer) {
  for (size_t g = 0; g < items->size(); ++g) {
    const auto* op = (*items)[g].is_stmt() ? (*items)[g].stmt.as<TileOpNode>() : nullptr;
    if (!op || !is_gemm_form(*op, GemmForm::kGemm) || op->args.size() < 3 || !op->args[2].is_region()) continue;
    if (op->args[0].is_region() && op->args[0].region.buffer.scope() == MemScope::kFragment) continue;  // rs form
    auto ca = op->attrs.find("clear_accum");
    if (ca != op->attrs.end() && !ca->second.is_none() && !is_zero(ca->second.as_expr())) continue;
    const BufferRegion& c = op->args[2].region;
    if (c.buffer.scope() != MemScope::kFragment || !whole_buffer(c)) continue;
    size_t j = g;
    while (j > 0 && is_producer.count(j - 1)) --j;
    if (j == 0 || !(*items)[j - 1].is_stmt()) continue;
    --j;
    Stmt after = fold_accumulator_init((*items)[j].stmt, c.buffer);
    if (!after.defined()) continue;
    AttrMap attrs = op->attrs;
    attrs["clear_accum"] = Attr(make_bool(true));
    (*items)[j].stmt = make_tile_op(op->op, op->args, attrs, op->span);
    (*items)[g].stmt = after;
    // GEMMs that go on accumulating into c right after this one (MLA's Q_pe k_pe^T after Q c_kv^T)
    // move up before `after`: the mask runs once on the sum (-inf + x = -inf for finite x), and the
    // GEMMs stay adjacent (one group for the overlap, ws_overlap.h).
    for (size_t at = g, n = g + 1; n < items->size(); ++n) {
      if (is_producer.count(n)) continue;
      const auto* next = (*items)[n].is_stmt() ? (*items)[n].stmt.as<TileOpNode>() : nullptr;
      if (!next || !is_gemm_form(*next, GemmForm::kGemm) || next->args.size() < 3 || !next->args[2].is_region() ||
          !next->args[2].region.buffer.same_as(c.buffer) || !whole_buffer(next->args[2].region))
        break;
      auto nc = next->attrs.find("clear_accum");
      if (nc != next->attrs.end() && !nc->second.is_none() && !is_zero(nc->second.as_expr())) break;
      std::swap((*items)[at].stmt, (*items)[n].stmt);
      at = n;
    }
  }
}

}  // namespace tl
