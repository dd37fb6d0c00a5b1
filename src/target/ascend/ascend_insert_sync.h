// TL_ASCEND_AUTO_SYNC (or T.func_attr({"enable_auto_sync": True}), or a T.Pipelined loop):
// inserts the intra-core set_flag / wait_flag / pipe_barrier a kernel needs to pass the simulator's
// strict checker, and as few as it can:
//   - the analysis (ascend_sync_analysis.h) mirrors the checker's happens-before rules, counting the
//     syncs already present (the user's, T.gemm_v0's), so only missing orderings are added;
//   - a producer/consumer pair on different pipes gets an adjacent set/wait hoisted out of every
//     loop the producer is not in; two dependent vector instructions get pipe_barrier(v);
//   - a dependence carried by a loop gets a pre-armed flag (set before the loop, waited before the
//     consumer, set after the producer, drained after the loop) instead of a barrier, with event ids
//     rotating by iteration (`base + k % d`) when the buffers are ping-ponged `k % d`;
//   - event ids never collide with the ids of existing flags on the same pipe pair (the user's,
//     gemm_v0's 0 and 1); reusing an id before its previous wait is ordered is fixed by a back edge.
// Analysis and insertion repeat until the analysis finds nothing missing. The number of sync ops
// inserted is the function attribute "ascend.syncs_inserted".
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc ascend_insert_sync(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
