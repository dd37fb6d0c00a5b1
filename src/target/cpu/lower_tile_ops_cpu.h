// The cpu target's own lowerings of tile ops (the hook of lower_tile_ops).
#pragma once

#include "ir/tile_op.h"
#include "op/gemm.h"

namespace tl {

// T.gemm (and gemm_v0 / mma) with compile-time M, N, K and operands contiguous along their last
// dimension becomes one call to the header GEMM of include/tl/cpu/gemm.h:
//   evaluate tl.cpu.gemm(M, N, K, trans_A, trans_B, &A[origin], lda, &B[origin], ldb,
//                        &C[origin], ldc, clear_accum)
// (addresses are tl.address_of(load); leading dimensions in elements, int64). Innermost-dimension
// reductions and scans become row calls (below). Other ops, and those that do not qualify, return
// an undefined Stmt and take the op's loop form.
Stmt lower_tile_op_cpu(const TileOpNode& op, const LowerContext& ctx);

// The call above for checked operands, or an undefined Stmt when they do not qualify.
Stmt lower_gemm_cpu_call(const GemmOperands& g, const Span& span);

// T.reduce_* over the innermost dimension of a float32/float16/bfloat16/float64 tile whose rows are
// contiguous, into a float32 or float64 accumulator: per output element (serial loops over the other
// dimensions)
//   dst[...] = cast(tl.cpu.reduce_row("sum"|"max"|"min"|"abssum"|"absmax", &src[..., 0], n, init))
// where init is the kind's identity, or dst's old value with clear=false; include/tl/cpu/reduce.h
// vectorizes the row. A 2-D source into a contiguous dst of the accumulator dtype takes one call
//   tl.cpu.reduce_rows(kind, &src[0, 0], row stride, n, rows, &dst[0], clear)
// instead (the same values; the header folds the totals of a vector's width of rows together).
// Otherwise an undefined Stmt (the loop form).
Stmt lower_reduce_cpu_call(const TileOpNode& op);

// T.cumsum over the innermost dimension of contiguous float32/float16/bfloat16 rows (src and dst
// disjoint, or the same elements): per row, evaluate tl.cpu.cumsum_row(&src[..., 0], &dst[..., 0],
// n, reverse). Otherwise an undefined Stmt.
Stmt lower_cumsum_cpu_call(const TileOpNode& op);

}  // namespace tl
