#include "target/cuda/pipeline.h"

#include <exception>

#include "ir/error.h"
#include "ir/functor.h"
#include "target/cuda/expand_tile_ops.h"
#include "target/cuda/lower_tile_ops_cuda.h"
#include "target/cuda/warp_specialize.h"
#include "transform/bound_parallel_extents.h"
#include "transform/config_index_bitwidth.h"
#include "transform/inject_pipeline.h"
#include "transform/insert_thread_sync.h"
#include "transform/legalize_safe_memory_access.h"
#include "transform/pass_config.h"
#include "transform/plan_shared_memory.h"
#include "transform/reroll_loops.h"

namespace tl {

namespace {

// Thread-block clusters (T.Kernel cluster_dims) exist from sm_90 on.
void check_clusters(const PrimFunc& f, const PassContext& ctx) {
  if (ctx.target.arch.rfind("sm_90", 0) == 0) return;
  post_order_visit(f.body(), [&](const Stmt& s) {
    const auto* k = s.as<KernelLaunchNode>();
    if (k && attr_int(k->attrs, "cluster_dims", 1) > 1)
      throw_error<NotImplemented>(k->span.prefix(), "thread-block clusters (cluster_dims=", attr_int(k->attrs, "cluster_dims", 1),
                                  ") need sm_90 or later; the target is ", ctx.target.arch,
                                  ": drop cluster_dims, or compile for \"cuda -arch=sm_90a\"");
  });
}

PrimFunc lower_cuda_once(const PrimFunc& f, PassContext& ctx) {
  check_clusters(f, ctx);
  PassRunner r(f, ctx);
  r.run("bound_parallel_extents", bound_parallel_extents);  // T.Parallel(T.min(n, 512)): 512 + guard
  r.run("config_index_bitwidth", config_index_bitwidth);  // int64 where indices can exceed int32
  r.run("cuda.expand_tile_ops", expand_cuda_tile_ops);
  r.run("legalize_safe_memory_access", legalize_safe_memory_access);
  r.run("warp_specialize", warp_specialize);  // sm_90a: TMA producer warpgroup + mbarriers
  r.run("inject_pipeline", inject_pipeline);
  r.run("cuda.lower_tile_ops", lower_cuda_tile_ops);
  r.run("plan_shared_memory", plan_shared_memory);
  r.run("insert_thread_sync", insert_thread_sync);
  r.run("reroll_loops", reroll_loops);
  return r.func();
}

}  // namespace

PrimFunc lower_cuda(const PrimFunc& f, PassContext& ctx) {
  try {
    return lower_cuda_once(f, ctx);
  } catch (const ResourceError&) {
    std::exception_ptr first = std::current_exception();
    // When shared memory does not fit, simpler forms are tried in turn before giving up:
    //  - the register-store epilogue: the TMA-store epilogue's staging buffers are budgeted
    //    (ws_tma_store.h), but should the plan still not fit, the register store comes first;
    //  - the one-tile-per-block form: a persistent warp-specialized kernel keeps every shared buffer
    //    live across its tile loop (the producer fills the next tile's stages while the consumers
    //    finish this one); without it, epilogue buffers may reuse the stages' bytes (TileLang's MLA
    //    decode needs it: 290 KiB persistent, 224 KiB not); with the TMA store, then without.
    std::vector<std::vector<const char*>> fallbacks;
    const bool tma_store = ctx.target.arch == "sm_90a" && !config_bool(ctx.configs, "tl.disable_tma_store");
    const bool persistent = !config_bool(ctx.configs, "tl.disable_persistent");
    if (tma_store) fallbacks.push_back({"tl.disable_tma_store"});
    if (persistent) fallbacks.push_back({"tl.disable_persistent"});
    if (tma_store && persistent) fallbacks.push_back({"tl.disable_persistent", "tl.disable_tma_store"});
    for (const auto& keys : fallbacks) {
      PassContext retry = ctx;
      for (const char* key : keys) retry.configs[key] = Attr(true);
      retry.stages.clear();
      try {
        PrimFunc out = lower_cuda_once(f, retry);
        ctx.stages = std::move(retry.stages);
        return out;
      } catch (const ResourceError&) {
      }
    }
    std::rethrow_exception(first);  // no form fits: the first form's report
  }
}

}  // namespace tl
