// FA3's intra-warpgroup overlap of warp_specialize's consumer loop (ws_overlap.h).
#include "target/cuda/ws_overlap.h"

#include "arith/region.h"
#include "ir/functor.h"
#include "op/tile_ops.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

Stmt builtin(const std::string& op, std::vector<Expr> args) {
  return make_evaluate(make_call(DataType::Void(), op, std::move(args)));
}

}  // namespace

OverlapPlan plan_overlap(const std::vector<BodyItem>& items, const std::set<size_t>& is_producer, size_t async_at,
                         int gemm_count, const LayoutMap& lm, int64_t nc, const AttrMap& configs, bool pingpong,
                         const std::vector<ProducerGroup>& groups, int64_t num_stages) {
  OverlapPlan none;
  if (pingpong || async_at != items.size() || gemm_count < 2 || config_bool(configs, "tl.disable_wgmma_overlap"))
    return none;
  std::vector<size_t> cons, gemms;
  std::vector<size_t> pos(items.size(), 0);  // item index -> its place among the consumer items
  for (size_t j = 0; j < items.size(); ++j) {
    if (!items[j].is_stmt()) return none;  // a let or an allocation in the body: its scope would split
    if (is_producer.count(j)) continue;
    pos[j] = cons.size();
    cons.push_back(j);
    const auto* op = items[j].stmt.as<TileOpNode>();
    if (op && is_gemm_form(*op, GemmForm::kGemm)) gemms.push_back(j);
  }
  // Every GEMM is a body item (none nested in a condition or a loop), the last one ends the body.
  if (gemms.size() != static_cast<size_t>(gemm_count) || cons.back() != gemms.back()) return none;
  const size_t g1_first = gemms.front(), g1 = gemms[gemms.size() - 2], g2 = gemms.back();
  auto op_at = [&](size_t j) { return items[j].stmt.as<TileOpNode>(); };
  const TileOpNode* op2 = op_at(g2);
  const Buffer& acc1 = op_at(g1_first)->args[2].region.buffer;
  const Buffer& acc2 = op2->args[2].region.buffer;
  // The first group: consecutive consumer items accumulating into one fragment (one wait retires it).
  for (size_t x = 1; x + 1 < gemms.size(); ++x)
    if (pos[gemms[x]] != pos[gemms[x - 1]] + 1 || !op_at(gemms[x])->args[2].region.buffer.same_as(acc1)) return none;
  // Every consumer thread takes part in every GEMM (the issue-only wgmma calls have no early exit
  // for threads outside the GEMM: include/tl/cuda/wgmma.h).
  for (size_t g : gemms) {
    auto gp = lm.gemms.find(op_at(g));
    if (gp == lm.gemms.end() || gp->second.warpgroups.wg_m * gp->second.warpgroups.wg_n * 128 != nc) return none;
  }
  if (acc1.scope() != MemScope::kFragment || acc2.scope() != MemScope::kFragment || acc1.same_as(acc2)) return none;
  std::map<size_t, std::set<const BufferNode*>> R, W;
  for (size_t j : cons) {
    Analyzer an;
    AccessRegions a = collect_access_regions(items[j].stmt, an);
    for (const BufferRegion& r : a.reads) R[j].insert(r.buffer.get());
    for (const BufferRegion& w : a.writes) W[j].insert(w.buffer.get());
  }
  auto meets = [](const std::set<const BufferNode*>& x, const std::set<const BufferNode*>& y) {
    for (const BufferNode* b : x)
      if (y.count(b)) return true;
    return false;
  };
  auto conflict = [&](size_t x, size_t y) {
    return meets(W[x], R[y]) || meets(W[x], W[y]) || meets(W[y], R[x]);
  };
  size_t split = 0;
  for (size_t j : cons)
    if (j > g1 && j < g2 && W[j].count(op2->args[0].region.buffer.get())) split = j + 1;
  if (split == 0) return none;  // nothing between the GEMMs produces the second one's A operand
  for (size_t a : cons)
    for (size_t c : cons)
      if (a <= g1 && c >= split && conflict(a, c)) return none;
  size_t wait0 = 0;
  for (size_t j : cons)
    if (j > g1 && j < split && conflict(j, g2)) {
      wait0 = j;
      break;
    }
  if (wait0 == 0) return none;
  // A stage that A1 reads and C reads too (MLA's c_kv: the keys of the score GEMMs, the values of
  // P c_kv) is held from A1(k) to A2(k + 1), one iteration longer than in the plain loop: with fewer
  // than 3 stages no stage is free to load block k + 1 into while iteration k runs (header comment).
  if (num_stages < 3)
    for (const ProducerGroup& g : groups)
      if (g.first_use <= g1 && g.last_use >= split) return none;
  // Shared operands of the second GEMM that A2 writes after the wait (P through shared memory).
  bool sync = false;
  for (size_t a = 0; a < 2; ++a) {
    const Buffer& b = op2->args[a].region.buffer;
    if (b.scope() != MemScope::kShared) continue;
    for (size_t j : cons)
      if (j >= wait0 && j < split && W[j].count(b.get())) sync = true;
  }
  return OverlapPlan{true, g1_first, g1, g2, split, wait0, sync, acc1, acc2};
}

