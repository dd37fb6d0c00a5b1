// The cuda target's pass pipeline.
#pragma once

#include "transform/pass.h"

namespace tl {

// Lowers a frontend PrimFunc to thread-level cuda IR ready for codegen_cuda:
//   cuda.expand_tile_ops  op checks; ops without a cuda lowering -> their loop form
//   legalize_safe_memory_access  guards for global accesses in T.Parallel tails (as on cpu)
//   inject_pipeline       T.Pipelined -> multi-versioned shared buffers, cp.async stages
//   cuda.lower_tile_ops   layout inference, fragments -> registers, tile ops -> device code
//   plan_shared_memory    one dynamic shared-memory block, liveness-based reuse, capacity check
//   insert_thread_sync    __syncthreads where threads share data through shared memory
// Records every stage in ctx.stages (PassRunner verifies each output).
PrimFunc lower_cuda(const PrimFunc& f, PassContext& ctx);

}  // namespace tl
