// The cpu target's pass pipeline.
#pragma once

#include "transform/pass.h"

namespace tl {

// Lowers a frontend PrimFunc to loops and scalar code ready for codegen_cpu: verify, simplify,
// tile ops to loops, T.Pipelined/T.Persistent as plain loops (documented in docs/TARGET_CPU.md),
// vectorization hints, buffer flattening. Records every stage in ctx.stages.
PrimFunc lower_cpu(const PrimFunc& f, PassContext& ctx);

}  // namespace tl
