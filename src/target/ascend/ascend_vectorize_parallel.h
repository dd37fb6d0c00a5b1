// T.Parallel element-wise loops over UB buffers become vector instructions (as tilelang-ascend's
// AscendLowerParallelToVector does): a nest of parallel loops whose body is one store
// `D[i, j] = f(A[i, j], B[i, j], scalars)` with every buffer indexed by the loop variables in the
// same order is decomposed into T.tile ops (add/sub/mul/div/max/min with buffer or scalar second
// operand, exp/ln/sqrt/rsqrt/abs/relu/sigmoid/tanh, casts), intermediate results in temporary UB
// tiles, a pipe_barrier("v") between dependent ops. A row vector indexed by the nest's leading
// variables (`X[i, j] - m[i]`) is first broadcast to a tile (T.tile.broadcast, brcb). A nest that
// still does not fit, e.g. a column broadcast (`C[i, j] + bias[j]`), gets a serial outer loop and
// one set of row ops per row (bias a row tile), the form Expert kernels write by hand.
// Anything else (reductions, gathers, transposed
// or offset-mismatched indexing, integer math, data-dependent control) keeps its loop form and runs
// on the scalar unit.
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc ascend_vectorize_parallel(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
