// The prologue copies of warp_specialize (ws_prologue.h).
#include "target/cuda/ws_prologue.h"

#include <set>

#include "arith/region.h"
#include "ir/functor.h"
#include "op/tile_ops.h"
#include "target/cuda/ws_persistent.h"
#include "target/cuda/ws_tma_copies.h"
#include "transform/pass_config.h"

namespace tl {

std::vector<PrologueCopy> plan_prologue(const KernelLaunchNode& k, const std::vector<Param>& params,
                                        const std::vector<BodyItem>& top, size_t loop_at, const ForNode& loop,
                                        const std::vector<BodyItem>& items, const LayoutMap& lm, const AttrMap& configs,
                                        bool persistent, bool persistent_flash, int64_t cluster, bool has_dist) {
  std::vector<PrologueCopy> pre;
  if ((persistent && !persistent_flash) || cluster > 1 || has_dist || config_bool(configs, "tl.disable_prologue_tma"))
    return pre;
  // Not where the trip count depends on the block (causal attention): there it measured no
  // faster than the consumers' own copy on an H100 (2026-11-27, docs/PERFORMANCE.md: within
  // the few percent that interleaved rounds vary), so causal kernels keep the older form.
  // The persistent form (TL_ENABLE_PERSISTENT_FLASH) loads Q per tile by TMA in either case.
  if (!persistent && trip_depends_on_tile(k, top, loop)) return pre;
  std::vector<std::set<const BufferNode*>> writes(top.size()), uses(top.size());
  std::set<const BufferNode*> loop_writes;
  Analyzer an;
  for (size_t j = 0; j < top.size(); ++j) {
    if (!top[j].is_stmt() || j == loop_at) continue;
    for (const BufferRegion& w : collect_access_regions(top[j].stmt, an).writes) writes[j].insert(w.buffer.get());
    collect_buffer_uses(top[j].stmt, &uses[j]);
  }
  for (const BodyItem& it : items)
    if (it.is_stmt())
      for (const BufferRegion& w : collect_access_regions(it.stmt, an).writes) loop_writes.insert(w.buffer.get());
  for (size_t j = 0; j < loop_at; ++j) {
    const auto* op = top[j].is_stmt() ? top[j].stmt.as<TileOpNode>() : nullptr;
    if (!op || !is_tile_op(*op, TileOpKind::kCopy) || op->args.size() < 2 || !op->args[0].is_region() ||
        !op->args[1].is_region())
      continue;
    const BufferRegion& src = op->args[0].region;
    const BufferRegion& dst = op->args[1].region;
    if (src.buffer.scope() != MemScope::kGlobal || dst.buffer.scope() != MemScope::kShared) continue;
    if (!whole_buffer(dst)) continue;
    const BufferNode* db = dst.buffer.get();
    const BufferNode* sb = src.buffer.get();
    bool clash = loop_writes.count(db) || loop_writes.count(sb);
    for (size_t x = 0; x < top.size() && !clash; ++x) {
      if (x == j) continue;
      clash = writes[x].count(db) || writes[x].count(sb) || (x > j && x < loop_at && uses[x].count(db));
    }
    bool reads_memory = false;
    for (const Range& r : src.region)
      for (const Expr& e : {r.min, r.extent})
        for_each_subexpr(e, [&](const Expr& y) { reads_memory |= y.kind() == ExprKind::kBufferLoad; });
    if (clash || reads_memory) continue;
    TmaBoxPlan box;
    std::string w;
    if (!tma_box_for(*op, lm, params, &box, &w)) continue;
    pre.emplace_back(j, box);
  }
  return pre;
}

}  // namespace tl
