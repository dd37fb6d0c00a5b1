// Deferred row sums in warp_specialize's consumer loop (ws_deferred_row_sum.h).
#include "target/cuda/ws_deferred_row_sum.h"

#include "arith/region.h"
#include "ir/functor.h"
#include "op/tile_ops.h"
#include "target/cuda/warp_specialize_common.h"
#include "transform/pass_config.h"

namespace tl {

std::vector<Stmt> plan_deferred_row_sums(const std::vector<BodyItem>& top, size_t loop_at, std::vector<BodyItem>* items,
                                         const std::set<size_t>& is_producer, const LayoutMap& lm,
                                         const AttrMap& configs) {
  std::vector<Stmt> after_loop;
  if (config_bool(configs, "tl.disable_deferred_row_sum")) return after_loop;
  std::vector<size_t> cons;
  for (size_t j = 0; j < items->size(); ++j)
    if (!is_producer.count(j)) cons.push_back(j);
  for (size_t ci = 0; ci + 1 < cons.size(); ++ci) {
    const size_t r = cons[ci], u = cons[ci + 1];
    if (!(*items)[r].is_stmt() || !(*items)[u].is_stmt()) continue;
    const auto* red = (*items)[r].stmt.as<TileOpNode>();
    if (!red || !is_tile_op(*red, TileOpKind::kReduce) || red->args.size() != 2 || !red->args[0].is_region() ||
        !red->args[1].is_region() || attr_str(red->attrs, "type", "sum") != "sum" ||
        !attr_bool(red->attrs, "clear", true))
      continue;
    const Buffer& src = red->args[0].region.buffer;
    const Buffer& sum = red->args[1].region.buffer;
    if (src.scope() != MemScope::kFragment || sum.scope() != MemScope::kFragment || sum.ndim() != 1 ||
        !whole_buffer(red->args[0].region) || !whole_buffer(red->args[1].region))
      continue;
    // u: for i in T.Parallel(n): l[i] = l[i] * a + s[i]  (or l[i] + s[i])
    const auto* loop = (*items)[u].stmt.as<ForNode>();
    if (!loop || loop->for_kind != ForKind::kParallel) continue;
    const auto* st = loop->body.as<BufferStoreNode>();
    if (!st || st->indices.size() != 1 || st->indices[0].as<VarNode>() != loop->var.get()) continue;
    const Buffer& l = st->buffer;
    if (l.scope() != MemScope::kFragment || l.same_as(sum) || l.same_as(src)) continue;
    auto is_at_i = [&](const Expr& e, const Buffer& b) {
      const auto* ld = e.as<BufferLoadNode>();
      return ld && ld->buffer.same_as(b) && ld->indices.size() == 1 && ld->indices[0].as<VarNode>() == loop->var.get();
    };
    const auto* add = st->value.as<BinaryNode>();
    if (!add || add->op != BinOp::kAdd || !is_at_i(add->b, sum)) continue;
    Expr scale;
    if (!is_at_i(add->a, l)) {
      const auto* mul = add->a.as<BinaryNode>();
      if (!mul || mul->op != BinOp::kMul || !is_at_i(mul->a, l)) continue;
      scale = mul->b;
    }
    bool bad = false;
    if (scale.defined())
      for_each_subexpr(scale, [&](const Expr& y) {
        if (const auto* ld = y.as<BufferLoadNode>())
          bad |= ld->buffer.same_as(l) || ld->buffer.same_as(sum) || ld->buffer.scope() != MemScope::kFragment;
      });
    if (bad) continue;
    // Layouts: the reduce's thread groups are exactly l's (and s's) replicas, all inside a warp.
    auto fs = lm.fragments.find(src), fsum = lm.fragments.find(sum), fl = lm.fragments.find(l);
    if (fs == lm.fragments.end() || fsum == lm.fragments.end() || fl == lm.fragments.end() ||
        !fl->second.same_as(fsum->second))
      continue;
    std::vector<ThreadGroup> groups;
    const int dim = static_cast<int>(attr_int(red->attrs, "dim", 0));
    if (dim < 0 || static_cast<size_t>(dim) >= src.ndim() || !fs->second.reduce(dim, &groups).same_as(fsum->second))
      continue;
    std::multiset<std::pair<int64_t, int64_t>> g1, g2;
    for (const ThreadGroup& g : groups)
      if (g.extent > 1) g1.insert({g.extent, g.stride});
    for (const FragmentMode& m : fl->second.modes())
      if (m.is_replica() && m.on_threads() && m.extent > 1) g2.insert({m.extent, m.thread_stride});
    bool in_warp = !g1.empty();
    for (const auto& [e, st2] : g1) in_warp = in_warp && e * st2 <= 32 && 32 % (e * st2) == 0;
    if (!in_warp || g1 != g2) continue;
    // Uses: s only by r and u, l only by u in the loop; outside the loop, s nowhere and l written
    // before it only by one whole T.fill(l, 0).
    for (size_t j = 0; j < items->size() && !bad; ++j) {
      if (j == r || j == u || is_producer.count(j)) continue;
      std::set<const BufferNode*> used;
      if ((*items)[j].is_stmt()) collect_buffer_uses((*items)[j].stmt, &used);
      else if ((*items)[j].let_var.defined()) collect_buffer_uses(make_evaluate((*items)[j].let_value), &used);
      bad = used.count(sum.get()) || used.count(l.get());
    }
    const TileOpNode* fill = nullptr;
    for (size_t j = 0; j < top.size() && !bad; ++j) {
      if (j == loop_at || !top[j].is_stmt()) continue;
      std::set<const BufferNode*> used;
      collect_buffer_uses(top[j].stmt, &used);
      if (used.count(sum.get())) bad = true;
      if (j > loop_at || !used.count(l.get())) continue;
      const auto* op = top[j].stmt.as<TileOpNode>();
      const auto* zero = op && op->args.size() == 2 && op->args[1].is_expr() ? op->args[1].expr.as<FloatImmNode>() : nullptr;
      if (fill || !op || !is_tile_op(*op, TileOpKind::kFill) || !op->args[0].region.buffer.same_as(l) ||
          !whole_buffer(op->args[0].region) || !(zero ? zero->value == 0.0 : is_zero(op->args[1].expr)))
        bad = true;
      fill = op;
    }
    if (bad || !fill) continue;
    AttrMap attrs = red->attrs;
    attrs["thread_partial"] = Attr(true);
    (*items)[r].stmt = make_tile_op(red->op, red->args, attrs, red->span);
    AttrMap fin;
    fin["op"] = Attr(std::string("sum"));
    after_loop.push_back(make_tile_op("finalize_reducer", {fill->args[0].region}, fin, red->span));
  }
  return after_loop;
}

}  // namespace tl
