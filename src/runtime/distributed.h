// The process-wide context of distributed kernels (T.Scale("device"), docs/DISTRIBUTED.md):
// this process's rank, the world size and where each rank's symmetric heap is mapped in this
// process. python/tilelang/distributed sets it after creating the heaps; cpu and cuda kernel
// modules copy it into their `tl_dist_ctx` global (include/tl/{cpu,cuda}/dist.h, same layout)
// before a launch whenever it changed.
#pragma once

#include <cstdint>
#include <string>

namespace tl {

constexpr int kDistMaxRanks = 16;
constexpr int kDistMaxBlocks = 4096;
// Bytes at the start of each heap that T.barrier's counters use (arrivals, then generations).
constexpr uint64_t kDistCtrlBytes = 2 * 8 * kDistMaxBlocks;

struct DistContext {
  int32_t rank = 0;
  int32_t world = 0;  // 0: not initialised
  uint64_t heap_size = 0;
  uint64_t timeout_ns = 0;
  uint64_t ctrl_offset = 0;
  uint64_t bases[kDistMaxRanks] = {0};
};
static_assert(sizeof(DistContext) == 32 + 8 * kDistMaxRanks, "DistContext must match TLDistCtx");

// Validates and installs the context (world 0 clears it). Throws ValueError on a malformed one.
void dist_set_context(const DistContext& c);
// The current context and its generation (incremented by every dist_set_context).
DistContext dist_context(uint64_t* generation = nullptr);
// The context a kernel named `kernel` is about to use; RuntimeError when none is installed.
DistContext dist_context_for_launch(const std::string& kernel, uint64_t* generation);

}  // namespace tl
