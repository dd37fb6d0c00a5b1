// Target "npuir" (TileLang-Ascend's NPUIR route) compiles every kernel for the NPU, so its programs
// write `with T.Kernel(n) as cid:` without is_npu=True. This pass, run only for "npuir", marks such a
// kernel is_npu, as the frontend builds `T.Kernel(n, is_npu=True) as cid` (grid [n, 2] with a vid the
// body does not use, which ascend_vid_reduction then handles), when it has one grid extent and its body uses no thread variable; anything else stays
// as written and ascend_check reports it.
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc ascend_npuir_kernel(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
