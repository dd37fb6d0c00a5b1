// The two roles' loops over warp_specialize's stage ring (warp_specialize.h): the producer thread's
// loop of TMA loads and the consumers' loop in the plain schedule (the overlapped one is ws_overlap.h).
#pragma once

#include <map>
#include <set>
#include <vector>

#include "ir/stmt.h"
#include "target/cuda/warp_specialize_common.h"
#include "transform/plan_pipeline.h"

namespace tl {

// The producer's loop over the iterations of `loop` (body `items`): per group of `groups`, wait for
// the consumers' release of the stage (parity ^ 1), expect the group's bytes on its full barrier and
// issue its copies as TMA loads on that barrier into the stage (`versions`: the multi-versioned
// buffers), multicast to the `cluster` CTAs where `multicast` holds the copy. `tile_prologue`, where
// given (the persistent form's per-tile prologue loads, tile_prologue.h), runs in the first iteration
// after the first group's loads (attention: Q after the first K), so that those, whose stage the
// consumers freed earlier, need not wait for the consumers' release of Q at the end of the previous
// tile.
Stmt producer_tma_loop(const ForNode& loop, const std::vector<BodyItem>& items,
                       const std::vector<ProducerGroup>& groups, const std::map<const BufferNode*, Buffer>& versions,
                       const StageRing& ring, const std::set<size_t>& multicast, int64_t cluster,
                       const std::vector<Stmt>* tile_prologue);

// The consumers' loop in the plain schedule: the loop body `items` without the producer copies
// (`is_producer`), each group's full-barrier wait before its first use and its release after its last
// (a group last used by a GEMM left in flight, `async`, releases the previous iteration's stage, and
// the last stage after the loop). With `pingpong_items` (warpgroup ping-pong; `tid`: the thread
// index), warpgroup w waits on named barrier 2 + w before each of those GEMMs and lets the other one
// go (arrives on 3 - w) after it.
Stmt plain_consumer(const ForNode& loop, const std::vector<BodyItem>& items, const std::set<size_t>& is_producer,
                    const std::vector<ProducerGroup>& groups, const std::map<const BufferNode*, Buffer>& versions,
                    const StageRing& ring, const Var& tid, const std::set<size_t>* pingpong_items, bool async,
                    int64_t cluster);

}  // namespace tl
