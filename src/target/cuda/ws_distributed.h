// Distributed operators in a kernel that warp_specialize (warp_specialize.h) specializes.
//
// Distributed operators (T.wait, remote T.copy, ...) before the pipelined loop run with every thread
// before the roles split; inside the loop they would need the producer's cooperation, which the
// schedule does not give (the kernel is not specialized). Where the only ones are T.waits that gate
// what the producer loads (the copy-engine all-gather GEMM, docs/DISTRIBUTED.md), the producer
// thread alone runs them, per tile when persistent, and the consumers never wait.
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

}  // namespace tl
