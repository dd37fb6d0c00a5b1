// warp_specialize (warp_specialize.h): the driver of the pass. It checks a kernel's conditions, groups
// the pipelined loop's producer copies by first use, asks the planning files what to do (ws_*.h, listed
// in warp_specialize_common.h: persistent schedule, FA3 overlap, prologue copies, multicast, proxy
// fences, deferred row sums, accumulator inits), and builds the kernel body: the mbarriers, the
// producer's and the consumers' loops (ws_roles.h, ws_overlap.h) and the two roles around them.
#include "target/cuda/warp_specialize.h"

#include <algorithm>
#include <map>
#include <set>

#include "arith/region.h"
#include "ir/error.h"
#include "ir/functor.h"
#include "layout/infer_layout.h"
#include "op/tile_ops.h"
#include "target/cuda/cuda_tma.h"
#include "target/cuda/tile_prologue.h"
#include "target/cuda/warp_specialize_common.h"
#include "target/cuda/ws_accumulator_init.h"
#include "target/cuda/ws_deferred_row_sum.h"
#include "target/cuda/ws_distributed.h"
#include "target/cuda/ws_overlap.h"
#include "target/cuda/ws_persistent.h"
#include "target/cuda/ws_prologue.h"
#include "target/cuda/ws_proxy_fence.h"
#include "target/cuda/ws_roles.h"
#include "target/cuda/ws_tma_copies.h"
#include "target/cuda/ws_tma_store.h"
#include "transform/pass_config.h"
#include "transform/plan_pipeline.h"

namespace tl {

namespace {

constexpr int64_t kProducerThreads = 128;

Stmt builtin(const std::string& op, std::vector<Expr> args) {
  return make_evaluate(make_call(DataType::Void(), op, std::move(args)));
}

class Specializer : public StmtMutator {
 public:
  explicit Specializer(const PassContext& ctx) : ctx_(ctx) {}

 protected:
  Stmt mutate_kernel(const KernelLaunchNode* k, const Stmt& s) override {
    std::string why;
    persistent_ = PersistentPlan();
    cluster_ = attr_int(k->attrs, "cluster_dims", 1);
    Stmt body = specialize(*k, &why);
    AttrMap attrs = k->attrs;
    if (!body.defined()) {
      if (!why.empty()) attrs["cuda.why_not_warp_specialized"] = Attr(why);
      return make_kernel(k->grid, k->block_vars, k->threads, k->thread_vars, attrs, k->body, k->span);
    }
    attrs["cuda.producer_threads"] = Attr(kProducerThreads);
    if (!persistent_.on) return make_kernel(k->grid, k->block_vars, k->threads, k->thread_vars, attrs, body, k->span);
    // One CTA per SM (at most one per tile): the launcher caps the grid at the device's SM count.
    attrs["cuda.persistent"] = Attr(true);
    attrs.erase("use_swizzle_panel");
    attrs.erase("use_swizzle_order");
    return make_kernel({persistent_.tiles}, {persistent_.cta}, k->threads, k->thread_vars, attrs, body, k->span);
  }

