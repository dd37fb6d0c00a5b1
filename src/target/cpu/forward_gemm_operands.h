// forward_gemm_operands (cpu): T.gemm reads a global tile in place instead of its copy in
// shared memory, when the copy's only purpose is to feed that GEMM.
//
// TileLang kernels stage operands with `T.copy(A[by * bm, k * bk], A_shared)` before
// `T.gemm(A_shared, ...)`. On a GPU that copy moves data into fast on-chip memory; on cpu it is a
// second pass over the data that the GEMM then reads again (and packs where it needs to), which
// costs about a fifth of a fp32 GEMM kernel's time and doubles the traffic of a decode GEMV
// (docs/PERFORMANCE.md). The rewrite `T.copy(G[r], S); ...; T.gemm(S, ...)` -> `T.gemm(G[r], ...)`
// is done when all of these hold, so the GEMM reads the very values the copy would have stored:
//   - S is a shared/fragment buffer whose only uses in the function are this copy (writing all of
//     S) and this GEMM (reading all of S as A or B); no scalar load, store or other op touches it;
//   - the copy and the GEMM are statements of the same sequence, the copy first (so the GEMM always
//     follows an execution of the copy in the same scope);
//   - G is a global buffer that nothing in the function writes (no store, no tile op writing it,
//     no address taken), of S's dtype, with a unit last stride; r's extents are S's shape (leading
//     unit dimensions allowed) and its indices load nothing;
//   - r lies inside G for every value of the surrounding block, loop and let variables (the copy
//     would otherwise zero-fill the outside part).
// S's allocation is dropped too when nothing else names S any more (no unused stack array or heap
// buffer in the block). Where the last condition holds only at run time (dynamic
// dimensions, a partial last tile), the pair is versioned instead: `if (!inside) T.copy(G[r], S);
// ...; if (inside) T.gemm(G[r], ...) else T.gemm(S, ...)`, `inside` being r's first and last
// elements inside G (all operands of that GEMM so versioned share one condition): a dynamic-shape
// GEMM reads its interior tiles in place and only the edge tiles through the guarded copies (3x
// less time for TileLang's examples/dynamic_shape on cpu, docs/PERFORMANCE.md).
//
// Second rewrite: `T.clear(C)` (all of a block-local C filled with +0) directly before
// `T.gemm(A, B, C)` accumulating into all of C (attention's scores), or before a serial or
// pipelined loop with a constant trip count >= 1 whose body's first statement touching C is such a
// GEMM, is dropped and that GEMM clears C (clear_accum = true, or k == min in the loop): the GEMM
// starts from zero registers / AMX tiles instead of loading the zeros the fill stored.
// Third rewrite (after both): a serial or pipelined loop of constant trip count n >= 2 whose body is
// only one `T.gemm(A, B, C)` on global tiles advancing along k by their k extent per iteration (C not
// depending on the loop; clear_accum false or `k == min`) becomes one T.gemm over the whole k: the
// same products in the same order per C element, but the header GEMM keeps C in registers (AMX
// tiles) and packs each operand once per long stretch of k (tl.disable_cpu_gemm_k_fusion). float32
// loops always; bfloat16 / float16 (C float32) and int8 (C int32) loops when each iteration's GEMM is
// at most 256 bytes deep (TileLang's examples' block_K = 32), not the deep per-call chunks the AMX
// drivers were tuned for.
// All three rewrites are off with the pass config tl.disable_cpu_gemm_forwarding.
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc forward_gemm_operands(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
