#include "target/ascend/pipeline.h"

#include "target/ascend/ascend_check.h"
#include "target/ascend/ascend_cross_sync.h"
#include "target/ascend/ascend_cv_split.h"
#include "target/ascend/ascend_expand_gemm.h"
#include "target/ascend/ascend_infer_scope.h"
#include "target/ascend/ascend_insert_sync.h"
#include "target/ascend/ascend_multi_version.h"
#include "target/ascend/ascend_npuir_kernel.h"
#include "target/ascend/ascend_place_cores.h"
#include "target/ascend/ascend_plan_memory.h"
#include "target/ascend/ascend_vectorize_parallel.h"
#include "target/ascend/ascend_vid_reduction.h"
#include "transform/config_index_bitwidth.h"

namespace tl {

PrimFunc lower_ascend(const PrimFunc& f, PassContext& ctx) {
  if (ctx.target.npuir) {
    // TileLang-Ascend's NPUIR route: the compiler splits Developer kernels and inserts every sync.
    for (const char* k : {"tl.ascend_auto_cv_combine", "tl.ascend_auto_cross_core_sync", "tl.ascend_auto_sync"})
      ctx.configs[k] = Attr(true);
  }
  PassRunner r(f, ctx);
  r.run("config_index_bitwidth", config_index_bitwidth)  // int64 where indices can exceed int32
      .run("ascend_npuir_kernel", ascend_npuir_kernel)   // "npuir": T.Kernel(n) without is_npu -> is_npu
      .run("ascend_check", ascend_check)                 // Expert-mode legality, unsupported modes
      .run("ascend_infer_scope", ascend_infer_scope)  // shared/fragment/L0 -> L1/UB/L0A/L0B/L0C
      .run("ascend_cv_split", ascend_cv_split)        // Developer mode: UB twins, L0C->UB / UB->L1 via GM workspaces
      .run("ascend_vid_reduction", ascend_vid_reduction)  // threads=2: each vector core takes half the rows
      .run("ascend_check_scoped", ascend_check)       // the same rules on the inferred memories
      .run("ascend_vectorize_parallel", ascend_vectorize_parallel)  // T.Parallel on UB -> T.tile ops
      .run("ascend_multi_version", ascend_multi_version)  // T.Pipelined: stage buffers, serial loop
      .run("ascend_expand_gemm", ascend_expand_gemm)      // gemm_v0 / gemm -> copies, mma, flags
      .run("ascend_place_cores", ascend_place_cores)      // unscoped statements -> T.Scope("C"/"V")
      .run("ascend_cross_sync", ascend_cross_sync)        // cross-core flags around cube<->vector GM data
      .run("ascend_plan_memory", ascend_plan_memory)      // addresses, capacity (ResourceError)
      .run("ascend_insert_sync", ascend_insert_sync);     // set_flag/wait_flag/pipe_barrier when enabled
  return r.func();
}

}  // namespace tl