 private:
  // The specialized kernel body, or an undefined Stmt (with the reason in `why`).
  Stmt specialize(const KernelLaunchNode& k, std::string* why) {
    auto no = [&](const std::string& w) {
      *why = w;
      return Stmt();
    };
    int64_t nc = 0;
    if (k.threads.size() != 1 || k.thread_vars.size() != 1 || !is_const_int(k.threads[0], &nc))
      return no("the block is not one constant dimension of threads");
    if (nc % 128 || nc + kProducerThreads > 1024)
      return no(std::to_string(nc) + " threads are not whole warpgroups (or leave no room for a producer)");
    // The one pipelined loop, directly in the kernel body.
    int pipelined = 0;
    post_order_visit(k.body, [&](const Stmt& x) {
      if (const auto* f = x.as<ForNode>(); f && f->for_kind == ForKind::kPipelined) ++pipelined;
    });
    if (pipelined != 1) return no(pipelined ? "more than one T.Pipelined loop" : "");
    std::vector<BodyItem> top = flatten_body(k.body);
    const ForNode* loop = nullptr;
    size_t loop_at = 0;
    bool seen_stmt = false;
    for (size_t i = 0; i < top.size(); ++i) {
      if (top[i].is_stmt()) {
        if (const auto* f = top[i].stmt.as<ForNode>(); f && f->for_kind == ForKind::kPipelined) {
          loop = f;
          loop_at = i;
        }
        seen_stmt = true;
      } else if (top[i].let_var.defined() && seen_stmt) {
        bool reads = false;
        for_each_subexpr(top[i].let_value, [&](const Expr& y) { reads |= y.kind() == ExprKind::kBufferLoad; });
        if (reads) return no("a let binding reads memory after a statement of the kernel");
      }
    }
    if (!loop) return no("the T.Pipelined loop is nested in another statement");
    // Distributed operators (T.wait, remote T.copy, ...) before the loop gate what the producer
    // loads: they run with every thread before the roles split (build). Inside the loop they would
    // need the producer's cooperation, which this schedule does not give.
    if (has_dist_op(loop->body)) return no("a distributed operator (T.wait, remote T.copy, ...) in the pipelined loop");
    has_dist_ = has_dist_op(k.body);
    producer_waits_ = has_dist_ && waits_gate_producer_only(top, loop_at, *loop);
    std::vector<BodyItem> items = flatten_body(loop->body);
    PipelinePlan plan = plan_pipeline(*loop, items, buffers_used_outside(k.body, loop));

    const int64_t S = plan.num_stages;
    if (plan.producers.empty() || S < 2) return no("the pipelined loop has no producer copies (or fewer than 2 stages)");
    // What layout inference will decide (the pipeline does not change it).
    LayoutMap lm;
    try {
      lm = infer_layouts(k.body, nc, ctx_.target, true);
    } catch (const Error&) {
      return no("layout inference fails (reported by the lowering)");
    }
    if (lm.gemms.empty()) return no("no T.gemm in the kernel");
    if (!config_bool(ctx_.configs, "tl.disable_wgmma_zero_init")) {
      std::set<size_t> producers(plan.producers.begin(), plan.producers.end());
      std::vector<const TileOpNode*> before(items.size(), nullptr);
      for (size_t j = 0; j < items.size(); ++j)
        if (items[j].is_stmt()) before[j] = items[j].stmt.as<TileOpNode>();
      fold_gemm_accumulator_inits(&items, producers);
      // `lm` knows the GEMMs by address: the folded ones are new nodes (one item earlier).
      for (size_t j = 0; j + 1 < items.size(); ++j) {
        const auto* now = items[j].is_stmt() ? items[j].stmt.as<TileOpNode>() : nullptr;
        if (!now || now == before[j] || !is_gemm_form(*now, GemmForm::kGemm)) continue;
        for (size_t g = j + 1; g < items.size(); ++g)
          if (auto it = before[g] ? lm.gemms.find(before[g]) : lm.gemms.end(); it != lm.gemms.end()) {
            lm.gemms[now] = it->second;
            break;
          }
      }
    }
    for (auto& [op, gp] : lm.gemms)
      if (!gp.use_wgmma) return no("a T.gemm does not run on wgmma: " + gp.why_not_wgmma);
    // TMA boxes of the producers.
    std::map<size_t, TmaBoxPlan> boxes;
    for (size_t i : plan.producers) {
      std::string w;
      if (!tma_box_for(*items[i].stmt.as<TileOpNode>(), lm, params_, &boxes[i], &w)) return no(w);
    }
    // Copies that every CTA of a cluster makes alike (their region does not depend on the block's x
    // index): each CTA loads 1/cluster of the tile and multicasts it to all.
    multicast_.clear();
    if (cluster_ > 1 && !config_bool(ctx_.configs, "tl.disable_tma_multicast")) multicast_ = plan_multicast(k, top, items, plan.producers, boxes, cluster_);
    // Groups by first use.
    std::set<size_t> is_producer(plan.producers.begin(), plan.producers.end());
    std::vector<std::set<const BufferNode*>> uses(items.size());
    for (size_t j = 0; j < items.size(); ++j) {
      if (is_producer.count(j)) continue;
      if (items[j].is_stmt()) collect_buffer_uses(items[j].stmt, &uses[j]);
      else if (items[j].let_var.defined()) collect_buffer_uses(make_evaluate(items[j].let_value), &uses[j]);
    }
    std::map<size_t, size_t> group_of_first;  // first use -> group index
    std::vector<ProducerGroup> groups;
    for (size_t i : plan.producers) {
      const BufferNode* b = items[i].stmt.as<TileOpNode>()->args[1].region.buffer.get();
      size_t first = items.size(), last = 0;
      for (size_t j = 0; j < items.size(); ++j)
        if (uses[j].count(b)) {
          first = std::min(first, j);
          last = std::max(last, j);
        }
      if (first == items.size()) return no("a producer's buffer is not used in the loop");
      auto it = group_of_first.find(first);
      if (it == group_of_first.end()) {
        it = group_of_first.emplace(first, groups.size()).first;
        groups.push_back(ProducerGroup{{}, first, last, 0, false});
      }
      ProducerGroup& g = groups[it->second];
      g.copies.push_back(i);
      g.multicast = g.multicast || multicast_.count(i);
      g.last_use = std::max(g.last_use, last);
      g.bytes += boxes[i].bytes;
    }
    // A GEMM that may stay in flight for one iteration.
    const bool allow_async = !config_bool(ctx_.configs, "tl.disable_wgmma_async");
    const TileOpNode* async_gemm = allow_async ? async_mma_candidate(items, is_producer, plan.versioned) : nullptr;
    size_t async_at = items.size();
    if (async_gemm) {
      for (size_t j = 0; j < items.size(); ++j)
        if (items[j].stmt.get() == async_gemm) {
          async_at = j;
          AttrMap attrs = async_gemm->attrs;
          attrs["wgmma_async"] = Attr(true);
          items[j].stmt = make_tile_op(async_gemm->op, async_gemm->args, attrs, async_gemm->span);
        }
      for (ProducerGroup& g : groups) g.late_release = g.last_use == async_at;
    }
    // Ping-pong between the two consumer warpgroups (opt-in, TL_ENABLE_WARPGROUP_PINGPONG): a loop
    // body with two (synchronous) GEMMs and work between them (attention), each GEMM split by rows
    // only, so each warpgroup's rows are its own. Named barriers make their GEMMs alternate: one
    // warpgroup's element-wise work runs while the other's GEMM has the tensor cores. Off by
    // default: on an H100 (2026-11-25) flash-attention forward ran 7% slower with it than with
    // the warpgroups in lockstep, and 20% slower (causal) when the other warpgroup was released at
    // the GEMM's issue instead of its completion (docs/PERFORMANCE.md).
    std::vector<size_t> gemm_items;
    bool rows_only = true;
    for (size_t j = 0; j < items.size(); ++j) {
      const auto* op = items[j].is_stmt() ? items[j].stmt.as<TileOpNode>() : nullptr;
      if (!op || !is_gemm_form(*op, GemmForm::kGemm)) continue;
      gemm_items.push_back(j);
      auto gp = lm.gemms.find(op);
      rows_only = rows_only && gp != lm.gemms.end() && gp->second.warpgroups.wg_m == 2 && gp->second.warpgroups.wg_n == 1;
    }
    int gemm_count = 0;
    post_order_visit(loop->body, [&](const Stmt& x) {
      if (const auto* op = x.as<TileOpNode>(); op && is_gemm_form(*op, GemmForm::kGemm)) ++gemm_count;
    });
    pingpong_ = nc == 256 && async_at == items.size() && gemm_items.size() == 2 && gemm_count == 2 && rows_only &&
                config_bool(ctx_.configs, "tl.enable_warpgroup_pingpong") &&
                !config_bool(ctx_.configs, "tl.disable_warpgroup_pingpong") &&
                !needs_block_barrier(*loop, is_producer, items, lm);
    pingpong_items_ = std::set<size_t>(gemm_items.begin(), gemm_items.end());
    // Also where the trip count depends on the block (causal attention): measured flat there
    // before the loop's instruction count fell by a third; since (2026-11-27, H100) 8-13% faster
    // than the plain schedule (docs/PERFORMANCE.md).
    ov_ = plan_overlap(items, is_producer, async_at, gemm_count, lm, nc, ctx_.configs, pingpong_, groups, S);
    after_loop_ = plan_deferred_row_sums(top, loop_at, &items, is_producer, lm, ctx_.configs);
    // Distributed kernels keep one CTA per tile: on 2 H200s (2026-11-26) the persistent form (the
    // producer thread waiting per tile, the consumers pushing) ran the fused all-gather GEMM 4%
    // and GEMM + reduce-scatter 5% slower than one CTA per tile. Kernels whose only distributed
    // operators are T.waits gating the loop's loads (the copy-engine all-gather GEMM: the data
    // arrives without the kernel's help) take the persistent form like a plain GEMM: the producer
    // thread waits per tile, the consumers never do.
    // Attention (the overlapped form) keeps one CTA per tile too: on an H100 (2026-11-26) the
    // persistent flash-attention forward ran 9% slower, on an H200 6% (docs/PERFORMANCE.md), with
    // Q copied by the consumers at the start of each tile. With Q the producer's per-tile TMA load
    // (tile_prologue.h: the producer loads the next tile's Q, K and V while the consumers finish
    // the current tile; causal attention too, plan_persistent) it is 2-3% faster than one CTA per
    // tile (H100, 2026-11-27), so TL_ENABLE_PERSISTENT_FLASH is on unless set to False.
    persistent_prologue_ = config_bool(ctx_.configs, "tl.enable_persistent_flash", true);
    if ((!has_dist_ || producer_waits_) && cluster_ <= 1 && (!ov_.on || persistent_prologue_))
      persistent_ = plan_persistent(k, top, *loop, ctx_.configs, persistent_prologue_);
    // GEMMs whose shared operands only TMA writes (the async proxy, as wgmma reads) need no
    // fence.proxy.async before their wgmma (1-4% of a 4096^3 GEMM on an H100). Last: it replaces
    // the gemm statements, which `lm` knows by address.
    pre_ = plan_prologue(k, params_, top, loop_at, *loop, items, lm, ctx_.configs, persistent_.on, persistent_prologue_,
                         cluster_, has_dist_);
    steady_fence_free_ = mark_async_proxy_gemms(top, loop_at, &items, is_producer, pre_, ov_, ctx_.configs);
    // TMA-store epilogues (not where a peer may read the output once the kernel signals; a kernel whose
    // only distributed operators are the producer's T.waits signals nothing, and its output is read
    // after the kernel like a plain GEMM's: the copy-engine all-gather GEMM keeps the plain GEMM's
    // epilogue).
    const int64_t mbar_bytes = 1024;  // the mbarriers' slot (the stage tiles after it are 1024-aligned)
    tma_store_ = has_dist_ && !producer_waits_ ? TmaStoreEpilogue()
                           : plan_tma_store_epilogue(k, top, loop_at, lm, params_, ctx_, persistent_.on,
                                                     shared_bytes_estimate(top, plan.versioned, S, mbar_bytes));
    return build(k, nc, top, loop_at, *loop, items, plan, boxes, groups, async_at != items.size());
  }

