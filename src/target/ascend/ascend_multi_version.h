// T.Pipelined(n, num_stages=s) on the ascend target. The NPU's pipes already run ahead of each
// other from their queues, so software pipelining needs no prologue/epilogue here: it is enough to
// give the buffers that the loop's GM->L1 / GM->UB copies fill `s` versions (a leading stage
// dimension indexed (k - min) % s), so the copy of iteration k+1 can run while iteration k computes,
// and to let ascend_insert_sync order the versions with rotating event ids (the kernel gets the
// attribute "ascend.pipelined", which turns the sync pass on). The loop becomes a serial loop.
// Buffers also used outside the loop keep one version. Nested T.Pipelined is an error; a loop
// body with both cube and vector work (an inter-core pipeline) is not implemented.
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc ascend_multi_version(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
