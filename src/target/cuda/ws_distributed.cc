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

Stmt cache_producer_wait(const Stmt& wait, ProducerWaitCache* cache) {
  // The flag element (a BufferLoad), the value and whether the comparison is "ge".
  const BufferLoadNode* flag = nullptr;
  Buffer fbuf;
  std::vector<Expr> idx;
  Expr value;
  bool ge = false;
  if (const auto* op = wait.as<TileOpNode>(); op && op->op == "dist.wait" && op->args.size() == 2 &&
                                             op->args[0].is_region() && !op->args[1].is_region()) {
    fbuf = op->args[0].region.buffer;
    for (const Range& r : op->args[0].region.region) idx.push_back(r.min);
    value = op->args[1].expr;
    ge = attr_str(op->attrs, "cmp", "ge") == "ge";
  } else if (const auto* ev = wait.as<EvaluateNode>()) {
    const auto* c = ev->value.as<CallNode>();
    if (c && c->op == "tl.dist.wait" && c->args.size() == 4) {
      const auto* addr = c->args[0].as<CallNode>();
      flag = addr && !addr->args.empty() ? addr->args[0].as<BufferLoadNode>() : nullptr;
      if (flag) {
        fbuf = flag->buffer;
        idx = flag->indices;
      }
      value = c->args[1];
      ge = is_const_value(c->args[2], 2);
    }
  }
  if (!ge || !fbuf.defined() || idx.size() != fbuf.ndim()) return wait;
  // Row-major flat index of the element (int64).
  const DataType i64 = DataType::Int64();
  Expr flat = make_int(0, i64);
  for (size_t d = 0; d < idx.size(); ++d) flat = flat * make_cast(i64, fbuf.shape()[d]) + make_cast(i64, idx[d]);
  const DataType t = fbuf.dtype();
  const std::string n = std::to_string(cache->allocs.size() / 2);
  Buffer seen_at("tl_wait_seen_at" + n, i64, {make_int(1)}, MemScope::kLocalVar, {}, wait->span);
  Buffer seen("tl_wait_seen" + n, t, {make_int(1)}, MemScope::kLocalVar, {}, wait->span);
  for (const Buffer& b : {seen_at, seen}) {
    BodyItem a;
    a.alloc = b;
    a.span = wait->span;
    cache->allocs.push_back(a);
  }
  const Expr zero = make_int(0);
  cache->init.push_back(make_store(seen_at, {zero}, make_int(-1, i64), wait->span));
  cache->init.push_back(make_store(seen, {zero}, make_int(0, t), wait->span));
  const Expr v = make_cast(t, value);
  Expr miss = ne(make_load(seen_at, {zero}), flat) || make_load(seen, {zero}) < v;
  return make_if(miss,
                 make_seq({wait, make_store(seen_at, {zero}, flat, wait->span), make_store(seen, {zero}, v, wait->span)}),
                 Stmt(), wait->span);
}

}  // namespace tl
