// The ascend target's pass pipeline.
#pragma once

#include "transform/pass.h"

namespace tl {

// Lowers a frontend PrimFunc to the tile-instruction IR the Ascend simulator executes: Expert-mode
// checks, scope inference, T.Pipelined multi-versioning, gemm_v0 expansion, core placement, memory
// planning, automatic intra-core sync (TL_ASCEND_AUTO_SYNC / enable_auto_sync / T.Pipelined).
// Records every stage in ctx.stages.
PrimFunc lower_ascend(const PrimFunc& f, PassContext& ctx);

}  // namespace tl
