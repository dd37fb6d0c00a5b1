// cuda.lower_tile_ops: from tile IR to thread-level IR, per kernel.
//
// Runs layout inference (layout/infer_layout.h) on each T.Kernel, then rewrites its body:
// fragments become per-thread register arrays (scope local, one element per register of their
// layout), shared tiles become flat arrays indexed through their layout (row-major or swizzled),
// T.Parallel nests are spread over the threads by their layouts, and every tile op is replaced by
// its cuda lowering (src/op/cuda_*.cc). Reduction workspaces are allocated in shared memory at the
// top of the kernel. T.Pipelined loops left by inject_pipeline and T.Persistent loops become serial
// loops. The result is what plan_shared_memory, insert_thread_sync and the code generator consume.
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc lower_cuda_tile_ops(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