  Stmt build(const KernelLaunchNode& k, int64_t nc, const std::vector<BodyItem>& top, size_t loop_at,
             const ForNode& loop, const std::vector<BodyItem>& items, const PipelinePlan& plan,
             const std::map<size_t, TmaBoxPlan>& boxes, const std::vector<ProducerGroup>& groups, bool async) {
    const int64_t S = plan.num_stages, G = static_cast<int64_t>(groups.size());
    const Var& tid = k.thread_vars[0];
    const DataType it = loop.var.dtype();
    const int64_t P = static_cast<int64_t>(pre_.size());
    const bool tile_pre = persistent_.on && P > 0;  // the prologue loads per tile (tile_prologue.h)
    Buffer mbar("tl_mbar", DataType::UInt(64), {make_int(2 * G * S + (tile_pre ? 2 : 1) * P)}, MemScope::kShared, {},
                loop.span);
    auto bar = [&](const Expr& index) {
      return make_call(DataType::Handle(), "cuda.address_of", {make_load(mbar, {index}), make_int(3)});
    };
    auto full = [&](int64_t g, const Expr& s) { return bar(make_int(g * S, it) + s); };
    auto empty = [&](int64_t g, const Expr& s) { return bar(make_int((G + g) * S, it) + s); };
    auto pre_bar = [&](size_t p) { return bar(make_int(2 * G * S + static_cast<int64_t>(p), it)); };
    auto pre_empty = [&](size_t p) { return bar(make_int(2 * G * S + P + static_cast<int64_t>(p), it)); };
    // Iteration number over the whole kernel (the stages and phases continue from tile to tile).
    // Where the trip count depends on the tile, the iterations of the CTA's earlier tiles are a
    // running sum that each role keeps in a register (persistent_tile_loop, ws_persistent.h).
    const Expr tile_base = !persistent_.on        ? Expr()
                           : persistent_.base.defined() ? make_load(persistent_.base, {make_int(0)})
                                                        : Expr(persistent_.iter) * loop.extent;
    auto iter = [&](const Expr& kv) {
      Expr i = is_zero(loop.min) ? kv : kv - loop.min;
      return tile_base.defined() ? tile_base + i : i;
    };
    auto stage = [&](const Expr& i) { return floormod(i, make_int(S, it)); };
    auto parity = [&](const Expr& i) { return floormod(floordiv(i, make_int(S, it)), make_int(2, it)); };
    std::map<const BufferNode*, Buffer> versions;
    for (const Buffer& b : plan.versioned) {
      std::vector<Expr> shape = b.shape();
      shape.insert(shape.begin(), make_int(S));
      versions[b.get()] = Buffer(b.name(), b.dtype(), shape, b.scope(), {}, b->span);
    }

    // The prologue copies, each on its own barrier (one CTA per tile: used once, phase 0;
    // persistent: once per tile, with an empty barrier the consumers release).
    TilePrologue tp;
    if (P) {
      std::vector<TilePrologueCopy> copies;
      for (size_t p = 0; p < pre_.size(); ++p) {
        const auto* op = top[pre_[p].first].stmt.as<TileOpNode>();
        AttrMap attrs = op->attrs;
        attrs["tma"] = Attr(true);
        attrs["mbarrier"] = Attr(pre_bar(p));
        copies.push_back({make_tile_op(op->op, op->args, attrs, op->span), pre_[p].second.bytes, pre_bar(p), pre_empty(p)});
      }
      // The tiles this CTA has run so far (tiles that a paired order skips do not count).
      Expr tiles_run = !tile_pre ? Expr()
                       : persistent_.base.defined() ? make_load(persistent_.base, {make_int(1)})
                                                    : Expr(persistent_.iter);
      tp = tile_prologue_protocol(copies, tiles_run);
    }
    const StageRing ring{full, empty, iter, stage, parity};
    // Producer loop.
    Stmt producer_loop = producer_tma_loop(loop, items, groups, versions, ring, multicast_, cluster_,
                                           tile_pre ? &tp.producer : nullptr);
    int64_t trip = 0;
    if (tile_pre && !(is_const_int(loop.extent, &trip) && trip > 0))  // a tile without iterations loads
      // them all the same: its consumers wait for them
      producer_loop = make_seq({producer_loop, make_if(loop.extent <= make_int(0, it), make_seq(tp.producer))});
    else if (P && !tile_pre) {  // one CTA per tile: the prologue copies first
      std::vector<Stmt> pre = tp.producer;
      pre.push_back(producer_loop);
      producer_loop = make_seq(pre);
    }
    // Where the consumers release the prologue's buffers (persistent form): after the last
    // statement of the tile that uses them, or, in the overlapped loop where only statements up to
    // its first GEMM use them (attention's Q), before the last iteration's second GEMM: the next
    // tile's Q then loads under that GEMM and the epilogue.
    size_t release_after = loop_at;
    bool release_mid = false;
    if (tile_pre) {
      std::set<const BufferNode*> pre_bufs;
      for (const auto& pc : pre_) pre_bufs.insert(top[pc.first].stmt.as<TileOpNode>()->args[1].region.buffer.get());
      auto touches = [&](const BodyItem& b) {
        std::set<const BufferNode*> used;
        if (b.is_stmt()) collect_buffer_uses(b.stmt, &used);
        else if (b.let_var.defined()) collect_buffer_uses(make_evaluate(b.let_value), &used);
        for (const BufferNode* x : used)
          if (pre_bufs.count(x)) return true;
        return false;
      };
      for (size_t j = loop_at + 1; j < top.size(); ++j)
        if (touches(top[j])) release_after = j;
      release_mid = ov_.on && release_after == loop_at;
      for (size_t j = ov_.g1 + 1; release_mid && j < items.size(); ++j)
        if (!std::count(plan.producers.begin(), plan.producers.end(), j) && touches(items[j])) release_mid = false;
    }

    // Consumer loop.
    std::set<size_t> is_producer(plan.producers.begin(), plan.producers.end());
    Stmt consumer_loop;
    if (ov_.on) {
      consumer_loop = overlapped_consumer(ov_, loop, items, is_producer, groups, versions, ring,
                                          release_mid ? tp.release : std::vector<Stmt>{}, steady_fence_free_, cluster_);
    } else {
      consumer_loop = plain_consumer(loop, items, is_producer, groups, versions, ring, tid,
                                     pingpong_ ? &pingpong_items_ : nullptr, async, cluster_);
    }

    // Kernel body: bindings (versioned allocations), the mbarriers, then the two roles.
    std::vector<BodyItem> bindings, tile_bindings;  // the latter: lets, inside the tile loop when persistent
    // Distributed operators before the loop run with every thread before the roles split.
    std::vector<Stmt> consumer, prologue, producer_waits;
    std::set<size_t> pre_items;
    for (const auto& pc : pre_) pre_items.insert(pc.first);
    for (size_t j = 0; j < top.size(); ++j) {
      if (top[j].is_stmt()) {
        if (pre_items.count(j)) continue;  // made by the producer
        if (j == loop_at)  // the prologue copies land before the loop starts
          consumer.insert(consumer.end(), tp.wait.begin(), tp.wait.end());
        if (j < loop_at && has_dist_op(top[j].stmt)) (producer_waits_ ? producer_waits : prologue).push_back(top[j].stmt);
        else if (auto ts = tma_store_.rewritten.find(j); ts != tma_store_.rewritten.end()) consumer.push_back(ts->second);
        else consumer.push_back(j == loop_at ? consumer_loop : top[j].stmt);
        if (j == loop_at) consumer.insert(consumer.end(), after_loop_.begin(), after_loop_.end());
        if (j == release_after && !release_mid) consumer.insert(consumer.end(), tp.release.begin(), tp.release.end());
        continue;
      }
      BodyItem b = top[j];
      if (b.alloc.defined())
        if (auto v = versions.find(b.alloc.get()); v != versions.end()) b.alloc = v->second;
      (persistent_.on && b.let_var.defined() ? tile_bindings : bindings).push_back(b);
    }
    if (persistent_.base.defined()) {
      BodyItem b;
      b.alloc = persistent_.base;
      b.span = loop.span;
      bindings.push_back(b);
    }
    bindings.insert(bindings.end(), tma_store_.allocs.begin(), tma_store_.allocs.end());
    BodyItem mb;
    mb.alloc = mbar;
    mb.span = loop.span;
    bindings.push_back(mb);
    std::vector<Stmt> init;
    for (int64_t g = 0; g < G; ++g) {
      Var si("s", it);
      init.push_back(make_for(si, make_int(0, it), make_int(S, it), ForKind::kUnrolled,
                              make_seq({builtin("cuda.mbarrier_init", {full(g, si), make_int(1)}),
                                        builtin("cuda.mbarrier_init", {empty(g, si), make_int(groups[g].multicast ? nc / 32 * cluster_ : nc / 32)})})));
    }
    for (size_t p = 0; p < pre_.size(); ++p) {
      init.push_back(builtin("cuda.mbarrier_init", {pre_bar(p), make_int(1)}));
      if (tile_pre) init.push_back(builtin("cuda.mbarrier_init", {pre_empty(p), make_int(nc / 32)}));
    }
    init.push_back(builtin("cuda.fence_barrier_init", {}));
    // Register budgets: the producer warpgroup gives registers to the consumers.
    std::vector<Stmt> pro, con;
    if (nc >= 256) {
      const int64_t p = nc <= 256 ? 40 : 24;
      const int64_t c = std::min<int64_t>(240, (65536 - kProducerThreads * p) / nc / 8 * 8);
      pro.push_back(builtin("cuda.setmaxnreg_dec", {make_int(p)}));
      con.push_back(builtin("cuda.setmaxnreg_inc", {make_int(c)}));
    }
    // The producer's T.waits (producer_waits_): per tile, before its loads; after them the thread
    // fences the async proxy (tl::dist::wait<kThread>) so that TMA sees what arrived. Persistent: a
    // wait for a flag element this thread has already seen satisfied is skipped (cache_producer_wait,
    // ws_distributed.h; off with TL_DISABLE_WAIT_CACHE).
    ProducerWaitCache wait_cache;
    if (!producer_waits.empty()) {
      if (persistent_.on && !config_bool(ctx_.configs, "tl.disable_wait_cache"))
        for (Stmt& w : producer_waits) w = cache_producer_wait(w, &wait_cache);
      producer_waits.push_back(producer_loop);
      producer_loop = make_seq(producer_waits);
    }
    Stmt producer_role = persistent_tile_loop(persistent_, tile_bindings, producer_loop, loop.span, true);
    if (!wait_cache.allocs.empty()) {
      std::vector<BodyItem> role = wait_cache.allocs;
      BodyItem body;
      body.stmt = make_seq({make_seq(wait_cache.init), producer_role});
      body.span = loop.span;
      role.push_back(body);
      producer_role = rebuild_body(role);
    }
    pro.push_back(make_if(eq(tid, make_int(nc, tid.dtype())), producer_role));
    // Ping-pong: warpgroup 0 goes first (warpgroup 1 lets it); at the end it takes that last
    // arrival of warpgroup 1 so that both barriers end balanced.
    Expr wg1 = tid >= make_int(128, tid.dtype());
    if (pingpong_) con.push_back(make_if(wg1, builtin("cuda.named_barrier_arrive", {make_int(2), make_int(256)})));
    con.push_back(persistent_tile_loop(persistent_, tile_bindings, make_seq(consumer), loop.span, false));
    if (tma_store_.drain.defined()) con.push_back(tma_store_.drain);  // the last stores read their tiles
    if (pingpong_)
      con.push_back(make_if(tid < make_int(128, tid.dtype()), builtin("cuda.named_barrier_sync", {make_int(2), make_int(256)})));
    Stmt roles = make_if(tid < make_int(nc, tid.dtype()),
                         make_attr("cuda.warp_role", Attr("consumer"), make_seq(con)),
                         make_attr("cuda.warp_role", Attr("producer"), make_seq(pro)));
    // With multicast, the CTAs of a cluster write each other's shared memory and arrive on each
    // other's mbarriers: a cluster barrier after the initialization, and one before any CTA exits.
    const bool cluster_sync = !multicast_.empty();
    std::vector<Stmt> tail = {make_if(eq(tid, make_int(0, tid.dtype())), make_seq(init)),
                              builtin(cluster_sync ? "tl.cluster_sync" : "cuda.sync_all", {})};
    tail.insert(tail.end(), prologue.begin(), prologue.end());
    tail.push_back(make_attr("cuda.warp_specialize", Attr(nc), roles));
    if (cluster_sync) tail.push_back(builtin("tl.cluster_sync", {}));
    BodyItem tail_item;
    tail_item.stmt = make_seq(tail);
    tail_item.span = loop.span;
    bindings.push_back(tail_item);
    return rebuild_body(bindings);
  }

