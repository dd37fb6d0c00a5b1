// Distributed operators in a warp-specialized kernel (ws_distributed.h).
#include "target/cuda/ws_distributed.h"

#include "arith/region.h"
#include "ir/functor.h"
#include "op/tile_ops.h"

namespace tl {

bool has_dist_op(const Stmt& s) {
  bool hit = false;
  post_order_visit(s, [&](const Stmt& x) {
    if (const auto* op = x.as<TileOpNode>(); op && is_tile_op(*op, TileOpKind::kDistributed)) hit = true;
  });
  if (!hit)
    for_each_expr(s, [&](const Expr& e) {
      for_each_subexpr(e, [&](const Expr& y) {
        const auto* c = y.as<CallNode>();
        if (c && c->op.rfind("tl.dist.", 0) == 0 && c->op != "tl.dist.rank" && c->op != "tl.dist.world") hit = true;
      });
    });
  return hit;
}

bool waits_gate_producer_only(const std::vector<BodyItem>& top, size_t loop_at, const ForNode& loop) {
  bool any_wait = false;
  Analyzer an;
  auto reads_global = [&](const Stmt& st) {
    for (const BufferRegion& r : collect_access_regions(st, an).reads)
      if (r.buffer.scope() == MemScope::kGlobal) return true;
    return false;
  };
  for (size_t j = 0; j < top.size(); ++j) {
    if (!top[j].is_stmt() || j == loop_at) continue;
    const auto* op = top[j].stmt.as<TileOpNode>();
    const auto* ev = top[j].stmt.as<EvaluateNode>();
    const auto* call = ev ? ev->value.as<CallNode>() : nullptr;  // lowered already (cuda.expand_tile_ops)
    if ((op && op->op == "dist.wait") || (call && call->op == "tl.dist.wait")) {
      if (j > loop_at) return false;
      any_wait = true;
      continue;
    }
    if (has_dist_op(top[j].stmt) || reads_global(top[j].stmt)) return false;
  }
  auto let_reads_global = [](const BodyItem& it) {
    bool hit = false;
    if (it.let_var.defined())
      for_each_subexpr(it.let_value, [&](const Expr& y) {
        if (const auto* l = y.as<BufferLoadNode>(); l && l->buffer.scope() == MemScope::kGlobal) hit = true;
      });
    return hit;
  };
  for (const BodyItem& it : top)
    if (let_reads_global(it)) return false;
  std::vector<BodyItem> items = flatten_body(loop.body);
  for (const BodyItem& it : items) {
    if (let_reads_global(it)) return false;
    if (!it.is_stmt()) continue;
    const auto* op = it.stmt.as<TileOpNode>();
    const bool load = op && is_tile_op(*op, TileOpKind::kCopy) && op->args.size() >= 2 && op->args[0].is_region() &&
                      op->args[0].region.buffer.scope() == MemScope::kGlobal && op->args[1].is_region() &&
                      op->args[1].region.buffer.scope() == MemScope::kShared;
    if (!load && reads_global(it.stmt)) return false;
  }
  return any_wait;
}

}  // namespace tl