Stmt overlapped_consumer(const OverlapPlan& ov, const ForNode& loop, const std::vector<BodyItem>& items,
                         const std::set<size_t>& is_producer, const std::vector<ProducerGroup>& groups,
                         const std::map<const BufferNode*, Buffer>& versions, const StageRing& ring,
                         const std::vector<Stmt>& mid_release, const std::set<size_t>& steady_fence_free,
                         int64_t cluster) {
  const auto& full = ring.full;
  const auto& empty = ring.empty;
  const auto& iter = ring.iter;
  const auto& stage = ring.stage;
  const auto& parity = ring.parity;
  const DataType it = loop.var.dtype();
  const int64_t G = static_cast<int64_t>(groups.size());
  const Expr i = iter(loop.var), s = stage(i), ph = parity(i);
  auto item = [&](const Stmt& x) {
    BodyItem b;
    b.stmt = x;
    b.span = loop.span;
    return b;
  };
  auto waits_at = [&](size_t j, std::vector<BodyItem>* out) {
    for (int64_t g = 0; g < G; ++g)
      if (groups[g].first_use == j) out->push_back(item(builtin("cuda.mbarrier_wait", {full(g, s), ph})));
  };
  auto releases_at = [&](size_t j, const Expr& st, std::vector<BodyItem>* out) {
    for (int64_t g = 0; g < G; ++g)
      if (groups[g].last_use == j) out->push_back(item(release_stage(groups[g], empty(g, st), cluster)));
  };
  auto issue_only = [&](size_t j) {
    const auto* op = items[j].stmt.as<TileOpNode>();
    AttrMap attrs = op->attrs;
    attrs["wgmma_issue"] = Attr(true);
    if (steady_fence_free.count(j)) attrs["async_proxy_operands"] = Attr(true);
    return item(make_tile_op(op->op, op->args, attrs, op->span));
  };
  auto wait = [&](int64_t pending, const Buffer& acc) {
    std::vector<Expr> zeros(acc.shape().size(), make_int(0));
    Expr handle = make_call(DataType::Handle(), "tl.buffer_handle", {make_load(acc, zeros)});
    return item(builtin("cuda.wgmma_wait", {make_int(pending), handle}));
  };
  // Items [lo, hi) as the plain schedule runs them (each GEMM waited for), for iteration `kv`.
  auto plain = [&](size_t lo, size_t hi, const Expr& kv) {
    std::vector<BodyItem> out;
    for (size_t j = lo; j < hi; ++j) {
      if (is_producer.count(j)) continue;
      waits_at(j, &out);
      out.push_back(items[j]);
      releases_at(j, s, &out);
    }
    return substitute(rewrite_versions(rebuild_body(out), versions, s), {{loop.var, kv}});
  };
  // Items [lo, hi] with the GEMMs at [issue_lo, hi] only issued (their stages are released after
  // their wait).
  auto issued = [&](size_t lo, size_t issue_lo, size_t hi) {
    std::vector<BodyItem> out;
    for (size_t j = lo; j <= hi; ++j) {
      if (is_producer.count(j)) continue;
      waits_at(j, &out);
      out.push_back(j >= issue_lo ? issue_only(j) : items[j]);
      if (j < issue_lo) releases_at(j, s, &out);
    }
    return out;
  };
  std::vector<BodyItem> a1 = issued(0, ov.g1_first, ov.g1), c = issued(ov.split, ov.g2, ov.g2), a2;
  a2.push_back(wait(1, ov.acc1));
  for (size_t j = ov.g1_first; j <= ov.g1; ++j)
    if (!is_producer.count(j)) releases_at(j, s, &a2);
  for (size_t j = ov.g1 + 1; j < ov.split; ++j) {
    if (is_producer.count(j)) continue;
    if (j == ov.wait0) {
      a2.push_back(wait(0, ov.acc2));
      releases_at(ov.g2, stage(i - make_int(1, it)), &a2);
      // Every warpgroup's wgmma of k - 1 read the shared operand that A2 now writes for k.
      if (ov.sync_after_wait0) a2.push_back(item(builtin("tl.sync_threads", {})));
    }
    waits_at(j, &a2);
    a2.push_back(items[j]);
    releases_at(j, s, &a2);
  }
  const Expr one = make_int(1, it), last = loop.min + loop.extent - one;
  Stmt body = make_seq({rewrite_versions(rebuild_body(a1), versions, s),
                        substitute(rewrite_versions(rebuild_body(c), versions, s), {{loop.var, loop.var - one}}),
                        rewrite_versions(rebuild_body(a2), versions, s)});
  Stmt steady = make_for(loop.var, loop.min + one, loop.extent - one, ForKind::kSerial, body, {}, loop.span);
  const Expr any = loop.extent > make_int(0, it);
  // `mid_release`: statements to run once every first GEMM has completed (the persistent form's
  // release of the prologue's buffers, build).
  std::vector<Stmt> seq = {make_if(any, plain(0, ov.split, loop.min)), steady};
  seq.insert(seq.end(), mid_release.begin(), mid_release.end());
  seq.push_back(make_if(any, plain(ov.split, items.size(), last)));
  return make_seq(seq);
}

}  // namespace tl
