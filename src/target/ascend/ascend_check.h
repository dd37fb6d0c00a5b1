// Checks a kernel against the Ascend machine before anything is rewritten (Expert-mode rules):
// legal copy pairs and their memories, operand memories of gemm_v0/mma/T.tile.*, constant event ids
// in range, flags naming pipes of one core and of the T.Scope they sit in, statements inside a
// T.Scope that use the other core's memories, and the modes this target does not implement.
// Every failure is a SyntaxError / NotImplemented naming the op, the buffers and the source line.
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc ascend_check(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
