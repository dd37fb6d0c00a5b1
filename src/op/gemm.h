// T.gemm and its Ascend spellings (gemm_v0, mma): the analysis every target's GEMM lowering
// starts from, and the target-neutral loop form (the fallback when a target has nothing faster).
#pragma once

#include "ir/tile_op.h"

namespace tl {

// The operands of C (+)= op(A) * op(B), after checking. Each operand's matrix is the last two
// dimensions of its region (any leading dimensions have extent 1, e.g. a pipeline stage index).
struct GemmOperands {
  BufferRegion A, B, C;
  bool trans_A = false, trans_B = false;
  // Overwrite C instead of accumulating into it: a bool that may be a run-time value.
  Expr clear_accum;
  Expr M, N, K;
  // Element (row, col) of op(A) [M, K] / op(B) [K, N] / C [M, N] as buffer indices.
  std::vector<Expr> a_index(const Expr& m, const Expr& k) const;
  std::vector<Expr> b_index(const Expr& k, const Expr& n) const;
  std::vector<Expr> c_index(const Expr& m, const Expr& n) const;
};

// Checks the op (throws TypeError/ValueError naming the buffers and shapes) and extracts its
// operands. Accepts `gemm` (attrs transpose_A/B, clear_accum), `gemm_v0` and `mma` (attr init).
GemmOperands analyze_gemm(const TileOpNode& op);

// The loop form: optional clear of C, then for i (parallel), k (serial), j (parallel):
// C[i, j] += A(i, k) * B(k, j) computed in C's dtype. The innermost loop runs along C's and B's
// rows so it is contiguous for the common layouts.
Stmt lower_gemm_loops(const GemmOperands& g, const Span& span = {});

}  // namespace tl
