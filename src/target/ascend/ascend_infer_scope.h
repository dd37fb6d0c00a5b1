// Ascend scope inference: gives every target-neutral buffer (T.alloc_shared, T.alloc_fragment,
// T.alloc_L0) an Ascend memory from how the kernel uses it.
//   cube uses:   operand of gemm/gemm_v0/mma, a copy whose other end is L1/L0A/L0B/L0C;
//   vector uses: T.tile.* / T.exp / fill / reduce / ... operands, element accesses (T.Parallel,
//                scalar code), a copy whose other end is UB.
//   only cube  -> shared: L1; fragment / L0: L0A / L0B / L0C by gemm operand position (L0C when
//                 no gemm uses it);
//   only vector, or neither -> UB (a T.alloc_L0 buffer without gemm use stays L0C);
//   both       -> with TL_ASCEND_AUTO_CV_COMBINE (target "npuir"): the cube memory (gemm C -> L0C,
//                 gemm A/B or an L1 copy partner -> L1); ascend_cv_split then gives the vector uses a
//                 UB copy. Without it: SyntaxError naming the buffer and one use of each kind.
// Buffers already in L1/UB/L0A/L0B/L0C, GM and scalar locals are left alone.
#pragma once

#include "transform/pass.h"

namespace tl {

// True when the Developer-mode cube/vector split is on: TL_ASCEND_AUTO_CV_COMBINE or target "npuir".
bool ascend_cv_combine_enabled(const PassContext& ctx);

PrimFunc ascend_infer_scope(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
