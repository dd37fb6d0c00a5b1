// Live intervals of allocated buffers over a statement tree: the one liveness analysis of the
// compiler, used by cuda's shared-memory planner (plan_shared_memory.cc) and ascend's on-chip
// memory planner (target/ascend/ascend_liveness.cc, for ascend_plan_memory).
//
// Statements get positions in program order. A buffer is used by a load in any expression, by a
// store, and by a tile op's memory effects (TileOp::effects; annotations touch nothing); it lives
// from its first to its last use. A use inside a loop that does not also contain the buffer's
// allocation keeps the buffer alive for that whole loop (its value may be carried to the next
// iteration), so two buffers may share memory only when their intervals are disjoint. The branches
// of a region that runs them at the same time (cuda's warp-specialized producer and consumers:
// an AttrStmt `concurrent_attr` over an IfThenElse, outside loops) are walked from one position,
// so what they use overlaps.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/stmt.h"

namespace tl {

struct LiveInterval {
  Buffer buffer;
  int64_t first = 0, last = 0;  // inclusive positions; an unused buffer: its allocation's position
  int order = 0;                // allocation order among the tracked buffers
  bool used = false;
};

struct LivenessOptions {
  // Which allocations to track (default: all).
  std::function<bool(const Buffer&)> track;
  // The AttrStmt key whose IfThenElse body runs both branches concurrently ("" for none).
  std::string concurrent_attr;
};

// One entry per tracked allocation, in allocation order.
std::vector<LiveInterval> buffer_live_intervals(const Stmt& body, const LivenessOptions& opts = {});

}  // namespace tl
