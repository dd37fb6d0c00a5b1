// The cpu target's own lowerings of tile ops (the hook of lower_tile_ops).
#pragma once

#include "op/gemm.h"
#include "op/tile_op.h"

namespace tl {

// T.gemm (and gemm_v0 / mma) with compile-time M, N, K and operands contiguous along their last
// dimension becomes one call to the header GEMM of include/tl/cpu/gemm.h:
//   evaluate tl.cpu.gemm(M, N, K, trans_A, trans_B, &A[origin], lda, &B[origin], ldb,
//                        &C[origin], ldc, clear_accum)
// (addresses are tl.address_of(load); leading dimensions in elements, int64). Other ops, and GEMMs
// with run-time shapes, return an undefined Stmt and take the op's loop form.
Stmt lower_tile_op_cpu(const TileOpNode& op, const LowerContext& ctx);

// The call above for checked operands, or an undefined Stmt when they do not qualify.
Stmt lower_gemm_cpu_call(const GemmOperands& g, const Span& span);

}  // namespace tl
