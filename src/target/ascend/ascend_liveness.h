// Liveness of the on-chip buffers of an ascend kernel (analysis for ascend_plan_memory): the
// shared analysis of transform/buffer_liveness.h plus the memory, footprint and pinned address.
// Statements get positions in program order; a buffer lives from its first to its last use. A use
// inside a loop that does not also contain the buffer's allocation keeps the buffer alive for the
// whole loop (its value may be carried to the next iteration), so buffers only share memory when
// their lifetimes are disjoint on every path.
#pragma once

#include <vector>

#include "ir/stmt.h"
#include "sim/machine_model.h"

namespace tl {

struct BufferLife {
  Buffer buffer;
  sim::Mem mem = sim::Mem::kUB;
  int64_t bytes = 0;       // footprint (fractal-padded, aligned)
  int64_t first = 0, last = 0;
  int64_t pinned = -1;     // T.annotate_address offset, or -1
  int order = 0;           // allocation order
  bool used = true;        // false: allocated but never accessed
};

std::vector<BufferLife> analyze_ascend_liveness(const PrimFunc& f, const sim::MachineModel& model);

}  // namespace tl
