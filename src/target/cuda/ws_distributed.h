// Distributed operators in a kernel that warp_specialize (warp_specialize.h) specializes.
//
// Distributed operators (T.wait, remote T.copy, ...) before the pipelined loop run with every thread
// before the roles split; inside the loop they would need the producer's cooperation, which the
// schedule does not give (the kernel is not specialized). Where the only ones are T.waits that gate
// what the producer loads (the copy-engine all-gather GEMM, docs/DISTRIBUTED.md), the producer
// thread alone runs them, per tile when persistent (skipping those it has already seen satisfied:
// cache_producer_wait), and the consumers never wait.
#pragma once

#include <vector>

#include "ir/stmt.h"
#include "transform/plan_pipeline.h"

namespace tl {

// Whether `s` holds a distributed operator: a tile op dist.* (src/op/distributed.cc) or the
// tl.dist.* builtin it lowers to (cuda.expand_tile_ops may have lowered it already).
bool has_dist_op(const Stmt& s);

// Whether the kernel's distributed operators are only T.waits at the top level (`top`, the pipelined
// loop `loop` at `loop_at`) before the loop and nothing but the loop's producer copies reads global
// memory: then the waits only gate what the producer loads, and the producer thread alone runs them
// (per tile when persistent). What the consumers read arrives through the stages' mbarriers, which the
// producer arrives on after its wait (release / acquire through the mbarrier orders the peer's data
// before their reads).
bool waits_gate_producer_only(const std::vector<BodyItem>& top, size_t loop_at, const ForNode& loop);

// The producer thread's record of the T.waits it has already seen satisfied, in a persistent kernel
// (one CTA loops over tiles; the producer runs the waits before each tile's loads). A T.wait(flag[i],
// v, cmp="ge") that this thread already passed for the same flag element i with a value v0 >= v
// (compared as the flag's type) needs neither the poll nor the proxy fence again:
//   - the flag still compares true, provided flags waited on with "ge" do not decrease while the
//     kernel runs (the documented use: counters and epochs that only grow; CopyEngineAllGather's
//     flags; flags reset only between kernels, which starts a fresh record);
//   - what the peer (or copy engine) wrote before setting the flag is still visible to this thread:
//     the earlier acquire load orders every later access of the thread after it, and the
//     fence.proxy.async that followed it orders every later async-proxy access of the thread (the
//     tile's TMA loads), not just the next one.
// So the cached form polls only for the first tile of each flag element (per CTA); a tile that needs
// an element not seen yet, or a higher value, polls as before. Each T.wait statement has its own
// record: the flat index of the element last seen (-1: none) and the value it was seen with, two
// registers of the producer thread, kept across the tile loop. Off with TL_DISABLE_WAIT_CACHE.
struct ProducerWaitCache {
  std::vector<BodyItem> allocs;  // the records' variables: allocate in the producer role, outside the tile loop
  std::vector<Stmt> init;        // their initial values (no element seen)
};
// `wait` (a T.wait: tile op dist.wait or its lowered tl.dist.wait call) with cmp "ge" becomes
//   if (seen_at != i || T(v) > seen) { wait; seen_at = i; seen = T(v); }
// with its record added to `cache`; any other statement comes back unchanged.
Stmt cache_producer_wait(const Stmt& wait, ProducerWaitCache* cache);

}  // namespace tl