 public:
  std::vector<Param> params_;

 private:
  // What the planning steps decided for the kernel at hand (ws_*.h).
  bool has_dist_ = false;
  bool producer_waits_ = false;  // the kernel's T.waits go to the producer thread (waits_gate_producer_only)
  OverlapPlan ov_;                      // FA3's overlap of the first GEMM group and the second GEMM (ws_overlap.h)
  std::set<size_t> steady_fence_free_;  // item indices: see mark_async_proxy_gemms (ws_proxy_fence.h)
  std::vector<Stmt> after_loop_;        // the deferred row sums' T.finalize_reducer (ws_deferred_row_sum.h)
  std::vector<PrologueCopy> pre_;       // top-level items the producer copies before its loop (ws_prologue.h)
  int64_t cluster_ = 1;                 // CTAs per cluster (T.Kernel cluster_dims)
  std::set<size_t> multicast_;          // loop body items: producer copies multicast across the cluster (ws_tma_copies.h)

  // Whether the consumer part of the loop body may need a barrier of all consumer threads (which
  // ping-pong would deadlock: the warpgroups are half an iteration apart): it writes shared memory,
  // or reduces a fragment across warps (tl::allreduce through shared memory).
  static bool needs_block_barrier(const ForNode& loop, const std::set<size_t>& producers,
                                  const std::vector<BodyItem>& items, const LayoutMap& lm) {
    bool hit = false;
    for (size_t j = 0; j < items.size() && !hit; ++j) {
      if (producers.count(j) || !items[j].is_stmt()) continue;
      post_order_visit(items[j].stmt, [&](const Stmt& x) {
        if (const auto* st = x.as<BufferStoreNode>(); st && st->buffer.scope() == MemScope::kShared) hit = true;
        const auto* op = x.as<TileOpNode>();
        if (!op || is_gemm_form(*op, GemmForm::kGemm)) return;
        for (const TileArg& a : op->args)
          if (a.is_region() && a.region.buffer.scope() == MemScope::kShared) hit = true;
        if (is_tile_op(*op, TileOpKind::kReduce) && op->args.size() >= 2 && op->args[0].is_region()) {
          auto f = lm.fragments.find(op->args[0].region.buffer);
          if (f == lm.fragments.end()) {
            hit = true;
            return;
          }
          std::vector<ThreadGroup> groups;
          f->second.reduce(static_cast<int>(attr_int(op->attrs, "dim", 0)), &groups);
          for (const ThreadGroup& g : groups)
            if (g.extent > 1 && !(g.extent * g.stride <= 32 && 32 % (g.extent * g.stride) == 0)) hit = true;
        }
      });
    }
    (void)loop;
    return hit;
  }

  PersistentPlan persistent_;  // the persistent tile schedule (ws_persistent.h)
  TmaStoreEpilogue tma_store_;  // the epilogue copies that become TMA stores (ws_tma_store.h)
  bool persistent_prologue_ = false;  // TL_ENABLE_PERSISTENT_FLASH: see tile_prologue.h
  bool pingpong_ = false;
  std::set<size_t> pingpong_items_;  // the loop body's GEMM items
  const PassContext& ctx_;
};

}  // namespace

PrimFunc warp_specialize(const PrimFunc& f, const PassContext& ctx) {
  if (ctx.target.arch != "sm_90a" || config_bool(ctx.configs, "tl.disable_warp_specialized") ||
      config_bool(ctx.configs, "tl.disable_tma_lower") || config_bool(ctx.configs, "tl.disable_wgmma"))
    return f;
  Specializer sp(ctx);
  sp.params_ = f.params();
  return f.with_body(sp.mutate(f.body()));
}

TL_REGISTER_PASS("warp_specialize", warp_specialize);

}  // namespace tl
