// Proxy fences that warp_specialize's wgmma GEMMs can skip (ws_proxy_fence.h).
#include "target/cuda/ws_proxy_fence.h"

#include "arith/region.h"
#include "op/tile_ops.h"
#include "transform/pass_config.h"

namespace tl {

std::set<size_t> mark_async_proxy_gemms(const std::vector<BodyItem>& top, size_t loop_at, std::vector<BodyItem>* items,
                                        const std::set<size_t>& is_producer, const std::vector<PrologueCopy>& pre,
                                        const OverlapPlan& ov, const AttrMap& configs) {
  std::set<size_t> steady_fence_free;
  std::set<const BufferNode*> tma_filled, written;
  for (size_t i : is_producer) tma_filled.insert((*items)[i].stmt.as<TileOpNode>()->args[1].region.buffer.get());
  std::set<size_t> pre_items;
  for (const auto& pc : pre) {
    pre_items.insert(pc.first);
    tma_filled.insert(top[pc.first].stmt.as<TileOpNode>()->args[1].region.buffer.get());
  }
  auto note_writes = [&](const Stmt& s) {
    Analyzer an;
    for (const BufferRegion& w : collect_access_regions(s, an).writes) written.insert(w.buffer.get());
  };
  for (size_t j = 0; j < top.size(); ++j)
    if (j != loop_at && !pre_items.count(j) && top[j].is_stmt()) note_writes(top[j].stmt);
  for (size_t j = 0; j < items->size(); ++j)
    if (!is_producer.count(j) && (*items)[j].is_stmt()) note_writes((*items)[j].stmt);
  for (BodyItem& it : *items) {
    const auto* op = it.is_stmt() ? it.stmt.as<TileOpNode>() : nullptr;
    if (!op || !is_gemm_form(*op, GemmForm::kGemm)) continue;
    bool ok = true;
    for (int a = 0; a < 2; ++a) {
      const Buffer& b = op->args[static_cast<size_t>(a)].region.buffer;
      if (a == 0 && b.scope() == MemScope::kFragment) continue;  // A in registers (wgmma_gemm_rs)
      ok = ok && tma_filled.count(b.get()) && !written.count(b.get());
    }
    if (!ok) continue;
    AttrMap attrs = op->attrs;
    attrs["async_proxy_operands"] = Attr(true);
    it.stmt = make_tile_op(op->op, op->args, attrs, op->span);
  }
  // Each GEMM of the overlapped loop's first group where an operand is written by thread stores only
  // before the loop (causal attention's Q, copied by the consumers): the peeled first iteration's
  // wgmma fences after those stores and the block barrier, nothing writes the operand again, so the
  // steady loop's copies of that GEMM need no fence.proxy.async (one MEMBAR + FENCE.VIEW.ASYNC per KV
  // block).
  // Off with TL_DISABLE_LOOP_PROXY_FENCE_ELISION.
  if (!ov.on || config_bool(configs, "tl.disable_loop_proxy_fence_elision")) return steady_fence_free;
  std::set<const BufferNode*> written_before, written_after;
  for (size_t j = 0; j < top.size(); ++j) {
    if (j == loop_at || pre_items.count(j) || !top[j].is_stmt()) continue;
    Analyzer an;
    for (const BufferRegion& w : collect_access_regions(top[j].stmt, an).writes)
      (j < loop_at ? written_before : written_after).insert(w.buffer.get());
  }
  std::set<const BufferNode*> loop_written;
  for (size_t j = 0; j < items->size(); ++j)
    if (!is_producer.count(j) && (*items)[j].is_stmt()) {
      Analyzer an;
      for (const BufferRegion& w : collect_access_regions((*items)[j].stmt, an).writes) loop_written.insert(w.buffer.get());
    }
  for (size_t g = ov.g1_first; g <= ov.g1; ++g) {  // the first group's GEMMs
    const auto* op = is_producer.count(g) ? nullptr : (*items)[g].stmt.as<TileOpNode>();
    if (!op || attr_bool(op->attrs, "async_proxy_operands", false)) continue;
    bool ok = true;
    for (int a = 0; a < 2; ++a) {
      const Buffer& b = op->args[static_cast<size_t>(a)].region.buffer;
      if (b.scope() == MemScope::kFragment) continue;
      if (tma_filled.count(b.get()) && !written.count(b.get())) continue;
      if (loop_written.count(b.get()) || written_after.count(b.get()) || tma_filled.count(b.get())) ok = false;
    }
    if (ok) steady_fence_free.insert(g);
  }
  return steady_fence_free;
}

}  // namespace tl
