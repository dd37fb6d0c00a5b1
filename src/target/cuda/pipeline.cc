#include "target/cuda/pipeline.h"

#include "target/cuda/expand_tile_ops.h"
#include "target/cuda/lower_tile_ops_cuda.h"
#include "transform/config_index_bitwidth.h"
#include "transform/inject_pipeline.h"
#include "transform/legalize_safe_memory_access.h"
#include "transform/insert_thread_sync.h"
#include "transform/plan_shared_memory.h"
#include "transform/reroll_loops.h"
#include "transform/warp_specialize.h"

namespace tl {

PrimFunc lower_cuda(const PrimFunc& f, PassContext& ctx) {
  PassRunner r(f, ctx);
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

}  // namespace tl
