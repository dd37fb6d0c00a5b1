// The two roles' loops over warp_specialize's stage ring (ws_roles.h).
#include "target/cuda/ws_roles.h"

#include "ir/functor.h"
#include "op/tile_ops.h"

namespace tl {

namespace {

Stmt builtin(const std::string& op, std::vector<Expr> args) {
  return make_evaluate(make_call(DataType::Void(), op, std::move(args)));
}

}  // namespace

Stmt producer_tma_loop(const ForNode& loop, const std::vector<BodyItem>& items,
                       const std::vector<ProducerGroup>& groups, const std::map<const BufferNode*, Buffer>& versions,
                       const StageRing& ring, const std::set<size_t>& multicast, int64_t cluster,
                       const std::vector<Stmt>* tile_prologue) {
  const DataType it = loop.var.dtype();
  const int64_t G = static_cast<int64_t>(groups.size());
  const auto& full = ring.full;
  const auto& empty = ring.empty;
  const auto& iter = ring.iter;
  const auto& stage = ring.stage;
  const auto& parity = ring.parity;
  Var kp(loop.var.name() + "_p", it);
  std::vector<Stmt> pbody;
  {
    Expr i = iter(kp), s = stage(i), ph = parity(i);
    std::map<Var, Expr, VarLess> sub = {{loop.var, kp}};
    for (int64_t g = 0; g < G; ++g) {
      pbody.push_back(builtin("cuda.mbarrier_wait", {empty(g, s), make_int(1, it) - ph}));
      pbody.push_back(builtin("cuda.mbarrier_expect_tx", {full(g, s), make_int(groups[g].bytes)}));
      for (size_t c : groups[g].copies) {
        const auto* op = items[c].stmt.as<TileOpNode>();
        AttrMap attrs = op->attrs;
        attrs["tma"] = Attr(true);
        attrs["mbarrier"] = Attr(full(g, s));
        if (multicast.count(c)) attrs["multicast"] = Attr(cluster);
        Stmt cp = make_tile_op(op->op, op->args, attrs, op->span);
        pbody.push_back(rewrite_versions(substitute(cp, sub), versions, s));
      }
      // Persistent: the tile's prologue loads follow its first group's (attention: Q after the
      // first K), so that those, whose stage the consumers freed earlier, need not wait for the
      // consumers' release of Q at the end of the previous tile.
      if (g == 0 && tile_prologue) pbody.push_back(make_if(eq(kp, loop.min), make_seq(*tile_prologue)));
    }
  }
  return make_for(kp, loop.min, loop.extent, ForKind::kSerial, make_seq(pbody), {}, loop.span);
}

Stmt plain_consumer(const ForNode& loop, const std::vector<BodyItem>& items, const std::set<size_t>& is_producer,
                    const std::vector<ProducerGroup>& groups, const std::map<const BufferNode*, Buffer>& versions,
                    const StageRing& ring, const Var& tid, const std::set<size_t>* pingpong_items, bool async,
                    int64_t cluster) {
  const DataType it = loop.var.dtype();
  const int64_t G = static_cast<int64_t>(groups.size());
  const auto& full = ring.full;
  const auto& empty = ring.empty;
  const auto& iter = ring.iter;
  const auto& stage = ring.stage;
  const auto& parity = ring.parity;
  std::vector<BodyItem> citems;
  Stmt consumer_loop;
  Expr i = iter(loop.var), s = stage(i), ph = parity(i);
  auto stmt_item = [&](const Stmt& x) {
    BodyItem b;
    b.stmt = x;
    b.span = loop.span;
    return b;
  };
  // Ping-pong: warpgroup w waits on named barrier 2 + w before each GEMM and lets the other
  // one go (arrives on 3 - w) after it.
  Expr wg = floordiv(Expr(tid), make_int(128, tid.dtype()));
  Expr my_bar = make_int(2, tid.dtype()) + wg, other_bar = make_int(3, tid.dtype()) - wg;
  for (size_t j = 0; j < items.size(); ++j) {
    if (is_producer.count(j)) continue;
    for (int64_t g = 0; g < G; ++g)
      if (groups[g].first_use == j) citems.push_back(stmt_item(builtin("cuda.mbarrier_wait", {full(g, s), ph})));
    const bool pp = pingpong_items && pingpong_items->count(j);
    if (pp) citems.push_back(stmt_item(builtin("cuda.named_barrier_sync", {my_bar, make_int(256)})));
    citems.push_back(items[j]);
    if (pp) citems.push_back(stmt_item(builtin("cuda.named_barrier_arrive", {other_bar, make_int(256)})));
    for (int64_t g = 0; g < G; ++g) {
      if (groups[g].last_use != j) continue;
      if (!groups[g].late_release) {
        citems.push_back(stmt_item(release_stage(groups[g], empty(g, s), cluster)));
      } else {
        Stmt rel = release_stage(groups[g], empty(g, stage(i - make_int(1, it))), cluster);
        citems.push_back(stmt_item(make_if(loop.var > loop.min, rel)));
      }
    }
  }
  Stmt cbody = rewrite_versions(rebuild_body(citems), versions, stage(iter(loop.var)));
  AttrMap cann;
  if (async) cann["cuda.async_mma"] = Attr(true);
  consumer_loop = make_for(loop.var, loop.min, loop.extent, ForKind::kSerial, cbody, cann, loop.span);
  // After the loop (and the lowering's wgmma drain), release the stages still held by GEMMs left
  // in flight: the producer refills them for the next tile.
  std::vector<Stmt> final_release;
  for (int64_t g = 0; g < G; ++g)
    if (groups[g].late_release)
      final_release.push_back(
          release_stage(groups[g], empty(g, stage(iter(loop.min + loop.extent - make_int(1, it)))), cluster));
  if (!final_release.empty())
    consumer_loop = make_seq({consumer_loop, make_if(loop.extent > make_int(0, it), make_seq(final_release))});
  return consumer_loop;
}

}  // namespace tl
