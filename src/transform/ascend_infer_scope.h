// Ascend scope inference: gives every target-neutral buffer an Ascend memory.
//   T.alloc_shared  -> L1 when it feeds the cube (a gemm/gemm_v0/mma operand, or a copy whose other
//                      end is L0A/L0B), else UB;
//   T.alloc_fragment / T.alloc_L0 -> L0A / L0B / L0C by position as gemm operand A / B / C
//                      (L0C when unused by any gemm).
// Buffers already in L1/UB/L0A/L0B/L0C, GM and scalar locals are left alone.
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc ascend_infer_scope(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
